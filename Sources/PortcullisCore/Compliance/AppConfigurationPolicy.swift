import Foundation

/// An app configuration policy (PROTOCOL §8.1): the organisation's configuration for a managed app — a JSON
/// object delivered to enrolled, compliant instances of the targeted apps for the targeted users (Apple's
/// ManagedApp configuration, Intune's targeted app configuration).
public struct AppConfigurationPolicy: Codable, Sendable, Equatable {
    public var id: String
    public var displayName: String
    public var targets: AppProtectionPolicy.Targets
    /// Lower wins: where several policies give the same top-level key, the lowest priority number's value applies.
    public var priority: Int
    public var configuration: [String: JSONValue]

    /// `configuration` serialized is at most 64 KiB (kilobytes, not megabytes: seed 000).
    public static let maximumConfigurationBytes = 64 * 1024
    public static let priorities = 0...1_000_000

    public init(id: String, displayName: String, targets: AppProtectionPolicy.Targets, priority: Int, configuration: [String: JSONValue]) {
        self.id = id
        self.displayName = displayName
        self.targets = targets
        self.priority = priority
        self.configuration = configuration
    }

    /// Parses and validates a policy as strictly as the other policies. `others` are the tenant's other app
    /// configuration policies: an equal priority on an overlapping app is refused (the merge would have no winner).
    public static func parse(
        _ value: JSONValue, directory: DirectorySnapshot, others: [AppConfigurationPolicy], generatedId: @autoclosure () -> String, pointer: String = ""
    ) throws(ValidationError) -> AppConfigurationPolicy {
        let problems = ProblemCollector()
        let policy = read(value, directory: directory, others: others, generatedId: generatedId(), pointer: pointer, problems: problems)
        try problems.check()
        guard let policy else { throw ValidationError(problems: [ValidationProblem(pointer: pointer, message: "is not a valid app configuration policy.")]) }
        return policy
    }

    static func read(
        _ value: JSONValue, directory: DirectorySnapshot, others: [AppConfigurationPolicy], generatedId: String, pointer: String, problems: ProblemCollector
    ) -> AppConfigurationPolicy? {
        guard let root = JSONObjectReader(value, at: pointer, problems: problems) else { return nil }
        root.rejectUnknownMembers(allowed: ["id", "displayName", "description", "targets", "priority", "configuration", "secrets"])
        var id = generatedId
        if let given = root.string("id") {
            if given.isGUID { id = given.lowercased() } else { problems.add(root.path("id"), "must be a GUID.") }
        }
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
        if let secrets = root.array("secrets"), !secrets.isEmpty {
            // Secret material (passwords, certificates, identities) needs sealed delivery, which this server does
            // not have yet: refused openly rather than accepted and never delivered.
            problems.add(root.path("secrets"), "secrets cannot be delivered by this server yet; remove them (an empty array is accepted).")
        }
        if let targets, let priority {
            for other in others where other.id != id && other.priority == priority {
                let shared = Set(other.targets.applications).intersection(targets.applications)
                if !shared.isEmpty {
                    problems.add(root.path("priority"), "\(priority) is also the priority of '\(other.displayName)' (\(other.id)), which targets the same app (\(shared.sorted().joined(separator: ", "))): overlapping policies need distinct priorities, the lower one winning.")
                }
            }
        }
        guard let displayName, let targets, let priority, let configuration else { return nil }
        return AppConfigurationPolicy(id: id, displayName: displayName, targets: targets, priority: priority, configuration: configuration)
    }
}

/// The configuration an app instance gets: every policy targeting the account and app, merged key by key at
/// the top level (the lowest priority number wins a key), with a version that is a fingerprint of the content.
public struct MergedAppConfiguration: Sendable, Equatable {
    /// `nil` when no policy targets the account and app (the app is unmanaged).
    public let configuration: [String: JSONValue]?
    /// The IDs of the policies that contributed, by priority.
    public let policyIds: [String]
    /// The canonical JSON of `configuration` (sorted keys): what the version fingerprints.
    public let canonical: Data

    public static func resolve(_ policies: [AppConfigurationPolicy], groupIds: [String], clientId: String) -> MergedAppConfiguration {
        let applying = policies.filter { $0.targets.cover(groupIds: groupIds, clientId: clientId) }.sorted { $0.priority < $1.priority }
        guard !applying.isEmpty else { return MergedAppConfiguration(configuration: nil, policyIds: [], canonical: Data("null".utf8)) }
        var merged: [String: JSONValue] = [:]
        for policy in applying {
            for (key, value) in policy.configuration where merged[key] == nil { merged[key] = value }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let canonical = (try? encoder.encode(JSONValue.object(merged))) ?? Data()
        return MergedAppConfiguration(configuration: merged, policyIds: applying.map(\.id), canonical: canonical)
    }
}
