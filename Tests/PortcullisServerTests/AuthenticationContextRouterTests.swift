import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PortcullisCore
import PortcullisServer
import PortcullisTesting
import Testing

/// Step-up by authentication context (PROTOCOL §13) through the router: the documents, the policy, the `acrs` claims
/// request on grants, on `/authorize` and on the device code, `acrs` in tokens, `acr_values` and `max_age`.
enum StepUp {
    static let policyId = "a1000000-0000-4000-8000-0000000000c1"
    static let c1 = #"{"access_token":{"acrs":{"essential":true,"value":"c1"},"xms_cc":{"values":["cp1"]}}}"#
    static let c2 = #"{"access_token":{"acrs":{"essential":true,"value":"c2"}}}"#

    /// c1 (available) and c2 (not yet), and a policy: Bob needs mfa for c1.
    static func prepare(_ client: some TestClientProtocol) async throws -> String {
        let admin = try await client.adminToken()
        let c1 = try await client.admin(
            .post, "/authentication-context-class-references", token: admin,
            json: ["displayName": "Sensitive actions", "description": "Payroll changes", "isAvailable": true])
        #expect(c1.status == .created && c1.string("id") == "c1", "the lowest free ID: \(c1.text)")
        let c2 = try await client.admin(
            .put, "/authentication-context-class-references/c2", token: admin, json: ["displayName": "Not yet published"], headers: [.ifNoneMatch: "*"])
        #expect(c2.status == .created, "\(c2.text)")
        let policy: [String: Any] = [
            "id": policyId, "displayName": "Step-up for sensitive actions", "state": "enabled",
            "conditions": [
                "users": ["includeUsers": [Fixtures.bob.id]],
                "applications": ["includeApplications": [], "includeAuthenticationContextClassReferences": ["c1"]],
                "clientAppTypes": ["all"],
            ],
            "grantControls": ["operator": "OR", "builtInControls": ["mfa"]],
        ]
        let created = try await client.admin(.post, "/conditional-access/policies", token: admin, json: policy)
        #expect(created.status == .created, "\(created.text)")
        return admin
    }
}

@Suite("Authentication contexts: step-up (PROTOCOL §13, RFC 9470)")
struct AuthenticationContextRouterTests {
    @Test(
        "a grant without acrs is not stepped up; asking for c1 needs the factor (50076); the page registers it; the token carries acrs c1, and refreshes keep it unasked"
    )
    func stepUp() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await StepUp.prepare(client)
                let plain = try await client.token(Grants.password(Fixtures.bob))
                #expect(plain.status == .ok, "\(plain.text)")
                #expect(jwtClaims(try #require(plain.string("access_token")))["acrs"] == nil)

                // The resource challenges; the client asks for c1 on its refresh: 50076, go interactive.
                let asked = try await client.token(Grants.refresh(try #require(plain.string("refresh_token")), claims: StepUp.c1))
                #expect(asked.status == .badRequest && asked.errorCode == 50076 && asked.string("suberror") == "basic_action", "\(asked.text)")

                // Interactively, with the claims on /authorize and on the redemption (as MSAL sends them): the factor is asked.
                let browser = Browser()
                let page = try await browser.signIn(client, Authorize.query(extra: [("claims", StepUp.c1)]), account: Fixtures.bob)
                let secret = try #require(Factor.secret(page), "c1 needs mfa: the page registers a factor: \(page.html)")
                let done = try await browser.submit(client, page, [("otp", Factor.code(secret, env.clock))])
                let tokens = try await client.token(Authorize.redeem(try #require(done.delivered["code"]), claims: StepUp.c1))
                #expect(tokens.status == .ok, "\(tokens.text)")
                let access = jwtClaims(try #require(tokens.string("access_token")))
                #expect(access["acrs"] as? [String] == ["c1"] && access["amr"] as? [String] == ["pwd", "mfa"], "\(access)")

                // A later refresh asks for nothing: c1 is met by this authentication and added unasked.
                let later = try await client.token(Grants.refresh(try #require(tokens.string("refresh_token"))))
                #expect(jwtClaims(try #require(later.string("access_token")))["acrs"] as? [String] == ["c1"], "\(later.text)")

                // The sign-in log says which was asked for and which was met already.
                let log = try await client.admin(.get, "/sign-ins?user=\(Fixtures.bob.id)", token: admin)
                let records = log.json["value"] as? [[String: Any]] ?? []
                let details = records.compactMap { $0["authenticationContextClassReferences"] as? [[String: Any]] }.map {
                    $0.map { "\($0["id"] ?? "")/\($0["detail"] ?? "")" }
                }
                #expect(details.contains(["c1/required"]) && details.contains(["c1/previouslySatisfied"]), "\(details)")

                // What-if shows the same.
                let whatIf = try await client.admin(
                    .post, "/conditional-access/evaluate", token: admin,
                    json: [
                        "signIn": [
                            "userId": Fixtures.bob.id, "clientAppId": Fixtures.mobileClientId, "resourceAppId": Fixtures.mailResource,
                            "authenticationContexts": ["c1"],
                        ]
                    ])
                #expect(whatIf.status == .ok && whatIf.string("error") == "invalid_grant", "\(whatIf.text)")
            }
        }
    }

    @Test("contexts the tenant does not offer are refused on grants, /authorize and /devicecode; apps alone cannot ask; a context in use cannot be deleted")
    func refusals() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await StepUp.prepare(client)
                let unavailable = try await client.token(Grants.password(Fixtures.alice, claims: StepUp.c2))
                #expect(unavailable.status == .badRequest && unavailable.string("error") == "invalid_request", "\(unavailable.text)")
                #expect(unavailable.string("error_description")?.contains("c2") == true)
                let undefined = try await client.token(Grants.password(Fixtures.alice, claims: #"{"access_token":{"acrs":{"value":"c9"}}}"#))
                #expect(undefined.status == .badRequest && undefined.string("error") == "invalid_request")
                let malformed = try await client.token(Grants.password(Fixtures.alice, claims: #"{"access_token":{"acrs":{"value":"high"}}}"#))
                #expect(malformed.status == .badRequest && malformed.string("error") == "invalid_request")
                let appOnly = try await client.token(Grants.clientCredentials() + [("claims", StepUp.c1)])
                #expect(appOnly.status == .badRequest && appOnly.string("error") == "invalid_request", "\(appOnly.text)")

                let page = try await Browser().get(client, Authorize.query(extra: [("claims", StepUp.c2)]))
                #expect(page.status == .found && page.delivered["error"] == "invalid_request" && page.delivered["state"] == "state-123", "\(page.delivered)")
                let device = try await client.form(
                    DeviceCodeTests.devicePath,
                    [("client_id", Fixtures.mobileClientId), ("scope", "\(Fixtures.mailResource)/Mail.Read"), ("claims", StepUp.c2)])
                #expect(device.status == .badRequest && device.string("error") == "invalid_request", "\(device.text)")

                let inUse = try await client.admin(.delete, "/authentication-context-class-references/c1", token: admin, headers: [.ifMatch: "*"])
                #expect(inUse.status == .conflict, "\(inUse.text)")
                let bad = try await client.admin(
                    .put, "/authentication-context-class-references/c100", token: admin, json: ["displayName": "x"], headers: [.ifNoneMatch: "*"])
                #expect(bad.status == .badRequest && bad.text.contains("/id"), "\(bad.text)")
                let published = try await client.admin(
                    .put, "/authentication-context-class-references/c2", token: admin, json: ["displayName": "Published", "isAvailable": true],
                    headers: [.ifMatch: "*"])
                #expect(published.status == .ok, "\(published.text)")
                let now = try await client.token(Grants.password(Fixtures.alice, claims: StepUp.c2))
                #expect(now.status == .ok, "\(now.text)")
                #expect(jwtClaims(try #require(now.string("access_token")))["acrs"] as? [String] == ["c2"])
            }
        }
    }

    @Test("device code with acrs c1: the device page asks for the factor, the token carries acrs")
    func deviceCode() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                _ = try await StepUp.prepare(client)
                let browser = Browser()
                let (deviceCode, factor) = try await Flows.signIn(client, Fixtures.bob, claims: StepUp.c1, browser: browser)
                let secret = try #require(Factor.secret(factor), "\(factor.html)")
                _ = try await browser.submit(client, factor, [("otp", Factor.code(secret, env.clock))])
                env.clock.advance(by: 6)
                let tokens = try await client.token(DeviceCodeTests.poll(deviceCode))
                #expect(jwtClaims(try #require(tokens.string("access_token")))["acrs"] as? [String] == ["c1"], "\(tokens.text)")
            }
        }
    }

    @Test(
        "OIDC clients: acr_values asks for offered contexts (others ignored), the ID token names the one met (acr) and auth_time; max_age ends single sign-on")
    func acrValuesAndMaxAge() async throws {
        try await withTestEnvironment(configure: { $0.signIn.sessionIdleTimeout = 86400 }) { env in
            try await env.application().test(.router) { client in
                _ = try await StepUp.prepare(client)
                let browser = Browser()
                // acr_values c2 (not offered) and urn:… (not a context) are voluntary: ignored.
                let ignored = try await browser.signIn(
                    client, Authorize.query(extra: [("acr_values", "c2 urn:mace:incommon:iap:silver")]), account: Fixtures.bob)
                #expect(ignored.status == .found, "nothing offered was asked: \(ignored.html)")
                let first = try await client.token(Authorize.redeem(try #require(ignored.delivered["code"])))
                let firstID = jwtClaims(try #require(first.string("id_token")))
                #expect(firstID["acr"] == nil && firstID["auth_time"] as? Int == Int(env.clock.now().timeIntervalSince1970), "\(firstID)")

                // acr_values c1: the session (password only) is stepped up on the page; the ID token says acr c1.
                let step = try await browser.get(client, Authorize.query(extra: [("acr_values", "c1")]))
                let secret = try #require(Factor.secret(step), "the factor is asked: \(step.html)")
                let done = try await browser.submit(client, step, [("otp", Factor.code(secret, env.clock))])
                let tokens = try await client.token(Authorize.redeem(try #require(done.delivered["code"])))
                #expect(jwtClaims(try #require(tokens.string("id_token")))["acr"] as? String == "c1", "\(tokens.text)")
                #expect(jwtClaims(try #require(tokens.string("access_token")))["acrs"] as? [String] == ["c1"])

                // max_age: within it, single sign-on; past it (or 0), the sign-in page; prompt=none gets login_required.
                env.clock.advance(by: 600)
                let sso = try await browser.get(client, Authorize.query(extra: [("max_age", "3600")]))
                #expect(sso.status == .found && sso.delivered["code"] != nil, "\(sso.status)")
                let again = try await browser.get(client, Authorize.query(extra: [("max_age", "300")]))
                #expect(again.status == .ok && again.input("password") != nil, "past max_age the user signs in again")
                let zero = try await browser.get(client, Authorize.query(extra: [("max_age", "0")]))
                #expect(zero.status == .ok && zero.input("password") != nil)
                let silent = try await browser.get(client, Authorize.query(extra: [("max_age", "300"), ("prompt", "none")]))
                #expect(silent.delivered["error"] == "login_required", "\(silent.delivered)")
                // The account picker shown within max_age, submitted after it: the sign-in page, the name filled in, no error.
                let picker = try await browser.get(client, Authorize.query(extra: [("max_age", "900"), ("prompt", "select_account")]))
                #expect(picker.status == .ok && picker.input("account") != nil || picker.html.contains(#"value="session""#), "\(picker.html)")
                env.clock.advance(by: 600)
                let stale = try await browser.submit(client, picker, [("account", "session")])
                #expect(stale.status == .ok && stale.input("password") != nil && !stale.html.contains("AADSTS"), "\(stale.html)")
                let badAge = try await browser.get(client, Authorize.query(extra: [("max_age", "-1")]))
                #expect(badAge.delivered["error"] == "invalid_request", "\(badAge.delivered)")
            }
        }
    }
}
