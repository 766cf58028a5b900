public import Foundation

/// How a user authenticated, as authentication strengths name it (Graph's `authenticationMethodModes`, the
/// combinations Portcullis can produce).
public enum AuthenticationMethodMode: String, Codable, Sendable, CaseIterable {
    case fido2
    case passwordSoftwareOath = "password,softwareOath"
    case temporaryAccessPassOneTime
    case temporaryAccessPassMultiUse

    /// What people call it (what-if, the sign-in log, the console).
    public var label: String {
        switch self {
        case .fido2: "passkey (FIDO2)"
        case .passwordSoftwareOath: "password and authenticator app code"
        case .temporaryAccessPassOneTime: "temporary access pass (one-time)"
        case .temporaryAccessPassMultiUse: "temporary access pass (multi-use)"
        }
    }
}

/// An authentication strength (PROTOCOL §12.2) in the shape of Graph's `authenticationStrengthPolicy`: which
/// combinations of methods satisfy it, and for passkeys, optionally, which authenticator models (AAGUIDs).
/// Built-in strengths have Entra's IDs and are never stored; custom ones are tenant documents.
public struct AuthenticationStrengthPolicy: Codable, Sendable, Equatable {
    public enum PolicyType: String, Codable, Sendable {
        case builtIn, custom
    }

    /// Graph's `fido2CombinationConfiguration`: the authenticator models a passkey must be.
    public struct Fido2Configuration: Codable, Sendable, Equatable {
        public var id: PolicyID
        /// Lower-case AAGUIDs.
        public var allowedAAGuids: [String]

        public init(id: PolicyID, allowedAAGuids: [String]) {
            self.id = id
            self.allowedAAGuids = allowedAAGuids
        }
    }

    public var id: PolicyID
    public var displayName: String
    public var description: String
    public var policyType: PolicyType
    public var allowedCombinations: [AuthenticationMethodMode]
    /// At most one (for `fido2`).
    public var fido2Configuration: Fido2Configuration?

    public init(
        id: PolicyID, displayName: String, description: String = "", policyType: PolicyType = .custom, allowedCombinations: [AuthenticationMethodMode],
        fido2Configuration: Fido2Configuration? = nil
    ) {
        self.id = id
        self.displayName = displayName
        self.description = description
        self.policyType = policyType
        self.allowedCombinations = allowedCombinations
        self.fido2Configuration = fido2Configuration
    }

    // MARK: Built-in strengths (Entra's IDs)

    public static let multifactor = AuthenticationStrengthPolicy(
        id: "00000000-0000-0000-0000-000000000002", displayName: "Multifactor authentication",
        description: "Combinations of methods that satisfy strong authentication, such as a password + TOTP code.", policyType: .builtIn,
        allowedCombinations: [.fido2, .passwordSoftwareOath, .temporaryAccessPassOneTime, .temporaryAccessPassMultiUse])
    public static let passwordless = AuthenticationStrengthPolicy(
        id: "00000000-0000-0000-0000-000000000003", displayName: "Passwordless MFA",
        description: "Passwordless methods that satisfy strong authentication, such as a passkey.", policyType: .builtIn, allowedCombinations: [.fido2])
    public static let phishingResistant = AuthenticationStrengthPolicy(
        id: "00000000-0000-0000-0000-000000000004", displayName: "Phishing-resistant MFA",
        description: "Phishing-resistant, passwordless methods for the strongest authentication, such as a passkey (FIDO2).", policyType: .builtIn,
        allowedCombinations: [.fido2])

    public static let builtIns = [multifactor, passwordless, phishingResistant]

    /// Whether an authentication meets this strength, and why (what-if and the sign-in log show the reason).
    public func evaluate(_ authentication: AuthenticationContext) -> (met: Bool, reason: String) {
        guard let mode = authentication.mode else {
            return (false, "the authentication (\(authentication.amr.joined(separator: ", "))) is none of: \(allowedList)")
        }
        guard allowedCombinations.contains(mode) else { return (false, "\(mode.label) is not one of: \(allowedList)") }
        if mode == .fido2, let configuration = fido2Configuration, !configuration.allowedAAGuids.isEmpty {
            let model = authentication.authenticatorModel?.identifierText
            guard let model, configuration.allowedAAGuids.contains(model) else {
                return (false, "the passkey's authenticator model (AAGUID \(model ?? "unknown")) is not one this strength allows")
            }
        }
        return (true, "\(mode.label) meets '\(displayName)'")
    }

    var allowedList: String { allowedCombinations.map(\.label).joined(separator: ", ") }

    /// The strength's AAGUID restriction, if any: then a passkey's attestation must verify (PROTOCOL §12.1).
    public var restrictsModels: Bool { !(fido2Configuration?.allowedAAGuids.isEmpty ?? true) }
}

// MARK: How a user authenticated

extension AuthenticationContext {
    /// The recorded method list holds the `amr` values plus facts a strength needs that `amr` cannot say: the
    /// passkey's authenticator model (`aaguid=<uuid>`) and a temporary access pass's kind (`tap=once`/`tap=multi`).
    /// Entries with `=` never reach a token.
    static let modelPrefix = "aaguid="
    static let tapOnce = "tap=once"
    static let tapMulti = "tap=multi"

    /// A passkey sign-in: multi-factor and phishing-resistant by itself. `model` is the authenticator's AAGUID only when
    /// its attestation verified to a trusted root (`nil`: unknown, which no `allowedAAGuids` strength accepts).
    public static func passkey(model: UUID?, at time: Date) -> AuthenticationContext {
        AuthenticationContext(methods: ["fido", "mfa"] + (model.map { [modelPrefix + $0.identifierText] } ?? []), time: time)
    }

    /// A temporary access pass sign-in (PROTOCOL §12.3).
    public static func temporaryAccessPass(usableOnce: Bool, at time: Date) -> AuthenticationContext {
        AuthenticationContext(methods: ["tap", "mfa", usableOnce ? tapOnce : tapMulti], time: time)
    }

    /// A password and an authenticator-app code.
    public static func passwordAndCode(at time: Date) -> AuthenticationContext { AuthenticationContext(methods: ["pwd", "mfa"], time: time) }

    /// The second factor's time, when it was given apart from the primary (a code after a password, PROTOCOL §10).
    static let factorPrefix = "mfaat="

    /// When the second factor was given, when apart from the primary; `nil` when the primary gave it too (a passkey, a
    /// temporary access pass) or there is none.
    public var factorTime: Date? {
        methods.lazy.compactMap { $0.hasPrefix(Self.factorPrefix) ? Double($0.dropFirst(Self.factorPrefix.count)) : nil }.first
            .map(Date.init(timeIntervalSince1970:))
    }

    /// The time sign-in frequency judges (`primaryAndSecondaryAuthentication`): the older of the primary's and the second
    /// factor's. A factor never makes the password recent.
    public var reauthenticationTime: Date? {
        guard let time else { return nil }
        return factorTime.map { min($0, time) } ?? time
    }

    /// This authentication with an authenticator-app code given at `time`: the primary's time is kept, the factor's
    /// recorded apart (PROTOCOL §13).
    public func addingCode(at time: Date) -> AuthenticationContext {
        let kept = methods.filter { $0 != "mfa" && !$0.hasPrefix(Self.factorPrefix) }
        return AuthenticationContext(methods: kept + ["mfa", Self.factorPrefix + String(Int64(time.timeIntervalSince1970.rounded(.down)))], time: self.time)
    }

    /// The `amr` claim's values.
    public var amr: [String] { methods.filter { !$0.contains("=") } }

    /// The combination a strength compares (nil: password alone, or nothing).
    public var mode: AuthenticationMethodMode? {
        if methods.contains("fido") { return .fido2 }
        if methods.contains("tap") { return methods.contains(Self.tapMulti) ? .temporaryAccessPassMultiUse : .temporaryAccessPassOneTime }
        if methods.contains("pwd") && methods.contains("mfa") { return .passwordSoftwareOath }
        return nil
    }

    /// The passkey's authenticator model, when the sign-in used one.
    public var authenticatorModel: UUID? {
        methods.first { $0.hasPrefix(Self.modelPrefix) }.flatMap { UUID(uuidString: String($0.dropFirst(Self.modelPrefix.count))) }
    }
}

// MARK: Graph's shape, stored and served

extension AuthenticationStrengthPolicy {
    enum CodingKeys: String, CodingKey {
        case id, displayName, description, policyType, requirementsSatisfied, allowedCombinations, combinationConfigurations
    }

    enum ConfigurationKeys: String, CodingKey {
        case odataType = "@odata.type"
        case id, allowedAAGuids, appliesToCombinations
    }

    static let fido2ConfigurationType = "#microsoft.graph.fido2CombinationConfiguration"

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(displayName, forKey: .displayName)
        try container.encode(description, forKey: .description)
        try container.encode(policyType, forKey: .policyType)
        try container.encode("mfa", forKey: .requirementsSatisfied)
        try container.encode(allowedCombinations, forKey: .allowedCombinations)
        var configurations = container.nestedUnkeyedContainer(forKey: .combinationConfigurations)
        if let fido2Configuration {
            var item = configurations.nestedContainer(keyedBy: ConfigurationKeys.self)
            try item.encode(Self.fido2ConfigurationType, forKey: .odataType)
            try item.encode(fido2Configuration.id, forKey: .id)
            try item.encode(fido2Configuration.allowedAAGuids, forKey: .allowedAAGuids)
            try item.encode([AuthenticationMethodMode.fido2], forKey: .appliesToCombinations)
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(PolicyID.self, forKey: .id)
        displayName = try container.decode(String.self, forKey: .displayName)
        description = try container.decodeIfPresent(String.self, forKey: .description) ?? ""
        policyType = try container.decodeIfPresent(PolicyType.self, forKey: .policyType) ?? .custom
        allowedCombinations = try container.decode([AuthenticationMethodMode].self, forKey: .allowedCombinations)
        var configurations = try container.nestedUnkeyedContainer(forKey: .combinationConfigurations)
        fido2Configuration = nil
        while !configurations.isAtEnd {
            let item = try configurations.nestedContainer(keyedBy: ConfigurationKeys.self)
            fido2Configuration = Fido2Configuration(
                id: try item.decode(PolicyID.self, forKey: .id), allowedAAGuids: try item.decode([String].self, forKey: .allowedAAGuids))
        }
    }

    /// Reads and validates a custom strength (the admin API's body), every problem at its JSON Pointer. `others` are
    /// the tenant's other custom strengths (names are unique, as in Entra).
    public static func parse(
        _ value: JSONValue, others: [AuthenticationStrengthPolicy], generatedId: @autoclosure () -> PolicyID
    ) throws(ValidationError) -> AuthenticationStrengthPolicy {
        let problems = ProblemCollector()
        guard let reader = JSONObjectReader(value, at: "", problems: problems) else { throw ValidationError(problems: problems.problems) }
        reader.rejectUnknownMembers(allowed: [
            "id", "displayName", "description", "policyType", "requirementsSatisfied", "allowedCombinations", "combinationConfigurations",
            "createdDateTime", "modifiedDateTime", "@odata.type", "@odata.context",
        ])
        var id = generatedId()
        if reader.has("id"), let given: PolicyID = reader.guid("id") {
            if builtIns.contains(where: { $0.id == given }) {
                problems.add(reader.path("id"), "names a built-in strength, which cannot be changed; create a custom one with another ID.")
            } else {
                id = given
            }
        }
        let displayName = reader.string("displayName", required: true)
        if let displayName {
            if displayName.count > 256 { problems.add(reader.path("displayName"), "must be at most 256 characters.") }
            let taken = (builtIns + others.filter { $0.id != id }).first { $0.displayName.caseInsensitiveCompare(displayName) == .orderedSame }
            if let taken { problems.add(reader.path("displayName"), "is already the name of strength \(taken.id); names are unique.") }
        }
        let description = reader.string("description", nonEmpty: false) ?? ""
        if description.count > 1024 { problems.add(reader.path("description"), "must be at most 1024 characters.") }
        _ = reader.enumeration("policyType", allowed: [PolicyType.custom.rawValue])
        _ = reader.enumeration("requirementsSatisfied", allowed: ["mfa"])
        var combinations: [AuthenticationMethodMode] = []
        if let items = reader.strings("allowedCombinations", required: true) {
            if items.isEmpty { problems.add(reader.path("allowedCombinations"), "must name at least one combination.") }
            for (name, pointer) in items {
                if let mode = AuthenticationMethodMode.allCases.first(where: { $0.rawValue.equalsIgnoringCase(name) }) {
                    if !combinations.contains(mode) { combinations.append(mode) }
                } else {
                    problems.add(
                        pointer,
                        "'\(name)' cannot be satisfied by this server; use: \(AuthenticationMethodMode.allCases.map(\.rawValue).joined(separator: ", ")).")
                }
            }
        }
        var fido2: Fido2Configuration?
        for (item, pointer) in reader.array("combinationConfigurations") ?? [] {
            guard let configuration = JSONObjectReader(item, at: pointer, problems: problems) else { continue }
            configuration.rejectUnknownMembers(allowed: ["@odata.type", "id", "allowedAAGuids", "appliesToCombinations"])
            if let type = configuration.string("@odata.type"), type != fido2ConfigurationType {
                problems.add(configuration.path("@odata.type"), "only \(fido2ConfigurationType) is supported.")
            }
            let applies = configuration.strings("appliesToCombinations", required: true) ?? []
            if applies.count != 1 || applies.first?.value.equalsIgnoringCase("fido2") != true {
                problems.add(configuration.path("appliesToCombinations"), "must be [\"fido2\"] (AAGUID restrictions apply to passkeys).")
            } else if !combinations.contains(.fido2) {
                problems.add(configuration.path("appliesToCombinations"), "names fido2, which allowedCombinations does not allow.")
            }
            var aaguids: [String] = []
            for (aaguid, aaguidPointer) in configuration.strings("allowedAAGuids", required: true) ?? [] {
                if aaguid.isGUID { aaguids.append(aaguid.lowercased()) } else { problems.add(aaguidPointer, "must be an AAGUID (a GUID).") }
            }
            if aaguids.isEmpty { problems.add(configuration.path("allowedAAGuids"), "must name at least one authenticator model.") }
            if aaguids.count > 64 { problems.add(configuration.path("allowedAAGuids"), "must name at most 64 authenticator models.") }
            if fido2 != nil { problems.add(pointer, "only one fido2 configuration is allowed.") }
            // Absent: the strength's own ID (a re-applied document without one stays the same document).
            var configurationId = id
            if let given = configuration.string("id") {
                if let given = PolicyID(guid: given) { configurationId = given } else { problems.add(configuration.path("id"), "must be a GUID.") }
            }
            fido2 = Fido2Configuration(id: configurationId, allowedAAGuids: Array(Set(aaguids)).sorted())
        }
        try problems.check()
        guard let displayName else { throw ValidationError(problems: [ValidationProblem(pointer: "", message: "is not a valid strength.")]) }
        return AuthenticationStrengthPolicy(
            id: id, displayName: displayName, description: description, allowedCombinations: combinations, fido2Configuration: fido2)
    }
}
