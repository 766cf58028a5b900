public import Foundation
public import PortcullisCore
public import PortcullisStorage
import SQLiteNIO

extension SQLiteStore {
    static func enrollment(from row: StoredRow) throws -> Enrollment {
        var enrollment = try StoredJSON.enrollment(from: try row.string("document"))
        enrollment.revision = try row.int("revision")
        return enrollment
    }

    static let enrollmentColumns = "document, revision"

    private static func appendHistory(_ id: RecordID, _ entry: EnrollmentHistoryEntry, _ db: WriterStatements) throws {
        _ = try db.query(
            "INSERT INTO enrollment_history (enrollment_id, at, event, from_status, to_status, detail) VALUES (?, ?, ?, ?, ?, ?)",
            [
                .id(id), .date(entry.at), .text(entry.event.rawValue), .optionalText(entry.fromStatus), .optionalText(entry.toStatus),
                .optionalText(entry.detail),
            ])
    }

    static func enqueue(_ messages: [OutboxMessage], _ db: WriterStatements) throws {
        for message in messages {
            _ = try db.query(
                """
                INSERT INTO outbox (id, tenant_id, enrollment_id, target_uri, payload, jti, state, attempts, next_attempt_at, created_at)
                VALUES (?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?)
                """,
                [
                    .text(message.id), .text(message.tenantId), .optionalText(message.enrollmentId), .text(message.targetUri), .text(message.payload),
                    .text(message.jti), .date(message.nextAttemptAt), .date(message.createdAt),
                ])
        }
    }

    public func insertEnrollment(
        _ enrollment: Enrollment, history: EnrollmentHistoryEntry, outbox: [OutboxMessage], keepingAtMost: Int
    ) async throws -> Enrollment {
        var copy = enrollment
        copy.revision = 1
        let stored = copy
        let document = try StoredJSON.text(of: stored)
        return try await transaction { db in
            _ = try db.query(
                """
                INSERT INTO enrollments (id, tenant_id, user_id, client_id, device_id, state, lapses_at, updated_at, revision, document)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, ?)
                """,
                [
                    .id(stored.id), .id(stored.tenantId), .id(stored.userId), .id(stored.clientId), .id(stored.deviceId),
                    .text(stored.state.rawValue), .optionalDate(stored.lapsesAt), .date(stored.updatedAt), .text(document),
                ])
            try Self.appendHistory(stored.id, history, db)
            try Self.enqueue(outbox, db)
            let pruned = try db.query(
                """
                DELETE FROM enrollments WHERE id IN (
                    SELECT id FROM enrollments WHERE tenant_id = ?1 AND user_id = ?2 AND client_id = ?3 AND id <> ?4
                    ORDER BY (state = 'unenrolled') DESC, updated_at ASC
                    LIMIT max(0, (SELECT COUNT(*) FROM enrollments WHERE tenant_id = ?1 AND user_id = ?2 AND client_id = ?3) - ?5)
                ) RETURNING id
                """,
                [.id(stored.tenantId), .id(stored.userId), .id(stored.clientId), .id(stored.id), .integer(max(1, keepingAtMost))])
            for row in pruned {
                _ = try db.query("DELETE FROM enrollment_history WHERE enrollment_id = ?", [.text(try row.string("id"))])
            }
            return stored
        }
    }

    public func updateEnrollment(
        _ enrollment: Enrollment, expectedRevision: Int64, history: EnrollmentHistoryEntry, outbox: [OutboxMessage],
        effects: CommittedEffects?
    ) async throws -> Enrollment? {
        var copy = enrollment
        copy.revision = expectedRevision + 1
        let stored = copy
        let document = try StoredJSON.text(of: stored)
        return try await transaction { db in
            let updated = try db.query(
                """
                UPDATE enrollments SET state = ?, lapses_at = ?, updated_at = ?, revision = revision + 1, document = ?
                WHERE id = ? AND revision = ? RETURNING revision
                """,
                [
                    .text(stored.state.rawValue), .optionalDate(stored.lapsesAt), .date(stored.updatedAt), .text(document),
                    .id(stored.id), .integer(Int(expectedRevision)),
                ])
            guard !updated.isEmpty else { return nil }
            try Self.appendHistory(stored.id, history, db)
            try Self.enqueue(outbox, db)
            try Self.commit(effects, revision: 0, db)
            return stored
        }
    }

    public func enrollment(id: RecordID) async throws -> Enrollment? {
        try await lookup("SELECT document, revision FROM enrollments WHERE id = ?", [.id(id)]).first.map(Self.enrollment(from:))
    }

    public func activeEnrollment(tenantId: TenantID, clientId: AppID, deviceId: DeviceID) async throws -> Enrollment? {
        try await lookup(
            "SELECT document, revision FROM enrollments WHERE tenant_id = ? AND client_id = ? AND device_id = ? AND state <> 'unenrolled'",
            [.id(tenantId), .id(clientId), .id(deviceId)]
        ).first.map(Self.enrollment(from:))
    }

    public func activeEnrollments(tenantId: TenantID, userId: ObjectID, clientId: AppID) async throws -> [Enrollment] {
        try await read(
            "SELECT document, revision FROM enrollments WHERE tenant_id = ? AND user_id = ? AND client_id = ? AND state <> 'unenrolled' ORDER BY updated_at DESC",
            [.id(tenantId), .id(userId), .id(clientId)]
        ).map(Self.enrollment(from:))
    }

    /// The newest compliant enrollment of an account's app (the token path's read, off `enrollments_account` backwards).
    static let compliantEnrollmentQuery = """
        SELECT id, json_extract(document, '$.platform') AS platform FROM enrollments
        WHERE tenant_id = ? AND user_id = ? AND client_id = ? AND state = 'compliant' AND lapses_at > ?
        ORDER BY updated_at DESC LIMIT 1
        """

    public func compliantEnrollment(tenantId: TenantID, userId: ObjectID, clientId: AppID, now: Date) async throws -> CompliantEnrollment? {
        try await lookup(
            Self.compliantEnrollmentQuery,
            [.id(tenantId), .id(userId), .id(clientId), .date(now)]
        ).first.map { row in
            CompliantEnrollment(id: try row.id("id"), platform: row.optionalString("platform").flatMap(DevicePlatform.init(rawValue:)))
        }
    }

    public func hasActiveEnrollment(tenantId: TenantID, userId: ObjectID, clientId: AppID) async throws -> Bool {
        !(try await lookup(
            "SELECT 1 AS hit FROM enrollments WHERE tenant_id = ? AND user_id = ? AND client_id = ? AND state <> 'unenrolled' LIMIT 1",
            [.id(tenantId), .id(userId), .id(clientId)]
        ).isEmpty)
    }

    public func enrollments(_ query: EnrollmentQuery) async throws -> [Enrollment] {
        var clauses = ["tenant_id = ?"]
        var binds: [SQLiteData] = [.id(query.tenantId)]
        if let user = query.userId {
            clauses.append("user_id = ?")
            binds.append(.id(user))
        }
        if let client = query.clientId {
            clauses.append("client_id = ?")
            binds.append(.id(client))
        }
        if let device = query.deviceId {
            clauses.append("device_id = ?")
            binds.append(.id(device))
        }
        if let state = query.state {
            clauses.append("state = ?")
            binds.append(.text(state.rawValue))
        }
        binds.append(.integer(max(1, min(query.limit, 1000))))
        binds.append(.integer(max(0, query.offset)))
        return try await read(
            "SELECT document, revision FROM enrollments WHERE " + clauses.joined(separator: " AND ") + " ORDER BY updated_at DESC, id DESC LIMIT ? OFFSET ?",
            binds
        ).map(Self.enrollment(from:))
    }

    public func enrollmentHistory(id: RecordID) async throws -> [EnrollmentHistoryEntry] {
        try await read(
            "SELECT at, event, from_status, to_status, detail FROM enrollment_history WHERE enrollment_id = ? ORDER BY seq", [.id(id)]
        ).map { row in
            EnrollmentHistoryEntry(
                at: try row.date("at"), event: EnrollmentEvent(rawValue: try row.string("event")), fromStatus: row.optionalString("from_status"),
                toStatus: row.optionalString("to_status"), detail: row.optionalString("detail"))
        }
    }

    public func lapsingEnrollments(now: Date, limit: Int) async throws -> [Enrollment] {
        try await read(
            "SELECT document, revision FROM enrollments WHERE state = 'compliant' AND lapses_at <= ? ORDER BY lapses_at LIMIT ?",
            [.date(now), .integer(limit)]
        ).map(Self.enrollment(from:))
    }

    public func deleteIdleEnrollments(idleSince: Date) async throws -> Int {
        try await transaction { db in
            let deleted = try db.query("DELETE FROM enrollments WHERE updated_at < ? RETURNING id", [.date(idleSince)])
            for row in deleted {
                _ = try db.query("DELETE FROM enrollment_history WHERE enrollment_id = ?", [.text(try row.string("id"))])
            }
            return deleted.count
        }
    }
}

extension SQLiteStore {
    static func outboxMessage(from row: StoredRow) throws -> OutboxMessage {
        OutboxMessage(
            id: try row.string("id"), tenantId: try row.string("tenant_id"), enrollmentId: row.optionalString("enrollment_id"),
            targetUri: try row.string("target_uri"), payload: try row.string("payload"), jti: try row.string("jti"),
            state: OutboxMessage.State(rawValue: try row.string("state")) ?? .pending, attempts: Int(try row.int("attempts")),
            nextAttemptAt: try row.date("next_attempt_at"), lastError: row.optionalString("last_error"), createdAt: try row.date("created_at"),
            deliveredAt: row.optionalDate("delivered_at"))
    }

    static let outboxColumns = "id, tenant_id, enrollment_id, target_uri, payload, jti, state, attempts, next_attempt_at, last_error, created_at, delivered_at"

    public func claimOutbox(now: Date, leaseUntil: Date, owner: String, limit: Int) async throws -> [OutboxMessage] {
        try await transaction { db in
            try db.query(
                """
                UPDATE outbox SET lease_until = ?, lease_owner = ?
                WHERE id IN (
                    SELECT id FROM outbox o WHERE state = 'pending' AND next_attempt_at <= ? AND (lease_until IS NULL OR lease_until <= ?)
                      -- In order per (enrollment, receiver): only the oldest undelivered message is ever in flight.
                      AND NOT EXISTS (
                          SELECT 1 FROM outbox earlier WHERE earlier.state = 'pending' AND earlier.target_uri = o.target_uri
                            AND earlier.enrollment_id IS o.enrollment_id AND earlier.rowid < o.rowid)
                    ORDER BY next_attempt_at LIMIT ?
                )
                RETURNING \(Self.outboxColumns)
                """,
                [.date(leaseUntil), .text(owner), .date(now), .date(now), .integer(limit)]
            ).map(Self.outboxMessage(from:))
        }
    }

    public func completeOutbox(id: String, owner: String, at: Date) async throws {
        try await transaction { db in
            _ = try db.query(
                "UPDATE outbox SET state = 'delivered', delivered_at = ?, attempts = attempts + 1, lease_until = NULL, lease_owner = NULL WHERE id = ? AND lease_owner = ?",
                [.date(at), .text(id), .text(owner)])
        }
    }

    public func failOutbox(id: String, owner: String, attempts: Int, nextAttemptAt: Date?, error: String) async throws {
        try await transaction { db in
            _ = try db.query(
                """
                UPDATE outbox SET state = ?, attempts = ?, next_attempt_at = COALESCE(?, next_attempt_at), last_error = ?,
                    lease_until = NULL, lease_owner = NULL
                WHERE id = ? AND lease_owner = ?
                """,
                [
                    .text(nextAttemptAt == nil ? "deadLetter" : "pending"), .integer(attempts), .optionalDate(nextAttemptAt), .text(error),
                    .text(id), .text(owner),
                ])
        }
    }

    public func outboxMessages(tenantId: String, state: OutboxMessage.State?, limit: Int, offset: Int) async throws -> [OutboxMessage] {
        var sql = "SELECT \(Self.outboxColumns) FROM outbox WHERE tenant_id = ?"
        var binds: [SQLiteData] = [.text(tenantId)]
        if let state {
            sql += " AND state = ?"
            binds.append(.text(state.rawValue))
        }
        sql += " ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?"
        binds.append(.integer(max(1, min(limit, 1000))))
        binds.append(.integer(max(0, offset)))
        return try await read(sql, binds).map(Self.outboxMessage(from:))
    }

    public func redeliverOutbox(id: String, tenantId: String, now: Date) async throws -> Bool {
        try await transaction { db in
            !(try db.query(
                """
                UPDATE outbox SET state = 'pending', attempts = 0, next_attempt_at = ?, lease_until = NULL, lease_owner = NULL, last_error = NULL
                WHERE id = ? AND tenant_id = ? RETURNING id
                """,
                [.date(now), .text(id), .text(tenantId)]
            ).isEmpty)
        }
    }

    public func purgeOutbox(before: Date) async throws -> Int {
        try await transaction { db in
            try db.query("DELETE FROM outbox WHERE state IN ('delivered', 'deadLetter') AND created_at < ? RETURNING id", [.date(before)]).count
        }
    }

    public func nextOutboxAttempt(now: Date) async throws -> Date? {
        try await read(
            """
            SELECT MIN(max(next_attempt_at, CASE WHEN lease_until > ? THEN lease_until ELSE 0 END)) AS next FROM outbox o
            WHERE state = 'pending' AND NOT EXISTS (
                SELECT 1 FROM outbox earlier WHERE earlier.state = 'pending' AND earlier.target_uri = o.target_uri
                  AND earlier.enrollment_id IS o.enrollment_id AND earlier.rowid < o.rowid)
            """,
            [.date(now)]
        ).first?.optionalDate("next")
    }
}
