import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PortcullisCore
import PortcullisServer
import PortcullisTesting
import Testing

/// The interactive sign-in decided in Core (`InteractiveDecision`, issue 43), through the router: the review's sign-in
/// defects, each a test that fails without its fix.
@Suite("Interactive sign-in decided in Core: sign-in frequency at redemption, a factor never refreshing the password (issue 43)")
struct InteractiveSignInTests {
    /// A sign-in frequency policy for Bob: `frequency` for what `applications` names.
    static func frequencyPolicy(id: String, applications: [String: Any], frequency: [String: Any]) -> [String: Any] {
        [
            "id": id, "displayName": "Sign-in frequency for Bob", "state": "enabled",
            "conditions": ["users": ["includeUsers": [Fixtures.bob.id]], "applications": applications, "clientAppTypes": ["all"]],
            "sessionControls": ["signInFrequency": frequency],
        ]
    }

    @Test(
        "step-up without signing in: a context asked for only at the code's redemption is evaluated there; its everyTime frequency refuses an hour-old sign-in (70043)"
    )
    func contextAtRedemption() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let context = try await client.admin(
                    .post, "/authentication-context-class-references", token: admin, json: ["displayName": "Payroll", "isAvailable": true])
                let id = try #require(context.string("id"), "\(context.text)")
                let policy = Self.frequencyPolicy(
                    id: "a1000000-0000-4000-8000-0000000000e4",
                    applications: ["includeApplications": [], "includeAuthenticationContextClassReferences": [id]],
                    frequency: ["isEnabled": true, "frequencyInterval": "everyTime", "authenticationType": "primaryAndSecondaryAuthentication"])
                let created = try await client.admin(.post, "/conditional-access/policies", token: admin, json: policy)
                #expect(created.status == .created, "\(created.text)")

                let browser = Browser()
                _ = try await browser.signIn(client, account: Fixtures.bob)
                // An hour, the session kept in use (it ends after an hour idle).
                env.clock.advance(by: 1800)
                #expect(try await browser.get(client, Authorize.query()).delivered["code"] != nil)
                env.clock.advance(by: 1800)
                // An hour later the session still signs in silently: nothing asked for the context at /authorize.
                let asked = #"{"access_token":{"acrs":{"essential":true,"value":"\#(id)"}}}"#
                let sso = try await browser.get(client, Authorize.query())
                let silent = try #require(sso.delivered["code"], "\(sso.status) \(sso.html.prefix(3000))")
                let refused = try await client.token(Authorize.redeem(silent, claims: asked))
                #expect(
                    refused.status == .badRequest && refused.errorCode == 70043,
                    "the context asked for at redemption brings its sign-in frequency: \(refused.text)")
                // Asked at /authorize, the page asks for the password again; then the redemption issues the context.
                let again = try await browser.get(client, Authorize.query(extra: [("claims", asked)]))
                #expect(again.input("password") != nil, "sign in again: \(again.status)")
                let signedIn = try await browser.submit(client, again, [("username", Fixtures.bob.upn), ("password", Fixtures.bob.password)])
                let code = try #require(signedIn.delivered["code"], "\(signedIn.html)")
                let granted = try await client.token(Authorize.redeem(code, claims: asked))
                #expect(jwtClaims(try #require(granted.string("access_token"), "\(granted.text)"))["acrs"] as? [String] == [id])
            }
        }
    }

    @Test("a second factor does not make the password recent: past the sign-in frequency, one code for another app does not restore single sign-on")
    func factorKeepsPasswordTime() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                // Bob has an authenticator app (registered in another browser) and MFA is asked at the mail API.
                try await Factor.requireForBob(client)
                let (secret, _) = try await Factor.register(client, Browser(), env.clock)
                // The app's own sign-in (OIDC scopes only: the client is the resource) has a one-hour sign-in frequency.
                let policy = Self.frequencyPolicy(
                    id: "a1000000-0000-4000-8000-0000000000e5", applications: ["includeApplications": [Fixtures.mobileClientId]],
                    frequency: ["isEnabled": true, "type": "hours", "value": 1, "frequencyInterval": "timeBased"])
                #expect(try await client.admin(.post, "/conditional-access/policies", token: admin, json: policy).status == .created)
                let appOnly = Authorize.query(scope: "openid profile offline_access", extra: [("prompt", "none")])

                let browser = Browser()
                let first = try await browser.signIn(client, Authorize.query(scope: "openid profile offline_access"), account: Fixtures.bob)
                #expect(first.delivered["code"] != nil, "\(first.html)")
                // Two hours, the session kept in use (it ends after an hour idle).
                for _ in 0..<3 {
                    env.clock.advance(by: 2400)
                    _ = try await browser.get(client, appOnly)
                }
                #expect(try await browser.get(client, appOnly).delivered["error"] == "login_required", "the frequency has lapsed")

                // The mail app asks for the code; the session gives it.
                env.clock.advance(by: 31)
                let factor = try await browser.get(client, Authorize.query())
                #expect(
                    factor.html.contains(#"id="otp""#) && factor.html.contains("Enter the 6-digit code"),
                    "the factor step: \(factor.status) \(factor.html.prefix(3000))")
                let done = try await browser.submit(client, factor, [("otp", Factor.code(secret, env.clock))])
                #expect(done.delivered["code"] != nil, "\(done.html)")
                // The password is still two hours old.
                let after = try await browser.get(client, appOnly)
                #expect(after.delivered["error"] == "login_required", "a code does not restore single sign-on past the frequency: \(after.delivered)")
            }
        }
    }
}
