import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PortcullisCore
import PortcullisServer
import PortcullisTesting
import Testing

/// DPoP at the token endpoint (PROTOCOL §15, RFC 9449).
enum DPoP {
    static let url = "http://portcullis.test\(TestEnvironment.tokenPath)"
    static let header = HTTPField.Name("DPoP")!
    static let nonceHeader = HTTPField.Name("DPoP-Nonce")!

    /// A token request with a proof by `key`, fetching the server's nonce first when it has none: the reply, and the
    /// nonce to use next.
    static func token(
        _ client: some TestClientProtocol, _ fields: [(String, String)], key: DPoPKey, clock: ManualClock, nonce: String? = nil
    ) async throws -> (reply: JSONReply, nonce: String?) {
        var nonce = nonce
        if nonce == nil {
            let first = try await client.token(fields, headers: [header: try key.proof(url: url, issuedAt: clock.now())])
            guard first.string("error") == "use_dpop_nonce" else { return (first, nil) }
            nonce = first.headers[nonceHeader]
        }
        let reply = try await client.token(fields, headers: [header: try key.proof(url: url, issuedAt: clock.now(), nonce: nonce)])
        return (reply, reply.headers[nonceHeader] ?? nonce)
    }

    /// The nonce a first proof without one is refused with.
    static func nonce(_ client: some TestClientProtocol, clock: ManualClock) async throws -> String {
        let reply = try await client.token(Grants.clientCredentials(), headers: [header: try DPoPKey().proof(url: url, issuedAt: clock.now())])
        #expect(reply.status == .badRequest && reply.string("error") == "use_dpop_nonce" && reply.errorCode == 9002351, "\(reply.text)")
        return try #require(reply.headers[nonceHeader])
    }

    static func expectRefused(_ reply: JSONReply, _ code: Int, _ why: Comment, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(
            reply.status == .badRequest && reply.string("error") == "invalid_dpop_proof" && reply.errorCode == code, "\(why): \(reply.text)",
            sourceLocation: sourceLocation)
    }
}

@Suite("DPoP: sender-constrained tokens at the token endpoint (PROTOCOL §15, RFC 9449)")
struct DPoPTests {
    @Test("client credentials with ES256, RS256 and EdDSA proofs: nonce first, then token_type DPoP and cnf.jkt; discovery; introspection shows cnf")
    func boundTokens() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                for kind in [DPoPKey.Kind.p256, .rsa2048, .ed25519] {
                    let key = try DPoPKey(kind)
                    // Without the server's nonce: use_dpop_nonce with the nonce in DPoP-Nonce (RFC 9449 §8).
                    let first = try await client.token(
                        Grants.clientCredentials(), headers: [DPoP.header: try key.proof(url: DPoP.url, issuedAt: env.clock.now())])
                    #expect(first.status == .badRequest && first.string("error") == "use_dpop_nonce", "\(first.text)")
                    let nonce = try #require(first.headers[DPoP.nonceHeader])
                    let reply = try await client.token(
                        Grants.clientCredentials(), headers: [DPoP.header: try key.proof(url: DPoP.url, issuedAt: env.clock.now(), nonce: nonce)])
                    #expect(reply.status == .ok && reply.string("token_type") == "DPoP", "\(key.algorithm): \(reply.text)")
                    #expect(reply.headers[DPoP.nonceHeader] != nil, "every DPoP answer carries the next nonce")
                    let token = try #require(reply.string("access_token"))
                    #expect((jwtClaims(token)["cnf"] as? [String: Any])?["jkt"] as? String == key.thumbprint, "\(key.algorithm): \(jwtClaims(token))")

                    // The resource introspects it: token_type DPoP and the same cnf.
                    let introspected = try await client.form(
                        "/\(Fixtures.domain)/oauth2/v2.0/introspect",
                        [("token", token), ("client_id", Fixtures.mailApiId), ("client_secret", Fixtures.mailApiSecret)])
                    #expect(introspected["active"] as? Bool == true && introspected.string("token_type") == "DPoP", "\(introspected.text)")
                    #expect((introspected["cnf"] as? [String: Any])?["jkt"] as? String == key.thumbprint)
                }
                // Without a proof: a bearer token, as before.
                let bearer = try await client.token(Grants.clientCredentials())
                let bearerClaims = jwtClaims(try #require(bearer.string("access_token")))
                #expect(bearer.string("token_type") == "Bearer" && bearerClaims["cnf"] == nil)
                let discovery = try await client.get("/\(Fixtures.domain)/v2.0/.well-known/openid-configuration")
                #expect(discovery["dpop_signing_alg_values_supported"] as? [String] == ["ES256", "RS256", "EdDSA"], "\(discovery.text)")
            }
        }
    }

    @Test("hand-made bad proofs: each refused 400 invalid_dpop_proof 9002350, never a 5xx; a normalised htu is accepted")
    func refusals() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let key = try DPoPKey()
                let other = try DPoPKey()
                let nonce = try await DPoP.nonce(client, clock: env.clock)
                let now = env.clock.now()
                func send(_ proof: String) async throws -> JSONReply {
                    try await client.token(Grants.clientCredentials(), headers: [DPoP.header: proof])
                }
                let cases: [(String, String)] = [
                    ("wrong htm", try key.proof(method: "GET", url: DPoP.url, issuedAt: now, nonce: nonce)),
                    ("wrong htu", try key.proof(url: "http://portcullis.test/other/oauth2/v2.0/token", issuedAt: now, nonce: nonce)),
                    ("other host", try key.proof(url: "http://evil.test\(TestEnvironment.tokenPath)", issuedAt: now, nonce: nonce)),
                    ("stale iat", try key.proof(url: DPoP.url, issuedAt: now.addingTimeInterval(-61), nonce: nonce)),
                    ("future iat", try key.proof(url: DPoP.url, issuedAt: now.addingTimeInterval(61), nonce: nonce)),
                    ("private key members", try key.proof(url: DPoP.url, issuedAt: now, nonce: nonce, header: ["jwk": key.privateJWK])),
                    ("alg none", try key.proof(url: DPoP.url, issuedAt: now, nonce: nonce, header: ["alg": "none"])),
                    ("alg HS256", try key.proof(url: DPoP.url, issuedAt: now, nonce: nonce, header: ["alg": "HS256"])),
                    ("alg RS256 with an EC key", try key.proof(url: DPoP.url, issuedAt: now, nonce: nonce, header: ["alg": "RS256"])),
                    ("signed by another key", try key.proof(url: DPoP.url, issuedAt: now, nonce: nonce, signWith: other)),
                    ("typ JWT", try key.proof(url: DPoP.url, issuedAt: now, nonce: nonce, header: ["typ": "JWT"])),
                    ("no jwk", try key.proof(url: DPoP.url, issuedAt: now, nonce: nonce, header: ["jwk": NSNull()])),
                    ("no jti", try key.proof(url: DPoP.url, issuedAt: now, nonce: nonce, claims: ["jti": NSNull()])),
                    ("iat as a string", try key.proof(url: DPoP.url, issuedAt: now, nonce: nonce, claims: ["iat": "\(Int(now.timeIntervalSince1970))"])),
                    ("an RSA key of 1,024 bits", try DPoPKey(.rsa1024).proof(url: DPoP.url, issuedAt: now, nonce: nonce)),
                    ("a jti of 257 characters", try key.proof(url: DPoP.url, issuedAt: now, jti: String(repeating: "j", count: 257), nonce: nonce)),
                    ("an Ed25519 jwk under ES256", try DPoPKey(.ed25519).proof(url: DPoP.url, issuedAt: now, nonce: nonce, header: ["alg": "ES256"])),
                    ("not a JWS", "not.a.proof"),
                    ("two parts", "eyJhbGciOiJFUzI1NiJ9.e30"),
                    ("too long", String(repeating: "a", count: 9000)),
                ]
                for (name, proof) in cases {
                    DPoP.expectRefused(try await send(proof), 9002350, Comment(rawValue: name))
                }
                // The same proof twice: the second is a replay (and so is a copy with a new nonce… it has a new signature, so
                // only the very same jti is checked here).
                let proof = try key.proof(url: DPoP.url, issuedAt: now, jti: "replayed-jti", nonce: nonce)
                #expect(try await send(proof).status == .ok)
                DPoP.expectRefused(try await send(proof), 9002350, "replayed")
                DPoP.expectRefused(
                    try await send(try key.proof(url: DPoP.url, issuedAt: now.addingTimeInterval(1), jti: "replayed-jti", nonce: nonce)), 9002350,
                    "the same jti in a new proof by the same key")
                // Two DPoP headers.
                var twoHeaders = Form.headers
                twoHeaders.append(HTTPField(name: DPoP.header, value: try key.proof(url: DPoP.url, issuedAt: now, nonce: nonce)))
                twoHeaders.append(HTTPField(name: DPoP.header, value: try key.proof(url: DPoP.url, issuedAt: now, nonce: nonce)))
                let two = try await client.execute(
                    uri: TestEnvironment.tokenPath, method: .post, headers: twoHeaders, body: Form.encode(Grants.clientCredentials())
                ) { JSONReply($0) }
                DPoP.expectRefused(two, 9002350, "two DPoP headers")
                // A nonce that is not the server's, and one two periods old.
                let forged = try await send(try key.proof(url: DPoP.url, issuedAt: now, nonce: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"))
                #expect(forged.string("error") == "use_dpop_nonce" && forged.headers[DPoP.nonceHeader] != nil, "\(forged.text)")
                env.clock.advance(by: 2 * 180 + 1)
                let stale = try await send(try key.proof(url: DPoP.url, issuedAt: env.clock.now(), nonce: nonce))
                #expect(stale.string("error") == "use_dpop_nonce" && stale.headers[DPoP.nonceHeader] != nonce, "\(stale.text)")
                // htu compared as RFC 9449 §4.3 says: case of scheme and host, the default port, query and fragment ignored.
                let fresh = try #require(stale.headers[DPoP.nonceHeader])
                let normalised = try await send(
                    try key.proof(url: "HTTP://Portcullis.TEST:80\(TestEnvironment.tokenPath)?x=1#f", issuedAt: env.clock.now(), nonce: fresh))
                #expect(normalised.status == .ok && normalised.string("token_type") == "DPoP", "\(normalised.text)")
            }
        }
    }

    @Test(
        "a public client's refresh token is bound to its key: no proof or another key is refused (9002353) and consumes nothing; a confidential client's is not"
    )
    func refreshBinding() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let key = try DPoPKey()
                let (signIn, nonce) = try await DPoP.token(client, Grants.password(Fixtures.carol, claims: nil), key: key, clock: env.clock)
                #expect(signIn.status == .ok && signIn.string("token_type") == "DPoP", "\(signIn.text)")
                let refresh = try #require(signIn.string("refresh_token"))

                DPoP.expectRefused(try await client.token(Grants.refresh(refresh, claims: nil)), 9002353, "refresh without a proof")
                let (otherKey, _) = try await DPoP.token(
                    client, Grants.refresh(refresh, claims: nil), key: try DPoPKey(.ed25519), clock: env.clock, nonce: nonce)
                DPoP.expectRefused(otherKey, 9002353, "refresh with another key")
                // Nothing was consumed: the right key still redeems it, and the successor stays bound.
                let (renewed, next) = try await DPoP.token(client, Grants.refresh(refresh, claims: nil), key: key, clock: env.clock, nonce: nonce)
                #expect(renewed.status == .ok && renewed.string("token_type") == "DPoP", "\(renewed.text)")
                #expect((jwtClaims(try #require(renewed.string("access_token")))["cnf"] as? [String: Any])?["jkt"] as? String == key.thumbprint)
                let successor = try #require(renewed.string("refresh_token"))
                DPoP.expectRefused(try await client.token(Grants.refresh(successor, claims: nil)), 9002353, "the successor without a proof")
                #expect(try await DPoP.token(client, Grants.refresh(successor, claims: nil), key: key, clock: env.clock, nonce: next).reply.status == .ok)

                // A bearer family of a public client is bound by its first refresh with a proof (RFC 9449 §5).
                let plain = try await client.token(Grants.password(Fixtures.carol, claims: nil))
                let (upgraded, _) = try await DPoP.token(
                    client, Grants.refresh(try #require(plain.string("refresh_token")), claims: nil), key: key, clock: env.clock)
                #expect(upgraded.string("token_type") == "DPoP", "\(upgraded.text)")
                DPoP.expectRefused(
                    try await client.token(Grants.refresh(try #require(upgraded.string("refresh_token")), claims: nil)), 9002353,
                    "the family is bound now")

                // A confidential client's refresh token is bound by its authentication, not by the key (RFC 9449 §5).
                let adminGrant =
                    Grants.password(Fixtures.admin, client: Fixtures.adminClientId, scope: "api://portcullis-admin/.default offline_access", claims: nil)
                    + [("client_secret", Fixtures.adminSecret)]
                let admin = try await DPoP.token(client, adminGrant, key: key, clock: env.clock, nonce: next).reply
                #expect(admin.status == .ok && admin.string("token_type") == "DPoP", "\(admin.text)")
                let bearer = try await client.token(
                    Grants.refresh(try #require(admin.string("refresh_token")), client: Fixtures.adminClientId, claims: nil) + [
                        ("client_secret", Fixtures.adminSecret)
                    ])
                #expect(bearer.status == .ok && bearer.string("token_type") == "Bearer", "\(bearer.text)")
            }
        }
    }

    @Test("dpop_jkt on /authorize binds the code: redeemed only with a proof by that key")
    func codeBinding() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let key = try DPoPKey()
                let badJkt = try await Browser().get(client, Authorize.query(extra: [("dpop_jkt", "short")]))
                #expect(badJkt.status != .ok || badJkt.input("ticket") == nil, "a malformed dpop_jkt is refused")
                let done = try await Browser().signIn(client, Authorize.query(extra: [("dpop_jkt", key.thumbprint)]), account: Fixtures.carol)
                let code = try #require(done.delivered["code"], "\(done.html)")
                DPoP.expectRefused(try await client.token(Authorize.redeem(code)), 9002353, "the code without a proof")
                let (other, nonce) = try await DPoP.token(client, Authorize.redeem(code), key: try DPoPKey(), clock: env.clock)
                DPoP.expectRefused(other, 9002353, "the code with another key")
                let (redeemed, _) = try await DPoP.token(client, Authorize.redeem(code), key: key, clock: env.clock, nonce: nonce)
                #expect(redeemed.status == .ok && redeemed.string("token_type") == "DPoP", "\(redeemed.text)")
            }
        }
    }

    @Test("requireDPoP on an application (admin API): its requests without a proof are refused 9002352, with one accepted; validated")
    func requireDPoP() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let path = "/applications/\(Fixtures.daemonClientId)"
                let current = try await client.admin(.get, path, token: admin)
                var app = current.json
                app["requireDPoP"] = "yes"
                let etag = try #require(current.headers[.eTag])
                let invalid = try await client.admin(.put, path, token: admin, json: app, headers: [.ifMatch: etag])
                #expect(invalid.status == .badRequest && invalid.text.contains("/requireDPoP"), "\(invalid.text)")
                app["requireDPoP"] = true
                let saved = try await client.admin(.put, path, token: admin, json: app, headers: [.ifMatch: etag])
                #expect(saved.status == .ok, "\(saved.text)")
                #expect(try await client.admin(.get, path, token: admin)["requireDPoP"] as? Bool == true)

                DPoP.expectRefused(try await client.token(Grants.clientCredentials()), 9002352, "a bearer request of an app that requires DPoP")
                let (bound, _) = try await DPoP.token(client, Grants.clientCredentials(), key: try DPoPKey(), clock: env.clock)
                #expect(bound.status == .ok && bound.string("token_type") == "DPoP", "\(bound.text)")
            }
        }
    }

    @Test("secureSignInSession: a bearer request is refused 530084, the same with a proof is issued; what-if and the sign-in log say bound or not")
    func tokenProtection() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let policy: [String: Any] = [
                    "id": "a1000000-0000-4000-8000-0000000000d1", "displayName": "Token protection for Carol", "state": "enabled",
                    "conditions": [
                        "users": ["includeUsers": [Fixtures.carol.id]], "applications": ["includeApplications": ["All"]], "clientAppTypes": ["all"],
                    ],
                    "grantControls": NSNull(),
                    "sessionControls": ["secureSignInSession": ["isEnabled": true]],
                ]
                let created = try await client.admin(.post, "/conditional-access/policies", token: admin, json: policy)
                #expect(created.status == .created, "\(created.text)")
                let malformed = try await client.admin(
                    .post, "/conditional-access/policies", token: admin,
                    json: policy.merging(["id": "a1000000-0000-4000-8000-0000000000d2", "sessionControls": ["secureSignInSession": ["on": true]]]) { $1 })
                #expect(malformed.status == .badRequest && malformed.text.contains("/sessionControls/secureSignInSession"), "\(malformed.text)")

                let bearer = try await client.token(Grants.password(Fixtures.carol, claims: nil))
                #expect(bearer.status == .badRequest && bearer.string("error") == "invalid_grant" && bearer.errorCode == 530084, "\(bearer.text)")
                let (bound, _) = try await DPoP.token(client, Grants.password(Fixtures.carol, claims: nil), key: try DPoPKey(), clock: env.clock)
                #expect(bound.status == .ok && bound.string("token_type") == "DPoP", "\(bound.text)")
                // Others are not concerned.
                #expect(try await client.token(Grants.password(Fixtures.alice, claims: nil)).status == .ok)

                let log = try await client.admin(.get, "/sign-ins?user=\(Fixtures.carol.id)", token: admin)
                let statuses = (log.json["value"] as? [[String: Any]] ?? []).compactMap {
                    ($0["tokenProtectionStatusDetails"] as? [String: Any])?["signInSessionStatus"] as? String
                }
                #expect(statuses.contains("bound") && statuses.contains("unbound"), "\(log.text.prefix(2000))")
                #expect(log.text.contains("530084") && log.text.contains("SecureSignInSession"), "\(log.text.prefix(2000))")
                // A bearer grant no policy asked to bind records nothing about binding (compact records).
                let alice = try await client.admin(.get, "/sign-ins?user=\(Fixtures.alice.id)", token: admin)
                let aliceRecords = alice.json["value"] as? [[String: Any]] ?? []
                #expect(
                    !aliceRecords.isEmpty && aliceRecords.allSatisfy { $0["tokenProtectionStatusDetails"] == nil },
                    "\(aliceRecords.map { ($0["grantType"] ?? "", $0["tokenProtectionStatusDetails"] ?? "") })")

                for (dpop, expected) in [(false, "invalid_grant"), (true, nil)] as [(Bool, String?)] {
                    let whatIf = try await client.admin(
                        .post, "/conditional-access/evaluate", token: admin,
                        json: [
                            "signIn": [
                                "userId": Fixtures.carol.id, "clientAppId": Fixtures.mobileClientId, "resourceAppId": Fixtures.mailResource, "dpop": dpop,
                            ]
                        ])
                    #expect(whatIf.status == .ok && whatIf.string("error") == expected, "dpop \(dpop): \(whatIf.text)")
                    #expect(whatIf.text.contains("secureSignInSession"), "\(whatIf.text)")
                }
            }
        }
    }

    @Test(
        "the server's own APIs as a resource: a bound token only as DPoP with a proof by its key (ath, htm, htu, once); as Bearer refused with a DPoP challenge"
    )
    func boundTokensAtTheAdminAPI() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let key = try DPoPKey()
                let grant = [
                    ("grant_type", "client_credentials"), ("client_id", Fixtures.adminClientId), ("client_secret", Fixtures.adminSecret),
                    ("scope", "api://portcullis-admin/.default"),
                ]
                let (issued, _) = try await DPoP.token(client, grant, key: key, clock: env.clock)
                let token = try #require(issued.string("access_token"), "\(issued.text)")
                let url = "http://portcullis.test/admin/v1/users"
                func call(_ authorization: String, proof: String?) async throws -> JSONReply {
                    var headers: HTTPFields = [.authorization: authorization]
                    if let proof { headers[DPoP.header] = proof }
                    return try await client.execute(uri: "/admin/v1/users", method: .get, headers: headers) { JSONReply($0) }
                }
                let asBearer = try await call("Bearer \(token)", proof: nil)
                #expect(asBearer.status == .unauthorized, "\(asBearer.text)")
                #expect(asBearer.headers[.wwwAuthenticate]?.hasPrefix(#"DPoP error="invalid_token""#) == true, "\(asBearer.headers)")
                let proof = try key.proof(method: "GET", url: url, issuedAt: env.clock.now(), accessToken: token)
                #expect(try await call("DPoP \(token)", proof: proof).status == .ok)
                let replayed = try await call("DPoP \(token)", proof: proof)
                #expect(replayed.status == .unauthorized && replayed.headers[.wwwAuthenticate]?.contains("invalid_dpop_proof") == true, "\(replayed.text)")
                let cases: [(String, String?)] = [
                    ("no proof", nil),
                    ("another key", try DPoPKey().proof(method: "GET", url: url, issuedAt: env.clock.now(), accessToken: token)),
                    ("no ath", try key.proof(method: "GET", url: url, issuedAt: env.clock.now())),
                    ("ath of another token", try key.proof(method: "GET", url: url, issuedAt: env.clock.now(), accessToken: "x.y.z")),
                    ("wrong htm", try key.proof(method: "POST", url: url, issuedAt: env.clock.now(), accessToken: token)),
                    ("wrong htu", try key.proof(method: "GET", url: "http://portcullis.test/admin/v1/groups", issuedAt: env.clock.now(), accessToken: token)),
                ]
                for (name, proof) in cases {
                    let reply = try await call("DPoP \(token)", proof: proof)
                    #expect(reply.status == .unauthorized && reply.headers[.wwwAuthenticate]?.contains("invalid_dpop_proof") == true, "\(name): \(reply.text)")
                }
                // A bearer token presented as DPoP.
                let bearer = try #require(try await client.token(grant).string("access_token"))
                let mislabelled = try await call(
                    "DPoP \(bearer)", proof: try key.proof(method: "GET", url: url, issuedAt: env.clock.now(), accessToken: bearer))
                #expect(mislabelled.status == .unauthorized && mislabelled.headers[.wwwAuthenticate]?.contains("invalid_token") == true)
                #expect(try await call("Bearer \(bearer)", proof: nil).status == .ok)
            }
        }
    }
}
