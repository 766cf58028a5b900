import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PortcullisAPI
import PortcullisCore
import PortcullisSQLite
import PortcullisServer
import PortcullisStorage
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

    @Test("a sign-in the page blocks is in the sign-in log once (53003, interactive), as Entra's is; one that gets its code is recorded at redemption")
    func blockedRecorded() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let block = Policies.document(id: "a1000000-0000-4000-8000-0000000000e6", name: "Block Bob", users: [Fixtures.bob.id], controls: ["block"])
                #expect(try await client.admin(.post, "/conditional-access/policies", token: admin, json: block).status == .created)
                let blocked = try await Browser().signIn(client, account: Fixtures.bob)
                #expect(blocked.status == .forbidden && blocked.shownCode == 53003, "\(blocked.html)")
                let log = try await client.admin(.get, "/sign-ins?user=\(Fixtures.bob.id)", token: admin)
                let records = (log["value"] as? [[String: Any]]) ?? []
                #expect(records.count == 1, "once: \(log.text)")
                #expect(records.first?["errorCode"] as? Int == 53003 && records.first?["isInteractive"] as? Bool == true, "\(log.text)")
                let signedIn = try await Browser().signIn(client, account: Fixtures.alice)
                #expect(try await client.token(Authorize.redeem(try #require(signedIn.delivered["code"]))).status == .ok)
                let alice = try await client.admin(.get, "/sign-ins?user=\(Fixtures.alice.id)", token: admin)
                #expect(((alice["value"] as? [[String: Any]]) ?? []).count == 1, "the page and the redemption make one record: \(alice.text)")
            }
        }
    }

    @Test(
        "user-name-first passkeys: the same page for every user name (a discoverable request, no credential IDs), counted against the address; a passkey of another account refused"
    )
    func passkeyEnumeration() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let authenticator = Passkeys.authenticator()
                _ = try await Passkeys.registerForBob(client, Browser(), env.clock, authenticator)
                var browser = Browser()
                func lookup(_ name: String) async throws -> Page {
                    let page = try await browser.get(client, Authorize.query())
                    return try await browser.submit(client, page, [("method", "passkey"), ("username", name)])
                }
                func shape(_ page: Page) -> String {
                    page.html.replacingOccurrences(of: #"value="[^"]*""#, with: "", options: .regularExpression)
                        .replacingOccurrences(of: #"data-challenge="[^"]*""#, with: "", options: .regularExpression)
                        .replacingOccurrences(of: #"(bob|carol|nobody)@fabrikam\.test"#, with: "NAME", options: .regularExpression)
                        .replacingOccurrences(of: #"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"#, with: "ID", options: .regularExpression)
                }
                let bob = try await lookup(Fixtures.bob.upn)
                let carol = try await lookup(Fixtures.carol.upn)
                let nobody = try await lookup("nobody@fabrikam.test")
                #expect(Passkeys.data(bob, "allow") == "" && Passkeys.data(carol, "allow") == "", "no credential IDs for anyone")
                #expect(
                    shape(bob) == shape(carol) && shape(bob) == shape(nobody),
                    "the same page for a user with passkeys, without, and for nobody:\n\(shape(bob))\n\(shape(nobody))")
                // Bob's passkey on the page for Carol's name: refused (the challenge is bound to the name's account).
                var signer = authenticator
                signer.signCount = 2
                let crossed = try await browser.post(client, "/\(Fixtures.domain)/oauth2/v2.0/authorize/passkey", try Passkeys.assertion(carol, signer))
                #expect(crossed.status == .badRequest && crossed.delivered["code"] == nil, "\(crossed.html)")
                // Bob's on Bob's: a sign-in.
                signer.signCount = 3
                let own = try await lookup(Fixtures.bob.upn)
                let signedIn = try await browser.post(client, "/\(Fixtures.domain)/oauth2/v2.0/authorize/passkey", try Passkeys.assertion(own, signer))
                #expect(signedIn.delivered["code"] != nil, "\(signedIn.html)")
                // Counted like guesses from one address: the lookups stop at the address's threshold (100 in ten minutes).
                browser = Browser()  // signed out: the page asks again
                var locked: Page?
                for index in 0..<150 {
                    let page = try await lookup("user\(index)@fabrikam.test")
                    if page.shownCode == TokenError.addressLocked.aadsts {
                        locked = page
                        break
                    }
                }
                #expect(locked?.status == .badRequest && locked?.shownCode == TokenError.addressLocked.aadsts, "locked: \(locked?.html.prefix(400) ?? "never")")
            }
        }
    }

    @Test("renaming a passkey is guarded like removing it: a password-only session is refused, nothing renamed")
    func renameGuarded() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                _ = try await Passkeys.registerForBob(client, Browser(), env.clock, Passkeys.authenticator())
                let passkey = try #require(try await env.store.passkeys(tenantId: TenantID(Fixtures.tenantId), userId: ObjectID(Fixtures.bob.id)).first)
                let other = Browser()
                _ = try await other.signIn(client, Authorize.query(client: Fixtures.mobileClientId, scope: "openid profile"), account: Fixtures.bob)
                let page = try await other.get(client, "/\(Fixtures.tenantId)/securityinfo")
                let rename = try await other.post(
                    client, "/\(Fixtures.tenantId)/securityinfo/methods",
                    [("csrf", try #require(page.input("csrf"))), ("id", passkey.id.rawValue), ("action", "rename"), ("displayName", "Attacker's key")])
                #expect(rename.status == .forbidden, "\(rename.html)")
                #expect(
                    try await env.store.passkeys(tenantId: TenantID(Fixtures.tenantId), userId: ObjectID(Fixtures.bob.id)).first?.displayName
                        == passkey.displayName)
            }
        }
    }

    /// The registration fields for the page's `passkey-registration` form, made by `authenticator`.
    static func registration(_ page: Page, _ authenticator: SoftwareAuthenticator, name: String = "Bob's phone") throws -> [(String, String)] {
        let challenge = try #require(Passkeys.data(page, "challenge").flatMap(Base64URL.decode))
        let clientData = authenticator.clientData(type: "webauthn.create", challenge: Array(challenge))
        return [
            ("ticket", try #require(Passkeys.input(page, form: "passkey-registration", "ticket"))),
            ("csrf", try #require(Passkeys.input(page, form: "passkey-registration", "csrf"))),
            ("challenge", try #require(Passkeys.input(page, form: "passkey-registration", "challenge"))),
            ("displayName", name), ("clientDataJSON", Base64URL.encode(clientData)),
            ("attestationObject", Base64URL.encode(authenticator.attestationObject(.none, clientData: clientData))), ("transports", "internal"),
        ]
    }

    @Test(
        "onboarding with a temporary access pass: a phishing-resistant strength and no passkey — the sign-in registers one right there and goes on to the app")
    func temporaryAccessPassOnboarding() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                #expect(
                    try await Passkeys.requireStrength(client, admin, strengthId: AuthenticationStrengthPolicy.phishingResistant.id.rawValue).status == .created
                )
                let pass = try #require(try await Passes.issue(client, admin).string("temporaryAccessPass"))
                let browser = Browser()
                let page = try await browser.signIn(client, account: Fixtures.bob, password: pass)
                #expect(page.status == .ok && page.html.contains("Create a passkey") && page.html.contains("Phishing-resistant MFA"), "\(page.html)")
                #expect(page.html.contains("/static/passkey.js\""), "the page loads the script that runs the ceremony")
                let action = try #require(page.formAction)
                let authenticator = Passkeys.authenticator()

                // The ceremony is bound to this browser's session: another browser of Bob's cannot use it.
                let other = Browser()
                _ = try await other.signIn(client, account: Fixtures.bob, password: pass)
                let stolen = try await other.post(client, action, try Self.registration(page, authenticator))
                #expect(stolen.delivered["code"] == nil, "another browser: \(stolen.status)")
                #expect(try await env.store.passkeys(tenantId: TenantID(Fixtures.tenantId), userId: ObjectID(Fixtures.bob.id)).isEmpty, "nothing registered")

                let fresh = try await browser.signIn(client, account: Fixtures.bob, password: pass)
                let done = try await browser.post(client, try #require(fresh.formAction), try Self.registration(fresh, authenticator))
                let code = try #require(done.delivered["code"], "on to the app: \(done.status) \(done.html)")
                let tokens = try await client.token(Authorize.redeem(code))
                #expect(jwtClaims(try #require(tokens.string("access_token"), "\(tokens.text)"))["amr"] as? [String] == ["fido", "mfa"])
                let held = try await env.store.passkeys(tenantId: TenantID(Fixtures.tenantId), userId: ObjectID(Fixtures.bob.id))
                #expect(held.count == 1 && held.first?.displayName == "Bob's phone")

                // The same credential again (Security info now that Bob has a passkey session): refused by the route.
                let info = try await browser.get(client, "/\(Fixtures.tenantId)/securityinfo")
                let encoded = try #require(Passkeys.data(info, "challenge").flatMap(Base64URL.decode))
                let clientData = authenticator.clientData(type: "webauthn.create", challenge: Array(encoded))
                let again = try await browser.post(
                    client, "/\(Fixtures.tenantId)/securityinfo/passkeys",
                    [
                        ("csrf", try #require(Passkeys.input(info, form: "passkey-registration", "csrf"))),
                        ("challenge", try #require(Passkeys.input(info, form: "passkey-registration", "challenge"))),
                        ("clientDataJSON", Base64URL.encode(clientData)),
                        ("attestationObject", Base64URL.encode(authenticator.attestationObject(.none, clientData: clientData))),
                    ])
                #expect(again.status == .badRequest && again.shownCode == 50012, "a duplicate credential ID: \(again.html)")
                #expect(try await env.store.passkeys(tenantId: TenantID(Fixtures.tenantId), userId: ObjectID(Fixtures.bob.id)).count == 1)
            }
        }
    }
}
