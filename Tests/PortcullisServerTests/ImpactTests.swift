import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PortcullisCore
import PortcullisTesting
import Testing

@Suite("impact of a draft (PROTOCOL §11): stored sign-ins replayed, nothing enforced")
struct ImpactTests {
    @Test("real sign-ins, then drafts: a block for one user counts only theirs; MFA for everyone counts every password sign-in; nothing is enforced")
    func replay() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let noPlatform = Grants.password(claims: nil)
                #expect(try await client.token(noPlatform).status == .ok)
                #expect(try await client.token(Grants.password(Fixtures.bob, claims: nil)).status == .ok)
                #expect(try await client.token(Grants.password(Fixtures.carol, claims: nil)).status == .ok)
                #expect(try await client.token(Grants.password(Fixtures.carol, claims: nil)).status == .ok)
                #expect(try await client.token(Grants.clientCredentials()).status == .ok)
                let admin = try await client.adminToken()
                let logged = try #require(try await client.admin(.get, "/sign-ins", token: admin)["value"] as? [[String: Any]])
                let evaluated = logged.count

                let blockCarol = Policies.document(
                    id: "a1000000-0000-4000-8000-0000000000c1", name: "Block Carol from mail", users: [Fixtures.carol.id], controls: ["block"])
                let answer = try await client.admin(.post, "/conditional-access/impact", token: admin, json: ["policies": [blockCarol]])
                #expect(answer.status == .ok, "\(answer.text)")
                #expect(answer["evaluated"] as? Int == evaluated)
                let summary = try #require(answer["summary"] as? [String: Int])
                #expect(summary["newlyRefused"] == 2 && summary["newlyAllowed"] == 0 && summary["changed"] == 0, "\(summary)")
                #expect(summary["unchanged"] == evaluated - 2)
                let changes = try #require(answer["changes"] as? [[String: Any]])
                #expect(changes.count == 2 && changes.allSatisfy { $0["userId"] as? String == Fixtures.carol.id })
                let after = try #require(changes.first?["after"] as? [String: Any])
                #expect(after["refusal"] as? String == "block" && (after["policyIds"] as? [String]) == ["a1000000-0000-4000-8000-0000000000c1"])
                #expect((changes.first?["before"] as? [String: Any])?["refusal"] == nil)

                // MFA for everyone on mail: the three password sign-ins to mail had no second factor.
                let mfa = Policies.document(id: "a1000000-0000-4000-8000-0000000000c2", name: "MFA for mail", users: ["All"], controls: ["mfa"])
                let everyone = try await client.admin(.post, "/conditional-access/impact", token: admin, json: ["policies": [mfa], "top": 100])
                #expect((everyone["summary"] as? [String: Int])?["newlyRefused"] == 4, "\(everyone.text)")

                // A window before the sign-ins holds none; top bounds how many are replayed.
                let past = try await client.admin(
                    .post, "/conditional-access/impact", token: admin,
                    json: [
                        "policies": [blockCarol], "from": "2020-01-01T00:00:00Z", "to": "2020-01-02T00:00:00Z",
                    ])
                #expect(past["evaluated"] as? Int == 0, "\(past.text)")
                let two = try await client.admin(.post, "/conditional-access/impact", token: admin, json: ["policies": [blockCarol], "top": 2])
                #expect(two["evaluated"] as? Int == 2)

                // Nothing was enforced or stored.
                #expect(try await client.token(Grants.password(Fixtures.carol, claims: nil)).status == .ok)
                #expect(try #require(try await client.admin(.get, "/conditional-access/policies", token: admin)["value"] as? [Any]).count == 0)

                // Bad input: pointers, never a 500.
                for (body, pointer) in [
                    (["policies": []] as [String: Any], "/policies"), (["top": 5] as [String: Any], "/policies"),
                    (["policies": [blockCarol], "from": "yesterday"], "/from"), (["policies": [blockCarol], "top": 0], "/top"),
                    (["policies": [blockCarol], "from": "2026-01-02T00:00:00Z", "to": "2026-01-01T00:00:00Z"], "/from"),
                    (["policies": [["displayName": "x"]]], "/policies/0"), (["policies": [blockCarol], "extra": 1], "/extra"),
                ] {
                    let refused = try await client.admin(.post, "/conditional-access/impact", token: admin, json: body)
                    #expect(refused.status == .badRequest && refused.text.contains("\"\(pointer)"), "\(body): \(refused.text)")
                }
            }
        }
    }

    @Test("a record's facts replay as the sign-in's own: the same decision as at the token endpoint")
    func factsRoundTrip() throws {
        let directory = try #require(try DirectoryDocument.parse(Fixtures.directoryJSON()).snapshots(revision: 1).first)
        let policy = try ConditionalAccessPolicy.parse(
            .object([
                "id": .string("a1000000-0000-4000-8000-0000000000c3"), "displayName": .string("MFA on iOS outside nowhere"), "state": .string("enabled"),
                "conditions": .object([
                    "users": .object(["includeUsers": .array([.string("All")])]),
                    "applications": .object(["includeApplications": .array([.string(Fixtures.mailApiId)])]),
                    "platforms": .object(["includePlatforms": .array([.string("iOS")])]),
                ]),
                "grantControls": .object(["operator": .string("AND"), "builtInControls": .array([.string("mfa"), .string("compliantApplication")])]),
            ]), directory: directory, generatedId: "unused")
        let set = CompiledPolicySet(policies: [policy], namedLocations: directory.namedLocations)
        for mfa in [false, true] {
            for protection in [SignInFacts.AppProtection.none, .notCompliant, .compliant(enrollmentId: "e")] {
                let facts = SignInFacts(
                    userId: ObjectID(Fixtures.alice.id), groupIds: directory.groupIds(ofUser: ObjectID(Fixtures.alice.id)),
                    clientAppId: AppID(Fixtures.mobileClientId),
                    resourceAppId: AppID(Fixtures.mailApiId), platform: .iOS, ipAddress: IPAddress("203.0.113.9"), capabilities: ["protapp"],
                    appProtection: protection, approvedClientApp: directory.application(appId: AppID(Fixtures.mobileClientId))?.approvedClientApp ?? false,
                    authentication: AuthenticationContext(methods: mfa ? ["pwd", "mfa"] : ["pwd"], time: nil))
                let decision = set.evaluate(facts)
                let record = SignInRecord(
                    id: "r", createdDateTime: Date(), correlationId: "c", tenantId: TenantID(Fixtures.tenantId), userId: ObjectID(Fixtures.alice.id),
                    userPrincipalName: nil,
                    clientAppId: AppID(Fixtures.mobileClientId), resourceAppId: AppID(Fixtures.mailApiId), resource: nil, grantType: "password",
                    clientAppType: facts.clientAppType.rawValue, capabilities: facts.capabilities, ipAddress: facts.ipAddress?.description,
                    platform: facts.platform?.rawValue, appProtection: protection.label, conditionalAccessStatus: decision.status,
                    appliedConditionalAccessPolicies: decision.policies, errorCode: nil, authenticationMethods: mfa ? ["pwd", "mfa"] : ["pwd"])
                #expect(set.evaluate(ImpactAnalysis.facts(of: record, directory: directory)) == decision, "mfa \(mfa), \(protection)")
            }
        }
    }
}
