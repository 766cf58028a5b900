/// What a directory role lets its holder do through the admin API (PROTOCOL §17), as Entra's built-in roles do: the
/// app role `Portcullis.Admin` and Global Administrator may do everything; every other administrative role reads
/// the tenant (never secret values) and writes its own area. A pure table, asked of every request of a user who
/// holds no `Portcullis.Admin`.
public enum AdminAuthorization {
    /// The areas of the admin API, by what they manage.
    public enum Area: String, Sendable, CaseIterable {
        /// Conditional-access policies, named locations, authentication strengths and contexts, agreements (terms of use).
        case conditionalAccess
        /// What-if and impact: questions that change nothing (POST, but reads).
        case policyQuestions
        /// The authentication methods policy (passkey attestation roots).
        case authenticationPolicy
        /// Users and groups, and ending a user's sessions.
        case usersAndGroups
        /// A user's sign-in methods (temporary access passes, removal, suspicion).
        case authenticationMethods
        /// Users' risk (PROTOCOL §19): confirming compromise, dismissing, reporting detections.
        case risk
        /// Applications and their secrets.
        case applications
        /// App role and directory role assignments (who may do what).
        case roleAssignments
        /// The role definitions (read-only).
        case roleDefinitions
        /// The tenant document.
        case tenant
        /// App protection and configuration policies, enrollments, wipes, the callback outbox.
        case appManagement
        /// Managed configuration's secret values.
        case appSecrets
        /// Sign-in and audit logs (read-only).
        case logs
        /// Shared Signals streams.
        case signals
        /// Inviting users of other tenants (B2B collaboration, PROTOCOL §17).
        case invitations
        /// Cross-tenant access settings: trust in partner tenants.
        case crossTenantAccess
    }

    /// The area of a path under `/admin/v1/` (`nil`: no area; refused to everyone but full administrators).
    public static func area(ofPath path: String) -> Area? {
        let segments = path.split(separator: "/").map(String.init)
        guard let first = segments.first else { return nil }
        switch first {
        case "conditional-access":
            // What-if and impact only ask; policies and templates (creating a policy from one) are the policies' area.
            guard segments.count > 1 else { return nil }
            return segments[1] == "evaluate" || segments[1] == "impact" ? .policyQuestions : .conditionalAccess
        case "named-locations", "authentication-strengths", "authentication-context-class-references": return .conditionalAccess
        case "agreements": return segments.count > 2 && segments[2] == "acceptances" ? .logs : .conditionalAccess
        case "authentication-methods-policy": return .authenticationPolicy
        case "users":
            if segments.count > 2 {
                switch segments[2] {
                case "authentication-methods": return .authenticationMethods
                case "confirmCompromised": return .risk
                default: return .usersAndGroups
                }
            }
            return .usersAndGroups
        case "groups": return .usersAndGroups
        case "applications": return .applications
        case "app-role-assignments": return .roleAssignments
        case "role-management":
            return segments.count > 2 && segments[2] == "role-definitions" ? .roleDefinitions : .roleAssignments
        case "tenant": return .tenant
        case "app-protection", "enrollments", "outbox": return .appManagement
        case "app-configuration": return segments.count > 3 && segments[3] == "secrets" ? .appSecrets : .appManagement
        case "sign-ins", "audit": return .logs
        case "ssf-streams", "ssf-transmitters": return .signals
        case "identityProtection": return .risk
        case "invitations": return .invitations
        case "cross-tenant-access": return .crossTenantAccess
        default: return nil
        }
    }

    /// The areas each role writes; holding any of these roles lets a user read every area but `appSecrets`.
    public static let writes: [RoleID: Set<Area>] = [
        DirectoryRoleDefinition.globalAdministrator: Set(Area.allCases),
        DirectoryRoleDefinition.conditionalAccessAdministrator: [.conditionalAccess],
        DirectoryRoleDefinition.securityAdministrator: [.conditionalAccess, .authenticationPolicy, .risk, .signals, .crossTenantAccess],
        DirectoryRoleDefinition.securityReader: [],
        DirectoryRoleDefinition.globalReader: [],
        DirectoryRoleDefinition.userAdministrator: [.usersAndGroups, .invitations],
        "95e79109-95c0-4d8e-aee3-d01accf2d47b": [.invitations],  // Guest Inviter
        DirectoryRoleDefinition.applicationAdministrator: [.applications],
        "158c047a-c907-4556-b7ef-446551a6b5f7": [.applications],  // Cloud Application Administrator
        "e8611ab8-c189-46e8-94e1-60213ab1f814": [.roleAssignments],  // Privileged Role Administrator
        "c4e39bd9-1100-46d3-8c65-fb160da0071f": [.authenticationMethods],  // Authentication Administrator
        "7be44c8a-adaf-4e2a-84d6-ab2649e08a13": [.authenticationMethods],  // Privileged Authentication Administrator
        "0526716b-113d-4c15-b2c8-68e3c22b9f80": [.authenticationPolicy],  // Authentication Policy Administrator
        "3a2c62db-5318-420d-8d74-23affee5d9d5": [.appManagement, .appSecrets],  // Intune Administrator
        "4a5d8f65-41da-4de4-8968-e035b65339cf": [],  // Reports Reader
    ]

    /// Whether a user holding `roles` (template IDs) may make this request (`method`, the path under `/admin/v1/`).
    /// Reads are GET and HEAD, and the policy questions; a Reports Reader reads only the logs.
    public static func allows(roles: [RoleID], method: String, path: String) -> Bool {
        let held = roles.compactMap { writes[$0] }
        guard !held.isEmpty, let area = area(ofPath: path) else { return false }
        if roles.contains(DirectoryRoleDefinition.globalAdministrator) { return true }
        let reading = method == "GET" || method == "HEAD" || area == .policyQuestions
        if held.contains(where: { $0.contains(area) }) { return true }
        guard reading, area != .appSecrets else { return false }
        let onlyReports = roles.allSatisfy { $0 == "4a5d8f65-41da-4de4-8968-e035b65339cf" || writes[$0] == nil }
        return onlyReports ? area == .logs : true
    }

    /// Whether the roles give any access to the admin API at all.
    public static func isAdministrative(_ roles: [RoleID]) -> Bool { roles.contains { writes[$0] != nil } }
}
