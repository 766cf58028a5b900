/// Everything the token path needs about one tenant, immutable and shared until the tenant changes: its
/// directory and its compiled conditional-access policies.
public struct TenantSnapshot: Sendable {
    public let directory: DirectorySnapshot
    public let conditionalAccess: CompiledPolicySet

    public init(directory: DirectorySnapshot, conditionalAccess: CompiledPolicySet) {
        self.directory = directory
        self.conditionalAccess = conditionalAccess
    }

    public var tenant: Tenant { directory.tenant }
}
