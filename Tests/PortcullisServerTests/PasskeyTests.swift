import Crypto
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
import PortcullisWebAuthnFormat
import Testing

/// Passkeys and authentication strengths (PROTOCOL §12) through the router, with hand-built ceremonies.
enum Passkeys {
    static let strengthPolicyId = "a1000000-0000-4000-8000-0000000000f4"

    /// An authenticator for the test server's relying party (`http://portcullis.test`).
    static func authenticator() -> SoftwareAuthenticator {
        var authenticator = SoftwareAuthenticator()
        authenticator.rpId = "portcullis.test"
        authenticator.origin = "http://portcullis.test"
        authenticator.credentialId = (0..<32).map { _ in UInt8.random(in: 0...255) }
        return authenticator
    }

    /// A `data-…` attribute of the page.
    static func data(_ page: Page, _ name: String) -> String? {
        guard let range = page.html.range(of: "data-\(name)=\"[^\"]*\"", options: .regularExpression) else { return nil }
        return HTMLForm.unescape(String(page.html[range].dropFirst("data-\(name)=\"".count).dropLast()))
    }

    /// The hidden value of an input in the form with this ID.
    static func input(_ page: Page, form: String, _ name: String) -> String? {
        guard let start = page.html.range(of: "id=\"\(form)\""), let end = page.html[start.upperBound...].range(of: "</form>") else { return nil }
        return HTMLForm(html: "<form " + String(page.html[start.lowerBound..<end.lowerBound])).fields[name]
    }

    /// Bob, signed in with his password and a newly registered TOTP on the mail API (so his session satisfied mfa);
    /// then "Add a passkey" on Security info with `authenticator`.
    static func registerForBob(
        _ client: some TestClientProtocol, _ browser: Browser, _ clock: ManualClock, _ authenticator: SoftwareAuthenticator,
        attestation: SoftwareAuthenticator.Attestation = .none
    ) async throws -> Page {
        try await Factor.requireForBob(client)
        let (_, done) = try await Factor.register(client, browser, clock)
        #expect(done.status == .found, "\(done.html)")
        return try await addOnSecurityInfo(client, browser, authenticator, attestation: attestation)
    }

    /// "Add a passkey" on Security info, in a browser whose session may add one.
    static func addOnSecurityInfo(
        _ client: some TestClientProtocol, _ browser: Browser, _ authenticator: SoftwareAuthenticator, attestation: SoftwareAuthenticator.Attestation = .none
    ) async throws -> Page {
        let info = try await browser.get(client, "/\(Fixtures.tenantId)/securityinfo")
        #expect(info.status == .ok && info.html.contains("Add a passkey"), "\(info.html)")
        let encoded = try #require(data(info, "challenge"))
        let challenge = try #require(Base64URL.decode(encoded))
        let clientData = authenticator.clientData(type: "webauthn.create", challenge: Array(challenge))
        return try await browser.post(
            client, "/\(Fixtures.tenantId)/securityinfo/passkeys",
            [
                ("csrf", try #require(input(info, form: "passkey-registration", "csrf"))),
                ("challenge", try #require(input(info, form: "passkey-registration", "challenge"))),
                ("displayName", "Test key"), ("clientDataJSON", Base64URL.encode(clientData)),
                ("attestationObject", Base64URL.encode(authenticator.attestationObject(attestation, clientData: clientData))), ("transports", "internal"),
            ])
    }

    /// The assertion fields for the passkey form of `page`.
    static func assertion(
        _ page: Page, _ authenticator: SoftwareAuthenticator, origin: String? = nil, userHandle: String? = Fixtures.bob.id,
        tamper: (inout [UInt8]) -> Void = { _ in }
    ) throws -> [(String, String)] {
        let encoded = try #require(data(page, "challenge"))
        let challenge = try #require(Base64URL.decode(encoded))
        let clientData = authenticator.clientData(type: "webauthn.get", challenge: Array(challenge), origin: origin)
        let authenticatorData = authenticator.authenticatorData(attested: false)
        var signed = authenticatorData + Array(SHA256.hash(data: clientData))
        tamper(&signed)
        var fields = [
            ("ticket", try #require(input(page, form: "passkey-assertion", "ticket"))),
            ("csrf", try #require(input(page, form: "passkey-assertion", "csrf"))),
            ("challenge", try #require(input(page, form: "passkey-assertion", "challenge"))),
            ("credentialId", Base64URL.encode(authenticator.credentialId)), ("clientDataJSON", Base64URL.encode(clientData)),
            ("authenticatorData", Base64URL.encode(authenticatorData)), ("signature", Base64URL.encode(authenticator.key.sign(signed))),
        ]
        if let userHandle { fields.append(("userHandle", Base64URL.encode(Array(userHandle.utf8)))) }
        if let username = input(page, form: "passkey-assertion", "username") { fields.append(("username", username)) }
        return fields
    }

    static func requireStrength(_ client: some TestClientProtocol, _ admin: String, strengthId: String) async throws -> JSONReply {
        var policy = Policies.document(id: strengthPolicyId, name: "Phishing-resistant MFA for Bob", users: [Fixtures.bob.id], controls: [])
        policy["grantControls"] = ["operator": "OR", "builtInControls": [String](), "authenticationStrength": ["id": strengthId]]
        return try await client.admin(.post, "/conditional-access/policies", token: admin, json: policy)
    }
}

@Suite("Passkeys and authentication strengths (PROTOCOL §12)")
struct PasskeyTests {
    @Test(
        "strengths: the built-ins listed and read-only, a custom one validated with pointers, a policy names it and reads it expanded, delete refused while used"
    )
    func strengthsAdmin() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let list = try await client.admin(.get, "/authentication-strengths", token: admin)
                let ids = (list.json["value"] as? [[String: Any]])?.compactMap { $0["id"] as? String }
                #expect(
                    ids == ["00000000-0000-0000-0000-000000000002", "00000000-0000-0000-0000-000000000003", "00000000-0000-0000-0000-000000000004"],
                    "\(list.text)")
                let builtIn = try await client.admin(
                    .delete, "/authentication-strengths/00000000-0000-0000-0000-000000000004", token: admin, headers: [.ifMatch: "*"])
                #expect(builtIn.status == .methodNotAllowed, "\(builtIn.text)")

                let bad = try await client.admin(
                    .post, "/authentication-strengths", token: admin,
                    json: [
                        "displayName": "Bad", "allowedCombinations": ["fido2", "sms"],
                        "combinationConfigurations": [["allowedAAGuids": ["nope"], "appliesToCombinations": ["fido2"]]],
                    ])
                let pointers = ((bad.json["error"] as? [String: Any])?["details"] as? [[String: Any]])?.compactMap {
                    $0["target"] as? String ?? $0["pointer"] as? String
                }
                #expect(
                    bad.status == .badRequest && bad.text.contains("/allowedCombinations/1")
                        && bad.text.contains("/combinationConfigurations/0/allowedAAGuids/0"), "\(bad.text) \(pointers ?? [])")

                let aaguid = "adce0002-35bc-c60a-648b-0b25f1f05503"
                let custom = try await client.admin(
                    .post, "/authentication-strengths", token: admin,
                    json: [
                        "displayName": "Our keys only", "allowedCombinations": ["fido2"],
                        "combinationConfigurations": [["allowedAAGuids": [aaguid.uppercased()], "appliesToCombinations": ["fido2"]]],
                    ])
                #expect(custom.status == .created, "\(custom.text)")
                let customId = try #require(custom.string("id"))
                #expect(custom.string("policyType") == "custom" && custom.string("requirementsSatisfied") == "mfa")

                let policy = try await Passkeys.requireStrength(client, admin, strengthId: customId)
                #expect(policy.status == .created, "\(policy.text)")
                let read = try await client.admin(.get, "/conditional-access/policies/\(Passkeys.strengthPolicyId)", token: admin)
                let strength = ((read.json["grantControls"] as? [String: Any])?["authenticationStrength"] as? [String: Any])
                #expect(strength?["displayName"] as? String == "Our keys only" && strength?["allowedCombinations"] as? [String] == ["fido2"], "\(read.text)")
                // What a read shows can be written back unchanged (Graph readers re-apply what they read).
                var again = read.json
                again["id"] = nil
                let replaced = try await client.admin(
                    .put, "/conditional-access/policies/\(Passkeys.strengthPolicyId)", token: admin, json: again, headers: [.ifMatch: "*"])
                #expect(replaced.status == .ok, "\(replaced.text)")

                let inUse = try await client.admin(.delete, "/authentication-strengths/\(customId)", token: admin, headers: [.ifMatch: "*"])
                #expect(inUse.status == .conflict && inUse.text.contains(Passkeys.strengthPolicyId), "\(inUse.text)")
                let unknown = try await Passkeys.requireStrength(client, admin, strengthId: "00000000-0000-0000-0000-00000000abcd")
                #expect(unknown.status == .badRequest && unknown.text.contains("/grantControls/authenticationStrength/id"), "\(unknown.text)")
            }
        }
    }

    @Test(
        "a passkey: added on Security info after TOTP, discoverable sign-in (amr fido+mfa, refresh keeps it), a strength met by it and not by password+TOTP (50076 basic_action)"
    )
    func registerAndSignIn() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let authenticator = Passkeys.authenticator()
                let added = try await Passkeys.registerForBob(client, Browser(), env.clock, authenticator)
                #expect(added.status == .ok && added.html.contains("Passkey added"), "\(added.html)")
                let stored = try await env.store.passkeys(tenantId: TenantID(Fixtures.tenantId), userId: ObjectID(Fixtures.bob.id))
                #expect(stored.count == 1 && stored.first?.displayName == "Test key" && stored.first?.transports == ["internal"])
                #expect(stored.first?.aaguid == UUID(uuidString: "adce0002-35bc-c60a-648b-0b25f1f05503"))

                // Phishing-resistant MFA for Bob on the mail API: password + TOTP no longer does.
                let admin = try await client.adminToken()
                #expect(try await Passkeys.requireStrength(client, admin, strengthId: "00000000-0000-0000-0000-000000000004").status == .created)
                let password = try await client.token(Grants.password(Fixtures.bob, claims: nil))
                #expect(password.status == .badRequest && password.errorCode == 50076 && password.string("suberror") == "basic_action", "\(password.text)")

                // A new browser: "Sign in with a passkey" without a user name.
                var browser = Browser()
                let page = try await browser.get(client, Authorize.query())
                #expect(page.html.contains("Sign in with a passkey") && Passkeys.data(page, "allow") == "", "\(page.html)")
                var signed = authenticator
                signed.signCount = 2
                let done = try await browser.post(client, "/\(Fixtures.domain)/oauth2/v2.0/authorize/passkey", try Passkeys.assertion(page, signed))
                #expect(done.status == .found, "\(done.html)")
                let code = try #require(done.delivered["code"])
                let tokens = try await client.token(Authorize.redeem(code))
                #expect(tokens.status == .ok, "\(tokens.text)")
                let access = try #require(tokens.string("access_token"))
                #expect(jwtClaims(access)["amr"] as? [String] == ["fido", "mfa"])
                let refresh = try #require(tokens.string("refresh_token"))
                let refreshed = try await client.token(Grants.refresh(refresh))
                #expect(
                    refreshed.status == .ok && jwtClaims(refreshed.string("access_token") ?? "")["amr"] as? [String] == ["fido", "mfa"], "\(refreshed.text)")

                // The same assertion again: the challenge was consumed.
                let replayed = try await browser.post(client, "/\(Fixtures.domain)/oauth2/v2.0/authorize/passkey", try Passkeys.assertion(page, signed))
                #expect(replayed.status == .badRequest && replayed.shownCode == 50132, "\(replayed.html)")

                // A password sign-in with TOTP meets mfa but not the strength: the page asks for a passkey.
                browser = Browser()
                let secretPage = try await browser.signIn(client, account: Fixtures.bob)
                #expect(secretPage.html.contains("Enter your code"), "\(secretPage.html)")
            }
        }
    }

    @Test(
        "refused ceremonies show the page with an AADSTS code, never a 5xx: wrong origin, wrong RP ID hash, UV missing, signature over other data, other browser, malformed data, counter regression (suspect, audited)"
    )
    func refusedAssertions() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let authenticator = Passkeys.authenticator()
                _ = try await Passkeys.registerForBob(client, Browser(), env.clock, authenticator)
                let path = "/\(Fixtures.domain)/oauth2/v2.0/authorize/passkey"
                func attempt(_ make: (Page) throws -> [(String, String)], browser: Browser = Browser(), page given: Page? = nil) async throws -> Page {
                    var page = given
                    if page == nil { page = try await browser.get(client, Authorize.query()) }
                    guard let page else { throw CancellationError() }
                    return try await browser.post(client, path, try make(page))
                }
                var counter: UInt32 = 10
                func next() -> SoftwareAuthenticator {
                    var copy = authenticator
                    counter += 1
                    copy.signCount = counter
                    return copy
                }
                let origin = try await attempt { try Passkeys.assertion($0, next(), origin: "https://evil.example") }
                #expect(origin.status == .badRequest && origin.shownCode == 50012 && origin.html.contains("origin"), "\(origin.html)")
                var wrongRP = next()
                wrongRP.rpId = "evil.example"
                let rp = try await attempt { try Passkeys.assertion($0, wrongRP) }
                #expect(rp.status == .badRequest && rp.shownCode == 50012, "\(rp.html)")
                var noUV = next()
                noUV.flags = [.userPresent]
                let uv = try await attempt { try Passkeys.assertion($0, noUV) }
                #expect(uv.status == .badRequest && uv.shownCode == 50012 && uv.html.contains("verif"), "\(uv.html)")
                let tampered = try await attempt { try Passkeys.assertion($0, next(), tamper: { $0[0] ^= 1 }) }
                #expect(tampered.status == .badRequest && tampered.shownCode == 50012 && tampered.html.contains("signature"), "\(tampered.html)")
                let handle = try await attempt { try Passkeys.assertion($0, next(), userHandle: Fixtures.alice.id) }
                #expect(handle.status == .badRequest && handle.shownCode == 50012, "\(handle.html)")
                // A page from one browser, posted by another: the challenge is bound to the first.
                let first = Browser()
                let foreignPage = try await first.get(client, Authorize.query())
                let foreign = try await attempt({ try Passkeys.assertion($0, next()) }, browser: Browser(), page: foreignPage)
                #expect(foreign.status == .badRequest && [90014, 50132].contains(foreign.shownCode ?? 0), "\(foreign.html)")
                let malformed = try await attempt { page in
                    try Passkeys.assertion(page, next()).map { $0.0 == "authenticatorData" ? ($0.0, "AAEC") : $0 }
                }
                #expect(malformed.status == .badRequest && malformed.shownCode == 50012, "\(malformed.html)")

                // A good one at 20, then a copy at 15: refused, the passkey marked suspect and audited, then refused even at 30.
                var good = authenticator
                good.signCount = 20
                #expect(try await attempt { try Passkeys.assertion($0, good) }.status == .found)
                good.signCount = 15
                let cloned = try await attempt { try Passkeys.assertion($0, good) }
                #expect(cloned.status == .badRequest && cloned.shownCode == 50053, "\(cloned.html)")
                let passkey = try #require(try await env.store.passkeys(tenantId: TenantID(Fixtures.tenantId), userId: ObjectID(Fixtures.bob.id)).first)
                #expect(passkey.suspectSince != nil)
                let audit = try await env.store.auditRecords(tenantId: TenantID(Fixtures.tenantId), limit: 20, before: nil)
                #expect(audit.contains { $0.action == .passkeySuspect && $0.documentId == passkey.id.rawValue })
                good.signCount = 30
                #expect(try await attempt { try Passkeys.assertion($0, good) }.shownCode == 50053)
            }
        }
    }
}
