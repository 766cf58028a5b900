public import Foundation

/// Why a received SET is refused (RFC 8935 §2.4): the `err` code and a description, the push's 400 body, a poll's
/// `setErrs` entry.
public struct SharedSignalsRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
        case invalidRequest = "invalid_request"
        case invalidKey = "invalid_key"
        case invalidIssuer = "invalid_issuer"
        case invalidAudience = "invalid_audience"
        case authenticationFailed = "authentication_failed"
        case accessDenied = "access_denied"
    }

    public let code: Code
    public let description: String

    public init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }

    /// `{"err": …, "description": …}`.
    public var body: JSONValue { .object(["err": .string(code.rawValue), "description": .string(description)]) }
}

/// One SET a transmitter sent, its claims checked (PROTOCOL §19): who it is about and what happened.
public struct ReceivedSecurityEvent: Sendable, Equatable {
    public struct Event: Sendable, Equatable {
        /// `nil`: an event type this server does nothing with (accepted, ignored).
        public var type: ReceivedEventType?
        public var uri: String
        public var members: JSONValue
        /// The event's subject: its own `subject` member (CAEP drafts), else the SET's `sub_id`.
        public var subject: JSONValue?
    }

    public var jti: String
    public var issuedAt: Date
    public var events: [Event]
}

/// What one received event does (PROTOCOL §19), decided in Core; the server carries it out through the same write
/// paths as an admin's change.
public enum ReceivedSignalEffect: Sendable, Equatable {
    /// End the user's sessions and refresh tokens, void their access tokens.
    case revokeSessions(ObjectID)
    /// Raise the user's risk with a detection.
    case userRisk(ObjectID, RiskEventType, RiskLevel, info: String)
    /// Set a device's compliance (its document's object ID).
    case deviceCompliance(ObjectID, compliant: Bool)
    /// Disable the user.
    case disableAccount(ObjectID)
    /// Nothing, and why (logged).
    case nothing(String)
}

extension SharedSignalsTransmitter {
    /// A SET older than this is refused (PROTOCOL §19).
    public static let maximumAge: TimeInterval = 86400
    /// A SET issued further ahead than this is refused.
    public static let maximumSkew: TimeInterval = 300
    /// The largest SET accepted, in bytes.
    public static let maximumSETBytes = 64 * 1024
    /// The most events one SET may carry.
    public static let maximumEvents = 8
    /// The signing algorithms accepted (never `none`, never a shared secret).
    public static let acceptedAlgorithms: Set<String> = ["ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA"]

    /// Checks a SET's JOSE header (RFC 8417 §2.3: `typ` `secevent+jwt`; an accepted `alg`); returns its `kid`.
    public static func checkHeader(_ header: JSONValue) throws(SharedSignalsRefusal) -> String? {
        guard case .object(let object) = header else { throw SharedSignalsRefusal(.invalidRequest, "the SET's header is not a JSON object") }
        let typ = object["typ"]?.stringValue ?? ""
        guard typ.equalsIgnoringCase("secevent+jwt") || typ.equalsIgnoringCase("application/secevent+jwt") else {
            throw SharedSignalsRefusal(.invalidRequest, "the SET's typ must be secevent+jwt")
        }
        guard let alg = object["alg"]?.stringValue, acceptedAlgorithms.contains(alg) else {
            throw SharedSignalsRefusal(.invalidKey, "the SET's alg is not an accepted asymmetric algorithm")
        }
        if let kid = object["kid"], kid.stringValue == nil { throw SharedSignalsRefusal(.invalidRequest, "the SET's kid is not a string") }
        return object["kid"]?.stringValue
    }

    /// Checks a SET's claims, its signature already verified with this transmitter's keys: `iss`, `aud`, `iat` within
    /// the window, a `jti`, and its events (PROTOCOL §19). Replay is the caller's (the store, across nodes).
    public func check(_ claims: JSONValue, now: Date) throws(SharedSignalsRefusal) -> ReceivedSecurityEvent {
        guard case .object(let object) = claims else { throw SharedSignalsRefusal(.invalidRequest, "the SET is not a JSON object") }
        guard object["iss"]?.stringValue == issuer else { throw SharedSignalsRefusal(.invalidIssuer, "the SET's iss is not this transmitter's issuer") }
        let audiences: [String] =
            switch object["aud"] {
            case .string(let one)?: [one]
            case .array(let many)?: many.compactMap(\.stringValue)
            default: []
            }
        guard audiences.contains(audience) else { throw SharedSignalsRefusal(.invalidAudience, "the SET's aud does not name this receiver") }
        guard case .number(let seconds)? = object["iat"], seconds.isFinite else { throw SharedSignalsRefusal(.invalidRequest, "the SET has no iat") }
        let issuedAt = Date(timeIntervalSince1970: seconds)
        guard issuedAt <= now.addingTimeInterval(Self.maximumSkew) else {
            throw SharedSignalsRefusal(.invalidRequest, "the SET's iat is more than 5 minutes ahead")
        }
        guard issuedAt >= now.addingTimeInterval(-Self.maximumAge) else { throw SharedSignalsRefusal(.invalidRequest, "the SET is more than 24 hours old") }
        guard let jti = object["jti"]?.stringValue, !jti.isEmpty, jti.utf8.count <= 256 else {
            throw SharedSignalsRefusal(.invalidRequest, "the SET has no jti (a string of at most 256 bytes)")
        }
        guard case .object(let events)? = object["events"], !events.isEmpty else { throw SharedSignalsRefusal(.invalidRequest, "the SET has no events") }
        guard events.count <= Self.maximumEvents else {
            throw SharedSignalsRefusal(.invalidRequest, "the SET has more than \(Self.maximumEvents) events")
        }
        let subject = object["sub_id"]
        return ReceivedSecurityEvent(
            jti: jti, issuedAt: issuedAt,
            events: events.sorted { $0.key < $1.key }.map { uri, members in
                ReceivedSecurityEvent.Event(type: ReceivedEventType(rawValue: uri), uri: uri, members: members, subject: members["subject"] ?? subject)
            })
    }

    /// What each of a SET's events does in `tenant` (PROTOCOL §19): the transmitter's action for it, applied to the user
    /// (or device) its subject names in the formats this transmitter uses.
    public func effects(of set: ReceivedSecurityEvent, in tenant: TenantSnapshot) -> [ReceivedSignalEffect] {
        set.events.map { effect(of: $0, in: tenant) }
    }

    func effect(of event: ReceivedSecurityEvent.Event, in tenant: TenantSnapshot) -> ReceivedSignalEffect {
        guard let type = event.type else { return .nothing("\(event.uri) is not an event this server acts on") }
        let action = action(for: type)
        if action == .ignore { return .nothing("\(type.name) is ignored by this transmitter's setting") }
        if action == .deviceCompliance {
            guard let device = device(named: event.subject, in: tenant) else { return .nothing("\(type.name) names no device of this tenant") }
            switch event.members["current_status"]?.stringValue {
            case "compliant": return .deviceCompliance(device.id, compliant: true)
            case "not-compliant": return .deviceCompliance(device.id, compliant: false)
            default: return .nothing("\(type.name) has no current_status of compliant or not-compliant")
            }
        }
        guard let user = user(named: event.subject, in: tenant) else { return .nothing("\(type.name) names no user of this tenant") }
        let source = "reported by the transmitter \(displayName) (\(type.name))"
        switch action {
        case .revokeSessions:
            if type == .credentialChange, event.members["change_type"]?.stringValue == "create" {
                return .nothing("a credential created ends nothing")
            }
            return .revokeSessions(user.id)
        case .userRisk:
            if let principal = event.members["principal"]?.stringValue, !principal.equalsIgnoringCase("USER") {
                return .nothing("\(type.name) is about a \(principal), not the user")
            }
            guard let level = event.members["current_level"]?.stringValue.flatMap(Self.riskLevel) else {
                return .nothing("\(type.name) has no current_level of LOW, MEDIUM or HIGH")
            }
            return .userRisk(user.id, .investigationsThreatIntelligence, level, info: source)
        case .leakedCredentials: return .userRisk(user.id, .leakedCredentials, .high, info: source)
        case .requirePasswordChange: return .userRisk(user.id, .investigationsThreatIntelligence, .high, info: source)
        case .disableAccount: return .disableAccount(user.id)
        case .deviceCompliance, .ignore: return .nothing("no effect")
        }
    }

    static func riskLevel(_ text: String) -> RiskLevel? {
        [RiskLevel.low, .medium, .high].first { $0.rawValue.equalsIgnoringCase(text) }
    }

    /// The user a subject names: a simple subject in one of this transmitter's formats, or a `complex` one's `user`.
    func user(named subject: JSONValue?, in tenant: TenantSnapshot) -> User? {
        guard case .object(let object)? = subject, let format = object["format"]?.stringValue else { return nil }
        if format == "complex" { return user(named: object["user"], in: tenant) }
        guard let attribute = subjectFormats[format] else { return nil }
        let value: String? =
            switch format {
            case "email": object["email"]?.stringValue
            case "iss_sub": object["sub"]?.stringValue
            case "opaque": object["id"]?.stringValue
            default: nil
            }
        guard let value, value.utf8.count <= 1024 else { return nil }
        switch attribute {
        case .userPrincipalName: return tenant.directory.user(principalName: value)
        case .id: return tenant.directory.user(id: ObjectID(value))
        }
    }

    /// The device a subject names: a `complex` subject's `device` (or the subject itself), `opaque` or `iss_sub`, by its
    /// device ID or object ID.
    func device(named subject: JSONValue?, in tenant: TenantSnapshot) -> Device? {
        guard case .object(let object)? = subject, let format = object["format"]?.stringValue else { return nil }
        if format == "complex" { return device(named: object["device"], in: tenant) }
        let value: String? =
            switch format {
            case "opaque": object["id"]?.stringValue
            case "iss_sub": object["sub"]?.stringValue
            default: nil
            }
        guard let value, value.isGUID else { return nil }
        return tenant.device(deviceId: DeviceID(value)) ?? tenant.device(id: ObjectID(value))
    }
}
