import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PortcullisCore
import PortcullisTesting
import Testing

@Suite("directory roles authorise the admin API (PROTOCOL §17)")
struct AdminRoleTests {
    static let ifMatch = HTTPField.Name("If-Match")!

    @Test("the table: Global Administrator all; others read all but secrets and write their area; Reports Reader the logs")
    func table() {
        let ca = [DirectoryRoleDefinition.conditionalAccessAdministrator]
        #expect(AdminAuthorization.allows(roles: ca, method: "POST", path: "conditional-access/policies"))
        #expect(AdminAuthorization.allows(roles: ca, method: "PUT", path: "named-locations/x"))
        #expect(!AdminAuthorization.allows(roles: ca, method: "POST", path: "users"))
        #expect(AdminAuthorization.allows(roles: ca, method: "GET", path: "users"))
        #expect(!AdminAuthorization.allows(roles: ca, method: "GET", path: "app-configuration/policies/p/secrets/s"))
        let reader = [DirectoryRoleDefinition.globalReader]
        #expect(AdminAuthorization.allows(roles: reader, method: "GET", path: "audit"))
        #expect(AdminAuthorization.allows(roles: reader, method: "POST", path: "conditional-access/evaluate"))
        #expect(!AdminAuthorization.allows(roles: reader, method: "DELETE", path: "conditional-access/policies/x"))
        #expect(!AdminAuthorization.allows(roles: reader, method: "POST", path: "conditional-access/templates/x/instantiate"), "a template makes a policy")
        #expect(AdminAuthorization.allows(roles: ca, method: "POST", path: "conditional-access/templates/x/instantiate"))
        #expect(!AdminAuthorization.allows(roles: reader, method: "POST", path: "users/x/revokeSignInSessions"))
        #expect(AdminAuthorization.allows(roles: [DirectoryRoleDefinition.userAdministrator], method: "POST", path: "users/x/revokeSignInSessions"))
        #expect(
            !AdminAuthorization.allows(
                roles: [DirectoryRoleDefinition.userAdministrator], method: "POST", path: "users/x/authentication-methods/temporaryAccessPass"))
        #expect(!AdminAuthorization.allows(roles: [DirectoryRoleDefinition.applicationAdministrator], method: "POST", path: "app-role-assignments"))
        let reports: [RoleID] = ["4a5d8f65-41da-4de4-8968-e035b65339cf"]
        #expect(AdminAuthorization.allows(roles: reports, method: "GET", path: "sign-ins"))
        #expect(!AdminAuthorization.allows(roles: reports, method: "GET", path: "users"))
        #expect(
            AdminAuthorization.allows(roles: [DirectoryRoleDefinition.globalAdministrator], method: "DELETE", path: "app-configuration/policies/p/secrets/s"))
        #expect(!AdminAuthorization.allows(roles: ["b0f54661-2d74-4c50-afa3-1ec803f12efe"], method: "GET", path: "users"), "Billing Administrator: no access")
        #expect(!AdminAuthorization.allows(roles: reader, method: "GET", path: "nowhere"), "a path outside every area")
    }

    @Test(
        "a Conditional Access Administrator writes policies but not groups; a Global Reader only reads; a User Administrator cannot change a privileged user; removal ends it at once"
    )
    func live() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                // The mobile client may ask for the admin API (an administrator's consent).
                #expect(try await client.listAdminAPI(for: Fixtures.mobileClientId, admin: admin).status == .ok)
                var assignments: [String: String] = [:]
                for (account, role) in [
                    (Fixtures.alice, DirectoryRoleDefinition.conditionalAccessAdministrator), (Fixtures.bob, DirectoryRoleDefinition.globalReader),
                    (Fixtures.carol, DirectoryRoleDefinition.userAdministrator),
                ] {
                    let assigned = try await client.admin(
                        .post, "/role-management/directory/role-assignments", token: admin,
                        json: ["principalId": account.id, "roleDefinitionId": role.rawValue])
                    assignments[account.id] = try #require(assigned.string("id"), "\(assigned.text)")
                }
                func token(_ account: Fixtures.Account) async throws -> String {
                    let answer = try await client.token(Grants.password(account, scope: "api://portcullis-admin/Admin.ReadWrite", claims: nil))
                    return try #require(answer.string("access_token"), "\(answer.text)")
                }
                let policy: [String: Any] = [
                    "displayName": "Written by the CA administrator", "state": "enabledForReportingButNotEnforced",
                    "conditions": ["users": ["includeUsers": ["All"]], "applications": ["includeApplications": ["All"]]],
                    "grantControls": ["operator": "OR", "builtInControls": ["mfa"]],
                ]
                let alice = try await token(Fixtures.alice)
                #expect(try await client.admin(.post, "/conditional-access/policies", token: alice, json: policy).status == .created)
                #expect(try await client.admin(.get, "/users", token: alice).status == .ok)
                let group = try await client.admin(.post, "/groups", token: alice, json: ["displayName": "Not mine", "members": []])
                #expect(group.status == .forbidden, "\(group.text)")
                // The area is read from the path the router routes: dot segments and encoded slashes reach no other route.
                for sneaky in ["/conditional-access/policies/../../groups", "/conditional-access/policies%2F..%2F..%2Fgroups", "/named-locations/../groups"] {
                    let answer = try await client.admin(.post, sneaky, token: alice, json: ["displayName": "Sneaky", "members": []])
                    #expect(answer.status != .created && answer.status != .ok, "\(sneaky): \(answer.status) \(answer.text)")
                }
                let groups = try await client.admin(.get, "/groups", token: admin)
                #expect(!groups.text.contains("Sneaky"), "no group was created through another area's path")

                let bob = try await token(Fixtures.bob)
                #expect(try await client.admin(.get, "/conditional-access/policies", token: bob).status == .ok)
                #expect(try await client.admin(.post, "/conditional-access/policies", token: bob, json: policy).status == .forbidden)
                let question = try await client.admin(
                    .post, "/conditional-access/evaluate", token: bob,
                    json: ["signIn": ["userId": Fixtures.alice.upn, "clientAppId": Fixtures.mobileClientId, "resourceAppId": Fixtures.mailResource]])
                #expect(question.status == .ok, "\(question.text)")

                let carol = try await token(Fixtures.carol)
                #expect(try await client.admin(.post, "/groups", token: carol, json: ["displayName": "Carol's", "members": []]).status == .created)
                let aliceDocument = try await client.admin(.get, "/users/\(Fixtures.alice.id)", token: carol)
                let privileged = try await client.admin(
                    .put, "/users/\(Fixtures.alice.id)", token: carol, json: aliceDocument.json, headers: [Self.ifMatch: "*"])
                #expect(privileged.status == .forbidden, "Alice holds an administrative role: \(privileged.text)")

                let removed = try await client.admin(
                    .delete, "/role-management/directory/role-assignments/\(try #require(assignments[Fixtures.bob.id]))", token: admin,
                    headers: [Self.ifMatch: "*"])
                #expect(removed.status == .noContent, "\(removed.text)")
                #expect(try await client.admin(.get, "/conditional-access/policies", token: bob).status == .forbidden, "the role gone: at once")

                // An Application Administrator manages applications, but not one that holds Portcullis.Admin.
                let appAdmin = try await client.admin(
                    .post, "/role-management/directory/role-assignments", token: admin,
                    json: ["principalId": Fixtures.bob.id, "roleDefinitionId": DirectoryRoleDefinition.applicationAdministrator.rawValue])
                #expect(appAdmin.status == .created, "\(appAdmin.text)")
                let bobAgain = try await token(Fixtures.bob)
                let ordinary = try await client.admin(.post, "/applications/\(Fixtures.daemonClientId)/secrets", token: bobAgain, json: [String: Any]())
                #expect(ordinary.status == .created, "\(ordinary.text)")
                let escalation = try await client.admin(.post, "/applications/\(Fixtures.adminClientId)/secrets", token: bobAgain, json: [String: Any]())
                #expect(escalation.status == .forbidden, "a secret for the admin tool would be Portcullis.Admin: \(escalation.text)")
            }
        }
    }
}
