import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PortcullisCore
import PortcullisServer
import PortcullisTesting
import Testing

/// `conditions.authenticationFlows` (PROTOCOL §13): policies that match sign-ins transferred between devices.
enum Flows {
    static let policyId = "a1000000-0000-4000-8000-0000000000fd"

    /// Microsoft's managed "Block device code flow" policy as Graph exports it (every member Graph writes, nulls and
    /// empty lists included), with a group excluded.
    static func microsoftManagedPolicy(excludeGroups: [String] = []) -> [String: Any] {
        let text = """
            {
              "id": "\(policyId)",
              "displayName": "Block device code flow",
              "state": "enabled",
              "sessionControls": null,
              "conditions": {
                "userRiskLevels": [], "signInRiskLevels": [], "clientAppTypes": ["all"], "servicePrincipalRiskLevels": [],
                "platforms": null, "locations": null, "devices": null, "clientApplications": null, "times": null,
                "applications": {"includeApplications": ["All"], "excludeApplications": [], "includeUserActions": [],
                                 "includeAuthenticationContextClassReferences": [], "applicationFilter": null},
                "users": {"includeUsers": ["All"], "excludeUsers": [], "includeGroups": [], "excludeGroups": [\(excludeGroups.map { "\"\($0)\"" }.joined(separator: ","))],
                          "includeRoles": [], "excludeRoles": [], "includeGuestsOrExternalUsers": null, "excludeGuestsOrExternalUsers": null},
                "authenticationFlows": {"transferMethods": "deviceCodeFlow"}
              },
              "grantControls": {"operator": "OR", "builtInControls": ["block"], "customAuthenticationFactors": [], "termsOfUse": [],
                                "authenticationStrength": null}
            }
            """
        return (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
    }

    /// Starts a device code sign-in (with `claims`, if any) and signs `account` in on `/devicelogin` in `browser`: the
    /// device code and the page that answered (a factor step, when one is needed, is for the caller).
    static func signIn(
        _ client: some TestClientProtocol, _ account: Fixtures.Account, claims: String? = nil, browser: Browser = Browser()
    ) async throws -> (deviceCode: String, page: Page) {
        var fields = [("client_id", Fixtures.mobileClientId), ("scope", "\(Fixtures.mailResource)/Mail.Read openid offline_access")]
        if let claims { fields.append(("claims", claims)) }
        let start = try await client.form(DeviceCodeTests.devicePath, fields)
        let deviceCode = try #require(start.string("device_code"), "\(start.text)")
        let entry = try await browser.get(client, "/devicelogin")
        let form = try await browser.submit(client, entry, [("user_code", try #require(start.string("user_code")))])
        let page = try await browser.submit(client, form, [("username", account.upn), ("password", account.password), ("decision", "allow")])
        return (deviceCode, page)
    }
}

@Suite("Authentication flows: device code sign-ins matched and blocked (PROTOCOL §13)")
struct AuthenticationFlowTests {
    @Test(
        "Microsoft's managed 'block device code flow' policy validates unchanged; approval refused (53003) and the device told; other grants and an excluded group unaffected"
    )
    func blockDeviceCode() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let created = try await client.admin(
                    .post, "/conditional-access/policies", token: admin, json: Flows.microsoftManagedPolicy(excludeGroups: [Fixtures.engineeringGroupId]))
                #expect(created.status == .created, "the lock-out guard leaves a device-code-only block alone: \(created.text)")
                let read = try await client.admin(.get, "/conditional-access/policies/\(Flows.policyId)", token: admin)
                #expect(read.text.contains(#""transferMethods":"deviceCodeFlow""#), "\(read.text)")

                let (deviceCode, page) = try await Flows.signIn(client, Fixtures.bob)
                #expect(page.status == .forbidden && page.shownCode == 53003, "\(page.html)")
                env.clock.advance(by: 6)
                let poll = try await client.token(DeviceCodeTests.poll(deviceCode))
                #expect(poll.string("error") == "access_denied", "the device stops polling (RFC 8628 §3.5): \(poll.text)")

                // The same user, another flow: not matched.
                #expect(try await client.token(Grants.password(Fixtures.bob, claims: nil)).status == .ok)
                // A member of the excluded group signs in with a device code.
                let (carolCode, carolPage) = try await Flows.signIn(client, Fixtures.carol)
                #expect(carolPage.status == .ok && carolPage.html.contains("signed in"), "\(carolPage.html)")
                env.clock.advance(by: 6)
                #expect(try await client.token(DeviceCodeTests.poll(carolCode)).status == .ok)
            }
        }
    }

    @Test("the device code grant itself: approved before the policy, refused at redemption (53003); what-if and the sign-in log say which flow")
    func grantAndWhatIf() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let (deviceCode, page) = try await Flows.signIn(client, Fixtures.alice)
                #expect(page.status == .ok, "\(page.html)")
                #expect(try await client.admin(.post, "/conditional-access/policies", token: admin, json: Flows.microsoftManagedPolicy()).status == .created)
                env.clock.advance(by: 6)
                let refused = try await client.token(DeviceCodeTests.poll(deviceCode))
                #expect(refused.status == .badRequest && refused.errorCode == 53003, "\(refused.text)")

                var signIn: [String: Any] = ["userId": Fixtures.alice.upn, "clientAppId": Fixtures.mobileClientId, "resourceAppId": Fixtures.mailResource]
                let plain = try await client.admin(.post, "/conditional-access/evaluate", token: admin, json: ["signIn": signIn])
                let policies = try #require((plain["signIn"] as? [String: Any])?["appliedConditionalAccessPolicies"] as? [[String: Any]])
                #expect(policies.first?["conditionsNotSatisfied"] as? [String] == ["authenticationFlows"], "\(plain.text)")
                signIn["transferMethod"] = "deviceCodeFlow"
                let transferred = try await client.admin(.post, "/conditional-access/evaluate", token: admin, json: ["signIn": signIn])
                #expect((transferred["signIn"] as? [String: Any])?["errorCode"] as? Int == 53003, "\(transferred.text)")
                signIn["transferMethod"] = "carrierPigeon"
                let bad = try await client.admin(.post, "/conditional-access/evaluate", token: admin, json: ["signIn": signIn])
                #expect(bad.status == .badRequest && bad.text.contains("/signIn/transferMethod"), "\(bad.text)")
            }
        }
    }

    @Test("the console's what-if: the device code box makes the device-code policy apply")
    func consoleWhatIf() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                try await ConsoleTests.grantAdmin(client, Fixtures.alice)
                let admin = try await client.adminToken()
                #expect(try await client.admin(.post, "/conditional-access/policies", token: admin, json: Flows.microsoftManagedPolicy()).status == .created)
                let (browser, _) = try await ConsoleTests.signIn(client, Fixtures.alice, base: env.configuration.baseURL)
                let csrf = try #require(try await browser.get(client, "/admin/what-if").input("csrf"))
                func evaluate(_ extra: [(String, String)]) async throws -> Page {
                    try await browser.post(
                        client, "/admin/what-if",
                        [("csrf", csrf), ("user", Fixtures.bob.upn), ("app", Fixtures.mobileClientId), ("resource", Fixtures.mailResource)] + extra)
                }
                let plain = try await evaluate([])
                #expect(plain.html.contains("Allowed") && plain.html.contains("conditions not met: authenticationFlows"), "\(plain.html)")
                let transferred = try await evaluate([("deviceCode", "1")])
                #expect(transferred.html.contains("Refused") && transferred.html.contains("53003"), "\(transferred.html)")
            }
        }
    }

    @Test("validation: unknown transfer methods and workload-identity policies refused with pointers; the value round-trips in Graph's shape")
    func validation() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                var policy = Flows.microsoftManagedPolicy()
                var conditions = try #require(policy["conditions"] as? [String: Any])
                conditions["authenticationFlows"] = ["transferMethods": "deviceCodeFlow, smokeSignals"]
                policy["conditions"] = conditions
                let unknown = try await client.admin(.post, "/conditional-access/policies", token: admin, json: policy)
                #expect(
                    unknown.status == .badRequest && unknown.text.contains("/conditions/authenticationFlows/transferMethods")
                        && unknown.text.contains("smokeSignals"), "\(unknown.text)")
                conditions["authenticationFlows"] = ["transferMethods": "authenticationTransfer,deviceCodeFlow", "extra": 1]
                policy["conditions"] = conditions
                let extra = try await client.admin(.post, "/conditional-access/policies", token: admin, json: policy)
                #expect(extra.status == .badRequest && extra.text.contains("/conditions/authenticationFlows/extra"), "\(extra.text)")
                conditions["authenticationFlows"] = ["transferMethods": "authenticationTransfer,deviceCodeFlow"]
                policy["conditions"] = conditions
                let both = try await client.admin(.post, "/conditional-access/policies", token: admin, json: policy)
                #expect(both.status == .created, "\(both.text)")
                let read = try await client.admin(.get, "/conditional-access/policies/\(Flows.policyId)", token: admin)
                #expect(read.text.contains(#""transferMethods":"deviceCodeFlow,authenticationTransfer""#), "\(read.text)")
            }
        }
    }
}
