import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PortcullisCore
import PortcullisTesting
import Testing

@Suite("conditional access as admins export it, through the admin API (PROTOCOL §17)")
struct ExportedPolicyTests {
    static let ifMatch = HTTPField.Name("If-Match")!

    /// A corpus file as published, its foreign object IDs replaced by this directory's (what `--map` does).
    static func exported(_ name: String, mapping: [String: String]) throws -> Any {
        let root = try #require(ConditionalAccessCorpusLocation.root, "the shared corpus is not at ../shared/ca-corpus")
        var text = try String(contentsOf: root.appendingPathComponent(name), encoding: .utf8)
        for (foreign, local) in mapping { text = text.replacingOccurrences(of: foreign, with: local) }
        return try JSONSerialization.jsonObject(with: Data(text.utf8))
    }

    /// One of Microsoft's templates made as the portal makes it (`ConditionalAccessTemplate`: its details and name, the
    /// current administrator excluded), then enabled.
    static func template(_ file: String, administrator: String) throws -> Any {
        let root = try #require(ConditionalAccessCorpusLocation.root, "the shared corpus is not at ../shared/ca-corpus")
        let published = try #require(JSONValue.parse(Data(contentsOf: root.appendingPathComponent("ms-ca-templates/\(file)"))))
        let policy = try #require(ConditionalAccessTemplate(published)).policy(state: .enabled, administrator: administrator)
        return try JSONSerialization.jsonObject(with: JSONEncoder().encode(policy))
    }

    @Test("a Graph export (OData markup, read-only members, nulls) is accepted as published and enforced; legacy clients match no sign-in")
    func graphExport() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                var groups: [String] = []
                for (name, members) in [("Break glass", [String]()), ("Service accounts", []), ("Internals", [Fixtures.alice.id])] {
                    let created = try await client.admin(.post, "/groups", token: admin, json: ["displayName": name, "members": members])
                    groups.append(try #require(created.string("id"), "\(created.text)"))
                }
                // CA002: block legacy authentication for All users but two groups.
                let legacy = try Self.exported(
                    "j0eyv-baseline/CA002-Global-IdentityProtection-AnyApp-AnyPlatform-Block-LegacyAuthentication.json",
                    mapping: ["2802b872-ccfb-4b29-a9a9-459808dfb11b": groups[0], "8861a932-f1d1-4d1d-a5e6-cdce20fada27": groups[1]])
                let created = try await client.admin(.post, "/conditional-access/policies", token: admin, json: legacy)
                #expect(created.status == .created, "\(created.text)")
                #expect(!created.text.contains("@odata") && !created.text.contains("#microsoft.graph"), "markup is not stored: \(created.text)")
                let conditions = created["conditions"] as? [String: Any]
                #expect(conditions?["clientAppTypes"] as? [String] == ["exchangeActiveSync", "other"])
                #expect(try await client.token(Grants.password(claims: nil)).status == .ok, "no sign-in here is a legacy client")

                // CA200: MFA for the internals group (Alice), two groups excluded.
                let mfa = try Self.exported(
                    "j0eyv-baseline/CA200-Internals-IdentityProtection-AnyApp-AnyPlatform-MFA.json",
                    mapping: [
                        "ceeac9b8-ddf5-48cb-afcb-e2ab8bfd1a57": groups[2], "cfa1f128-ec48-4ee1-9ea9-1c28fdb57722": groups[1],
                        "2802b872-ccfb-4b29-a9a9-459808dfb11b": groups[0],
                    ])
                let second = try await client.admin(.post, "/conditional-access/policies?force=true", token: admin, json: mfa)
                #expect(second.status == .created, "\(second.text)")
                #expect(try await client.token(Grants.password(claims: nil)).errorCode == 50076, "Alice is an internal: MFA required")

                // Strictness stays: the corpus's one real typo is refused at its pointer.
                guard var typo = legacy as? [String: Any] else { return }
                typo["id"] = nil
                typo["GrantControls"] = [String: Any]()
                let refused = try await client.admin(.post, "/conditional-access/policies", token: admin, json: typo)
                #expect(refused.status == .badRequest && refused.text.contains("\"/GrantControls\""), "\(refused.text)")
            }
        }
    }

    @Test("directory roles: Entra's definitions, assignments through the admin API, and Microsoft's template for admins enforced on holders only")
    func directoryRoles() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let definitions = try await client.admin(.get, "/role-management/directory/role-definitions", token: admin)
                let roles = definitions["value"] as? [[String: Any]] ?? []
                #expect(roles.count >= 120, "\(definitions.text.prefix(200))")
                let globalAdmin = DirectoryRoleDefinition.globalAdministrator.rawValue
                let one = try await client.admin(.get, "/role-management/directory/role-definitions/\(globalAdmin.uppercased())", token: admin)
                #expect(one.string("displayName") == "Global Administrator" && one.string("templateId") == globalAdmin && one["isBuiltIn"] as? Bool == true)

                let path = "/role-management/directory/role-assignments"
                for (body, pointer) in [
                    (["principalId": Fixtures.alice.id, "roleDefinitionId": "00000000-0000-4000-8000-00000000dead"], "/roleDefinitionId"),
                    (["principalId": "00000000-0000-4000-8000-00000000dead", "roleDefinitionId": globalAdmin], "/principalId"),
                    (["principalId": Fixtures.alice.id, "roleDefinitionId": globalAdmin, "directoryScopeId": "/administrativeUnits/x"], "/directoryScopeId"),
                ] {
                    let refused = try await client.admin(.post, path, token: admin, json: body)
                    #expect(refused.status == .badRequest && refused.text.contains("\"\(pointer)\""), "\(pointer): \(refused.text)")
                }
                let assigned = try await client.admin(
                    .post, path, token: admin, json: ["principalId": Fixtures.alice.id.uppercased(), "roleDefinitionId": globalAdmin, "directoryScopeId": "/"])
                #expect(assigned.status == .created, "\(assigned.text)")
                let assignmentId = try #require(assigned.string("id"))
                #expect(assigned.string("principalId") == Fixtures.alice.id)

                // Microsoft's template, made as the portal makes it (then enabled), the current administrator Bob.
                let created = try await client.admin(
                    .post, "/conditional-access/policies", token: admin,
                    json: try Self.template("Require-multifactor-authentication-for-admins.json", administrator: Fixtures.bob.id))
                #expect(created.status == .created, "\(created.text)")
                #expect(try await client.token(Grants.password(claims: nil)).errorCode == 50076, "Alice holds Global Administrator: MFA")
                #expect(try await client.token(Grants.password(Fixtures.bob, claims: nil)).status == .ok, "Bob holds no role")

                let deleteUser = try await client.admin(.delete, "/users/\(Fixtures.alice.id)", token: admin, headers: [Self.ifMatch: "*"])
                #expect(deleteUser.status == .conflict && deleteUser.text.contains("Global Administrator"), "\(deleteUser.text)")
                let removed = try await client.admin(.delete, "\(path)/\(assignmentId)", token: admin, headers: [Self.ifMatch: "*"])
                #expect(removed.status == .noContent || removed.status == .ok, "\(removed.text)")
                #expect(try await client.token(Grants.password(claims: nil)).status == .ok, "the role removed: the policy no longer applies, at once")
            }
        }
    }

    @Test("application groups: Office365 follows the applications' tags at once; MicrosoftAdminPortals is the admin API (what-if)")
    func applicationGroups() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let policy: [String: Any] = [
                    "displayName": "MFA for Office 365", "state": "enabled",
                    "conditions": [
                        "users": ["includeUsers": [Fixtures.alice.id]], "applications": ["includeApplications": ["Office365"]],
                        "clientAppTypes": ["all"],
                    ],
                    "grantControls": ["operator": "OR", "builtInControls": ["mfa"]],
                ]
                #expect(try await client.admin(.post, "/conditional-access/policies", token: admin, json: policy).status == .created)
                #expect(try await client.token(Grants.password(claims: nil)).status == .ok, "no application is tagged Office365 yet")

                let mail = try await client.admin(.get, "/applications/\(Fixtures.mailApiId)", token: admin)
                var body = try #require(try JSONSerialization.jsonObject(with: Data(mail.text.utf8)) as? [String: Any])
                body["tags"] = ["Office365", "Office365"]
                let tagged = try await client.admin(
                    .put, "/applications/\(Fixtures.mailApiId)", token: admin, json: body, headers: [Self.ifMatch: try #require(mail.headers[.eTag])])
                #expect(tagged.status == .ok && tagged["tags"] as? [String] == ["Office365"], "\(tagged.text)")
                #expect(try await client.token(Grants.password(claims: nil)).errorCode == 50076, "the mail API is in Office365 now: MFA")
                body["tags"] = [String](repeating: "t", count: 51).enumerated().map { "t\($0.offset)" }
                let tooMany = try await client.admin(
                    .put, "/applications/\(Fixtures.mailApiId)", token: admin, json: body, headers: [Self.ifMatch: try #require(tagged.headers[.eTag])])
                #expect(tooMany.status == .badRequest && tooMany.text.contains("\"/tags\""), "\(tooMany.text)")

                let portals: [String: Any] = [
                    "id": "a1000000-0000-4000-8000-0000000000a9", "displayName": "Block admin portals", "state": "enabled",
                    "conditions": [
                        "users": ["includeUsers": [Fixtures.bob.id]], "applications": ["includeApplications": ["MicrosoftAdminPortals"]],
                    ],
                    "grantControls": ["operator": "OR", "builtInControls": ["block"]],
                ]
                for (resource, code) in [(BuiltInResources.adminIdentifier, 53003), (Fixtures.mailResource, nil)] as [(String, Int?)] {
                    let answer = try await client.admin(
                        .post, "/conditional-access/evaluate", token: admin,
                        json: [
                            "signIn": ["userId": Fixtures.bob.upn, "clientAppId": Fixtures.mobileClientId, "resourceAppId": resource],
                            "policies": [portals],
                        ])
                    #expect(answer.status == .ok, "\(answer.text)")
                    #expect((answer["signIn"] as? [String: Any])?["errorCode"] as? Int == code, "\(resource): \(answer.text)")
                }
            }
        }
    }

    @Test("a browser without MSAL's headers has the platform its User-Agent names: Microsoft's 'block unknown platforms' lets it in")
    func platformFromUserAgent() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let created = try await client.admin(
                    .post, "/conditional-access/policies", token: admin,
                    json: try Self.template("Block-access-for-unknown-or-unsupported-device-platform.json", administrator: Fixtures.admin.id))
                #expect(created.status == .created, "\(created.text)")
                let grant = Grants.password(Fixtures.bob, claims: nil)
                let unknown = try await client.token(grant, headers: [.userAgent: "python-requests/2.32.3"])
                #expect(unknown.errorCode == 53003, "no platform at all: blocked, as Entra does: \(unknown.text)")
                let browser = try await client.token(
                    grant, headers: [.userAgent: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36"])
                #expect(browser.status == .ok, "Windows, read from the User-Agent: \(browser.text)")

                // The sign-in page reads it too: a policy blocking iPhones blocks Bob's iPhone browser and not his Mac's.
                let iPhones = Policies.document(
                    id: "a1000000-0000-4000-8000-0000000000a7", name: "Block iPhones", users: [Fixtures.bob.id], platforms: ["iOS"], controls: ["block"])
                #expect(try await client.admin(.post, "/conditional-access/policies", token: admin, json: iPhones).status == .created)
                let phone = Browser(userAgent: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148")
                let blocked = try await phone.signIn(client, account: Fixtures.bob)
                #expect(blocked.status == .forbidden && blocked.shownCode == 53003, "\(blocked.html.prefix(300))")
                let mac = Browser(
                    userAgent: "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_1) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Safari/605.1.15")
                #expect(try await mac.signIn(client, account: Fixtures.bob).delivered["code"] != nil)
            }
        }
    }

    @Test("applicationEnforcedRestrictions: Microsoft's template (Office365 apps) puts xms_app_res in the access token for those apps only")
    func applicationEnforcedRestrictions() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let mail = try await client.admin(.get, "/applications/\(Fixtures.mailApiId)", token: admin)
                var body = mail.json
                body["tags"] = ["Office365"]
                #expect(
                    try await client.admin(.put, "/applications/\(Fixtures.mailApiId)", token: admin, json: body, headers: [Self.ifMatch: "*"]).status == .ok)
                let created = try await client.admin(
                    .post, "/conditional-access/policies", token: admin,
                    json: try Self.template("Use-application-enforced-restrictions-for-O365-apps.json", administrator: Fixtures.admin.id))
                #expect(created.status == .created, "\(created.text)")

                let restricted = try await client.token(Grants.password(claims: nil))
                let claims = jwtClaims(try #require(restricted.string("access_token"), "\(restricted.text)"))
                #expect(claims["xms_app_res"] as? Bool == true, "\(claims)")
                let openid = try await client.token(Grants.password(scope: "openid profile", claims: nil))
                #expect(jwtClaims(try #require(openid.string("access_token"), "\(openid.text)"))["xms_app_res"] == nil, "not an Office365 app")
                let log = try await client.admin(.get, "/sign-ins", token: admin)
                #expect(log.text.contains("ApplicationEnforcedRestrictions"), "the sign-in log names the session control")
            }
        }
    }

    @Test("guests: a user of userType Guest meets Microsoft's 'Require MFA for guest access'; members do not")
    func guests() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let visitor = Fixtures.Account(id: "f0000000-0000-4000-8000-0000000000a5", upn: "visitor@fabrikam.test", password: "visitor-pass-1")
                let wrong = try await client.admin(
                    .post, "/users", token: admin,
                    json: ["id": visitor.id, "userPrincipalName": visitor.upn, "displayName": "Visitor", "password": visitor.password, "userType": "Visitor"])
                #expect(wrong.status == .badRequest && wrong.text.contains("\"/userType\""), "\(wrong.text)")
                let created = try await client.admin(
                    .post, "/users", token: admin,
                    json: ["id": visitor.id, "userPrincipalName": visitor.upn, "displayName": "Visitor", "password": visitor.password, "userType": "Guest"])
                #expect(created.status == .created && created.string("userType") == "Guest", "\(created.text)")
                let policy = try await client.admin(
                    .post, "/conditional-access/policies", token: admin,
                    json: try Self.template("Require-multifactor-authentication-for-guest-access.json", administrator: Fixtures.admin.id))
                #expect(policy.status == .created, "\(policy.text)")
                #expect(try await client.token(Grants.password(visitor, claims: nil)).errorCode == 50076, "the guest: MFA")
                #expect(try await client.token(Grants.password(Fixtures.bob, claims: nil)).status == .ok, "a member: not a guest")
            }
        }
    }
}
