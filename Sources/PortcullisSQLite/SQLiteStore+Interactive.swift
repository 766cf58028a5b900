public import Foundation
public import PortcullisCore
public import PortcullisStorage
import SQLiteNIO

extension SQLiteStore {
    static func session(from row: StoredRow) throws -> SessionRecord {
        SessionRecord(
            idHash: try row.string("id_hash"), tenantId: try TenantID(row.string("tenant_id")), userId: try ObjectID(row.string("user_id")),
            methods: StoredJSON.methods(from: row.optionalString("methods")), authTime: try row.date("auth_time"),
            createdAt: try row.date("created_at"), lastSeenAt: try row.date("last_seen_at"), expiresAt: try row.date("expires_at"))
    }

    public func insertSession(_ session: SessionRecord, keepingAtMost: Int) async throws {
        try await transaction { db in
            _ = try db.query(
                """
                INSERT INTO sessions (id_hash, tenant_id, user_id, methods, auth_time, created_at, last_seen_at, expires_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    .text(session.idHash), .text(session.tenantId.rawValue), .text(session.userId.rawValue), .text(StoredJSON.text(of: session.methods)),
                    .date(session.authTime), .date(session.createdAt), .date(session.lastSeenAt), .date(session.expiresAt),
                ])
            _ = try db.query(
                """
                DELETE FROM sessions WHERE id_hash IN (
                    SELECT id_hash FROM sessions WHERE tenant_id = ?1 AND user_id = ?2 AND id_hash <> ?3 ORDER BY last_seen_at ASC
                    LIMIT max(0, (SELECT COUNT(*) FROM sessions WHERE tenant_id = ?1 AND user_id = ?2) - ?4))
                """,
                [.text(session.tenantId.rawValue), .text(session.userId.rawValue), .text(session.idHash), .integer(max(1, keepingAtMost))])
        }
    }

    public func session(idHash: String) async throws -> SessionRecord? {
        try await read("SELECT * FROM sessions WHERE id_hash = ?", [.text(idHash)]).first.map(Self.session(from:))
    }

    public func touchSession(idHash: String, at: Date) async throws {
        try await transaction { db in _ = try db.query("UPDATE sessions SET last_seen_at = ? WHERE id_hash = ?", [.date(at), .text(idHash)]) }
    }

    public func upgradeSession(idHash: String, methods: [String], authTime: Date, at: Date) async throws {
        try await transaction { db in
            _ = try db.query(
                "UPDATE sessions SET methods = ?, auth_time = ?, last_seen_at = ? WHERE id_hash = ?",
                [.text(StoredJSON.text(of: methods)), .date(authTime), .date(at), .text(idHash)])
        }
    }

    public func deleteSession(idHash: String) async throws {
        try await transaction { db in _ = try db.query("DELETE FROM sessions WHERE id_hash = ?", [.text(idHash)]) }
    }

    public func deleteSessions(tenantId: TenantID, userId: ObjectID) async throws -> Int {
        try await transaction { db in
            try db.query("DELETE FROM sessions WHERE tenant_id = ? AND user_id = ? RETURNING id_hash", [.id(tenantId), .id(userId)])
                .count
        }
    }

    public func insertAuthorizationCode(_ code: AuthorizationCodeRecord) async throws {
        let request = try StoredJSON.text(of: code.request)
        try await transaction { db in
            _ = try db.query(
                """
                INSERT INTO authorization_codes (code_hash, tenant_id, user_id, request, methods, auth_time, expires_at, silent)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    .text(code.codeHash), .text(code.request.tenantId), .text(code.userId.rawValue), .text(request), .text(StoredJSON.text(of: code.methods)),
                    .date(code.authTime), .date(code.expiresAt), .integer(code.silent ? 1 : 0),
                ])
        }
    }

    static func authorizationCode(from row: StoredRow) throws -> AuthorizationCodeRecord {
        AuthorizationCodeRecord(
            codeHash: try row.string("code_hash"), request: try StoredJSON.authorizationRequest(from: try row.string("request")),
            userId: try ObjectID(row.string("user_id")), methods: StoredJSON.methods(from: row.optionalString("methods")), authTime: try row.date("auth_time"),
            expiresAt: try row.date("expires_at"), usedAt: row.optionalDate("used_at"), familyId: row.optionalString("family_id"),
            accessTokenId: row.optionalString("access_jti"), accessTokenExpiresAt: row.optionalDate("access_expires_at"),
            silent: row.column("silent")?.integer == 1)
    }

    public func authorizationCode(codeHash: String) async throws -> AuthorizationCodeRecord? {
        try await lookup("SELECT * FROM authorization_codes WHERE code_hash = ?", [.text(codeHash)]).first.map(Self.authorizationCode(from:))
    }

    public func redeemAuthorizationCode(
        codeHash: String, at: Date, familyId: String?, accessTokenId: String, accessTokenExpiresAt: Date
    ) async throws -> AuthorizationCodeRecord? {
        try await transaction { db in
            // One writer: the read and the mark are one step for every other redemption.
            guard let row = try db.query("SELECT * FROM authorization_codes WHERE code_hash = ?", [.text(codeHash)]).first else { return nil }
            let before = try Self.authorizationCode(from: row)
            if before.usedAt == nil {
                _ = try db.query(
                    "UPDATE authorization_codes SET used_at = ?, family_id = ?, access_jti = ?, access_expires_at = ? WHERE code_hash = ?",
                    [.date(at), .optionalText(familyId), .text(accessTokenId), .date(accessTokenExpiresAt), .text(codeHash)])
            }
            return before
        }
    }

    static func deviceCode(from row: StoredRow) throws -> DeviceCodeRecord {
        DeviceCodeRecord(
            deviceCodeHash: try row.string("device_code_hash"), userCode: try row.string("user_code"), tenantId: try TenantID(row.string("tenant_id")),
            clientId: try AppID(row.string("client_id")), scope: try row.string("scope"),
            claims: row.optionalString("claims").flatMap { try? ClaimsRequest.parse($0) },
            interval: Int(try row.int("interval_seconds")), expiresAt: try row.date("expires_at"), lastPolledAt: row.optionalDate("last_polled_at"),
            state: DeviceCodeRecord.State(rawValue: try row.string("state")) ?? .denied, userId: row.optionalString("user_id").map { ObjectID($0) },
            methods: StoredJSON.methods(from: row.optionalString("methods")), authTime: row.optionalDate("auth_time"),
            clientAddress: row.optionalString("client_address"))
    }

    public func insertDeviceCode(_ code: DeviceCodeRecord, limits: DeviceCodeLimits, now: Date) async throws -> DeviceCodeQuota? {
        try await transaction { db in
            // One writer: the counts and the insert are one step for every other request.
            func pending(_ condition: String, _ binds: [SQLiteData]) throws -> Int {
                Int(
                    try db.query(
                        "SELECT COUNT(*) AS n FROM device_codes WHERE state = 'pending' AND expires_at > ? AND \(condition)",
                        [.date(now)] + binds
                    ).first?.int("n") ?? 0)
            }
            if try pending("tenant_id = ?", [.text(code.tenantId.rawValue)]) >= limits.perTenant { return .tenant }
            if try pending("tenant_id = ? AND client_id = ?", [.text(code.tenantId.rawValue), .text(code.clientId.rawValue)]) >= limits.perClient {
                return .client
            }
            if let address = code.clientAddress, try pending("client_address = ?", [.text(address)]) >= limits.perAddress { return .address }
            _ = try db.query(
                """
                INSERT INTO device_codes (device_code_hash, user_code, tenant_id, client_id, scope, claims, interval_seconds, expires_at, state, client_address)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?)
                """,
                [
                    .text(code.deviceCodeHash), .text(code.userCode), .text(code.tenantId.rawValue), .text(code.clientId.rawValue), .text(code.scope),
                    .optionalText(code.claims?.text), .integer(code.interval), .date(code.expiresAt), .optionalText(code.clientAddress),
                ])
            return nil
        }
    }

    public func deviceCode(userCode: String) async throws -> DeviceCodeRecord? {
        try await read("SELECT * FROM device_codes WHERE user_code = ?", [.text(userCode)]).first.map(Self.deviceCode(from:))
    }

    public func pollDeviceCode(deviceCodeHash: String, at: Date) async throws -> DevicePoll? {
        try await transaction { db in
            guard let row = try db.query("SELECT * FROM device_codes WHERE device_code_hash = ?", [.text(deviceCodeHash)]).first else { return nil }
            let record = try Self.deviceCode(from: row)
            _ = try db.query("UPDATE device_codes SET last_polled_at = ? WHERE device_code_hash = ?", [.date(at), .text(deviceCodeHash)])
            let tooFast = record.lastPolledAt.map { at.timeIntervalSince($0) < Double(record.interval) } ?? false
            return DevicePoll(record: record, tooFast: tooFast)
        }
    }

    public func decideDeviceCode(userCode: String, approve: Bool, userId: ObjectID?, methods: [String], authTime: Date?, now: Date) async throws -> Bool {
        try await transaction { db in
            !(try db.query(
                """
                UPDATE device_codes SET state = ?, user_id = ?, methods = ?, auth_time = ?
                WHERE user_code = ? AND state = 'pending' AND expires_at > ? RETURNING user_code
                """,
                [
                    .text(approve ? "approved" : "denied"), (userId.map { .id($0) } ?? .null), .text(StoredJSON.text(of: methods)),
                    .optionalDate(authTime), .text(userCode), .date(now),
                ]
            ).isEmpty)
        }
    }

    public func consumeDeviceCode(deviceCodeHash: String) async throws -> Bool {
        try await transaction { db in
            !(try db.query(
                "UPDATE device_codes SET state = 'consumed' WHERE device_code_hash = ? AND state = 'approved' RETURNING user_code",
                [.text(deviceCodeHash)]
            ).isEmpty)
        }
    }

    public func pendingDeviceCodes(tenantId: String, now: Date) async throws -> Int {
        Int(
            try await read(
                "SELECT COUNT(*) AS n FROM device_codes WHERE tenant_id = ? AND state = 'pending' AND expires_at > ?",
                [.text(tenantId), .date(now)]
            ).first?.int("n") ?? 0)
    }

    public func purgeInteractive(before: Date) async throws -> Int {
        try await transaction { db in
            var removed = try db.query("DELETE FROM sessions WHERE expires_at < ? RETURNING id_hash", [.date(before)]).count
            // Codes are kept a day past their expiry so that a late replay is still recognised (and revokes).
            removed += try db.query(
                "DELETE FROM authorization_codes WHERE expires_at < ? RETURNING code_hash", [.date(before.addingTimeInterval(-86400))]
            ).count
            removed += try db.query("DELETE FROM device_codes WHERE expires_at < ? RETURNING user_code", [.date(before)]).count
            return removed
        }
    }
}
