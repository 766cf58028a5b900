public import Foundation

/// The `claims` request parameter (OIDC Core §5.5), of which the token endpoint reads the client capabilities in
/// `access_token.xms_cc.values`, the authentication contexts asked for in `access_token.acrs` (`value` or `values`,
/// PROTOCOL §13) and the policies a claims challenge names in `access_token.polids` (on-behalf-of, PROTOCOL §21). Other
/// claim requests are accepted and ignored.
public struct ClaimsRequest: Sendable, Equatable {
    /// The declared capabilities, lower-cased, de-duplicated, in the order first declared.
    public let capabilities: [String]
    /// The authentication contexts asked for (`c1`…`c99`), in their natural order.
    public let authenticationContexts: [String]
    /// `access_token.nbf.value` (PROTOCOL §14.1): the time, in seconds since 1970, the token must not be issued before —
    /// what a resource's `insufficient_claims` challenge names after a revocation.
    public let notBefore: Int?
    /// `access_token.polids.values`: conditional-access policies a downstream API's refusal named (Entra's on-behalf-of
    /// claims challenge, PROTOCOL §21) — the sign-in meets their controls too, whatever application they target.
    public let policyIds: [String]

    public init(capabilities: [String] = [], authenticationContexts: [String] = [], notBefore: Int? = nil, policyIds: [String] = []) {
        self.notBefore = notBefore
        var named = Set<String>()
        self.policyIds = policyIds.map { PolicyID($0).rawValue }.filter { named.insert($0).inserted }
        var seen = Set<String>()
        self.capabilities = capabilities.map { $0.lowercased() }.filter { seen.insert($0).inserted }
        self.authenticationContexts = AuthenticationContextClassReference.sorted(authenticationContexts.map { $0.lowercased() })
    }

    /// Whether the client declared it can remediate app protection (`protapp`, any case).
    public var declaresProtApp: Bool { capabilities.contains(ClientCapability.protApp) }

    /// Whether the client declared it handles claims challenges (`cp1`, PROTOCOL §14.1).
    public var declaresCP1: Bool { capabilities.contains(ClientCapability.cp1) }

    /// How far ahead of the server's clock a requested `nbf` may be (the skew between nodes' clocks): the token endpoint
    /// waits until then; further ahead is refused (PROTOCOL §14.1).
    public static let notBeforeLeeway: TimeInterval = 5

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
        return ClaimsRequest(
            capabilities: try strings(accessTokenClaims["xms_cc"], name: "xms_cc", singleAllowed: false) ?? [],
            authenticationContexts: try contexts(accessTokenClaims["acrs"]), notBefore: try notBefore(accessTokenClaims["nbf"]),
            policyIds: try strings(accessTokenClaims["polids"], name: "polids", singleAllowed: false) ?? [])
    }

    /// `nbf`'s `value`: seconds since 1970, as a string (what MSAL sends back from a challenge) or a number.
    static func notBefore(_ request: Any?) throws(TokenError) -> Int? {
        guard let request else { return nil }
        guard let object = request as? [String: Any] else { throw .malformedClaims("'access_token.nbf' must be an object.") }
        guard let value = object["value"] else { return nil }
        let seconds: Int?
        switch value {
        case let text as String: seconds = text.count <= 12 ? Int(text) : nil
        case let number as NSNumber:
            seconds = number.doubleValue.isFinite && abs(number.doubleValue) < 1e12 ? Int(number.doubleValue) : nil
        default: seconds = nil
        }
        guard let seconds, seconds >= 0 else {
            throw .malformedClaims("'access_token.nbf.value' must be a time in seconds since 1970 (a string or a number).")
        }
        return seconds
    }

    /// An individual claim request's `values` (and, where allowed, `value`), as strings within the capability bounds.
    static func strings(_ request: Any?, name: String, singleAllowed: Bool) throws(TokenError) -> [String]? {
        guard let request else { return nil }
        guard let object = request as? [String: Any] else { throw .malformedClaims("'access_token.\(name)' must be an object.") }
        var found: [String] = []
        if singleAllowed, let value = object["value"] {
            guard let string = value as? String else { throw .malformedClaims("'access_token.\(name).value' must be a string.") }
            found.append(string)
        }
        if let values = object["values"] {
            guard let list = values as? [Any], let strings = list as? [String] else {
                throw .malformedClaims("'access_token.\(name).values' must be an array of strings.")
            }
            found += strings
        }
        // Requested values are copied into tokens and sign-in records: a client must not make them large.
        guard found.count <= maximumCapabilities else {
            throw .malformedClaims("'access_token.\(name).values' may hold at most \(maximumCapabilities) values.")
        }
        guard found.allSatisfy({ $0.unicodeScalars.count <= maximumCapabilityLength }) else {
            throw .malformedClaims("each value of 'access_token.\(name).values' must be at most \(maximumCapabilityLength) characters.")
        }
        return found
    }

    static func contexts(_ request: Any?) throws(TokenError) -> [String] {
        let found = try strings(request, name: "acrs", singleAllowed: true) ?? []
        if let bad = found.first(where: { !AuthenticationContextClassReference.isValidId($0) }) {
            throw .malformedClaims("'access_token.acrs' asks for '\(bad)', which is not an authentication context (c1 to c99).")
        }
        return found
    }

    /// The parameter that asks for exactly these capabilities and contexts (`parse` reads it back as the same value).
    public var text: String {
        func quoted(_ value: String) -> String {
            "\"" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
        var members = [#""xms_cc":{"values":["# + capabilities.map(quoted).joined(separator: ",") + "]}"]
        if !authenticationContexts.isEmpty {
            members.append(#""acrs":{"essential":true,"values":["# + authenticationContexts.map(quoted).joined(separator: ",") + "]}")
        }
        if let notBefore { members.append(#""nbf":{"essential":true,"value":"\#(notBefore)"}"#) }
        if !policyIds.isEmpty { members.append(#""polids":{"essential":true,"values":["# + policyIds.map(quoted).joined(separator: ",") + "]}") }
        return #"{"access_token":{"# + members.joined(separator: ",") + "}}"
    }

    /// This request with `other`'s contexts added (an authorization request's `acr_values`, PROTOCOL §13).
    public func adding(authenticationContexts other: [String]) -> ClaimsRequest {
        ClaimsRequest(capabilities: capabilities, authenticationContexts: authenticationContexts + other, notBefore: notBefore, policyIds: policyIds)
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
