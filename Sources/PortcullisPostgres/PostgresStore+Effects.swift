public import Foundation
public import PortcullisCore
public import PortcullisStorage
import PostgresNIO

extension PostgresStore {
    /// Commits a change's effects inside the change's transaction (PROTOCOL §14.1); the same rules as the SQLite store's.
    static func commit(_ committed: CommittedEffects?, revision: Int64, _ db: Statements) async throws {
        guard let committed else { return }
        let effects = committed.effects
        let tenant = effects.tenantId
        let at = effects.at.seconds
        for revocation in effects.revocations {
            let user = revocation.userId
            switch revocation.reach {
            case .everything:
                try await db.query(
                    "UPDATE refresh_token_families SET revoked_at = \(at) WHERE tenant_id = \(tenant) AND user_id = \(user) AND revoked_at IS NULL")
                try await db.query("DELETE FROM sessions WHERE tenant_id = \(tenant) AND user_id = \(user)")
            case .credential(let type):
                // Any marker set whose every marker is one of the recorded methods (space-separated).
                let sets = CredentialUse(type).markers.map { $0.joined(separator: ",") }
                let uses = """
                    EXISTS (SELECT 1 FROM unnest($3::text[]) AS s(markers) WHERE NOT EXISTS (
                        SELECT 1 FROM unnest(string_to_array(s.markers, ',')) AS m(marker)
                        WHERE position(' ' || m.marker || ' ' in ' ' || methods || ' ') = 0))
                    """
                var families = PostgresBindings()
                families.append(tenant)
                families.append(user)
                families.append(sets)
                families.append(at)
                try await db.query(
                    PostgresQuery(
                        unsafeSQL:
                            "UPDATE refresh_token_families SET revoked_at = $4 WHERE tenant_id = $1 AND user_id = $2 AND revoked_at IS NULL AND \(uses)",
                        binds: families))
                var sessions = PostgresBindings()
                sessions.append(tenant)
                sessions.append(user)
                sessions.append(sets)
                try await db.query(PostgresQuery(unsafeSQL: "DELETE FROM sessions WHERE tenant_id = $1 AND user_id = $2 AND \(uses)", binds: sessions))
            case .application(let clientId):
                try await db.query(
                    """
                    UPDATE refresh_token_families SET revoked_at = \(at)
                    WHERE tenant_id = \(tenant) AND user_id = \(user) AND client_id = \(clientId) AND revoked_at IS NULL
                    """)
            }
            if revocation.voidsAccessTokens {
                try await db.query(
                    """
                    INSERT INTO access_voids (tenant_id, user_id, void_before_ms, expires_at)
                    VALUES (\(tenant), \(user), \(effects.at.epochMilliseconds), \(committed.voidsExpireAt.seconds))
                    ON CONFLICT (tenant_id, user_id) DO UPDATE SET void_before_ms = GREATEST(access_voids.void_before_ms, excluded.void_before_ms),
                        expires_at = GREATEST(access_voids.expires_at, excluded.expires_at)
                    """)
            }
        }
        for device in effects.endsFamiliesOfDevices {
            try await db.query(
                "UPDATE refresh_token_families SET revoked_at = \(at) WHERE tenant_id = \(tenant) AND device_id = \(device) AND revoked_at IS NULL")
        }
        for userId in effects.forgetMethodsOf {
            try await db.query("DELETE FROM authentication_methods WHERE tenant_id = \(tenant) AND user_id = \(userId)")
            try await db.query("DELETE FROM passkeys WHERE tenant_id = \(tenant) AND user_id = \(userId)")
            try await db.query("DELETE FROM temporary_access_passes WHERE tenant_id = \(tenant) AND user_id = \(userId)")
        }
        for replay in effects.replays {
            let before = try replay.before.map { String(decoding: try TenantDocuments.encoder.encode($0), as: UTF8.self) }
            // A replay already waiting for this policy keeps the older `before`: it runs once, over both changes.
            try await db.query(
                """
                INSERT INTO policy_replays (tenant_id, policy_id, before, revision, generation, enqueued_at, next_attempt_at)
                VALUES (\(tenant), \(replay.policyId), \(before), \(revision), 0, \(at), \(at))
                ON CONFLICT (tenant_id, policy_id) DO UPDATE SET revision = GREATEST(policy_replays.revision, excluded.revision),
                    generation = policy_replays.generation + 1, next_attempt_at = LEAST(policy_replays.next_attempt_at, excluded.next_attempt_at)
                """)
        }
        if !committed.signals.isEmpty {
            try await enqueue(committed.signals, db)
            for target in Set(committed.signals.map(\.targetUri)).sorted() {
                try await trimSignals(target: target, keepingAtMost: committed.pendingPerStream, db)
            }
        }
        for audit in committed.audit { try await insertAudit(audit, db) }
    }

    /// Keeps at most `keepingAtMost` of a stream's messages pending, dropping the oldest; returns how many went.
    @discardableResult
    static func trimSignals(target: String, keepingAtMost: Int, _ db: Statements) async throws -> Int {
        // seq orders a stream's messages as they were written.
        try await db.query(
            """
            DELETE FROM outbox WHERE seq IN (
                SELECT seq FROM outbox WHERE target_uri = \(target) AND state = 'pending' AND lease_owner IS NULL
                ORDER BY seq DESC OFFSET \(max(1, keepingAtMost))
            ) RETURNING id
            """
        ).count
    }

    public func commit(_ effects: CommittedEffects) async throws {
        guard !effects.isEmpty else { return }
        try await transaction { db in try await Self.commit(effects, revision: 0, db) }
    }

    public func isAccessTokenVoid(jti: String, tenantId: TenantID, userId: ObjectID?, issuedAt: Date) async throws -> Bool {
        guard let userId else { return try await isAccessTokenRevoked(jti: jti) }
        return
            !(try await rows(
                """
                SELECT 1 FROM revoked_access_tokens WHERE jti = \(jti)
                UNION ALL SELECT 1 FROM access_voids
                WHERE tenant_id = \(tenantId) AND user_id = \(userId) AND void_before_ms >= \(issuedAt.epochMilliseconds) LIMIT 1
                """
            ).isEmpty)
    }

    static func policyReplay(_ row: PostgresRow) throws -> PolicyReplayJob {
        let (tenant, policy, before, revision, generation, enqueued, attempts) = try row.decode(
            (String, String, String?, Int64, Int64, Double, Int).self)
        return PolicyReplayJob(
            tenantId: tenant, policyId: policy, before: before.map { Data($0.utf8) }, revision: revision, generation: generation,
            enqueuedAt: Date(seconds: enqueued), attempts: attempts)
    }

    public func claimPolicyReplay(now: Date, leaseUntil: Date, owner: String) async throws -> PolicyReplayJob? {
        try await transaction { db in
            try await db.query(
                """
                UPDATE policy_replays SET lease_owner = \(owner), lease_until = \(leaseUntil.seconds), attempts = attempts + 1
                WHERE (tenant_id, policy_id) = (
                    SELECT tenant_id, policy_id FROM policy_replays
                    WHERE next_attempt_at <= \(now.seconds) AND (lease_until IS NULL OR lease_until < \(now.seconds))
                    ORDER BY next_attempt_at, enqueued_at LIMIT 1 FOR UPDATE SKIP LOCKED
                ) RETURNING tenant_id, policy_id, before, revision, generation, enqueued_at, attempts
                """
            ).first.map(Self.policyReplay)
        }
    }

    public func completePolicyReplay(_ job: PolicyReplayJob, owner: String, effects: CommittedEffects) async throws -> Bool {
        try await transaction { db in
            let done = try await db.query(
                """
                DELETE FROM policy_replays WHERE tenant_id = \(job.tenantId) AND policy_id = \(job.policyId) AND lease_owner = \(owner)
                    AND generation = \(job.generation) RETURNING policy_id
                """)
            guard !done.isEmpty else {
                // A newer change of the policy came meanwhile (or the lease was lost): the job runs again, on a newer tenant.
                try await db.query(
                    """
                    UPDATE policy_replays SET lease_owner = NULL, lease_until = NULL
                    WHERE tenant_id = \(job.tenantId) AND policy_id = \(job.policyId) AND lease_owner = \(owner)
                    """)
                return false
            }
            try await Self.commit(effects, revision: 0, db)
            return true
        }
    }

    public func retryPolicyReplay(_ job: PolicyReplayJob, owner: String, nextAttemptAt: Date) async throws {
        _ = try await transaction { db in
            try await db.query(
                """
                UPDATE policy_replays SET lease_owner = NULL, lease_until = NULL, next_attempt_at = \(nextAttemptAt.seconds)
                WHERE tenant_id = \(job.tenantId) AND policy_id = \(job.policyId) AND lease_owner = \(owner)
                """)
        }
    }

    public func nextPolicyReplay() async throws -> Date? {
        try await rows("SELECT MIN(GREATEST(next_attempt_at, COALESCE(lease_until, 0))) FROM policy_replays").first?.decode(Double?.self)
            .map(Date.init(seconds:))
    }
}
