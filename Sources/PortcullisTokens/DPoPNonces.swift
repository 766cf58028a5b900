import Crypto
public import Foundation
import PortcullisAPI
import Synchronization

/// Server nonces for DPoP proofs (RFC 9449 §8), stateless: a nonce is the number of its period and a MAC of it
/// under a key every node derives from the shared credential pepper, so any node accepts any node's. A new nonce is
/// handed out every `period`; a nonce is accepted during its own period and the next one (so at most `2 × period`
/// old, and a client that just received one never sees it refused).
public final class DPoPNonces: Sendable {
    /// PROTOCOL §15: rotated at least every 5 minutes.
    public static let period: TimeInterval = 180
    private let key: SymmetricKey
    /// The last periods' nonces, so that a request costs no MAC (measured: a MAC's key set-up per request was a few
    /// per cent of a DPoP grant).
    private let recent = Mutex<[UInt64: String]>([:])

    public init(credentials: CredentialHasher) {
        self.key = credentials.derivedKey(purpose: "dpop-nonce-v1")
    }

    /// The nonce to hand out at `now`.
    public func current(now: Date) -> String { nonce(period: Self.periodNumber(now)) }

    /// Whether `nonce` was handed out by a node of this installation during this period or the previous one.
    public func isValid(_ nonce: String, now: Date) -> Bool {
        guard nonce.utf8.count < 64 else { return false }
        let current = Self.periodNumber(now)
        let candidates = [self.nonce(period: current)] + (current > 0 ? [self.nonce(period: current - 1)] : [])
        return candidates.contains { CredentialHasher.constantTimeEquals(Array($0.utf8), Array(nonce.utf8)) }
    }

    private static let tagLength = 16

    private static func periodNumber(_ now: Date) -> UInt64 { UInt64(max(0, now.timeIntervalSince1970 / period).rounded(.down)) }

    private func nonce(period: UInt64) -> String {
        if let known = recent.withLock({ $0[period] }) { return known }
        let computed = computeNonce(period: period)
        recent.withLock {
            if $0.count >= 4 { $0 = $0.filter { $0.key + 2 >= period } }
            $0[period] = computed
        }
        return computed
    }

    private func computeNonce(period: UInt64) -> String {
        let number = (0..<8).map { UInt8(truncatingIfNeeded: period >> (8 * (7 - $0))) }
        let tag = HMAC<SHA256>.authenticationCode(for: number, using: key)
        return Base64URL.encode(number + Array(tag).prefix(Self.tagLength))
    }
}
