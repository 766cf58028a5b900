public import Foundation
public import PortcullisCore
public import PortcullisStorage
import PostgresNIO

extension PostgresStore {
    static func enrollment(_ row: PostgresRow) throws -> Enrollment {
        let (document, revision) = try row.decode((String, Int64).self)
        var enrollment = try StoredJSON.enrollment(from: document)
        enrollment.revision = revision
        return enrollment
    }

    static func appendHistory(_ id: RecordID, _ entry: EnrollmentHistoryEntry, _ db: Statements) async throws {
        try await db.query(
            """
            INSERT INTO enrollment_history (enrollment_id, at, event, from_status, to_status, detail)
            VALUES (\(id), \(entry.at.seconds), \(entry.event.rawValue), \(entry.fromStatus), \(entry.toStatus), \(entry.detail))
            """)
    }

    static func enqueue(_ messages: [OutboxMessage], _ db: Statements) async throws {
        for message in messages {
            try await db.query(
                """
                INSERT INTO outbox (id, tenant_id, enrollment_id, target_uri, payload, jti, state, attempts, next_attempt_at, created_at)
                VALUES (\(message.id), \(message.tenantId), \(message.enrollmentId), \(message.targetUri), \(message.payload), \(message.jti),
                        'pending', 0, \(message.nextAttemptAt.seconds), \(message.createdAt.seconds))
                """)
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
            try await db.query(
                """
                INSERT INTO enrollments (id, tenant_id, user_id, client_id, device_id, state, lapses_at, updated_at, revision, document)
                VALUES (\(stored.id), \(stored.tenantId), \(stored.userId), \(stored.clientId), \(stored.deviceId), \(stored.state.rawValue),
                        \(stored.lapsesAt.seconds), \(stored.updatedAt.seconds), 1, \(document))
                """)
            try await Self.appendHistory(stored.id, history, db)
            try await Self.enqueue(outbox, db)
            let pruned = try await db.query(
                """
                DELETE FROM enrollments WHERE id IN (
                    SELECT id FROM enrollments WHERE tenant_id = \(stored.tenantId) AND user_id = \(stored.userId) AND client_id = \(stored.clientId)
                        AND id <> \(stored.id)
                    ORDER BY (state = 'unenrolled') DESC, updated_at ASC
                    LIMIT GREATEST(0, (SELECT count(*) FROM enrollments
                                       WHERE tenant_id = \(stored.tenantId) AND user_id = \(stored.userId) AND client_id = \(stored.clientId)) - \(max(1, keepingAtMost)))
                ) RETURNING id
                """)
            let ids = try pruned.map { try $0.decode(String.self) }
            if !ids.isEmpty { try await db.query("DELETE FROM enrollment_history WHERE enrollment_id = ANY(\(ids))") }
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
            let updated = try await db.query(
                """
                UPDATE enrollments SET state = \(stored.state.rawValue), lapses_at = \(stored.lapsesAt.seconds), updated_at = \(stored.updatedAt.seconds),
                    revision = revision + 1, document = \(document)
                WHERE id = \(stored.id) AND revision = \(expectedRevision) RETURNING revision
                """)
            guard !updated.isEmpty else { return nil }
            try await Self.appendHistory(stored.id, history, db)
            try await Self.enqueue(outbox, db)
            try await Self.commit(effects, revision: 0, db)
            return stored
        }
    }

    public func enrollment(id: RecordID) async throws -> Enrollment? {
        try await rows("SELECT document, revision FROM enrollments WHERE id = \(id)").first.map(Self.enrollment)
    }

    public func activeEnrollment(tenantId: TenantID, clientId: AppID, deviceId: DeviceID) async throws -> Enrollment? {
        try await rows(
            """
            SELECT document, revision FROM enrollments
            WHERE tenant_id = \(tenantId) AND client_id = \(clientId) AND device_id = \(deviceId) AND state <> 'unenrolled'
            """
        ).first.map(Self.enrollment)
    }

    public func activeEnrollments(tenantId: TenantID, userId: ObjectID, clientId: AppID) async throws -> [Enrollment] {
        try await rows(
            """
            SELECT document, revision FROM enrollments
            WHERE tenant_id = \(tenantId) AND user_id = \(userId) AND client_id = \(clientId) AND state <> 'unenrolled'
            ORDER BY updated_at DESC
            """
        ).map(Self.enrollment)
    }

    public func compliantEnrollment(tenantId: TenantID, userId: ObjectID, clientId: AppID, now: Date) async throws -> CompliantEnrollment? {
        try await rows(
            """
            SELECT id, document::jsonb ->> 'platform' AS platform FROM enrollments
            WHERE tenant_id = \(tenantId) AND user_id = \(userId) AND client_id = \(clientId)
              AND state = 'compliant' AND lapses_at > \(now.seconds)
            ORDER BY updated_at DESC LIMIT 1
            """
        ).first.map { row in
            let (id, platform) = try row.decode((String, String?).self)
            return CompliantEnrollment(id: RecordID(id), platform: platform.flatMap(DevicePlatform.init(rawValue:)))
        }
    }

    public func hasActiveEnrollment(tenantId: TenantID, userId: ObjectID, clientId: AppID) async throws -> Bool {
        !(try await rows(
            """
            SELECT 1 FROM enrollments WHERE tenant_id = \(tenantId) AND user_id = \(userId) AND client_id = \(clientId)
              AND state <> 'unenrolled' LIMIT 1
            """
        ).isEmpty)
    }

    public func enrollments(_ query: EnrollmentQuery) async throws -> [Enrollment] {
        var conditions = Conditions()
        conditions.add(query.tenantId) { "tenant_id = \($0)" }
        if let user = query.userId { conditions.add(user) { "user_id = \($0)" } }
        if let client = query.clientId { conditions.add(client) { "client_id = \($0)" } }
        if let device = query.deviceId { conditions.add(device) { "device_id = \($0)" } }
        if let state = query.state { conditions.add(state.rawValue) { "state = \($0)" } }
        let limit = conditions.bind(max(1, min(query.limit, 1000)))
        let offset = conditions.bind(max(0, query.offset))
        let sql = "SELECT document, revision FROM enrollments WHERE \(conditions.sql) ORDER BY updated_at DESC, id DESC LIMIT \(limit) OFFSET \(offset)"
        return try await rows(PostgresQuery(unsafeSQL: sql, binds: conditions.binds)).map(Self.enrollment)
    }

    public func enrollmentHistory(id: RecordID) async throws -> [EnrollmentHistoryEntry] {
        try await rows("SELECT at, event, from_status, to_status, detail FROM enrollment_history WHERE enrollment_id = \(id) ORDER BY seq").map {
            row in
            let (at, event, from, to, detail) = try row.decode((Double, String, String?, String?, String?).self)
            return EnrollmentHistoryEntry(at: Date(seconds: at), event: EnrollmentEvent(rawValue: event), fromStatus: from, toStatus: to, detail: detail)
        }
    }

    public func lapsingEnrollments(now: Date, limit: Int) async throws -> [Enrollment] {
        try await rows(
            """
            SELECT document, revision FROM enrollments WHERE state = 'compliant' AND lapses_at <= \(now.seconds) ORDER BY lapses_at LIMIT \(limit)
            """
        ).map(Self.enrollment)
    }

    public func deleteIdleEnrollments(idleSince: Date) async throws -> Int {
        try await transaction { db in
            let deleted = try await db.query("DELETE FROM enrollments WHERE updated_at < \(idleSince.seconds) RETURNING id")
            let ids = try deleted.map { try $0.decode(String.self) }
            if !ids.isEmpty { try await db.query("DELETE FROM enrollment_history WHERE enrollment_id = ANY(\(ids))") }
            return ids.count
        }
    }
}

extension PostgresStore {
    static let outboxColumns = "id, tenant_id, enrollment_id, target_uri, payload, jti, state, attempts, next_attempt_at, last_error, created_at, delivered_at"

    static func outboxMessage(_ row: PostgresRow) throws -> OutboxMessage {
        let (id, tenant, enrollment, target, payload, jti, state, attempts, next, error, created, delivered) =
            try row.decode((String, String, String?, String, String, String, String, Int, Double, String?, Double, Double?).self)
        return OutboxMessage(
            id: id, tenantId: tenant, enrollmentId: enrollment, targetUri: target, payload: payload, jti: jti,
            state: OutboxMessage.State(rawValue: state) ?? .pending, attempts: attempts, nextAttemptAt: Date(seconds: next), lastError: error,
            createdAt: Date(seconds: created), deliveredAt: delivered.map(Date.init(seconds:)))
    }

    public func claimOutbox(now: Date, leaseUntil: Date, owner: String, limit: Int) async throws -> [OutboxMessage] {
        // SKIP LOCKED: nodes claiming at the same moment take different rows; each message is sent by one
        // node per attempt. Per (enrollment, receiver) only the oldest pending message is claimable.
        try await rows(
            PostgresQuery(
                unsafeSQL: """
                    UPDATE outbox SET lease_until = $1, lease_owner = $2
                    WHERE id IN (
                        SELECT id FROM outbox o
                        WHERE state = 'pending' AND next_attempt_at <= $3 AND (lease_until IS NULL OR lease_until <= $3)
                          AND NOT EXISTS (
                              SELECT 1 FROM outbox earlier WHERE earlier.state = 'pending' AND earlier.target_uri = o.target_uri
                                AND earlier.enrollment_id IS NOT DISTINCT FROM o.enrollment_id AND earlier.seq < o.seq)
                        ORDER BY next_attempt_at LIMIT $4
                        FOR UPDATE SKIP LOCKED
                    )
                    RETURNING \(Self.outboxColumns)
                    """,
                binds: {
                    var binds = PostgresBindings()
                    binds.append(leaseUntil.seconds)
                    binds.append(owner)
                    binds.append(now.seconds)
                    binds.append(limit)
                    return binds
                }())
        ).map(Self.outboxMessage)
    }

    public func completeOutbox(id: String, owner: String, at: Date) async throws {
        _ = try await rows(
            """
            UPDATE outbox SET state = 'delivered', delivered_at = \(at.seconds), attempts = attempts + 1, lease_until = NULL, lease_owner = NULL
            WHERE id = \(id) AND lease_owner = \(owner) RETURNING id
            """)
    }

    public func failOutbox(id: String, owner: String, attempts: Int, nextAttemptAt: Date?, error: String) async throws {
        _ = try await rows(
            """
            UPDATE outbox SET state = \(nextAttemptAt == nil ? "deadLetter" : "pending"), attempts = \(attempts),
                next_attempt_at = COALESCE(\(nextAttemptAt.seconds)::double precision, next_attempt_at), last_error = \(error),
                lease_until = NULL, lease_owner = NULL
            WHERE id = \(id) AND lease_owner = \(owner) RETURNING id
            """)
    }

    public func outboxMessages(tenantId: String, state: OutboxMessage.State?, limit: Int, offset: Int) async throws -> [OutboxMessage] {
        var conditions = Conditions()
        conditions.add(tenantId) { "tenant_id = \($0)" }
        if let state { conditions.add(state.rawValue) { "state = \($0)" } }
        let bound = conditions.bind(max(1, min(limit, 1000)))
        let skipped = conditions.bind(max(0, offset))
        return try await rows(
            PostgresQuery(
                unsafeSQL:
                    "SELECT \(Self.outboxColumns) FROM outbox WHERE \(conditions.sql) ORDER BY created_at DESC, seq DESC LIMIT \(bound) OFFSET \(skipped)",
                binds: conditions.binds)
        ).map(Self.outboxMessage)
    }

    public func redeliverOutbox(id: String, tenantId: String, now: Date) async throws -> Bool {
        !(try await rows(
            """
            UPDATE outbox SET state = 'pending', attempts = 0, next_attempt_at = \(now.seconds), lease_until = NULL, lease_owner = NULL, last_error = NULL
            WHERE id = \(id) AND tenant_id = \(tenantId) RETURNING id
            """
        ).isEmpty)
    }

    public func purgeOutbox(before: Date) async throws -> Int {
        try await rows("DELETE FROM outbox WHERE state IN ('delivered', 'deadLetter') AND created_at < \(before.seconds) RETURNING id").count
    }

    public func nextOutboxAttempt(now: Date) async throws -> Date? {
        try await rows(
            """
            SELECT MIN(GREATEST(next_attempt_at, CASE WHEN lease_until > \(now.seconds) THEN lease_until ELSE 0 END)) FROM outbox o
            WHERE state = 'pending' AND NOT EXISTS (
                SELECT 1 FROM outbox earlier WHERE earlier.state = 'pending' AND earlier.target_uri = o.target_uri
                  AND earlier.enrollment_id IS NOT DISTINCT FROM o.enrollment_id AND earlier.seq < o.seq)
            """
        ).first?.decode(Double?.self).map(Date.init(seconds:))
    }
}
