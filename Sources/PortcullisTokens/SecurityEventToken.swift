public import JWTKit
public import PortcullisAPI
public import PortcullisCore

/// Compliance callbacks are signed with the token key and verified with the JWKS, like any other JWT.
extension ComplianceSecurityEvent: JWTPayload {
    public func verify(using algorithm: some JWTAlgorithm) async throws {}
}

extension TokenSigner {
    /// Signs a compliance Security Event Token (`typ: secevent+jwt`, RFC 8417 §2.3).
    public func sign(securityEvent: ComplianceSecurityEvent) async throws -> String {
        try await sign(securityEvent, type: "secevent+jwt")
    }
}

/// A Shared Signals SET (RFC 8417, PROTOCOL §14.2): one event about one subject, for one stream's audience.
public struct SharedSignalsSecurityEvent: JWTPayload, Equatable {
    public var iss: String
    public var aud: String
    public var iat: Int
    public var jti: String
    public var subId: JSONValue
    public var events: [String: JSONValue]
    /// Ties the SETs of one occurrence together (one critical event can be told by several).
    public var txn: String?

    enum CodingKeys: String, CodingKey {
        case iss, aud, iat, jti, events, txn
        case subId = "sub_id"
    }

    public init(iss: String, aud: String, iat: Int, jti: String, subId: JSONValue, events: [String: JSONValue], txn: String? = nil) {
        self.iss = iss
        self.aud = aud
        self.iat = iat
        self.jti = jti
        self.subId = subId
        self.events = events
        self.txn = txn
    }

    public func verify(using algorithm: some JWTAlgorithm) async throws {}
}

extension TokenSigner {
    /// Signs a Shared Signals SET (`typ: secevent+jwt`).
    public func sign(sharedSignal event: SharedSignalsSecurityEvent) async throws -> String {
        try await sign(event, type: "secevent+jwt")
    }
}
