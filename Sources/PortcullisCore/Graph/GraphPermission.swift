import Foundation

/// Microsoft Graph's permission names (PROTOCOL §20): the Graph resource's app roles (application permissions) and
/// delegated scopes. A `ReadWrite` permission also reads; `Directory.Read.All` reads the directory's objects and
/// `Directory.ReadWrite.All` writes users, groups and role assignments, as in Graph.
public enum GraphPermission {
    /// What a part of the Graph API needs: any one of `read` (or of `write`) to read it, any one of `write` to change it.
    public struct Requirement: Sendable, Equatable {
        public let read: [String]
        public let write: [String]

        public init(read: [String], write: [String]) {
            self.read = read
            self.write = write
        }

        public func allows(_ held: Set<String>, writing: Bool) -> Bool {
            (writing ? write : read + write).contains(where: held.contains)
        }

        /// The permissions Graph names when refusing.
        public func needed(writing: Bool) -> String { (writing ? write : read + write).joined(separator: ", ") }
    }

    public static let conditionalAccess = Requirement(
        read: ["Policy.Read.All", "Policy.Read.ConditionalAccess"], write: ["Policy.ReadWrite.ConditionalAccess"])
    public static let authenticationStrengths = Requirement(
        read: ["Policy.Read.All", "Policy.Read.AuthenticationMethod"],
        write: ["Policy.ReadWrite.ConditionalAccess", "Policy.ReadWrite.AuthenticationMethod"])
    public static let users = Requirement(
        read: ["User.Read.All", "User.ReadBasic.All", "Directory.Read.All"], write: ["User.ReadWrite.All", "Directory.ReadWrite.All"])
    public static let groups = Requirement(
        read: ["Group.Read.All", "GroupMember.Read.All", "Directory.Read.All"],
        write: ["Group.ReadWrite.All", "GroupMember.ReadWrite.All", "Directory.ReadWrite.All"])
    public static let applications = Requirement(
        read: ["Application.Read.All", "Directory.Read.All"], write: ["Application.ReadWrite.All", "Directory.ReadWrite.All"])
    public static let roles = Requirement(
        read: ["RoleManagement.Read.Directory", "RoleManagement.Read.All", "Directory.Read.All"],
        write: ["RoleManagement.ReadWrite.Directory", "Directory.ReadWrite.All"])
    public static let organization = Requirement(
        read: ["Organization.Read.All", "Directory.Read.All", "Domain.Read.All", "User.Read.All"],
        write: ["Organization.ReadWrite.All", "Directory.ReadWrite.All"])
    public static let agreements = Requirement(read: ["Agreement.Read.All"], write: ["Agreement.ReadWrite.All"])
    public static let invitations = Requirement(read: [], write: ["User.Invite.All", "User.ReadWrite.All", "Directory.ReadWrite.All"])
    public static let authenticationMethods = Requirement(
        read: ["UserAuthenticationMethod.Read.All"], write: ["UserAuthenticationMethod.ReadWrite.All"])
    public static let sessions = Requirement(read: [], write: ["User.RevokeSessions.All", "User.ReadWrite.All", "Directory.ReadWrite.All"])
    public static let appManagement = Requirement(
        read: ["DeviceManagementApps.Read.All"], write: ["DeviceManagementApps.ReadWrite.All"])
    public static let riskyUsers = Requirement(read: ["IdentityRiskyUser.Read.All"], write: ["IdentityRiskyUser.ReadWrite.All"])
    public static let riskEvents = Requirement(read: ["IdentityRiskEvent.Read.All"], write: ["IdentityRiskEvent.ReadWrite.All"])
    public static let riskyServicePrincipals = Requirement(
        read: ["IdentityRiskyServicePrincipal.Read.All"], write: ["IdentityRiskyServicePrincipal.ReadWrite.All"])
    public static let devices = Requirement(read: ["Device.Read.All", "Directory.Read.All"], write: ["Device.ReadWrite.All", "Directory.ReadWrite.All"])
    /// Intune's device compliance policies (`deviceManagement/deviceCompliancePolicies`).
    public static let deviceConfiguration = Requirement(
        read: ["DeviceManagementConfiguration.Read.All"], write: ["DeviceManagementConfiguration.ReadWrite.All"])

    /// Every permission name, sorted: the Graph resource's app roles and scopes.
    public static let all: [String] = {
        let requirements = [
            conditionalAccess, authenticationStrengths, users, groups, applications, roles, organization, agreements, invitations,
            authenticationMethods, sessions, appManagement, riskyUsers, riskEvents, riskyServicePrincipals, devices, deviceConfiguration,
        ]
        return Set(requirements.flatMap { $0.read + $0.write }).sorted()
    }()
}
