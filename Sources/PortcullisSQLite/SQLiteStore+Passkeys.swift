public import Foundation
public import PortcullisCore
public import PortcullisStorage
import SQLiteNIO

extension SQLiteStore {
    static func passkey(from row: StoredRow) throws -> PasskeyRecord {
        func flag(_ name: String) -> Bool { row.column(name)?.integer == 1 }
        let transports = try row.string("transports")
        guard let aaguid = UUID(uuidString: try row.string("aaguid")), let attestation = AttestationType(rawValue: try row.string("attestation")) else {
            throw StorageError(.corrupt, "stored passkey \(try row.string("id")) cannot be read")
        }
        return PasskeyRecord(
            id: try row.id("id"), tenantId: try row.id("tenant_id"), userId: try row.id("user_id"),
            credentialId: Data(base64Encoded: try row.string("credential_id")) ?? Data(),
            publicKey: Data(base64Encoded: try row.string("public_key")) ?? Data(),
            algorithm: row.column("algorithm")?.integer ?? 0, signCount: Int64(row.column("sign_count")?.integer ?? 0), aaguid: aaguid,
            backupEligible: flag("backup_eligible"), backedUp: flag("backed_up"), attestation: attestation,
            transports: transports.isEmpty ? [] : transports.split(separator: ",").map(String.init), displayName: try row.string("display_name"),
            createdAt: try row.date("created_at"), lastUsedAt: row.optionalDate("last_used_at"), suspectSince: row.optionalDate("suspect_since"))
    }

    public func insertPasskey(_ passkey: PasskeyRecord, limit: Int, effects: CommittedEffects?) async throws -> Bool {
        try await transaction { db in
            let stored =
                !(try db.query(
                    """
                    INSERT INTO passkeys (id, tenant_id, user_id, credential_id, public_key, algorithm, sign_count, aaguid, backup_eligible, backed_up,
                                          attestation, transports, display_name, created_at, last_used_at, suspect_since)
                    SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16
                    WHERE (SELECT COUNT(*) FROM passkeys WHERE tenant_id = ?2 AND user_id = ?3) < ?17
                    ON CONFLICT DO NOTHING RETURNING id
                    """,
                    [
                        .id(passkey.id), .id(passkey.tenantId), .id(passkey.userId), .text(passkey.credentialId.base64EncodedString()),
                        .text(passkey.publicKey.base64EncodedString()), .integer(passkey.algorithm), .integer(Int(passkey.signCount)),
                        .text(passkey.aaguid.identifierText),
                        .integer(passkey.backupEligible ? 1 : 0), .integer(passkey.backedUp ? 1 : 0), .text(passkey.attestation.rawValue),
                        .text(passkey.transports.joined(separator: ",")), .text(passkey.displayName), .date(passkey.createdAt),
                        .optionalDate(passkey.lastUsedAt), .optionalDate(passkey.suspectSince), .integer(limit),
                    ]
                ).isEmpty)
            if stored { try Self.commit(effects, revision: 0, db) }
            return stored
        }
    }

    public func passkeys(tenantId: TenantID, userId: ObjectID) async throws -> [PasskeyRecord] {
        try await read(
            "SELECT * FROM passkeys WHERE tenant_id = ? AND user_id = ? ORDER BY created_at, id", [.id(tenantId), .id(userId)]
        ).map(Self.passkey(from:))
    }

    public func passkey(credentialId: Data) async throws -> PasskeyRecord? {
        try await read("SELECT * FROM passkeys WHERE credential_id = ?", [.text(credentialId.base64EncodedString())]).first.map(Self.passkey(from:))
    }

    public func usePasskey(id: RecordID, signCount: Int64, backedUp: Bool, at: Date) async throws -> PasskeyUse {
        // One statement: SET reads the row as it was, so the decision and its effect cannot be split by another use.
        let rows = try await transaction { db in
            try db.query(
                """
                UPDATE passkeys SET
                    sign_count = CASE WHEN suspect_since IS NULL AND (?1 > sign_count OR (?1 = 0 AND sign_count = 0)) THEN ?1 ELSE sign_count END,
                    backed_up = CASE WHEN suspect_since IS NULL AND (?1 > sign_count OR (?1 = 0 AND sign_count = 0)) THEN ?2 ELSE backed_up END,
                    last_used_at = CASE WHEN suspect_since IS NULL AND (?1 > sign_count OR (?1 = 0 AND sign_count = 0)) THEN ?3 ELSE last_used_at END,
                    suspect_since = CASE WHEN suspect_since IS NULL AND (?1 > sign_count OR (?1 = 0 AND sign_count = 0)) THEN NULL
                                         ELSE COALESCE(suspect_since, ?3) END
                WHERE id = ?4 RETURNING suspect_since
                """,
                [.integer(Int(signCount)), .integer(backedUp ? 1 : 0), .date(at), .id(id)])
        }
        guard let row = rows.first else { return .unknown }
        return row.optionalDate("suspect_since") == nil ? .recorded : .refused
    }

    public func renamePasskey(tenantId: TenantID, userId: ObjectID, id: RecordID, displayName: String) async throws -> Bool {
        try await transaction { db in
            !(try db.query(
                "UPDATE passkeys SET display_name = ? WHERE tenant_id = ? AND user_id = ? AND id = ? RETURNING id",
                [.text(displayName), .id(tenantId), .id(userId), .id(id)]
            ).isEmpty)
        }
    }

    public func clearPasskeySuspicion(tenantId: TenantID, userId: ObjectID, id: RecordID) async throws -> Bool {
        try await transaction { db in
            !(try db.query(
                "UPDATE passkeys SET suspect_since = NULL WHERE tenant_id = ? AND user_id = ? AND id = ? AND suspect_since IS NOT NULL RETURNING id",
                [.id(tenantId), .id(userId), .id(id)]
            ).isEmpty)
        }
    }

    public func deletePasskey(tenantId: TenantID, userId: ObjectID, id: RecordID, effects: CommittedEffects?) async throws -> Bool {
        try await transaction { db in
            let deleted =
                !(try db.query(
                    "DELETE FROM passkeys WHERE tenant_id = ? AND user_id = ? AND id = ? RETURNING id",
                    [.id(tenantId), .id(userId), .id(id)]
                ).isEmpty)
            if deleted { try Self.commit(effects, revision: 0, db) }
            return deleted
        }
    }
}
