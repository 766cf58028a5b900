public import Foundation
public import PortcullisCore

/// What a change commits besides itself, in its own transaction (PROTOCOL §14.1): Core's `ChangeEffects` (families and
/// sessions to void, per-user "void before" times, replay jobs, methods to forget), the Shared Signals messages its
/// events become (unsigned: the dispatcher signs each when it sends it), and its audit records. An acknowledged change
/// never loses these, whatever crashes after the answer; a change that fails commits none of them.
public struct CommittedEffects: Sendable, Equatable {
    public var effects: ChangeEffects
    /// The events routed to the tenant's streams: one message per stream and event, in order (`SignalTransmitter.route`).
    public var signals: [OutboxMessage]
    /// Each stream keeps at most this many messages pending, the oldest dropped first (PROTOCOL §14.2's bound).
    public var pendingPerStream: Int
    /// Until when a per-user "void before" time matters: the longest an access token issued before it can live.
    public var voidsExpireAt: Date
    public var audit: [AuditRecord]

    public init(
        effects: ChangeEffects, signals: [OutboxMessage] = [], pendingPerStream: Int = 10_000, voidsExpireAt: Date? = nil, audit: [AuditRecord] = []
    ) {
        self.effects = effects
        self.signals = signals
        self.pendingPerStream = pendingPerStream
        self.voidsExpireAt = voidsExpireAt ?? effects.at.addingTimeInterval(2 * 86_400)
        self.audit = audit
    }

    /// Only an audit record (a change with no effects).
    public static func audit(_ record: AuditRecord) -> CommittedEffects {
        CommittedEffects(effects: .none(tenantId: TenantID(record.tenantId), at: record.at), audit: [record])
    }

    public var isEmpty: Bool { effects.isEmpty && signals.isEmpty && audit.isEmpty }
}

/// A conditional-access replay waiting in the store (`ChangeEffects.PolicyReplay`): one per policy and tenant at most —
/// a later change of a policy whose replay has not run yet keeps the earlier `before`, so that the replay compares
/// the policy as it was before the first of them with the tenant as it is when it runs.
public struct PolicyReplayJob: Sendable, Equatable {
    public var tenantId: String
    public var policyId: String
    /// The policy's stored JSON before the change (`nil`: created).
    public var before: Data?
    /// The tenant's revision the change made: the replay waits for a tenant snapshot at least this new.
    public var revision: Int64
    /// Grows with every change of the policy while the job waits: a replay that ran on an older one does not complete it.
    public var generation: Int64
    public var enqueuedAt: Date
    public var attempts: Int

    public init(
        tenantId: String, policyId: String, before: Data?, revision: Int64, generation: Int64 = 0, enqueuedAt: Date, attempts: Int = 0
    ) {
        self.generation = generation
        self.tenantId = tenantId
        self.policyId = policyId
        self.before = before
        self.revision = revision
        self.enqueuedAt = enqueuedAt
        self.attempts = attempts
    }
}

/// Effects committed on their own (an admin action that changes no document: `revokeSignInSessions`), the per-user
/// "void before" times, and the conditional-access replay jobs.
public protocol EffectStore: Sendable {
    /// Commits `effects` in one transaction.
    func commit(_ effects: CommittedEffects) async throws
    /// Whether an access token no longer counts: revoked by `jti` (RFC 7009), or issued at or before its user's "void
    /// before" time (`userId` `nil`: an app-only token, which only its `jti` revokes).
    func isAccessTokenVoid(jti: String, tenantId: TenantID, userId: ObjectID?, issuedAt: Date) async throws -> Bool
    /// Leases the oldest due replay to `owner` until `leaseUntil`; `nil` when none is due.
    func claimPolicyReplay(now: Date, leaseUntil: Date, owner: String) async throws -> PolicyReplayJob?
    /// Ends a leased replay, committing what it found in the same transaction; `false` (and nothing written) when the
    /// lease was lost, or a newer change of the policy replaced the job meanwhile (it runs again).
    func completePolicyReplay(_ job: PolicyReplayJob, owner: String, effects: CommittedEffects) async throws -> Bool
    /// A replay that failed: tried again at `nextAttemptAt`.
    func retryPolicyReplay(_ job: PolicyReplayJob, owner: String, nextAttemptAt: Date) async throws
    /// When the next replay falls due (`nil`: none waits).
    func nextPolicyReplay() async throws -> Date?
}

extension CredentialUse {
    /// The SQL `LIKE` patterns a store matches against a family's or a session's stored methods (space-separated, as
    /// `StoredJSON.text(of:)` writes them, wrapped in one space each side): any inner list, each pattern of it matching.
    public var likePatterns: [[String]] { markers.map { set in set.map { "% \($0) %" } } }
}
