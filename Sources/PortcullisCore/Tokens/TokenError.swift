/// A refusal of the token endpoint, in the vocabulary of the Microsoft identity platform: an OAuth `error`,
/// an AADSTS number and a sentence. The HTTP shape is built in one place in the server.
public struct TokenError: Error, Sendable, Equatable {
    /// The OAuth 2.0 `error` value. A struct over a private enum, so that new cases don't break callers.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable {
            case invalidRequest = "invalid_request"
            case invalidClient = "invalid_client"
            case invalidGrant = "invalid_grant"
            case unauthorizedClient = "unauthorized_client"
            case unsupportedGrantType = "unsupported_grant_type"
            case invalidScope = "invalid_scope"
            case invalidResource = "invalid_resource"
            case temporarilyUnavailable = "temporarily_unavailable"
            case unsupportedResponseType = "unsupported_response_type"
            case accessDenied = "access_denied"
            case authorizationPending = "authorization_pending"
            case slowDown = "slow_down"
            case expiredToken = "expired_token"
            case loginRequired = "login_required"
            case interactionRequired = "interaction_required"
            case invalidDPoPProof = "invalid_dpop_proof"
            case useDPoPNonce = "use_dpop_nonce"
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        public static let invalidRequest = Code(.invalidRequest)
        public static let invalidClient = Code(.invalidClient)
        public static let invalidGrant = Code(.invalidGrant)
        public static let unauthorizedClient = Code(.unauthorizedClient)
        public static let unsupportedGrantType = Code(.unsupportedGrantType)
        public static let invalidScope = Code(.invalidScope)
        public static let invalidResource = Code(.invalidResource)
        public static let temporarilyUnavailable = Code(.temporarilyUnavailable)
        public static let unsupportedResponseType = Code(.unsupportedResponseType)
        public static let accessDenied = Code(.accessDenied)
        public static let authorizationPending = Code(.authorizationPending)
        public static let slowDown = Code(.slowDown)
        public static let expiredToken = Code(.expiredToken)
        public static let loginRequired = Code(.loginRequired)
        public static let interactionRequired = Code(.interactionRequired)
        /// RFC 9449 §5: the DPoP proof is missing where required, malformed, replayed or for another key.
        public static let invalidDPoPProof = Code(.invalidDPoPProof)
        /// RFC 9449 §8: the proof must carry the server's nonce (sent in `DPoP-Nonce`).
        public static let useDPoPNonce = Code(.useDPoPNonce)

        /// The wire value, e.g. `invalid_grant`.
        public var description: String { base.rawValue }
    }

    public let code: Code
    /// The AADSTS number (`error_codes`).
    public let aadsts: Int
    /// The sentence after `AADSTSnnnn: ` in `error_description`. Never contains a secret or a token.
    public let message: String
    /// The MSAL `suberror` (e.g. `protection_policy_required`, `basic_action`).
    public let suberror: String?
    /// Present on the app-protection refusal: who must remediate and where.
    public let remediation: RemediationRequirement?
    /// For `temporarily_unavailable`: seconds after which to try again (`Retry-After`).
    public var retryAfter: Int?
    /// For `use_dpop_nonce`: the nonce to put in the next proof (`DPoP-Nonce`).
    public var dpopNonce: String?
    /// A PKeyAuth challenge (PROTOCOL §18): answered 401 with this `WWW-Authenticate` value; the client answers on the
    /// same request.
    public var pkeyAuthChallenge: String?
    /// A claims challenge the client passes back on its next sign-in (`claims`; Entra's on-behalf-of answer, PROTOCOL §21).
    public var claims: String?

    public init(_ code: Code, aadsts: Int, _ message: String, suberror: String? = nil, remediation: RemediationRequirement? = nil) {
        self.code = code
        self.aadsts = aadsts
        self.message = message
        self.suberror = suberror
        self.remediation = remediation
    }
}

/// The account and policies behind a `protection_policy_required` refusal.
public struct RemediationRequirement: Sendable, Equatable {
    public let objectId: String
    public let tenantId: String
    public let userPrincipalName: String
    public let policyIds: [String]
    /// The compliance service's remediation URL.
    public let endpoint: String

    public init(objectId: String, tenantId: String, userPrincipalName: String, policyIds: [String], endpoint: String) {
        self.objectId = objectId
        self.tenantId = tenantId
        self.userPrincipalName = userPrincipalName
        self.policyIds = policyIds
        self.endpoint = endpoint
    }
}

extension String {
    /// At most `limit` characters of client-supplied text, for error messages.
    func clipped(_ limit: Int = 80) -> String { count <= limit ? self : String(prefix(limit)) + "…" }
}

/// The catalogue of refusals, with the Microsoft identity platform's published AADSTS numbers.
extension TokenError {
    public static func missingParameter(_ name: String) -> TokenError {
        TokenError(.invalidRequest, aadsts: 900144, "The request body must contain the following parameter: '\(name.clipped())'.")
    }
    public static func duplicateParameter(_ name: String) -> TokenError {
        TokenError(.invalidRequest, aadsts: 90014, "The request contains the parameter '\(name.clipped())' more than once.")
    }
    public static func malformedBody(_ detail: String) -> TokenError {
        TokenError(.invalidRequest, aadsts: 900144, detail)
    }
    public static let wrongContentType = TokenError(
        .invalidRequest, aadsts: 900144,
        "The request body must be application/x-www-form-urlencoded."
    )
    public static func unknownTenant(_ segment: String) -> TokenError {
        TokenError(.invalidRequest, aadsts: 90002, "Tenant '\(segment.clipped())' not found.")
    }
    public static func unknownApplication(_ clientId: String) -> TokenError {
        TokenError(
            .unauthorizedClient, aadsts: 700016,
            "Application with identifier '\(clientId.clipped())' was not found in the directory.")
    }
    public static let invalidClientSecret = TokenError(
        .invalidClient, aadsts: 7000215, "Invalid client secret provided."
    )
    public static let missingClientCredential = TokenError(
        .invalidClient, aadsts: 7000218,
        "The request body must contain the following parameter: 'client_assertion' or 'client_secret'."
    )
    public static let publicClientWithSecret = TokenError(
        .invalidClient, aadsts: 700025,
        "Client is public so neither 'client_assertion' nor 'client_secret' should be presented."
    )
    public static let multipleClientAuthentications = TokenError(
        .invalidRequest, aadsts: 90014,
        "The client authenticated with more than one method; use either HTTP Basic or the request body."
    )
    public static let mismatchedClientId = TokenError(
        .invalidRequest, aadsts: 90014,
        "The client_id in the request body does not match the client authenticated with HTTP Basic."
    )
    public static func unsupportedGrantType(_ grant: String) -> TokenError {
        TokenError(.unsupportedGrantType, aadsts: 70003, "The app requested an unsupported grant type '\(grant.clipped())'.")
    }
    public static func grantNotAllowed(_ grant: String) -> TokenError {
        TokenError(
            .unauthorizedClient, aadsts: 70003,
            "The application is not allowed to use the grant type '\(grant)'.")
    }
    public static let clientCredentialsNeedDefault = TokenError(
        .invalidScope, aadsts: 1002012,
        "The provided value for scope is not valid. Client credential flows must have a scope value with /.default suffixed to the resource identifier (application ID URI)."
    )
    public static func invalidScope(_ scope: String) -> TokenError {
        TokenError(
            .invalidScope, aadsts: 70011, "The provided value for the input parameter 'scope' is not valid. The scope '\(scope.clipped())' is not valid.")
    }
    public static let multipleResources = TokenError(
        .invalidScope, aadsts: 28000,
        "Provided value for the input parameter scope is not valid because it contains more than one resource. Scopes for different resources cannot be requested in one token request."
    )
    public static let defaultCombinedWithScopes = TokenError(
        .invalidScope, aadsts: 70011,
        "The provided value for the input parameter 'scope' is not valid. The scope .default cannot be combined with resource-specific scopes."
    )
    public static func unknownResource(_ identifier: String) -> TokenError {
        TokenError(
            .invalidResource, aadsts: 500011,
            "The resource principal named \(identifier.clipped()) was not found in the tenant.")
    }
    public static let unknownUser = TokenError(
        .invalidGrant, aadsts: 50034, "The user account does not exist in this directory."
    )
    public static let userDisabled = TokenError(
        .invalidGrant, aadsts: 50057, "The user account is disabled."
    )
    public static let badCredentials = TokenError(
        .invalidGrant, aadsts: 50126, "Error validating credentials due to invalid username or password."
    )
    public static let refreshTokenInvalid = TokenError(
        .invalidGrant, aadsts: 9002313, "Invalid request. The refresh token is malformed or not valid."
    )
    public static let refreshTokenExpired = TokenError(
        .invalidGrant, aadsts: 70008, "The provided authorization code or refresh token has expired due to inactivity."
    )
    public static let refreshTokenRevoked = TokenError(
        .invalidGrant, aadsts: 70008, "The refresh token has been revoked."
    )
    public static let refreshTokenReused = TokenError(
        .invalidGrant, aadsts: 70008,
        "The refresh token was already used; every token issued from it has been revoked."
    )
    public static let refreshTokenWrongClient = TokenError(
        .invalidGrant, aadsts: 70000, "The provided grant is invalid: the refresh token was issued to a different client."
    )
    public static func malformedClaims(_ detail: String) -> TokenError {
        TokenError(.invalidRequest, aadsts: 90100, "The 'claims' parameter is not valid: \(detail)")
    }
    public static let temporarilyUnavailable = TokenError(
        .temporarilyUnavailable, aadsts: 90033, "A transient error has occurred. Please try again."
    )
    /// The password-checking queue is full (PROTOCOL §9.6).
    public static func busy(retryAfter: Int) -> TokenError {
        var error = TokenError(.temporarilyUnavailable, aadsts: 90033, "The service is busy checking passwords. Please try again in \(retryAfter) second(s).")
        error.retryAfter = retryAfter
        return error
    }
    /// Too many wrong passwords for this account (PROTOCOL §9.6).
    // Second factor (PROTOCOL §10).
    public static let factorLocked = TokenError(
        .invalidGrant, aadsts: 50053, "Your account is locked because of too many wrong verification codes. Try again later."
    )
    public static let factorCodeInvalid = TokenError(
        .invalidGrant, aadsts: 500121, "The code is not valid. Enter the current code from your authenticator app."
    )
    public static let factorCodeReplayed = TokenError(
        .invalidGrant, aadsts: 500121, "This code was already used. Wait for the next code and enter it."
    )
    public static let factorAlreadyRegistered = TokenError(
        .invalidGrant, aadsts: 500121, "Your verification methods changed during this sign-in. Continue with the page below."
    )
    public static let factorUnusable = TokenError(
        .invalidGrant, aadsts: 500121, "Your authenticator cannot be used. Ask your administrator to reset your verification methods."
    )
    /// `prompt=none` when conditional access asks for a factor the session lacks (PROTOCOL §9.3).
    public static let factorRequiredSilently = TokenError(
        .interactionRequired, aadsts: 50076,
        "Due to a configuration change made by your administrator, or because you moved to a new location, you must use multi-factor authentication to access the resource."
    )

    public static let accountLocked = TokenError(
        .invalidGrant, aadsts: 50053,
        "Your account is locked because you've tried to sign in too many times with an incorrect user ID or password. Try again later."
    )
    /// Too many failed sign-ins from this client address (PROTOCOL §9.6).
    public static let deviceCodeGuessesLocked = TokenError(
        .invalidGrant, aadsts: 50053, "Too many wrong codes were entered from your network address. Try again later."
    )
    public static let addressLocked = TokenError(
        .invalidGrant, aadsts: 50053,
        "Sign-in was blocked because it came from an IP address with too many failed sign-ins. Try again later."
    )

    // Interactive sign-in (PROTOCOL §9).
    public static func redirectUriMismatch(_ uri: String) -> TokenError {
        TokenError(
            .invalidRequest, aadsts: 50011,
            "The redirect URI '\(uri.clipped())' specified in the request does not match the redirect URIs configured for the application.")
    }
    public static let authorizationCodeInvalid = TokenError(
        .invalidGrant, aadsts: 70000, "The provided value for the 'code' parameter is not valid."
    )
    public static let authorizationCodeExpired = TokenError(
        .invalidGrant, aadsts: 70008, "The provided authorization code has expired."
    )
    public static let authorizationCodeRedeemed = TokenError(
        .invalidGrant, aadsts: 54005, "OAuth2 Authorization code was already redeemed; every token issued from it has been revoked."
    )
    public static let authorizationCodeRedirectMismatch = TokenError(
        .invalidGrant, aadsts: 70000, "The redirect_uri does not match the one the authorization code was issued for."
    )
    public static let pkceVerifierMismatch = TokenError(
        .invalidGrant, aadsts: 501481, "The code_verifier does not match the code_challenge supplied in the authorization request."
    )
    public static let pkceVerifierMissing = TokenError(
        .invalidRequest, aadsts: 9002325, "The code_verifier is required: the authorization request carried a code_challenge."
    )
    public static let loginRequired = TokenError(
        .loginRequired, aadsts: 50058, "A silent sign-in request was sent but no user is signed in."
    )
    public static let authorizationPending = TokenError(
        .authorizationPending, aadsts: 70016, "OAuth 2.0 device flow error. Authorization is pending. Continue polling."
    )
    /// The device authorization endpoint's quotas (PROTOCOL §9.5): `slow_down` with `Retry-After`, naming the limit.
    public static func deviceCodeQuota(_ quota: DeviceCodeQuota) -> TokenError {
        let whose =
            switch quota {
            case .tenant: "this tenant"
            case .client: "this application"
            case .address: "your network address"
            }
        var error = TokenError(.slowDown, aadsts: 90033, "Too many device sign-ins are pending for \(whose); try again in a minute.")
        error.retryAfter = 60
        return error
    }

    public static let slowDown = TokenError(
        .slowDown, aadsts: 70016, "The client is polling too fast; wait the interval before polling again."
    )
    public static let deviceCodeExpired = TokenError(
        .expiredToken, aadsts: 70019, "Verification code expired."
    )
    public static let deviceCodeDenied = TokenError(
        .accessDenied, aadsts: 70020, "The user declined the sign-in request."
    )
    public static let deviceCodeInvalid = TokenError(
        .invalidGrant, aadsts: 70000, "The provided value for the 'device_code' parameter is not valid."
    )

    // Conditional-access refusals (PROTOCOL §2.5).
    public static let blockedByConditionalAccess = TokenError(
        .invalidGrant, aadsts: 53003, "Access has been blocked by Conditional Access policies. The access policy does not allow token issuance."
    )
    /// A refresh whose authentication is older than a policy's sign-in frequency allows (PROTOCOL §13): MSAL drops the
    /// refresh token and goes interactive.
    public static let signInFrequency = TokenError(
        .invalidGrant, aadsts: 70043,
        "The refresh token has expired or is invalid due to sign-in frequency checks by conditional access. Sign in again.",
        suberror: "bad_token"
    )
    /// Terms of use a policy requires and the user has not accepted, or whose acceptance expired (PROTOCOL §17): only the
    /// sign-in page can ask, so the client is told to go interactive (MSAL: `MsalUiRequiredException`).
    public static let termsOfUseRequired = TokenError(
        .interactionRequired, aadsts: 50158,
        "Conditional access requires the user to accept the organization's terms of use. Sign in interactively to accept them."
    )
    /// A policy for the user's risk asks for a secure password change (PROTOCOL §19): only the sign-in page can, so the client
    /// is told to go interactive (MSAL: `MsalUiRequiredException`), as Entra's 50142.
    public static let passwordChangeRequired = TokenError(
        .interactionRequired, aadsts: 50142, "Password change is required due to a conditional access policy. Sign in interactively to change it."
    )
    /// A policy for the user's risk asks for a multi-factor sign-in made after the risk was raised (`riskRemediation`,
    /// PROTOCOL §19): a refresh of an older sign-in cannot be one; the user signs in again.
    public static let riskRemediationRequired = TokenError(
        .interactionRequired, aadsts: 50142,
        "Conditional access requires the user to remediate their sign-in risk with a new multi-factor sign-in. Sign in interactively."
    )
    /// The user declined terms of use on the sign-in page.
    public static let termsOfUseDeclined = TokenError(
        .accessDenied, aadsts: 50158, "The user declined the organization's terms of use, which conditional access requires for this application."
    )
    /// A policy requires a compliant (or hybrid-joined) device, and the sign-in's device is not, or was not proven
    /// (PROTOCOL §18). Entra answers `interaction_required`: a broker can register the device interactively.
    public static let deviceNotCompliant = TokenError(
        .interactionRequired, aadsts: 53000,
        "Device is not in required device state: compliant. Conditional Access policy requires a compliant device, and the device is not compliant (or is not registered). Register the device and bring it into compliance."
    )
    public static let deviceNotDomainJoined = TokenError(
        .interactionRequired, aadsts: 53001,
        "Device is not in required device state: domain_joined. Conditional Access policy requires a hybrid joined device, and the device is not (or is not registered)."
    )
    /// A PKeyAuth answer that proves no device of this tenant (PROTOCOL §18): `reason` says which check failed.
    public static func deviceAuthenticationFailed(_ reason: String) -> TokenError {
        TokenError(.invalidGrant, aadsts: 50097, "Device authentication failed: \(reason).")
    }
    /// The challenge itself: conditional access needs to know the device, and the client said it can prove one.
    public static func deviceAuthenticationRequired(challenge: String) -> TokenError {
        var error = TokenError(.invalidGrant, aadsts: 50097, "Device authentication is required: answer the PKeyAuth challenge.")
        error.pkeyAuthChallenge = challenge
        return error
    }
    public static let approvedClientAppRequired = TokenError(
        .invalidGrant, aadsts: 53002, "Application used is not an approved application."
    )
    public static let mfaRequired = TokenError(
        .invalidGrant, aadsts: 50076,
        "Due to a configuration change made by your administrator, or because you moved to a new location, you must use multi-factor authentication to access the resource.",
        suberror: "basic_action"
    )
    public static func protectionPolicyRequired(_ requirement: RemediationRequirement) -> TokenError {
        TokenError(
            .unauthorizedClient, aadsts: 53005, "Application needs to enforce Intune protection policies.",
            suberror: "protection_policy_required", remediation: requirement)
    }
    public static let protAppCapabilityRequired = TokenError(
        .unauthorizedClient, aadsts: 53009,
        "Application needs to enforce Intune protection policies, but it did not declare the 'protapp' client capability. Declare it (claims={\"access_token\":{\"xms_cc\":{\"values\":[\"protapp\"]}}}) and handle the protection_policy_required error by remediating."
    )

    // DPoP (PROTOCOL §15). Entra has no DPoP at its token endpoint: 9002350–9002353 are this server's own numbers; 530084 is
    // Entra's token-protection refusal.
    public static func invalidDPoPProof(_ detail: String) -> TokenError {
        TokenError(.invalidDPoPProof, aadsts: 9002350, detail)
    }
    public static func useDPoPNonce(_ nonce: String) -> TokenError {
        var error = TokenError(.useDPoPNonce, aadsts: 9002351, "The DPoP proof must carry the nonce this server sent in the DPoP-Nonce header.")
        error.dpopNonce = nonce
        return error
    }
    public static let dpopRequired = TokenError(
        .invalidDPoPProof, aadsts: 9002352, "This application requires DPoP: send a DPoP proof (RFC 9449) with every token request."
    )
    public static let dpopKeyMismatch = TokenError(
        .invalidDPoPProof, aadsts: 9002353,
        "The grant is bound to a DPoP key: send a proof signed with that key (the refresh token or code was issued for a different key or none)."
    )
    public static let tokenProtectionRequired = TokenError(
        .invalidGrant, aadsts: 530084, "Token protection required: the client must present a DPoP proof (a conditional access policy binds these tokens)."
    )
}
