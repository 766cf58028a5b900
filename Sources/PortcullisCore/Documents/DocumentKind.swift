/// The kinds of JSON documents a tenant holds: its directory and its policies.
public struct DocumentKind: RawRepresentable, Sendable, Hashable, Codable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let tenant = DocumentKind(rawValue: "tenant")
    public static let user = DocumentKind(rawValue: "user")
    public static let group = DocumentKind(rawValue: "group")
    public static let application = DocumentKind(rawValue: "application")
    public static let appRoleAssignment = DocumentKind(rawValue: "appRoleAssignment")
    /// A directory role held by a user or group (Graph `unifiedRoleAssignment`, PROTOCOL §17).
    public static let directoryRoleAssignment = DocumentKind(rawValue: "directoryRoleAssignment")
    public static let namedLocation = DocumentKind(rawValue: "namedLocation")
    public static let conditionalAccessPolicy = DocumentKind(rawValue: "conditionalAccessPolicy")
    public static let appProtectionPolicy = DocumentKind(rawValue: "appProtectionPolicy")
    public static let appConfigurationPolicy = DocumentKind(rawValue: "appConfigurationPolicy")
    /// A custom authentication strength (PROTOCOL §12.2).
    public static let authenticationStrength = DocumentKind(rawValue: "authenticationStrength")
    /// An authentication context, `c1`…`c99` (PROTOCOL §13).
    public static let authenticationContextClassReference = DocumentKind(rawValue: "authenticationContextClassReference")
    /// A declared secret's material, sealed at rest (`StoredSecretMaterial`), ID `{policyId}:{identifier}`.
    public static let appSecretMaterial = DocumentKind(rawValue: "appSecretMaterial")
    /// A root certificate trusted for passkey attestation (PROTOCOL §12.1).
    public static let fidoAttestationRoot = DocumentKind(rawValue: "fidoAttestationRoot")
    /// A receiver's Shared Signals stream (PROTOCOL §14.2).
    public static let sharedSignalsStream = DocumentKind(rawValue: "sharedSignalsStream")
    /// Terms of use (Graph `agreement`, PROTOCOL §17).
    public static let agreement = DocumentKind(rawValue: "agreement")
    /// A user's latest answer to an agreement (Graph `agreementAcceptance`), ID `{agreementId}_{userId}`.
    public static let agreementAcceptance = DocumentKind(rawValue: "agreementAcceptance")
    /// An invitation of another tenant's user (Graph `invitation`, PROTOCOL §17).
    public static let invitation = DocumentKind(rawValue: "invitation")
    /// Trust in a partner tenant's authentication (Graph `crossTenantAccessPolicyConfigurationPartner`), ID the partner's tenant ID.
    public static let crossTenantAccessPartner = DocumentKind(rawValue: "crossTenantAccessPartner")
    /// A device of the tenant (Graph `device`, PROTOCOL §18).
    public static let device = DocumentKind(rawValue: "device")
    /// A device compliance policy (Intune's `deviceCompliancePolicy`, PROTOCOL §18).
    public static let deviceCompliancePolicy = DocumentKind(rawValue: "deviceCompliancePolicy")
    /// A user's risk, detections, history and sign-in profile (Graph `riskyUser`, PROTOCOL §19), ID the user's object ID.
    public static let riskyUser = DocumentKind(rawValue: "riskyUser")
    /// A workload identity's risk (Graph `riskyServicePrincipal`, PROTOCOL §19), ID the application's app ID.
    public static let riskyServicePrincipal = DocumentKind(rawValue: "riskyServicePrincipal")
    /// A Shared Signals transmitter whose SETs the tenant receives (PROTOCOL §19).
    public static let sharedSignalsTransmitter = DocumentKind(rawValue: "sharedSignalsTransmitter")
}

extension DocumentKind {
    /// Where the admin API serves a kind (under `/admin/v1/`) and what people call one: the one table that the admin
    /// API's routes, the console's editor, `portcullis apply` and the OpenAPI test all read. Kinds without a path are
    /// not served as documents (sealed secrets, streams with their own routes).
    public static let registry: [DocumentKind: (path: String, noun: String)] = [
        .tenant: ("tenant", "tenant"),
        .user: ("users", "user"),
        .group: ("groups", "group"),
        .application: ("applications", "application"),
        .appRoleAssignment: ("app-role-assignments", "app role assignment"),
        .directoryRoleAssignment: ("role-management/directory/role-assignments", "directory role assignment"),
        .namedLocation: ("named-locations", "named location"),
        .conditionalAccessPolicy: ("conditional-access/policies", "conditional-access policy"),
        .appProtectionPolicy: ("app-protection/policies", "app protection policy"),
        .appConfigurationPolicy: ("app-configuration/policies", "app configuration policy"),
        .authenticationStrength: ("authentication-strengths", "authentication strength"),
        .authenticationContextClassReference: ("authentication-context-class-references", "authentication context"),
        .fidoAttestationRoot: ("authentication-methods-policy/fido2/attestation-roots", "attestation root"),
        .agreement: ("agreements", "agreement"),
        .invitation: ("invitations", "invitation"),
        .crossTenantAccessPartner: ("cross-tenant-access/partners", "cross-tenant access setting"),
        .sharedSignalsStream: ("ssf-streams", "stream"),
        .sharedSignalsTransmitter: ("ssf-transmitters", "transmitter"),
        .device: ("devices", "device"),
        .deviceCompliancePolicy: ("device-compliance/policies", "device compliance policy"),
    ]

    /// The kind's path under `/admin/v1/` (`nil`: not served as documents).
    public var adminPath: String? { Self.registry[self]?.path }

    /// What people call one document of the kind.
    public var noun: String { Self.registry[self]?.noun ?? rawValue }

    /// Identifiers unique across the whole installation, as GUIDs are in Entra (PROTOCOL §11): users and groups
    /// share the directory-object namespace, applications have theirs (`appId`). `nil`: unique within a tenant only.
    public var installationWideNamespace: String? {
        switch self {
        case .user, .group: "directoryObject"
        case .application: "application"
        default: nil
        }
    }

    /// The kinds that share an installation-wide namespace.
    public static let installationWideKinds: [DocumentKind] = [.user, .group, .application]

    /// The kinds of `namespace`.
    public static func kinds(inNamespace namespace: String) -> [DocumentKind] {
        installationWideKinds.filter { $0.installationWideNamespace == namespace }
    }
}
