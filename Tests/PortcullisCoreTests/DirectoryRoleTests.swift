import Foundation
import PortcullisCore
import Testing

/// Directory roles in conditional access (PROTOCOL §17): `includeRoles`/`excludeRoles` match the users holding the role,
/// directly or through a group, in the index as in a full scan.
@Suite("directory roles in conditional access")
struct DirectoryRoleTests {
    static let globalAdmin = DirectoryRoleDefinition.globalAdministrator.rawValue
    static let securityAdmin = DirectoryRoleDefinition.securityAdministrator.rawValue

    /// u1 holds Global Administrator; group B (u2) holds Security Administrator; u3 holds nothing.
    static let directory = DirectorySnapshot(
        tenant: CA.directory.tenant, revision: 1, users: CA.directory.users, groups: CA.directory.groups, applications: CA.directory.applications,
        appRoleAssignments: [], namedLocations: CA.directory.namedLocations,
        directoryRoleAssignments: [
            DirectoryRoleAssignment(principalId: ObjectID(CA.u1.uppercased()), roleDefinitionId: RoleID(globalAdmin)),
            DirectoryRoleAssignment(principalId: ObjectID(CA.gB), roleDefinitionId: RoleID(securityAdmin.uppercased())),
        ])

    static func policy(include: [String], exclude: [String] = [], users: [String] = []) -> JSONValue {
        CA.json([
            "displayName": "roles", "state": "enabled",
            "conditions": [
                "users": ["includeUsers": users, "includeRoles": include, "excludeRoles": exclude],
                "applications": ["includeApplications": ["All"]],
            ],
            "grantControls": ["operator": "OR", "builtInControls": ["mfa"]],
        ])
    }

    static func applies(_ document: JSONValue, to user: String) throws -> Bool {
        let policy = try ConditionalAccessPolicy.parse(document, directory: directory, generatedId: "00000000-0000-4000-8000-0000000000r1")
        let set = CompiledPolicySet(policies: [policy], namedLocations: [])
        let input = SignInFacts.Input(userId: ObjectID(user), clientAppId: AppID(CA.plainClient), resourceAppId: AppID(CA.r1), authentication: .none)
        let facts = SignInFacts(input, directory: directory)
        let indexed = set.evaluate(facts).policies.contains { $0.result == .failure }
        let scanned = set.evaluate(facts, explain: true).policies.contains { $0.result == .failure }
        #expect(indexed == scanned, "the index and a full scan agree for \(user)")
        return indexed
    }

    @Test("a user holds roles assigned to them and to their groups")
    func holders() {
        #expect(Self.directory.roleIds(ofUser: ObjectID(CA.u1)) == [RoleID(Self.globalAdmin)])
        #expect(Self.directory.roleIds(ofUser: ObjectID(CA.u2.uppercased())) == [RoleID(Self.securityAdmin)])
        #expect(Self.directory.roleIds(ofUser: ObjectID(CA.u3)).isEmpty)
    }

    @Test("includeRoles applies to the holders only; excludeRoles exempts holders from All")
    func matching() throws {
        let admins = Self.policy(include: [Self.globalAdmin, Self.securityAdmin])
        #expect(try Self.applies(admins, to: CA.u1))
        #expect(try Self.applies(admins, to: CA.u2), "through group B")
        #expect(try !Self.applies(admins, to: CA.u3))
        let everyoneButGlobalAdmins = Self.policy(include: [], exclude: [Self.globalAdmin], users: ["All"])
        #expect(try !Self.applies(everyoneButGlobalAdmins, to: CA.u1))
        #expect(try Self.applies(everyoneButGlobalAdmins, to: CA.u2))
        #expect(try Self.applies(everyoneButGlobalAdmins, to: CA.u3))
    }

    @Test("role IDs are Entra's template IDs, stored lower-case once; an unknown one is refused at its pointer")
    func validation() throws {
        let parsed = try ConditionalAccessPolicy.parse(
            Self.policy(include: [Self.globalAdmin.uppercased(), Self.globalAdmin]), directory: Self.directory, generatedId: "g")
        #expect(parsed.conditions.users?.includeRoles == [RoleID(Self.globalAdmin)])
        do {
            _ = try ConditionalAccessPolicy.parse(
                Self.policy(include: [Self.globalAdmin, "00000000-0000-4000-8000-00000000dead"]), directory: Self.directory, generatedId: "g")
            Issue.record("an unknown role was accepted")
        } catch {
            #expect(error.problems.map(\.pointer) == ["/conditions/users/includeRoles/1"])
        }
        // A policy stored before roles reads back with none.
        let old = #"{"includeUsers":["All"],"excludeUsers":[],"includeGroups":[],"excludeGroups":[]}"#
        let users = try JSONDecoder().decode(ConditionalAccessPolicy.Users.self, from: Data(old.utf8))
        #expect(users.includeRoles.isEmpty && users.excludeRoles.isEmpty)
    }

    @Test("every role template ID the shared corpus names is one of the built-in definitions")
    func builtIns() {
        #expect(DirectoryRoleDefinition.builtIns.count >= 120)
        #expect(Set(DirectoryRoleDefinition.builtIns.map(\.id)).count == DirectoryRoleDefinition.builtIns.count)
        #expect(DirectoryRoleDefinition.builtIn(id: RoleID(Self.globalAdmin.uppercased()))?.displayName == "Global Administrator")
        #expect(DirectoryRoleDefinition.builtIns.allSatisfy { $0.id.rawValue.isGUID && $0.id.rawValue == $0.id.rawValue.lowercased() })
    }
}

/// The application groups (PROTOCOL §17): `Office365` is the applications tagged so; `MicrosoftAdminPortals` is
/// Portcullis's admin API.
@Suite("application groups in conditional access")
struct ApplicationGroupTests {
    static let directory: DirectorySnapshot = {
        var applications = CA.directory.applications
        if let index = applications.firstIndex(where: { $0.appId.rawValue == CA.r1 }) { applications[index].tags = ["office365"] }
        return DirectorySnapshot(
            tenant: CA.directory.tenant, revision: 1, users: CA.directory.users, groups: CA.directory.groups, applications: applications,
            appRoleAssignments: [], namedLocations: [])
    }()

    static func applies(include: [String], exclude: [String] = [], resource: String) throws -> Bool {
        let document = CA.json([
            "displayName": "groups", "state": "enabled",
            "conditions": ["users": ["includeUsers": ["All"]], "applications": ["includeApplications": include, "excludeApplications": exclude]],
            "grantControls": ["operator": "OR", "builtInControls": ["mfa"]],
        ])
        let policy = try ConditionalAccessPolicy.parse(document, directory: directory, generatedId: "g")
        let set = CompiledPolicySet(policies: [policy], namedLocations: [])
        let facts = SignInFacts(
            SignInFacts.Input(userId: ObjectID(CA.u1), clientAppId: AppID(CA.plainClient), resourceAppId: AppID(resource), authentication: .none),
            directory: directory)
        let indexed = set.evaluate(facts).policies.contains { $0.result == .failure }
        #expect(indexed == set.evaluate(facts, explain: true).policies.contains { $0.result == .failure }, "the index and a full scan agree")
        return indexed
    }

    @Test("Office365 is the resources tagged so; MicrosoftAdminPortals the admin API; both exclude from All")
    func groups() throws {
        #expect(try Self.applies(include: ["office365"], resource: CA.r1))
        #expect(try !Self.applies(include: ["Office365"], resource: CA.r2))
        #expect(try Self.applies(include: ["MicrosoftAdminPortals"], resource: BuiltInResources.adminAppId.rawValue))
        #expect(try !Self.applies(include: ["MicrosoftAdminPortals"], resource: CA.r1))
        #expect(try !Self.applies(include: ["All"], exclude: ["Office365"], resource: CA.r1))
        #expect(try Self.applies(include: ["All"], exclude: ["Office365"], resource: CA.r2))
        #expect(try !Self.applies(include: ["All"], exclude: ["MicrosoftAdminPortals"], resource: BuiltInResources.adminAppId.rawValue))
        let stored = try ConditionalAccessPolicy.parse(
            CA.json([
                "displayName": "x", "state": "enabled",
                "conditions": [
                    "users": ["includeUsers": ["All"]], "applications": ["includeApplications": ["All"], "excludeApplications": ["office365", CA.r2]],
                ],
                "grantControls": ["operator": "OR", "builtInControls": ["mfa"]],
            ]), directory: Self.directory, generatedId: "g")
        #expect(stored.conditions.applications.excludeApplications.strings == ["Office365", CA.r2], "Graph's spelling, keywords first")
    }
}

/// Guests and external users (PROTOCOL §17): a user whose `userType` is Guest is an internal guest; the keyword
/// `GuestsOrExternalUsers` and the guest conditions name them, in the index as in a full scan.
@Suite("guests and external users in conditional access")
struct GuestConditionTests {
    static let guest = "a0000000-0000-4000-8000-0000000000f0"
    static let directory: DirectorySnapshot = {
        var visitor = User(id: ObjectID(guest), userPrincipalName: "visitor@ca.test", displayName: "Visitor")
        visitor.userType = .guest
        return DirectorySnapshot(
            tenant: CA.directory.tenant, revision: 1, users: CA.directory.users + [visitor], groups: CA.directory.groups,
            applications: CA.directory.applications, appRoleAssignments: [], namedLocations: [])
    }()

    static func applies(_ users: [String: Any], to user: String) throws -> Bool {
        let document = CA.json([
            "displayName": "guests", "state": "enabled",
            "conditions": ["users": users, "applications": ["includeApplications": ["All"]]],
            "grantControls": ["operator": "OR", "builtInControls": ["mfa"]],
        ])
        let policy = try ConditionalAccessPolicy.parse(document, directory: directory, generatedId: "g")
        let set = CompiledPolicySet(policies: [policy], namedLocations: [])
        let facts = SignInFacts(
            SignInFacts.Input(userId: ObjectID(user), clientAppId: AppID(CA.plainClient), resourceAppId: AppID(CA.r1), authentication: .none),
            directory: directory)
        let indexed = set.evaluate(facts).policies.contains { $0.result == .failure }
        #expect(indexed == set.evaluate(facts, explain: true).policies.contains { $0.result == .failure }, "the index and a full scan agree")
        return indexed
    }

    @Test("the keyword and the guest conditions name guests, by type; exclusions exempt them from All")
    func matching() throws {
        #expect(try Self.applies(["includeUsers": ["GuestsOrExternalUsers"]], to: Self.guest))
        #expect(try !Self.applies(["includeUsers": ["GuestsOrExternalUsers"]], to: CA.u1))
        let internalGuests: [String: Any] = [
            "includeGuestsOrExternalUsers": ["guestOrExternalUserTypes": "internalGuest,b2bCollaborationGuest", "externalTenants": ["membershipKind": "all"]]
        ]
        #expect(try Self.applies(internalGuests, to: Self.guest))
        #expect(try !Self.applies(internalGuests, to: CA.u2))
        let b2bOnly: [String: Any] = ["includeGuestsOrExternalUsers": ["guestOrExternalUserTypes": "b2bCollaborationGuest"]]
        #expect(try !Self.applies(b2bOnly, to: Self.guest), "an internal guest is not a B2B guest")
        let everyoneButGuests: [String: Any] = ["includeUsers": ["All"], "excludeUsers": ["GuestsOrExternalUsers"]]
        #expect(try Self.applies(everyoneButGuests, to: CA.u1))
        #expect(try !Self.applies(everyoneButGuests, to: Self.guest))
        let excludeTypes: [String: Any] = ["includeUsers": ["All"], "excludeGuestsOrExternalUsers": ["guestOrExternalUserTypes": "internalGuest"]]
        #expect(try !Self.applies(excludeTypes, to: Self.guest))
    }

    @Test("guest conditions are checked member by member, and keep Graph's shape")
    func validation() throws {
        func pointers(_ users: [String: Any]) -> [String] {
            do {
                _ = try ConditionalAccessPolicy.parse(
                    CA.json([
                        "displayName": "g", "state": "enabled", "conditions": ["users": users, "applications": ["includeApplications": ["All"]]],
                        "grantControls": ["operator": "OR", "builtInControls": ["mfa"]],
                    ]), directory: Self.directory, generatedId: "g")
                return []
            } catch { return error.problems.map(\.pointer) }
        }
        #expect(
            pointers(["includeGuestsOrExternalUsers": ["guestOrExternalUserTypes": "internalGuest,visitor"]]) == [
                "/conditions/users/includeGuestsOrExternalUsers/guestOrExternalUserTypes"
            ])
        #expect(
            pointers([
                "includeGuestsOrExternalUsers": ["guestOrExternalUserTypes": "b2bCollaborationGuest", "externalTenants": ["membershipKind": "enumerated"]]
            ]).contains(
                "/conditions/users/includeGuestsOrExternalUsers/externalTenants/members"))
        let parsed = try ConditionalAccessPolicy.parse(
            CA.json([
                "displayName": "g", "state": "enabled",
                "conditions": [
                    "users": [
                        "includeGuestsOrExternalUsers": [
                            "guestOrExternalUserTypes": "b2bCollaborationGuest, internalGuest",
                            "externalTenants": [
                                "@odata.type": "#microsoft.graph.conditionalAccessEnumeratedExternalTenants", "membershipKind": "enumerated",
                                "members": [CA.directory.tenant.id.rawValue.uppercased()],
                            ],
                        ]
                    ], "applications": ["includeApplications": ["All"]],
                ],
                "grantControls": ["operator": "OR", "builtInControls": ["mfa"]],
            ]), directory: Self.directory, generatedId: "g")
        let encoded = try #require(JSONValue.parse(JSONEncoder().encode(parsed)))
        #expect(
            encoded["conditions"]?["users"]?["includeGuestsOrExternalUsers"]
                == CA.json([
                    "guestOrExternalUserTypes": "internalGuest,b2bCollaborationGuest",
                    "externalTenants": ["membershipKind": "enumerated", "members": [CA.directory.tenant.id.rawValue]],
                ]))
        #expect(try JSONDecoder().decode(ConditionalAccessPolicy.self, from: JSONEncoder().encode(parsed)) == parsed)
    }
}
