public import Foundation
public import PortcullisCore
import PortcullisStorage
import SQLiteNIO

extension SQLiteStore {
    static func throttle(from row: StoredRow) throws -> ThrottleCounter {
        ThrottleCounter(
            key: try row.string("key"), failures: Int(try row.int("failures")), windowStart: try row.date("window_start"),
            locks: Int(try row.int("locks")), lockedUntil: row.optionalDate("locked_until"), expiresAt: try row.date("expires_at"))
    }

    public func throttles(keys: [String]) async throws -> [ThrottleCounter] {
        var found: [ThrottleCounter] = []
        for key in keys {
            if let row = try await read("SELECT * FROM auth_throttles WHERE key = ?", [.text(key)]).first { found.append(try Self.throttle(from: row)) }
        }
        return found
    }

    public func updateThrottles(keys: [String], _ update: @escaping @Sendable (String, ThrottleCounter?) -> ThrottleCounter) async throws -> [ThrottleCounter] {
        // The writer is one connection: the read and the write of each key are one step for every other writer.
        try await transaction { db in
            var stored: [ThrottleCounter] = []
            for key in keys {
                let current = try db.query("SELECT * FROM auth_throttles WHERE key = ?", [.text(key)]).first.map(Self.throttle(from:))
                let next = update(key, current)
                _ = try db.query(
                    """
                    INSERT INTO auth_throttles (key, failures, window_start, locks, locked_until, expires_at) VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT (key) DO UPDATE SET failures = excluded.failures, window_start = excluded.window_start, locks = excluded.locks,
                        locked_until = excluded.locked_until, expires_at = excluded.expires_at
                    """,
                    [
                        .text(key), .integer(next.failures), .date(next.windowStart), .integer(next.locks), .optionalDate(next.lockedUntil),
                        .date(next.expiresAt),
                    ])
                stored.append(next)
            }
            return stored
        }
    }

    public func clearThrottle(key: String) async throws {
        try await transaction { db in _ = try db.query("DELETE FROM auth_throttles WHERE key = ?", [.text(key)]) }
    }

    public func purgeThrottles(before: Date) async throws -> Int {
        try await transaction { db in
            try db.query("DELETE FROM auth_throttles WHERE expires_at < ? RETURNING key", [.date(before)]).count
        }
    }
}
