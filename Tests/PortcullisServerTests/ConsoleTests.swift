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

/// The admin console's routes (issue 17): sign-in through §9 with the built-in console client, no data without
/// the role, CSRF on every form, and the pages over the admin API.
@Suite("admin console")
struct ConsoleTests {
    /// Every console page (GET), with its path parameters filled in.
    static func pages(enrollmentId: String) -> [String] {
        [
            "/admin/policies", "/admin/what-if", "/admin/sign-ins", "/admin/enrollments", "/admin/enrollments/\(enrollmentId)",
            "/admin/enrollments/\(enrollmentId)/wipe", "/admin/callbacks", "/admin/audit", "/admin/directory", "/admin/app-configuration",
            "/admin/edit/conditional-access/\(Policies.requireAppProtection)", "/admin/new/conditional-access?template=mfa",
            "/admin/delete/conditional-access/\(Policies.requireAppProtection)", "/admin/users/\(Fixtures.bob.id)/methods",
            "/admin/edit/authentication-strengths/00000000-0000-0000-0000-000000000004", "/admin/new/authentication-strengths", "/admin/signals",
        ]
    }

    /// Every console form (POST), with its path parameters filled in.
    static func forms(enrollmentId: String) -> [String] {
        [
            "/admin/policies/state", "/admin/edit/conditional-access/\(Policies.requireAppProtection)", "/admin/new/conditional-access",
            "/admin/delete/conditional-access/\(Policies.requireAppProtection)", "/admin/what-if", "/admin/what-if/impact",
            "/admin/enrollments/\(enrollmentId)/wipe",
            "/admin/callbacks/1/redeliver", "/admin/users/\(Fixtures.bob.id)/methods/pass", "/admin/users/\(Fixtures.bob.id)/methods/remove",
            "/admin/users/\(Fixtures.bob.id)/methods/clear", "/admin/users/\(Fixtures.bob.id)/revoke", "/admin/signals/unknown/status",
            "/admin/signals/unknown/delete", "/admin/signout",
        ]
    }

    /// Signs `account` in to the console the way a browser does; returns the browser (its cookies) and the page it landed on.
    static func signIn(_ client: some TestClientProtocol, _ account: Fixtures.Account, base: String) async throws -> (Browser, Page) {
        let browser = Browser()
        // Several tenants here: /admin asks which organization (with one it goes straight to its sign-in).
        let start = try await browser.get(client, "/admin")
        #expect(start.status == .ok && start.html.contains("name=\"tenant\""))
        var page = try await browser.get(client, "/admin/signin?tenant=\(Fixtures.domain)")
        var location: String
        #expect(page.status == .seeOther, "to the tenant's authorize endpoint")
        location = try #require(page.headers[.location])
        #expect(
            location.hasPrefix(base + "/") && location.contains("client_id=\(BuiltInResources.consoleAppId)") && location.contains("code_challenge_method=S256")
        )
        page = try await browser.get(client, String(location.dropFirst(base.count)))
        #expect(page.status == .ok && page.html.contains("Portcullis admin console"), "the sign-in page names the console")
        page = try await browser.submit(client, page, [("username", account.upn), ("password", account.password)])
        location = try #require(page.headers[.location], "\(page.status) \(page.html.prefix(500))")
        #expect(location.hasPrefix(base + "/admin/callback?"), "\(location)")
        page = try await browser.get(client, String(location.dropFirst(base.count)))
        return (browser, page)
    }

    /// The text of the page's textarea, unescaped.
    static func textarea(_ html: String) -> String? {
        guard let start = html.range(of: "<textarea"), let open = html[start.upperBound...].firstIndex(of: ">"),
            let end = html.range(of: "</textarea>", range: open..<html.endIndex)
        else { return nil }
        return String(html[html.index(after: open)..<end.lowerBound])
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'").replacingOccurrences(of: "&lt;", with: "<")
            .replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&amp;", with: "&")
    }

    static func grantAdmin(_ client: some TestClientProtocol, _ account: Fixtures.Account) async throws {
        let admin = try await client.adminToken()
        let granted = try await client.admin(
            .post, "/app-role-assignments", token: admin,
            json: ["principalId": account.id, "resource": "api://portcullis-admin", "role": "Portcullis.Admin"])
        #expect(granted.status == .created, "\(granted.text)")
    }

    @Test("no session: every page and form goes through sign-in and shows nothing; a user without the role sees the no-access page only")
    func withoutTheRole() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                try await client.createAppProtectionCA()
                let enrollment = try await client.becomeCompliant()
                for path in Self.pages(enrollmentId: enrollment) {
                    let page = try await Browser().get(client, path)
                    #expect(
                        page.status == .seeOther && page.headers[.location]?.contains("/admin/signin") == true && !page.html.contains("Fabrikam"), "\(path)")
                }
                for path in Self.forms(enrollmentId: enrollment) {
                    let page = try await Browser().post(client, path, [("csrf", "x"), ("document", "{}")])
                    #expect(page.status == .seeOther && !page.html.contains("Fabrikam"), "\(path): \(page.status)")
                }
                let base = env.configuration.baseURL
                let (browser, landed) = try await Self.signIn(client, Fixtures.bob, base: base)
                #expect(
                    landed.status == .forbidden && landed.html.contains("No access") && landed.html.contains(Fixtures.bob.upn), "\(landed.html.prefix(800))")
                for path in Self.pages(enrollmentId: enrollment) {
                    let page = try await browser.get(client, path)
                    #expect(page.status == .forbidden && page.html.contains("No access"), "\(path): \(page.status)")
                    #expect(!page.html.contains(Fixtures.alice.upn) && !page.html.contains("Require app protection"), "\(path) shows no data")
                }
                let csrf = try #require(landed.input("csrf"))
                let wipe = try await browser.post(client, "/admin/enrollments/\(enrollment)/wipe", [("csrf", csrf)])
                #expect(wipe.status == .forbidden)
                #expect(try await env.store.enrollment(id: RecordID(enrollment))?.state == .compliant, "nothing was wiped")
            }
        }
    }

    @Test("an admin: every page renders with data; forms without the CSRF token are refused and change nothing; edit, state, wipe through the API")
    func administrator() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                try await Self.grantAdmin(client, Fixtures.alice)
                try await client.createAppProtectionCA()
                let enrollment = try await client.becomeCompliant(Fixtures.bob, device: "device-9")
                let base = env.configuration.baseURL
                let (browser, landed) = try await Self.signIn(client, Fixtures.alice, base: base)
                #expect(landed.status == .seeOther && landed.headers[.location]?.hasSuffix("/admin/policies") == true, "\(landed.status)")
                let cookie = try #require(browser.cookies.first { $0.name == "portcullis_console" })
                #expect(cookie.path == "/admin")
                for path in Self.pages(enrollmentId: enrollment) {
                    let page = try await browser.get(client, path)
                    #expect(page.status == .ok, "\(path): \(page.status) \(page.html.prefix(600))")
                    #expect(page.headers[.contentSecurityPolicy]?.contains("default-src 'self'") == true && !page.html.contains("<script"), "\(path)")
                    for label in ["Policies", "What if", "Sign-ins", "Enrollments", "Callbacks", "Audit", "Directory", "App configuration", "Signals"] {
                        #expect(page.html.contains(">\(label)</a>"), "\(path) navigation: \(label)")
                    }
                }
                let policies = try await browser.get(client, "/admin/policies")
                #expect(
                    policies.html.contains("Require app protection") || policies.html.contains(Policies.requireAppProtection), "\(policies.html.prefix(400))")
                let csrf = try #require(policies.input("csrf"))

                // Without (or with a wrong) CSRF token: refused, nothing changed.
                for path in Self.forms(enrollmentId: enrollment) {
                    for token in [nil, "forged"] as [String?] {
                        let fields = token.map { [("csrf", $0)] } ?? []
                        let refused = try await browser.post(
                            client, path, fields + [("id", Policies.requireAppProtection), ("state", "disabled"), ("document", "{}")])
                        #expect(refused.status == .forbidden && refused.html.contains("Form expired"), "\(path) \(token ?? "no token"): \(refused.status)")
                    }
                }
                #expect(try await env.store.enrollment(id: RecordID(enrollment))?.state == .compliant)

                // The editor: a deliberate error shows its pointer next to the text; a correct save lands.
                let editor = try await browser.get(client, "/admin/edit/conditional-access/\(Policies.requireAppProtection)")
                let document = try #require(Self.textarea(editor.html))
                let etag = try #require(editor.input("etag"))
                let broken = document.replacingOccurrences(of: "\"compliantApplication\"", with: "\"teleport\"")
                #expect(broken != document)
                let refused = try await browser.post(
                    client, "/admin/edit/conditional-access/\(Policies.requireAppProtection)", [("csrf", csrf), ("etag", etag), ("document", broken)])
                #expect(
                    refused.status == .badRequest && refused.html.contains("/grantControls/builtInControls/0") && refused.html.contains("teleport"),
                    "\(refused.html.prefix(2000))")
                let disabled = document.replacingOccurrences(of: "\"state\": \"enabled\"", with: "\"state\": \"disabled\"")
                #expect(disabled != document, "\(document)")
                let saved = try await browser.post(
                    client, "/admin/edit/conditional-access/\(Policies.requireAppProtection)", [("csrf", csrf), ("etag", etag), ("document", disabled)])
                #expect(saved.status == .seeOther && saved.headers[.location]?.contains("done=saved") == true, "\(saved.status) \(saved.html.prefix(1500))")
                // The stale ETag again: someone else's change explained, nothing saved.
                let stale = try await browser.post(
                    client, "/admin/edit/conditional-access/\(Policies.requireAppProtection)", [("csrf", csrf), ("etag", etag), ("document", document)])
                #expect(stale.status == .conflict && stale.html.contains("Someone else changed"), "\(stale.status)")
                let admin = try await client.adminToken()
                #expect(
                    (try await client.admin(.get, "/conditional-access/policies/\(Policies.requireAppProtection)", token: admin)).string("state") == "disabled")
                let state = try await browser.post(
                    client, "/admin/policies/state", [("csrf", csrf), ("id", Policies.requireAppProtection), ("state", "enabled")])
                #expect(state.status == .seeOther)
                #expect(
                    (try await client.admin(.get, "/conditional-access/policies/\(Policies.requireAppProtection)", token: admin)).string("state") == "enabled")

                // What if, and the impact of a draft over the recorded sign-ins (Bob's token requests above).
                let evaluated = try await browser.post(
                    client, "/admin/what-if",
                    [
                        ("csrf", csrf), ("user", Fixtures.alice.upn), ("app", Fixtures.mobileClientId), ("resource", Fixtures.mailResource),
                        ("platform", "iOS"),
                        ("protection", "none"), ("protapp", "1"),
                    ])
                #expect(
                    evaluated.status == .ok && evaluated.html.contains("id=\"decision\"") && evaluated.html.contains("Require app protection for mail"),
                    "\(evaluated.html.prefix(300))")
                let block =
                    #"{"displayName": "Block everyone", "state": "enabled", "conditions": {"users": {"includeUsers": ["All"]}, "applications": {"includeApplications": ["All"]}, "clientAppTypes": ["all"]}, "grantControls": {"operator": "OR", "builtInControls": ["block"]}}"#
                let impact = try await browser.post(client, "/admin/what-if/impact", [("csrf", csrf), ("draft", block)])
                #expect(impact.status == .ok && impact.html.contains("sign-ins replayed") && impact.html.contains("newly refused"), "\(impact.status)")
                let badDraft = try await browser.post(client, "/admin/what-if/impact", [("csrf", csrf), ("draft", #"{"displayName": "x"}"#)])
                #expect(badDraft.status == .badRequest && badDraft.html.contains("/policies/0/"), "a draft's problems at their pointers")
                let css = try await browser.get(client, "/admin/console.css")
                #expect(css.status == .ok && css.headers[.contentType]?.hasPrefix("text/css") == true)

                // The enrollments list pages by position, its nextLink carrying the filters.
                _ = try await client.becomeCompliant(Fixtures.alice, device: "device-8")
                let first = try await client.admin(.get, "/enrollments?top=1&app=\(Fixtures.mobileClientId)", token: try await client.adminToken())
                let next = try #require(first.string("nextLink"), "\(first.text)")
                #expect((first["value"] as? [Any])?.count == 1 && next.contains("skip=1") && next.contains("app="), "\(next)")
                let second = try await client.admin(.get, String(next.dropFirst("/admin/v1".count)), token: try await client.adminToken())
                #expect((second["value"] as? [Any])?.count == 1)
                let third = try await client.admin(.get, "/enrollments?top=1&skip=2&app=\(Fixtures.mobileClientId)", token: try await client.adminToken())
                #expect((third["value"] as? [Any])?.isEmpty == true && third["nextLink"] == nil)
                #expect(try await client.admin(.get, "/enrollments?skip=-1", token: try await client.adminToken()).status == .badRequest)
                let paged = try await browser.get(client, "/admin/enrollments")
                #expect(paged.status == .ok && paged.html.contains(Fixtures.alice.upn) && paged.html.contains(Fixtures.bob.upn))

                // Wipe through the console: the enrollment is wiped.
                let wiped = try await browser.post(client, "/admin/enrollments/\(enrollment)/wipe", [("csrf", csrf)])
                #expect(wiped.status == .seeOther, "\(wiped.status) \(wiped.html.prefix(500))")
                #expect(try await env.store.enrollment(id: RecordID(enrollment))?.state == .wipePending)
                let audit = try await browser.get(client, "/admin/audit")
                #expect(audit.html.contains("/state") && audit.html.contains(Fixtures.alice.upn), "the audit shows who changed what, with the diff")

                // Sign out: the console's cookie is gone — and a copy taken before (issue 25.6) no longer works either: the token
                // it carries is revoked, so the copy shows no data and the token itself is refused by the admin API.
                let copied = try #require(browser.cookies.first { $0.name == "portcullis_console" })
                #expect(
                    try await browser.get(client, "/admin/directory").html.contains(Fixtures.carol.upn), "the directory page lists the users while signed in")
                #expect(try await browser.get(client, "/admin/policies").html.contains("Require app protection"))
                let out = try await browser.post(client, "/admin/signout", [("csrf", csrf)])
                #expect(out.status == .seeOther && browser.cookies.first { $0.name == "portcullis_console" } == nil)
                #expect(try await browser.get(client, "/admin/policies").status == .seeOther)
                let thief = Browser()
                thief.cookies = [copied]
                let stolen = try await thief.get(client, "/admin/policies")
                #expect(
                    !stolen.html.contains(Fixtures.bob.upn) && !stolen.html.contains("Require app protection"), "a copied cookie shows nothing after sign-out")
                let users = try await thief.get(client, "/admin/directory")
                #expect(!users.html.contains(Fixtures.carol.upn), "\(users.status)")
            }
        }
    }

    @Test("sign-in methods: a pass issued (shown once, usable on the page), a suspect passkey cleared, methods removed; strengths listed, built-ins read-only")
    func methodsAndStrengths() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                try await Self.grantAdmin(client, Fixtures.alice)
                let added = try await Passkeys.registerForBob(client, Browser(), env.clock, Passkeys.authenticator())
                #expect(added.html.contains("Passkey added"))
                let (browser, _) = try await Self.signIn(client, Fixtures.alice, base: env.configuration.baseURL)
                let directory = try await browser.get(client, "/admin/directory")
                #expect(directory.html.contains("/admin/users/\(Fixtures.bob.id)/methods") && directory.html.contains("Phishing-resistant MFA (built-in)"))
                let path = "/admin/users/\(Fixtures.bob.id)/methods"
                var page = try await browser.get(client, path)
                #expect(page.html.contains("Authenticator app") && page.html.contains("Test key"), "\(page.html)")
                let csrf = try #require(page.input("csrf"))

                let tooLong = try await browser.post(client, path + "/pass", [("csrf", csrf), ("lifetimeInMinutes", "99999")])
                #expect(tooLong.status == .badRequest && tooLong.html.contains("10 to 43200"), "\(tooLong.html)")
                let issued = try await browser.post(client, path + "/pass", [("csrf", csrf), ("lifetimeInMinutes", "30"), ("isUsableOnce", "true")])
                let pass = try #require(
                    issued.html.range(of: #"id="pass">[A-Z0-9]{12}<"#, options: .regularExpression).map { String(issued.html[$0].dropFirst(10).dropLast()) },
                    "\(issued.html)")
                #expect(issued.headers[.cacheControl]?.contains("no-store") == true)
                #expect(!(try await browser.get(client, path)).html.contains(pass), "shown once")
                #expect(try await Browser().signIn(client, account: Fixtures.bob, password: pass).status == .found, "the pass signs Bob in")

                let passkeyId = try #require(try await env.store.passkeys(tenantId: TenantID(Fixtures.tenantId), userId: ObjectID(Fixtures.bob.id)).first?.id)
                _ = try await env.store.usePasskey(id: passkeyId, signCount: 0, backedUp: false, at: env.clock.now())
                page = try await browser.get(client, path)
                #expect(page.html.contains("Clear suspicion") && page.html.contains("Suspect"), "\(page.html)")
                let cleared = try await browser.post(client, path + "/clear", [("csrf", csrf), ("methodId", passkeyId.rawValue)])
                #expect(cleared.status == .seeOther, "\(cleared.html)")
                #expect(try await env.store.passkeys(tenantId: TenantID(Fixtures.tenantId), userId: ObjectID(Fixtures.bob.id)).first?.suspectSince == nil)
                let again = try await browser.post(client, path + "/clear", [("csrf", csrf), ("methodId", passkeyId.rawValue)])
                #expect(again.status == .conflict && again.html.contains("not marked suspect"), "\(again.status)")
                #expect(try await browser.post(client, path + "/remove", [("csrf", csrf), ("methodId", passkeyId.rawValue)]).status == .seeOther)
                #expect(try await env.store.passkeys(tenantId: TenantID(Fixtures.tenantId), userId: ObjectID(Fixtures.bob.id)).isEmpty)
                #expect(try await browser.post(client, path + "/remove", [("csrf", csrf), ("methodId", passkeyId.rawValue)]).status == .notFound)

                // A built-in strength opens in the editor; saving it is refused with the reason.
                let builtIn = try await browser.get(client, "/admin/edit/authentication-strengths/00000000-0000-0000-0000-000000000004")
                let text = try #require(Self.textarea(builtIn.html))
                let saved = try await browser.post(
                    client, "/admin/edit/authentication-strengths/00000000-0000-0000-0000-000000000004",
                    [("csrf", csrf), ("document", text), ("etag", try #require(builtIn.input("etag")))])
                #expect(saved.status == .methodNotAllowed && saved.html.contains("read-only"), "\(saved.status) \(saved.html.prefix(2000))")
                let created = try await browser.post(
                    client, "/admin/new/authentication-strengths", [("csrf", csrf), ("document", ConsoleStrengthSample.text)])
                #expect(created.status == .seeOther, "\(created.status) \(created.html.prefix(1500))")
                #expect(try await browser.get(client, "/admin/directory").html.contains("Passkey or pass"))
            }
        }
    }

    @Test(
        "sessions and signal streams: revoking Carol's sessions ends her refresh token and queues session-revoked for the stream; a stream paused, its events listed, deleted"
    )
    func sessionsAndStreams() async throws {
        try await withTestEnvironment(directoryJSON: try Fixtures.directoryJSONWithSignalReceivers()) { env in
            try await env.application().test(.router) { client in
                try await Self.grantAdmin(client, Fixtures.alice)
                let receiverToken = try #require(
                    try await client.token([
                        ("grant_type", "client_credentials"), ("client_id", Fixtures.signalReceiver.appId),
                        ("client_secret", Fixtures.signalReceiver.secret), ("scope", "api://portcullis-ssf/.default"),
                    ]).string("access_token"))
                let created = try await client.execute(
                    uri: "/\(Fixtures.domain)/ssf/stream", method: .post,
                    headers: [.authorization: "Bearer \(receiverToken)", .contentType: "application/json"],
                    body: ByteBuffer(
                        string:
                            #"{"events_requested":["https://schemas.openid.net/secevent/caep/event-type/session-revoked"],"delivery":{"method":"urn:ietf:rfc:8936"},"description":"Mail gateway"}"#
                    ))
                #expect(created.status == .created, "\(String(buffer: created.body))")
                let streamId = try #require(
                    (try JSONSerialization.jsonObject(with: Data(String(buffer: created.body).utf8)) as? [String: Any])?["stream_id"] as? String)
                let bob = try await client.token(Grants.password(Fixtures.carol, claims: nil))
                let refresh = try #require(bob.string("refresh_token"))

                let (browser, _) = try await Self.signIn(client, Fixtures.alice, base: env.configuration.baseURL)
                let methods = try await browser.get(client, "/admin/users/\(Fixtures.carol.id)/methods")
                #expect(methods.html.contains("Revoke sign-in sessions") && methods.html.contains("Confirm compromised"), "\(methods.html)")
                let csrf = try #require(methods.input("csrf"))
                #expect(try await browser.post(client, "/admin/users/\(Fixtures.carol.id)/revoke", [("csrf", "wrong")]).status == .forbidden)
                #expect(try await client.token(Grants.refresh(refresh, claims: nil)).status == .ok, "a refused form revoked nothing")
                let newer = try #require(try await client.token(Grants.password(Fixtures.carol, claims: nil)).string("refresh_token"))
                env.clock.advance(by: 2)
                let revoked = try await browser.post(client, "/admin/users/\(Fixtures.carol.id)/revoke", [("csrf", csrf)])
                #expect(revoked.status == .seeOther && revoked.headers[.location]?.hasSuffix("methods?done=revoked") == true, "\(revoked.status)")
                let refused = try await client.token(Grants.refresh(newer, claims: nil))
                #expect(refused.status == .badRequest && refused.string("error") == "invalid_grant", "\(refused.text)")
                let audit = try await env.store.auditRecords(tenantId: TenantID(Fixtures.tenantId), limit: 5, before: nil)
                #expect(audit.contains { $0.action == .revokeSignInSessions && $0.documentId == Fixtures.carol.id && $0.actor.contains(Fixtures.alice.upn) })

                let list = try await browser.get(client, "/admin/signals")
                #expect(list.status == .ok && list.html.contains("SSF receiver") && list.html.contains("Mail gateway"), "\(list.html)")
                #expect(list.html.contains("/admin/signals/\(streamId)"))
                var page = try await browser.get(client, "/admin/signals/\(streamId)")
                #expect(page.html.contains("session-revoked") && page.html.contains("Waiting for the receiver"), "\(page.html)")
                #expect(page.html.contains("credential-compromise") == false, "only the events the stream asked for")

                let bad = try await browser.post(client, "/admin/signals/\(streamId)/status", [("csrf", csrf), ("status", "asleep")])
                #expect(bad.status == .badRequest && bad.html.contains("Choose enabled, paused or disabled"))
                let paused = try await browser.post(
                    client, "/admin/signals/\(streamId)/status", [("csrf", csrf), ("status", "paused"), ("reason", "maintenance")])
                #expect(paused.status == .seeOther, "\(paused.status) \(paused.html.prefix(800))")
                page = try await browser.get(client, "/admin/signals/\(streamId)")
                #expect(page.html.contains("Paused: maintenance"), "\(page.html)")
                let status = try await client.execute(
                    uri: "/\(Fixtures.domain)/ssf/status?stream_id=\(streamId)", method: .get, headers: [.authorization: "Bearer \(receiverToken)"])
                #expect(String(buffer: status.body).contains("\"paused\""), "the receiver sees the admin's status: \(String(buffer: status.body))")

                #expect(try await browser.get(client, "/admin/signals/00000000-0000-0000-0000-000000000000").status == .notFound)
                let deleted = try await browser.post(client, "/admin/signals/\(streamId)/delete", [("csrf", csrf)])
                #expect(deleted.status == .seeOther && deleted.headers[.location]?.hasSuffix("/admin/signals?done=deleted") == true)
                #expect(try await browser.get(client, "/admin/signals").html.contains("No receiver has created a stream."))
                #expect(try await browser.post(client, "/admin/signals/\(streamId)/delete", [("csrf", csrf)]).status == .notFound)
            }
        }
    }

    @Test("the console client is refused any other redirect URI, and a callback that was not started here does nothing")
    func clientAndCallback() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let page = try await Browser().get(
                    client,
                    "/\(Fixtures.domain)/oauth2/v2.0/authorize?client_id=\(BuiltInResources.consoleAppId)&response_type=code&redirect_uri=https://evil.example/admin/callback&scope=openid"
                )
                #expect(page.status == .badRequest && page.html.contains("AADSTS50011"))
                let callback = try await Browser().get(client, "/admin/callback?code=abc&state=def")
                #expect(callback.status == .badRequest && !callback.html.contains("Fabrikam"))
                let admin = try await client.adminToken()
                let taken = try await client.admin(
                    .post, "/applications", token: admin, json: ["appId": BuiltInResources.consoleAppId.rawValue, "displayName": "Mine", "publicClient": true])
                #expect(taken.status == .badRequest, "the console's app ID is reserved: \(taken.text)")
            }
        }
    }
}

enum ConsoleStrengthSample {
    static let text = #"{"displayName": "Passkey or pass", "allowedCombinations": ["fido2", "temporaryAccessPassOneTime"]}"#
}
