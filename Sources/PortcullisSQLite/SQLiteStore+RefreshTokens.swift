public import Foundation
import Logging
public import PortcullisCore
import PortcullisStorage
import SQLiteNIO
import Synchronization

extension SQLiteStore {
    private static let insertToken = """
        INSERT INTO refresh_tokens (token_hash, family_id, tenant_id, user_id, client_id, scope, issued_at, expires_at, used_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL)
        """

    private static func binds(_ record: RefreshTokenRecord) -> [SQLiteData] {
        [
            .text(record.tokenHash), .text(record.familyId), .id(record.tenantId), .id(record.userId),
            .id(record.clientId), .text(record.scope), .date(record.issuedAt), .date(record.expiresAt),
        ]
    }

    public func insert(_ record: RefreshTokenRecord) async throws {
        try await transaction { db in
            _ = try db.query(
                """
                INSERT INTO refresh_token_families (
                    family_id, tenant_id, user_id, client_id, created_at, revoked_at, methods, auth_time, dpop_jkt, transfer_method, device_id, device_thumbprint
                ) VALUES (?, ?, ?, ?, ?, NULL, ?, ?, ?, ?, ?, ?) ON CONFLICT (family_id) DO NOTHING
                """,
                [
                    .text(record.familyId), .id(record.tenantId), .id(record.userId), .id(record.clientId), .date(record.issuedAt),
                    .text(StoredJSON.text(of: record.methods)), .optionalDate(record.authTime),
                    record.dpopThumbprint.map(SQLiteData.text) ?? .null, .optionalText(record.transferMethod?.rawValue),
                    .optionalText(record.device?.objectId.rawValue), .optionalText(record.device?.thumbprint),
                ])
            _ = try db.query(Self.insertToken, Self.binds(record))
        }
    }

    public func find(tokenHash: String) async throws -> RefreshTokenRecord? {
        try await lookup(
            """
            SELECT t.token_hash, t.family_id, t.tenant_id, t.user_id, t.client_id, t.scope, t.issued_at, t.expires_at,
                   t.used_at, f.revoked_at, f.methods, f.auth_time, f.dpop_jkt, f.transfer_method, f.device_id, f.device_thumbprint
            FROM refresh_tokens t JOIN refresh_token_families f ON f.family_id = t.family_id
            WHERE t.token_hash = ?
            """,
            [.text(tokenHash)]
        ).first.map { row in
            RefreshTokenRecord(
                tokenHash: try row.string("token_hash"), familyId: try row.string("family_id"),
                tenantId: try row.id("tenant_id"), userId: try row.id("user_id"),
                clientId: try row.id("client_id"), scope: try row.string("scope"),
                issuedAt: try row.date("issued_at"), expiresAt: try row.date("expires_at"),
                usedAt: row.optionalDate("used_at"), familyRevokedAt: row.optionalDate("revoked_at"),
                methods: StoredJSON.methods(from: row.optionalString("methods")), authTime: row.optionalDate("auth_time"),
                dpopThumbprint: row.optionalString("dpop_jkt"), transferMethod: row.optionalString("transfer_method").flatMap(TransferMethod.init),
                device: ProvenDevice(objectId: row.optionalString("device_id"), thumbprint: row.optionalString("device_thumbprint")))
        }
    }

    /// The family of a token a rotation may consume: unused, its family not revoked.
    static let consumableQuery = """
        SELECT family_id FROM refresh_tokens
        WHERE token_hash = ? AND used_at IS NULL
          AND EXISTS (SELECT 1 FROM refresh_token_families f WHERE f.family_id = refresh_tokens.family_id AND f.revoked_at IS NULL)
        """

    public func rotate(oldHash: String, usedAt: Date, successor: RefreshTokenRecord) async throws -> Bool {
        let inDoubt = rotationsInDoubt
        return try await transaction(
            onTimeout: { inDoubt.insert(oldHash) },
            onAbandoned: { outcome in
                // The client was told "unavailable": a rotation that committed anyway is undone, then the token is
                // settled (until then this node answers "unavailable" for it; see RotationsInDoubt).
                if case .success(true) = outcome {
                    inDoubt.settle(oldHash) { try await self.undoRotation(oldHash: oldHash, usedAt: usedAt, successorHash: successor.tokenHash) }
                } else {
                    inDoubt.remove(oldHash)
                }
            }
        ) { db in
            // Read, then marked: one step for every other writer (this is the one writer). Not `UPDATE … RETURNING`, which
            // SQLite runs through a temporary b-tree (a database of its own, opened and zeroed) on every rotation.
            let consumable = try db.query(Self.consumableQuery, [.text(oldHash)])
            guard let family = consumable.first?.optionalString("family_id") else { return false }
            _ = try db.query("UPDATE refresh_tokens SET used_at = ? WHERE token_hash = ?", [.date(usedAt), .text(oldHash)])
            guard family == successor.familyId else { return false }
            _ = try db.query(Self.insertToken, Self.binds(successor))
            if let jkt = successor.dpopThumbprint {
                _ = try db.query("UPDATE refresh_token_families SET dpop_jkt = ? WHERE family_id = ? AND dpop_jkt IS NULL", [.text(jkt), .text(family)])
            }
            return true
        }
    }

    /// Undoes a rotation whose client never received the successor.
    func undoRotation(oldHash: String, usedAt: Date, successorHash: String) async throws {
        try await transaction { db in
            let removed = try db.query("DELETE FROM refresh_tokens WHERE token_hash = ? AND used_at IS NULL RETURNING token_hash", [.text(successorHash)])
            if !removed.isEmpty {
                _ = try db.query("UPDATE refresh_tokens SET used_at = NULL WHERE token_hash = ? AND used_at = ?", [.text(oldHash), .date(usedAt)])
            }
        }
    }

    public func isRotationInDoubt(tokenHash: String) -> Bool { rotationsInDoubt.contains(tokenHash) }

    public func rotationMayBeInDoubt(_ record: RefreshTokenRecord) async throws -> Bool {
        guard let usedAt = record.usedAt else { return false }
        if rotationsInDoubt.contains(record.tokenHash) { return true }
        guard rotationsInDoubt.recentOutage else { return false }
        return try await read(
            "SELECT 1 AS hit FROM refresh_tokens WHERE family_id = ? AND used_at > ? LIMIT 1",
            [.text(record.familyId), .date(usedAt)]
        ).isEmpty
    }

    public func revokeFamily(familyId: String, at: Date) async throws {
        try await transaction { db in
            _ = try db.query(
                "UPDATE refresh_token_families SET revoked_at = ? WHERE family_id = ? AND revoked_at IS NULL",
                [.date(at), .text(familyId)])
        }
    }

    public func revokeFamilies(tenantId: TenantID, userId: ObjectID, clientId: AppID, at: Date) async throws -> Int {
        try await transaction { db in
            try db.query(
                """
                UPDATE refresh_token_families SET revoked_at = ?
                WHERE tenant_id = ? AND user_id = ? AND client_id = ? AND revoked_at IS NULL RETURNING family_id
                """,
                [.date(at), .id(tenantId), .id(userId), .id(clientId)]
            ).count
        }
    }

    public func revokeAllFamilies(tenantId: TenantID, userId: ObjectID, at: Date) async throws -> Int {
        try await transaction { db in
            try db.query(
                "UPDATE refresh_token_families SET revoked_at = ? WHERE tenant_id = ? AND user_id = ? AND revoked_at IS NULL RETURNING family_id",
                [.date(at), .id(tenantId), .id(userId)]
            ).count
        }
    }

    public func purgeExpired(before: Date) async throws -> Int {
        proofs.purge(before: before)
        return try await transaction { db in
            let tokens = try db.query(
                "DELETE FROM refresh_tokens WHERE expires_at < ? RETURNING token_hash", [.date(before)]
            ).count
            _ = try db.query(
                "DELETE FROM refresh_token_families WHERE family_id NOT IN (SELECT family_id FROM refresh_tokens)")
            _ = try db.query("DELETE FROM revoked_access_tokens WHERE expires_at < ?", [.date(before)])
            _ = try db.query("DELETE FROM access_voids WHERE expires_at < ?", [.date(before)])
            _ = try db.query("DELETE FROM dpop_proofs WHERE expires_at < ?", [.date(before)])
            return tokens
        }
    }

    public func revokeAccessToken(jti: String, expiresAt: Date) async throws {
        try await transaction { db in
            _ = try db.query(
                "INSERT INTO revoked_access_tokens (jti, expires_at) VALUES (?, ?) ON CONFLICT (jti) DO NOTHING",
                [.text(jti), .date(expiresAt)])
        }
    }

    public func isAccessTokenRevoked(jti: String) async throws -> Bool {
        !(try await lookup("SELECT 1 AS hit FROM revoked_access_tokens WHERE jti = ?", [.text(jti)]).isEmpty)
    }

    /// One node owns an SQLite file, so the replay cache is this node's memory (`ProofMemory`), written behind to the
    /// table so that a restart within a proof's window still knows it (PROTOCOL §15): a synchronous write per proof
    /// measured as more than the rest of a client-credentials grant.
    public func claimProof(key: String, expiresAt: Date, now: Date) async throws -> Bool {
        switch proofs.claim(key, expiresAt: expiresAt, now: now) {
        case .present: return false
        case .full: throw StorageError(.unavailable, "the DPoP replay cache is full of live proofs")
        case .fresh:
            if proofs.startFlushIfIdle() {
                Task {
                    // A tenth of a second of proofs per transaction, not one transaction each.
                    try? await Task.sleep(for: .milliseconds(100))
                    await self.flushProofs()
                }
            }
            return true
        }
    }

    public func isProofClaimed(key: String, now: Date) async throws -> Bool { proofs.contains(key, now: now) }

    /// Writes the proofs claimed since the last flush, in batches, until none is pending. A failed batch is dropped (the
    /// memory still refuses its replays; only a restart within the window would forget them) and logged.
    func flushProofs() async {
        while let batch = proofs.nextBatch(maximum: 400) {
            do {
                try await transaction { db in
                    _ = try db.query(
                        "INSERT INTO dpop_proofs (proof_key, expires_at) VALUES " + Array(repeating: "(?, ?)", count: batch.count).joined(separator: ", ")
                            + " ON CONFLICT (proof_key) DO NOTHING",
                        batch.flatMap { [SQLiteData.text($0.key), .date($0.expiresAt)] })
                }
            } catch {
                logger.warning(
                    "DPoP proofs not written to the store (their replays are still refused until a restart)", metadata: ["portcullis.count": "\(batch.count)"])
            }
        }
    }

    /// Writes what is pending before the store closes (a graceful stop keeps every claimed proof), waiting at most 5 s
    /// for a flush already under way.
    func drainProofs() async {
        if proofs.startFlushIfIdle() { await flushProofs() }
        let deadline = ContinuousClock.now + .seconds(5)
        while !proofs.isIdle && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(10)) }
    }

    /// Reads the proofs still live into memory (at start, after the migrations).
    func loadProofs(now: Date) async throws {
        let rows = try await read(
            "SELECT proof_key, expires_at FROM dpop_proofs WHERE expires_at > ? ORDER BY expires_at LIMIT ?",
            [.date(now), .integer(proofs.capacity)])
        for row in rows { _ = proofs.claim(try row.string("proof_key"), expiresAt: try row.date("expires_at"), now: now) }
    }
}

/// The SQLite store's DPoP replay cache: the keys in memory (bounded: `ExpiringKeySet`) and the ones not yet written.
final class ProofMemory: Sendable {
    private struct State {
        var keys: ExpiringKeySet
        var pending: [(key: String, expiresAt: Date)] = []
        var flushing = false
    }

    /// At most this many live proofs: 8,260 a second for their 121 s (about 126 MB).
    let capacity = 1_000_000
    private let state: Mutex<State>

    init() {
        state = Mutex(State(keys: ExpiringKeySet(capacity: capacity)))
    }

    func claim(_ key: String, expiresAt: Date, now: Date) -> ExpiringKeySet.Outcome {
        state.withLock {
            let outcome = $0.keys.insert(key, expiresAt: expiresAt, now: now)
            if outcome == .fresh { $0.pending.append((key, expiresAt)) }
            return outcome
        }
    }

    /// Whether the caller should start a flush (none is running).
    func startFlushIfIdle() -> Bool {
        state.withLock {
            if $0.flushing { return false }
            $0.flushing = true
            return true
        }
    }

    /// The next pending proofs, or `nil` (and the flush ends) when there are none.
    func nextBatch(maximum: Int) -> [(key: String, expiresAt: Date)]? {
        state.withLock {
            guard !$0.pending.isEmpty else {
                $0.flushing = false
                return nil
            }
            let batch = Array($0.pending.prefix(maximum))
            $0.pending.removeFirst(batch.count)
            return batch
        }
    }

    func contains(_ key: String, now: Date) -> Bool { state.withLock { $0.keys.contains(key, now: now) } }

    /// Forgets what expired before `before` (the sweeper's pass).
    func purge(before: Date) { state.withLock { $0.keys.forget(expiredBefore: before) } }

    /// Nothing pending and no flush under way.
    var isIdle: Bool { state.withLock { !$0.flushing && $0.pending.isEmpty } }
}
