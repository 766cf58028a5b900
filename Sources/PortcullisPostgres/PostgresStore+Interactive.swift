public import Foundation
public import PortcullisCore
public import PortcullisStorage
import PostgresNIO

extension PostgresStore {
    static let sessionColumns = "id_hash, tenant_id, user_id, methods, auth_time, created_at, last_seen_at, expires_at"

    static func session(_ row: PostgresRow) throws -> SessionRecord {
        let (id, tenant, user, methods, authTime, created, seen, expires) = try row.decode(
            (String, String, String, String, Double, Double, Double, Double).self)
        return SessionRecord(
            idHash: id, tenantId: TenantID(tenant), userId: ObjectID(user), methods: StoredJSON.methods(from: methods), authTime: Date(seconds: authTime),
            createdAt: Date(seconds: created), lastSeenAt: Date(seconds: seen), expiresAt: Date(seconds: expires))
    }

    public func insertSession(_ session: SessionRecord, keepingAtMost: Int) async throws {
        try await transaction { db in
            try await db.query(
                """
                INSERT INTO sessions (\(unescaped: Self.sessionColumns))
                VALUES (\(session.idHash), \(session.tenantId), \(session.userId), \(StoredJSON.text(of: session.methods)), \(session.authTime.seconds),
                        \(session.createdAt.seconds), \(session.lastSeenAt.seconds), \(session.expiresAt.seconds))
                """)
            try await db.query(
                """
                DELETE FROM sessions WHERE id_hash IN (
                    SELECT id_hash FROM sessions WHERE tenant_id = \(session.tenantId) AND user_id = \(session.userId) AND id_hash <> \(session.idHash)
                    ORDER BY last_seen_at ASC
                    LIMIT GREATEST(0, (SELECT count(*) FROM sessions WHERE tenant_id = \(session.tenantId) AND user_id = \(session.userId)) - \(max(1, keepingAtMost))))
                """)
        }
    }

    public func session(idHash: String) async throws -> SessionRecord? {
        try await rows("SELECT \(unescaped: Self.sessionColumns) FROM sessions WHERE id_hash = \(idHash)").first.map(Self.session)
    }

    public func touchSession(idHash: String, at: Date) async throws {
        _ = try await rows("UPDATE sessions SET last_seen_at = \(at.seconds) WHERE id_hash = \(idHash) RETURNING id_hash")
    }

    public func upgradeSession(idHash: String, methods: [String], authTime: Date, at: Date) async throws {
        _ = try await rows(
            """
            UPDATE sessions SET methods = \(StoredJSON.text(of: methods)), auth_time = \(authTime.seconds), last_seen_at = \(at.seconds)
            WHERE id_hash = \(idHash) RETURNING id_hash
            """)
    }

    public func deleteSession(idHash: String) async throws {
        _ = try await rows("DELETE FROM sessions WHERE id_hash = \(idHash) RETURNING id_hash")
    }

    public func deleteSessions(tenantId: TenantID, userId: ObjectID) async throws -> Int {
        try await rows("DELETE FROM sessions WHERE tenant_id = \(tenantId) AND user_id = \(userId) RETURNING id_hash").count
    }

    static let codeColumns = "code_hash, user_id, request, methods, auth_time, expires_at, used_at, family_id, access_jti, access_expires_at, silent"

    static func authorizationCode(_ row: PostgresRow) throws -> AuthorizationCodeRecord {
        let (hash, user, request, methods, authTime, expires, used, family, jti, accessExpires, silent) =
            try row.decode((String, String, String, String, Double, Double, Double?, String?, String?, Double?, Bool).self)
        return AuthorizationCodeRecord(
            codeHash: hash, request: try StoredJSON.authorizationRequest(from: request), userId: ObjectID(user), methods: StoredJSON.methods(from: methods),
            authTime: Date(seconds: authTime), expiresAt: Date(seconds: expires), usedAt: used.map(Date.init(seconds:)), familyId: family,
            accessTokenId: jti, accessTokenExpiresAt: accessExpires.map(Date.init(seconds:)), silent: silent)
    }

    public func insertAuthorizationCode(_ code: AuthorizationCodeRecord) async throws {
        let request = try StoredJSON.text(of: code.request)
        _ = try await rows(
            """
            INSERT INTO authorization_codes (code_hash, tenant_id, user_id, request, methods, auth_time, expires_at, silent)
            VALUES (\(code.codeHash), \(code.request.tenantId), \(code.userId), \(request), \(StoredJSON.text(of: code.methods)),
                    \(code.authTime.seconds), \(code.expiresAt.seconds), \(code.silent))
            RETURNING code_hash
            """)
    }

    public func authorizationCode(codeHash: String) async throws -> AuthorizationCodeRecord? {
        try await rows("SELECT \(unescaped: Self.codeColumns) FROM authorization_codes WHERE code_hash = \(codeHash)").first.map(Self.authorizationCode)
    }

    public func redeemAuthorizationCode(
        codeHash: String, at: Date, familyId: String?, accessTokenId: String, accessTokenExpiresAt: Date
    ) async throws -> AuthorizationCodeRecord? {
        try await transaction { db in
            // The row lock makes the read and the mark one step for every other redemption, on every node.
            guard let row = try await db.query("SELECT \(unescaped: Self.codeColumns) FROM authorization_codes WHERE code_hash = \(codeHash) FOR UPDATE").first
            else { return nil }
            let before = try Self.authorizationCode(row)
            if before.usedAt == nil {
                try await db.query(
                    """
                    UPDATE authorization_codes SET used_at = \(at.seconds), family_id = \(familyId), access_jti = \(accessTokenId),
                        access_expires_at = \(accessTokenExpiresAt.seconds)
                    WHERE code_hash = \(codeHash)
                    """)
            }
            return before
        }
    }

    static let deviceColumns =
        "device_code_hash, user_code, tenant_id, client_id, scope, claims, interval_seconds, expires_at, last_polled_at, state, user_id, methods, auth_time, client_address"

    static func deviceCode(_ row: PostgresRow) throws -> DeviceCodeRecord {
        let (hash, userCode, tenant, client, scope, claims, interval, expires, polled, state, user, methods, authTime, address) =
            try row.decode((String, String, String, String, String, String?, Int, Double, Double?, String, String?, String?, Double?, String?).self)
        return DeviceCodeRecord(
            deviceCodeHash: hash, userCode: userCode, tenantId: TenantID(tenant), clientId: AppID(client), scope: scope,
            claims: claims.flatMap { try? ClaimsRequest.parse($0) },
            interval: interval,
            expiresAt: Date(seconds: expires), lastPolledAt: polled.map(Date.init(seconds:)), state: DeviceCodeRecord.State(rawValue: state) ?? .denied,
            userId: user.map { ObjectID($0) }, methods: StoredJSON.methods(from: methods), authTime: authTime.map(Date.init(seconds:)), clientAddress: address)
    }

    public func insertDeviceCode(_ code: DeviceCodeRecord, limits: DeviceCodeLimits, now: Date) async throws -> DeviceCodeQuota? {
        try await transaction { db in
            // Every node's inserts for this tenant queue on one lock, so the counts below and the insert are one step.
            try await db.query("SELECT pg_advisory_xact_lock(hashtext(\("device-codes:" + code.tenantId.rawValue)))")
            let count = { (rows: [PostgresRow]) throws -> Int in try rows.first?.decode(Int.self) ?? 0 }
            if try count(
                try await db.query(
                    """
                    SELECT count(*) FROM device_codes WHERE state = 'pending' AND expires_at > \(now.seconds) AND tenant_id = \(code.tenantId)
                    """)) >= limits.perTenant
            {
                return .tenant
            }
            if try count(
                try await db.query(
                    """
                    SELECT count(*) FROM device_codes WHERE state = 'pending' AND expires_at > \(now.seconds) AND tenant_id = \(code.tenantId) AND client_id = \(code.clientId)
                    """)) >= limits.perClient
            {
                return .client
            }
            if let address = code.clientAddress {
                // An address asks in several tenants: its own lock, taken after the tenant's (always in that order).
                try await db.query("SELECT pg_advisory_xact_lock(hashtext(\("device-codes-address:" + address)))")
                if try count(
                    try await db.query(
                        """
                        SELECT count(*) FROM device_codes WHERE state = 'pending' AND expires_at > \(now.seconds) AND client_address = \(address)
                        """)) >= limits.perAddress
                {
                    return .address
                }
            }
            try await db.query(
                """
                INSERT INTO device_codes (device_code_hash, user_code, tenant_id, client_id, scope, claims, interval_seconds, expires_at, state, client_address)
                VALUES (\(code.deviceCodeHash), \(code.userCode), \(code.tenantId), \(code.clientId), \(code.scope), \(code.claims?.text), \(code.interval),
                        \(code.expiresAt.seconds), 'pending', \(code.clientAddress))
                """)
            return nil
        }
    }

    public func deviceCode(userCode: String) async throws -> DeviceCodeRecord? {
        try await rows("SELECT \(unescaped: Self.deviceColumns) FROM device_codes WHERE user_code = \(userCode)").first.map(Self.deviceCode)
    }

    public func pollDeviceCode(deviceCodeHash: String, at: Date) async throws -> DevicePoll? {
        try await transaction { db in
            guard
                let row = try await db.query("SELECT \(unescaped: Self.deviceColumns) FROM device_codes WHERE device_code_hash = \(deviceCodeHash) FOR UPDATE")
                    .first
            else { return nil }
            let record = try Self.deviceCode(row)
            try await db.query("UPDATE device_codes SET last_polled_at = \(at.seconds) WHERE device_code_hash = \(deviceCodeHash)")
            return DevicePoll(record: record, tooFast: record.lastPolledAt.map { at.timeIntervalSince($0) < Double(record.interval) } ?? false)
        }
    }

    public func decideDeviceCode(userCode: String, approve: Bool, userId: ObjectID?, methods: [String], authTime: Date?, now: Date) async throws -> Bool {
        !(try await rows(
            """
            UPDATE device_codes SET state = \(approve ? "approved" : "denied"), user_id = \(userId), methods = \(StoredJSON.text(of: methods)),
                auth_time = \(authTime.seconds)
            WHERE user_code = \(userCode) AND state = 'pending' AND expires_at > \(now.seconds) RETURNING user_code
            """
        ).isEmpty)
    }

    public func consumeDeviceCode(deviceCodeHash: String) async throws -> Bool {
        !(try await rows("UPDATE device_codes SET state = 'consumed' WHERE device_code_hash = \(deviceCodeHash) AND state = 'approved' RETURNING user_code")
            .isEmpty)
    }

    public func pendingDeviceCodes(tenantId: String, now: Date) async throws -> Int {
        try await rows("SELECT count(*) FROM device_codes WHERE tenant_id = \(tenantId) AND state = 'pending' AND expires_at > \(now.seconds)")
            .first?.decode(Int.self) ?? 0
    }

    public func purgeInteractive(before: Date) async throws -> Int {
        try await transaction { db in
            var removed = try await db.query("DELETE FROM sessions WHERE expires_at < \(before.seconds) RETURNING id_hash").count
            removed += try await db.query("DELETE FROM authorization_codes WHERE expires_at < \(before.addingTimeInterval(-86400).seconds) RETURNING code_hash")
                .count
            removed += try await db.query("DELETE FROM device_codes WHERE expires_at < \(before.seconds) RETURNING user_code").count
            return removed
        }
    }
}
