public import Foundation
import PortcullisVocabulary

/// The resource side's DPoP replay cache (RFC 9449 §11.1), in memory and bounded: a proof's key is kept until its
/// `iat` can no longer pass the window check, and at most `capacity` are kept. When the cache is full of proofs that
/// have not expired yet, new proofs are refused (fail closed: forgetting one early would let it be replayed) until
/// some expire; `capacity / 121 s` is the sustained proof rate it admits.
public actor ProofReplayCache {
    public nonisolated let capacity: Int
    private var keys: ExpiringKeySet

    public init(capacity: Int = 200_000) {
        self.capacity = max(1, capacity)
        self.keys = ExpiringKeySet(capacity: capacity)
    }

    public enum Outcome: Sendable, Equatable {
        case fresh, replayed, full
    }

    /// Records `key` until `expiresAt` unless it is already there.
    public func claim(_ key: String, expiresAt: Date, now: Date) -> Outcome {
        switch keys.insert(key, expiresAt: expiresAt, now: now) {
        case .fresh: .fresh
        case .present: .replayed
        case .full: .full
        }
    }

    public var count: Int { keys.count }
}
