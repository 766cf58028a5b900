import Crypto
import CryptoExtras
import Foundation
import Logging
import PortcullisCore
import PortcullisSQLite
import PortcullisStorage
import PortcullisTesting
import PortcullisTokens
import PortcullisWebAuthnFormat

enum Micro {
    static func stats(_ samples: [Double]) -> (p50: Double, p99: Double, mean: Double) {
        let sorted = samples.sorted()
        return (sorted[sorted.count / 2], sorted[min(sorted.count - 1, Int(Double(sorted.count) * 0.99))], sorted.reduce(0, +) / Double(sorted.count))
    }

    static func microseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1e6 + Double(duration.components.attoseconds) / 1e12
    }

    /// Access-token signing, ES256 vs RS256 (release).
    static func signing() async throws {
        print("token signing (release), 5,000 access tokens each")
        print("algorithm | p50 µs | p99 µs | tokens/s (one core)")
        print("----------|--------|--------|--------------------")
        for algorithm in SigningAlgorithm.allCases {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bench-keys-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let signer = try await TokenSigner(loaded: try SigningKeyStore(directory: directory).load(algorithm: algorithm, now: Date()))
            let now = Int(Date().timeIntervalSince1970)
            let claims = AccessTokenClaims(
                iss: "https://bench/t/v2.0", aud: "api://bench-mail", sub: "u", oid: "u", tid: "t", azp: "c", azpacr: "0", iat: now, nbf: now,
                exp: now + 3600, jti: "j", scp: "Mail.Read", roles: nil, upn: "u@bench", preferredUsername: "u@bench", name: "U", xmsCC: ["protapp"],
                idtyp: "user")
            for _ in 0..<200 { _ = try await signer.sign(accessToken: claims) }
            var samples: [Double] = []
            let clock = ContinuousClock()
            let total = clock.now
            for _ in 0..<5_000 {
                let start = clock.now
                _ = try await signer.sign(accessToken: claims)
                samples.append(microseconds(clock.now - start))
            }
            let elapsed = microseconds(clock.now - total) / 1e6
            let s = stats(samples)
            print(String(format: "%9@ | %6.1f | %6.1f | %.0f", algorithm.rawValue, s.p50, s.p99, 5_000 / elapsed))
        }
    }

    /// A passkey assertion's verification (PROTOCOL §12.1: client data, authenticator data, the COSE key read back,
    /// the signature) per algorithm, against the bare signature check of the same key in the same run.
    static func webAuthn() throws {
        let verifier = WebAuthnVerifier(relyingParty: RelyingParty(id: "login.contoso.example", origin: "https://login.contoso.example"))
        let challenge = Array((0..<32).map { UInt8($0) })
        print("passkey assertion verification (release), 5,000 each")
        print("algorithm | verify p50 µs | p99 µs | signature check alone p50 µs | p99 µs")
        print("----------|---------------|--------|-------------------------------|-------")
        let keys: [(String, SoftwareAuthenticator.Key)] = [
            ("ES256", .p256(.init())), ("EdDSA", .ed25519(.init())), ("RS256", .rsa(try _RSA.Signing.PrivateKey(keySize: .bits2048))),
        ]
        for (name, key) in keys {
            var authenticator = SoftwareAuthenticator(key: key)
            let clientData = authenticator.clientData(type: "webauthn.create", challenge: challenge)
            let registered = try verifier.verifyRegistration(
                clientDataJSON: clientData, attestationObject: authenticator.attestationObject(.none, clientData: clientData), challenge: challenge)
            authenticator.signCount = 2
            let assertionData = authenticator.clientData(type: "webauthn.get", challenge: challenge)
            let authenticatorData = authenticator.authenticatorData(attested: false)
            let signed = authenticatorData + Array(SHA256.hash(data: assertionData))
            let signature = key.sign(signed)
            let coseKey = try COSEKey(key.cose)
            var full: [Double] = []
            var bare: [Double] = []
            for index in 0..<5_500 {
                let start = ContinuousClock.now
                _ = try verifier.verifyAssertion(
                    clientDataJSON: assertionData, authenticatorData: authenticatorData, signature: signature, challenge: challenge,
                    publicKey: registered.publicKey, storedSignCount: 1, backupEligible: false)
                let middle = ContinuousClock.now
                guard WebAuthnVerifier.verify(signature: signature, over: signed, key: coseKey) else { fatalError("the bare check failed") }
                let end = ContinuousClock.now
                if index >= 500 {
                    full.append(microseconds(middle - start))
                    bare.append(microseconds(end - middle))
                }
            }
            let f = stats(full)
            let b = stats(bare)
            print(String(format: "%9@ | %13.1f | %6.1f | %29.1f | %6.1f", name, f.p50, f.p99, b.p50, b.p99))
        }
    }

    /// The enrollment lookup the token path makes (`compliantEnrollment(tenant, user, client, now)`) on a SQLite
    /// store holding `count` enrollments.
    static func enrollmentLookup(count: Int) async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("bench-enrollments-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        var logger = Logger(label: "bench")
        logger.logLevel = .error
        let path = root.appendingPathComponent("db.sqlite").path
        let store = try await SQLiteStore.open(.init(path: path), logger: logger)
        try await store.migrate()
        let users = max(1, count / 10)
        let start = ContinuousClock.now
        try await Dataset.bulkEnrollments(
            path: path, count: count, users: users, compliantUsers: users, refusedUsers: 0..<0,
            policyVersion: "v", now: Date(), logger: logger)
        let loaded = ContinuousClock.now - start
        var samples: [Double] = []
        var rng = SeededGenerator(seed: 3)
        for index in 0..<6_000 {
            let user = Dataset.guid(0xA, Int.random(in: 0..<users, using: &rng))
            let begin = ContinuousClock.now
            let found =
                try await store.compliantEnrollment(tenantId: Dataset.tenantId, userId: user, clientId: Dataset.mobileClient, now: Date()).map { [$0] } ?? []
            let elapsed = ContinuousClock.now - begin
            if index >= 1_000 { samples.append(microseconds(elapsed)) }
            if found.isEmpty { print("warning: no enrollment for \(user)") }
        }
        try await store.close()
        let s = stats(samples)
        print(
            String(
                format:
                    "enrollment lookup on SQLite, %d enrollments (%d users × 10 app instances; loaded in %.0f s): p50 %.0f µs, p99 %.0f µs, mean %.0f µs (5,000 lookups)",
                count, users, microseconds(loaded) / 1e6, s.p50, s.p99, s.mean))
    }
}
