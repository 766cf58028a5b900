import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PortcullisCore
import PortcullisTesting
import Testing

/// Microsoft's conditional-access templates (PROTOCOL §17): Graph's list, and "create from template" as the portal does it.
@Suite("conditional-access templates and create from template (PROTOCOL §17)")
struct TemplateTests {
    /// A template as compared: OData markup, nulls and empty members left out (the catalogue keeps Graph's meaning only).
    static func normalized(_ value: Any) -> Any? {
        switch value {
        case is NSNull: return nil
        case let object as [String: Any]:
            var out: [String: Any] = [:]
            for (key, member) in object where !key.hasPrefix("@") && !key.contains("@odata") && !key.hasPrefix("#") {
                if let kept = normalized(member) { out[key] = kept }
            }
            return out.isEmpty ? nil : out
        case let array as [Any]:
            return array.isEmpty ? nil : array.compactMap(normalized)
        default: return value
        }
    }

    static func canonical(_ value: Any?) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: value ?? [:], options: [.sortedKeys]), as: UTF8.self)
    }

    @Test("the catalogue is Microsoft's templates as the corpus publishes them, every one, by ID")
    func catalogue() async throws {
        let root = try #require(ConditionalAccessCorpusLocation.root, "the shared corpus is not at ../shared/ca-corpus")
        let folder = root.appendingPathComponent("ms-ca-templates")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".json") }
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let list = try await client.admin(.get, "/conditional-access/templates", token: admin)
                let served = list["value"] as? [[String: Any]] ?? []
                #expect(list.status == .ok && served.count == files.count, "\(served.count) of \(files.count)")
                for file in files {
                    let published = try #require(
                        try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent(file))) as? [String: Any])
                    let id = try #require(published["id"] as? String)
                    let one = try await client.admin(.get, "/conditional-access/templates/\(id.uppercased())", token: admin)
                    #expect(one.status == .ok, "\(file)")
                    for key in ["name", "description", "scenarios"] { #expect(one.string(key) == published[key] as? String, "\(file) \(key)") }
                    #expect(
                        try Self.canonical(Self.normalized(one["details"] ?? [:])) == Self.canonical(Self.normalized(published["details"] ?? [:])), "\(file)")
                }
                #expect(try await client.admin(.get, "/conditional-access/templates/00000000-0000-4000-8000-00000000dead", token: admin).status == .notFound)
            }
        }
    }

    @Test("create from template: report-only, named after it, the current administrator excluded — the signed-in admin, or the one an app names")
    func instantiate() async throws {
        let mfaForAdmins = "c7503427-338e-4c5e-902d-abe252abfb43"
        let legacy = "0b2282f9-2862-4178-88b5-d79340b36cb8"
        let passwordChange = "634b6de7-c38d-4357-a2c7-3842706eedd7"
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let path = { (id: String) in "/conditional-access/templates/\(id)/instantiate" }
                // An app has no object ID: it names the administrator, who must be a user here.
                let anonymous = try await client.admin(.post, path(mfaForAdmins), token: admin, json: [String: Any]())
                #expect(anonymous.status == .badRequest && anonymous.text.contains("\"/currentAdministrator\""), "\(anonymous.text)")
                let stranger = try await client.admin(.post, path(mfaForAdmins), token: admin, json: ["currentAdministrator": "nobody@nowhere.test"])
                #expect(stranger.status == .badRequest && stranger.text.contains("\"/currentAdministrator\""), "\(stranger.text)")
                let dryRun = try await client.admin(.post, path(mfaForAdmins) + "?dryRun=true", token: admin, json: ["currentAdministrator": Fixtures.bob.upn])
                #expect(dryRun.status == .ok && dryRun.string("action") == "create", "\(dryRun.text)")
                let created = try await client.admin(.post, path(mfaForAdmins), token: admin, json: ["currentAdministrator": Fixtures.bob.upn])
                #expect(created.status == .created, "\(created.text)")
                #expect(created.string("displayName") == "Require multifactor authentication for admins")
                #expect(created.string("state") == "enabledForReportingButNotEnforced")
                let users = (created["conditions"] as? [String: Any])?["users"] as? [String: Any]
                #expect(users?["excludeUsers"] as? [String] == [Fixtures.bob.id], "\(created.text)")
                #expect((users?["includeRoles"] as? [String])?.contains(DirectoryRoleDefinition.globalAdministrator.rawValue) == true)
                #expect(created.headers[.location]?.hasPrefix("/admin/v1/conditional-access/policies/") == true)
                let stored = try await client.admin(.get, "/conditional-access/policies/\(try #require(created.string("id")))", token: admin)
                #expect(stored.status == .ok)

                // A Conditional Access Administrator signed in: she is the one excluded, and may enable it at once.
                let assigned = try await client.admin(
                    .post, "/role-management/directory/role-assignments", token: admin,
                    json: ["principalId": Fixtures.alice.id, "roleDefinitionId": DirectoryRoleDefinition.conditionalAccessAdministrator.rawValue])
                #expect(assigned.status == .created, "\(assigned.text)")
                #expect(try await client.listAdminAPI(for: Fixtures.mobileClientId, admin: admin).status == .ok)
                let answer = try await client.token(Grants.password(Fixtures.alice, scope: "api://portcullis-admin/Admin.ReadWrite", claims: nil))
                let alice = try #require(answer.string("access_token"), "\(answer.text)")
                let hers = try await client.admin(.post, path(legacy), token: alice, json: ["state": "enabled", "displayName": "No legacy clients"])
                #expect(hers.status == .created, "\(hers.text)")
                #expect(hers.string("displayName") == "No legacy clients" && hers.string("state") == "enabled")
                #expect(((hers["conditions"] as? [String: Any])?["users"] as? [String: Any])?["excludeUsers"] as? [String] == [Fixtures.alice.id])

                // A Global Reader reads the templates but creates nothing from them.
                _ = try await client.admin(
                    .post, "/role-management/directory/role-assignments", token: admin,
                    json: ["principalId": Fixtures.bob.id, "roleDefinitionId": DirectoryRoleDefinition.globalReader.rawValue])
                let readerAnswer = try await client.token(Grants.password(Fixtures.bob, scope: "api://portcullis-admin/Admin.ReadWrite", claims: nil))
                let reader = try #require(readerAnswer.string("access_token"), "\(readerAnswer.text)")
                #expect(try await client.admin(.get, "/conditional-access/templates", token: reader).status == .ok)
                let readerCreates = try await client.admin(.post, path(legacy), token: reader, json: ["currentAdministrator": Fixtures.bob.id])
                #expect(readerCreates.status == .forbidden, "\(readerCreates.text)")

                // Risk (PROTOCOL §19): Microsoft's password change for high-risk users is created as it stands, report-only.
                let risky = try await client.admin(.post, path(passwordChange), token: admin, json: ["currentAdministrator": Fixtures.bob.id])
                #expect(risky.status == .created && risky["state"] as? String == "enabledForReportingButNotEnforced", "\(risky.text)")
                #expect(try await client.admin(.post, path("00000000-0000-4000-8000-00000000dead"), token: admin, json: [String: Any]()).status == .notFound)
                let query = try await client.admin(
                    .post, path(legacy) + "?unenforceable=sometimes", token: admin, json: ["currentAdministrator": Fixtures.bob.id])
                #expect(query.status == .badRequest && query.text.contains("unenforceable must be"), "\(query.text)")
                let unknown = try await client.admin(.post, path(legacy), token: admin, json: ["currentAdministrator": Fixtures.bob.id, "enabled": true])
                #expect(unknown.status == .badRequest && unknown.text.contains("\"/enabled\""), "\(unknown.text)")
            }
        }
    }
}
