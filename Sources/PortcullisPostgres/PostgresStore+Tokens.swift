public import Foundation
public import PortcullisCore
import PortcullisStorage
import PostgresNIO
import Synchronization

extension PostgresStore {
    static func insertToken(_ record: RefreshTokenRecord, _ db: Statements) async throws {
        try await db.query(
            """
            INSERT INTO refresh_tokens (token_hash, family_id, tenant_id, user_id, client_id, scope, issued_at, expires_at, used_at)
            VALUES (\(record.tokenHash), \(record.familyId), \(record.tenantId), \(record.userId), \(record.clientId), \(record.scope),
                    \(record.issuedAt.seconds), \(record.expiresAt.seconds), NULL)
            """)
    }

    public func insert(_ record: RefreshTokenRecord) async throws {
        try await transaction { db in
            try await db.query(
                """
                INSERT INTO refresh_token_families (
                    family_id, tenant_id, user_id, client_id, created_at, revoked_at, methods, auth_time, dpop_jkt, transfer_method, device_id, device_thumbprint
                ) VALUES (\(record.familyId), \(record.tenantId), \(record.userId), \(record.clientId), \(record.issuedAt.seconds), NULL,
                        \(StoredJSON.text(of: record.methods)), \(record.authTime.seconds), \(record.dpopThumbprint), \(record.transferMethod?.rawValue),
                        \(record.device?.objectId.rawValue), \(record.device?.thumbprint))
                ON CONFLICT (family_id) DO NOTHING
                """)
            try await Self.insertToken(record, db)
        }
    }

    public func find(tokenHash: String) async throws -> RefreshTokenRecord? {
        try await rows(
            """
            SELECT t.token_hash, t.family_id, t.tenant_id, t.user_id, t.client_id, t.scope, t.issued_at, t.expires_at, t.used_at, f.revoked_at,
                   f.methods, f.auth_time, f.dpop_jkt, f.transfer_method, f.device_id, f.device_thumbprint
            FROM refresh_tokens t JOIN refresh_token_families f ON f.family_id = t.family_id WHERE t.token_hash = \(tokenHash)
            """
        ).first.map { row in
            let (hash, family, tenant, user, client, scope, issued, expires, used, revoked, methods, authTime, jkt, transfer, deviceId, thumbprint) =
                try row.decode(
                    (String, String, String, String, String, String, Double, Double, Double?, Double?, String?, Double?, String?, String?, String?, String?)
                        .self)
            return RefreshTokenRecord(
                tokenHash: hash, familyId: family, tenantId: TenantID(tenant), userId: ObjectID(user), clientId: AppID(client), scope: scope,
                issuedAt: Date(seconds: issued),
                expiresAt: Date(seconds: expires), usedAt: used.map(Date.init(seconds:)), familyRevokedAt: revoked.map(Date.init(seconds:)),
                methods: StoredJSON.methods(from: methods), authTime: authTime.map(Date.init(seconds:)), dpopThumbprint: jkt,
                transferMethod: transfer.flatMap(TransferMethod.init), device: ProvenDevice(objectId: deviceId, thumbprint: thumbprint))
        }
    }

    public func rotate(oldHash: String, usedAt: Date, successor: RefreshTokenRecord) async throws -> Bool {
        // A timeout, or a connection that dies after COMMIT was sent, leaves the rotation in doubt: it is then
        // settled in the background (a late commit undone); see RotationsInDoubt.
        try await transaction(inDoubt: (oldHash, { try await self.undoRotation(oldHash: oldHash, usedAt: usedAt, successorHash: successor.tokenHash) })) { db in
            let consumed = try await db.query(
                """
                UPDATE refresh_tokens SET used_at = \(usedAt.seconds)
                WHERE token_hash = \(oldHash) AND used_at IS NULL
                  AND EXISTS (SELECT 1 FROM refresh_token_families f WHERE f.family_id = refresh_tokens.family_id AND f.revoked_at IS NULL)
                RETURNING family_id
                """)
            guard let family = try consumed.first?.decode(String.self), family == successor.familyId else { return false }
            try await Self.insertToken(successor, db)
            if let jkt = successor.dpopThumbprint {
                try await db.query("UPDATE refresh_token_families SET dpop_jkt = \(jkt) WHERE family_id = \(family) AND dpop_jkt IS NULL")
            }
            return true
        }
    }

    /// Undoes a rotation whose client never received the successor.
    func undoRotation(oldHash: String, usedAt: Date, successorHash: String) async throws {
        try await transaction { db in
            let removed = try await db.query("DELETE FROM refresh_tokens WHERE token_hash = \(successorHash) AND used_at IS NULL RETURNING token_hash")
            if !removed.isEmpty {
                try await db.query("UPDATE refresh_tokens SET used_at = NULL WHERE token_hash = \(oldHash) AND used_at = \(usedAt.seconds)")
            }
        }
    }

    public func isRotationInDoubt(tokenHash: String) -> Bool { rotationsInDoubt.contains(tokenHash) }

    public func rotationMayBeInDoubt(_ record: RefreshTokenRecord) async throws -> Bool {
        guard let usedAt = record.usedAt else { return false }
        if rotationsInDoubt.contains(record.tokenHash) { return true }
        guard rotationsInDoubt.recentOutage else { return false }
        return try await rows("SELECT 1 FROM refresh_tokens WHERE family_id = \(record.familyId) AND used_at > \(usedAt.seconds) LIMIT 1").isEmpty
    }

    public func revokeFamily(familyId: String, at: Date) async throws {
        _ = try await rows(
            "UPDATE refresh_token_families SET revoked_at = \(at.seconds) WHERE family_id = \(familyId) AND revoked_at IS NULL RETURNING family_id")
    }

    public func revokeFamilies(tenantId: TenantID, userId: ObjectID, clientId: AppID, at: Date) async throws -> Int {
        try await rows(
            """
            UPDATE refresh_token_families SET revoked_at = \(at.seconds)
            WHERE tenant_id = \(tenantId) AND user_id = \(userId) AND client_id = \(clientId) AND revoked_at IS NULL RETURNING family_id
            """
        ).count
    }

    public func revokeAllFamilies(tenantId: TenantID, userId: ObjectID, at: Date) async throws -> Int {
        try await rows(
            """
            UPDATE refresh_token_families SET revoked_at = \(at.seconds)
            WHERE tenant_id = \(tenantId) AND user_id = \(userId) AND revoked_at IS NULL RETURNING family_id
            """
        ).count
    }

    public func purgeExpired(before: Date) async throws -> Int {
        try await transaction { db in
            let tokens = try await db.query("DELETE FROM refresh_tokens WHERE expires_at < \(before.seconds) RETURNING token_hash").count
            try await db.query("DELETE FROM refresh_token_families f WHERE NOT EXISTS (SELECT 1 FROM refresh_tokens t WHERE t.family_id = f.family_id)")
            try await db.query("DELETE FROM revoked_access_tokens WHERE expires_at < \(before.seconds)")
            try await db.query("DELETE FROM access_voids WHERE expires_at < \(before.seconds)")
            try await db.query("DELETE FROM dpop_proofs WHERE expires_at < \(before.seconds)")
            return tokens
        }
    }

    public func revokeAccessToken(jti: String, expiresAt: Date) async throws {
        _ = try await rows(
            "INSERT INTO revoked_access_tokens (jti, expires_at) VALUES (\(jti), \(expiresAt.seconds)) ON CONFLICT (jti) DO NOTHING RETURNING jti")
    }

    public func isAccessTokenRevoked(jti: String) async throws -> Bool {
        !(try await rows("SELECT 1 FROM revoked_access_tokens WHERE jti = \(jti)").isEmpty)
    }

    /// Claims that arrive while one statement is in flight go together in the next (`ProofClaims`): one round trip for
    /// many proofs (a statement per proof measured as almost the whole cost of a DPoP grant on this store).
    public func claimProof(key: String, expiresAt: Date, now: Date) async throws -> Bool {
        try await proofClaims.claim(key: key, expiresAt: expiresAt) { batch in
            let keys = batch.map(\.key)
            let expiries = batch.map(\.expiresAt.seconds)
            let inserted = try await self.rows(
                """
                INSERT INTO dpop_proofs (proof_key, expires_at) SELECT k, e FROM UNNEST(\(keys)::text[], \(expiries)::float8[]) AS batch(k, e)
                ON CONFLICT (proof_key) DO NOTHING RETURNING proof_key
                """)
            return Set(try inserted.map { try $0.decode(String.self) })
        }
    }
}

extension PostgresStore {
    public func isProofClaimed(key: String, now: Date) async throws -> Bool {
        try await !rows("SELECT 1 FROM dpop_proofs WHERE proof_key = \(key) AND expires_at > \(now.seconds)").isEmpty
    }
}

/// DPoP claims gathered into one statement: the first claim goes at once; those that arrive while a statement is in flight
/// wait for the next, which takes them all (up to 500). Within a batch the first claim of a key wins and any other is a
/// replay; a failed statement fails every claim in it (the callers answer "unavailable").
final class ProofClaims: Sendable {
    private struct Waiter {
        let key: String
        let expiresAt: Date
        let continuation: CheckedContinuation<Bool, any Error>
    }

    private struct State {
        var pending: [Waiter] = []
        var flushing = false
    }

    static let maximumBatch = 500
    private let state = Mutex(State())

    /// `insert` writes the batch's (distinct) keys and answers those that were new.
    func claim(
        key: String, expiresAt: Date, insert: @escaping @Sendable ([(key: String, expiresAt: Date)]) async throws -> Set<String>
    ) async throws -> Bool {
        try await withCheckedThrowingContinuation { continuation in
            let start = state.withLock { state -> Bool in
                state.pending.append(Waiter(key: key, expiresAt: expiresAt, continuation: continuation))
                if state.flushing { return false }
                state.flushing = true
                return true
            }
            if start { Task { await self.flush(insert) } }
        }
    }

    private func flush(_ insert: @Sendable ([(key: String, expiresAt: Date)]) async throws -> Set<String>) async {
        while true {
            let batch = state.withLock { state -> [Waiter] in
                guard !state.pending.isEmpty else {
                    state.flushing = false
                    return []
                }
                let batch = Array(state.pending.prefix(Self.maximumBatch))
                state.pending.removeFirst(batch.count)
                return batch
            }
            if batch.isEmpty { return }
            var first: [String: Int] = [:]
            var distinct: [(key: String, expiresAt: Date)] = []
            for (index, waiter) in batch.enumerated() where first[waiter.key] == nil {
                first[waiter.key] = index
                distinct.append((waiter.key, waiter.expiresAt))
            }
            do {
                let inserted = try await insert(distinct)
                for (index, waiter) in batch.enumerated() { waiter.continuation.resume(returning: first[waiter.key] == index && inserted.contains(waiter.key)) }
            } catch {
                for waiter in batch { waiter.continuation.resume(throwing: error) }
            }
        }
    }
}

extension PostgresStore {
    /// Writes a batch with a few statements whatever its size (like the SQLite store's multi-row inserts): the records as
    /// parallel arrays through `UNNEST`, then their policy index the same way; the aggregates through one `UNNEST`
    /// insert that adds to each window's stored aggregate (`ON CONFLICT … DO UPDATE`), telling new rows from grown ones.
    public func appendSignIns(_ entries: [SignInAggregation.Entry]) async throws {
        guard !entries.isEmpty else { return }
        let records = entries.records
        let aggregates = entries.aggregates
        let all = records + aggregates.map(\.first)
        // Each new row's cursor follows its place in the batch (an aggregate that grows a stored one leaves its unused).
        var recordPositions: [Int] = []
        var aggregatePositions: [Int] = []
        for (position, entry) in entries.enumerated() {
            if case .record = entry { recordPositions.append(position) } else { aggregatePositions.append(position) }
        }
        let ranks = recordPositions + aggregatePositions
        let documents = try all.map { try StoredJSON.compactText(of: $0) }
        let sizes = documents.map { Int64($0.utf8.count + StoredJSON.signInRowOverhead) }
        let policies = all.map { Array(SignInAggregation.compacted($0).appliedConditionalAccessPolicies.map(\.id)).uniqued() }
        let individual = records.count
        try await transaction { db in
            // Cursors from the sequence, handed out in the batch's order.
            let reserved = try await db.query(
                "SELECT nextval(pg_get_serial_sequence('sign_ins', 'cursor')) FROM generate_series(1, \(Int64(all.count)))"
            ).map { try $0.decode(Int64.self) }.sorted()
            let cursors = ranks.map { reserved[$0] }
            var cursorAt: [Int: Int64] = [:]  // index in `all` → cursor of a row stored now
            if individual > 0 {
                let slice = all[..<individual]
                let inserted = try await db.query(
                    """
                    INSERT INTO sign_ins (cursor, id, tenant_id, created_at, correlation_id, user_id, client_app_id, resource_app_id, status, record, size)
                    SELECT n, i, t, c, r, NULLIF(u, ''), a, s, st, d, z
                    FROM UNNEST(\(Array(cursors[..<individual]))::int8[], \(slice.map(\.id))::text[], \(slice.map(\.tenantId.rawValue))::text[], \(slice.map(\.createdDateTime.seconds))::float8[],
                                \(slice.map(\.correlationId))::text[], \(slice.map { $0.userId?.rawValue ?? "" })::text[], \(slice.map(\.clientAppId.rawValue))::text[],
                                \(slice.map(\.resourceAppId.rawValue))::text[], \(slice.map(\.conditionalAccessStatus.rawValue))::text[],
                                \(Array(documents[..<individual]))::text[], \(Array(sizes[..<individual]))::int8[])
                         AS batch(n, i, t, c, r, u, a, s, st, d, z)
                    RETURNING cursor, id
                    """)
                var cursorById: [String: Int64] = [:]
                for row in inserted {
                    let (cursor, id) = try row.decode((Int64, String).self)
                    cursorById[id] = cursor
                }
                for index in 0..<individual { cursorAt[index] = cursorById[all[index].id] }
            }
            var added = sizes[..<individual].reduce(0, +)
            if !aggregates.isEmpty {
                let rows = try await db.query(
                    """
                    INSERT INTO sign_ins (cursor, id, tenant_id, created_at, correlation_id, user_id, client_app_id, resource_app_id, status, record,
                                          size, count, last_at, last_correlation_id, aggregate_key, window_start)
                    SELECT n, i, t, c, r, NULLIF(u, ''), a, s, st, d, z, k, l, lc, ak, w
                    FROM UNNEST(\(Array(cursors[individual...]))::int8[], \(aggregates.map(\.first.id))::text[], \(aggregates.map(\.first.tenantId.rawValue))::text[],
                                \(aggregates.map(\.first.createdDateTime.seconds))::float8[], \(aggregates.map(\.first.correlationId))::text[],
                                \(aggregates.map { $0.first.userId?.rawValue ?? "" })::text[], \(aggregates.map(\.first.clientAppId.rawValue))::text[],
                                \(aggregates.map(\.first.resourceAppId.rawValue))::text[], \(aggregates.map(\.first.conditionalAccessStatus.rawValue))::text[],
                                \(Array(documents[individual...]))::text[], \(Array(sizes[individual...]))::int8[],
                                \(aggregates.map { Int64($0.count) })::int8[], \(aggregates.map(\.lastDateTime.seconds))::float8[],
                                \(aggregates.map(\.lastCorrelationId))::text[], \(aggregates.map(\.key))::text[],
                                \(aggregates.map(\.windowStart.seconds))::float8[])
                         AS batch(n, i, t, c, r, u, a, s, st, d, z, k, l, lc, ak, w)
                    ON CONFLICT (tenant_id, aggregate_key, window_start) WHERE aggregate_key IS NOT NULL DO UPDATE SET
                        count = sign_ins.count + excluded.count,
                        last_correlation_id = CASE WHEN excluded.last_at >= sign_ins.last_at THEN excluded.last_correlation_id
                                                   ELSE sign_ins.last_correlation_id END,
                        last_at = GREATEST(sign_ins.last_at, excluded.last_at)
                    RETURNING cursor, aggregate_key, window_start, (xmax = 0) AS inserted
                    """)
                var index: [String: Int] = [:]
                for (offset, aggregate) in aggregates.enumerated() { index["\(aggregate.key)|\(aggregate.windowStart.seconds)"] = individual + offset }
                for row in rows {
                    let (cursor, key, window, inserted) = try row.decode((Int64, String, Double, Bool).self)
                    guard inserted, let at = index["\(key)|\(window)"] else { continue }
                    cursorAt[at] = cursor
                    added += sizes[at]
                }
            }
            var indexed: [Int64] = []
            var policyIds: [String] = []
            for (index, cursor) in cursorAt {
                for policy in policies[index] {
                    indexed.append(cursor)
                    policyIds.append(policy)
                }
            }
            if !indexed.isEmpty {
                try await db.query(
                    "INSERT INTO sign_in_policies (cursor, policy_id) SELECT * FROM UNNEST(\(indexed)::bigint[], \(policyIds)::text[]) ON CONFLICT DO NOTHING")
            }
            if added > 0 { try await db.query("UPDATE sign_in_usage SET bytes = bytes + \(added) WHERE id = 1") }
        }
    }

    public func signIns(_ query: SignInQuery) async throws -> [(cursor: Int64, record: SignInRecord)] {
        var conditions = Conditions()
        conditions.add(query.tenantId) { "s.tenant_id = \($0)" }
        conditions.add(query.before ?? Int64.max) { "s.cursor < \($0)" }
        if let user = query.userId { conditions.add(user) { "s.user_id = \($0)" } }
        if let app = query.clientAppId { conditions.add(app) { "s.client_app_id = \($0)" } }
        if let resource = query.resourceAppId { conditions.add(resource) { "s.resource_app_id = \($0)" } }
        if let status = query.status { conditions.add(status.rawValue) { "s.status = \($0)" } }
        if let correlation = query.correlationId { conditions.add(correlation) { "(s.correlation_id = \($0) OR s.last_correlation_id = \($0))" } }
        if let from = query.from { conditions.add(from.seconds) { "COALESCE(s.last_at, s.created_at) >= \($0)" } }
        if let to = query.to { conditions.add(to.seconds) { "s.created_at < \($0)" } }
        if let policy = query.policyId { conditions.add(policy) { "s.cursor IN (SELECT cursor FROM sign_in_policies WHERE policy_id = \($0))" } }
        let limit = conditions.bind(max(1, min(query.limit, 1000)))
        let sql = """
            SELECT s.cursor, s.id, s.tenant_id, s.created_at, s.correlation_id, s.user_id, s.client_app_id, s.resource_app_id, s.status, s.record,
                   s.count, s.last_at, s.last_correlation_id
            FROM sign_ins s WHERE \(conditions.sql) ORDER BY s.cursor DESC LIMIT \(limit)
            """
        return try await rows(PostgresQuery(unsafeSQL: sql, binds: conditions.binds)).map { row in
            let (cursor, id, tenant, created, correlation, user, client, resource, status, json, count, lastAt, lastCorrelation) = try row.decode(
                (Int64, String, String, Double, String, String?, String, String, String, String, Int32?, Double?, String?).self)
            let columns = StoredJSON.SignInColumns(
                id: id, tenantId: tenant, createdAt: Date(seconds: created), correlationId: correlation, userId: user, clientAppId: client,
                resourceAppId: resource, status: status, count: count.map(Int.init), lastAt: lastAt.map(Date.init(seconds:)),
                lastCorrelationId: lastCorrelation)
            return (cursor, try StoredJSON.signIn(from: json, columns: columns))
        }
    }

    public func purgeSignIns(before: Date) async throws -> Int {
        try await transaction { db in
            // An aggregate goes when its last sign-in is older than `before` (its first one always is, then).
            let deleted = try await db.query(
                "DELETE FROM sign_ins WHERE created_at < \(before.seconds) AND (last_at IS NULL OR last_at < \(before.seconds)) RETURNING size")
            try await Self.subtract(deleted, db)
            return deleted.count
        }
    }

    public func signInBytes() async throws -> Int64 {
        try await rows("SELECT bytes FROM sign_in_usage WHERE id = 1").first?.decode(Int64.self) ?? 0
    }

    public func trimSignIns(toBytes bytes: Int64, limit: Int) async throws -> Int {
        try await transaction { db in
            guard let used = try await db.query("SELECT bytes FROM sign_in_usage WHERE id = 1 FOR UPDATE").first?.decode(Int64.self), used > bytes
            else { return 0 }
            // The oldest first (cursor order), up to the first row that brings the log under the bound, at most `limit`.
            let oldest = try await db.query("SELECT cursor, size FROM sign_ins ORDER BY cursor LIMIT \(Int64(max(1, limit)))")
            var freed: Int64 = 0
            var last: Int64?
            for row in oldest {
                let (cursor, size) = try row.decode((Int64, Int32).self)
                freed += Int64(size)
                last = cursor
                if used - freed <= bytes { break }
            }
            guard let last else { return 0 }
            let deleted = try await db.query("DELETE FROM sign_ins WHERE cursor <= \(last) RETURNING size")
            try await Self.subtract(deleted, db)
            return deleted.count
        }
    }

    static func subtract(_ deleted: [PostgresRow], _ db: Statements) async throws {
        var freed: Int64 = 0
        for row in deleted { freed += Int64(try row.decode(Int32.self)) }
        if freed > 0 { try await db.query("UPDATE sign_in_usage SET bytes = GREATEST(0, bytes - \(freed)) WHERE id = 1") }
    }
}

extension Array where Element: Hashable {
    /// The elements in order, each once.
    func uniqued() -> [Element] {
        var seen = Set<Element>()
        return filter { seen.insert($0).inserted }
    }
}
