public import Foundation

/// On-behalf-of (PROTOCOL §21, Entra's dialect of token exchange): an API that received a user's access token asks for a
/// token for a downstream API, keeping the user. The server verifies the incoming token (signature, issuer, time, not
/// voided); who it may be exchanged by, and what a refusal tells the calling API, are decided here.
public enum OnBehalfOf {
    /// `requested_token_use`.
    public static let requestedTokenUse = "on_behalf_of"

    /// What the calling API's incoming access token says (already verified by the server).
    public struct Assertion: Sendable, Equatable {
        /// Its `jti`.
        public var tokenId: String
        public var audience: String
        public var delegated: Bool
        public var objectId: String?
        public var methods: [String]
        public var authTime: Date?
        public var issuedAt: Date
        public var deviceId: String?
        public var ipAddress: String?
        public var authenticationContexts: [String]

        public init(
            tokenId: String, audience: String, delegated: Bool, objectId: String?, methods: [String], authTime: Date?, issuedAt: Date, deviceId: String?,
            ipAddress: String?, authenticationContexts: [String]
        ) {
            self.tokenId = tokenId
            self.audience = audience
            self.delegated = delegated
            self.objectId = objectId
            self.methods = methods
            self.authTime = authTime
            self.issuedAt = issuedAt
            self.deviceId = deviceId
            self.ipAddress = ipAddress
            self.authenticationContexts = authenticationContexts
        }

        /// How the user signed in, as the original sign-in had it (its `amr` and time): conditional access for the
        /// downstream resource judges these, not anything the calling API did.
        public var authentication: AuthenticationContext {
            AuthenticationContext(methods: methods.isEmpty ? ["pwd"] : methods, time: authTime ?? issuedAt)
        }
    }

    /// The user whose token `assertion` is, when `caller` may act for them: a user's (not an app-only) token whose
    /// audience is the calling API, of a user who exists and is enabled. (Whether the token was voided since — PROTOCOL
    /// §14.1 — is the store's to say.)
    public static func user(of assertion: Assertion, caller: Application, in directory: DirectorySnapshot) throws(TokenError) -> User {
        guard assertion.delegated, let objectId = assertion.objectId else { throw .onBehalfOfAppOnlyAssertion }
        let audience = directory.resource(identifier: assertion.audience) ?? directory.application(appId: AppID(assertion.audience))
        guard audience?.appId == caller.appId else { throw .onBehalfOfAudience(assertion.audience, expected: caller.appId) }
        guard let user = directory.user(id: ObjectID(objectId)) else { throw .unknownUser }
        guard user.accountEnabled else { throw .userDisabled }
        return user
    }

    /// Conditional access's refusal as the calling API receives it (Entra's on-behalf-of claims challenge): a control the
    /// user can meet — a factor, terms, a device — is `interaction_required` with a `claims` member naming the policies
    /// (`polids`), which the calling API passes back to its client to sign in again with; a block stays what it is.
    public static func challenge(_ error: TokenError, refusal: Decision.Refusal, failedPolicies: [String]) -> TokenError {
        if case .block = refusal { return error }
        var challenge = TokenError(.interactionRequired, aadsts: error.aadsts, error.message, suberror: error.suberror)
        let values = failedPolicies.map { JSONValue.string($0) }
        let claims: JSONValue = ["access_token": ["polids": ["essential": true, "values": .array(values)]]]
        challenge.claims = String(decoding: (try? TenantDocuments.encoder.encode(claims)) ?? Data("{}".utf8), as: UTF8.self)
        return challenge
    }
}

extension TokenError {
    public static let onBehalfOfTokenUse = TokenError(
        .invalidRequest, aadsts: 900144, "The request body must contain the following parameter: 'requested_token_use' (on_behalf_of).")
    public static let onBehalfOfPublicClient = TokenError(
        .invalidClient, aadsts: 7000218,
        "The request body must contain the following parameter: 'client_assertion' or 'client_secret': on-behalf-of is for confidential clients.")
    public static let onBehalfOfInvalidAssertion = TokenError(
        .invalidGrant, aadsts: 50013, "Assertion failed signature validation: it is not an access token this tenant issued, or it has expired.")
    public static let onBehalfOfAppOnlyAssertion = TokenError(
        .invalidGrant, aadsts: 50013, "The assertion is an app-only token: on-behalf-of exchanges a user's token.")
    public static func onBehalfOfAudience(_ audience: String, expected: AppID) -> TokenError {
        TokenError(
            .invalidGrant, aadsts: 50013,
            "Assertion audience does not match the Client app presenting the assertion. The audience in the assertion was '\(quoted(audience))' and the expected audience is '\(expected)'."
        )
    }
    public static let onBehalfOfRevoked = TokenError(
        .invalidGrant, aadsts: 50173, "The provided grant has expired due to it being revoked, a fresh auth token is needed.")
}
