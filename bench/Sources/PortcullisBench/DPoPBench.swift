import Crypto
import Foundation
import Logging
import PortcullisAPI
import PortcullisResourceServer
import PortcullisSQLite
import PortcullisStorage
import PortcullisTesting
import PortcullisTokens

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// DPoP (PROTOCOL §15) for `bench/run dpop`: proofs made ahead of a wrk run (wrk cannot sign), and the replay caches'
/// bounds at 10,000 proofs per second.
enum DPoPBench {
    /// Writes `count` proofs for `url` (one per line), all with the server's current nonce and `iat` now: a wrk run must
    /// use them within a minute.
    static func proofs(url: String, count: Int, output: String) async throws {
        let key = try DPoPKey()
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.setValue(try key.proof(url: url, issuedAt: Date()), forHTTPHeaderField: "DPoP")
        request.httpBody = Data("grant_type=client_credentials".utf8)
        let (_, response) = try await URLSession.shared.data(for: request)
        guard let nonce = (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "DPoP-Nonce") else {
            print("dpop-proofs: the server sent no DPoP-Nonce")
            exit(1)
        }
        let now = Date()
        var lines: [String] = []
        lines.reserveCapacity(count)
        for _ in 0..<count { lines.append(try key.proof(url: url, issuedAt: now, nonce: nonce)) }
        try (lines.joined(separator: "\n") + "\n").write(toFile: output, atomically: true, encoding: .utf8)
    }

    /// The two replay caches at 10,000 proofs per second: the store's table (what every node shares; a proof is kept
    /// 121 s and the sweeper runs every 30 s, so at most 151 s of proofs), measured on SQLite from a sample and scaled; and
    /// the resource side's in-memory cache holding 121 s of proofs.
    static func replayBounds() async throws {
        let rate = 10_000
        let temporary = try await TemporarySQLite.open("bench-dpop")
        defer { try? FileManager.default.removeItem(at: temporary.root) }
        let (root, store) = (temporary.root, temporary.store)
        let sample = 100_000
        let start = Date()
        let before = fileBytes(root)
        let clock = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for index in stride(from: worker, to: sample, by: 8) {
                        // The replay key as the server makes it: 16 bytes of SHA-256, base64url (22 characters).
                        let key = String(format: "%022x", index).suffix(22)
                        _ = try await store.claimProof(key: String(key), expiresAt: start.addingTimeInterval(121), now: start)
                    }
                }
            }
            try await group.waitForAll()
        }
        let elapsed = ContinuousClock.now - clock
        // SQLite writes them behind (in batches, a tenth of a second after they come): wait until the file stops growing.
        var size = fileBytes(root)
        while true {
            try await Task.sleep(for: .milliseconds(500))
            let now = fileBytes(root)
            if now == size { break }
            size = now
        }
        let perProof = Double(size - before) / Double(sample)
        let bound = rate * (121 + 30)
        print(
            String(
                format:
                    "store (SQLite): %.0f B per proof on disk (table + index, measured over %d); at %d proofs/s at most %d rows → %.0f MB; %d claims took %.2f s (%.1f µs each, 8 writers)",
                perProof, sample, rate, bound, perProof * Double(bound) / 1e6, sample, elapsed.seconds, elapsed.seconds * 1e6 / Double(sample)))
        let purged = Date()
        _ = try await store.purgeExpired(before: start.addingTimeInterval(122))
        let purge = Date().timeIntervalSince(purged)
        print(String(format: "store: the sweeper's purge of %d expired proofs took %.0f ms", sample, purge * 1000))
        try await store.close()

        // The resource side: an in-memory cache sized for 121 s at the rate.
        let capacity = rate * 121
        let cache = ProofReplayCache(capacity: capacity)
        let residentBefore = residentBytes()
        let now = Date()
        for index in 0..<capacity {
            _ = await cache.claim(String(String(format: "%022x", index).suffix(22)), expiresAt: now.addingTimeInterval(121), now: now)
        }
        let grown = Double(residentBytes() - residentBefore)
        print(
            String(
                format: "resource side (gateway): %d proofs (121 s at %d/s) held in %.0f MB of memory (%.0f B each); full, it refuses rather than forgets",
                await cache.count, rate, grown / 1e6, grown / Double(capacity)))
    }

    /// The token endpoint's proof check alone, against its signature check alone (µs per proof).
    static func verification() throws {
        let key = try DPoPKey()
        let url = "https://portcullis.test/t/oauth2/v2.0/token"
        let now = Date()
        let proofs = try (0..<5_000).map { _ in try key.proof(url: url, issuedAt: now, nonce: "n") }
        for proof in proofs.prefix(200) { _ = try DPoPVerifier.verify(proof, method: "POST", url: url, now: now) }
        var start = ContinuousClock.now
        for proof in proofs { _ = try DPoPVerifier.verify(proof, method: "POST", url: url, now: now) }
        let whole = (ContinuousClock.now - start).seconds * 1e6 / Double(proofs.count)
        let signing = P256.Signing.PrivateKey()
        let message = Data(repeating: 7, count: 400)
        let signature = try signing.signature(for: message)
        start = ContinuousClock.now
        for _ in 0..<proofs.count { _ = signing.publicKey.isValidSignature(signature, for: message) }
        let verify = (ContinuousClock.now - start).seconds * 1e6 / Double(proofs.count)
        print(String(format: "proof check: %.1f µs per proof (DPoPVerifier.verify), of which an ES256 signature check alone is %.1f µs", whole, verify))
        func time(_ label: String, _ body: () throws -> Void) rethrows {
            let start = ContinuousClock.now
            for _ in 0..<proofs.count { try body() }
            print(String(format: "  %@: %.1f µs", label, (ContinuousClock.now - start).seconds * 1e6 / Double(proofs.count)))
        }
        let parts = proofs[0].split(separator: ".")
        let header = Base64URL.decode(String(parts[0]))!
        let payload = Base64URL.decode(String(parts[1]))!
        time("base64url decode of the three parts") { for part in parts { _ = Base64URL.decode(String(part)) } }
        try time("JSONSerialization of header + payload") {
            _ = try JSONSerialization.jsonObject(with: header)
            _ = try JSONSerialization.jsonObject(with: payload)
        }
        time("URLComponents of one URL") { _ = URLComponents(string: url) }
        let raw = signing.publicKey.rawRepresentation
        try time("P256 public key from x, y") { _ = try P256.Signing.PublicKey(rawRepresentation: raw) }
        time("SHA-256 of 100 bytes") { _ = SHA256.hash(data: message.prefix(100)) }
    }

    static func fileBytes(_ directory: URL) -> Int {
        let files = (try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: [.fileSizeKey])) ?? []
        return files.reduce(0) { $0 + ((try? $1.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0) }
    }

    static func residentBytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { return 0 }
        return kilobytes * 1024
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
