public import Foundation
public import PortcullisCore
public import PortcullisStorage
import PostgresNIO

extension PostgresStore {
    static let temporaryAccessPassColumns = "id, tenant_id, user_id, pass_hash, created_at, start_at, lifetime_minutes, usable_once, used_at"

    static func temporaryAccessPass(_ row: PostgresRow) throws -> TemporaryAccessPassRecord {
        let (id, tenant, user, hash, created, start, lifetime, once, used) = try row.decode(
            (RecordID, TenantID, ObjectID, String, Double, Double, Int, Bool, Double?).self)
        return TemporaryAccessPassRecord(
            id: id, tenantId: tenant, userId: user, passHash: hash, createdAt: Date(seconds: created), startAt: Date(seconds: start),
            lifetimeMinutes: lifetime, usableOnce: once, usedAt: used.map(Date.init(seconds:)))
    }

    public func replaceTemporaryAccessPass(_ pass: TemporaryAccessPassRecord) async throws -> TemporaryAccessPassRecord? {
        try await transaction { db in
            // One issuance for a user at a time on every node, so that the delete and the insert cannot interleave.
            try await db.query("SELECT pg_advisory_xact_lock(hashtext(\("temporary-access-pass/\(pass.tenantId)/\(pass.userId)")))")
            let replaced = try await db.query(
                """
                DELETE FROM temporary_access_passes WHERE tenant_id = \(pass.tenantId) AND user_id = \(pass.userId)
                RETURNING \(unescaped: Self.temporaryAccessPassColumns)
                """
            ).first.map(Self.temporaryAccessPass)
            try await db.query(
                """
                INSERT INTO temporary_access_passes (\(unescaped: Self.temporaryAccessPassColumns))
                VALUES (\(pass.id), \(pass.tenantId), \(pass.userId), \(pass.passHash), \(pass.createdAt.seconds), \(pass.startAt.seconds),
                        \(pass.lifetimeMinutes), \(pass.usableOnce), \(pass.usedAt?.seconds))
                """)
            return replaced
        }
    }

    public func temporaryAccessPass(tenantId: TenantID, userId: ObjectID) async throws -> TemporaryAccessPassRecord? {
        try await rows(
            """
            SELECT \(unescaped: Self.temporaryAccessPassColumns) FROM temporary_access_passes
            WHERE tenant_id = \(tenantId) AND user_id = \(userId)
            """
        ).first.map(Self.temporaryAccessPass)
    }

    public func useTemporaryAccessPass(id: RecordID, at: Date) async throws -> Bool {
        // One statement: the row lock orders two sign-ins with the same one-time pass on every node.
        !(try await rows(
            """
            UPDATE temporary_access_passes SET used_at = \(at.seconds) WHERE id = \(id) AND (NOT usable_once OR used_at IS NULL)
            RETURNING id
            """
        ).isEmpty)
    }

    public func deleteTemporaryAccessPass(tenantId: TenantID, userId: ObjectID, id: RecordID) async throws -> Bool {
        !(try await rows(
            """
            DELETE FROM temporary_access_passes WHERE tenant_id = \(tenantId) AND user_id = \(userId) AND id = \(id)
            RETURNING id
            """
        ).isEmpty)
    }
}
