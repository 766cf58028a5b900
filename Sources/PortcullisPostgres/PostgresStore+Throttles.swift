public import Foundation
public import PortcullisCore
import PortcullisStorage
import PostgresNIO

extension PostgresStore {
    static func throttle(_ row: PostgresRow) throws -> ThrottleCounter {
        let (key, failures, windowStart, locks, lockedUntil, expiresAt) = try row.decode((String, Int, Double, Int, Double?, Double).self)
        return ThrottleCounter(
            key: key, failures: failures, windowStart: Date(seconds: windowStart), locks: locks,
            lockedUntil: lockedUntil.map(Date.init(seconds:)), expiresAt: Date(seconds: expiresAt))
    }

    public func throttles(keys: [String]) async throws -> [ThrottleCounter] {
        try await rows("SELECT key, failures, window_start, locks, locked_until, expires_at FROM auth_throttles WHERE key = ANY(\(keys))")
            .map(Self.throttle)
    }

    public func updateThrottles(keys: [String], _ update: @escaping @Sendable (String, ThrottleCounter?) -> ThrottleCounter) async throws -> [ThrottleCounter] {
        try await transaction { db in
            var stored: [ThrottleCounter] = []
            // Keys in one order, each under a transaction-scoped advisory lock: nodes updating the same counter
            // take turns (a row lock cannot serialise the first insert of a key).
            for key in keys.sorted() {
                try await db.query("SELECT pg_advisory_xact_lock(hashtextextended(\(key), 7140))")
                let current = try await db.query(
                    """
                    SELECT key, failures, window_start, locks, locked_until, expires_at FROM auth_throttles WHERE key = \(key)
                    """
                ).first.map(Self.throttle)
                let next = update(key, current)
                try await db.query(
                    """
                    INSERT INTO auth_throttles (key, failures, window_start, locks, locked_until, expires_at)
                    VALUES (\(key), \(next.failures), \(next.windowStart.seconds), \(next.locks), \(next.lockedUntil.seconds), \(next.expiresAt.seconds))
                    ON CONFLICT (key) DO UPDATE SET failures = EXCLUDED.failures, window_start = EXCLUDED.window_start, locks = EXCLUDED.locks,
                        locked_until = EXCLUDED.locked_until, expires_at = EXCLUDED.expires_at
                    """)
                stored.append(next)
            }
            return stored
        }
    }

    public func clearThrottle(key: String) async throws {
        _ = try await rows("DELETE FROM auth_throttles WHERE key = \(key)")
    }

    public func purgeThrottles(before: Date) async throws -> Int {
        try await rows("DELETE FROM auth_throttles WHERE expires_at < \(before.seconds) RETURNING key").count
    }
}
