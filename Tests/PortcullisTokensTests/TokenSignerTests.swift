import Crypto
import Foundation
import PortcullisAPI
import PortcullisCore
import PortcullisTokens
import Testing

func keysDirectory() -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("portcullis-keys-\(UUID().uuidString)")
}

func sampleClaims(now: Date, aud: String = "api://mail", lifetime: Int = 3600) -> AccessTokenClaims {
    let iat = Int(now.wholeSeconds.timeIntervalSince1970)
    return AccessTokenClaims(
        iss: "https://issuer.test/t/v2.0", aud: aud, sub: "u", oid: "u", tid: "t", azp: "c", azpacr: "0",
        iat: iat, nbf: iat, exp: iat + lifetime, jti: UUID().uuidString, scp: "Mail.Read", roles: nil,
        upn: "a@f.test", preferredUsername: "a@f.test", name: "A", xmsCC: ["protapp"], idtyp: "user")
}

func decodeSegment(_ token: String, _ index: Int) throws -> [String: Any] {
    let part = String(token.split(separator: ".", omittingEmptySubsequences: false)[index])
    let data = try #require(Base64URL.decode(part))
    return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
}

@Suite("signing keys and tokens")
struct TokenSignerTests {
    let now = Date()

    @Test("keys are generated once, mode 0600, and reloaded with the same kid", arguments: SigningAlgorithm.allCases)
    func generation(_ algorithm: SigningAlgorithm) throws {
        let directory = keysDirectory()
        let first = try SigningKeyStore(directory: directory).load(algorithm: algorithm, now: now)
        #expect(first.generated.count == 1)
        let file = directory.appendingPathComponent(first.generated[0]).path
        let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let second = try SigningKeyStore(directory: directory).load(algorithm: algorithm, now: now)
        #expect(second.generated.isEmpty)
        #expect(second.active(at: now).kid == first.active(at: now).kid)
        #expect(second.active(at: now).publicJWK["alg"] == algorithm.rawValue)
    }

    @Test("a key file's name carries its activation in UTC (ISO 8601 basic), and reads back as that instant")
    func activationInName() throws {
        let directory = keysDirectory()
        let store = SigningKeyStore(directory: directory)
        let activation = Date(timeIntervalSince1970: 1_795_515_300)  // 2026-11-24T10:15:00Z
        let name = try store.generate(algorithm: .es256, activatesAt: activation)
        #expect(name == "signing-20261124T101500-es256.pem")
        let loaded = try store.load(algorithm: .es256, now: activation)
        #expect(loaded.generated.isEmpty)
        #expect(loaded.all.map(\.activatesAt) == [activation])
    }

    @Test(
        "sign → verify round trip with whole-second dates and the configured typ",
        arguments: [
            (SigningAlgorithm.es256, AccessTokenType.jwt), (.rs256, .jwt), (.es256, .atJWT),
        ])
    func roundTrip(_ algorithm: SigningAlgorithm, _ type: AccessTokenType) async throws {
        let signer = try await TokenSigner(loaded: try SigningKeyStore(directory: keysDirectory()).load(algorithm: algorithm, now: now), accessTokenType: type)
        let claims = sampleClaims(now: now)
        let token = try await signer.sign(accessToken: claims)
        let header = try decodeSegment(token, 0)
        #expect(header["alg"] as? String == algorithm.rawValue)
        #expect(header["typ"] as? String == type.rawValue)
        #expect(header["kid"] as? String == signer.active.kid)
        // NumericDates must be integers in the JSON text, not 1.795e9 or 1795309149.339.
        let payloadText = String(decoding: try #require(Base64URL.decode(String(token.split(separator: ".")[1]))), as: UTF8.self)
        #expect(payloadText.contains("\"exp\":\(claims.exp)"))
        #expect(!payloadText.contains("\"exp\":\(claims.exp)."))
        let result = await signer.verifyAccessToken(token, issuer: claims.iss, audiences: ["API://MAIL"], now: now)
        #expect(try result.get() == claims)
    }

    @Test("the hand-written access-token payload is the JSON object JSONEncoder writes, escapes and absent claims included")
    func handWrittenPayload() async throws {
        var odd = sampleClaims(now: now)
        odd.name = "Zoë \"Q\" O'Neil\\\n\t\u{1}"
        odd.roles = ["Mail.Send", "a\"b"]
        odd.scp = nil
        odd.oid = nil
        odd.xmsCC = []
        odd.xmsMamEnrollment = "e-1"
        let app = AccessTokenClaims(
            iss: "https://issuer.test/t/v2.0", aud: "api://mail", sub: "c", oid: "c", tid: "t", azp: "c", azpacr: "1",
            iat: 1, nbf: 1, exp: 2, jti: "j", scp: nil, roles: nil, upn: nil, preferredUsername: nil, name: nil, xmsCC: nil,
            idtyp: "app")
        let signer = try await TokenSigner(loaded: try SigningKeyStore(directory: keysDirectory()).load(algorithm: .es256, now: now))
        for claims in [sampleClaims(now: now), odd, app] {
            let token = try await signer.sign(accessToken: claims)
            let written = try decodeSegment(token, 1) as NSDictionary
            // Written by hand, not by JSONEncoder, which would escape the slashes (`https:\/\/`).
            let text = String(decoding: try #require(Base64URL.decode(String(token.split(separator: ".")[1]))), as: UTF8.self)
            #expect(text.hasPrefix("{\"iss\":\"https://issuer.test/t/v2.0\","))
            let header = String(decoding: try #require(Base64URL.decode(String(token.split(separator: ".")[0]))), as: UTF8.self)
            #expect(header == "{\"alg\":\"ES256\",\"kid\":\"\(signer.active.kid)\",\"typ\":\"JWT\"}")
            let reference = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(claims)) as? [String: Any]) as NSDictionary
            #expect(written == reference)
            let verified = try await signer.verifySignature(token, as: AccessTokenClaims.self)
            #expect(verified == claims)
        }
    }

    @Test("the hand-written ID-token payload is the JSON object JSONEncoder writes, with every member (a new one fails here until written)")
    func handWrittenIDToken() async throws {
        var every = IDTokenClaims(
            iss: "https://issuer.test/t/v2.0", aud: "c", sub: "s", oid: "o", tid: "t", iat: 1, nbf: 1, exp: 2, preferredUsername: "a@f.test",
            name: "Zoë \"Q\"\n", email: "a@f.test", nonce: "n/1", authTime: 1, amr: ["pwd", "mfa"], acr: "c1")
        every.idp = "https://sts.windows.net/home/"
        every.acct = 1
        every.deviceid = "d-1"
        // Every stored member is set: a member added to the type without a value here fails, and then fails the
        // comparison below until the writer writes it.
        for child in Mirror(reflecting: every).children {
            let member = Mirror(reflecting: child.value)
            #expect(member.displayStyle != .optional || !member.children.isEmpty, "set \(child.label ?? "?") in this test")
        }
        let minimal = IDTokenClaims(
            iss: "i", aud: "c", sub: "s", oid: "o", tid: "t", iat: 1, nbf: 1, exp: 2, preferredUsername: nil, name: nil, email: nil)
        let signer = try await TokenSigner(loaded: try SigningKeyStore(directory: keysDirectory()).load(algorithm: .es256, now: now))
        for claims in [every, minimal] {
            let token = try await signer.sign(idToken: claims)
            let written = try decodeSegment(token, 1) as NSDictionary
            let reference = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(claims)) as? [String: Any]) as NSDictionary
            #expect(written == reference)
            #expect(try await signer.verifySignature(token, as: IDTokenClaims.self) == claims)
        }
    }

    @Test("verification refuses tampering, alg none, HS256 confusion, wrong audience or issuer, expiry, unknown kid")
    func negatives() async throws {
        let signer = try await TokenSigner(loaded: try SigningKeyStore(directory: keysDirectory()).load(algorithm: .es256, now: now))
        let claims = sampleClaims(now: now)
        let token = try await signer.sign(accessToken: claims)
        let parts = token.split(separator: ".").map(String.init)

        func verify(_ token: String, aud: String = "api://mail", iss: String = claims.iss, at date: Date? = nil) async -> AccessTokenRejection? {
            if case .failure(let rejection) = await signer.verifyAccessToken(token, issuer: iss, audiences: [aud], now: date ?? now) { return rejection }
            return nil
        }

        // Tampered payload: same signature, different claims.
        var payload = try decodeSegment(token, 1)
        payload["aud"] = "api://other"
        let tamperedPayload = Base64URL.encode(try JSONSerialization.data(withJSONObject: payload))
        #expect(await verify("\(parts[0]).\(tamperedPayload).\(parts[2])") == .malformedOrBadSignature)
        // Flipped signature byte.
        var signature = Array(try #require(Base64URL.decode(parts[2])))
        signature[5] ^= 0x01
        #expect(await verify("\(parts[0]).\(parts[1]).\(Base64URL.encode(signature))") == .malformedOrBadSignature)
        // alg: none, no signature.
        let noneHeader = Base64URL.encode(Data(#"{"alg":"none","typ":"JWT","kid":"\#(signer.active.kid)"}"#.utf8))
        #expect(await verify("\(noneHeader).\(parts[1]).") == .malformedOrBadSignature)
        // HS256 keyed with the public key PEM (algorithm confusion).
        let hsHeader = Base64URL.encode(Data(#"{"alg":"HS256","typ":"JWT","kid":"\#(signer.active.kid)"}"#.utf8))
        let mac = HMAC<SHA256>.authenticationCode(for: Data("\(hsHeader).\(parts[1])".utf8), using: SymmetricKey(data: Data(signer.active.publicKeyPEM.utf8)))
        #expect(await verify("\(hsHeader).\(parts[1]).\(Base64URL.encode(mac))") == .malformedOrBadSignature)
        // Wrong audience, wrong issuer.
        #expect(await verify(token, aud: "api://other") == .wrongAudience)
        #expect(await verify(token, iss: "https://elsewhere/v2.0") == .wrongIssuer)
        // Expired, and not yet valid.
        #expect(await verify(token, at: now.addingTimeInterval(3601)) == .expired)
        #expect(await verify(token, at: now.addingTimeInterval(-120)) == .notYetValid)
        // Dated ahead (PROTOCOL §14.1): an `iat` ahead of the clock is not believed, even with a valid `nbf`.
        var ahead = claims
        ahead.iat = claims.iat + 120
        #expect(await verify(try await signer.sign(accessToken: ahead)) == .notYetValid)
        // Signed by a key we do not hold (unknown kid).
        let stranger = try await TokenSigner(loaded: try SigningKeyStore(directory: keysDirectory()).load(algorithm: .es256, now: now))
        #expect(await verify(try await stranger.sign(accessToken: claims)) == .malformedOrBadSignature)
        #expect(await verify("not.a.jwt") == .malformedOrBadSignature)
        #expect(await verify("") == .malformedOrBadSignature)
    }

    @Test("the JWKS publishes every key with kid, alg and use; the kid is the RFC 7638 thumbprint")
    func jwks() async throws {
        let directory = keysDirectory()
        let store = SigningKeyStore(directory: directory)
        _ = try store.load(algorithm: .es256, now: now)
        try store.generate(algorithm: .rs256, activatesAt: now.addingTimeInterval(1))
        let loaded = try store.load(algorithm: .es256, now: now)
        #expect(loaded.all.count == 2)
        let signer = try await TokenSigner(loaded: loaded)
        let jwks = try #require(try JSONSerialization.jsonObject(with: signer.jwksJSON) as? [String: [[String: String]]])
        let keys = try #require(jwks["keys"])
        #expect(Set(keys.compactMap { $0["alg"] }) == ["ES256", "RS256"])
        #expect(keys.allSatisfy { $0["use"] == "sig" && $0["kid"] != nil })
        let ec = try #require(keys.first { $0["kty"] == "EC" })
        let input = #"{"crv":"P-256","kty":"EC","x":"\#(ec["x"]!)","y":"\#(ec["y"]!)"}"#
        #expect(ec["kid"] == Base64URL.encode(SHA256.hash(data: Data(input.utf8))))
    }
}

@Suite("key rotation")
struct KeyRotationTests {
    @Test("a key added with a future activation is published at once and signs only from its activation time")
    func activation() async throws {
        let directory = keysDirectory()
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let store = SigningKeyStore(directory: directory)
        let first = try store.load(algorithm: .es256, now: start)
        try store.generate(algorithm: .es256, activatesAt: start.addingTimeInterval(3600))
        let loaded = try store.load(algorithm: .es256, now: start)
        #expect(loaded.generated.isEmpty && loaded.all.count == 2)
        #expect(loaded.active(at: start).kid == first.active(at: start).kid)
        let next = loaded.active(at: start.addingTimeInterval(3600))
        #expect(next.kid != first.active(at: start).kid)
        let clock = ManualWallClock(start)
        let signer = try await TokenSigner(loaded: loaded, clock: clock)
        let jwks = try #require(try JSONSerialization.jsonObject(with: signer.jwksJSON) as? [String: [[String: String]]])
        #expect(jwks["keys"]?.count == 2, "both keys are published before the switch")
        let before = try await signer.sign(accessToken: sampleClaims(now: start))
        #expect(try decodeSegment(before, 0)["kid"] as? String == first.active(at: start).kid)
        clock.date = start.addingTimeInterval(3601)
        let after = try await signer.sign(accessToken: sampleClaims(now: start))
        #expect(try decodeSegment(after, 0)["kid"] as? String == next.kid)
        // Tokens signed by the old key still verify.
        if case .failure(let rejection) = await signer.verifyAccessToken(before, issuer: nil, audiences: nil, now: start) { Issue.record("\(rejection)") }
    }

    @Test("nodes starting together on one keys directory create one key")
    func concurrentFirstStart() async throws {
        let directory = keysDirectory()
        let kids = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<8 { group.addTask { try SigningKeyStore(directory: directory).load(algorithm: .es256, now: Date()).active(at: Date()).kid } }
            var kids = Set<String>()
            for try await kid in group { kids.insert(kid) }
            return kids
        }
        #expect(kids.count == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix("signing-") }.count == 1)
    }
}

final class ManualWallClock: WallClock, @unchecked Sendable {
    // Tests only: written before the reads that follow, on one task.
    var date: Date
    init(_ date: Date) { self.date = date }
    func now() -> Date { date }
}

@Suite("credential hashing")
struct CredentialHasherTests {
    @Test("keyed secrets verify only with the same pepper; tokens hash to hex SHA-256")
    func secrets() {
        let hasher = CredentialHasher(pepper: Data(repeating: 1, count: 32))
        let other = CredentialHasher(pepper: Data(repeating: 2, count: 32))
        let hash = hasher.hashSecret("s3cret")
        #expect(hash.hasPrefix("hmac-sha256:"))
        #expect(hasher.verifySecret("s3cret", against: ["hmac-sha256:nope", hash]))
        #expect(!hasher.verifySecret("s3cret!", against: [hash]))
        #expect(!other.verifySecret("s3cret", against: [hash]))
        #expect(!hasher.verifySecret("s3cret", against: []))
        #expect(CredentialHasher.hashToken("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(CredentialHasher.generateSecret().count >= 43)
    }

    @Test("a secret's hash is HMAC-SHA-256 under the pepper, whatever was hashed before (each starts from a fresh copy of the keyed state)")
    func keyedStateCopied() {
        let pepper = Data((0..<32).map { UInt8($0) })
        let hasher = CredentialHasher(pepper: pepper)
        func expected(_ secret: String) -> String {
            "hmac-sha256:" + Base64URL.encode(HMAC<SHA256>.authenticationCode(for: Data(secret.utf8), using: SymmetricKey(data: pepper)))
        }
        for secret in ["a", "s3cret", "a", "", String(repeating: "long-secret-", count: 20), "s3cret", "é\u{1F511}"] {
            #expect(hasher.hashSecret(secret) == expected(secret), "\(secret)")
        }
    }
}

@Suite("tenant key rings (PROTOCOL §11)")
struct TenantKeyRingTests {
    static let tenantA = "aaaaaaaa-1111-4111-8111-111111111111"
    static let tenantB = "bbbbbbbb-2222-4222-8222-222222222222"

    func rejection(_ result: Result<AccessTokenClaims, AccessTokenRejection>) -> AccessTokenRejection? {
        if case .failure(let rejection) = result { rejection } else { nil }
    }

    func kids(_ jwks: Data) throws -> Set<String> {
        let document = try #require(try JSONSerialization.jsonObject(with: jwks) as? [String: [[String: String]]])
        return Set((document["keys"] ?? []).compactMap { $0["kid"] })
    }

    @Test("each tenant signs with its own ring; its JWKS lists only its keys; one tenant's token never verifies with another's ring")
    func separation() async throws {
        let keys = keysDirectory()
        let now = Date()
        let rings = try TenantKeyRings(keysDirectory: keys, algorithm: .es256, retiringWindow: 3600)
        let a = try await rings.signer(tenantId: TenantID(Self.tenantA))
        let b = try await rings.signer(tenantId: TenantID(Self.tenantB))
        #expect(a.active.kid != b.active.kid)
        #expect(try kids(a.jwksJSON) == [a.active.kid])
        #expect(try kids(b.jwksJSON) == [b.active.kid])
        let fromA = try await a.sign(accessToken: sampleClaims(now: now))
        if case .failure(let rejection) = await a.verifyAccessToken(fromA, issuer: nil, audiences: nil, now: now) { Issue.record("\(rejection)") }
        #expect(rejection(await b.verifyAccessToken(fromA, issuer: nil, audiences: nil, now: now)) == .malformedOrBadSignature)
        // The rings live under Keys/tenants/{id}, 0600, and a second process on the same directory loads the same ones.
        let reopened = try await TenantKeyRings(keysDirectory: keys, algorithm: .es256, retiringWindow: 3600).signer(
            tenantId: TenantID(Self.tenantA.uppercased()))
        #expect(reopened.active.kid == a.active.kid)
        #expect(TenantKeyRings.tenantIds(keysDirectory: keys) == [TenantID(Self.tenantA), TenantID(Self.tenantB)])
        #expect(try FileManager.default.contentsOfDirectory(atPath: keys.path).allSatisfy { !$0.hasPrefix("signing-") }, "no installation-wide key")
    }

    @Test("a tenant ID that is not a GUID never becomes a path", arguments: ["../x", "t", "", "aaaaaaaa-1111-4111-8111-111111111111/../b"])
    func pathSafety(_ id: String) async throws {
        let rings = try TenantKeyRings(keysDirectory: keysDirectory(), algorithm: .es256, retiringWindow: 3600)
        await #expect(throws: KeyFileError.self) { try await rings.signer(tenantId: TenantID(id)) }
    }

    @Test("installation-wide keys of earlier releases never sign again, verify and are published until the window after the upgrade, then are ignored")
    func retiringKeys() async throws {
        let keys = keysDirectory()
        let upgrade = Date(timeIntervalSince1970: 1_800_000_000)
        // An earlier release's key and a token it signed just before the upgrade.
        let legacy = try await TokenSigner(loaded: try SigningKeyStore(directory: keys).load(algorithm: .es256, now: upgrade.addingTimeInterval(-86400)))
        let old = try await legacy.sign(accessToken: sampleClaims(now: upgrade.addingTimeInterval(-60)))
        let clock = ManualWallClock(upgrade)
        let rings = try TenantKeyRings(keysDirectory: keys, algorithm: .es256, retiringWindow: 3600, clock: clock)
        #expect(rings.retiringUntil == upgrade.addingTimeInterval(3600))
        let a = try await rings.signer(tenantId: TenantID(Self.tenantA))
        #expect(a.active.kid != legacy.active.kid, "the old key never signs")
        #expect(try kids(a.jwksJSON) == [a.active.kid, legacy.active.kid])
        if case .failure(let rejection) = await a.verifyAccessToken(old, issuer: nil, audiences: nil, now: upgrade) { Issue.record("\(rejection)") }
        // A restart later in the window (another node, the same Keys/) agrees on when the window ends.
        clock.date = upgrade.addingTimeInterval(1800)
        #expect(
            try TenantKeyRings(keysDirectory: keys, algorithm: .es256, retiringWindow: 3600, clock: clock).retiringUntil == upgrade.addingTimeInterval(3600))
        // After the window: no longer published, no longer verifying — on a node that was running all along, and after a restart.
        clock.date = upgrade.addingTimeInterval(3601)
        #expect(try kids(a.jwksJSON) == [a.active.kid])
        #expect(rejection(await a.verifyAccessToken(old, issuer: nil, audiences: nil, now: upgrade)) == .malformedOrBadSignature)
        let restarted = try await TenantKeyRings(keysDirectory: keys, algorithm: .es256, retiringWindow: 3600, clock: clock).signer(
            tenantId: TenantID(Self.tenantB))
        #expect(try kids(restarted.jwksJSON) == [restarted.active.kid])
    }

    @Test("rotation adds a key to every ring, or to one tenant's")
    func rotation() async throws {
        let keys = keysDirectory()
        let rings = try TenantKeyRings(keysDirectory: keys, algorithm: .es256, retiringWindow: 3600)
        try await rings.preload(tenantIds: [TenantID(Self.tenantA), TenantID(Self.tenantB)])
        let name = try TenantKeyRings.generate(
            keysDirectory: keys, tenantId: TenantID(Self.tenantB), algorithm: .es256, activatesAt: Date().addingTimeInterval(60))
        #expect(name.hasPrefix("tenants/\(Self.tenantB)/signing-"))
        let reopened = try TenantKeyRings(keysDirectory: keys, algorithm: .es256, retiringWindow: 3600)
        #expect(try await reopened.signer(tenantId: TenantID(Self.tenantB)).keys.count == 2)
        #expect(try await reopened.signer(tenantId: TenantID(Self.tenantA)).keys.count == 1)
    }
}
