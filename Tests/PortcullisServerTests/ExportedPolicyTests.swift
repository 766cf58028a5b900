import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PortcullisCore
import PortcullisTesting
import Testing

@Suite("conditional access as admins export it, through the admin API (PROTOCOL §17)")
struct ExportedPolicyTests {
    /// A corpus file as published, its foreign object IDs replaced by this directory's (what `--map` does).
    static func exported(_ name: String, mapping: [String: String]) throws -> Any {
        let root = try #require(ConditionalAccessCorpusLocation.root, "the shared corpus is not at ../shared/ca-corpus")
        var text = try String(contentsOf: root.appendingPathComponent(name), encoding: .utf8)
        for (foreign, local) in mapping { text = text.replacingOccurrences(of: foreign, with: local) }
        return try JSONSerialization.jsonObject(with: Data(text.utf8))
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
}
