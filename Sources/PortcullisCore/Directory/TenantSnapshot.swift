public import Foundation

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
    public let secretMaterials: [String: StoredSecretMaterial]

    /// A snapshot of `contents` (its lists sorted by ID), built whole.
    public init(contents: TenantContents, revision: Int64) {
        let directory = Self.directory(contents, revision: revision)
        self.init(contents: contents, directory: directory, conditionalAccess: Self.conditionalAccess(contents, directory: directory))
    }

    private init(contents: TenantContents, directory: DirectorySnapshot, conditionalAccess: CompiledPolicySet) {
        self.contents = contents
        self.directory = directory
        self.conditionalAccess = conditionalAccess
        self.appProtectionPolicies = contents.appProtectionPolicies
        self.appConfigurationPolicies = contents.appConfigurationPolicies
        self.secretMaterials = Dictionary(contents.secretMaterials.map { ($0.documentId, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// A snapshot assembled from parts (tests and benchmarks that describe a tenant directly).
    public init(
        directory: DirectorySnapshot, conditionalAccess: CompiledPolicySet, appProtectionPolicies: [AppProtectionPolicy] = [],
        appConfigurationPolicies: [AppConfigurationPolicy] = [], secretMaterials: [StoredSecretMaterial] = []
    ) {
        var contents = TenantContents(tenant: directory.tenant)
        contents.users = directory.users
        contents.groups = directory.groups
        contents.applications = directory.applications
        contents.roleAssignments = directory.appRoleAssignments.map { RoleAssignmentDocument($0, in: directory) }
        contents.directoryRoleAssignments = directory.directoryRoleAssignments
        contents.namedLocations = directory.namedLocations
        contents.conditionalAccessPolicies = conditionalAccess.policies
        contents.appProtectionPolicies = appProtectionPolicies
        contents.appConfigurationPolicies = appConfigurationPolicies
        contents.secretMaterials = secretMaterials
        contents.authenticationStrengths = conditionalAccess.customStrengths
        contents.authenticationContexts = conditionalAccess.authenticationContexts
        contents.sort()
        self.init(contents: contents, directory: directory, conditionalAccess: conditionalAccess)
    }

    /// This tenant with one document put (or, `nil`, removed) under `id`, at `revision`. Rebuilds only what depends
    /// on the document's kind: the directory for directory objects (and the policy set when a named location
    /// changed, whose ranges it holds), the compiled policy set for a conditional-access policy, nothing else for
    /// the other kinds.
    public func applying<Document: TenantDocument>(_ document: Document?, id: String, revision: Int64) -> TenantSnapshot {
        var contents = self.contents
        Document.apply(document, id: id, to: &contents)
        switch Document.kind {
        case .conditionalAccessPolicy, .authenticationStrength, .authenticationContextClassReference:
            return TenantSnapshot(
                contents: contents, directory: directory.at(revision: revision), conditionalAccess: Self.conditionalAccess(contents, directory: directory))
        case .appProtectionPolicy, .appConfigurationPolicy, .appSecretMaterial, .sharedSignalsStream, .fidoAttestationRoot, .agreement, .agreementAcceptance,
            .invitation, .crossTenantAccessPartner, .device, .deviceCompliancePolicy, .riskyUser,
            .riskyServicePrincipal:
            return TenantSnapshot(contents: contents, directory: directory.at(revision: revision), conditionalAccess: conditionalAccess)
        case .namedLocation:
            let directory = Self.directory(contents, revision: revision)
            return TenantSnapshot(contents: contents, directory: directory, conditionalAccess: Self.conditionalAccess(contents, directory: directory))
        default:
            return TenantSnapshot(contents: contents, directory: Self.directory(contents, revision: revision), conditionalAccess: conditionalAccess)
        }
    }

    static func directory(_ contents: TenantContents, revision: Int64) -> DirectorySnapshot {
        DirectorySnapshot(
            tenant: contents.tenant, revision: revision, users: contents.users, groups: contents.groups, applications: contents.applications,
            appRoleAssignments: contents.roleAssignments.map(\.assignment), namedLocations: contents.namedLocations,
            directoryRoleAssignments: contents.directoryRoleAssignments)
    }

    static func conditionalAccess(_ contents: TenantContents, directory: DirectorySnapshot) -> CompiledPolicySet {
        CompiledPolicySet(
            policies: contents.conditionalAccessPolicies, namedLocations: directory.namedLocations, strengths: contents.authenticationStrengths,
            contexts: contents.authenticationContexts)
    }

    /// `policies` (drafts, for what-if and impact) compiled against this tenant's named locations, strengths and contexts.
    public func compile(_ policies: [ConditionalAccessPolicy]) -> CompiledPolicySet {
        CompiledPolicySet(
            policies: policies, namedLocations: directory.namedLocations, strengths: contents.authenticationStrengths,
            contexts: contents.authenticationContexts)
    }

    /// The merged app configuration for an account in a client application (PROTOCOL §8.1).
    public func appConfiguration(userId: ObjectID, clientId: AppID) -> MergedAppConfiguration {
        MergedAppConfiguration.resolve(appConfigurationPolicies, materials: secretMaterials, groupIds: directory.groupIds(ofUser: userId), clientId: clientId)
    }

    /// The merged app protection policy for an account in a client application (`nil`: unmanaged there).
    public func appProtectionPolicy(userId: ObjectID, clientId: AppID) -> MergedAppProtectionPolicy? {
        MergedAppProtectionPolicy.resolve(appProtectionPolicies, userId: userId, groupIds: directory.groupIds(ofUser: userId), clientId: clientId)
    }

    /// Whether any app protection policy targets the client application at all.
    public func appProtectionTargets(clientId: AppID) -> Bool {
        appProtectionPolicies.contains { $0.targets.applications.contains(clientId) }
    }

    /// The strength with this ID: built-in or one of the tenant's.
    public func authenticationStrength(id: PolicyID) -> AuthenticationStrengthPolicy? {
        AuthenticationStrengthPolicy.builtIns.first { $0.id == id } ?? contents.authenticationStrengths.first { $0.id == id }
    }

    /// The agreements among those the policies require whose acceptance by `userId` is current at `now` (PROTOCOL §17).
    public func acceptedAgreements(userId: ObjectID?, now: Date) -> Set<PolicyID> {
        guard let userId, !conditionalAccess.termsOfUseAgreements.isEmpty else { return [] }
        var accepted = Set<PolicyID>()
        for agreementId in conditionalAccess.termsOfUseAgreements {
            guard let agreement = agreement(id: agreementId), let acceptance = acceptance(agreementId: agreementId, userId: userId),
                agreement.isCurrent(acceptance, at: now)
            else { continue }
            accepted.insert(agreementId)
        }
        return accepted
    }

    /// This tenant's trust in a partner tenant's authentication (`nil`: none, Entra's default).
    public func crossTenantAccess(partner tenantId: TenantID) -> CrossTenantAccessPartner? {
        Self.find(tenantId.rawValue, in: contents.crossTenantAccessPartners)
    }

    /// An agreement by ID.
    public func agreement(id: PolicyID) -> Agreement? { Self.find(id.rawValue, in: contents.agreements) }

    /// A device by its object ID.
    public func device(id: ObjectID) -> Device? { Self.find(id.rawValue, in: contents.devices) }

    /// A device by its device ID (its certificate's subject).
    public func device(deviceId: DeviceID) -> Device? { contents.devices.first { $0.deviceId == deviceId } }

    /// A user's risk as kept (PROTOCOL §19), `nil` for a user never seen by the risk engine.
    public func riskyUser(id: ObjectID) -> RiskyUser? { Self.find(id.rawValue, in: contents.riskyUsers) }

    /// A user's latest answer to an agreement.
    public func acceptance(agreementId: PolicyID, userId: ObjectID) -> AgreementAcceptance? {
        Self.find(AgreementAcceptance.id(agreementId: agreementId, userId: userId), in: contents.agreementAcceptances)
    }

    /// A document by ID in a list sorted by ID.
    static func find<Document: TenantDocument>(_ id: String, in documents: [Document]) -> Document? {
        let (index, found) = TenantContents.position(of: id, in: documents)
        return found ? documents[index] : nil
    }

    public var tenant: Tenant { directory.tenant }
    public var revision: Int64 { directory.revision }
}
