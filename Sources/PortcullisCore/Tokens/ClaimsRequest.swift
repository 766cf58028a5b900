import Foundation

/// The `claims` request parameter (OIDC Core §5.5), of which the token endpoint reads the client
/// capabilities in `access_token.xms_cc.values`. Other claim requests are accepted and ignored.
public struct ClaimsRequest: Sendable, Equatable {
    /// The declared capabilities, lower-cased, de-duplicated, in the order first declared.
    public let capabilities: [String]

    public init(capabilities: [String] = []) {
        var seen = Set<String>()
        self.capabilities = capabilities.map { $0.lowercased() }.filter { seen.insert($0).inserted }
    }

    /// Whether the client declared it can remediate app protection (`protapp`, any case).
    public var declaresProtApp: Bool { capabilities.contains(ClientCapability.protApp) }

    /// At most this many capabilities, of at most this many characters each (PROTOCOL §2.1).
    public static let maximumCapabilities = 16
    public static let maximumCapabilityLength = 64

    /// Parses the parameter's JSON text.
    public static func parse(_ text: String) throws(TokenError) -> ClaimsRequest {
        guard let data = text.data(using: .utf8),
            let object = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        else { throw .malformedClaims("it is not JSON.") }
        guard let root = object as? [String: Any] else { throw .malformedClaims("it must be a JSON object.") }
        guard let accessToken = root["access_token"] else { return ClaimsRequest() }
        guard let accessTokenClaims = accessToken as? [String: Any] else {
            throw .malformedClaims("'access_token' must be an object.")
        }
        guard let xmsCC = accessTokenClaims["xms_cc"] else { return ClaimsRequest() }
        guard let xmsCCObject = xmsCC as? [String: Any] else {
            throw .malformedClaims("'access_token.xms_cc' must be an object.")
        }
        guard let values = xmsCCObject["values"] else { return ClaimsRequest() }
        guard let list = values as? [Any], let strings = list as? [String] else {
            throw .malformedClaims("'access_token.xms_cc.values' must be an array of strings.")
        }
        // Capabilities are copied into tokens and sign-in records: a client must not make them large.
        guard strings.count <= maximumCapabilities else {
            throw .malformedClaims("'access_token.xms_cc.values' may hold at most \(maximumCapabilities) values.")
        }
        guard strings.allSatisfy({ $0.unicodeScalars.count <= maximumCapabilityLength }) else {
            throw .malformedClaims("each value of 'access_token.xms_cc.values' must be at most \(maximumCapabilityLength) characters.")
        }
        return ClaimsRequest(capabilities: strings)
    }

    /// The parameter that asks for exactly these capabilities (`parse` reads it back as the same value).
    public var text: String {
        let values = capabilities.map { "\"" + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\"" }
        return #"{"access_token":{"xms_cc":{"values":["# + values.joined(separator: ",") + "]}}}"
    }
}

/// A pending request (an authorization code, a device code, a sign-in ticket) keeps its claims parsed, stored as the
/// `claims` parameter's text (so that what earlier builds stored, the client's own text, reads back the same way).
extension ClaimsRequest: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        do {
            self = try Self.parse(text)
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: error.message)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }
}

/// Known client capabilities.
public enum ClientCapability {
    /// The client can remediate app protection (`protection_policy_required`).
    public static let protApp = "protapp"
    /// The client can handle claims challenges.
    public static let cp1 = "cp1"
}
