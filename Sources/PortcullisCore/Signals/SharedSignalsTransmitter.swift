public import Foundation

/// A Shared Signals transmitter an admin registered (PROTOCOL §19): whose SETs this tenant accepts, how they name
/// users, and what each event does. SETs arrive by push at `/{tenant}/ssf/receiver/{id}` (RFC 8935) or are polled from
/// the stream Portcullis created with a transmitter that publishes its configuration (RFC 8936).
public struct SharedSignalsTransmitter: Codable, Sendable, Equatable {
    public var id: PolicyID
    public var displayName: String
    /// What its SETs name as `iss`.
    public var issuer: String
    /// What its SETs name as `aud` (one of them, when several).
    public var audience: String
    /// Its SSF configuration (`/.well-known/ssf-configuration`): keys, and the stream Portcullis creates.
    public var configurationUrl: String?
    /// Its keys, for a transmitter without a configuration.
    public var jwksUri: String?
    /// How SETs come: pushed to Portcullis, or polled from the transmitter (needs `configurationUrl`).
    public var delivery: Delivery
    /// Which subject formats name whom: format → the user's attribute.
    public var subjectFormats: [String: SubjectAttribute]
    /// What each received event does, by its short name (`session-revoked`); absent: its default.
    public var actions: [String: Action]
    /// The keyed hash of the `Authorization` value a push must carry (`nil`: none asked, unless a stream was created).
    public var authorizationHeaderHash: String?
    /// The `Authorization` value Portcullis sends to the transmitter (stream creation, polls), sealed; never shown.
    public var sealedTransmitterAuthorization: Data?
    /// The stream Portcullis created with it (server-owned).
    public var stream: Stream?
    public var createdDateTime: Date
    public var modifiedDateTime: Date

    public enum Delivery: String, Codable, Sendable, CaseIterable {
        case push, poll
    }

    public enum SubjectAttribute: String, Codable, Sendable, CaseIterable {
        case userPrincipalName, id
    }

    /// What a received event does (PROTOCOL §19).
    public enum Action: String, Codable, Sendable, CaseIterable {
        /// The user's sessions and refresh tokens end, their access tokens are void (§14.1).
        case revokeSessions
        /// The user's risk is raised to the event's level (`risk-level-change`).
        case userRisk
        /// The device's compliance is the event's (`device-compliance-change`).
        case deviceCompliance
        /// The user's risk is high, `leakedCredentials`; nothing revoked by itself.
        case leakedCredentials
        /// The user is disabled (which ends everything of theirs).
        case disableAccount
        /// The user's risk is high (`investigationsThreatIntelligence`): a password-change policy makes them change it.
        case requirePasswordChange
        /// Accepted and logged, no effect.
        case ignore
    }

    /// The stream Portcullis created at the transmitter.
    public struct Stream: Codable, Sendable, Equatable {
        public var streamId: String
        /// Poll: where SETs are fetched.
        public var pollEndpoint: String?
        /// Push: the keyed hash of the `Authorization` value Portcullis gave the transmitter.
        public var authorizationHeaderHash: String?
        /// What the stream was made for (a change of these makes another).
        public var madeFor: String
        public var createdDateTime: Date

        public init(streamId: String, pollEndpoint: String?, authorizationHeaderHash: String?, madeFor: String, createdDateTime: Date) {
            self.streamId = streamId
            self.pollEndpoint = pollEndpoint
            self.authorizationHeaderHash = authorizationHeaderHash
            self.madeFor = madeFor
            self.createdDateTime = createdDateTime
        }
    }

    /// How many transmitters a tenant may register.
    public static let maximumPerTenant = 20

    public init(
        id: PolicyID, displayName: String, issuer: String, audience: String, configurationUrl: String? = nil, jwksUri: String? = nil,
        delivery: Delivery = .push, subjectFormats: [String: SubjectAttribute] = Self.defaultSubjectFormats, actions: [String: Action] = [:],
        at now: Date
    ) {
        self.id = id
        self.displayName = displayName
        self.issuer = issuer
        self.audience = audience
        self.configurationUrl = configurationUrl
        self.jwksUri = jwksUri
        self.delivery = delivery
        self.subjectFormats = subjectFormats
        self.actions = actions
        self.createdDateTime = now
        self.modifiedDateTime = now
    }

    /// `email` matched to the UPN, `iss_sub` to the object ID (PROTOCOL §19).
    public static let defaultSubjectFormats: [String: SubjectAttribute] = ["email": .userPrincipalName, "iss_sub": .id]

    /// The formats a transmitter may use for users.
    public static let knownSubjectFormats = ["email", "iss_sub", "opaque"]

    /// What `event` does here: the admin's setting, else its default.
    public func action(for event: ReceivedEventType) -> Action { actions[event.name] ?? event.defaultAction }

    /// The events this transmitter's SETs may do something with (what a stream asks for).
    public var eventsRequested: [ReceivedEventType] { ReceivedEventType.allCases.filter { action(for: $0) != .ignore } }

    /// What a stream is made for: a change of any of it needs a new stream.
    public var streamPurpose: String {
        [configurationUrl ?? "", delivery.rawValue, audience, eventsRequested.map(\.name).joined(separator: ",")].joined(separator: " ")
    }
}

/// The events a transmitter's SETs may carry that do something here (PROTOCOL §19), by CAEP's and RISC's URIs.
public enum ReceivedEventType: String, Sendable, CaseIterable {
    case sessionRevoked = "https://schemas.openid.net/secevent/caep/event-type/session-revoked"
    case credentialChange = "https://schemas.openid.net/secevent/caep/event-type/credential-change"
    case riskLevelChange = "https://schemas.openid.net/secevent/caep/event-type/risk-level-change"
    case deviceComplianceChange = "https://schemas.openid.net/secevent/caep/event-type/device-compliance-change"
    case credentialCompromise = "https://schemas.openid.net/secevent/risc/event-type/credential-compromise"
    case accountDisabled = "https://schemas.openid.net/secevent/risc/event-type/account-disabled"
    case accountCredentialChangeRequired = "https://schemas.openid.net/secevent/risc/event-type/account-credential-change-required"

    /// The short name (the URI's last segment), as `actions` names it.
    public var name: String { String(rawValue.split(separator: "/").last ?? "") }

    public init?(name: String) {
        guard let found = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = found
    }

    public var defaultAction: SharedSignalsTransmitter.Action {
        switch self {
        case .sessionRevoked, .credentialChange: .revokeSessions
        case .riskLevelChange: .userRisk
        case .deviceComplianceChange: .deviceCompliance
        case .credentialCompromise: .leakedCredentials
        case .accountDisabled: .disableAccount
        case .accountCredentialChangeRequired: .requirePasswordChange
        }
    }

    /// What an admin may set it to: its default, or nothing; a user's events may also end the user's sessions.
    public var allowedActions: [SharedSignalsTransmitter.Action] {
        switch self {
        case .deviceComplianceChange: [.deviceCompliance, .ignore]
        case .sessionRevoked, .credentialChange: [.revokeSessions, .ignore]
        default: [defaultAction, .revokeSessions, .ignore]
        }
    }
}

// MARK: Reading an admin's body

extension SharedSignalsTransmitter {
    /// Reads an admin's registration, every problem at its pointer. `authorizationHeader` and `transmitterAuthorization`
    /// are write-only: given, they are hashed and sealed by `secure`; absent on a replace, the stored ones stay.
    /// `existing` is the stored one on a replace (its stream stays while what it was made for does not change).
    public static func read(
        _ body: JSONValue, existing: SharedSignalsTransmitter?, count: Int, now: Date,
        secure: (_ authorizationHeader: String?, _ transmitterAuthorization: String?, _ id: PolicyID) throws -> (hash: String?, sealed: Data?)
    ) throws -> SharedSignalsTransmitter {
        let problems = ProblemCollector()
        guard let reader = JSONObjectReader(body, at: "", problems: problems) else {
            try problems.check()
            throw ValidationError(problems: [ValidationProblem(pointer: "", message: "must be a JSON object.")])
        }
        reader.rejectUnknownMembers(allowed: [
            "id", "displayName", "issuer", "audience", "configurationUrl", "jwksUri", "delivery", "subjectFormats", "actions", "authorizationHeader",
            "transmitterAuthorization", "stream", "createdDateTime", "modifiedDateTime", "authorizationHeaderSet", "transmitterAuthorizationSet",
        ])
        let id: PolicyID? = reader.guid("id", required: true)
        if existing == nil && count >= maximumPerTenant {
            problems.add("", "a tenant may register at most \(maximumPerTenant) transmitters.")
        }
        let displayName = reader.string("displayName", required: true)
        if let displayName, displayName.count > 256 { problems.add("/displayName", "may be at most 256 characters.") }
        let issuer = reader.string("issuer", required: true)
        if let issuer, issuer.count > 2048 { problems.add("/issuer", "may be at most 2048 characters.") }
        let audience = reader.string("audience", required: true)
        if let audience, audience.count > 2048 { problems.add("/audience", "may be at most 2048 characters.") }
        func url(_ key: String) -> String? {
            guard let text = reader.string(key) else { return nil }
            guard text.count <= 2048, let parsed = URL(string: text), parsed.scheme?.equalsIgnoringCase("https") == true, parsed.host?.isEmpty == false else {
                problems.add(reader.path(key), "must be an https URL (at most 2048 characters).")
                return nil
            }
            return text
        }
        let configurationUrl = url("configurationUrl")
        let jwksUri = url("jwksUri")
        if reader.has("configurationUrl") == reader.has("jwksUri") {
            problems.add("", "give either configurationUrl (a transmitter that publishes its SSF configuration) or jwksUri (its keys).")
        }
        let delivery = reader.enumeration("delivery", allowed: Delivery.allCases.map(\.rawValue)).flatMap(Delivery.init(rawValue:)) ?? .push
        if delivery == .poll && !reader.has("configurationUrl") {
            problems.add("/delivery", "poll needs configurationUrl: the poll endpoint is the stream's that Portcullis creates there.")
        }
        var formats = defaultSubjectFormats
        if let given = reader.object("subjectFormats") {
            formats = [:]
            for (format, value) in given.object.sorted(by: { $0.key < $1.key }) {
                guard knownSubjectFormats.contains(format) else {
                    problems.add(given.path(format), "is not a subject format this server reads; known: \(knownSubjectFormats.joined(separator: ", ")).")
                    continue
                }
                formats[format] = given.enumeration(format, allowed: SubjectAttribute.allCases.map(\.rawValue)).flatMap(SubjectAttribute.init(rawValue:))
            }
            if given.object.isEmpty { problems.add("/subjectFormats", "must name at least one format.") }
        }
        var actions: [String: Action] = [:]
        if let given = reader.object("actions") {
            for (name, _) in given.object.sorted(by: { $0.key < $1.key }) {
                guard let event = ReceivedEventType(name: name) else {
                    problems.add(
                        given.path(name), "is not an event this server acts on; known: \(ReceivedEventType.allCases.map(\.name).joined(separator: ", ")).")
                    continue
                }
                if let action = given.enumeration(name, allowed: event.allowedActions.map(\.rawValue)).flatMap(Action.init(rawValue:)),
                    action != event.defaultAction
                {
                    actions[name] = action
                }
            }
        }
        let header = reader.string("authorizationHeader")
        if let header, header.count > 1024 { problems.add("/authorizationHeader", "may be at most 1024 characters.") }
        let outgoing = reader.string("transmitterAuthorization")
        if let outgoing, outgoing.count > 4096 || outgoing.contains(where: { $0 == "\r" || $0 == "\n" }) {
            problems.add("/transmitterAuthorization", "must be one line of at most 4096 characters.")
        }
        try problems.check()
        guard let id, let displayName, let issuer, let audience else {
            throw ValidationError(problems: [ValidationProblem(pointer: "", message: "is not a transmitter.")])
        }
        var made = SharedSignalsTransmitter(
            id: id, displayName: displayName, issuer: issuer, audience: audience, configurationUrl: configurationUrl, jwksUri: jwksUri,
            delivery: delivery, subjectFormats: formats, actions: actions, at: now)
        let secured = try secure(header, outgoing, id)
        made.authorizationHeaderHash = secured.hash ?? existing?.authorizationHeaderHash
        made.sealedTransmitterAuthorization = secured.sealed ?? existing?.sealedTransmitterAuthorization
        if let existing {
            made.createdDateTime = existing.createdDateTime
            if existing.stream?.madeFor == made.streamPurpose { made.stream = existing.stream }
            // The same registration again (a folder re-applied) is no change.
            var probe = made
            probe.modifiedDateTime = existing.modifiedDateTime
            if probe == existing { return existing }
        }
        return made
    }

    /// How answers and the audit log show it: never the hash or the sealed value, only whether they are set.
    public var presented: JSONValue {
        var shown = self
        shown.authorizationHeaderHash = nil
        shown.sealedTransmitterAuthorization = nil
        shown.stream?.authorizationHeaderHash = nil
        guard case .object(var object) = JSONValue(encoding: shown) else { return .null }
        object["authorizationHeaderSet"] = .bool(authorizationHeaderHash != nil)
        object["transmitterAuthorizationSet"] = .bool(sealedTransmitterAuthorization != nil)
        object["createdDateTime"] = .string(createdDateTime.formatted(.iso8601))
        object["modifiedDateTime"] = .string(modifiedDateTime.formatted(.iso8601))
        if let stream, case .object(var shownStream)? = object["stream"] {
            shownStream["createdDateTime"] = .string(stream.createdDateTime.formatted(.iso8601))
            object["stream"] = .object(shownStream)
        }
        return .object(object)
    }
}
