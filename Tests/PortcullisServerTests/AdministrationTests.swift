import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PortcullisCore
import PortcullisTesting
import Testing

@Suite("admin API: applications and their secrets (PROTOCOL §11)")
struct ApplicationAdminTests {
    static let ifMatch = HTTPField.Name("If-Match")!
    static let appId = "a2000000-0000-4000-8000-0000000000c1"

    static func clientCredentials(_ secret: String) -> [(String, String)] {
        // A token for the application itself: client authentication is what these tests are about (API permissions have their own).
        [("grant_type", "client_credentials"), ("client_id", appId), ("client_secret", secret), ("scope", "api://reports/.default")]
    }

    @Test(
        "a new secret authenticates at once, is shown once, never as a hash; two at once rotate; a removed or expired one stops; metadata only in answers and the audit"
    )
    func secrets() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let created = try await client.admin(
                    .post, "/applications", token: admin,
                    json: [
                        "appId": Self.appId, "displayName": "Report generator", "allowedGrantTypes": ["client_credentials"],
                        "identifierUris": ["api://reports"],
                    ])
                #expect(created.status == .created && created["secrets"] as? [Any] != nil, "\(created.text)")

                let first = try await client.admin(.post, "/applications/\(Self.appId)/secrets", token: admin, json: ["displayName": "first"])
                #expect(first.status == .created && first.headers[.cacheControl] == "no-store", "\(first.text)")
                let firstSecret = try #require(first.string("secretText"))
                let firstKey = try #require(first.string("keyId"))
                #expect(firstSecret.count == 43 && first.string("hint") == String(firstSecret.prefix(3)), "256 random bits, base64url")
                #expect(try await client.token(Self.clientCredentials(firstSecret)).status == .ok, "authenticates at once")

                let second = try await client.admin(
                    .post, "/applications/\(Self.appId)/secrets", token: admin,
                    json: [
                        "endDateTime": ISO8601.string(env.clock.now().addingTimeInterval(3600))
                    ])
                let secondSecret = try #require(second.string("secretText"))
                let withFirst = try await client.token(Self.clientCredentials(firstSecret)).status
                let withSecond = try await client.token(Self.clientCredentials(secondSecret)).status
                #expect(withFirst == .ok && withSecond == .ok, "both secrets work during a rotation")

                let read = try await client.admin(.get, "/applications/\(Self.appId)", token: admin)
                let listed = try #require(read["secrets"] as? [[String: Any]])
                #expect(
                    listed.count == 2
                        && listed.allSatisfy { $0["secretHash"] == nil && $0["secretText"] == nil && $0["keyId"] != nil && $0["startDateTime"] != nil },
                    "\(read.text)")
                #expect(!read.text.contains(firstSecret) && !read.text.contains(secondSecret))

                #expect(try await client.admin(.delete, "/applications/\(Self.appId)/secrets/\(firstKey)", token: admin).status == .noContent)
                #expect(try await client.admin(.delete, "/applications/\(Self.appId)/secrets/\(firstKey)", token: admin).status == .notFound)
                #expect(try await client.token(Self.clientCredentials(firstSecret)).string("error") == "invalid_client", "a removed secret stops at once")
                #expect(try await client.token(Self.clientCredentials(secondSecret)).status == .ok)
                env.clock.advance(by: 3601)
                #expect(try await client.token(Self.clientCredentials(secondSecret)).string("error") == "invalid_client", "past its endDateTime a secret stops")

                let audit = try await client.admin(.get, "/audit", token: admin)
                #expect(
                    audit.text.contains(firstKey) && !audit.text.contains(firstSecret) && !audit.text.contains("secretHash"), "the audit shows key IDs only")

                // A replace without `secrets` keeps them; a keyId that names nothing is refused with its pointer.
                let current = try await client.admin(.get, "/applications/\(Self.appId)", token: admin)
                var body = current.json
                body.removeValue(forKey: "secrets")
                body["displayName"] = "Reports"
                let renamed = try await client.admin(
                    .put, "/applications/\(Self.appId)", token: admin, json: body, headers: [Self.ifMatch: try #require(current.headers[.eTag])])
                #expect(renamed.status == .ok && (renamed["secrets"] as? [Any])?.count == 1, "\(renamed.text)")
                var turnedPublic = body
                turnedPublic["publicClient"] = true
                turnedPublic["allowedGrantTypes"] = ["password"]
                let kept = try await client.admin(.put, "/applications/\(Self.appId)", token: admin, json: turnedPublic, headers: [Self.ifMatch: "*"])
                #expect(
                    kept.status == .badRequest && kept.text.contains("\"/publicClient\""), "its kept secret would make a public client hold one: \(kept.text)")
                body["secrets"] = [["keyId": "00000000-0000-4000-8000-000000000000"]]
                let unknown = try await client.admin(.put, "/applications/\(Self.appId)", token: admin, json: body, headers: [Self.ifMatch: "*"])
                #expect(unknown.status == .badRequest && unknown.text.contains("\"/secrets/0/keyId\""), "\(unknown.text)")
            }
        }
    }

    @Test("a token stops working at once when its client application is deleted, though its user still holds the role (issue 25.13)")
    func deletedClientApplication() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                // Erin's own token through the admin tool: the role is hers, not the tool's.
                let erin = try #require(try await client.token(Grants.adminPassword(Fixtures.admin)).string("access_token"))
                #expect(try await client.admin(.get, "/users", token: erin).status == .ok)
                let assignments = try #require(try await client.admin(.get, "/app-role-assignments", token: erin)["value"] as? [[String: Any]])
                let tool = try #require(assignments.first { $0["principalId"] as? String == Fixtures.adminClientId }?["id"] as? String)
                #expect(try await client.admin(.delete, "/app-role-assignments/\(tool)", token: erin, headers: [Self.ifMatch: "*"]).status == .noContent)
                #expect(try await client.admin(.get, "/users", token: erin).status == .ok, "Erin still holds the role")
                #expect(
                    try await client.admin(.delete, "/applications/\(Fixtures.adminClientId)", token: erin, headers: [Self.ifMatch: "*"]).status == .noContent)
                let after = try await client.admin(.get, "/users", token: erin)
                #expect(after.status == .unauthorized, "a deleted client's tokens are refused on the next request: \(after.status)")
            }
        }
    }

    @Test(
        "validation with pointers; public clients hold no secrets; at most ten; built-in and duplicate identifiers refused; delete refused while named, then the client is gone"
    )
    func validation() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                for (body, pointer) in [
                    (["appId": BuiltInResources.adminAppId.rawValue, "displayName": "x"] as [String: Any], "/appId"),
                    (["appId": Self.appId, "displayName": "x", "identifierUris": [Fixtures.mailResource]], "/identifierUris/0"),
                    (["appId": Self.appId, "displayName": "x", "allowedGrantTypes": ["magic"]], "/allowedGrantTypes/0"),
                    (["appId": Self.appId, "displayName": "x", "publicClient": true, "secrets": [["secret": "s"]]], "/secrets"),
                    (["appId": Self.appId, "displayName": "x", "secrets": [["secret": "s", "endDateTime": "tomorrow"]]], "/secrets/0/endDateTime"),
                    (["appId": "not-a-guid", "displayName": "x"], "/appId"),
                ] {
                    let refused = try await client.admin(.post, "/applications", token: admin, json: body)
                    #expect(refused.status == .badRequest && refused.text.contains("\"\(pointer)\""), "\(body): \(refused.text)")
                }
                #expect(try await client.admin(.post, "/applications/\(Fixtures.mobileClientId)/secrets", token: admin).status == .conflict, "a public client")
                let past = try await client.admin(
                    .post, "/applications/\(Fixtures.daemonClientId)/secrets", token: admin, json: ["endDateTime": "2001-01-01T00:00:00Z"])
                #expect(past.status == .badRequest && past.text.contains("\"/endDateTime\""))
                #expect(try await client.admin(.post, "/applications/\(BuiltInResources.adminAppId)/secrets", token: admin).status == .notFound)
                var statuses: [HTTPResponse.Status] = []
                for _ in 0..<10 { statuses.append(try await client.admin(.post, "/applications/\(Fixtures.daemonClientId)/secrets", token: admin).status) }
                #expect(statuses.filter { $0 == .created }.count == 9 && statuses.last == .conflict, "the daemon had one secret; ten at most: \(statuses)")

                // The daemon holds an app role: it cannot be deleted until that goes.
                #expect(
                    try await client.admin(.delete, "/applications/\(Fixtures.daemonClientId)", token: admin, headers: [Self.ifMatch: "*"]).status == .conflict)
                let created = try await client.admin(
                    .post, "/applications", token: admin,
                    json: [
                        "appId": Self.appId, "displayName": "Temporary", "allowedGrantTypes": ["client_credentials"],
                        "secrets": [["secret": "temporary-secret"]],
                        "identifierUris": ["api://reports"],
                    ])
                #expect(created.status == .created, "\(created.text)")
                #expect(try await client.token(ApplicationAdminTests.clientCredentials("temporary-secret")).status == .ok)
                #expect(try await client.admin(.delete, "/applications/\(Self.appId)", token: admin, headers: [Self.ifMatch: "*"]).status == .noContent)
                #expect(
                    try await client.token(ApplicationAdminTests.clientCredentials("temporary-secret")).errorCode == 700016, "deleted: an unknown application")
            }
        }
    }

    @Test("dryRun answers what a write would do and stores nothing; a plaintext secret or password given again changes nothing")
    func dryRunAndIdempotence() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let app: [String: Any] = [
                    "appId": Self.appId, "displayName": "Idempotent", "allowedGrantTypes": ["client_credentials"],
                    "secrets": [["secret": "same-secret-every-time"]],
                ]
                let planned = try await client.admin(.put, "/applications/\(Self.appId)?dryRun=true", token: admin, json: app)
                #expect(planned.status == .ok && planned.string("action") == "create" && planned["before"] is NSNull, "\(planned.text)")
                #expect(try await client.admin(.get, "/applications/\(Self.appId)", token: admin).status == .notFound, "a dry run stores nothing")
                let created = try await client.admin(
                    .put, "/applications/\(Self.appId)", token: admin, json: app, headers: [HTTPField.Name("If-None-Match")!: "*"])
                #expect(created.status == .created, "\(created.text)")
                let again = try await client.admin(.put, "/applications/\(Self.appId)?dryRun=true", token: admin, json: app)
                #expect(again.string("action") == "unchanged" && again.headers[.eTag] == created.headers[.eTag], "\(again.text)")
                var renamed = app
                renamed["displayName"] = "Renamed"
                #expect(try await client.admin(.put, "/applications/\(Self.appId)?dryRun=true", token: admin, json: renamed).string("action") == "change")

                let user: [String: Any] = [
                    "id": Fixtures.bob.id, "userPrincipalName": Fixtures.bob.upn, "displayName": "Bob", "password": Fixtures.bob.password,
                ]
                let bob = try await client.admin(.put, "/users/\(Fixtures.bob.id)", token: admin, json: user, headers: [Self.ifMatch: "*"])
                #expect(bob.status == .ok)
                let bobAgain = try await client.admin(.put, "/users/\(Fixtures.bob.id)?dryRun=true", token: admin, json: user)
                #expect(bobAgain.string("action") == "unchanged", "the same password keeps its hash: \(bobAgain.text)")
                var changed = user
                changed["password"] = "a-new-password-1"
                #expect(try await client.admin(.put, "/users/\(Fixtures.bob.id)?dryRun=true", token: admin, json: changed).string("action") == "change")
            }
        }
    }
}

@Suite("admin API: app role assignments and the tenant (PROTOCOL §11)")
struct RoleAssignmentAndTenantTests {
    static let ifMatch = HTTPField.Name("If-Match")!

    @Test("every new route: 401 without a token, 403 without the role, nothing shown or changed; 412 on a stale ETag")
    func authorization() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let alice = try await client.token(Grants.adminPassword(Fixtures.alice)).string("access_token") ?? ""
                let routes: [(HTTPRequest.Method, String)] = [
                    (.get, "/applications"), (.post, "/applications"), (.get, "/applications/\(Fixtures.daemonClientId)"),
                    (.put, "/applications/\(Fixtures.daemonClientId)"), (.delete, "/applications/\(Fixtures.daemonClientId)"),
                    (.post, "/applications/\(Fixtures.daemonClientId)/secrets"),
                    (.delete, "/applications/\(Fixtures.daemonClientId)/secrets/00000000-0000-4000-8000-000000000000"),
                    (.get, "/app-role-assignments"), (.post, "/app-role-assignments"), (.get, "/app-role-assignments/00000000-0000-4000-8000-000000000000"),
                    (.put, "/app-role-assignments/00000000-0000-4000-8000-000000000000"),
                    (.delete, "/app-role-assignments/00000000-0000-4000-8000-000000000000"),
                    (.get, "/tenant"), (.put, "/tenant"),
                ]
                for (method, path) in routes {
                    let anonymous = try await client.execute(
                        uri: "/admin/v1\(path)", method: method, headers: [.contentType: "application/json"],
                        body: ByteBuffer(string: "{}")
                    ) { JSONReply($0) }
                    #expect(anonymous.status == .unauthorized, "\(method) \(path): \(anonymous.status)")
                    let forbidden = try await client.admin(method, path, token: alice, json: [:] as [String: Any], headers: [Self.ifMatch: "*"])
                    #expect(forbidden.status == .forbidden && !forbidden.text.contains("secret"), "\(method) \(path): \(forbidden.status)")
                }
                let admin = try await client.adminToken()
                let read = try await client.admin(.get, "/applications/\(Fixtures.daemonClientId)", token: admin)
                let etag = try #require(read.headers[.eTag])
                #expect(
                    try await client.admin(.post, "/applications/\(Fixtures.daemonClientId)/secrets", token: admin, headers: [Self.ifMatch: etag]).status
                        == .created)
                #expect(
                    try await client.admin(.put, "/applications/\(Fixtures.daemonClientId)", token: admin, json: read.json, headers: [Self.ifMatch: etag])
                        .status == .preconditionFailed,
                    "a secret added meanwhile makes the ETag stale")
                #expect(
                    try await client.admin(.post, "/applications/\(Fixtures.daemonClientId)/secrets", token: admin, headers: [Self.ifMatch: etag]).status
                        == .preconditionFailed)
                #expect(try await client.admin(.put, "/applications/\(Fixtures.daemonClientId)", token: admin, json: read.json).status == .preconditionRequired)
            }
        }
    }

    @Test(
        "a role granted works at once and removed stops the next admin request; pointers; one grant stored once; the last administrator is kept unless forced")
    func roleAssignments() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let list = try await client.admin(.get, "/app-role-assignments", token: admin)
                let assignments = try #require(list["value"] as? [[String: Any]])
                #expect(assignments.count == 3 && assignments.allSatisfy { ($0["id"] as? String)?.isGUID == true }, "\(list.text)")

                for (body, pointer) in [
                    (
                        ["principalId": "00000000-0000-4000-8000-00000000dead", "resource": "api://portcullis-admin", "role": "Portcullis.Admin"],
                        "/principalId"
                    ),
                    (["principalId": Fixtures.bob.id, "resource": "api://portcullis-admin", "role": "Portcullis.Owner"], "/role"),
                    (["principalId": Fixtures.bob.id, "resource": "api://nothing", "role": "Portcullis.Admin"], "/resource"),
                ] {
                    let refused = try await client.admin(.post, "/app-role-assignments", token: admin, json: body)
                    #expect(refused.status == .badRequest && refused.text.contains("\"\(pointer)\""), "\(body): \(refused.text)")
                }
                // Bob becomes an administrator: his next token for the admin API works.
                let grant: [String: Any] = ["principalId": Fixtures.bob.id, "resource": BuiltInResources.adminAppId.rawValue, "role": "Portcullis.Admin"]
                let granted = try await client.admin(.post, "/app-role-assignments", token: admin, json: grant)
                #expect(granted.status == .created, "\(granted.text)")
                let grantId = try #require(granted.string("id"))
                var spelledOtherwise = grant
                spelledOtherwise["resource"] = "api://portcullis-admin"
                #expect(
                    try await client.admin(.post, "/app-role-assignments", token: admin, json: spelledOtherwise).status == .conflict, "one grant, stored once")
                let bobToken = try #require(try await client.token(Grants.adminPassword(Fixtures.bob)).string("access_token"))
                #expect(try await client.admin(.get, "/users", token: bobToken).status == .ok)
                #expect(try await client.admin(.delete, "/app-role-assignments/\(grantId)", token: admin, headers: [Self.ifMatch: "*"]).status == .noContent)
                #expect(try await client.admin(.get, "/users", token: bobToken).status == .forbidden, "a removed role stops the next request")
                let audit = try #require(try await client.admin(.get, "/audit", token: admin)["value"] as? [[String: Any]])
                let trail = audit.filter { $0["documentId"] as? String == grantId }.compactMap { $0["action"] as? String }
                #expect(trail == ["delete", "create"], "the grant and its removal are audited, newest first: \(trail)")

                // Of the two remaining administrators, the second to go is refused unless forced.
                let erin = try #require(assignments.first { $0["principalId"] as? String == Fixtures.admin.id }?["id"] as? String)
                let cli = try #require(assignments.first { $0["principalId"] as? String == Fixtures.adminClientId }?["id"] as? String)
                #expect(try await client.admin(.delete, "/app-role-assignments/\(erin)", token: admin, headers: [Self.ifMatch: "*"]).status == .noContent)
                let last = try await client.admin(.delete, "/app-role-assignments/\(cli)", token: admin, headers: [Self.ifMatch: "*"])
                #expect(last.status == .conflict && last.text.contains("lastAdministrator"), "\(last.text)")
                #expect(
                    try await client.admin(.delete, "/app-role-assignments/\(cli)?force=true", token: admin, headers: [Self.ifMatch: "*"]).status == .noContent)
                #expect(try await client.admin(.get, "/users", token: admin).status == .forbidden)
            }
        }
    }

    @Test("the tenant: allowedAccounts enforced at once; If-Match required; the domain cannot change; pointers")
    func tenant() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let read = try await client.admin(.get, "/tenant", token: admin)
                #expect(read.status == .ok && read.string("domain") == Fixtures.domain && read.headers[.eTag] != nil, "\(read.text)")
                var body = read.json
                body["allowedAccounts"] = ["BOB@fabrikam.test"]
                #expect(try await client.admin(.put, "/tenant", token: admin, json: body).status == .preconditionRequired)
                var bad = body
                bad["domain"] = "elsewhere.test"
                bad["allowedAccounts"] = ["bob@fabrikam.test", "not an account"]
                let refused = try await client.admin(.put, "/tenant", token: admin, json: bad, headers: [Self.ifMatch: "*"])
                #expect(
                    refused.status == .badRequest && refused.text.contains("\"/domain\"") && refused.text.contains("\"/allowedAccounts/1\""), "\(refused.text)")
                let updated = try await client.admin(.put, "/tenant", token: admin, json: body, headers: [Self.ifMatch: try #require(read.headers[.eTag])])
                #expect(updated.status == .ok && updated["allowedAccounts"] as? [String] == ["bob@fabrikam.test"], "\(updated.text)")
                let audit = try #require(try await client.admin(.get, "/audit?top=1", token: admin)["value"] as? [[String: Any]])
                #expect(
                    audit.first?["kind"] as? String == "tenant"
                        && (audit.first?["after"] as? [String: Any])?["allowedAccounts"] as? [String] == ["bob@fabrikam.test"]
                        && (audit.first?["before"] as? [String: Any])?["allowedAccounts"] == nil, "before (no list) and after, audited: \(audit)")

                let alice = try await client.complianceToken(Fixtures.alice)
                let enrollment = try await client.mam(.post, "/enrollments", token: alice, json: Device.body())
                #expect(enrollment.status == .forbidden && enrollment["statusCode"] as? Int == 230, "not an allowed account, at once: \(enrollment.text)")
                body["allowedAccounts"] = NSNull()
                #expect(try await client.admin(.put, "/tenant", token: admin, json: body, headers: [Self.ifMatch: "*"]).status == .ok)
                #expect(try await client.mam(.post, "/enrollments", token: alice, json: Device.body()).status == .created, "no list: everyone may enroll")
            }
        }
    }

    @Test("the lock-out guard: approved or protected apps demanded of everyone on every platform is refused unless limited to mobile platforms or forced")
    func appLockoutGuard() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                for control in ["compliantApplication", "approvedApplication"] {
                    let everywhere = Policies.document(
                        id: "a1000000-0000-4000-8000-0000000000e1", name: "Everyone, everything", apps: ["All"], controls: [control])
                    let refused = try await client.admin(.post, "/conditional-access/policies", token: admin, json: everywhere)
                    #expect(
                        refused.status == .badRequest && refused.text.contains("\"/grantControls/builtInControls\"")
                            && refused.text.contains("can never meet it"), "\(refused.text)")
                    let mobile = Policies.document(
                        id: "a1000000-0000-4000-8000-0000000000e2", name: "Mobile only", apps: ["All"], platforms: ["iOS", "android"], controls: [control])
                    #expect(try await client.admin(.post, "/conditional-access/policies", token: admin, json: mobile).status == .created)
                    #expect(
                        try await client.admin(
                            .delete, "/conditional-access/policies/a1000000-0000-4000-8000-0000000000e2", token: admin, headers: [Self.ifMatch: "*"]
                        ).status == .noContent)
                }
                let forced = Policies.document(id: "a1000000-0000-4000-8000-0000000000e3", name: "Forced", apps: ["All"], controls: ["compliantApplication"])
                #expect(try await client.admin(.post, "/conditional-access/policies?force=true", token: admin, json: forced).status == .created)
            }
        }
    }
}
