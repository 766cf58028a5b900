public import Foundation
public import PortcullisCore
public import PortcullisStorage
import PostgresNIO

extension PostgresStore {
    static let passkeyColumns = """
        id, tenant_id, user_id, credential_id, public_key, algorithm, sign_count, aaguid, backup_eligible, backed_up, attestation, transports, \
        display_name, created_at, last_used_at, suspect_since
        """

    static func passkey(_ row: PostgresRow) throws -> PasskeyRecord {
        let (id, tenant, user, credential, key, algorithm, count, aaguid) = try row.decode(
            (RecordID, TenantID, ObjectID, String, String, Int, Int64, String).self)
        let columns = row.makeRandomAccess()
        guard let uuid = UUID(uuidString: aaguid), let attestation = AttestationType(rawValue: try columns["attestation"].decode(String.self)) else {
            throw StorageError(.corrupt, "stored passkey \(id) cannot be read")
        }
        return PasskeyRecord(
            id: id, tenantId: tenant, userId: user, credentialId: Data(base64Encoded: credential) ?? Data(), publicKey: Data(base64Encoded: key) ?? Data(),
            algorithm: algorithm, signCount: count,
            aaguid: uuid, backupEligible: try columns["backup_eligible"].decode(Bool.self),
            backedUp: try columns["backed_up"].decode(Bool.self), attestation: attestation,
            transports: try columns["transports"].decode(String.self).split(separator: ",").map(String.init),
            displayName: try columns["display_name"].decode(String.self), createdAt: Date(seconds: try columns["created_at"].decode(Double.self)),
            lastUsedAt: try columns["last_used_at"].decode(Double?.self).map(Date.init(seconds:)),
            suspectSince: try columns["suspect_since"].decode(Double?.self).map(Date.init(seconds:)))
    }

    public func insertPasskey(_ passkey: PasskeyRecord, limit: Int, effects: CommittedEffects?) async throws -> Bool {
        try await transaction { db in
            // One registration of a user at a time on every node, so that the count and the insert cannot interleave.
            try await db.query("SELECT pg_advisory_xact_lock(hashtext(\("passkeys/\(passkey.tenantId)/\(passkey.userId)")))")
            let stored =
                !(try await db.query(
                    """
                    INSERT INTO passkeys (\(unescaped: Self.passkeyColumns))
                    SELECT \(passkey.id), \(passkey.tenantId), \(passkey.userId), \(passkey.credentialId.base64EncodedString()),
                           \(passkey.publicKey.base64EncodedString()), \(passkey.algorithm), \(passkey.signCount), \(passkey.aaguid.identifierText),
                           \(passkey.backupEligible), \(passkey.backedUp), \(passkey.attestation.rawValue), \(passkey.transports.joined(separator: ",")),
                           \(passkey.displayName), \(passkey.createdAt.seconds), \(passkey.lastUsedAt?.seconds), \(passkey.suspectSince?.seconds)
                    WHERE (SELECT COUNT(*) FROM passkeys WHERE tenant_id = \(passkey.tenantId) AND user_id = \(passkey.userId)) < \(limit)
                    ON CONFLICT DO NOTHING RETURNING id
                    """
                ).isEmpty)
            if stored { try await Self.commit(effects, revision: 0, db) }
            return stored
        }
    }

    public func passkeys(tenantId: TenantID, userId: ObjectID) async throws -> [PasskeyRecord] {
        try await rows(
            """
            SELECT \(unescaped: Self.passkeyColumns) FROM passkeys WHERE tenant_id = \(tenantId) AND user_id = \(userId)
            ORDER BY created_at, id
            """
        ).map(Self.passkey)
    }

    public func passkey(credentialId: Data) async throws -> PasskeyRecord? {
        try await rows("SELECT \(unescaped: Self.passkeyColumns) FROM passkeys WHERE credential_id = \(credentialId.base64EncodedString())").first
            .map(Self.passkey)
    }

    public func usePasskey(id: RecordID, signCount: Int64, backedUp: Bool, at: Date) async throws -> PasskeyUse {
        // One statement: SET reads the row as it was, and the row lock orders concurrent uses on every node.
        let accepted = "suspect_since IS NULL AND (\(signCount) > sign_count OR (\(signCount) = 0 AND sign_count = 0))"
        let rows = try await rows(
            """
            UPDATE passkeys SET
                sign_count = CASE WHEN \(unescaped: accepted) THEN \(signCount) ELSE sign_count END,
                backed_up = CASE WHEN \(unescaped: accepted) THEN \(backedUp) ELSE backed_up END,
                last_used_at = CASE WHEN \(unescaped: accepted) THEN \(at.seconds) ELSE last_used_at END,
                suspect_since = CASE WHEN \(unescaped: accepted) THEN NULL ELSE COALESCE(suspect_since, \(at.seconds)) END
            WHERE id = \(id) RETURNING suspect_since
            """)
        guard let row = rows.first else { return .unknown }
        return try row.decode(Double?.self) == nil ? .recorded : .refused
    }

    public func renamePasskey(tenantId: TenantID, userId: ObjectID, id: RecordID, displayName: String) async throws -> Bool {
        !(try await rows(
            """
            UPDATE passkeys SET display_name = \(displayName)
            WHERE tenant_id = \(tenantId) AND user_id = \(userId) AND id = \(id) RETURNING id
            """
        ).isEmpty)
    }

    public func clearPasskeySuspicion(tenantId: TenantID, userId: ObjectID, id: RecordID) async throws -> Bool {
        !(try await rows(
            """
            UPDATE passkeys SET suspect_since = NULL
            WHERE tenant_id = \(tenantId) AND user_id = \(userId) AND id = \(id) AND suspect_since IS NOT NULL
            RETURNING id
            """
        ).isEmpty)
    }

    public func deletePasskey(tenantId: TenantID, userId: ObjectID, id: RecordID, effects: CommittedEffects?) async throws -> Bool {
        try await transaction { db in
            let deleted =
                !(try await db.query(
                    """
                    DELETE FROM passkeys WHERE tenant_id = \(tenantId) AND user_id = \(userId) AND id = \(id) RETURNING id
                    """
                ).isEmpty)
            if deleted { try await Self.commit(effects, revision: 0, db) }
            return deleted
        }
    }
}
