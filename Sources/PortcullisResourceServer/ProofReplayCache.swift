public import Foundation

/// The resource side's DPoP replay cache (RFC 9449 §11.1), in memory and bounded: a proof's key is kept until its
/// `iat` can no longer pass the window check, and at most `capacity` are kept. When the cache is full of proofs that
/// have not expired yet, new proofs are refused (fail closed: forgetting one early would let it be replayed) until
/// some expire; `capacity / 121 s` is the sustained proof rate it admits.
public actor ProofReplayCache {
    public nonisolated let capacity: Int
    private var expiries: [String: Date] = [:]
    /// Keys in the order they were added; their expiries grow with it, give or take the proofs' own `iat` skew.
    private var order: [String] = []
    private var head = 0

    public init(capacity: Int = 200_000) {
        self.capacity = max(1, capacity)
    }

    public enum Outcome: Sendable, Equatable {
        case fresh, replayed, full
    }

    /// Records `key` until `expiresAt` unless it is already there.
    public func claim(_ key: String, expiresAt: Date, now: Date) -> Outcome {
        evict(now: now)
        if let expiry = expiries[key], expiry > now { return .replayed }
        guard expiries.count < capacity else { return .full }
        expiries[key] = expiresAt
        order.append(key)
        return .fresh
    }

    public var count: Int { expiries.count }

    /// Forgets expired keys from the oldest; compacts the order now and then.
    private func evict(now: Date) {
        while head < order.count, let expiry = expiries[order[head]], expiry <= now {
            expiries[order[head]] = nil
            head += 1
        }
        while head < order.count, expiries[order[head]] == nil { head += 1 }
        if head > 1024 && head * 2 > order.count {
            order.removeFirst(head)
            head = 0
        }
    }
}
