public import Foundation
public import PortcullisStorage
import PostgresNIO

extension PostgresStore {
    public func enqueueSignals(_ messages: [OutboxMessage], target: String, keepingAtMost: Int) async throws -> Int {
        try await transaction { db in
            try await Self.enqueue(messages, db)
            return try await Self.trimSignals(target: target, keepingAtMost: keepingAtMost, db)
        }
    }

    public func pendingSignals(target: String, limit: Int) async throws -> [OutboxMessage] {
        try await rows(
            """
            SELECT \(unescaped: Self.outboxColumns) FROM outbox WHERE target_uri = \(target) AND state = 'pending'
            ORDER BY seq LIMIT \(max(1, min(limit, 1000)))
            """
        ).map(Self.outboxMessage)
    }

    public func acknowledgeSignals(target: String, jtis: [String], at: Date) async throws -> Int {
        guard !jtis.isEmpty else { return 0 }
        return try await rows(
            """
            UPDATE outbox SET state = 'delivered', delivered_at = \(at.seconds), attempts = attempts + 1
            WHERE target_uri = \(target) AND jti = ANY(\(jtis)) AND state = 'pending' RETURNING id
            """
        ).count
    }

    public func rejectSignals(target: String, errors: [String: String], at: Date) async throws -> Int {
        guard !errors.isEmpty else { return 0 }
        let sorted = errors.sorted { $0.key < $1.key }
        return try await rows(
            """
            UPDATE outbox SET state = 'deadLetter', last_error = rejected.error, attempts = attempts + 1
            FROM UNNEST(\(sorted.map(\.key)), \(sorted.map(\.value))) AS rejected(jti, error)
            WHERE outbox.target_uri = \(target) AND outbox.jti = rejected.jti AND outbox.state = 'pending' RETURNING outbox.id
            """
        ).count
    }

    public func rescheduleSignals(target: String, nextAttemptAt: Date) async throws {
        _ = try await rows("UPDATE outbox SET next_attempt_at = \(nextAttemptAt.seconds) WHERE target_uri = \(target) AND state = 'pending' RETURNING id")
    }

    public func dropSignals(target: String) async throws -> Int {
        try await rows("DELETE FROM outbox WHERE target_uri = \(target) AND state = 'pending' RETURNING id").count
    }

    public func recentSignals(target: String, limit: Int) async throws -> [OutboxMessage] {
        try await rows(
            "SELECT \(unescaped: Self.outboxColumns) FROM outbox WHERE target_uri = \(target) ORDER BY seq DESC LIMIT \(max(1, min(limit, 1000)))"
        ).map(Self.outboxMessage)
    }

    public func pendingSignalCount(target: String) async throws -> Int {
        guard let row = try await rows("SELECT COUNT(*) FROM outbox WHERE target_uri = \(target) AND state = 'pending'").first else { return 0 }
        return Int(try row.decode(Int64.self))
    }
}
