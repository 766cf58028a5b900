import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PortcullisCore
import PortcullisSQLite
import PortcullisServer
import PortcullisStorage
import PortcullisTesting
import Testing

@Suite("interactive sign-in: authorization code + PKCE, the page, SSO, sign-out")
struct SignInTests {
    @Test("the code flow: page, code with state and client_info, redemption with PKCE; ID token with nonce, auth_time, amr; refresh keeps amr")
    func codeFlow() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let browser = Browser()
                let page = try await browser.get(client, Authorize.query(extra: [("login_hint", Fixtures.alice.upn)]))
                #expect(page.status == .ok, "\(page.headers)")
                #expect(page.headers[.contentType] == "text/html; charset=utf-8")
                let csp = try #require(page.headers[.contentSecurityPolicy])
                #expect(csp.contains("default-src 'self'") && csp.contains("frame-ancestors 'none'"))
                #expect(page.html.contains(#"autocomplete="username webauthn""#) && page.html.contains(#"autocomplete="current-password""#))
                #expect(page.input("username") == Fixtures.alice.upn, "login_hint pre-fills the user name")
                #expect(page.input("csrf")?.isEmpty == false && browser.value("portcullis_csrf") != nil)
                #expect(csp.contains("script-src 'self'"))
                // One first-party script (passkeys); the password form itself needs none.
                #expect(page.html.components(separatedBy: "<script").count == 2 && page.html.contains(#"<script src="/static/passkey.js" defer></script>"#))

                let done = try await browser.submit(client, page, [("username", Fixtures.alice.upn), ("password", Fixtures.alice.password)])
                #expect(done.status == .found, "\(done.html)")
                #expect(done.location?.scheme == "msauth.com.fabrikam.mail")
                let delivered = done.delivered
                let code = try #require(delivered["code"])
                #expect(delivered["state"] == "state-123")
                #expect(delivered["client_info"] != nil)
                let session = try #require(browser.cookies.first { $0.name == "portcullis_session" })
                #expect(session.path == "/\(Fixtures.tenantId)" || session.path == "/\(Fixtures.domain)")
                let setCookie = done.headers[values: .setCookie].joined(separator: "\n")
                #expect(setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Lax"))

                let tokens = try await client.token(Authorize.redeem(code))
                #expect(tokens.status == .ok, "\(tokens.text)")
                let idToken = jwtClaims(try #require(tokens.string("id_token")))
                #expect(idToken["nonce"] as? String == "nonce-456")
                #expect(idToken["amr"] as? [String] == ["pwd"])
                let authTime = try #require(idToken["auth_time"] as? Int)
                #expect(abs(Double(authTime) - env.clock.now().timeIntervalSince1970) < 5)
                let access = jwtClaims(try #require(tokens.string("access_token")))
                #expect(access["oid"] as? String == Fixtures.alice.id)
                #expect(access["amr"] as? [String] == ["pwd"])

                env.clock.advance(by: 120)
                let refreshed = try await client.token(Grants.refresh(try #require(tokens.string("refresh_token")), claims: nil))
                #expect(refreshed.status == .ok, "\(refreshed.text)")
                let again = jwtClaims(try #require(refreshed.string("id_token")))
                #expect(again["auth_time"] as? Int == authTime, "the refresh token family remembers when the user signed in")
                #expect(again["amr"] as? [String] == ["pwd"])
            }
        }
    }

    @Test("the query is decoded as a form: '+' is a space (MSAL for Python sends scopes so)")
    func plusIsSpace() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let query =
                    "\(Authorize.path)?response_type=code&client_id=\(Fixtures.mobileClientId)&redirect_uri=http%3A%2F%2Flocalhost%3A8400"
                    + "&scope=api%3A%2F%2Ffabrikam-mail%2FMail.Read+offline_access+openid+profile&code_challenge=\(PKCEVector.challenge)"
                    + "&code_challenge_method=S256&state=a+b"
                let page = try await Browser().signIn(client, query)
                #expect(page.status == .found && page.delivered["code"] != nil, "\(page.delivered)")
                #expect(page.delivered["state"] == "a b")
                // And back: a literal '+' in state reaches the app as %2B (its form decoder would read '+' as a space).
                let plus = try await Browser().signIn(client, query.replacingOccurrences(of: "state=a+b", with: "state=a%2Bb%20c"))
                let location = plus.headers[.location] ?? ""
                #expect(location.contains("state=a%2Bb%20c") && plus.delivered["state"] == "a+b c", "\(location)")
            }
        }
    }

    @Test("an unknown client or an unregistered redirect URI gets an error page, never a redirect")
    func untrustedRedirects() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let browser = Browser()
                for query in [
                    Authorize.query(redirect: "https://evil.example/steal"),
                    Authorize.query(redirect: "msauth.com.fabrikam.mail://auth/extra"),
                    Authorize.query(redirect: "http://localhost.evil.example:8400/"),
                    Authorize.query(redirect: "http://localhost:8400/elsewhere"),
                    Authorize.query(client: "ffffffff-0000-4000-8000-00000000000f", redirect: "https://evil.example/"),
                    Authorize.query(client: Fixtures.secondMobileClientId, redirect: Fixtures.mobileRedirectUri),
                ] {
                    let page = try await browser.get(client, query)
                    #expect(page.status == .badRequest, "\(query)")
                    #expect(page.headers[.location] == nil)
                    #expect(page.shownCode != nil && page.html.contains(#"role="alert""#))
                }
                // Loopback: registered without a port, any port matches; an empty path equals "/".
                for loopback in ["http://localhost:8400/", "http://localhost:51234", "http://localhost"] {
                    let page = try await browser.get(client, Authorize.query(redirect: loopback))
                    #expect(page.status == .ok, "\(loopback): \(page.html)")
                }
            }
        }
    }

    @Test("PKCE: required for public clients, S256 only, well formed; a wrong or missing verifier is refused")
    func pkce() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let browser = Browser()
                for (query, what) in [
                    (Authorize.query(challenge: nil, method: nil), "missing"),
                    (Authorize.query(challenge: PKCEVector.verifier, method: "plain"), "plain"),
                    (Authorize.query(challenge: "too-short", method: "S256"), "malformed"),
                    (Authorize.query(method: nil), "no method"),
                ] {
                    let page = try await browser.get(client, query)
                    #expect(page.status == .found, "\(what)")
                    let delivered = page.delivered
                    #expect(delivered["error"] == "invalid_request", "\(what): \(delivered)")
                    #expect(delivered["state"] == "state-123")
                    #expect(delivered["error_description"]?.hasPrefix("AADSTS") == true)
                }
                let wrong = try #require(try await browser.signIn(client).delivered["code"])
                let refused = try await client.token(Authorize.redeem(wrong, verifier: String(repeating: "a", count: 43)))
                #expect(refused.status == .badRequest && refused.string("error") == "invalid_grant", "\(refused.text)")
                let missing = try #require(try await browser.signIn(client, Authorize.query(extra: [("prompt", "login")])).delivered["code"])
                let noVerifier = try await client.token(Authorize.redeem(missing, verifier: nil))
                #expect(
                    noVerifier.status == .badRequest && noVerifier.string("error") == "invalid_request" && noVerifier.errorCode == 9002325, "\(noVerifier.text)"
                )
            }
        }
    }

    @Test("a replayed code is refused (54005) and revokes the tokens first issued from it; a wrong redirect_uri or an old code is refused")
    func codeReplay() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let browser = Browser()
                let code = try #require(try await browser.signIn(client).delivered["code"])
                let first = try await client.token(Authorize.redeem(code))
                #expect(first.status == .ok)
                let refresh = try #require(first.string("refresh_token"))
                let access = try #require(first.string("access_token"))
                let replay = try await client.token(Authorize.redeem(code))
                #expect(replay.status == .badRequest && replay.string("error") == "invalid_grant" && replay.errorCode == 54005, "\(replay.text)")
                let afterReplay = try await client.token(Grants.refresh(refresh, claims: nil))
                #expect(afterReplay.status == .badRequest && afterReplay.string("error") == "invalid_grant", "the first redemption's refresh token is revoked")
                let introspection = try await client.form(
                    "/\(Fixtures.domain)/oauth2/v2.0/introspect", [("token", access)],
                    headers: [.authorization: Grants.basic(Fixtures.mailApiId, Fixtures.mailApiSecret)])
                #expect(introspection["active"] as? Bool == false, "the first redemption's access token is revoked: \(introspection.text)")

                let other = try #require(try await browser.get(client, Authorize.query()).delivered["code"], "SSO: the session issues a code at once")
                let mismatch = try await client.token(Authorize.redeem(other, redirect: "http://localhost:8400/"))
                #expect(mismatch.status == .badRequest && mismatch.string("error") == "invalid_grant", "\(mismatch.text)")

                let late = try #require(try await browser.get(client, Authorize.query()).delivered["code"])
                env.clock.advance(by: 61)
                let expired = try await client.token(Authorize.redeem(late))
                #expect(expired.status == .badRequest && expired.string("error") == "invalid_grant", "\(expired.text)")

                // A code is redeemed only by its client: another public client that may redeem codes (the console's) is
                // refused by the binding itself (70000), not earlier for lacking the grant type.
                let foreign = try #require(try await browser.get(client, Authorize.query()).delivered["code"])
                let wrongClient = try await client.token(Authorize.redeem(foreign, client: BuiltInResources.consoleAppId.rawValue))
                #expect(wrongClient.status == .badRequest && wrongClient.errorCode == 70000, "a code is redeemed only by its client: \(wrongClient.text)")
                #expect(try await client.token(Authorize.redeem(foreign)).status == .ok, "the refused attempt did not spoil the code for its client")
            }
        }
    }

    @Test(
        "whoever intercepts a code cannot spoil its owner's redemption: a wrong verifier, none, another redirect URI or client are refused and leave the code unused (issue 25.4)"
    )
    func interceptedCode() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let browser = Browser()
                let code = try #require(try await browser.signIn(client).delivered["code"])
                let noVerifier = try await client.token(Authorize.redeem(code, verifier: nil))
                #expect(noVerifier.errorCode == 9002325, "\(noVerifier.text)")
                let wrongVerifier = try await client.token(Authorize.redeem(code, verifier: String(repeating: "x", count: 43)))
                #expect(wrongVerifier.errorCode == 501481, "\(wrongVerifier.text)")
                let otherRedirect = try await client.token(Authorize.redeem(code, redirect: "http://localhost:8400/"))
                #expect(otherRedirect.errorCode == 70000, "\(otherRedirect.text)")
                let otherClient = try await client.token(Authorize.redeem(code, client: BuiltInResources.consoleAppId.rawValue))
                #expect(otherClient.errorCode == 70000, "\(otherClient.text)")
                let owner = try await client.token(Authorize.redeem(code))
                #expect(owner.status == .ok, "the owner's redemption still succeeds: \(owner.text)")
                // Its replay by the owner is refused (54005) and revokes what the first redemption issued.
                let replay = try await client.token(Authorize.redeem(code))
                #expect(replay.errorCode == 54005)
                #expect(try await client.token(Grants.refresh(try #require(owner.string("refresh_token")), claims: nil)).status == .badRequest)
            }
        }
    }

    @Test("SSO: prompt=none answers a code with a session and login_required without; prompt=login asks again; sign-out ends the session")
    func sessions() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let browser = Browser()
                let none = try await browser.get(client, Authorize.query(extra: [("prompt", "none")]))
                #expect(none.status == .found)
                #expect(none.delivered["error"] == "login_required" && none.delivered["error_codes"] == "50058", "\(none.delivered)")
                #expect(none.delivered["state"] == "state-123")

                _ = try await browser.signIn(client)
                let silent = try await browser.get(client, Authorize.query(extra: [("prompt", "none")]))
                #expect(silent.delivered["code"] != nil, "\(silent.delivered)")
                // The session cookie is scoped to the tenant: the tenant's ID in the authority works too.
                let byId = try await browser.get(
                    client, Authorize.query(extra: [("prompt", "none")]).replacingOccurrences(of: Fixtures.domain, with: Fixtures.tenantId))
                #expect(byId.delivered["code"] != nil, "\(byId.status) \(byId.delivered)")
                let login = try await browser.get(client, Authorize.query(extra: [("prompt", "login")]))
                #expect(login.status == .ok && login.input("ticket") != nil)

                let picker = try await browser.get(client, Authorize.query(extra: [("prompt", "select_account")]))
                #expect(picker.status == .ok && picker.html.contains(Fixtures.alice.upn), "the account picker names the session's user")
                let picked = try await browser.submit(client, picker, [("account", "session")])
                #expect(picked.delivered["code"] != nil, "\(picked.html)")
                let another = try await browser.submit(client, picker, [("account", "other")])
                #expect(another.status == .ok && another.html.contains(#"autocomplete="current-password""#))

                // Sign-out: only to a registered URI, with the state; then prompt=none needs a sign-in again.
                let out = try await browser.get(
                    client,
                    "/\(Fixtures.domain)/oauth2/v2.0/logout?client_id=\(Fixtures.mobileClientId)&post_logout_redirect_uri=https://app.fabrikam.test/signed-out&state=bye"
                )
                #expect(out.status == .found)
                #expect(out.headers[.location] == "https://app.fabrikam.test/signed-out?state=bye")
                #expect(browser.value("portcullis_session") == nil)
                let after = try await browser.get(client, Authorize.query(extra: [("prompt", "none")]))
                #expect(after.delivered["error"] == "login_required")

                _ = try await browser.signIn(client)
                let evil = try await browser.get(
                    client, "/\(Fixtures.domain)/oauth2/v2.0/logout?client_id=\(Fixtures.mobileClientId)&post_logout_redirect_uri=https://evil.example/")
                #expect(evil.status == .ok && evil.headers[.location] == nil, "an unregistered post-logout URI is not followed")
                #expect(try await browser.get(client, Authorize.query(extra: [("prompt", "none")])).delivered["error"] == "login_required")
            }
        }
    }

    @Test("the session expires after its idle timeout and its lifetime")
    func sessionLifetimes() async throws {
        try await withTestEnvironment(configure: {
            $0.signIn.sessionIdleTimeout = 600
            $0.signIn.sessionLifetime = 1800
        }) { env in
            try await env.application().test(.router) { client in
                let browser = Browser()
                _ = try await browser.signIn(client)
                env.clock.advance(by: 500)
                #expect(try await browser.get(client, Authorize.query(extra: [("prompt", "none")])).delivered["code"] != nil)
                env.clock.advance(by: 500)
                #expect(try await browser.get(client, Authorize.query(extra: [("prompt", "none")])).delivered["code"] != nil, "each use renews the idle timer")
                env.clock.advance(by: 601)
                #expect(try await browser.get(client, Authorize.query(extra: [("prompt", "none")])).delivered["error"] == "login_required", "idle")
                _ = try await browser.signIn(client, Authorize.query(extra: [("prompt", "login")]))
                for _ in 0..<3 {
                    env.clock.advance(by: 590)
                    #expect(try await browser.get(client, Authorize.query(extra: [("prompt", "none")])).delivered["code"] != nil)
                }
                env.clock.advance(by: 100)
                #expect(try await browser.get(client, Authorize.query(extra: [("prompt", "none")])).delivered["error"] == "login_required", "lifetime")
            }
        }
    }

    @Test("response modes: fragment and form_post")
    func responseModes() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let browser = Browser()
                let fragment = try await browser.signIn(client, Authorize.query(extra: [("response_mode", "fragment")]))
                #expect(fragment.location?.percentEncodedFragment?.contains("code=") == true && fragment.location?.query == nil)
                let post = try await browser.get(client, Authorize.query(redirect: "http://localhost:8400/", extra: [("response_mode", "form_post")]))
                #expect(post.status == .ok)
                #expect(post.formAction == "http://localhost:8400/")
                let code = try #require(post.input("code"))
                #expect(post.input("state") == "state-123")
                #expect(try await client.token(Authorize.redeem(code, redirect: "http://localhost:8400/")).status == .ok)
            }
        }
    }

    @Test("conditional access at sign-in: block shows 53003 with the correlation ID; app protection issues the code and refuses at redemption (53005)")
    func conditionalAccess() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                try await client.createAppProtectionCA()
                let browser = Browser()
                let ios = [("x-client-SKU", "MSAL.iOS"), ("x-client-OS", "17.4"), ("claims", Grants.protAppClaims)]
                let code = try #require(try await browser.signIn(client, Authorize.query(extra: ios)).delivered["code"])
                let refused = try await client.token(Authorize.redeem(code))
                #expect(refused.status == .badRequest, "\(refused.text)")
                #expect(refused.string("suberror") == "protection_policy_required" && refused.errorCode == 53005, "\(refused.text)")

                // Remediation, then a new sign-in (SSO, no password) issues tokens.
                _ = try await client.becomeCompliant()
                let next = try #require(try await browser.get(client, Authorize.query(extra: ios)).delivered["code"])
                let tokens = try await client.token(Authorize.redeem(next))
                #expect(tokens.status == .ok, "\(tokens.text)")
                #expect(jwtClaims(try #require(tokens.string("access_token")))["xms_cc"] as? [String] == ["protapp"])

                let admin = try await client.adminToken()
                let block = Policies.document(id: "a1000000-0000-4000-8000-0000000000b1", name: "Block Carol", users: [Fixtures.carol.id], controls: ["block"])
                #expect(try await client.admin(.post, "/conditional-access/policies", token: admin, json: block).status == .created)
                let blocked = try await Browser().signIn(client, account: Fixtures.carol)
                #expect(blocked.status == .forbidden && blocked.headers[.location] == nil)
                #expect(blocked.shownCode == 53003)
                #expect(blocked.html.contains("Correlation ID"))
            }
        }
    }

    @Test("wrong passwords show their AADSTS code on the page; the lockout covers the page")
    func passwordFailures() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let browser = Browser()
                let wrong = try await browser.signIn(client, password: "not-it")
                #expect(wrong.status == .badRequest && wrong.shownCode == 50126 && wrong.headers[.location] == nil)
                #expect(wrong.input("username") == Fixtures.alice.upn, "the user name is kept")
                #expect(wrong.html.contains(#"aria-describedby="error""#))
                var last = wrong
                for _ in 0..<10 { last = try await browser.submit(client, last, [("username", Fixtures.alice.upn), ("password", "not-it")]) }
                #expect(last.shownCode == 50053, "locked after 10 failures: \(String(describing: last.shownCode))")
                let right = try await browser.submit(client, last, [("username", Fixtures.alice.upn), ("password", Fixtures.alice.password)])
                #expect(right.shownCode == 50053, "a locked account is refused even with the right password")
                let disabled = try await Browser().signIn(client, account: Fixtures.disabled)
                #expect(disabled.status == .badRequest && disabled.shownCode == 50057)
            }
        }
    }

    @Test(
        "hostile input: repeated or huge parameters, bad response_mode, a missing, stale or foreign CSRF token, a tampered ticket: a page or an OAuth error, never 5xx"
    )
    func hostileInput() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let browser = Browser()
                let huge = String(repeating: "x", count: 10_000)
                let cases = [
                    Authorize.query() + "&client_id=\(Fixtures.mobileClientId)",
                    Authorize.query(state: huge),
                    Authorize.query(extra: [("response_mode", "web_message")]),
                    Authorize.query(extra: [("prompt", "sideways")]),
                    Authorize.query(extra: [("claims", "{not json")]),
                    Authorize.query(scope: "api://nowhere/x"),
                    Authorize.path + "?response_type=token",
                    Authorize.path,
                    "/not-a-tenant/oauth2/v2.0/authorize?client_id=x",
                    Authorize.query(client: "%00%ff", redirect: "\u{0}"),
                ]
                for uri in cases {
                    let page = try await browser.get(client, uri)
                    #expect(page.status.code < 500, "\(uri.prefix(200)): \(page.status)")
                    #expect(page.status == .badRequest || page.status == .found, "\(uri.prefix(200)): \(page.status)")
                }
                let form = try await browser.get(client, Authorize.query())
                let ticket = try #require(form.input("ticket"))
                let csrf = try #require(form.input("csrf"))
                let action = try #require(form.formAction)
                let credentials = [("username", Fixtures.alice.upn), ("password", Fixtures.alice.password)]
                for (fields, what) in [
                    ([("ticket", ticket)] + credentials, "no CSRF token"),
                    ([("ticket", ticket), ("csrf", "AAAA")] + credentials, "a wrong CSRF token"),
                    ([("ticket", ticket.replacingOccurrences(of: "e", with: "f")), ("csrf", csrf)] + credentials, "a tampered ticket"),
                    ([("csrf", csrf)] + credentials, "no ticket"),
                    ([("ticket", ticket), ("csrf", csrf), ("username", Fixtures.alice.upn), ("username", "bob"), ("password", "x")], "a repeated field"),
                ] {
                    let page = try await browser.post(client, action, fields)
                    #expect(page.status == .badRequest && page.headers[.location] == nil, "\(what): \(page.status)")
                }
                // A CSRF token is bound to its browser: another browser's cookie does not fit it.
                let stranger = Browser()
                _ = try await stranger.get(client, Authorize.query())
                let foreign = try await stranger.post(client, action, [("ticket", ticket), ("csrf", csrf)] + credentials)
                #expect(foreign.status == .badRequest && foreign.headers[.location] == nil)
                // Stale: the form outlives its lifetime.
                env.clock.advance(by: 1801)
                let stale = try await browser.post(client, action, [("ticket", ticket), ("csrf", csrf)] + credentials)
                #expect(stale.status == .badRequest && stale.headers[.location] == nil)
                // A page never has a CSRF cookie a script could read.
                #expect(form.headers[values: .setCookie].allSatisfy { $0.contains("HttpOnly") })
            }
        }
    }
}

@Suite("device code flow (RFC 8628)")
struct DeviceCodeTests {
    static let devicePath = "/\(Fixtures.domain)/oauth2/v2.0/devicecode"

    static func poll(_ deviceCode: String) -> [(String, String)] {
        [("grant_type", "urn:ietf:params:oauth:grant-type:device_code"), ("client_id", Fixtures.mobileClientId), ("device_code", deviceCode)]
    }

    @Test("start, pending, slow down, the page (code, then sign-in), tokens once")
    func deviceFlow() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let start = try await client.form(
                    Self.devicePath, [("client_id", Fixtures.mobileClientId), ("scope", "\(Fixtures.mailResource)/Mail.Read openid offline_access")])
                #expect(start.status == .ok, "\(start.text)")
                let deviceCode = try #require(start.string("device_code"))
                let userCode = try #require(start.string("user_code"))
                #expect(start.string("verification_uri") == "http://portcullis.test/devicelogin")
                #expect(start["expires_in"] as? Int == 900 && start["interval"] as? Int == 5)
                #expect(start.string("message")?.contains(userCode) == true)

                let pending = try await client.token(Self.poll(deviceCode))
                #expect(pending.string("error") == "authorization_pending" && pending.errorCode == 70016, "\(pending.text)")
                let tooFast = try await client.token(Self.poll(deviceCode))
                #expect(tooFast.string("error") == "slow_down", "\(tooFast.text)")
                env.clock.advance(by: 6)

                let browser = Browser()
                let entry = try await browser.get(client, "/devicelogin")
                #expect(entry.status == .ok && entry.input("csrf") != nil)
                #expect(entry.headers[.contentSecurityPolicy]?.contains("frame-ancestors 'none'") == true)
                let signInPage = try await browser.submit(client, entry, [("user_code", userCode.lowercased().replacingOccurrences(of: "-", with: " "))])
                #expect(signInPage.status == .ok && signInPage.input("ticket") != nil, "codes are typed loosely: \(signInPage.html)")
                #expect(signInPage.html.contains(#"autocomplete="current-password""#))
                // The approve step checks its CSRF token (issue 25.13): a forged one, or none, or the right token from a browser
                // without the CSRF cookie, approves nothing — the code stays pending — and deny is refused the same way.
                let ticket = try #require(signInPage.input("ticket"))
                let csrf = try #require(signInPage.input("csrf"))
                let approve = [("ticket", ticket), ("username", Fixtures.alice.upn), ("password", Fixtures.alice.password), ("decision", "allow")]
                for (who, fields) in [
                    (browser, approve + [("csrf", "forged")]), (browser, approve), (Browser(), approve + [("csrf", csrf)]),
                    (browser, [("ticket", ticket), ("csrf", "forged"), ("decision", "deny")]),
                ] {
                    let refused = try await who.post(client, "/devicelogin/signin", fields)
                    #expect(refused.status == .badRequest && refused.shownCode == 90014, "\(refused.status) \(refused.html.prefix(300))")
                }
                #expect(
                    try await env.store.deviceCode(userCode: userCode.replacingOccurrences(of: "-", with: "").uppercased())?.state == .pending,
                    "nothing was approved or denied")
                env.clock.advance(by: 6)
                #expect(try await client.token(Self.poll(deviceCode)).string("error") == "authorization_pending")
                let done = try await browser.submit(
                    client, signInPage, [("username", Fixtures.alice.upn), ("password", Fixtures.alice.password), ("decision", "allow")])
                #expect(done.status == .ok && done.html.contains("signed in"), "\(done.html)")

                let tokens = try await client.token(Self.poll(deviceCode))
                #expect(tokens.status == .ok, "\(tokens.text)")
                #expect(jwtClaims(try #require(tokens.string("id_token")))["amr"] as? [String] == ["pwd"])
                env.clock.advance(by: 6)
                let again = try await client.token(Self.poll(deviceCode))
                #expect(again.status == .badRequest && again.string("error") != nil, "a device code issues tokens once: \(again.text)")
            }
        }
    }

    @Test("deny answers access_denied; an expired code answers expired_token; wrong codes are refused and counted on their own counter (issue 25.7)")
    func deviceRefusals() async throws {
        try await withTestEnvironment(configure: {
            $0.lockout.addressThreshold = 5
            $0.lockout.deviceCodeThreshold = 5
        }) { env in
            try await env.application().test(.router) { client in
                let scope = [("client_id", Fixtures.mobileClientId), ("scope", "openid offline_access")]
                let first = try await client.form(Self.devicePath, scope)
                let browser = Browser()
                let entry = try await browser.get(client, "/devicelogin")
                let page = try await browser.submit(client, entry, [("user_code", try #require(first.string("user_code")))])
                let denied = try await browser.submit(client, page, [("decision", "deny")])
                #expect(denied.status == .ok)
                let answer = try await client.token(Self.poll(try #require(first.string("device_code"))))
                #expect(answer.string("error") == "access_denied", "\(answer.text)")

                let second = try await client.form(Self.devicePath, scope)
                env.clock.advance(by: 901)
                let expired = try await client.token(Self.poll(try #require(second.string("device_code"))))
                #expect(expired.string("error") == "expired_token" && expired.errorCode == 70019, "\(expired.text)")

                var wrong = try await browser.get(client, "/devicelogin")
                for _ in 0..<6 {
                    wrong = try await browser.submit(client, wrong, [("user_code", "BBBB-BBBB")])
                    #expect(wrong.status == .badRequest)
                }
                #expect(wrong.shownCode == 50053, "guessing codes locks code entry from the address: \(String(describing: wrong.shownCode))")
                // …and only code entry: the same address (one office behind NAT) still signs in with passwords.
                let colleague = try await client.token(Grants.password(Fixtures.bob, claims: nil))
                #expect(colleague.status == .ok, "device-code guesses must not lock the address for password sign-in: \(colleague.text)")

                let bad = try await client.form(Self.devicePath, [("client_id", Fixtures.secondMobileClientId), ("scope", "openid")])
                #expect(bad.status == .badRequest && bad.string("error") == "unauthorized_client", "\(bad.text)")
                let noScope = try await client.form(Self.devicePath, [("client_id", Fixtures.mobileClientId)])
                #expect(noScope.status == .badRequest && noScope.string("error") == "invalid_request")
                let missingCSRF = try await Browser().post(client, "/devicelogin", [("user_code", "BBBB-BBBB")])
                #expect(missingCSRF.status == .badRequest)
            }
        }
    }
}
