import Foundation

/// An immutable, indexed view of one tenant's directory, built once per directory revision and shared by
/// every request until the directory changes. Lookups are case-insensitive where identities are.
public struct DirectorySnapshot: Sendable {
    public let tenant: Tenant
    public private(set) var revision: Int64
    public let users: [User]
    public let groups: [Group]
    public let applications: [Application]
    public let appRoleAssignments: [AppRoleAssignment]
    public let namedLocations: [NamedLocation]
    /// Directory roles held by users and groups (PROTOCOL §17).
    public let directoryRoleAssignments: [DirectoryRoleAssignment]

    // Keyed by typed identifiers (normalised once, in `Identifier`): a lookup in any case finds what a document in any case
    // named, whatever path the document came in by.
    private let usersById: [ObjectID: User]
    private let userIdByUPN: [String: ObjectID]
    /// B2B collaboration users by their home account's object ID (PROTOCOL §17).
    private let userIdByHomeUser: [ObjectID: ObjectID]
    private let groupsById: [ObjectID: Group]
    private let groupIdsByMember: [ObjectID: [ObjectID]]
    private let applicationsById: [AppID: Application]
    private let resourcesByIdentifier: [ResourceIdentifier: Application]
    private let rolesByPrincipalAndResource: [PrincipalResource: [String]]
    private let namedLocationsById: [PolicyID: NamedLocation]
    private let roleIdsByPrincipal: [ObjectID: [RoleID]]

    /// An app role grant's key: who (a user's object ID or a client's app ID) on which resource (its app ID).
    private struct PrincipalResource: Hashable {
        let principal: PrincipalID
        let resource: AppID
    }

    public init(
        tenant: Tenant, revision: Int64, users: [User], groups: [Group], applications: [Application],
        appRoleAssignments: [AppRoleAssignment], namedLocations: [NamedLocation], directoryRoleAssignments: [DirectoryRoleAssignment] = []
    ) {
        self.tenant = tenant
        self.revision = revision
        self.users = users
        self.groups = groups
        self.applications = applications
        self.appRoleAssignments = appRoleAssignments
        self.namedLocations = namedLocations

        var usersById: [ObjectID: User] = [:]
        var userIdByUPN: [String: ObjectID] = [:]
        var userIdByHomeUser: [ObjectID: ObjectID] = [:]
        for user in users {
            usersById[user.id] = user
            userIdByUPN[user.userPrincipalName.lowercased()] = user.id
            if let home = user.homeAccount { userIdByHomeUser[home.userId] = user.id }
        }
        self.usersById = usersById
        self.userIdByUPN = userIdByUPN
        self.userIdByHomeUser = userIdByHomeUser

        var groupsById: [ObjectID: Group] = [:]
        var groupIdsByMember: [ObjectID: [ObjectID]] = [:]
        for group in groups {
            groupsById[group.id] = group
            for member in group.members { groupIdsByMember[member, default: []].append(group.id) }
        }
        self.groupsById = groupsById
        self.groupIdsByMember = groupIdsByMember

        var applicationsById: [AppID: Application] = [:]
        for app in BuiltInResources.reserved + applications { applicationsById[app.appId] = app }
        let resources = Self.resourceIndex(BuiltInResources.reserved + applications)
        self.applicationsById = applicationsById
        self.resourcesByIdentifier = resources

        var roles: [PrincipalResource: [String]] = [:]
        for assignment in appRoleAssignments {
            guard let resource = resources[ResourceIdentifier(assignment.resource)] else { continue }
            roles[PrincipalResource(principal: assignment.principalId, resource: resource.appId), default: []].append(assignment.role)
        }
        self.rolesByPrincipalAndResource = roles
        self.namedLocationsById = Dictionary(namedLocations.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        self.directoryRoleAssignments = directoryRoleAssignments
        var roleIds: [ObjectID: [RoleID]] = [:]
        for assignment in directoryRoleAssignments { roleIds[assignment.principalId, default: []].append(assignment.roleDefinitionId) }
        self.roleIdsByPrincipal = roleIds
    }

    /// The directory roles a user holds, assigned to them or to a group they are a direct member of (as Entra's
    /// role-assignable groups), each once, sorted.
    public func roleIds(ofUser id: ObjectID) -> [RoleID] {
        // Every grant asks (SignInFacts); a tenant that assigns no directory role answers without allocating.
        guard !roleIdsByPrincipal.isEmpty else { return [] }
        var found = Set(roleIdsByPrincipal[id] ?? [])
        for group in groupIds(ofUser: id) { found.formUnion(roleIdsByPrincipal[group] ?? []) }
        return found.sorted()
    }

    /// The directory role assignments of a user or group.
    public func directoryRoleAssignments(ofPrincipal id: ObjectID) -> [DirectoryRoleAssignment] {
        directoryRoleAssignments.filter { $0.principalId == id }
    }

    /// Resources by app ID and by each identifier URI (the first application to claim one keeps it).
    public static func resourceIndex(_ applications: [Application]) -> [ResourceIdentifier: Application] {
        var resources: [ResourceIdentifier: Application] = [:]
        for app in applications where app.isResource {
            let id = ResourceIdentifier(app.appId)
            if resources[id] == nil { resources[id] = app }
            for uri in app.identifierUris {
                let key = ResourceIdentifier(uri)
                if resources[key] == nil { resources[key] = app }
            }
        }
        return resources
    }

    /// The same directory, as of a later revision of its tenant (a change elsewhere in the tenant).
    public func at(revision: Int64) -> DirectorySnapshot {
        var copy = self
        copy.revision = revision
        return copy
    }

    public func user(id: ObjectID) -> User? { usersById[id] }

    public func user(principalName: String) -> User? {
        userIdByUPN[principalName.lowercased()].flatMap { usersById[$0] }
    }

    /// The B2B collaboration user of this tenant whose home account is `homeUserId` (an object ID of another tenant).
    public func user(homeUserId: ObjectID) -> User? { userIdByHomeUser[homeUserId].flatMap { user(id: $0) } }

    /// A user by object ID or by UPN, case-insensitively: what a person or a request names a user by.
    public func user(identity: String) -> User? { user(id: ObjectID(identity)) ?? user(principalName: identity) }

    public func group(id: ObjectID) -> Group? { groupsById[id] }

    /// The IDs of the groups the user is a direct member of.
    public func groupIds(ofUser userId: ObjectID) -> [ObjectID] { groupIdsByMember[userId] ?? [] }

    public func application(appId: AppID) -> Application? { applicationsById[appId] }

    /// A resource by identifier URI or app ID, case-insensitively.
    public func resource(identifier: String) -> Application? { resourcesByIdentifier[ResourceIdentifier(identifier)] }

    /// The assignments of the admin API's role: who can administer the tenant (the last one is never removed
    /// unless forced).
    public var administratorAssignments: [AppRoleAssignment] {
        appRoleAssignments.filter { $0.role == BuiltInResources.adminRole && resource(identifier: $0.resource)?.appId == BuiltInResources.admin.appId }
    }

    /// The ID an app role assignment is stored under (`AppRoleAssignment.documentId`), its resource resolved to an app ID here.
    public func documentId(of assignment: AppRoleAssignment) -> String {
        AppRoleAssignment.documentId(
            principalId: assignment.principalId, resourceAppId: resource(identifier: assignment.resource)?.appId ?? AppID(assignment.resource),
            role: assignment.role)
    }

    public func namedLocation(id: PolicyID) -> NamedLocation? { namedLocationsById[id] }

    /// The app roles of `resource` granted to a principal (user object ID or client app ID).
    public func roles(ofPrincipal principalId: PrincipalID, on resource: Application) -> [String] {
        rolesByPrincipalAndResource[PrincipalResource(principal: principalId, resource: resource.appId)] ?? []
    }

    /// Whether a tenant path segment (tenant ID or verified domain) names this tenant.
    public func matches(tenantSegment: String) -> Bool {
        let segment = tenantSegment.lowercased()
        return segment == tenant.id.rawValue || segment == tenant.domain
    }
}
