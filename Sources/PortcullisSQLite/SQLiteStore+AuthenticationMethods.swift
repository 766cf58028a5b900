public import Foundation
public import PortcullisCore
public import PortcullisStorage
import SQLiteNIO

extension SQLiteStore {
    static func authenticationMethod(from row: StoredRow) throws -> AuthenticationMethodRecord {
        AuthenticationMethodRecord(
            id: try row.id("id"), tenantId: try row.id("tenant_id"), userId: try row.id("user_id"),
            kind: AuthenticationMethodRecord.Kind(rawValue: try row.string("kind")) ?? .totp,
            sealedSecret: Data(base64Encoded: try row.string("sealed_secret")) ?? Data(), createdAt: try row.date("created_at"),
            lastUsedStep: row.column("last_used_step").flatMap { $0.isNull ? nil : $0.integer }.map(Int64.init),
            lastUsedAt: row.optionalDate("last_used_at"))
    }

    public func insertAuthenticationMethod(_ method: AuthenticationMethodRecord, effects: CommittedEffects?) async throws -> Bool {
        try await transaction { db in
            let stored =
                !(try db.query(
                    """
                    INSERT INTO authentication_methods (id, tenant_id, user_id, kind, sealed_secret, created_at, last_used_step, last_used_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant_id, user_id, kind) DO NOTHING RETURNING id
                    """,
                    [
                        .id(method.id), .id(method.tenantId), .id(method.userId), .text(method.kind.rawValue),
                        .text(method.sealedSecret.base64EncodedString()),
                        .date(method.createdAt), method.lastUsedStep.map { .integer(Int($0)) } ?? .null, .optionalDate(method.lastUsedAt),
                    ]
                ).isEmpty)
            if stored { try Self.commit(effects, revision: 0, db) }
            return stored
        }
    }

    public func authenticationMethods(tenantId: TenantID, userId: ObjectID) async throws -> [AuthenticationMethodRecord] {
        try await read(
            "SELECT * FROM authentication_methods WHERE tenant_id = ? AND user_id = ? ORDER BY created_at, id",
            [.id(tenantId), .id(userId)]
        ).map(Self.authenticationMethod(from:))
    }

    public func deleteAuthenticationMethod(tenantId: TenantID, userId: ObjectID, id: RecordID, effects: CommittedEffects?) async throws -> Bool {
        try await transaction { db in
            let deleted =
                !(try db.query(
                    "DELETE FROM authentication_methods WHERE tenant_id = ? AND user_id = ? AND id = ? RETURNING id",
                    [.id(tenantId), .id(userId), .id(id)]
                ).isEmpty)
            if deleted { try Self.commit(effects, revision: 0, db) }
            return deleted
        }
    }

    public func useAuthenticationMethod(id: RecordID, step: Int64, at: Date) async throws -> Bool {
        try await transaction { db in
            !(try db.query(
                """
                UPDATE authentication_methods SET last_used_step = ?1, last_used_at = ?2
                WHERE id = ?3 AND (last_used_step IS NULL OR last_used_step < ?1) RETURNING id
                """,
                [.integer(Int(step)), .date(at), .id(id)]
            ).isEmpty)
        }
    }

    public func usersWithAuthenticationMethods(tenantId: TenantID) async throws -> Set<ObjectID> {
        Set(
            try await read(
                "SELECT user_id FROM authentication_methods WHERE tenant_id = ?1 UNION SELECT user_id FROM passkeys WHERE tenant_id = ?1",
                [.id(tenantId)]
            )
            .map { try $0.id("user_id") })
    }

    public func usersWithPasskeys(tenantId: TenantID) async throws -> Set<ObjectID> {
        Set(try await read("SELECT DISTINCT user_id FROM passkeys WHERE tenant_id = ?1", [.id(tenantId)]).map { try $0.id("user_id") })
    }
}
