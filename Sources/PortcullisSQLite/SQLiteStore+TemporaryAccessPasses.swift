public import Foundation
public import PortcullisCore
public import PortcullisStorage
import SQLiteNIO

extension SQLiteStore {
    static func temporaryAccessPass(from row: StoredRow) throws -> TemporaryAccessPassRecord {
        TemporaryAccessPassRecord(
            id: try row.id("id"), tenantId: try row.id("tenant_id"), userId: try row.id("user_id"), passHash: try row.string("pass_hash"),
            createdAt: try row.date("created_at"), startAt: try row.date("start_at"), lifetimeMinutes: row.column("lifetime_minutes")?.integer ?? 0,
            usableOnce: row.column("usable_once")?.integer == 1, usedAt: row.optionalDate("used_at"))
    }

    public func replaceTemporaryAccessPass(_ pass: TemporaryAccessPassRecord) async throws -> TemporaryAccessPassRecord? {
        try await transaction { db in
            let replaced = try db.query(
                "DELETE FROM temporary_access_passes WHERE tenant_id = ? AND user_id = ? RETURNING *", [.id(pass.tenantId), .id(pass.userId)]
            ).first.map(Self.temporaryAccessPass(from:))
            _ = try db.query(
                """
                INSERT INTO temporary_access_passes (id, tenant_id, user_id, pass_hash, created_at, start_at, lifetime_minutes, usable_once, used_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    .id(pass.id), .id(pass.tenantId), .id(pass.userId), .text(pass.passHash), .date(pass.createdAt), .date(pass.startAt),
                    .integer(pass.lifetimeMinutes), .integer(pass.usableOnce ? 1 : 0), .optionalDate(pass.usedAt),
                ])
            return replaced
        }
    }

    public func temporaryAccessPass(tenantId: TenantID, userId: ObjectID) async throws -> TemporaryAccessPassRecord? {
        try await read(
            "SELECT * FROM temporary_access_passes WHERE tenant_id = ? AND user_id = ?", [.id(tenantId), .id(userId)]
        ).first.map(Self.temporaryAccessPass(from:))
    }

    public func useTemporaryAccessPass(id: RecordID, at: Date) async throws -> Bool {
        try await transaction { db in
            !(try db.query(
                "UPDATE temporary_access_passes SET used_at = ? WHERE id = ? AND (usable_once = 0 OR used_at IS NULL) RETURNING id",
                [.date(at), .id(id)]
            ).isEmpty)
        }
    }

    public func deleteTemporaryAccessPass(tenantId: TenantID, userId: ObjectID, id: RecordID) async throws -> Bool {
        try await transaction { db in
            !(try db.query(
                "DELETE FROM temporary_access_passes WHERE tenant_id = ? AND user_id = ? AND id = ? RETURNING id",
                [.id(tenantId), .id(userId), .id(id)]
            ).isEmpty)
        }
    }
}
