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

/// What a revocation voids (PROTOCOL §14.1), through the router: every credential a user held before it — the refresh
/// token, the SSO cookie, the access token at Portcullis's own APIs and at `/introspect` — and nothing after it, even
/// within the same second.
enum Revoked {
    /// What Erin (an admin of the tenant) holds before the revocation.
    struct Holdings {
        var refresh: String
        /// Her access token for the mail API (the mail API introspects it).
        var access: String
        /// Her token for the admin API.
        var admin: String
        var browser: Browser
    }

    static let victim = Fixtures.admin

    /// A refresh token and a mail token (password grant), an admin token, an SSO session.
    static func holdings(_ client: some TestClientProtocol, password: String = victim.password) async throws -> Holdings {
        let account = Fixtures.Account(id: victim.id, upn: victim.upn, password: password)
        let grant = try await client.token(Grants.password(account, claims: nil))
        #expect(grant.status == .ok, "\(grant.text)")
        let admin = try await client.token(Grants.adminPassword(account))
        let browser = Browser()
        let signedIn = try await browser.signIn(client, account: account)
        #expect(signedIn.delivered["code"] != nil, "\(signedIn.html)")
        return Holdings(
            refresh: try #require(grant.string("refresh_token")), access: try #require(grant.string("access_token")),
            admin: try #require(admin.string("access_token")), browser: browser)
    }

    /// What `holdings` holds still works (before the revocation).
    static func expectWorking(_ client: some TestClientProtocol, _ held: Holdings) async throws {
        #expect(try await client.admin(.get, "/users", token: held.admin).status == .ok)
        #expect(try await introspect(client, held.access)["active"] as? Bool == true)
        #expect(try await held.browser.get(client, Authorize.query(extra: [("prompt", "none")])).delivered["code"] != nil)
    }

    /// Everything `held` holds is refused: the refresh token, the SSO cookie, the admin token, introspection.
    static func expectVoid(_ client: some TestClientProtocol, _ held: Holdings, _ why: String) async throws {
        let refreshed = try await client.token(Grants.refresh(held.refresh, claims: nil))
        #expect(refreshed.status == .badRequest && refreshed.string("error") == "invalid_grant", "\(why): the refresh token: \(refreshed.text)")
        let silent = try await held.browser.get(client, Authorize.query(extra: [("prompt", "none")]))
        #expect(silent.delivered["code"] == nil && silent.delivered["error"] == "login_required", "\(why): the SSO cookie: \(silent.delivered)")
        #expect(try await client.admin(.get, "/users", token: held.admin).status == .unauthorized, "\(why): the admin API")
        #expect(try await introspect(client, held.access)["active"] as? Bool == false, "\(why): /introspect")
    }

    /// A fresh sign-in after the revocation works — a millisecond later, in the same second.
    static func expectFreshWorks(_ client: some TestClientProtocol, _ clock: ManualClock, password: String = victim.password, _ why: String) async throws {
        let before = clock.now()
        clock.advance(by: 0.001)
        #expect(Int(before.timeIntervalSince1970) == Int(clock.now().timeIntervalSince1970), "the same second")
        let account = Fixtures.Account(id: victim.id, upn: victim.upn, password: password)
        let admin = try #require(try await client.token(Grants.adminPassword(account)).string("access_token"), "\(why): a fresh sign-in")
        #expect(try await client.admin(.get, "/users", token: admin).status == .ok, "\(why): a token issued after it, the same second")
        let grant = try await client.token(Grants.password(account, claims: nil))
        #expect(try await introspect(client, try #require(grant.string("access_token")))["active"] as? Bool == true, "\(why)")
        let refreshed = try await client.token(Grants.refresh(try #require(grant.string("refresh_token")), claims: nil))
        #expect(refreshed.status == .ok, "\(why): a new family refreshes: \(refreshed.text)")
    }

    static func introspect(_ client: some TestClientProtocol, _ token: String) async throws -> JSONReply {
        try await client.form(
            "/\(Fixtures.domain)/oauth2/v2.0/introspect", [("client_id", Fixtures.mailApiId), ("client_secret", Fixtures.mailApiSecret), ("token", token)])
    }

    static func user(_ client: some TestClientProtocol, _ admin: String) async throws -> [String: Any] {
        var user = try await client.admin(.get, "/users/\(victim.id)", token: admin).json
        user["passwordHash"] = nil
        return user
    }
}

@Suite("Revocation that holds (PROTOCOL §14.1): what each critical event voids, through the router")
struct RevocationTests {
    @Test(
        "revokeSignInSessions and confirmCompromised: the refresh token, the SSO cookie, the admin API token and /introspect all refused; a fresh sign-in works",
        arguments: [("revokeSignInSessions", HTTPResponse.Status.ok), ("confirmCompromised", .noContent)])
    func sessionsRevoked(action: String, status: HTTPResponse.Status) async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let held = try await Revoked.holdings(client)
                try await Revoked.expectWorking(client, held)
                env.clock.advance(by: 0.2)
                #expect(try await client.admin(.post, "/users/\(Revoked.victim.id)/\(action)", token: admin).status == status)
                try await Revoked.expectVoid(client, held, action)
                try await Revoked.expectFreshWorks(client, env.clock, action)
            }
        }
    }

    @Test("a password reset by an admin voids what the old password signed in; the new password signs in, the same second")
    func passwordReset() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let held = try await Revoked.holdings(client)
                env.clock.advance(by: 0.2)
                var user = try await Revoked.user(client, admin)
                user["password"] = "a-brand-new-password-7"
                let reset = try await client.admin(.put, "/users/\(Revoked.victim.id)", token: admin, json: user, headers: [DirectoryUserTests.ifMatch: "*"])
                #expect(reset.status == .ok, "\(reset.text)")
                try await Revoked.expectVoid(client, held, "password reset")
                try await Revoked.expectFreshWorks(client, env.clock, password: "a-brand-new-password-7", "password reset")
                // Renaming the user (no new password) voids nothing.
                let fresh = try await Revoked.holdings(client, password: "a-brand-new-password-7")
                var renamed = try await Revoked.user(client, admin)
                renamed["displayName"] = "Erin Renamed"
                #expect(
                    try await client.admin(.put, "/users/\(Revoked.victim.id)", token: admin, json: renamed, headers: [DirectoryUserTests.ifMatch: "*"]).status
                        == .ok)
                try await Revoked.expectWorking(client, fresh)
            }
        }
    }

    @Test("disabling a user voids everything, and enabling them again revives nothing issued before")
    func disabled() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let held = try await Revoked.holdings(client)
                env.clock.advance(by: 0.2)
                var user = try await Revoked.user(client, admin)
                user["accountEnabled"] = false
                #expect(
                    try await client.admin(.put, "/users/\(Revoked.victim.id)", token: admin, json: user, headers: [DirectoryUserTests.ifMatch: "*"]).status
                        == .ok)
                user["accountEnabled"] = true
                #expect(
                    try await client.admin(.put, "/users/\(Revoked.victim.id)", token: admin, json: user, headers: [DirectoryUserTests.ifMatch: "*"]).status
                        == .ok)
                try await Revoked.expectVoid(client, held, "disabled, then enabled")
                try await Revoked.expectFreshWorks(client, env.clock, "enabled again")
            }
        }
    }

    @Test("an authenticator app removed voids the families and sessions that used it (and the user's admin tokens); a password-only family stays")
    func methodRemoved() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                // MFA for Bob at the mail API: his code-flow sign-in uses his authenticator app.
                try await Factor.requireForBob(client)
                let browser = Browser()
                let (_, done) = try await Factor.register(client, browser, env.clock)
                let code = try #require(done.delivered["code"], "\(done.html)")
                let withApp = try await client.token(Authorize.redeem(code))
                let appRefresh = try #require(withApp.string("refresh_token"), "\(withApp.text)")
                let appAccess = try #require(withApp.string("access_token"))
                #expect(jwtClaims(appAccess)["amr"] as? [String] == ["pwd", "mfa"])
                // A family from the password alone (no policy asks for more at the daemon-less OIDC scope).
                let plain = try await client.token(Grants.password(Fixtures.bob, scope: "openid profile offline_access", claims: nil))
                let plainRefresh = try #require(plain.string("refresh_token"), "\(plain.text)")
                #expect(try await Revoked.introspect(client, appAccess)["active"] as? Bool == true)

                env.clock.advance(by: 0.2)
                let methods = try await client.admin(.get, "/users/\(Fixtures.bob.id)/authentication-methods", token: admin)
                let totp = try #require(
                    (methods["value"] as? [[String: Any]])?.first { ($0["@odata.type"] as? String)?.contains("softwareOath") == true }?["id"] as? String,
                    "\(methods.text)")
                #expect(try await client.admin(.delete, "/users/\(Fixtures.bob.id)/authentication-methods/\(totp)", token: admin).status == .noContent)

                let refused = try await client.token(Grants.refresh(appRefresh, claims: nil))
                #expect(refused.status == .badRequest && refused.errorCode == 70008, "the family that used the app: \(refused.text)")
                let silent = try await browser.get(client, Authorize.query(extra: [("prompt", "none")]))
                #expect(silent.delivered["error"] == "login_required", "the session that used the app: \(silent.delivered)")
                #expect(try await Revoked.introspect(client, appAccess)["active"] as? Bool == false, "the token issued before")
                let kept = try await client.token(Grants.refresh(plainRefresh, claims: nil))
                #expect(kept.status == .ok, "a family that never used the app stays: \(kept.text)")
            }
        }
    }

    @Test("a claims request's nbf: never a token dated ahead; up to 5 s ahead waited for, further refused; at or before now issued now")
    func futureNotBefore() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let now = Int(env.clock.now().timeIntervalSince1970)
                func claims(_ nbf: Int) -> String { #"{"access_token":{"nbf":{"essential":true,"value":"\#(nbf)"},"xms_cc":{"values":["cp1"]}}}"# }

                // Refused at once, not after a wait.
                let far = try await client.token(Grants.password(Fixtures.bob, claims: claims(now + 75)))
                #expect(
                    far.status == .badRequest && far.string("error") == "invalid_request"
                        && far.string("error_description")?.contains("more than 5 seconds ahead") == true, "75 s ahead is refused: \(far.text)")
                let six = try await client.token(Grants.password(Fixtures.bob, claims: claims(now + 6)))
                #expect(six.string("error_description")?.contains("more than 5 seconds ahead") == true, "more than 5 s ahead is refused: \(six.text)")

                let past = try await client.token(Grants.password(Fixtures.bob, claims: claims(now - 30)))
                let pastClaims = jwtClaims(try #require(past.string("access_token"), "\(past.text)"))
                #expect(pastClaims["iat"] as? Int == now && pastClaims["nbf"] as? Int == now, "issued now, not at the nbf asked for")
                #expect((pastClaims["xms_iat_ms"] as? Int).map { $0 / 1000 } == now, "with its issue time to the millisecond")

                // Two seconds ahead: the token endpoint waits for the clock to reach it (this clock moves when told to).
                async let waited = client.token(Grants.password(Fixtures.bob, claims: claims(now + 2)))
                try await Task.sleep(for: .milliseconds(300))
                env.clock.advance(by: 2.5)
                let ahead = try await waited
                let aheadClaims = jwtClaims(try #require(ahead.string("access_token"), "\(ahead.text)"))
                let issued = Int(env.clock.now().timeIntervalSince1970)
                #expect(aheadClaims["iat"] as? Int == issued && issued >= now + 2, "issued when the clock reached the nbf, at its own time: \(aheadClaims)")

                // A clock that never gets there (this one, not moved) does not date a token ahead either.
                let stuck = try await client.token(Grants.password(Fixtures.bob, claims: claims(issued + 1)))
                #expect(stuck.status == .badRequest, "\(stuck.text)")
            }
        }
    }

    @Test("'block device code flow' ends a family that began with a device code at its next refresh; other families are unaffected")
    func deviceCodeFamily() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let (deviceCode, page) = try await Flows.signIn(client, Fixtures.bob)
                #expect(page.status == .ok, "\(page.html)")
                env.clock.advance(by: 6)
                let device = try await client.token(DeviceCodeTests.poll(deviceCode))
                let deviceRefresh = try #require(device.string("refresh_token"), "\(device.text)")
                let plain = try await client.token(Grants.password(Fixtures.bob, claims: nil))
                let plainRefresh = try #require(plain.string("refresh_token"))
                // Before the policy, the device's family refreshes, and keeps its origin.
                let first = try await client.token(Grants.refresh(deviceRefresh, claims: nil))
                let nextRefresh = try #require(first.string("refresh_token"), "\(first.text)")

                #expect(try await client.admin(.post, "/conditional-access/policies", token: admin, json: Flows.microsoftManagedPolicy()).status == .created)
                let refused = try await client.token(Grants.refresh(nextRefresh, claims: nil))
                #expect(refused.status == .badRequest && refused.errorCode == 53003, "the device code's family is a device code sign-in: \(refused.text)")
                #expect(try await client.token(Grants.refresh(plainRefresh, claims: nil)).status == .ok, "a password family is not")

                let log = try await client.admin(.get, "/sign-ins", token: admin)
                let refusedEntry = (log["value"] as? [[String: Any]])?.first { $0["errorCode"] as? Int == 53003 }
                #expect(refusedEntry?["originalTransferMethod"] as? String == "deviceCodeFlow", "the sign-in log says which flow: \(log.text)")
            }
        }
    }

    @Test("a conditional-access change is replayed off the request path by a durable job; the families it now refuses are revoked")
    func policyReplay() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let bob = try await client.token(Grants.password(Fixtures.bob, claims: nil))
                let bobRefresh = try #require(bob.string("refresh_token"), "\(bob.text)")
                let alice = try await client.token(Grants.password(Fixtures.alice, claims: nil))
                let aliceRefresh = try #require(alice.string("refresh_token"))
                await env.server.signIns.flush()

                let block = Policies.document(id: "a1000000-0000-4000-8000-0000000000b1", name: "Block Bob", users: [Fixtures.bob.id], controls: ["block"])
                #expect(try await client.admin(.post, "/conditional-access/policies", token: admin, json: block).status == .created)
                // The write answered without replaying: the job waits in the store.
                #expect(try await env.store.nextPolicyReplay() != nil, "a replay was enqueued with the change")
                #expect(try await env.server.replays.runDue() == 1)
                #expect(try await env.store.nextPolicyReplay() == nil)
                #expect(
                    try await client.admin(
                        .delete, "/conditional-access/policies/a1000000-0000-4000-8000-0000000000b1", token: admin,
                        headers: [DirectoryUserTests.ifMatch: "*"]
                    ).status == .noContent)
                let refused = try await client.token(Grants.refresh(bobRefresh, claims: nil))
                #expect(
                    refused.status == .badRequest && refused.errorCode == 70008,
                    "Bob's family at the app was revoked by the replay, and stays so when the policy goes: \(refused.text)")
                #expect(try await client.token(Grants.refresh(aliceRefresh, claims: nil)).status == .ok, "Alice was never refused")

                // A report-only policy, or a delete, enqueues nothing.
                var reportOnly = block
                reportOnly["state"] = "enabledForReportingButNotEnforced"
                #expect(try await client.admin(.post, "/conditional-access/policies", token: admin, json: reportOnly).status == .created)
                #expect(try await env.store.nextPolicyReplay() == nil)
            }
        }
    }
}
