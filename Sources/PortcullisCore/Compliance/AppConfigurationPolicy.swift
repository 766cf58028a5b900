public import Foundation

/// An app configuration policy (PROTOCOL §8.1): the organisation's configuration for a managed app — a JSON
/// object delivered to enrolled, compliant instances of the targeted apps for the targeted users (Apple's
/// ManagedApp configuration, Intune's targeted app configuration).
public struct AppConfigurationPolicy: Codable, Sendable, Equatable {
    public var id: PolicyID
    public var displayName: String
    public var targets: AppProtectionPolicy.Targets
    /// Lower wins: where several policies give the same top-level key, the lowest priority number's value applies.
    public var priority: Int
    public var configuration: [String: JSONValue]
    /// The secrets it hands the app (`nil` when none; material is written separately and never read back).
    public var secrets: [SecretDeclaration]?

    /// `configuration` serialized is at most 64 KiB (kilobytes, not megabytes: seed 000).
    public static let maximumConfigurationBytes = 64 * 1024
    public static let priorities = 0...1_000_000

    public init(
        id: PolicyID, displayName: String, targets: AppProtectionPolicy.Targets, priority: Int, configuration: [String: JSONValue],
        secrets: [SecretDeclaration]? = nil
    ) {
        self.id = id
        self.displayName = displayName
        self.targets = targets
        self.priority = priority
        self.configuration = configuration
        self.secrets = secrets?.isEmpty == true ? nil : secrets
    }

    /// The declaration of `identifier` (compared case-insensitively), if this policy makes one.
    public func declaration(_ identifier: String) -> SecretDeclaration? {
        secrets?.first { $0.identifier.lowercased() == identifier.lowercased() }
    }

    /// Parses and validates a policy as strictly as the other policies. `others` are the tenant's other app
    /// configuration policies: an equal priority on an overlapping app is refused (the merge would have no winner).
    public static func parse(
        _ value: JSONValue, directory: DirectorySnapshot, others: [AppConfigurationPolicy], generatedId: @autoclosure () -> PolicyID, pointer: String = ""
    ) throws(ValidationError) -> AppConfigurationPolicy {
        let problems = ProblemCollector()
        let policy = read(value, directory: directory, others: others, generatedId: generatedId(), pointer: pointer, problems: problems)
        try problems.check()
        guard let policy else { throw ValidationError(problems: [ValidationProblem(pointer: pointer, message: "is not a valid app configuration policy.")]) }
        return policy
    }

    static func read(
        _ value: JSONValue, directory: DirectorySnapshot, others: [AppConfigurationPolicy], generatedId: PolicyID, pointer: String, problems: ProblemCollector
    ) -> AppConfigurationPolicy? {
        guard let root = JSONObjectReader(value, at: pointer, problems: problems) else { return nil }
        root.rejectUnknownMembers(allowed: ["id", "displayName", "description", "targets", "priority", "configuration", "secrets"])
        let id = root.has("id") ? root.guid("id") ?? generatedId : generatedId
        let displayName = root.string("displayName", required: true)
        let targets = AppProtectionPolicy.readTargets(root, directory: directory)
        let priority = root.integer("priority", in: priorities, required: true)
        var configuration: [String: JSONValue]?
        if let object = root.object("configuration", required: true) {
            configuration = object.object
            let size = (try? JSONEncoder().encode(JSONValue.object(object.object)).count) ?? 0
            if size > maximumConfigurationBytes {
                problems.add(root.path("configuration"), "is \(size) bytes serialized; at most \(maximumConfigurationBytes) (64 KiB).")
            }
        }
        let secrets = root.array("secrets").map { SecretDeclaration.readAll($0, problems: problems) }
        if let targets, let priority {
            for other in others where other.id != id && other.priority == priority {
                let shared = Set(other.targets.applications).intersection(targets.applications)
                if !shared.isEmpty {
                    problems.add(
                        root.path("priority"),
                        "\(priority) is also the priority of '\(other.displayName)' (\(other.id)), which targets the same app (\(shared.sorted().map(\.rawValue).joined(separator: ", "))): overlapping policies need distinct priorities, the lower one winning."
                    )
                }
            }
        }
        guard let displayName, let targets, let priority, let configuration else { return nil }
        return AppConfigurationPolicy(id: id, displayName: displayName, targets: targets, priority: priority, configuration: configuration, secrets: secrets)
    }
}

/// The configuration an app instance gets: every policy targeting the account and app, merged key by key at
/// the top level (the lowest priority number wins a key), with a version that is a fingerprint of the content.
public struct MergedAppConfiguration: Sendable, Equatable {
    /// `nil` when no policy targets the account and app (the app is unmanaged).
    public let configuration: [String: JSONValue]?
    /// The IDs of the policies that contributed, by priority.
    public let policyIds: [PolicyID]
    /// The secrets provisioned, by identifier: each identifier's declaration from the lowest priority number
    /// declaring it, listed once its material is written with the declared kind (a device identity at once).
    public let secrets: [ProvisionedSecret]
    /// The canonical JSON of `configuration` (sorted keys), followed by the provisioned secrets' when there are
    /// any: what the version fingerprints (a new secret version is a new configuration version).
    public let canonical: Data

    /// `materials` are the tenant's stored secret material, by `StoredSecretMaterial.documentId`.
    public static func resolve(
        _ policies: [AppConfigurationPolicy], materials: [String: StoredSecretMaterial] = [:], groupIds: [ObjectID],
        clientId: AppID
    ) -> MergedAppConfiguration {
        let applying = policies.filter { $0.targets.cover(groupIds: groupIds, clientId: clientId) }.sorted { $0.priority < $1.priority }
        guard !applying.isEmpty else { return MergedAppConfiguration(configuration: nil, policyIds: [], secrets: [], canonical: Data("null".utf8)) }
        var merged: [String: JSONValue] = [:]
        var secrets: [ProvisionedSecret] = []
        var declared = Set<String>()
        for policy in applying {
            for (key, value) in policy.configuration where merged[key] == nil { merged[key] = value }
            for declaration in policy.secrets ?? [] where declared.insert(declaration.identifier.lowercased()).inserted {
                var version: String?
                if declaration.holdsMaterial {
                    guard let material = materials[StoredSecretMaterial.documentId(policyId: policy.id, identifier: declaration.identifier)],
                        material.kind == declaration.kind
                    else { continue }
                    version = material.version
                }
                secrets.append(
                    ProvisionedSecret(
                        identifier: declaration.identifier, kind: declaration.kind, issuance: declaration.issuance, version: version, policyId: policy.id,
                        validityDays: declaration.validityDays))
            }
        }
        secrets.sort { $0.identifier < $1.identifier }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var canonical = (try? encoder.encode(JSONValue.object(merged))) ?? Data()
        if !secrets.isEmpty {
            // Without secrets the version stays what it was before secrets existed.
            canonical.append(UInt8(ascii: "\n"))
            canonical.append((try? encoder.encode(secrets)) ?? Data())
        }
        return MergedAppConfiguration(configuration: merged, policyIds: applying.map(\.id), secrets: secrets, canonical: canonical)
    }

    /// The provisioned secret `identifier` (case-insensitive), if any.
    public func secret(_ identifier: String) -> ProvisionedSecret? {
        secrets.first { $0.identifier.lowercased() == identifier.lowercased() }
    }
}
