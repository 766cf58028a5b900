import Foundation
import PortcullisCore
import PortcullisStorage
import SQLiteNIO

extension SQLiteStore {
    public func appendSignIns(_ records: [SignInRecord]) async throws {
        guard !records.isEmpty else { return }
        let encoded = try records.map { (record: $0, json: String(decoding: try StoredJSON.signInEncoder.encode($0), as: UTF8.self)) }
        try await transaction { db in
            for (record, json) in encoded {
                let rows = try await db.query(
                    """
                    INSERT INTO sign_ins (id, tenant_id, created_at, correlation_id, user_id, client_app_id, resource_app_id, status, record)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING cursor
                    """,
                    [.text(record.id), .text(record.tenantId), .date(record.createdDateTime), .text(record.correlationId),
                     .optionalText(record.userId), .text(record.clientAppId), .text(record.resourceAppId),
                     .text(record.conditionalAccessStatus.rawValue), .text(json)])
                let cursor = try rows.first?.int("cursor") ?? 0
                for policy in Set(record.appliedConditionalAccessPolicies.map(\.id)) {
                    _ = try await db.query("INSERT INTO sign_in_policies (cursor, policy_id) VALUES (?, ?)", [.integer(Int(cursor)), .text(policy)])
                }
            }
        }
    }

    public func signIns(_ query: SignInQuery) async throws -> [(cursor: Int64, record: SignInRecord)] {
        // Fixed clauses chosen by which filters are present; every value is a bound parameter.
        var clauses = ["s.tenant_id = ?", "s.cursor < ?"]
        var binds: [SQLiteData] = [.text(query.tenantId), .integer(Int(query.before ?? Int64.max))]
        if let user = query.userId { clauses.append("s.user_id = ?"); binds.append(.text(user.lowercased())) }
        if let app = query.clientAppId { clauses.append("s.client_app_id = ?"); binds.append(.text(app.lowercased())) }
        if let resource = query.resourceAppId { clauses.append("s.resource_app_id = ?"); binds.append(.text(resource.lowercased())) }
        if let status = query.status { clauses.append("s.status = ?"); binds.append(.text(status.rawValue)) }
        if let correlation = query.correlationId { clauses.append("s.correlation_id = ?"); binds.append(.text(correlation)) }
        if let from = query.from { clauses.append("s.created_at >= ?"); binds.append(.date(from)) }
        if let to = query.to { clauses.append("s.created_at < ?"); binds.append(.date(to)) }
        if let policy = query.policyId {
            clauses.append("s.cursor IN (SELECT cursor FROM sign_in_policies WHERE policy_id = ?)")
            binds.append(.text(policy.lowercased()))
        }
        binds.append(.integer(max(1, min(query.limit, 1000))))
        let sql = "SELECT s.cursor, s.record FROM sign_ins s WHERE " + clauses.joined(separator: " AND ") + " ORDER BY s.cursor DESC LIMIT ?"
        return try await read(sql, binds).map { row in
            (try row.int("cursor"), try StoredJSON.signInDecoder.decode(SignInRecord.self, from: Data(try row.string("record").utf8)))
        }
    }

    public func purgeSignIns(before: Date) async throws -> Int {
        try await transaction { db in
            try await db.query("DELETE FROM sign_ins WHERE created_at < ? RETURNING cursor", [.date(before)]).count
        }
    }
}
