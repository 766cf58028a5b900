public import JWTKit
public import PortcullisVocabulary

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
