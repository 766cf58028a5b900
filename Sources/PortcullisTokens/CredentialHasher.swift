public import Crypto
public import Foundation
import PortcullisAPI

/// Hashes high-entropy credentials: client secrets with a keyed hash (HMAC-SHA-256 under a server pepper),
/// refresh tokens with plain SHA-256. Both are fast on purpose: a 128-bit secret cannot be guessed, so a
/// slow hash buys nothing (RFC 6749 §10.10) and would make every confidential-client grant pay for it.
/// The pepper means a stolen database alone does not let anyone test secret guesses offline.
public struct CredentialHasher: Sendable {
    private let pepper: SymmetricKey
    /// An HMAC keyed with the pepper and given nothing yet: each secret's hash starts from a copy of it, so the key's
    /// inner and outer blocks are hashed once per process rather than once per grant.
    private let keyed: HMAC<SHA256>
    public static let prefix = "hmac-sha256:"

    public init(pepper: Data) {
        self.pepper = SymmetricKey(data: pepper)
        self.keyed = HMAC<SHA256>(key: self.pepper)
    }

    /// Loads the pepper from `file`, creating it (32 random bytes, base64, mode 0600) when absent — under the
    /// same lock as signing-key generation, so nodes starting together on a shared keys directory create
    /// one. An existing pepper is never replaced: one that cannot be read, is not base64 or is shorter than
    /// 32 bytes is a start-up error naming the file (replacing it would silently invalidate every stored
    /// client secret).
    public static func loadOrCreate(file: URL) throws -> CredentialHasher {
        let directory = file.deletingLastPathComponent()
        try PrivateFile.createDirectory(directory)
        var pepper = Data()
        try SigningKeyStore.withExclusiveLock(directory.appendingPathComponent(".lock")) {
            if FileManager.default.fileExists(atPath: file.path) {
                pepper = try read(file)
            } else {
                pepper = Data(SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) })
                try PrivateFile.write(Data(pepper.base64EncodedString().utf8), to: file)
            }
        }
        return CredentialHasher(pepper: pepper)
    }

    static func read(_ file: URL) throws -> Data {
        guard let data = FileManager.default.contents(atPath: file.path) else {
            throw KeyFileError(
                file: file.path,
                problem:
                    "the credential pepper cannot be read (check its owner and mode); it is never replaced, because every stored client secret depends on it")
        }
        guard let pepper = Data(base64Encoded: String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw KeyFileError(
                file: file.path,
                problem:
                    "the credential pepper is not base64; restore it from a backup (it is never replaced, because every stored client secret depends on it)")
        }
        guard pepper.count >= 32 else {
            throw KeyFileError(file: file.path, problem: "the credential pepper is \(pepper.count) bytes; at least 32 are required; restore it from a backup")
        }
        return pepper
    }

    /// A key for one purpose, derived from the pepper (HMAC-SHA-256 of the purpose's name): every node that
    /// shares `Keys/` derives the same one, and a key for one purpose says nothing about another.
    public func derivedKey(purpose: String) -> SymmetricKey {
        SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: Data("portcullis-\(purpose)".utf8), using: pepper)))
    }

    /// The stored form of a client secret.
    public func hashSecret(_ secret: String) -> String {
        var mac = keyed
        var secret = secret
        secret.withUTF8 { mac.update(data: UnsafeRawBufferPointer($0)) }
        return Self.prefix + Base64URL.encode(mac.finalize())
    }

    /// Whether `secret` matches one of `hashes`, comparing in constant time and checking every hash.
    public func verifySecret(_ secret: String, against hashes: [String]) -> Bool {
        let candidate = Array(hashSecret(secret).utf8)
        var matched = false
        for hash in hashes {
            let stored = Array(hash.utf8)
            if Self.constantTimeEquals(candidate, stored) { matched = true }
        }
        return matched
    }

    /// A new client secret: 256 bits, base64url.
    public static func generateSecret() -> String { randomToken(bytes: 32) }

    /// A new opaque token (refresh tokens): 256 bits, base64url.
    public static func randomToken(bytes: Int = 32) -> String {
        Base64URL.encode(SymmetricKey(size: SymmetricKeySize(bitCount: bytes * 8)).withUnsafeBytes { Array($0) })
    }

    /// The stored form of an opaque token: hex SHA-256.
    public static func hashToken(_ token: String) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(64)
        for byte in SHA256.hash(data: Data(token.utf8)) {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for i in 0..<a.count { difference |= a[i] ^ b[i] }
        return difference == 0
    }
}
