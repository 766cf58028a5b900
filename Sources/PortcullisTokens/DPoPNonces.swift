import Crypto
public import Foundation
import PortcullisAPI

/// Server nonces for DPoP proofs (RFC 9449 §8), stateless: a nonce is the number of its period and a MAC of it
/// under a key every node derives from the shared credential pepper, so any node accepts any node's. A new nonce is
/// handed out every `period`; a nonce is accepted during its own period and the next one (so at most `2 × period`
/// old, and a client that just received one never sees it refused).
public struct DPoPNonces: Sendable {
    /// PROTOCOL §15: rotated at least every 5 minutes.
    public static let period: TimeInterval = 180
    private let key: SymmetricKey

    public init(credentials: CredentialHasher) {
        self.key = credentials.derivedKey(purpose: "dpop-nonce-v1")
    }

    /// The nonce to hand out at `now`.
    public func current(now: Date) -> String { nonce(period: Self.periodNumber(now)) }

    /// Whether `nonce` was handed out by a node of this installation during this period or the previous one.
    public func isValid(_ nonce: String, now: Date) -> Bool {
        guard nonce.utf8.count < 64, let bytes = Base64URL.decode(nonce), bytes.count == 8 + Self.tagLength else { return false }
        let number = bytes.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let current = Self.periodNumber(now)
        guard number == current || number + 1 == current else { return false }
        let expected = Array(Base64URL.decode(self.nonce(period: number)) ?? Data())
        return CredentialHasher.constantTimeEquals(expected, Array(bytes))
    }

    private static let tagLength = 16

    private static func periodNumber(_ now: Date) -> UInt64 { UInt64(max(0, now.timeIntervalSince1970 / period).rounded(.down)) }

    private func nonce(period: UInt64) -> String {
        let number = (0..<8).map { UInt8(truncatingIfNeeded: period >> (8 * (7 - $0))) }
        let tag = HMAC<SHA256>.authenticationCode(for: number, using: key)
        return Base64URL.encode(number + Array(tag).prefix(Self.tagLength))
    }
}
