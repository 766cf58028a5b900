/// Everything the token path needs about one tenant, immutable and shared until the tenant changes: its
/// directory, its compiled conditional-access policies, and its app protection and app configuration policies.
public struct TenantSnapshot: Sendable {
    public let directory: DirectorySnapshot
    public let conditionalAccess: CompiledPolicySet
    public let appProtectionPolicies: [AppProtectionPolicy]
    public let appConfigurationPolicies: [AppConfigurationPolicy]
    /// Secret material (sealed at rest), by `StoredSecretMaterial.documentId`.
    public let secretMaterials: [String: StoredSecretMaterial]

    public init(directory: DirectorySnapshot, conditionalAccess: CompiledPolicySet, appProtectionPolicies: [AppProtectionPolicy] = [],
                appConfigurationPolicies: [AppConfigurationPolicy] = [], secretMaterials: [StoredSecretMaterial] = []) {
        self.directory = directory
        self.conditionalAccess = conditionalAccess
        self.appProtectionPolicies = appProtectionPolicies
        self.appConfigurationPolicies = appConfigurationPolicies
        self.secretMaterials = Dictionary(secretMaterials.map { ($0.documentId, $0) }, uniquingKeysWith: { first, _ in first })
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
}
