public import Foundation
public import PortcullisStorage
import SQLiteNIO

extension SQLiteStore {
    public func enqueueSignals(_ messages: [OutboxMessage], target: String, keepingAtMost: Int) async throws -> Int {
        try await transaction { db in
            try Self.enqueue(messages, db)
            return try Self.trimSignals(target: target, keepingAtMost: keepingAtMost, db)
        }
    }

    public func pendingSignals(target: String, limit: Int) async throws -> [OutboxMessage] {
        try await read(
            "SELECT \(Self.outboxColumns) FROM outbox WHERE target_uri = ? AND state = 'pending' ORDER BY rowid LIMIT ?",
            [.text(target), .integer(max(1, min(limit, 1000)))]
        ).map(Self.outboxMessage(from:))
    }

    public func acknowledgeSignals(target: String, jtis: [String], at: Date) async throws -> Int {
        guard !jtis.isEmpty else { return 0 }
        return try await transaction { db in
            var count = 0
            for jti in jtis {
                count +=
                    try db.query(
                        """
                        UPDATE outbox SET state = 'delivered', delivered_at = ?, attempts = attempts + 1
                        WHERE target_uri = ? AND jti = ? AND state = 'pending' RETURNING id
                        """,
                        [.date(at), .text(target), .text(jti)]
                    ).count
            }
            return count
        }
    }

    public func rejectSignals(target: String, errors: [String: String], at: Date) async throws -> Int {
        guard !errors.isEmpty else { return 0 }
        return try await transaction { db in
            var count = 0
            for (jti, error) in errors.sorted(by: { $0.key < $1.key }) {
                count +=
                    try db.query(
                        """
                        UPDATE outbox SET state = 'deadLetter', last_error = ?, attempts = attempts + 1
                        WHERE target_uri = ? AND jti = ? AND state = 'pending' RETURNING id
                        """,
                        [.text(error), .text(target), .text(jti)]
                    ).count
            }
            return count
        }
    }

    public func rescheduleSignals(target: String, nextAttemptAt: Date) async throws {
        try await transaction { db in
            _ = try db.query(
                "UPDATE outbox SET next_attempt_at = ? WHERE target_uri = ? AND state = 'pending'", [.date(nextAttemptAt), .text(target)])
        }
    }

    public func dropSignals(target: String) async throws -> Int {
        try await transaction { db in
            try db.query("DELETE FROM outbox WHERE target_uri = ? AND state = 'pending' RETURNING id", [.text(target)]).count
        }
    }

    public func recentSignals(target: String, limit: Int) async throws -> [OutboxMessage] {
        try await read(
            "SELECT \(Self.outboxColumns) FROM outbox WHERE target_uri = ? ORDER BY rowid DESC LIMIT ?",
            [.text(target), .integer(max(1, min(limit, 1000)))]
        ).map(Self.outboxMessage(from:))
    }

    public func pendingSignalCount(target: String) async throws -> Int {
        try await read("SELECT COUNT(*) AS n FROM outbox WHERE target_uri = ? AND state = 'pending'", [.text(target)]).first?
            .column("n")?.integer ?? 0
    }
}
