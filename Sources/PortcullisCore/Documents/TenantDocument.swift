public import Foundation

/// A document a tenant holds (PROTOCOL §7, §11): its directory objects and its policies. One protocol for every kind,
/// so that storing, caching, auditing and serving a kind is written once: a new kind is a type that conforms and a
/// registration (the admin API's path, how it is validated and shown).
///
/// A document is stored as its `Codable` encoding, read back into the same type, compared by value ("no change"
/// means equal values, not equal bytes), and applied to its tenant's snapshot by `apply(_:id:to:)` — which is how
/// the tenant cache follows one document's change without rebuilding the tenant or anyone else.
public protocol TenantDocument: Codable, Sendable, Equatable {
    /// How the store names the kind.
    static var kind: DocumentKind { get }
    /// The JSON member that names a document (`id`; `appId` for applications).
    static var idMember: String { get }
    /// The document's ID, as stored and addressed (lower-case where IDs are case-insensitive).
    var documentId: String { get }
    /// Where a tenant's documents of this kind are kept, sorted by ID (`nil` for the tenant document itself).
    static var list: WritableKeyPath<TenantContents, [Self]>? { get }
    /// Puts `document` into the tenant's contents under `id` — or, when `nil`, removes the one with that `id`.
    static func apply(_ document: Self?, id: String, to contents: inout TenantContents)
    /// What a change of a document of this kind ends and announces (PROTOCOL §14.1), committed with it: `before` `nil` for
    /// a create, `after` `nil` for a delete. Most kinds: nothing.
    static func effects(before: Self?, after: Self?, tenantId: TenantID, at: Date) -> ChangeEffects
}

extension TenantDocument {
    public static var idMember: String { "id" }

    public static func effects(before: Self?, after: Self?, tenantId: TenantID, at: Date) -> ChangeEffects { .none(tenantId: tenantId, at: at) }

    public static func apply(_ document: Self?, id: String, to contents: inout TenantContents) {
        guard let list else { return }
        TenantContents.upsert(document, id: id, in: &contents[keyPath: list])
    }
}

/// A tenant's documents by kind, each list sorted by document ID: what a `TenantSnapshot` is built from (its directory
/// shares these arrays, copy-on-write, rather than holding copies) and what one change edits.
public struct TenantContents: Sendable {
    public var tenant: Tenant
    public var users: [User] = []
    public var groups: [Group] = []
    public var applications: [Application] = []
    public var roleAssignments: [RoleAssignmentDocument] = []
    public var directoryRoleAssignments: [DirectoryRoleAssignment] = []
    public var namedLocations: [NamedLocation] = []
    public var conditionalAccessPolicies: [ConditionalAccessPolicy] = []
    public var appProtectionPolicies: [AppProtectionPolicy] = []
    public var appConfigurationPolicies: [AppConfigurationPolicy] = []
    public var secretMaterials: [StoredSecretMaterial] = []
    /// Custom authentication strengths (the built-in ones are not stored).
    public var authenticationStrengths: [AuthenticationStrengthPolicy] = []
    /// Authentication contexts (`c1`…`c99`).
    public var authenticationContexts: [AuthenticationContextClassReference] = []
    public var sharedSignalsStreams: [SharedSignalsStream] = []
    /// Roots trusted for passkey attestation (PROTOCOL §12.1).
    public var attestationRoots: [FidoAttestationRoot] = []
    /// Terms of use (PROTOCOL §17) and each user's latest answer to each.
    public var agreements: [Agreement] = []
    public var agreementAcceptances: [AgreementAcceptance] = []
    /// B2B collaboration (PROTOCOL §17): invitations made, and trust in partner tenants.
    public var invitations: [Invitation] = []
    public var crossTenantAccessPartners: [CrossTenantAccessPartner] = []
    /// Devices (PROTOCOL §18).
    public var devices: [Device] = []
    public var deviceCompliancePolicies: [DeviceCompliancePolicy] = []
    /// Users' risk (PROTOCOL §19).
    public var riskyUsers: [RiskyUser] = []
    public var riskyServicePrincipals: [RiskyServicePrincipal] = []
    /// Shared Signals transmitters whose SETs the tenant receives (PROTOCOL §19).
    public var sharedSignalsTransmitters: [SharedSignalsTransmitter] = []

    public init(tenant: Tenant) {
        self.tenant = tenant
    }

    /// Every list sorted by document ID (a store may list them in its own collation's order).
    public mutating func sort() {
        Self.sort(&users)
        Self.sort(&groups)
        Self.sort(&applications)
        Self.sort(&roleAssignments)
        Self.sort(&directoryRoleAssignments)
        Self.sort(&namedLocations)
        Self.sort(&conditionalAccessPolicies)
        Self.sort(&appProtectionPolicies)
        Self.sort(&appConfigurationPolicies)
        Self.sort(&secretMaterials)
        Self.sort(&authenticationStrengths)
        Self.sort(&authenticationContexts)
        Self.sort(&sharedSignalsStreams)
        Self.sort(&attestationRoots)
        Self.sort(&agreements)
        Self.sort(&agreementAcceptances)
        Self.sort(&invitations)
        Self.sort(&crossTenantAccessPartners)
        Self.sort(&devices)
        Self.sort(&deviceCompliancePolicies)
        Self.sort(&riskyUsers)
        Self.sort(&riskyServicePrincipals)
        Self.sort(&sharedSignalsTransmitters)
    }

    public static func sort<Document: TenantDocument>(_ documents: inout [Document]) {
        var sorted = true
        for index in documents.indices.dropFirst() where documents[index - 1].documentId >= documents[index].documentId {
            sorted = false
            break
        }
        if !sorted { documents.sort { $0.documentId < $1.documentId } }
    }

    /// Where `id` stands, or would stand, in a list sorted by ID, and whether it is there.
    public static func position<Document: TenantDocument>(of id: String, in documents: [Document]) -> (index: Int, found: Bool) {
        var low = 0
        var high = documents.count
        while low < high {
            let middle = (low + high) / 2
            if documents[middle].documentId < id { low = middle + 1 } else { high = middle }
        }
        return (low, low < documents.count && documents[low].documentId == id)
    }

    /// Puts `document` under `id` into a list sorted by ID (replacing the one there), or removes it (`nil`).
    public static func upsert<Document: TenantDocument>(_ document: Document?, id: String, in documents: inout [Document]) {
        let (low, found) = position(of: id, in: documents)
        switch (document, found) {
        case (let document?, true): documents[low] = document
        case (let document?, false): documents.insert(document, at: low)
        case (nil, true): documents.remove(at: low)
        case (nil, false): break
        }
    }
}

/// An app role assignment as it is stored and addressed: under the GUID that follows from what it grants
/// (`AppRoleAssignment.documentId`), so one grant cannot be stored twice however its resource is spelled.
public struct RoleAssignmentDocument: Codable, Sendable, Equatable {
    public var id: String
    public var principalId: PrincipalID
    public var resource: String
    public var role: String

    public init(_ assignment: AppRoleAssignment, in directory: DirectorySnapshot) {
        self.id = directory.documentId(of: assignment)
        self.principalId = assignment.principalId
        self.resource = assignment.resource
        self.role = assignment.role
    }

    public var assignment: AppRoleAssignment { AppRoleAssignment(principalId: principalId, resource: resource, role: role) }

    enum CodingKeys: String, CodingKey { case id, principalId, resource, role }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        principalId = try container.decode(PrincipalID.self, forKey: .principalId)
        resource = try container.decode(String.self, forKey: .resource)
        role = try container.decode(String.self, forKey: .role)
        // Stores from before assignments had GUIDs keep theirs as the document ID (rekeyed at start-up).
        id = try container.decodeIfPresent(String.self, forKey: .id) ?? ""
    }
}

extension Tenant: TenantDocument {
    public static let kind = DocumentKind.tenant
    public var documentId: String { id.rawValue }
    public static var list: WritableKeyPath<TenantContents, [Tenant]>? { nil }
    public static func apply(_ document: Tenant?, id: String, to contents: inout TenantContents) {
        if let document { contents.tenant = document }  // a tenant is never removed through its own documents
    }
}

extension User: TenantDocument {
    public static let kind = DocumentKind.user
    public var documentId: String { id.rawValue }
    public static var list: WritableKeyPath<TenantContents, [User]>? { \.users }
}

extension Group: TenantDocument {
    public static let kind = DocumentKind.group
    public var documentId: String { id.rawValue }
    public static var list: WritableKeyPath<TenantContents, [Group]>? { \.groups }
}

extension Application: TenantDocument {
    public static let kind = DocumentKind.application
    public static var idMember: String { "appId" }
    public var documentId: String { appId.rawValue }
    public static var list: WritableKeyPath<TenantContents, [Application]>? { \.applications }
}

extension DirectoryRoleAssignment: TenantDocument {
    public static let kind = DocumentKind.directoryRoleAssignment
    public var documentId: String { id }
    public static var list: WritableKeyPath<TenantContents, [DirectoryRoleAssignment]>? { \.directoryRoleAssignments }
}

extension RoleAssignmentDocument: TenantDocument {
    public static let kind = DocumentKind.appRoleAssignment
    public var documentId: String { id }
    public static var list: WritableKeyPath<TenantContents, [RoleAssignmentDocument]>? { \.roleAssignments }
    public static func apply(_ document: RoleAssignmentDocument?, id: String, to contents: inout TenantContents) {
        // Stores from before assignments had GUIDs: the document's ID is where it is stored.
        let stored = document.map { stored in
            var stored = stored
            stored.id = id
            return stored
        }
        TenantContents.upsert(stored, id: id, in: &contents.roleAssignments)
    }
}

extension NamedLocation: TenantDocument {
    public static let kind = DocumentKind.namedLocation
    public var documentId: String { id.rawValue }
    public static var list: WritableKeyPath<TenantContents, [NamedLocation]>? { \.namedLocations }
}

extension ConditionalAccessPolicy: TenantDocument {
    public static let kind = DocumentKind.conditionalAccessPolicy
    public var documentId: String { id.rawValue }
    public static var list: WritableKeyPath<TenantContents, [ConditionalAccessPolicy]>? { \.conditionalAccessPolicies }
}

extension AppProtectionPolicy: TenantDocument {
    public static let kind = DocumentKind.appProtectionPolicy
    public var documentId: String { id.rawValue }
    public static var list: WritableKeyPath<TenantContents, [AppProtectionPolicy]>? { \.appProtectionPolicies }
}

extension AppConfigurationPolicy: TenantDocument {
    public static let kind = DocumentKind.appConfigurationPolicy
    public var documentId: String { id.rawValue }
    public static var list: WritableKeyPath<TenantContents, [AppConfigurationPolicy]>? { \.appConfigurationPolicies }
}

extension StoredSecretMaterial: TenantDocument {
    public static let kind = DocumentKind.appSecretMaterial
    public static var list: WritableKeyPath<TenantContents, [StoredSecretMaterial]>? { \.secretMaterials }
}

extension AuthenticationStrengthPolicy: TenantDocument {
    public static let kind = DocumentKind.authenticationStrength
    public var documentId: String { id.rawValue }
    public static var list: WritableKeyPath<TenantContents, [AuthenticationStrengthPolicy]>? { \.authenticationStrengths }
}

extension AuthenticationContextClassReference: TenantDocument {
    public static let kind = DocumentKind.authenticationContextClassReference
    public var documentId: String { id }
    public static var list: WritableKeyPath<TenantContents, [AuthenticationContextClassReference]>? { \.authenticationContexts }
}

extension FidoAttestationRoot: TenantDocument {
    public static let kind = DocumentKind.fidoAttestationRoot
    public var documentId: String { id }
    public static var list: WritableKeyPath<TenantContents, [FidoAttestationRoot]>? { \.attestationRoots }
}

extension SharedSignalsStream: TenantDocument {
    public static let kind = DocumentKind.sharedSignalsStream
    public var documentId: String { id.rawValue }
    public static var list: WritableKeyPath<TenantContents, [SharedSignalsStream]>? { \.sharedSignalsStreams }
}

extension Agreement: TenantDocument {
    public static let kind = DocumentKind.agreement
    public var documentId: String { id.rawValue }
    public static var list: WritableKeyPath<TenantContents, [Agreement]>? { \.agreements }
}

extension Invitation: TenantDocument {
    public static let kind = DocumentKind.invitation
    public var documentId: String { id.rawValue }
    public static var list: WritableKeyPath<TenantContents, [Invitation]>? { \.invitations }
}

extension CrossTenantAccessPartner: TenantDocument {
    public static let kind = DocumentKind.crossTenantAccessPartner
    public static var idMember: String { "tenantId" }
    public var documentId: String { tenantId.rawValue }
    public static var list: WritableKeyPath<TenantContents, [CrossTenantAccessPartner]>? { \.crossTenantAccessPartners }
}

extension SharedSignalsTransmitter: TenantDocument {
    public static let kind = DocumentKind.sharedSignalsTransmitter
    public var documentId: String { id.rawValue }
    public static var list: WritableKeyPath<TenantContents, [SharedSignalsTransmitter]>? { \.sharedSignalsTransmitters }
}

extension AgreementAcceptance: TenantDocument {
    public static let kind = DocumentKind.agreementAcceptance
    public var documentId: String { id }
    public static var list: WritableKeyPath<TenantContents, [AgreementAcceptance]>? { \.agreementAcceptances }
}

/// Every kind of tenant document, for reading a stored one back into its type by its kind name.
public enum TenantDocuments {
    /// How every tenant document is stored, by every writer (the admin API, the seeder, the bench's dataset): sorted
    /// keys, dates as the types encode them (the default strategy; types shown to people write ISO 8601 themselves).
    public static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// How every stored tenant document is read back (the tenant cache, the admin API's reads).
    public static let decoder = JSONDecoder()

    public static let all: [any TenantDocument.Type] = [
        Tenant.self, User.self, Group.self, Application.self, RoleAssignmentDocument.self, DirectoryRoleAssignment.self, NamedLocation.self,
        ConditionalAccessPolicy.self, AppProtectionPolicy.self, AppConfigurationPolicy.self, StoredSecretMaterial.self,
        AuthenticationStrengthPolicy.self, AuthenticationContextClassReference.self, SharedSignalsStream.self, FidoAttestationRoot.self,
        Agreement.self, AgreementAcceptance.self, Invitation.self, CrossTenantAccessPartner.self, Device.self, DeviceCompliancePolicy.self,
        RiskyUser.self, RiskyServicePrincipal.self, SharedSignalsTransmitter.self,
    ]

    public static let byKind: [DocumentKind: any TenantDocument.Type] = Dictionary(uniqueKeysWithValues: all.map { ($0.kind, $0) })
}
