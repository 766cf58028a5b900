public import Foundation
public import PortcullisCore
import PortcullisStorage
import SQLiteNIO

extension SQLiteStore {
    public func appendSignIns(_ records: [SignInRecord]) async throws {
        guard !records.isEmpty else { return }
        let encoded = try records.map { (record: $0, json: try StoredJSON.text(of: $0)) }
        try await transaction { db in
            // Multi-row inserts with explicit cursors: a batch of thousands is a few statements, not thousands.
            var next = try await db.query("SELECT COALESCE(MAX(cursor), 0) AS last FROM sign_ins").first?.int("last") ?? 0
            for chunk in stride(from: 0, to: encoded.count, by: 100).map({ Array(encoded[$0..<min($0 + 100, encoded.count)]) }) {
                var binds: [SQLiteData] = []
                var policyBinds: [SQLiteData] = []
                for (record, json) in chunk {
                    next += 1
                    binds += [
                        .integer(Int(next)), .text(record.id), .text(record.tenantId), .date(record.createdDateTime), .text(record.correlationId),
                        .optionalText(record.userId), .text(record.clientAppId), .text(record.resourceAppId),
                        .text(record.conditionalAccessStatus.rawValue), .text(json),
                    ]
                    for policy in Set(record.appliedConditionalAccessPolicies.map(\.id)) { policyBinds += [.integer(Int(next)), .text(policy)] }
                }
                let rows = Array(repeating: "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", count: chunk.count).joined(separator: ", ")
                _ = try await db.query(
                    "INSERT INTO sign_ins (cursor, id, tenant_id, created_at, correlation_id, user_id, client_app_id, resource_app_id, status, record) VALUES "
                        + rows,
                    binds)
                for policies in stride(from: 0, to: policyBinds.count, by: 400).map({ Array(policyBinds[$0..<min($0 + 400, policyBinds.count)]) }) {
                    _ = try await db.query(
                        "INSERT INTO sign_in_policies (cursor, policy_id) VALUES "
                            + Array(repeating: "(?, ?)", count: policies.count / 2).joined(separator: ", "),
                        policies)
                }
            }
        }
    }

    public func signIns(_ query: SignInQuery) async throws -> [(cursor: Int64, record: SignInRecord)] {
        // Fixed clauses chosen by which filters are present; every value is a bound parameter.
        var clauses = ["s.tenant_id = ?", "s.cursor < ?"]
        var binds: [SQLiteData] = [.text(query.tenantId), .integer(Int(query.before ?? Int64.max))]
        if let user = query.userId {
            clauses.append("s.user_id = ?")
            binds.append(.text(user.lowercased()))
        }
        if let app = query.clientAppId {
            clauses.append("s.client_app_id = ?")
            binds.append(.text(app.lowercased()))
        }
        if let resource = query.resourceAppId {
            clauses.append("s.resource_app_id = ?")
            binds.append(.text(resource.lowercased()))
        }
        if let status = query.status {
            clauses.append("s.status = ?")
            binds.append(.text(status.rawValue))
        }
        if let correlation = query.correlationId {
            clauses.append("s.correlation_id = ?")
            binds.append(.text(correlation))
        }
        if let from = query.from {
            clauses.append("s.created_at >= ?")
            binds.append(.date(from))
        }
        if let to = query.to {
            clauses.append("s.created_at < ?")
            binds.append(.date(to))
        }
        if let policy = query.policyId {
            clauses.append("s.cursor IN (SELECT cursor FROM sign_in_policies WHERE policy_id = ?)")
            binds.append(.text(policy.lowercased()))
        }
        binds.append(.integer(max(1, min(query.limit, 1000))))
        let sql = "SELECT s.cursor, s.record FROM sign_ins s WHERE " + clauses.joined(separator: " AND ") + " ORDER BY s.cursor DESC LIMIT ?"
        return try await read(sql, binds).map { row in
            (try row.int("cursor"), try StoredJSON.signIn(from: try row.string("record")))
        }
    }

    public func purgeSignIns(before: Date) async throws -> Int {
        try await transaction { db in
            try await db.query("DELETE FROM sign_ins WHERE created_at < ? RETURNING cursor", [.date(before)]).count
        }
    }
}
