import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PortcullisCore
import PortcullisTesting
import Testing

@Suite("admin API: users (PROTOCOL §7, §11)")
struct DirectoryUserTests {
    static let ifMatch = HTTPField.Name("If-Match")!

    @Test("document lists page in ID order: ?top and ?skip, a nextLink while full, 400 for a bad page")
    func paging() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                var seen: [String] = []
                var next: String? = "/users?top=2"
                while let path = next {
                    let page = try await client.admin(.get, path, token: admin)
                    let items = try #require(page["value"] as? [[String: Any]])
                    #expect(items.count <= 2)
                    seen += items.compactMap { $0["id"] as? String }
                    next = (page["nextLink"] as? String).map { String($0.dropFirst("/admin/v1".count)) }
                    #expect(next == nil || items.count == 2, "a nextLink only after a full page")
                }
                #expect(seen == seen.sorted() && seen.count == 5 && Set(seen).count == 5, "every user once, in ID order: \(seen)")
                #expect(try await client.admin(.get, "/users?top=0", token: admin).status == .badRequest)
                #expect(try await client.admin(.get, "/users?skip=-1", token: admin).status == .badRequest)
            }
        }
    }

    @Test("create → signs in at once; never a password or hash in answers or the audit; UPN unique case-insensitively; 428/412; pointers")
    func lifecycle() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let created = try await client.admin(
                    .post, "/users", token: admin,
                    json: [
                        "userPrincipalName": "frank@fabrikam.test", "displayName": "Frank", "password": "frank-pass-1",
                    ])
                #expect(created.status == .created, "\(created.text)")
                let id = try #require(created.string("id"))
                #expect(created["passwordHash"] == nil && created["password"] == nil && !created.text.contains("$2"), "\(created.text)")
                let etag = try #require(created.headers[.eTag])
                let frank = Fixtures.Account(id: id, upn: "frank@fabrikam.test", password: "frank-pass-1")
                let tokens = try await client.token(Grants.password(frank, scope: "openid offline_access", claims: nil))
                #expect(tokens.status == .ok, "a user created through the API signs in at once: \(tokens.text)")

                let list = try await client.admin(.get, "/users", token: admin)
                let users = try #require(list["value"] as? [[String: Any]])
                #expect(list.status == .ok && users.contains { $0["id"] as? String == id } && !list.text.contains("passwordHash"), "\(list.text)")
                let read = try await client.admin(.get, "/users/\(id)", token: admin)
                #expect(read.headers[.eTag] == etag && read.string("userPrincipalName") == "frank@fabrikam.test" && read["passwordHash"] == nil)

                for (body, pointer) in [
                    (["userPrincipalName": "ALICE@fabrikam.test"] as [String: Any], "/userPrincipalName"),
                    (["userPrincipalName": "no-at-sign"], "/userPrincipalName"),
                    (["userPrincipalName": "g@fabrikam.test", "colour": "red"], "/colour"),
                    (["userPrincipalName": "g@fabrikam.test", "password": "x", "passwordHash": "$2b$10$abc"], "/password"),
                    (["userPrincipalName": "g@fabrikam.test", "id": "not-a-guid"], "/id"),
                ] {
                    let refused = try await client.admin(.post, "/users", token: admin, json: body)
                    #expect(refused.status == .badRequest && refused.text.contains("\"\(pointer)\""), "\(body): \(refused.text)")
                }
                let renamed: [String: Any] = ["userPrincipalName": "frank@fabrikam.test", "displayName": "Frank F."]
                #expect(try await client.admin(.put, "/users/\(id)", token: admin, json: renamed).status == .preconditionRequired)
                #expect(
                    try await client.admin(.put, "/users/\(id)", token: admin, json: renamed, headers: [Self.ifMatch: "\"999\""]).status == .preconditionFailed)
                let replaced = try await client.admin(.put, "/users/\(id)", token: admin, json: renamed, headers: [Self.ifMatch: etag])
                #expect(replaced.status == .ok && replaced.string("displayName") == "Frank F.", "\(replaced.text)")
                #expect(try await client.token(Grants.password(frank, scope: "openid", claims: nil)).status == .ok, "a replace without a password keeps it")

                let audit = try await client.admin(.get, "/audit", token: admin)
                #expect(audit.text.contains("frank@fabrikam.test") && !audit.text.contains("passwordHash") && !audit.text.contains("$2"), "\(audit.text)")

                // Deleting a user still in a group or holding a role is refused; an unreferenced one goes.
                #expect(try await client.admin(.delete, "/users/\(Fixtures.alice.id)", token: admin, headers: [Self.ifMatch: "*"]).status == .conflict)
                #expect(try await client.admin(.delete, "/users/\(id)", token: admin).status == .preconditionRequired)
                #expect(try await client.admin(.delete, "/users/\(id)", token: admin, headers: [Self.ifMatch: "*"]).status == .noContent)
                #expect(try await client.token(Grants.password(frank, scope: "openid", claims: nil)).status == .badRequest, "deleted: no sign-in")
            }
        }
    }

    @Test("disabling a user revokes their refresh tokens and ends their sessions at once; the password grant answers 50057; re-enabled, no old token returns")
    func disable() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let tokens = try await client.token(Grants.password(Fixtures.bob, scope: "openid offline_access", claims: nil))
                let refresh = try #require(tokens.string("refresh_token"))
                let browser = Browser()
                #expect(try await browser.signIn(client, account: Fixtures.bob).status == .found)
                #expect(try await browser.get(client, Authorize.query(extra: [("prompt", "none")])).delivered["code"] != nil, "a live session")

                let read = try await client.admin(.get, "/users/\(Fixtures.bob.id)", token: admin)
                var body = read.json
                body["accountEnabled"] = false
                let disabled = try await client.admin(
                    .put, "/users/\(Fixtures.bob.id)", token: admin, json: body, headers: [Self.ifMatch: try #require(read.headers[.eTag])])
                #expect(disabled.status == .ok, "\(disabled.text)")
                #expect(try await client.token(Grants.password(Fixtures.bob, scope: "openid", claims: nil)).errorCode == 50057)
                #expect(try await client.token(Grants.refresh(refresh, claims: nil)).status == .badRequest)
                #expect(try await browser.get(client, Authorize.query(extra: [("prompt", "none")])).delivered["error"] == "login_required", "the session ended")

                body["accountEnabled"] = true
                let again = try await client.admin(
                    .put, "/users/\(Fixtures.bob.id)", token: admin, json: body, headers: [Self.ifMatch: try #require(disabled.headers[.eTag])])
                #expect(again.status == .ok)
                #expect(
                    try await client.token(Grants.password(Fixtures.bob, scope: "openid", claims: nil)).status == .ok, "re-enabled: the password still works")
                #expect(try await client.token(Grants.refresh(refresh, claims: nil)).status == .badRequest, "the revoked refresh token stays revoked")
            }
        }
    }
}

@Suite("admin API: groups (PROTOCOL §7, §11)")
struct DirectoryGroupTests {
    static let ifMatch = HTTPField.Name("If-Match")!

    @Test("a group created, used by a policy (enforced at once), changed (at once), protected from deletion while named; members must be users")
    func lifecycle() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let bad = try await client.admin(
                    .post, "/groups", token: admin, json: ["displayName": "Pilot", "members": [Fixtures.alice.id, "00000000-0000-4000-8000-00000000dead"]])
                #expect(bad.status == .badRequest && bad.text.contains("\"/members/1\""), "\(bad.text)")
                let created = try await client.admin(
                    .post, "/groups", token: admin, json: ["displayName": "Pilot", "members": [Fixtures.alice.id.uppercased(), Fixtures.alice.id]])
                #expect(created.status == .created && created["members"] as? [String] == [Fixtures.alice.id], "IDs lower-cased, listed once: \(created.text)")
                let groupId = try #require(created.string("id"))

                var policy = Policies.document(id: "a1000000-0000-4000-8000-0000000000d1", name: "Block the pilot group", users: [], controls: ["block"])
                var conditions = try #require(policy["conditions"] as? [String: Any])
                conditions["users"] = ["includeUsers": [], "excludeUsers": [], "includeGroups": [groupId], "excludeGroups": []]
                policy["conditions"] = conditions
                #expect(try await client.admin(.post, "/conditional-access/policies", token: admin, json: policy).status == .created)
                #expect(try await client.token(Grants.password(claims: nil)).errorCode == 53003, "Alice is in the group: blocked at once")

                let emptied = try await client.admin(
                    .put, "/groups/\(groupId)", token: admin, json: ["displayName": "Pilot", "members": []],
                    headers: [Self.ifMatch: try #require(created.headers[.eTag])])
                #expect(emptied.status == .ok, "\(emptied.text)")
                #expect(try await client.token(Grants.password(claims: nil)).status == .ok, "no longer a member: allowed at once")

                let named = try await client.admin(.delete, "/groups/\(groupId)", token: admin, headers: [Self.ifMatch: "*"])
                #expect(named.status == .conflict && named.text.contains("a1000000-0000-4000-8000-0000000000d1"), "\(named.text)")
                #expect(
                    try await client.admin(
                        .delete, "/conditional-access/policies/a1000000-0000-4000-8000-0000000000d1", token: admin, headers: [Self.ifMatch: "*"]
                    ).status == .noContent)
                #expect(try await client.admin(.delete, "/groups/\(groupId)", token: admin, headers: [Self.ifMatch: "*"]).status == .noContent)

                // A user leaves their group through the API; then the user can be deleted.
                let engineering = try await client.admin(.get, "/groups/\(Fixtures.engineeringGroupId)", token: admin)
                #expect(try await client.admin(.delete, "/users/\(Fixtures.carol.id)", token: admin, headers: [Self.ifMatch: "*"]).status == .conflict)
                let left = try await client.admin(
                    .put, "/groups/\(Fixtures.engineeringGroupId)", token: admin,
                    json: ["displayName": engineering.string("displayName") ?? "Engineering", "members": []],
                    headers: [Self.ifMatch: try #require(engineering.headers[.eTag])])
                #expect(left.status == .ok, "\(left.text)")
                #expect(try await client.admin(.delete, "/users/\(Fixtures.carol.id)", token: admin, headers: [Self.ifMatch: "*"]).status == .noContent)
            }
        }
    }
}
