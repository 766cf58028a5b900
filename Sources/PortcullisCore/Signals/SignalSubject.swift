import Foundation

/// A subject identifier (RFC 9493) in the formats SSF 1.0 uses: `iss_sub`, `email`, `opaque`, and `complex` with
/// `user`, `tenant`, `application` and `device` members.
public indirect enum SignalSubject: Sendable, Hashable {
    case issuerSubject(issuer: String, subject: String)
    case email(String)
    case opaque(String)
    case complex(user: SignalSubject?, tenant: SignalSubject?, application: SignalSubject?, device: SignalSubject?)

    /// As it appears in a SET's `sub_id` or a subjects request.
    public var json: JSONValue {
        switch self {
        case .issuerSubject(let issuer, let subject): ["format": "iss_sub", "iss": .string(issuer), "sub": .string(subject)]
        case .email(let email): ["format": "email", "email": .string(email)]
        case .opaque(let id): ["format": "opaque", "id": .string(id)]
        case .complex(let user, let tenant, let application, let device):
            .object(
                ["format": "complex", "user": user?.json, "tenant": tenant?.json, "application": application?.json, "device": device?.json]
                    .compactMapValues { $0 })
        }
    }

    /// The longest text member accepted (an e-mail address's limit).
    static let maximumLength = 320

    /// Reads a subject identifier, recording problems at `pointer`.
    public static func parse(_ value: JSONValue, at pointer: String, problems: ProblemCollector, nested: Bool = false) -> SignalSubject? {
        guard let reader = JSONObjectReader(value, at: pointer, problems: problems) else { return nil }
        let formats = nested ? ["iss_sub", "email", "opaque"] : ["iss_sub", "email", "opaque", "complex"]
        guard let format = reader.enumeration("format", allowed: formats, required: true) else { return nil }
        func text(_ key: String) -> String? {
            guard let value = reader.string(key, required: true) else { return nil }
            guard value.count <= maximumLength else {
                problems.add(reader.path(key), "may be at most \(maximumLength) characters.")
                return nil
            }
            return value
        }
        switch format {
        case "iss_sub":
            reader.rejectUnknownMembers(allowed: ["format", "iss", "sub"])
            guard let issuer = text("iss"), let subject = text("sub") else { return nil }
            return .issuerSubject(issuer: issuer, subject: subject.lowercased())
        case "email":
            reader.rejectUnknownMembers(allowed: ["format", "email"])
            return text("email").map { .email($0.lowercased()) }
        case "opaque":
            reader.rejectUnknownMembers(allowed: ["format", "id"])
            return text("id").map { .opaque($0.lowercased()) }
        default:
            let members = ["user", "tenant", "application", "device"]
            reader.rejectUnknownMembers(allowed: Set(members + ["format"]))
            var found: [String: SignalSubject] = [:]
            for member in members {
                if let value = reader.object[member] {
                    found[member] = parse(value, at: reader.path(member), problems: problems, nested: true)
                }
            }
            guard !found.isEmpty else {
                problems.add(pointer, "a complex subject names at least one of user, tenant, application, device.")
                return nil
            }
            return .complex(user: found["user"], tenant: found["tenant"], application: found["application"], device: found["device"])
        }
    }

    /// Whether this subject (one a receiver removed from its stream) names the subject of an event about `event`,
    /// whose user signs in as `userPrincipalName`: a simple subject names the event's user (by `iss_sub`, e-mail
    /// or object ID), its tenant or its application; a complex one when each of its members does.
    public func covers(_ event: SignalSubject, userPrincipalName: String?) -> Bool {
        guard case .complex(let user, let tenant, let application, let device) = event else { return self == event }
        switch self {
        case .issuerSubject, .email:
            if let user, user == self { return true }
            if case .email(let email) = self, let userPrincipalName { return email == userPrincipalName.lowercased() }
            return false
        case .opaque(let id):
            if case .issuerSubject(_, let subject)? = user, subject == id { return true }
            return [tenant, application, device].contains(.opaque(id))
        case .complex(let ownUser, let ownTenant, let ownApplication, let ownDevice):
            let pairs: [(SignalSubject?, SignalSubject?)] = [(ownUser, user), (ownTenant, tenant), (ownApplication, application), (ownDevice, device)]
            return pairs.allSatisfy { own, other in
                guard let own else { return true }
                guard let other else { return false }
                return own.covers(other, userPrincipalName: userPrincipalName) || own == other
            }
        }
    }
}

extension SignalSubject: Codable {
    public init(from decoder: any Decoder) throws {
        let value = try JSONValue(from: decoder)
        let problems = ProblemCollector()
        guard let parsed = Self.parse(value, at: "", problems: problems) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a subject identifier"))
        }
        self = parsed
    }

    public func encode(to encoder: any Encoder) throws { try json.encode(to: encoder) }
}

extension JSONValue: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
