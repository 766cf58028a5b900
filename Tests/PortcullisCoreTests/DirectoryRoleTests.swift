import Foundation
import PortcullisCore
import Testing

/// Directory roles in conditional access (PROTOCOL §17): `includeRoles`/`excludeRoles` match the users holding the role,
/// directly or through a group, in the index as in a full scan.
@Suite("directory roles in conditional access")
struct DirectoryRoleTests {
    static let globalAdmin = DirectoryRoleDefinition.globalAdministrator
    static let securityAdmin = DirectoryRoleDefinition.securityAdministrator

    /// u1 holds Global Administrator; group B (u2) holds Security Administrator; u3 holds nothing.
    static let directory = DirectorySnapshot(
        tenant: CA.directory.tenant, revision: 1, users: CA.directory.users, groups: CA.directory.groups, applications: CA.directory.applications,
        appRoleAssignments: [], namedLocations: CA.directory.namedLocations,
        directoryRoleAssignments: [
            DirectoryRoleAssignment(principalId: CA.u1.uppercased(), roleDefinitionId: globalAdmin),
            DirectoryRoleAssignment(principalId: CA.gB, roleDefinitionId: securityAdmin.uppercased()),
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
        let input = SignInFacts.Input(userId: user, clientAppId: CA.plainClient, resourceAppId: CA.r1, authentication: .none)
        let facts = SignInFacts(input, directory: directory)
        let indexed = set.evaluate(facts).policies.contains { $0.result == .failure }
        let scanned = set.evaluate(facts, explain: true).policies.contains { $0.result == .failure }
        #expect(indexed == scanned, "the index and a full scan agree for \(user)")
        return indexed
    }

    @Test("a user holds roles assigned to them and to their groups")
    func holders() {
        #expect(Self.directory.roleIds(ofUser: CA.u1) == [Self.globalAdmin])
        #expect(Self.directory.roleIds(ofUser: CA.u2.uppercased()) == [Self.securityAdmin])
        #expect(Self.directory.roleIds(ofUser: CA.u3).isEmpty)
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
        #expect(parsed.conditions.users?.includeRoles == [Self.globalAdmin])
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
        #expect(DirectoryRoleDefinition.builtIn(id: Self.globalAdmin.uppercased())?.displayName == "Global Administrator")
        #expect(DirectoryRoleDefinition.builtIns.allSatisfy { $0.id.isGUID && $0.id == $0.id.lowercased() })
    }
}

/// The application groups (PROTOCOL §17): `Office365` is the applications tagged so; `MicrosoftAdminPortals` is
/// Portcullis's admin API.
@Suite("application groups in conditional access")
struct ApplicationGroupTests {
    static let directory: DirectorySnapshot = {
        var applications = CA.directory.applications
        if let index = applications.firstIndex(where: { $0.appId == CA.r1 }) { applications[index].tags = ["office365"] }
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
            SignInFacts.Input(userId: CA.u1, clientAppId: CA.plainClient, resourceAppId: resource, authentication: .none), directory: directory)
        let indexed = set.evaluate(facts).policies.contains { $0.result == .failure }
        #expect(indexed == set.evaluate(facts, explain: true).policies.contains { $0.result == .failure }, "the index and a full scan agree")
        return indexed
    }

    @Test("Office365 is the resources tagged so; MicrosoftAdminPortals the admin API; both exclude from All")
    func groups() throws {
        #expect(try Self.applies(include: ["office365"], resource: CA.r1))
        #expect(try !Self.applies(include: ["Office365"], resource: CA.r2))
        #expect(try Self.applies(include: ["MicrosoftAdminPortals"], resource: BuiltInResources.adminAppId))
        #expect(try !Self.applies(include: ["MicrosoftAdminPortals"], resource: CA.r1))
        #expect(try !Self.applies(include: ["All"], exclude: ["Office365"], resource: CA.r1))
        #expect(try Self.applies(include: ["All"], exclude: ["Office365"], resource: CA.r2))
        #expect(try !Self.applies(include: ["All"], exclude: ["MicrosoftAdminPortals"], resource: BuiltInResources.adminAppId))
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
