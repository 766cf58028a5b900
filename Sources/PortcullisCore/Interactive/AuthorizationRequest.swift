public import Foundation

/// An authorization request (PROTOCOL §9.1), validated against the tenant's directory. It travels through
/// the sign-in page (signed, in a hidden field) and into the authorization code.
public struct AuthorizationRequest: Sendable, Equatable, Codable {
    public enum ResponseMode: String, Sendable, Codable, CaseIterable {
        case query, fragment
        case formPost = "form_post"
    }

    public enum Prompt: String, Sendable, Codable {
        case login, consent
        /// `prompt=none` (named so that it cannot be confused with `Optional.none`).
        case silent = "none"
        case selectAccount = "select_account"
    }

    public var tenantId: String
    public var clientId: String
    public var redirectUri: String
    public var scope: String
    public var state: String?
    public var nonce: String?
    public var codeChallenge: String?
    public var responseMode: ResponseMode
    public var prompt: Prompt?
    public var loginHint: String?
    public var domainHint: String?
    /// The `claims` parameter, parsed once here (capabilities are taken from it at redemption if the token request has none).
    public var claims: ClaimsRequest?
    /// The platform MSAL names in its `x-client-SKU` / `x-client-OS` query parameters.
    public var platform: DevicePlatform?
    /// `acr_values` (OIDC Core §3.1.2.1, RFC 9470): the authentication contexts an OIDC client would like met, in its order
    /// of preference; the tenant's available ones are asked for, the others ignored (they are voluntary).
    public var acrValues: [String]?
    /// `max_age` (OIDC Core §3.1.2.1): the oldest authentication, in seconds, that single sign-on may reuse.
    public var maxAge: Int?
    /// `dpop_jkt` (RFC 9449 §10): the code is redeemed only with a DPoP proof by this key.
    public var dpopJkt: String?
    /// What the browser answered to the page's PKeyAuth challenge (PROTOCOL §18), set by the server, never a parameter:
    /// the device it proved, or that it has no device certificate. Absent: not asked (the browser did not offer PKeyAuth,
    /// or the tenant's policies never look at devices).
    public var device: DeviceProof?

    /// A browser's answer to the page's PKeyAuth challenge.
    public enum DeviceProof: Sendable, Equatable, Codable {
        /// No device certificate (MSAL's answer without an `AuthToken`): an unregistered device.
        case unregistered
        /// The device proved there; a redemption checks that it still holds the certificate and is enabled.
        case proven(ProvenDevice)
    }

    public init(
        tenantId: String, clientId: String, redirectUri: String, scope: String, state: String?, nonce: String?, codeChallenge: String?,
        responseMode: ResponseMode, prompt: Prompt?, loginHint: String?, domainHint: String?, claims: ClaimsRequest?, platform: DevicePlatform?
    ) {
        self.tenantId = tenantId
        self.clientId = clientId
        self.redirectUri = redirectUri
        self.scope = scope
        self.state = state
        self.nonce = nonce
        self.codeChallenge = codeChallenge
        self.responseMode = responseMode
        self.prompt = prompt
        self.loginHint = loginHint
        self.domainHint = domainHint
        self.claims = claims
        self.platform = platform
    }

    /// Whether a sign-in must show the page even with a live session (`prompt=login`, or `consent`, treated alike).
    public var forcesLogin: Bool { prompt == .login || prompt == .consent }

    /// Whether a session's authentication at `authTime` is too old at `now` for this request's `max_age`.
    public func exceedsMaximumAge(authTime: Date, now: Date) -> Bool {
        guard let maxAge else { return false }
        return now.timeIntervalSince(authTime) > TimeInterval(maxAge)
    }

    /// `acr_values` keeps at most this many values.
    public static let maximumAcrValues = 16
}

/// Why an authorization request fails, and how the answer is delivered.
public enum AuthorizationRequestFailure: Error, Sendable, Equatable {
    /// The client or the redirect URI cannot be trusted: an error page, never a redirect.
    case page(TokenError)
    /// Everything else: back to the client's redirect URI with `error`, `error_description`, `state`.
    case redirect(TokenError, redirectUri: String, state: String?, mode: AuthorizationRequest.ResponseMode)
}

extension AuthorizationRequest {
    /// The longest value any parameter may have (a longer one is refused on the error page).
    public static let maximumParameterLength = 4096

    /// Validates the query (or form) parameters of `/authorize`. `parameters` must already be free of
    /// repeated names (a repeated one is a page error for the caller to report). `baseURL` gives the built-in clients
    /// their one redirect URI each (the console's, the security info page's).
    public static func parse(
        _ parameters: [String: String], tenant: DirectorySnapshot, baseURL: String? = nil
    ) -> Result<AuthorizationRequest, AuthorizationRequestFailure> {
        if let long = parameters.first(where: { $0.value.utf8.count > maximumParameterLength }) {
            return .failure(.page(TokenError(.invalidRequest, aadsts: 900144, "The parameter '\(long.key.clipped())' is too long.")))
        }
        func value(_ name: String) -> String? { parameters[name].flatMap { $0.isEmpty ? nil : $0 } }
        guard let clientId = value("client_id") else { return .failure(.page(.missingParameter("client_id"))) }
        guard let client = tenant.application(appId: AppID(clientId)), !BuiltInResources.all.contains(where: { $0.appId == client.appId }) else {
            return .failure(.page(.unknownApplication(clientId)))
        }
        guard let redirectUri = value("redirect_uri") else { return .failure(.page(.missingParameter("redirect_uri"))) }
        let registered: [String] =
            switch client.appId {
            case BuiltInResources.consoleAppId: baseURL.map { [$0 + BuiltInResources.consoleRedirectPath] } ?? []
            case BuiltInResources.securityInfoAppId: baseURL.map { [$0 + BuiltInResources.securityInfoPath(tenantId: tenant.tenant.id.rawValue)] } ?? []
            default: client.redirectUris
            }
        guard registered.contains(where: { RedirectURI.matches(redirectUri, registered: $0) }) else {
            return .failure(.page(.redirectUriMismatch(redirectUri)))
        }
        let modeText = value("response_mode") ?? "query"
        guard let mode = ResponseMode(rawValue: modeText) else {
            return .failure(
                .page(
                    TokenError(.invalidRequest, aadsts: 900144, "The response_mode '\(modeText.clipped())' is not supported: use query, fragment or form_post.")
                ))
        }
        let state = value("state")
        func refuse(_ error: TokenError) -> Result<AuthorizationRequest, AuthorizationRequestFailure> {
            .failure(.redirect(error, redirectUri: redirectUri, state: state, mode: mode))
        }
        guard let responseType = value("response_type") else { return refuse(.missingParameter("response_type")) }
        guard responseType == "code" else {
            return refuse(TokenError(.unsupportedResponseType, aadsts: 700054, "The response_type '\(responseType.clipped())' is not supported: use code."))
        }
        guard client.allowedGrantTypes.contains(GrantType.authorizationCode.rawValue) else {
            return refuse(.grantNotAllowed(GrantType.authorizationCode.rawValue))
        }
        guard let scope = value("scope") else { return refuse(.missingParameter("scope")) }
        do {
            _ = try ResourceAccess.authorize(try ScopeRequest.parse(scope, in: tenant), client: client, delegated: true, in: tenant)
        } catch {
            return refuse(error)
        }
        let challenge = value("code_challenge")
        let method = value("code_challenge_method")
        if let method, method != "S256" {
            return refuse(TokenError(.invalidRequest, aadsts: 9002325, "The code_challenge_method '\(method.clipped())' is not supported: use S256."))
        }
        if let challenge {
            guard method == "S256" else { return refuse(TokenError(.invalidRequest, aadsts: 9002325, "code_challenge requires code_challenge_method=S256.")) }
            guard PKCEChallenge.isWellFormed(challenge) else {
                return refuse(TokenError(.invalidRequest, aadsts: 9002325, "The code_challenge is not a base64url SHA-256 digest (43 characters)."))
            }
        } else if client.publicClient {
            return refuse(TokenError(.invalidRequest, aadsts: 9002325, "Proof Key for Code Exchange (PKCE, S256) is required for public clients."))
        }
        var prompt: Prompt?
        if let text = value("prompt") {
            guard let parsed = Prompt(rawValue: text) else {
                return refuse(TokenError(.invalidRequest, aadsts: 90023, "The prompt '\(text.clipped())' is not supported."))
            }
            prompt = parsed
        }
        var claims: ClaimsRequest?
        if let text = value("claims") {
            do { claims = try ClaimsRequest.parse(text) } catch { return refuse(error) }
        }
        var maxAge: Int?
        if let text = value("max_age") {
            guard let seconds = Int(text), seconds >= 0, text.allSatisfy(\.isASCII) else {
                return refuse(TokenError(.invalidRequest, aadsts: 900144, "max_age must be a number of seconds (0 or more)."))
            }
            maxAge = seconds
        }
        let dpopJkt = value("dpop_jkt")
        if let dpopJkt, !PKCEChallenge.isWellFormed(dpopJkt) {
            return refuse(TokenError(.invalidRequest, aadsts: 900144, "dpop_jkt must be a JWK SHA-256 thumbprint (43 base64url characters)."))
        }
        // Voluntary (OIDC Core §5.5.1.1): what is not an authentication context's ID is ignored, as an unknown value would be.
        let acrValues = (value("acr_values") ?? "").split(separator: " ").map { $0.lowercased() }.filter(AuthenticationContextClassReference.isValidId)
        var request = AuthorizationRequest(
            tenantId: tenant.tenant.id.rawValue, clientId: client.appId.rawValue, redirectUri: redirectUri, scope: scope, state: state, nonce: value("nonce"),
            codeChallenge: challenge, responseMode: mode, prompt: prompt, loginHint: value("login_hint"), domainHint: value("domain_hint"),
            claims: claims, platform: DevicePlatform.detect(sku: value("x-client-SKU"), os: value("x-client-OS")))
        request.maxAge = maxAge
        request.dpopJkt = dpopJkt
        if !acrValues.isEmpty { request.acrValues = Array(acrValues.prefix(maximumAcrValues)) }
        return .success(request)
    }
}

/// Redirect URI matching (PROTOCOL §9.1, RFC 8252 §7.3): exact, except that a loopback URI registered
/// without a port matches any port, and an empty path equals `/`.
public enum RedirectURI {
    static let loopbackHosts: Set<String> = ["127.0.0.1", "::1", "[::1]", "localhost"]

    /// What a directory may register: an absolute URI with no fragment and no user info; `http` only on a
    /// loopback host (RFC 8252 §8.3); a custom scheme (`msauth.com.contoso.mail://auth`) as it is.
    public static func isRegistrable(_ uri: String) -> Bool {
        guard uri.utf8.count <= 2048, let components = URLComponents(string: uri), let scheme = components.scheme?.lowercased(),
            components.fragment == nil, components.user == nil, components.password == nil
        else { return false }
        switch scheme {
        case "https": return !(components.asciiHost ?? "").isEmpty
        case "http": return loopbackHosts.contains((components.asciiHost ?? "").lowercased())
        case "javascript", "data", "file", "vbscript": return false
        default: return !(components.asciiHost ?? "").isEmpty || !components.path.isEmpty
        }
    }

    public static func matches(_ requested: String, registered: String) -> Bool {
        if requested == registered { return true }
        guard let asked = URLComponents(string: requested), let known = URLComponents(string: registered),
            asked.scheme?.lowercased() == "http", known.scheme?.lowercased() == "http",
            let host = asked.asciiHost?.lowercased(), let knownHost = known.asciiHost?.lowercased(), host == knownHost,
            loopbackHosts.contains(host), known.port == nil,
            asked.query == known.query, asked.fragment == nil, asked.user == nil
        else { return false }
        func path(_ text: String) -> String { text.isEmpty ? "/" : text }
        return path(asked.path) == path(known.path)
    }
}

/// PKCE (RFC 7636) challenges as Portcullis accepts them: S256 only, so exactly 43 base64url characters.
public enum PKCEChallenge {
    public static func isWellFormed(_ challenge: String) -> Bool {
        challenge.utf8.count == 43 && challenge.utf8.allSatisfy { isBase64URL($0) }
    }

    /// A verifier: 43–128 characters of the unreserved set.
    public static func isWellFormedVerifier(_ verifier: String) -> Bool {
        (43...128).contains(verifier.utf8.count) && verifier.utf8.allSatisfy { isBase64URL($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "~") }
    }

    static func isBase64URL(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x2D || byte == 0x5F
    }
}
