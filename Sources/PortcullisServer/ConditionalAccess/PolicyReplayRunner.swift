import Foundation
public import Logging
public import PortcullisCore
public import PortcullisStorage
public import ServiceLifecycle
import Synchronization

/// Runs the conditional-access replays that policy changes enqueue in their own transactions (PROTOCOL §14.1): off the
/// request path, one at a time, each leased so that one node runs it. A replay reads the tenant's newest sign-ins whose
/// tokens may still be live (at most `replayLimit`), replays them through the policies as they were before the change
/// and as they are now (`ChangeEffects.conditionalAccessReplayed`), and commits what it finds — the app's families of
/// each user the policies now refuse, and the events that end their tokens at resource servers — in the transaction that
/// ends the job. A crash at any point leaves the job to run again; a failure backs off. Runs as a `Service`.
public final class PolicyReplayRunner: Service, Sendable {
    let store: any PortcullisStore
    let tenants: TenantCache
    let transmitter: SignalTransmitter
    let recorder: SignInRecorder
    let clock: any WallClock
    let logger: Logger
    let signal: OutboxSignal
    /// With a store other nodes write too: how often to look for replays another node enqueued (`nil`: never).
    let pollInterval: Duration?
    let owner = UUID.randomIdentifierText

    /// At most this many of the newest sign-ins (refusals are skipped) are replayed for one change.
    public static let replayLimit = 10_000
    /// How long a node holds a replay before another may run it (one that crashed mid-replay, on a shared store; the
    /// embedded store releases its own leases when it restarts).
    static let lease: TimeInterval = 30

    init(
        store: any PortcullisStore, tenants: TenantCache, transmitter: SignalTransmitter, recorder: SignInRecorder, clock: any WallClock,
        pollInterval: Duration?, logger: Logger
    ) {
        self.store = store
        self.tenants = tenants
        self.transmitter = transmitter
        self.recorder = recorder
        self.clock = clock
        self.signal = transmitter.replaySignal
        self.pollInterval = pollInterval
        self.logger = logger
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                var wait = self.pollInterval
                do {
                    if try await self.runDue() > 0 { continue }
                    if let next = try await self.store.nextPolicyReplay() {
                        let due = Duration.milliseconds(max(10, Int64(next.timeIntervalSince(self.clock.now()) * 1000)))
                        wait = wait.map { min($0, due) } ?? due
                    }
                } catch {
                    self.logger.error("conditional-access replay poll failed", metadata: [LogKeys.error: .string("\(type(of: error))")])
                    wait = .seconds(1)
                }
                await self.signal.wait(for: wait)
            }
        }
    }

    /// Runs every replay due now, one after another; returns how many it ran (tests drive it with this).
    @discardableResult
    public func runDue() async throws -> Int {
        var ran = 0
        while let job = try await store.claimPolicyReplay(now: clock.now(), leaseUntil: clock.now().addingTimeInterval(Self.lease), owner: owner) {
            do {
                try await replay(job)
            } catch {
                let delay = min(300, pow(2, Double(min(job.attempts, 8))))
                logger.error(
                    "a conditional-access replay failed; it runs again later",
                    metadata: [LogKeys.tenantId: .string(job.tenantId), LogKeys.policyId: .string(job.policyId), LogKeys.error: .string("\(type(of: error))")])
                try? await store.retryPolicyReplay(job, owner: owner, nextAttemptAt: clock.now().addingTimeInterval(delay))
            }
            ran += 1
        }
        return ran
    }

    func replay(_ job: PolicyReplayJob) async throws {
        // The tenant as the change left it, at least.
        if (tenants.cachedRevisions()[job.tenantId] ?? 0) < job.revision { try await tenants.reload(tenantId: job.tenantId) }
        guard let tenant = try await tenants.snapshot(tenantSegment: job.tenantId) else {
            _ = try await store.completePolicyReplay(
                job, owner: owner, effects: CommittedEffects(effects: .none(tenantId: TenantID(job.tenantId), at: clock.now())))
            return
        }
        let before = try job.before.map { try TenantDocuments.decoder.decode(ConditionalAccessPolicy.self, from: $0) }
        let current = tenant.conditionalAccess
        let previous = tenant.compile(current.policies.filter { $0.id != PolicyID(job.policyId) } + (before.map { [$0] } ?? []))
        // Sign-ins this node has buffered count too (the newest are the likeliest to hold live tokens).
        await recorder.flush()
        let now = clock.now()
        let lifetime = max(transmitter.accessTokenLifetime, transmitter.continuousAccessTokenLifetime)
        let records = try await store.newestSignIns(tenantId: TenantID(job.tenantId), from: now.addingTimeInterval(-lifetime), to: nil, limit: Self.replayLimit)
        if records.count == Self.replayLimit {
            logger.warning(
                "a conditional-access change was replayed over the newest sign-ins only",
                metadata: [LogKeys.tenantId: .string(job.tenantId), "portcullis.sign_ins": .stringConvertible(records.count)])
        }
        let effects = ChangeEffects.conditionalAccessReplayed(
            signIns: records, directory: tenant.directory, before: previous, after: current, tenantId: tenant.tenant.id,
            accessTokenLifetime: transmitter.accessTokenLifetime, continuousAccessTokenLifetime: transmitter.continuousAccessTokenLifetime, at: now)
        let committed = transmitter.committed(effects, tenant: tenant)
        if try await store.completePolicyReplay(job, owner: owner, effects: committed) {
            transmitter.didCommit(committed)
            if !effects.events.isEmpty {
                logger.notice(
                    "a conditional-access change ended access it now refuses",
                    metadata: [
                        LogKeys.tenantId: .string(job.tenantId), LogKeys.policyId: .string(job.policyId),
                        "portcullis.users": .stringConvertible(effects.events.count),
                    ])
            }
        }
    }
}
