public import Foundation
public import PortcullisCore
import PortcullisStorage
import SQLiteNIO

extension SQLiteStore {
    public func appendSignIns(_ entries: [SignInAggregation.Entry]) async throws {
        guard !entries.isEmpty else { return }
        // Each entry's cursor is its place in the batch (after the largest so far); an aggregate that grows a stored one
        // leaves its number unused.
        var individual: [(position: Int, record: SignInRecord, json: String)] = []
        var counted: [(position: Int, aggregate: SignInAggregation.Pending, json: String)] = []
        for (position, entry) in entries.enumerated() {
            switch entry {
            case .record(let record): individual.append((position, record, try StoredJSON.compactText(of: record)))
            case .aggregate(let aggregate): counted.append((position, aggregate, try StoredJSON.compactText(of: aggregate.first)))
            }
        }
        let records = individual
        let pending = counted
        try await transaction { db in
            var added = 0
            let base = try db.query("SELECT COALESCE(MAX(cursor), 0) AS last FROM sign_ins").first?.int("last") ?? 0
            // Multi-row inserts with explicit cursors: a batch of thousands is a few statements, not thousands.
            for start in stride(from: 0, to: records.count, by: 100) {
                let chunk = records[start..<min(start + 100, records.count)]
                var binds: [SQLiteData] = []
                var policyBinds: [SQLiteData] = []
                for (position, record, json) in chunk {
                    let cursor = Int(base) + position + 1
                    let size = json.utf8.count + StoredJSON.signInRowOverhead
                    added += size
                    binds += [
                        .integer(cursor), .text(record.id), .text(record.tenantId.rawValue), .date(record.createdDateTime), .text(record.correlationId),
                        .optionalText(record.userId?.rawValue), .text(record.clientAppId.rawValue), .text(record.resourceAppId.rawValue),
                        .text(record.conditionalAccessStatus.rawValue), .text(json), .integer(size),
                    ]
                    for policy in Self.indexedPolicies(record) { policyBinds += [.integer(cursor), .text(policy)] }
                }
                let rows = Array(repeating: "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", count: chunk.count).joined(separator: ", ")
                _ = try db.query(
                    "INSERT INTO sign_ins (cursor, id, tenant_id, created_at, correlation_id, user_id, client_app_id, resource_app_id, status, record, size) VALUES "
                        + rows,
                    binds)
                try Self.indexPolicies(policyBinds, db)
            }
            // Aggregates in sets of up to 200: each row adds to the window's stored aggregate or stores a new one, a few
            // statements for a batch of a thousand tenants' aggregates (one statement each held the writer for seconds,
            // issue 42). A row stored new keeps the cursor written (after the batch's base); one that grew a stored
            // aggregate answers that one's (at or below the base). New ones' policies are indexed then.
            for start in stride(from: 0, to: pending.count, by: 200) {
                let chunk = pending[start..<min(start + 200, pending.count)]
                var binds: [SQLiteData] = []
                var sizes: [Int64: (record: SignInRecord, size: Int)] = [:]
                for (position, aggregate, json) in chunk {
                    let record = aggregate.first
                    let size = json.utf8.count + StoredJSON.signInRowOverhead
                    let cursor = Int(base) + position + 1
                    sizes[Int64(cursor)] = (record, size)
                    binds += [
                        .integer(cursor), .text(record.id), .text(record.tenantId.rawValue), .date(record.createdDateTime), .text(record.correlationId),
                        .optionalText(record.userId?.rawValue), .text(record.clientAppId.rawValue), .text(record.resourceAppId.rawValue),
                        .text(record.conditionalAccessStatus.rawValue), .text(json), .integer(size), .integer(aggregate.count),
                        .date(aggregate.lastDateTime), .text(aggregate.lastCorrelationId), .text(aggregate.key), .date(aggregate.windowStart),
                    ]
                }
                let rows = Array(repeating: "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", count: chunk.count).joined(separator: ", ")
                let stored = try db.query(
                    """
                    INSERT INTO sign_ins (cursor, id, tenant_id, created_at, correlation_id, user_id, client_app_id, resource_app_id, status, record,
                                          size, count, last_at, last_correlation_id, aggregate_key, window_start)
                    VALUES \(rows)
                    ON CONFLICT (tenant_id, aggregate_key, window_start) WHERE aggregate_key IS NOT NULL DO UPDATE SET
                        count = sign_ins.count + excluded.count,
                        last_correlation_id = CASE WHEN excluded.last_at >= sign_ins.last_at THEN excluded.last_correlation_id
                                                   ELSE sign_ins.last_correlation_id END,
                        last_at = MAX(sign_ins.last_at, excluded.last_at)
                    RETURNING cursor
                    """,
                    binds)
                var policyBinds: [SQLiteData] = []
                for row in stored {
                    let cursor = try row.int("cursor")
                    guard cursor > base, let new = sizes[cursor] else { continue }
                    added += new.size
                    for policy in Self.indexedPolicies(new.record) { policyBinds += [.integer(Int(cursor)), .text(policy)] }
                }
                try Self.indexPolicies(policyBinds, db)
            }
            if added > 0 { _ = try db.query("UPDATE sign_in_usage SET bytes = bytes + ? WHERE id = 1", [.integer(added)]) }
        }
    }

    /// The policies a record is found by (`?policy=`): those that applied or would have.
    static func indexedPolicies(_ record: SignInRecord) -> Set<String> {
        Set(SignInAggregation.compacted(record).appliedConditionalAccessPolicies.map(\.id))
    }

    static func indexPolicies(_ binds: [SQLiteData], _ db: WriterStatements) throws {
        for policies in stride(from: 0, to: binds.count, by: 400).map({ Array(binds[$0..<min($0 + 400, binds.count)]) }) {
            _ = try db.query(
                "INSERT OR IGNORE INTO sign_in_policies (cursor, policy_id) VALUES "
                    + Array(repeating: "(?, ?)", count: policies.count / 2).joined(separator: ", "),
                policies)
        }
    }

    public func signIns(_ query: SignInQuery) async throws -> [(cursor: Int64, record: SignInRecord)] {
        // Fixed clauses chosen by which filters are present; every value is a bound parameter.
        var clauses = ["s.tenant_id = ?", "s.cursor < ?"]
        var binds: [SQLiteData] = [.id(query.tenantId), .integer(Int(query.before ?? Int64.max))]
        if let user = query.userId {
            clauses.append("s.user_id = ?")
            binds.append(.id(user))
        }
        if let app = query.clientAppId {
            clauses.append("s.client_app_id = ?")
            binds.append(.id(app))
        }
        if let resource = query.resourceAppId {
            clauses.append("s.resource_app_id = ?")
            binds.append(.id(resource))
        }
        if let status = query.status {
            clauses.append("s.status = ?")
            binds.append(.text(status.rawValue))
        }
        if let correlation = query.correlationId {
            clauses.append("(s.correlation_id = ? OR s.last_correlation_id = ?)")
            binds += [.text(correlation), .text(correlation)]
        }
        if let from = query.from {
            clauses.append("COALESCE(s.last_at, s.created_at) >= ?")
            binds.append(.date(from))
        }
        if let to = query.to {
            clauses.append("s.created_at < ?")
            binds.append(.date(to))
        }
        if let policy = query.policyId {
            clauses.append("s.cursor IN (SELECT cursor FROM sign_in_policies WHERE policy_id = ?)")
            binds.append(.id(policy))
        }
        binds.append(.integer(max(1, min(query.limit, 1000))))
        let sql =
            """
            SELECT s.cursor, s.id, s.tenant_id, s.created_at, s.correlation_id, s.user_id, s.client_app_id, s.resource_app_id, s.status, s.record,
                   s.count, s.last_at, s.last_correlation_id
            FROM sign_ins s WHERE
            """ + " " + clauses.joined(separator: " AND ") + " ORDER BY s.cursor DESC LIMIT ?"
        return try await read(sql, binds).map { row in
            let columns = StoredJSON.SignInColumns(
                id: try row.string("id"), tenantId: try row.string("tenant_id"), createdAt: try row.date("created_at"),
                correlationId: try row.string("correlation_id"), userId: row.optionalString("user_id"), clientAppId: try row.string("client_app_id"),
                resourceAppId: try row.string("resource_app_id"), status: try row.string("status"),
                count: row.column("count")?.integer, lastAt: row.optionalDate("last_at"), lastCorrelationId: row.optionalString("last_correlation_id"))
            return (try row.int("cursor"), try StoredJSON.signIn(from: try row.string("record"), columns: columns))
        }
    }

    public func purgeSignIns(before: Date) async throws -> Int {
        try await transaction { db in
            // An aggregate goes when its last sign-in is older than `before` (its first one always is, then).
            let deleted = try db.query(
                "DELETE FROM sign_ins WHERE created_at < ? AND (last_at IS NULL OR last_at < ?) RETURNING size", [.date(before), .date(before)])
            try Self.subtract(deleted, db)
            return deleted.count
        }
    }

    public func signInBytes() async throws -> Int64 {
        try await read("SELECT bytes FROM sign_in_usage WHERE id = 1").first?.int("bytes") ?? 0
    }

    public func trimSignIns(toBytes bytes: Int64, limit: Int) async throws -> Int {
        try await transaction { db in
            guard let used = try db.query("SELECT bytes FROM sign_in_usage WHERE id = 1").first?.int("bytes"), used > bytes else { return 0 }
            // The oldest first (cursor order), up to the first row that brings the log under the bound, at most `limit`.
            let oldest = try db.query("SELECT cursor, size FROM sign_ins ORDER BY cursor LIMIT ?", [.integer(max(1, limit))])
            var freed: Int64 = 0
            var last: Int64?
            for row in oldest {
                freed += row.column("size")?.integer.map(Int64.init) ?? 0
                last = try row.int("cursor")
                if used - freed <= bytes { break }
            }
            guard let last else { return 0 }
            let deleted = try db.query("DELETE FROM sign_ins WHERE cursor <= ? RETURNING size", [.integer(Int(last))])
            try Self.subtract(deleted, db)
            return deleted.count
        }
    }

    static func subtract(_ deleted: [StoredRow], _ db: WriterStatements) throws {
        let freed = deleted.reduce(0) { $0 + Int($1.column("size")?.integer ?? 0) }
        if freed > 0 { _ = try db.query("UPDATE sign_in_usage SET bytes = MAX(0, bytes - ?) WHERE id = 1", [.integer(freed)]) }
    }
}
