import Foundation

/// Everything the token path needs about one tenant, immutable and shared until the tenant changes: its
/// directory, its compiled conditional-access policies, and its app protection and app configuration policies.
/// Built from the tenant's documents (`TenantContents`); one document's change makes a new snapshot in which only
/// what depends on that kind is rebuilt (`applying(_:id:)`): a policy write recompiles this tenant's policy set and
/// leaves its directory — and every other tenant — alone.
public struct TenantSnapshot: Sendable {
    public let contents: TenantContents
    public let directory: DirectorySnapshot
    public let conditionalAccess: CompiledPolicySet
    public let appProtectionPolicies: [AppProtectionPolicy]
    public let appConfigurationPolicies: [AppConfigurationPolicy]
    /// Secret material (sealed at rest), by `StoredSecretMaterial.documentId`.
    public var secretMaterials: [String: StoredSecretMaterial] { contents.secretMaterials }

    /// A snapshot of `contents`, built whole.
    public init(contents: TenantContents, revision: Int64) {
        let directory = Self.directory(contents, revision: revision)
        self.init(
            contents: contents, directory: directory, conditionalAccess: Self.conditionalAccess(contents, directory: directory),
            appProtectionPolicies: Self.sorted(contents.appProtectionPolicies), appConfigurationPolicies: Self.sorted(contents.appConfigurationPolicies))
    }

    private init(contents: TenantContents, directory: DirectorySnapshot, conditionalAccess: CompiledPolicySet,
                 appProtectionPolicies: [AppProtectionPolicy], appConfigurationPolicies: [AppConfigurationPolicy]) {
        self.contents = contents
        self.directory = directory
        self.conditionalAccess = conditionalAccess
        self.appProtectionPolicies = appProtectionPolicies
        self.appConfigurationPolicies = appConfigurationPolicies
    }

    /// A snapshot assembled from parts (tests and benchmarks that describe a tenant directly).
    public init(directory: DirectorySnapshot, conditionalAccess: CompiledPolicySet, appProtectionPolicies: [AppProtectionPolicy] = [],
                appConfigurationPolicies: [AppConfigurationPolicy] = [], secretMaterials: [StoredSecretMaterial] = []) {
        var contents = TenantContents(tenant: directory.tenant)
        for user in directory.users { contents.users[user.id] = user }
        for group in directory.groups { contents.groups[group.id] = group }
        for application in directory.applications { contents.applications[application.appId] = application }
        for assignment in directory.appRoleAssignments {
            let stored = RoleAssignmentDocument(assignment, in: directory)
            contents.roleAssignments[stored.id] = stored
        }
        for location in directory.namedLocations { contents.namedLocations[location.id] = location }
        for policy in conditionalAccess.policies { contents.conditionalAccessPolicies[policy.id] = policy }
        for policy in appProtectionPolicies { contents.appProtectionPolicies[policy.id] = policy }
        for policy in appConfigurationPolicies { contents.appConfigurationPolicies[policy.id] = policy }
        for material in secretMaterials { contents.secretMaterials[material.documentId] = material }
        self.init(contents: contents, directory: directory, conditionalAccess: conditionalAccess,
                  appProtectionPolicies: appProtectionPolicies, appConfigurationPolicies: appConfigurationPolicies)
    }

    /// This tenant with one document put (or, `nil`, removed) under `id`, at `revision`. Rebuilds only what depends
    /// on the document's kind: the directory for directory objects (and the policy set when a named location
    /// changed, whose ranges it holds), the compiled policy set for a conditional-access policy, a list otherwise.
    public func applying<Document: TenantDocument>(_ document: Document?, id: String, revision: Int64) -> TenantSnapshot {
        var contents = self.contents
        Document.apply(document, id: id, to: &contents)
        switch Document.kind {
        case .conditionalAccessPolicy:
            return TenantSnapshot(contents: contents, directory: directory.at(revision: revision),
                                  conditionalAccess: Self.conditionalAccess(contents, directory: directory),
                                  appProtectionPolicies: appProtectionPolicies, appConfigurationPolicies: appConfigurationPolicies)
        case .appProtectionPolicy:
            return TenantSnapshot(contents: contents, directory: directory.at(revision: revision), conditionalAccess: conditionalAccess,
                                  appProtectionPolicies: Self.sorted(contents.appProtectionPolicies), appConfigurationPolicies: appConfigurationPolicies)
        case .appConfigurationPolicy:
            return TenantSnapshot(contents: contents, directory: directory.at(revision: revision), conditionalAccess: conditionalAccess,
                                  appProtectionPolicies: appProtectionPolicies, appConfigurationPolicies: Self.sorted(contents.appConfigurationPolicies))
        case .appSecretMaterial:
            return TenantSnapshot(contents: contents, directory: directory.at(revision: revision), conditionalAccess: conditionalAccess,
                                  appProtectionPolicies: appProtectionPolicies, appConfigurationPolicies: appConfigurationPolicies)
        case .namedLocation:
            let directory = Self.directory(contents, revision: revision)
            return TenantSnapshot(contents: contents, directory: directory, conditionalAccess: Self.conditionalAccess(contents, directory: directory),
                                  appProtectionPolicies: appProtectionPolicies, appConfigurationPolicies: appConfigurationPolicies)
        default:
            return TenantSnapshot(contents: contents, directory: Self.directory(contents, revision: revision), conditionalAccess: conditionalAccess,
                                  appProtectionPolicies: appProtectionPolicies, appConfigurationPolicies: appConfigurationPolicies)
        }
    }

    static func sorted<Value>(_ byId: [String: Value]) -> [Value] {
        byId.sorted { $0.key < $1.key }.map(\.value)
    }

    static func directory(_ contents: TenantContents, revision: Int64) -> DirectorySnapshot {
        DirectorySnapshot(
            tenant: contents.tenant, revision: revision, users: sorted(contents.users), groups: sorted(contents.groups),
            applications: sorted(contents.applications), appRoleAssignments: sorted(contents.roleAssignments).map(\.assignment),
            namedLocations: sorted(contents.namedLocations))
    }

    static func conditionalAccess(_ contents: TenantContents, directory: DirectorySnapshot) -> CompiledPolicySet {
        CompiledPolicySet(policies: Array(contents.conditionalAccessPolicies.values), namedLocations: directory.namedLocations)
    }

    /// The merged app configuration for an account in a client application (PROTOCOL §8.1).
    public func appConfiguration(userId: String, clientId: String) -> MergedAppConfiguration {
        MergedAppConfiguration.resolve(appConfigurationPolicies, materials: secretMaterials, groupIds: directory.groupIds(ofUser: userId), clientId: clientId)
    }

    /// The merged app protection policy for an account in a client application (`nil`: unmanaged there).
    public func appProtectionPolicy(userId: String, clientId: String) -> MergedAppProtectionPolicy? {
        MergedAppProtectionPolicy.resolve(appProtectionPolicies, userId: userId, groupIds: directory.groupIds(ofUser: userId), clientId: clientId)
    }

    /// Whether any app protection policy targets the client application at all.
    public func appProtectionTargets(clientId: String) -> Bool {
        appProtectionPolicies.contains { $0.targets.applications.contains(clientId.lowercased()) }
    }

    public var tenant: Tenant { directory.tenant }
    public var revision: Int64 { directory.revision }
}
