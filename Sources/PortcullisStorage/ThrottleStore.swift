public import Foundation
public import PortcullisCore

/// Password-guessing counters (PROTOCOL §9.6), shared by every node through the store.
public protocol ThrottleStore: Sendable {
    /// The counters that exist among `keys`.
    func throttles(keys: [String]) async throws -> [ThrottleCounter]
    /// Replaces each key's counter by `update(key, current)` (current is `nil` when there is none), atomically
    /// with respect to every other update of the same keys, on every node. Returns the stored counters.
    @discardableResult
    func updateThrottles(keys: [String], _ update: @escaping @Sendable (String, ThrottleCounter?) -> ThrottleCounter) async throws -> [ThrottleCounter]
    /// Forgets a counter (a successful sign-in clears its account's).
    func clearThrottle(key: String) async throws
    /// Deletes counters whose `expiresAt` passed before `before`; returns how many.
    @discardableResult
    func purgeThrottles(before: Date) async throws -> Int
}
