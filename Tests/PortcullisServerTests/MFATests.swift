import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PortcullisCore
import PortcullisSQLite
import PortcullisServer
import PortcullisStorage
import PortcullisTesting
import PortcullisTokens
import Testing

/// The second factor (PROTOCOL §10) through the router: registration, codes, replay, lockout, step-up,
/// `prompt=none`, the token endpoint's 50076, the device flow, admin reset, the lock-out guard, what-if.
enum Factor {
    static let policyId = "a1000000-0000-4000-8000-0000000000f1"

    /// An enabled policy that requires MFA for Bob on the mail API.
    static func requireForBob(_ client: some TestClientProtocol) async throws {
        let admin = try await client.adminToken()
        let policy = Policies.document(id: policyId, name: "Require MFA for Bob", users: [Fixtures.bob.id], controls: ["mfa"])
        let reply = try await client.admin(.post, "/conditional-access/policies", token: admin, json: policy)
        #expect(reply.status == .created, "\(reply.text)")
    }

    /// The key shown on the registration page.
    static func secret(_ page: Page) -> [UInt8]? {
        guard let range = page.html.range(of: #"id="secret"[^>]*>([A-Z2-7 ]+)<"#, options: .regularExpression) else { return nil }
        let text = page.html[range].split(separator: ">").last.map { String($0.dropLast()) } ?? ""
        return Base32.decode(text)
    }

    static func code(_ secret: [UInt8], _ clock: ManualClock, offset: Int64 = 0) -> String {
        TOTP.code(secret: secret, step: TOTP.step(at: clock.now()) + offset)
    }

    /// Signs Bob in on the page and registers a factor; returns the secret and the page after the code.
    static func register(
        _ client: some TestClientProtocol, _ browser: Browser, _ clock: ManualClock,
        query: String = Authorize.query()
    ) async throws -> (secret: [UInt8], done: Page) {
        let page = try await browser.signIn(client, query, account: Fixtures.bob)
        let secret = try #require(Self.secret(page), "the registration page shows the key: \(page.html)")
        let done = try await browser.submit(client, page, [("otp", Self.code(secret, clock))])
        return (secret, done)
    }
}

@Suite("MFA: TOTP registration and sign-in, amr, step-up, 50076, lockout")
struct MFATests {
    @Test("RFC 6238 Appendix B vectors (SHA-1, SHA-256, SHA-512); ±1 step; digits only; base32 round trip; the otpauth URI")
    func totpVectors() {
        let sha1 = Array("12345678901234567890".utf8)
        let sha256 = Array("12345678901234567890123456789012".utf8)
        let sha512 = Array("1234567890123456789012345678901234567890123456789012345678901234".utf8)
        let vectors: [(Int64, String, String, String)] = [
            (59, "94287082", "46119246", "90693936"), (1_111_111_109, "07081804", "68084774", "25091201"),
            (1_111_111_111, "14050471", "67062674", "99943326"), (1_234_567_890, "89005924", "91819424", "93441116"),
            (2_000_000_000, "69279037", "90698825", "38618901"), (20_000_000_000, "65353130", "77737706", "47863826"),
        ]
        for (time, one, two, five) in vectors {
            let step = TOTP.step(at: Date(timeIntervalSince1970: TimeInterval(time)))
            #expect(TOTP.code(secret: sha1, step: step, digits: 8) == one, "T=\(time)")
            #expect(TOTP.code(secret: sha256, step: step, digits: 8, algorithm: .sha256) == two, "T=\(time)")
            #expect(TOTP.code(secret: sha512, step: step, digits: 8, algorithm: .sha512) == five, "T=\(time)")
            #expect(TOTP.code(secret: sha1, step: step) == String(one.suffix(6)), "6 digits are the last six")
        }
        let now = Date(timeIntervalSince1970: 1_234_567_890)
        let step = TOTP.step(at: now)
        for offset: Int64 in [-1, 0, 1] {
            #expect(TOTP.matchingStep(TOTP.code(secret: sha1, step: step + offset), secret: sha1, at: now) == step + offset)
        }
        #expect(TOTP.matchingStep(TOTP.code(secret: sha1, step: step - 2), secret: sha1, at: now) == nil, "two steps back is outside the window")
        #expect(TOTP.matchingStep(TOTP.code(secret: sha1, step: step + 2), secret: sha1, at: now) == nil)
        let spaced = TOTP.code(secret: sha1, step: step)
        #expect(TOTP.matchingStep(String(spaced.prefix(3)) + " " + String(spaced.suffix(3)), secret: sha1, at: now) == step, "a space in the code is ignored")
        #expect(TOTP.matchingStep("12345a", secret: sha1, at: now) == nil && TOTP.matchingStep("١٢٣٤٥٦", secret: sha1, at: now) == nil)
        #expect(TOTP.matchingStep("", secret: sha1, at: now) == nil && TOTP.matchingStep("1234567", secret: sha1, at: now) == nil)

        #expect(Base32.encode(Array("foobar".utf8)) == "MZXW6YTBOI" && Base32.encode(Array("f".utf8)) == "MY")
        #expect(Base32.decode("mzxw 6ytb-oi======") == Array("foobar".utf8) && Base32.decode("MZ1") == nil)
        let secret = TOTP.newSecret()
        #expect(secret.count == 20 && Base32.decode(Base32.encode(secret)) == secret)
        let uri = TOTP.provisioningURI(secret: sha1, account: "bob@fabrikam.test")
        #expect(
            uri == "otpauth://totp/Portcullis:bob@fabrikam.test?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Portcullis&algorithm=SHA1&digits=6&period=30")
    }

    @Test(
        "registration on first sign-in: key and otpauth URI shown, a wrong code refused (same key kept), then the code; amr pwd+mfa; the secret sealed at rest")
    func registration() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                try await Factor.requireForBob(client)
                let browser = Browser()
                let page = try await browser.signIn(client, account: Fixtures.bob)
                #expect(page.status == .ok && page.html.contains("Set up your authenticator app"), "\(page.html)")
                let secret = try #require(Factor.secret(page))
                #expect(page.html.contains("otpauth://totp/Portcullis:bob@fabrikam.test?secret=\(Base32.encode(secret))&amp;issuer=Portcullis"))
                #expect(page.html.contains(#"autocomplete="one-time-code""#) && !page.html.contains("<script"))
                #expect(page.input("password") == nil, "the factor step does not ask for the password again")

                let wrong = try await browser.submit(client, page, [("otp", Factor.code(secret, env.clock, offset: 5))])
                #expect(wrong.status == .badRequest && wrong.shownCode == 500121, "\(wrong.html)")
                #expect(Factor.secret(wrong) == secret, "a wrong first code keeps the key the user already scanned")
                #expect(try await env.store.authenticationMethods(tenantId: TenantID(Fixtures.tenantId), userId: ObjectID(Fixtures.bob.id)).isEmpty)

                let done = try await browser.submit(client, wrong, [("otp", Factor.code(secret, env.clock))])
                #expect(done.status == .found, "\(done.html)")
                let code = try #require(done.delivered["code"])
                let tokens = try await client.token(Authorize.redeem(code))
                #expect(tokens.status == .ok, "\(tokens.text)")
                #expect(jwtClaims(try #require(tokens.string("id_token")))["amr"] as? [String] == ["pwd", "mfa"])
                #expect(jwtClaims(try #require(tokens.string("access_token")))["amr"] as? [String] == ["pwd", "mfa"])

                let methods = try await env.store.authenticationMethods(tenantId: TenantID(Fixtures.tenantId), userId: ObjectID(Fixtures.bob.id))
                let method = try #require(methods.first)
                #expect(methods.count == 1 && method.kind == .totp)
                #expect(
                    !Data(method.sealedSecret).contains(Data(secret)) && !method.sealedSecret.base64EncodedString().contains(Base32.encode(secret)),
                    "the secret is not stored in clear")
                #expect(
                    FactorSecretBox(credentials: env.dependencies.credentials).open(
                        method.sealedSecret, tenantId: Fixtures.tenantId, userId: Fixtures.bob.id, methodId: method.id.rawValue) == secret)
                #expect(
                    FactorSecretBox(credentials: env.dependencies.credentials).open(
                        method.sealedSecret, tenantId: Fixtures.tenantId, userId: Fixtures.alice.id, methodId: method.id.rawValue) == nil,
                    "a sealed secret moved to another user's row does not open")

                // The refresh-token family remembers the factor: a silent refresh satisfies mfa.
                let refreshed = try await client.token(Grants.refresh(try #require(tokens.string("refresh_token"))))
                #expect(refreshed.status == .ok, "\(refreshed.text)")
                #expect(jwtClaims(try #require(refreshed.string("access_token")))["amr"] as? [String] == ["pwd", "mfa"])
                // The password grant for the same user and resource cannot give a factor: 50076, basic_action.
                let password = try await client.token(Grants.password(Fixtures.bob, claims: nil))
                #expect(password.status == .badRequest && password.errorCode == 50076, "\(password.text)")
                #expect(password.string("error") == "invalid_grant" && password.string("suberror") == "basic_action")
                // The same browser again: the session carries the factor, no page.
                let again = try await browser.get(client, Authorize.query())
                #expect(again.status == .found && again.delivered["code"] != nil, "\(again.html)")
            }
        }
    }

    @Test(
        "a registered factor reaches Shared Signals receivers (PROTOCOL §14.2): credential-change create by the user, assurance aal1 → aal2, no session-revoked"
    )
    func registrationSignalled() async throws {
        try await withTestEnvironment(directoryJSON: try Fixtures.directoryJSONWithSignalReceivers()) { env in
            try await env.application().test(.router) { client in
                try await Factor.requireForBob(client)
                let receiver = try await client.token([
                    ("grant_type", "client_credentials"), ("client_id", Fixtures.signalReceiver.appId), ("client_secret", Fixtures.signalReceiver.secret),
                    ("scope", "api://portcullis-ssf/.default"),
                ])
                let ssf = try #require(receiver.string("access_token"), "\(receiver.text)")
                let headers: HTTPFields = [.authorization: "Bearer \(ssf)", .contentType: "application/json"]
                let wanted = [SharedSignalsEventType.credentialChange, .assuranceLevelChange, .sessionRevoked].map(\.rawValue)
                let request = try JSONSerialization.data(withJSONObject: ["events_requested": wanted, "delivery": ["method": "urn:ietf:rfc:8936"]])
                let stream = try await client.execute(
                    uri: "/\(Fixtures.domain)/ssf/stream", method: .post, headers: headers, body: ByteBuffer(bytes: Array(request))
                ) { JSONReply($0) }
                #expect(stream.status == .created, "\(stream.text)")
                let pollPath = try #require(((stream["delivery"] as? [String: Any])?["endpoint_url"] as? String).flatMap { URL(string: $0)?.path })

                let (_, done) = try await Factor.register(client, Browser(), env.clock)
                #expect(done.status == .found, "\(done.html)")

                let polled = try await client.execute(
                    uri: pollPath, method: .post, headers: headers, body: ByteBuffer(string: #"{"returnImmediately": true, "maxEvents": 10}"#)
                ) { JSONReply($0) }
                let sets = try #require(polled["sets"] as? [String: String], "\(polled.text)")
                var found: [String: [String: Any]] = [:]
                for set in sets.values {
                    let claims = jwtClaims(set)
                    let user = (claims["sub_id"] as? [String: Any])?["user"] as? [String: Any]
                    #expect(user?["sub"] as? String == Fixtures.bob.id, "every SET names Bob: \(claims)")
                    for (type, members) in claims["events"] as? [String: Any] ?? [:] { found[type] = members as? [String: Any] }
                }
                let change = try #require(found[SharedSignalsEventType.credentialChange.rawValue], "\(found)")
                #expect(change["change_type"] as? String == "create" && change["credential_type"] as? String == "app", "\(change)")
                #expect(change["initiating_entity"] as? String == "user", "\(change)")
                let assurance = try #require(found[SharedSignalsEventType.assuranceLevelChange.rawValue], "\(found)")
                #expect(assurance["previous_level"] as? String == "nist-aal1" && assurance["current_level"] as? String == "nist-aal2", "\(assurance)")
                #expect(found[SharedSignalsEventType.sessionRevoked.rawValue] == nil, "adding a method ends no session")
                #expect(sets.count == 2)
            }
        }
    }

    @Test("sign-in with a code: a replayed code refused, the next one accepted; five wrong codes lock (50053), also for the right code")
    func codesReplayLockout() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                try await Factor.requireForBob(client)
                let (secret, done) = try await Factor.register(client, Browser(), env.clock)
                #expect(done.status == .found, "\(done.html)")

                let browser = Browser()
                let page = try await browser.signIn(client, account: Fixtures.bob)
                #expect(page.status == .ok && page.html.contains("Enter your code") && Factor.secret(page) == nil, "\(page.html)")
                let replayed = try await browser.submit(client, page, [("otp", Factor.code(secret, env.clock))])
                #expect(replayed.status == .badRequest && replayed.shownCode == 500121 && replayed.html.contains("already used"), "\(replayed.html)")
                env.clock.advance(by: 30)
                let accepted = try await browser.submit(client, replayed, [("otp", Factor.code(secret, env.clock))])
                #expect(accepted.status == .found && accepted.delivered["code"] != nil, "\(accepted.html)")

                // A code from two steps ago is outside the window.
                env.clock.advance(by: 30)
                let other = Browser()
                var current = try await other.signIn(client, account: Fixtures.bob)
                let stale = try await other.submit(client, current, [("otp", Factor.code(secret, env.clock, offset: -2))])
                #expect(stale.status == .badRequest && stale.shownCode == 500121)
                current = stale
                for _ in 0..<4 {
                    current = try await other.submit(client, current, [("otp", "000000")])
                }
                #expect(current.shownCode == 50053, "the fifth wrong code locks: \(current.html)")
                let locked = try await other.submit(client, current, [("otp", Factor.code(secret, env.clock))])
                #expect(locked.status == .badRequest && locked.shownCode == 50053, "locked: even the right code is refused")
                env.clock.advance(by: 61)
                let unlocked = try await other.submit(client, locked, [("otp", Factor.code(secret, env.clock))])
                #expect(unlocked.status == .found, "after the lock: \(unlocked.html)")
            }
        }
    }

    @Test("step-up: a password-only session is asked only for the factor; prompt=none answers interaction_required (50076); forged or foreign steps refused")
    func stepUp() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let none = try await env.store.authenticationMethods(tenantId: TenantID(Fixtures.tenantId), userId: ObjectID(Fixtures.bob.id))
                #expect(none.isEmpty, "without a policy requiring it, no factor is registered")
                let browser = Browser()
                let first = try await browser.signIn(client, account: Fixtures.bob)
                #expect(first.status == .found, "password-only session: \(first.html)")

                try await Factor.requireForBob(client)
                let silent = try await browser.get(client, Authorize.query(extra: [("prompt", "none")]))
                #expect(silent.status == .found && silent.delivered["error"] == "interaction_required", "\(silent.delivered)")
                #expect(silent.delivered["error_codes"] == "50076" && silent.delivered["state"] == "state-123")

                let step = try await browser.get(client, Authorize.query())
                #expect(step.status == .ok && step.input("password") == nil && step.input("otp") != nil, "only the factor is asked: \(step.html)")
                #expect(try await Browser().submit(client, step, [("otp", "123456")]).status == .badRequest, "another browser cannot finish this step")
                let forged = Page(
                    status: step.status, headers: step.headers,
                    html: step.html.replacingOccurrences(of: #"name="ticket" value=""#, with: #"name="ticket" value="x"#))
                #expect(try await browser.submit(client, forged, [("otp", "123456")]).shownCode == 50132)
                let secret = try #require(Factor.secret(step))
                let done = try await browser.submit(client, step, [("otp", Factor.code(secret, env.clock))])
                #expect(done.status == .found, "\(done.html)")
                let silentAgain = try await browser.get(client, Authorize.query(extra: [("prompt", "none")]))
                #expect(silentAgain.delivered["code"] != nil, "the session now has the factor")
            }
        }
    }

    @Test("device code flow: the device page asks for the factor; the token has amr mfa")
    func deviceFlow() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                try await Factor.requireForBob(client)
                let browser = Browser()
                let (deviceCode, factor) = try await Flows.signIn(client, Fixtures.bob, browser: browser)
                let secret = try #require(Factor.secret(factor), "\(factor.html)")
                #expect(try await client.token(DeviceCodeTests.poll(deviceCode)).string("error") == "authorization_pending", "not approved before the factor")
                let done = try await browser.submit(client, factor, [("otp", Factor.code(secret, env.clock))])
                #expect(done.status == .ok && done.html.contains("signed in"), "\(done.html)")
                env.clock.advance(by: 6)
                let tokens = try await client.token(DeviceCodeTests.poll(deviceCode))
                #expect(tokens.status == .ok, "\(tokens.text)")
                #expect(jwtClaims(try #require(tokens.string("access_token")))["amr"] as? [String] == ["pwd", "mfa"])
            }
        }
    }

    @Test("admin: list and reset a user's methods (audited, no secret); the user registers again; the lock-out guard warns; what-if explains the control")
    func administration() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                try await Factor.requireForBob(client)
                let (secret, done) = try await Factor.register(client, Browser(), env.clock)
                #expect(done.status == .found)
                let admin = try await client.adminToken()
                let list = try await client.admin(.get, "/users/\(Fixtures.bob.upn)/authentication-methods", token: admin)
                #expect(list.status == .ok, "\(list.text)")
                let methods = try #require(list["value"] as? [[String: Any]])
                #expect(
                    methods.count == 1 && methods[0]["kind"] as? String == "totp"
                        && methods[0]["@odata.type"] as? String == "#microsoft.graph.softwareOathAuthenticationMethod")
                #expect(!list.text.contains(Base32.encode(secret)) && methods[0]["secret"] == nil)
                #expect(try await client.admin(.get, "/users/nobody@fabrikam.test/authentication-methods", token: admin).status == .notFound)
                let id = try #require(methods[0]["id"] as? String)
                #expect(
                    try await client.admin(.delete, "/users/\(Fixtures.bob.id)/authentication-methods/00000000-0000-4000-8000-000000000000", token: admin)
                        .status == .notFound)
                #expect(try await client.admin(.delete, "/users/\(Fixtures.bob.id)/authentication-methods/\(id)", token: admin).status == .noContent)
                let audit = try await client.admin(.get, "/audit", token: admin)
                #expect(audit.text.contains("authenticationMethod") && !audit.text.contains(Base32.encode(secret)), "\(audit.text)")
                let again = try await Browser().signIn(client, account: Fixtures.bob)
                #expect(again.html.contains("Set up your authenticator app") && Factor.secret(again) != nil && Factor.secret(again) != secret)

                // The lock-out guard: MFA for All users while some have no factor is a warning; force passes.
                let everyone = Policies.document(id: "a1000000-0000-4000-8000-0000000000f2", name: "MFA for everyone", users: ["All"], controls: ["mfa"])
                let warned = try await client.admin(.post, "/conditional-access/policies", token: admin, json: everyone)
                #expect(
                    warned.status == .badRequest && warned.text.contains("/grantControls/builtInControls") && warned.text.contains("no second factor"),
                    "\(warned.text)")
                let reportOnly = Policies.document(
                    id: "a1000000-0000-4000-8000-0000000000f3", name: "MFA for everyone (report-only)", state: "enabledForReportingButNotEnforced",
                    users: ["All"], controls: ["mfa"])
                #expect(try await client.admin(.post, "/conditional-access/policies", token: admin, json: reportOnly).status == .created)
                #expect(try await client.admin(.post, "/conditional-access/policies?force=true", token: admin, json: everyone).status == .created)

                // What-if: the mfa control, satisfied or not, with the reason.
                for (mfa, satisfied) in [(false, false), (true, true)] {
                    let answer = try await client.admin(
                        .post, "/conditional-access/evaluate", token: admin,
                        json: [
                            "signIn": ["userId": Fixtures.bob.id, "clientAppId": Fixtures.mobileClientId, "resourceAppId": Fixtures.mailApiId, "mfa": mfa]
                        ])
                    #expect(answer.status == .ok, "\(answer.text)")
                    let policies = try #require((answer["signIn"] as? [String: Any])?["appliedConditionalAccessPolicies"] as? [[String: Any]], "\(answer.text)")
                    let bobs = try #require(policies.first { $0["id"] as? String == Factor.policyId })
                    let results = try #require(bobs["grantControlResults"] as? [[String: Any]])
                    #expect(results.first?["control"] as? String == "mfa" && results.first?["satisfied"] as? Bool == satisfied)
                    #expect((results.first?["reason"] as? String)?.contains(satisfied ? "included a second factor" : "password only") == true, "\(results)")
                }
            }
        }
    }
}
