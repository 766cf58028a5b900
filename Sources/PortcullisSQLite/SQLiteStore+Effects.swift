public import Foundation
public import PortcullisCore
public import PortcullisStorage
import SQLiteNIO

extension SQLiteStore {
    /// Commits a change's effects inside the change's transaction (PROTOCOL §14.1): families revoked and sessions ended as
    /// far as each revocation reaches, per-user "void before" times, methods forgotten, replay jobs enqueued (at the
    /// change's `revision`), Shared Signals messages queued within their streams' bound, audit records.
    static func commit(_ committed: CommittedEffects?, revision: Int64, _ db: WriterStatements) throws {
        guard let committed else { return }
        let effects = committed.effects
        let tenant = SQLiteData.id(effects.tenantId)
        let at = SQLiteData.date(effects.at)
        for revocation in effects.revocations {
            let user = SQLiteData.id(revocation.userId)
            switch revocation.reach {
            case .everything:
                _ = try db.query(
                    "UPDATE refresh_token_families SET revoked_at = ? WHERE tenant_id = ? AND user_id = ? AND revoked_at IS NULL", [at, tenant, user])
                _ = try db.query("DELETE FROM sessions WHERE tenant_id = ? AND user_id = ?", [tenant, user])
            case .credential(let type):
                let (clause, binds) = methodsMatch(CredentialUse(type))
                _ = try db.query(
                    "UPDATE refresh_token_families SET revoked_at = ? WHERE tenant_id = ? AND user_id = ? AND revoked_at IS NULL AND (\(clause))",
                    [at, tenant, user] + binds)
                _ = try db.query("DELETE FROM sessions WHERE tenant_id = ? AND user_id = ? AND (\(clause))", [tenant, user] + binds)
            case .application(let clientId):
                _ = try db.query(
                    "UPDATE refresh_token_families SET revoked_at = ? WHERE tenant_id = ? AND user_id = ? AND client_id = ? AND revoked_at IS NULL",
                    [at, tenant, user, .id(clientId)])
            }
            if revocation.voidsAccessTokens {
                _ = try db.query(
                    """
                    INSERT INTO access_voids (tenant_id, user_id, void_before_ms, expires_at) VALUES (?, ?, ?, ?)
                    ON CONFLICT (tenant_id, user_id) DO UPDATE SET void_before_ms = max(void_before_ms, excluded.void_before_ms),
                        expires_at = max(expires_at, excluded.expires_at)
                    """,
                    [tenant, user, .integer(Int(effects.at.epochMilliseconds)), .date(committed.voidsExpireAt)])
            }
        }
        for device in effects.endsFamiliesOfDevices {
            _ = try db.query(
                "UPDATE refresh_token_families SET revoked_at = ? WHERE tenant_id = ? AND device_id = ? AND revoked_at IS NULL", [at, tenant, .id(device)])
        }
        for userId in effects.forgetMethodsOf {
            let binds: [SQLiteData] = [tenant, .id(userId)]
            _ = try db.query("DELETE FROM authentication_methods WHERE tenant_id = ? AND user_id = ?", binds)
            _ = try db.query("DELETE FROM passkeys WHERE tenant_id = ? AND user_id = ?", binds)
            _ = try db.query("DELETE FROM temporary_access_passes WHERE tenant_id = ? AND user_id = ?", binds)
        }
        for replay in effects.replays {
            let before = try replay.before.map { String(decoding: try TenantDocuments.encoder.encode($0), as: UTF8.self) }
            // A replay already waiting for this policy keeps the older `before`: it runs once, over both changes.
            _ = try db.query(
                """
                INSERT INTO policy_replays (tenant_id, policy_id, before, revision, generation, enqueued_at, next_attempt_at) VALUES (?, ?, ?, ?, 0, ?, ?)
                ON CONFLICT (tenant_id, policy_id) DO UPDATE SET revision = max(revision, excluded.revision), generation = generation + 1,
                    next_attempt_at = min(next_attempt_at, excluded.next_attempt_at)
                """,
                [tenant, .id(replay.policyId), .optionalText(before), .integer(Int(revision)), at, at])
        }
        if !committed.signals.isEmpty {
            try enqueue(committed.signals, db)
            for target in Set(committed.signals.map(\.targetUri)).sorted() {
                try trimSignals(target: target, keepingAtMost: committed.pendingPerStream, db)
            }
        }
        for audit in committed.audit { try insertAudit(audit, db) }
    }

    /// `(' ' || methods || ' ' LIKE ? AND …) OR (…)`: a recorded method list showing the credential's use.
    static func methodsMatch(_ use: CredentialUse) -> (String, [SQLiteData]) {
        let patterns = use.likePatterns
        let clause = patterns.map { set in "(" + set.map { _ in "' ' || methods || ' ' LIKE ?" }.joined(separator: " AND ") + ")" }
            .joined(separator: " OR ")
        return (clause, patterns.flatMap { $0.map(SQLiteData.text) })
    }

    /// Keeps at most `keepingAtMost` of a stream's messages pending, dropping the oldest; returns how many went.
    @discardableResult
    static func trimSignals(target: String, keepingAtMost: Int, _ db: WriterStatements) throws -> Int {
        // rowid orders a stream's messages as they were written.
        try db.query(
            """
            DELETE FROM outbox WHERE rowid IN (
                SELECT rowid FROM outbox WHERE target_uri = ? AND state = 'pending' AND lease_owner IS NULL
                ORDER BY rowid DESC LIMIT -1 OFFSET ?
            ) RETURNING id
            """,
            [.text(target), .integer(max(1, keepingAtMost))]
        ).count
    }

    public func commit(_ effects: CommittedEffects) async throws {
        guard !effects.isEmpty else { return }
        try await transaction { db in try Self.commit(effects, revision: 0, db) }
    }

    public func isAccessTokenVoid(jti: String, tenantId: TenantID, userId: ObjectID?, issuedAt: Date) async throws -> Bool {
        guard let userId else { return try await isAccessTokenRevoked(jti: jti) }
        return
            !(try await lookup(
                """
                SELECT 1 AS hit FROM revoked_access_tokens WHERE jti = ?
                UNION ALL SELECT 1 FROM access_voids WHERE tenant_id = ? AND user_id = ? AND void_before_ms >= ? LIMIT 1
                """,
                [.text(jti), .id(tenantId), .id(userId), .integer(Int(issuedAt.epochMilliseconds))]
            ).isEmpty)
    }

    static let replayColumns = "tenant_id, policy_id, before, revision, generation, enqueued_at, attempts"

    static func policyReplay(from row: StoredRow) throws -> PolicyReplayJob {
        PolicyReplayJob(
            tenantId: try row.string("tenant_id"), policyId: try row.string("policy_id"), before: row.optionalString("before").map { Data($0.utf8) },
            revision: try row.int("revision"), generation: try row.int("generation"), enqueuedAt: try row.date("enqueued_at"),
            attempts: Int(try row.int("attempts")))
    }

    public func claimPolicyReplay(now: Date, leaseUntil: Date, owner: String) async throws -> PolicyReplayJob? {
        try await transaction { db in
            try db.query(
                """
                UPDATE policy_replays SET lease_owner = ?, lease_until = ?, attempts = attempts + 1
                WHERE rowid = (
                    SELECT rowid FROM policy_replays WHERE next_attempt_at <= ? AND (lease_until IS NULL OR lease_until < ?)
                    ORDER BY next_attempt_at, enqueued_at LIMIT 1
                ) RETURNING \(Self.replayColumns)
                """,
                [.text(owner), .date(leaseUntil), .date(now), .date(now)]
            ).first.map(Self.policyReplay(from:))
        }
    }

    public func completePolicyReplay(_ job: PolicyReplayJob, owner: String, effects: CommittedEffects) async throws -> Bool {
        try await transaction { db in
            let done = try db.query(
                "DELETE FROM policy_replays WHERE tenant_id = ? AND policy_id = ? AND lease_owner = ? AND generation = ? RETURNING policy_id",
                [.text(job.tenantId), .text(job.policyId), .text(owner), .integer(Int(job.generation))])
            guard !done.isEmpty else {
                // A newer change of the policy came meanwhile (or the lease was lost): the job runs again, on a newer tenant.
                _ = try db.query(
                    "UPDATE policy_replays SET lease_owner = NULL, lease_until = NULL WHERE tenant_id = ? AND policy_id = ? AND lease_owner = ?",
                    [.text(job.tenantId), .text(job.policyId), .text(owner)])
                return false
            }
            try Self.commit(effects, revision: 0, db)
            return true
        }
    }

    public func retryPolicyReplay(_ job: PolicyReplayJob, owner: String, nextAttemptAt: Date) async throws {
        try await transaction { db in
            _ = try db.query(
                "UPDATE policy_replays SET lease_owner = NULL, lease_until = NULL, next_attempt_at = ? WHERE tenant_id = ? AND policy_id = ? AND lease_owner = ?",
                [.date(nextAttemptAt), .text(job.tenantId), .text(job.policyId), .text(owner)])
        }
    }

    public func nextPolicyReplay() async throws -> Date? {
        try await read("SELECT MIN(max(next_attempt_at, COALESCE(lease_until, 0))) AS due FROM policy_replays").first?.optionalDate("due")
    }
}
