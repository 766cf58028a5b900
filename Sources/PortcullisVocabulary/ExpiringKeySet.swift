public import Foundation

/// A set of keys that each expire, bounded: the DPoP replay caches' memory (PROTOCOL §15). Expired keys are forgotten
/// from the oldest as new ones come; at `capacity` live keys a new one is refused (`full`) rather than an old one
/// forgotten early — forgetting would let that key be used again. Not thread-safe: its owner serialises access.
public struct ExpiringKeySet: Sendable {
    public let capacity: Int
    private var expiries: [String: Date] = [:]
    /// Keys in the order they were added; their expiries grow with it, give or take the proofs' own `iat` skew.
    private var order: [String] = []
    private var head = 0

    public init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    public enum Outcome: Sendable, Equatable {
        case fresh, present, full
    }

    /// Adds `key` until `expiresAt`, unless it is there and live.
    public mutating func insert(_ key: String, expiresAt: Date, now: Date) -> Outcome {
        evict(now: now)
        if let expiry = expiries[key], expiry > now { return .present }
        guard expiries.count < capacity else { return .full }
        expiries[key] = expiresAt
        order.append(key)
        return .fresh
    }

    public var count: Int { expiries.count }

    /// Whether `key` is there and live at `now`.
    public func contains(_ key: String, now: Date) -> Bool { expiries[key].map { $0 > now } ?? false }

    /// Forgets the keys that expired before `before`.
    public mutating func forget(expiredBefore before: Date) { evict(now: before) }

    /// Forgets expired keys from the oldest; compacts the order now and then.
    private mutating func evict(now: Date) {
        while head < order.count {
            let key = order[head]
            if let expiry = expiries[key] {
                guard expiry <= now else { break }
                expiries[key] = nil
            }
            head += 1
        }
        if head > 1024 && head * 2 > order.count {
            order.removeFirst(head)
            head = 0
        }
    }
}
