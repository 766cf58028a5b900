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
import PortcullisTokens
import Testing

/// Temporary access passes and the protected registration of sign-in methods (PROTOCOL §12.3).
enum Passes {
    static func path(_ account: Fixtures.Account) -> String { "/users/\(account.upn)/authentication-methods" }

    /// Issues a pass for `account`; the answer holds it once.
    static func issue(
        _ client: some TestClientProtocol, _ admin: String, for account: Fixtures.Account = Fixtures.bob, body: [String: Any] = [:]
    ) async throws -> JSONReply {
        try await client.admin(.post, path(account) + "/temporaryAccessPass", token: admin, json: body)
    }

    /// Sets the tenant's `passwordOnlyRegistration` (`nil`: the default, trusted locations).
    static func setRegistration(_ client: some TestClientProtocol, _ admin: String, _ value: String?) async throws {
        var body = try await client.admin(.get, "/tenant", token: admin).json
        body["passwordOnlyRegistration"] = value ?? NSNull()
        let reply = try await client.admin(.put, "/tenant", token: admin, json: body, headers: [HTTPField.Name("If-Match")!: "*"])
        #expect(reply.status == .ok, "\(reply.text)")
    }
}

@Suite("Temporary access passes and protected registration (PROTOCOL §12.3)")
struct TemporaryAccessPassTests {
    @Test("the admin issues a pass (shown once, hashed, audited), validated with pointers; a new one replaces it; listed and removed like any method")
    func issueAndManage() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let issued = try await Passes.issue(client, admin, body: ["lifetimeInMinutes": 120, "isUsableOnce": true])
                #expect(issued.status == .created && issued.headers[.cacheControl]?.contains("no-store") == true, "\(issued.text)")
                let pass = try #require(issued.string("temporaryAccessPass"))
                let id = try #require(issued.string("id"))
                #expect(pass.count == 12 && pass.allSatisfy { $0.isUppercase || $0.isNumber }, "\(pass)")
                #expect(issued["lifetimeInMinutes"] as? Int == 120 && issued["isUsableOnce"] as? Bool == true && issued["isUsable"] as? Bool == true)
                #expect(issued.string("@odata.type") == "#microsoft.graph.temporaryAccessPassAuthenticationMethod")
                #expect(issued.headers[.location]?.hasSuffix("/authentication-methods/\(id)") == true, "\(issued.headers)")
                // Stored as a keyed hash, never in clear.
                let stored = try #require(try await env.store.temporaryAccessPass(tenantId: TenantID(Fixtures.tenantId), userId: ObjectID(Fixtures.bob.id)))
                #expect(stored.passHash.hasPrefix(CredentialHasher.prefix) && !stored.passHash.contains(pass))

                let listed = try #require(try await client.admin(.get, Passes.path(Fixtures.bob), token: admin)["value"] as? [[String: Any]])
                #expect(listed.count == 1 && listed[0]["id"] as? String == id && listed[0]["temporaryAccessPass"] == nil, "\(listed)")
                #expect(listed[0]["methodUsabilityReason"] as? String == "EnabledByPolicy")

                let audit = try await client.admin(.get, "/audit?top=1", token: admin)
                #expect(audit.text.contains("temporaryAccessPass") && !audit.text.contains(pass), "audited, without the pass: \(audit.text)")

                for (body, pointer) in [
                    (["lifetimeInMinutes": 5] as [String: Any], "/lifetimeInMinutes"), (["lifetimeInMinutes": 50_000], "/lifetimeInMinutes"),
                    (["startDateTime": "soon"], "/startDateTime"), (["startDateTime": "2001-01-01T00:00:00Z"], "/startDateTime"),
                    (["isUsableOnce": "yes"], "/isUsableOnce"), (["pin": "1234"], "/pin"),
                ] {
                    let refused = try await Passes.issue(client, admin, body: body)
                    #expect(refused.status == .badRequest && refused.text.contains("\"\(pointer)\""), "\(body): \(refused.text)")
                }
                let notJSON = try await client.execute(
                    uri: "/admin/v1\(Passes.path(Fixtures.bob))/temporaryAccessPass", method: .post,
                    headers: [.authorization: "Bearer \(admin)", .contentType: "application/json"], body: ByteBuffer(string: "{")
                ) { $0.status }
                #expect(notJSON == .badRequest)
                #expect(
                    try await client.admin(.post, "/users/nobody@fabrikam.test/authentication-methods/temporaryAccessPass", token: admin).status == .notFound)
                let disabled = try await Passes.issue(client, admin, for: Fixtures.disabled)
                #expect(disabled.status == .conflict, "a disabled user gets no pass: \(disabled.text)")

                // A second pass replaces the first; the first no longer signs in.
                let second = try await Passes.issue(client, admin)
                #expect(second.status == .created && second.string("id") != id && second["lifetimeInMinutes"] as? Int == 60, "defaults: \(second.text)")
                let secondId = try #require(second.string("id"))
                let page = try await Browser().signIn(client, account: Fixtures.bob, password: pass)
                #expect(page.status == .badRequest && page.shownCode == 50126, "the replaced pass: \(page.html)")

                // Method IDs compare case-insensitively.
                #expect(try await client.admin(.delete, Passes.path(Fixtures.bob) + "/\(secondId.uppercased())", token: admin).status == .noContent)
                let after = try #require(try await client.admin(.get, Passes.path(Fixtures.bob), token: admin)["value"] as? [[String: Any]])
                #expect(after.isEmpty, "removed: \(after)")
                #expect(try await client.admin(.delete, Passes.path(Fixtures.bob) + "/\(secondId)", token: admin).status == .notFound)
            }
        }
    }

    @Test(
        "the page takes a pass in place of the password: mfa met without a code (amr tap+mfa), audited; a one-time pass once; expired refused; not a password grant"
    )
    func signInWithPass() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                try await Factor.requireForBob(client)
                let pass = try #require(try await Passes.issue(client, admin, body: ["isUsableOnce": true]).string("temporaryAccessPass"))

                // Typed as people do: lower case, in groups.
                let typed = pass.lowercased().enumerated().map { $0.offset == 6 ? "-\($0.element)" : String($0.element) }.joined()
                let done = try await Browser().signIn(client, account: Fixtures.bob, password: typed)
                #expect(done.status == .found, "no code asked: \(done.html)")
                let tokens = try await client.token(Authorize.redeem(try #require(done.delivered["code"])))
                #expect(tokens.status == .ok, "\(tokens.text)")
                #expect(jwtClaims(tokens.string("access_token") ?? "")["amr"] as? [String] == ["tap", "mfa"])
                let refreshed = try await client.token(Grants.refresh(try #require(tokens.string("refresh_token"))))
                #expect(jwtClaims(refreshed.string("access_token") ?? "")["amr"] as? [String] == ["tap", "mfa"], "the family remembers it")
                let audit = try await client.admin(.get, "/audit?top=1", token: admin)
                #expect(audit.text.contains("\"signIn\"") && audit.text.contains("temporaryAccessPass"), "\(audit.text)")

                let again = try await Browser().signIn(client, account: Fixtures.bob, password: pass)
                #expect(again.status == .badRequest && again.shownCode == 50126, "a one-time pass is used up: \(again.html)")
                let listed = try #require(try await client.admin(.get, Passes.path(Fixtures.bob), token: admin)["value"] as? [[String: Any]])
                #expect(listed.first?["methodUsabilityReason"] as? String == "OneTimePassUsed", "\(listed)")

                // A multi-use pass signs in again until it expires; never through the password grant.
                let multi = try #require(try await Passes.issue(client, admin, body: ["lifetimeInMinutes": 10]).string("temporaryAccessPass"))
                #expect(try await Browser().signIn(client, account: Fixtures.bob, password: multi).status == .found)
                #expect(try await Browser().signIn(client, account: Fixtures.bob, password: multi).status == .found)
                let grant = try await client.token(Grants.password(Fixtures.bob, claims: nil).map { $0.0 == "password" ? ($0.0, multi) : $0 })
                #expect(grant.status == .badRequest && grant.errorCode == 50126, "not a password: \(grant.text)")
                env.clock.advance(by: 601)
                let expired = try await Browser().signIn(client, account: Fixtures.bob, password: multi)
                #expect(expired.status == .badRequest && expired.shownCode == 50126, "expired: \(expired.html)")
                // The password still works, and still needs the code.
                let password = try await Browser().signIn(client, account: Fixtures.bob)
                #expect(password.status == .ok && password.html.contains("Set up your authenticator app"), "\(password.html)")
            }
        }
    }

    @Test("wrong passes count against the address and account like passwords (§9.6): the fifth locks, the right pass then refused")
    func passesAreThrottled() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let pass = try #require(try await Passes.issue(client, admin).string("temporaryAccessPass"))
                var last: Page?
                for _ in 0..<env.configuration.lockout.accountThreshold {
                    last = try await Browser().signIn(client, account: Fixtures.bob, password: "WRONGPASS234")
                }
                #expect(last?.shownCode == 50053 || last?.shownCode == 50126, "\(last?.html ?? "")")
                let locked = try await Browser().signIn(client, account: Fixtures.bob, password: pass)
                #expect(locked.status == .badRequest && locked.shownCode == 50053, "locked: \(locked.html)")
            }
        }
    }

    @Test(
        "a first factor with a password alone: refused by default outside a trusted location (53003), and with 'never'; a pass opens it; then mfa is needed to add more"
    )
    func protectedRegistration() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                try await Passes.setRegistration(client, admin, nil)
                try await Factor.requireForBob(client)
                let refused = try await Browser().signIn(client, account: Fixtures.bob)
                #expect(refused.status == .forbidden && refused.shownCode == 53003 && Factor.secret(refused) == nil, "\(refused.html)")
                #expect(refused.html.contains("temporary access pass"))
                try await Passes.setRegistration(client, admin, "never")
                #expect(try await Browser().signIn(client, account: Fixtures.bob).shownCode == 53003)

                // With a pass: Security info offers both methods; the authenticator app is added (audited).
                let pass = try #require(try await Passes.issue(client, admin).string("temporaryAccessPass"))
                let browser = Browser()
                let signedIn = try await browser.signIn(client, account: Fixtures.bob, password: pass)
                #expect(signedIn.status == .found, "\(signedIn.html)")
                let info = try await browser.get(client, "/\(Fixtures.tenantId)/securityinfo")
                #expect(info.html.contains("Add a passkey") && info.html.contains("Add an authenticator app"), "\(info.html)")
                let csrf = try #require(Passkeys.input(info, form: "add-authenticator", "csrf"))
                let setup = try await browser.post(client, "/\(Fixtures.tenantId)/securityinfo/verify", [("csrf", csrf)])
                let secret = try #require(Factor.secret(setup), "\(setup.html)")
                let added = try await browser.submit(client, setup, [("otp", Factor.code(secret, env.clock))])
                #expect(added.status == .found, "\(added.html)")
                let methods = try await env.store.authenticationMethods(tenantId: TenantID(Fixtures.tenantId), userId: ObjectID(Fixtures.bob.id))
                #expect(methods.count == 1)
                let audit = try #require(try await client.admin(.get, "/audit?top=3", token: admin)["value"] as? [[String: Any]])
                #expect(
                    audit.contains { $0["kind"] as? String == "authenticationMethod" && $0["action"] as? String == "create" },
                    "the new method audited: \(audit)")
                let session = try await env.store.session(idHash: CredentialHasher.hashToken(try #require(browser.value("portcullis_session"))))
                #expect(session?.methods.contains("tap") == true, "the pass's session keeps how it signed in")

                // A password-only session of a user who has a method: verify first, to add one or to remove one.
                let other = Browser()
                _ = try await other.signIn(client, Authorize.query(client: Fixtures.mobileClientId, scope: "openid profile"), account: Fixtures.bob)
                let page = try await other.get(client, "/\(Fixtures.tenantId)/securityinfo")
                #expect(!page.html.contains("Add a passkey") && page.html.contains("first verify"), "\(page.html)")
                #expect(!page.html.contains(">Remove<"), "no Remove button without mfa")
                let removal = try await other.post(
                    client, "/\(Fixtures.tenantId)/securityinfo/methods",
                    [("csrf", try #require(page.input("csrf"))), ("id", try #require(methods.first?.id.rawValue)), ("action", "delete")])
                #expect(removal.status == .forbidden && removal.shownCode == 53003, "\(removal.html)")
                #expect(
                    try await env.store.authenticationMethods(tenantId: TenantID(Fixtures.tenantId), userId: ObjectID(Fixtures.bob.id)).count == 1,
                    "nothing removed")
            }
        }
    }

    @Test("the user action urn:user:registersecurityinfo: a policy blocks registering (even after mfa); validation with pointers")
    func userActionPolicy() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                var policy = Policies.document(
                    id: "a1000000-0000-4000-8000-0000000000f7", name: "No registration for Bob", users: [Fixtures.bob.id], controls: ["block"])
                var conditions = try #require(policy["conditions"] as? [String: Any])
                conditions["applications"] = ["includeUserActions": ["urn:user:registersecurityinfo"]]
                policy["conditions"] = conditions
                let created = try await client.admin(.post, "/conditional-access/policies", token: admin, json: policy)
                #expect(created.status == .created, "\(created.text)")
                let read = try await client.admin(.get, "/conditional-access/policies/a1000000-0000-4000-8000-0000000000f7", token: admin)
                #expect(read.text.contains("urn:user:registersecurityinfo"), "\(read.text)")

                // Bob signs in with a pass (mfa met) and still may not register.
                let pass = try #require(try await Passes.issue(client, admin).string("temporaryAccessPass"))
                let browser = Browser()
                #expect(try await browser.signIn(client, account: Fixtures.bob, password: pass).status == .found)
                let info = try await browser.get(client, "/\(Fixtures.tenantId)/securityinfo")
                #expect(!info.html.contains("Add a passkey") && info.html.contains("conditional access"), "\(info.html)")
                // The policy applies to the action only: Bob's app sign-in was not blocked, and a what-if for the mail API shows it not applied.
                let tokens = try await client.token(Grants.password(Fixtures.alice, claims: nil))
                #expect(tokens.status == .ok)

                var appControl = policy
                appControl["id"] = "a1000000-0000-4000-8000-0000000000f8"
                appControl["grantControls"] = ["operator": "OR", "builtInControls": ["compliantApplication"]]
                let wrongControl = try await client.admin(.post, "/conditional-access/policies", token: admin, json: appControl)
                #expect(wrongControl.status == .badRequest && wrongControl.text.contains("\"/grantControls\""), "\(wrongControl.text)")
                var unknown = policy
                unknown["id"] = "a1000000-0000-4000-8000-0000000000f9"
                conditions["applications"] = ["includeUserActions": ["urn:user:accountrecovery"]]
                unknown["conditions"] = conditions
                let unknownAction = try await client.admin(.post, "/conditional-access/policies", token: admin, json: unknown)
                #expect(
                    unknownAction.status == .badRequest && unknownAction.text.contains("\"/conditions/applications/includeUserActions/0\""),
                    "\(unknownAction.text)")
                conditions["applications"] = ["includeUserActions": ["urn:user:registersecurityinfo"], "includeApplications": ["All"]]
                unknown["conditions"] = conditions
                let both = try await client.admin(.post, "/conditional-access/policies", token: admin, json: unknown)
                #expect(both.status == .badRequest && both.text.contains("\"/conditions/applications/includeApplications\""), "\(both.text)")
            }
        }
    }

    @Test("deleting a user removes their sign-in methods: the authenticator app, passkeys and the pass")
    func deletedUsersMethods() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let created = try await client.admin(
                    .post, "/users", token: admin, json: ["userPrincipalName": "gina@fabrikam.test", "displayName": "Gina", "password": "Gina-pass-123"])
                let id = try #require(created.string("id"), "\(created.text)")
                #expect(try await client.admin(.post, "/users/\(id)/authentication-methods/temporaryAccessPass", token: admin).status == .created)
                let passkey = PasskeyRecord(
                    id: RecordID.generate(), tenantId: TenantID(Fixtures.tenantId), userId: ObjectID(id), credentialId: Data([7, 7, 7]), publicKey: Data([1]),
                    algorithm: -7,
                    signCount: 0, aaguid: UUID(), backupEligible: false, backedUp: false, attestation: .none, transports: [], displayName: "Key",
                    createdAt: env.clock.now())
                #expect(try await env.store.insertPasskey(passkey, limit: 10))
                let listed = try #require(try await client.admin(.get, "/users/\(id)/authentication-methods", token: admin)["value"] as? [[String: Any]])
                #expect(listed.count == 2, "\(listed)")
                #expect(try await client.admin(.delete, "/users/\(id)", token: admin, headers: [HTTPField.Name("If-Match")!: "*"]).status == .noContent)
                #expect(try await env.store.temporaryAccessPass(tenantId: TenantID(Fixtures.tenantId), userId: ObjectID(id)) == nil)
                #expect(try await env.store.passkeys(tenantId: TenantID(Fixtures.tenantId), userId: ObjectID(id)).isEmpty)
                #expect(try await env.store.passkey(credentialId: Data([7, 7, 7])) == nil, "its credential ID is free again")
            }
        }
    }

    @Test("admin: passkeys listed as fido2AuthenticationMethod, a suspect one cleared (audited, 409 when not suspect), removed")
    func adminPasskeys() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let added = try await Passkeys.registerForBob(client, Browser(), env.clock, Passkeys.authenticator())
                #expect(added.html.contains("Passkey added"), "\(added.html)")
                let listed = try #require(try await client.admin(.get, Passes.path(Fixtures.bob), token: admin)["value"] as? [[String: Any]])
                let passkey = try #require(listed.first { $0["@odata.type"] as? String == "#microsoft.graph.fido2AuthenticationMethod" }, "\(listed)")
                #expect(passkey["aaGuid"] as? String == "adce0002-35bc-c60a-648b-0b25f1f05503" && passkey["attestationLevel"] as? String == "notAttested")
                #expect(listed.contains { $0["@odata.type"] as? String == "#microsoft.graph.softwareOathAuthenticationMethod" })
                let id = try #require(passkey["id"] as? String)
                let clear = Passes.path(Fixtures.bob) + "/\(id)/clearSuspicion"
                #expect(try await client.admin(.post, clear, token: admin).status == .conflict, "not suspect")
                #expect(try await env.store.usePasskey(id: RecordID(id), signCount: 0, backedUp: false, at: env.clock.now()) == .refused)
                let cleared = try await client.admin(.post, clear, token: admin)
                #expect(cleared.status == .ok && cleared["suspect"] as? Bool == false, "\(cleared.text)")
                let audit = try await client.admin(.get, "/audit?top=1", token: admin)
                #expect(audit.text.contains("clearSuspicion"), "\(audit.text)")
                #expect(try await client.admin(.delete, Passes.path(Fixtures.bob) + "/\(id)", token: admin).status == .noContent)
                #expect(try await env.store.passkeys(tenantId: TenantID(Fixtures.tenantId), userId: ObjectID(Fixtures.bob.id)).isEmpty)
                #expect(try await client.admin(.post, clear, token: admin).status == .notFound)
            }
        }
    }
}
