import Foundation

/// The token endpoint's success body (PROTOCOL §2.3).
public struct TokenResponse: Codable, Sendable, Equatable {
    /// `token_type` of a bearer token, and of one bound to a DPoP key (PROTOCOL §15); introspection says the same.
    public static let bearer = "Bearer"
    public static let dpop = "DPoP"

    public var tokenType: String
    public var scope: String
    public var expiresIn: Int
    public var extExpiresIn: Int
    public var accessToken: String
    public var refreshToken: String?
    public var idToken: String?
    public var clientInfo: String?

    public init(
        tokenType: String = TokenResponse.bearer, scope: String, expiresIn: Int, extExpiresIn: Int, accessToken: String,
        refreshToken: String? = nil, idToken: String? = nil, clientInfo: String? = nil
    ) {
        self.tokenType = tokenType
        self.scope = scope
        self.expiresIn = expiresIn
        self.extExpiresIn = extExpiresIn
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.idToken = idToken
        self.clientInfo = clientInfo
    }

    enum CodingKeys: String, CodingKey {
        case tokenType = "token_type"
        case scope
        case expiresIn = "expires_in"
        case extExpiresIn = "ext_expires_in"
        case accessToken = "access_token"
        case refreshToken = "refresh_token"
        case idToken = "id_token"
        case clientInfo = "client_info"
    }
}

/// The token endpoint's error body (PROTOCOL §2.4, §2.5).
public struct OAuthErrorBody: Codable, Sendable, Equatable {
    public var error: String
    public var suberror: String?
    public var errorDescription: String
    public var errorCodes: [Int]
    public var timestamp: String
    public var traceId: String
    public var correlationId: String
    /// The UPN of the account that must remediate (app-protection refusals).
    public var adi: String?
    /// base64url of `{"uid":"<oid>","utid":"<tid>"}` (app-protection refusals).
    public var clientInfo: String?
    /// Portcullis's extension to the app-protection refusal; MSAL ignores it.
    public var remediation: RemediationDetails?
    /// A claims challenge to pass back to the client (on-behalf-of refused by conditional access).
    public var claims: String?

    public init(
        error: String, suberror: String? = nil, errorDescription: String, errorCodes: [Int], timestamp: String,
        traceId: String, correlationId: String, adi: String? = nil, clientInfo: String? = nil,
        remediation: RemediationDetails? = nil
    ) {
        self.error = error
        self.suberror = suberror
        self.errorDescription = errorDescription
        self.errorCodes = errorCodes
        self.timestamp = timestamp
        self.traceId = traceId
        self.correlationId = correlationId
        self.adi = adi
        self.clientInfo = clientInfo
        self.remediation = remediation
    }

    enum CodingKeys: String, CodingKey {
        case error, suberror
        case errorDescription = "error_description"
        case errorCodes = "error_codes"
        case timestamp
        case traceId = "trace_id"
        case correlationId = "correlation_id"
        case adi
        case clientInfo = "client_info"
        case remediation, claims
    }
}

/// Where and for whom app protection must be remediated.
public struct RemediationDetails: Codable, Sendable, Equatable {
    public var homeAccountId: String
    public var accountId: String
    public var tenantId: String
    public var upn: String
    public var endpoint: String
    public var scope: String
    public var policyIds: [String]

    public init(homeAccountId: String, accountId: String, tenantId: String, upn: String, endpoint: String, scope: String, policyIds: [String]) {
        self.homeAccountId = homeAccountId
        self.accountId = accountId
        self.tenantId = tenantId
        self.upn = upn
        self.endpoint = endpoint
        self.scope = scope
        self.policyIds = policyIds
    }

    enum CodingKeys: String, CodingKey {
        case homeAccountId = "home_account_id"
        case accountId = "account_id"
        case tenantId = "tenant_id"
        case upn, endpoint, scope
        case policyIds = "policy_ids"
    }
}

/// `client_info`: who the tokens are for, as MSAL keys its cache.
public struct ClientInfo: Codable, Sendable, Equatable {
    public var uid: String
    public var utid: String

    public init(uid: String, utid: String) {
        self.uid = uid
        self.utid = utid
    }

    /// The MSAL home account ID, `<oid>.<tid>`.
    public var homeAccountId: String { "\(uid).\(utid)" }
}

extension ClientInfo {
    /// The wire form: base64url of the JSON object.
    /// Written directly (`{"uid":…,"utid":…}`, as `JSONEncoder` writes it with sorted keys): every user grant and
    /// every app-protection refusal carries one.
    public var encoded: String {
        var writer = JSONObjectWriter(capacity: 128)
        writer.string("uid", uid)
        writer.string("utid", utid)
        return Base64URL.encode(writer.finish())
    }

    public init?(encoded: String) {
        guard let data = Base64URL.decode(encoded), let info = try? JSONDecoder().decode(ClientInfo.self, from: data) else { return nil }
        self = info
    }
}
