public import Foundation
public import PortcullisCore
public import PortcullisStorage
import PostgresNIO

extension PostgresStore {
    static let methodColumns = "id, tenant_id, user_id, kind, sealed_secret, created_at, last_used_step, last_used_at"

    static func authenticationMethod(_ row: PostgresRow) throws -> AuthenticationMethodRecord {
        let (id, tenant, user, kind, sealed, created, step, used) = try row.decode((RecordID, TenantID, ObjectID, String, String, Double, Int64?, Double?).self)
        return AuthenticationMethodRecord(
            id: id, tenantId: tenant, userId: user, kind: AuthenticationMethodRecord.Kind(rawValue: kind) ?? .totp,
            sealedSecret: Data(base64Encoded: sealed) ?? Data(), createdAt: Date(seconds: created), lastUsedStep: step,
            lastUsedAt: used.map(Date.init(seconds:)))
    }

    public func insertAuthenticationMethod(_ method: AuthenticationMethodRecord, effects: CommittedEffects?) async throws -> Bool {
        try await transaction { db in
            let stored =
                !(try await db.query(
                    """
                    INSERT INTO authentication_methods (\(unescaped: Self.methodColumns))
                    VALUES (\(method.id), \(method.tenantId), \(method.userId), \(method.kind.rawValue), \(method.sealedSecret.base64EncodedString()),
                            \(method.createdAt.seconds), \(method.lastUsedStep), \(method.lastUsedAt?.seconds))
                    ON CONFLICT (tenant_id, user_id, kind) DO NOTHING RETURNING id
                    """
                ).isEmpty)
            if stored { try await Self.commit(effects, revision: 0, db) }
            return stored
        }
    }

    public func authenticationMethods(tenantId: TenantID, userId: ObjectID) async throws -> [AuthenticationMethodRecord] {
        try await rows(
            """
            SELECT \(unescaped: Self.methodColumns) FROM authentication_methods
            WHERE tenant_id = \(tenantId) AND user_id = \(userId) ORDER BY created_at, id
            """
        ).map(Self.authenticationMethod)
    }

    public func deleteAuthenticationMethod(tenantId: TenantID, userId: ObjectID, id: RecordID, effects: CommittedEffects?) async throws -> Bool {
        try await transaction { db in
            let deleted =
                !(try await db.query(
                    """
                    DELETE FROM authentication_methods WHERE tenant_id = \(tenantId) AND user_id = \(userId) AND id = \(id)
                    RETURNING id
                    """
                ).isEmpty)
            if deleted { try await Self.commit(effects, revision: 0, db) }
            return deleted
        }
    }

    public func useAuthenticationMethod(id: RecordID, step: Int64, at: Date) async throws -> Bool {
        // One statement: the row lock orders concurrent uses of the same code on every node.
        !(try await rows(
            """
            UPDATE authentication_methods SET last_used_step = \(step), last_used_at = \(at.seconds)
            WHERE id = \(id) AND (last_used_step IS NULL OR last_used_step < \(step)) RETURNING id
            """
        ).isEmpty)
    }

    public func usersWithAuthenticationMethods(tenantId: TenantID) async throws -> Set<ObjectID> {
        Set(
            try await rows(
                """
                SELECT user_id FROM authentication_methods WHERE tenant_id = \(tenantId)
                UNION SELECT user_id FROM passkeys WHERE tenant_id = \(tenantId)
                """
            )
            .map { ObjectID(try $0.decode(String.self)) })
    }

    public func usersWithPasskeys(tenantId: TenantID) async throws -> Set<ObjectID> {
        Set(try await rows("SELECT DISTINCT user_id FROM passkeys WHERE tenant_id = \(tenantId)").map { ObjectID(try $0.decode(String.self)) })
    }
}
