import Foundation
public import Logging
public import PortcullisCore
public import PortcullisStorage
public import ServiceLifecycle
import Synchronization

/// Risk (PROTOCOL §19), the server's side of it. The token path and the pages ask `facts(…)`: pure, from the tenant's
/// snapshot (the user's `RiskyUser`, in memory) and the operator's lists — no store round trip. Every recorded sign-in is
/// handed here (`observe`, a bounded queue) and worked off the request path: the real-time detections it carried become
/// the user's, the offline ones (atypical travel, password spray) are found, the profile learns, and a policy's secure
/// remediation closes the risk. Admins' and users' changes (confirm compromised, dismiss, a report, a password change)
/// come through `change(…)`. Every write is the user's `riskyUser` document through the documents' write path: read
/// back, changed, stored on its version (retried when another node wrote meanwhile), audited when the risk changed, its
/// effects (`risk-level-change`, a compromise's revocation) committed with it.
public final class RiskEngine: Service, Sendable {
    let store: any PortcullisStore
    let tenants: TenantCache
    let transmitter: SignalTransmitter
    public let lists: RiskListSource
    let clock: any WallClock
    let logger: Logger
    private let queue = Mutex<[SignInRecord]>([])
    private let interval: Duration
    /// Whether detections are computed here (`risk.detections`); off, only reported and confirmed risk counts.
    let detections: Bool
    /// Observations beyond this wait nowhere: the oldest are dropped (a store away for long), logged.
    static let capacity = 10_000

    init(
        store: any PortcullisStore, tenants: TenantCache, transmitter: SignalTransmitter, lists: RiskListSource, clock: any WallClock,
        detections: Bool = true, interval: Duration = .milliseconds(250), logger: Logger
    ) {
        self.detections = detections
        self.store = store
        self.tenants = tenants
        self.transmitter = transmitter
        self.lists = lists
        self.clock = clock
        self.interval = interval
        self.logger = logger
    }

    // MARK: The sign-in's facts

    /// The risk a sign-in carries into conditional access: its real-time detections and the user's kept risk; for an
    /// application's own sign-in, its kept risk as a workload identity.
    public func facts(userId: ObjectID?, signIn: RiskDetector.SignIn, snapshot: TenantSnapshot) -> RiskFacts {
        guard let userId else { return RiskDetector.facts(servicePrincipal: snapshot.riskyServicePrincipal(appId: signIn.clientAppId)) }
        let kept = snapshot.riskyUser(id: userId)
        guard detections else {
            return RiskFacts(user: kept?.riskLevel ?? .none, userRiskUpdated: kept?.riskLastUpdatedDateTime, insider: kept?.insiderRiskLevel)
        }
        return RiskDetector.facts(signIn, user: kept, lists: lists.lists)
    }

    // MARK: After the sign-in

    /// A recorded sign-in, to be learned from off the request path.
    public func observe(_ record: SignInRecord) {
        guard detections, record.userId != nil || record.grantType == GrantType.clientCredentials.rawValue else { return }
        let dropped = queue.withLock { records -> Bool in
            // A hundredth at once, not one per record: a full queue (a store away) costs no copy per grant.
            let full = records.count >= Self.capacity
            if full { records.removeFirst(Self.capacity / 100) }
            records.append(record)
            return full
        }
        if dropped { logger.warning("risk engine queue full; the oldest sign-ins were not learned from") }
    }

    /// Works off every sign-in observed so far (tests call it to wait for the engine).
    public func drain() async {
        let batch = queue.withLock { records -> [SignInRecord] in
            defer { records.removeAll(keepingCapacity: true) }
            return records
        }
        // A busy client's refreshes repeat one another: of the non-interactive sign-ins with the same facts in one batch,
        // the first is learned from (what it teaches, the others teach again, to the hour that a sighting is kept to).
        var repeated = Set<SignInRecord.LearningKey>()
        for record in batch {
            if !record.interactive, !repeated.insert(record.learningKey).inserted { continue }
            do {
                try await learn(from: record)
            } catch {
                logger.error("risk engine could not learn from a sign-in", metadata: [LogKeys.error: .string("\(type(of: error))")])
            }
        }
    }

    public func run() async throws { await repeatUntilShutdown(every: interval) { await self.drain() } }

    func learn(from record: SignInRecord) async throws {
        guard let userId = record.userId else { return try await learnApplication(from: record) }
        guard let snapshot = try await tenants.snapshot(id: record.tenantId),
            let user = snapshot.directory.user(id: userId)
        else { return }
        // Password spray: a successful password sign-in from an address that tried many accounts (read off the request path).
        var sprayed = false
        if RiskDetector.mayShowSpray(record) {
            let key = RiskDetector.sprayKey(tenantId: record.tenantId, address: record.ipAddress.flatMap(IPAddress.init))
            sprayed = RiskDetector.sprayed(try await store.throttles(keys: [key]).first, at: record.createdDateTime)
        }
        try await change(user: user, in: snapshot, actor: nil, action: .riskDetected) { risky, now in
            risky.learn(from: record, sprayed: sprayed, at: now)
        }
    }

    /// A workload identity's own sign-in (PROTOCOL §19): after its learning period, a network it has not used is
    /// `suspiciousSignins` (offline: its risk rises, which its next grant sees).
    func learnApplication(from record: SignInRecord) async throws {
        guard record.succeeded, let snapshot = try await tenants.snapshot(id: record.tenantId),
            let application = snapshot.directory.application(appId: record.clientAppId)
        else { return }
        try await change(application: application, in: snapshot, actor: nil, action: .riskDetected) { risky, now in
            risky.learn(from: record, at: now)
        }
    }

    // MARK: Changes

    /// Changes a user's `riskyUser` document with `apply` (which says whether it changed anything) and stores it: read back
    /// from the store, stored on its version, retried a few times when another node wrote it meanwhile. Audited (as
    /// `action`, by `actor`; the system's when `nil`) when the risk itself changed, not when only the profile learned; its
    /// effects committed with it. Returns the document as stored, or as it was when nothing changed.
    @discardableResult
    func change(
        user: User, in snapshot: TenantSnapshot, actor: String?, action: AuditAction, _ apply: (inout RiskyUser, Date) -> Bool
    ) async throws -> RiskyUser {
        try await change(
            id: user.id.rawValue, kept: snapshot.riskyUser(id: user.id), made: RiskyUser(user: user), in: snapshot, actor: actor, action: action
        ) { risky, now in
            risky.userPrincipalName = user.userPrincipalName
            risky.userDisplayName = user.displayName
            return apply(&risky, now)
        }
    }

    /// The same for a workload identity (PROTOCOL §19).
    @discardableResult
    func change(
        application: PortcullisCore.Application, in snapshot: TenantSnapshot, actor: String?, action: AuditAction,
        _ apply: (inout RiskyServicePrincipal, Date) -> Bool
    ) async throws -> RiskyServicePrincipal {
        try await change(
            id: application.appId.rawValue, kept: snapshot.riskyServicePrincipal(appId: application.appId),
            made: RiskyServicePrincipal(application: application),
            in: snapshot, actor: actor, action: action
        ) { risky, now in
            risky.displayName = application.displayName
            return apply(&risky, now)
        }
    }

    /// One risk document changed: `kept` is the snapshot's (or `made`, for a subject never seen), `apply` says whether it
    /// changed anything — decided on the snapshot first, so most sign-ins change nothing with no store round trip.
    func change<Document: RiskDocument>(
        id: String, kept: Document?, made: @autoclosure () -> Document, in snapshot: TenantSnapshot, actor: String?, action: AuditAction,
        _ apply: (inout Document, Date) -> Bool
    ) async throws -> Document {
        var probe = kept ?? made()
        if !apply(&probe, clock.now()) { return probe }
        let tenantId = snapshot.tenant.id
        for attempt in 1...5 {
            let now = clock.now()
            let stored = try await store.document(tenantId: tenantId, kind: Document.kind, id: id)
            let before = try stored.map { try TenantDocuments.decoder.decode(Document.self, from: $0.body) }
            var after = before ?? made()
            guard apply(&after, now) else { return after }
            // Audited when the risk changed, not when only the profile learned.
            let riskChanged = before.map { $0.presentedForAudit != after.presentedForAudit } ?? after.hasRisk
            let effects = Document.effects(before: before, after: after, tenantId: tenantId, at: now)
            let committed = effects.isEmpty ? nil : transmitter.committed(effects, tenant: snapshot)
            do {
                let written = try await store.put(
                    tenantId: tenantId, kind: Document.kind, id: id, body: try TenantDocuments.encoder.encode(after),
                    precondition: stored.map { .version($0.version) } ?? .mustNotExist, at: now,
                    audit: riskChanged
                        ? AuditRecord(
                            tenantId: tenantId, at: now, actor: actor ?? "system (identity protection)", action: action, kind: AuditSubject(Document.kind),
                            documentId: id, before: before.map(\.presentedForAudit), after: after.presentedForAudit) : nil,
                    effects: committed)
                if let committed { transmitter.didCommit(committed) }
                try await tenants.documentChanged(tenantId: tenantId, kind: Document.kind, id: id, revision: written.version)
                return after
            } catch let error as StorageError where (error.code == .preconditionFailed || error.code == .duplicate) && attempt < 5 {
                continue
            }
        }
        return probe
    }
}

/// A risk document the engine writes: a user's or a workload identity's.
protocol RiskDocument: TenantDocument, RiskBearing {
    /// Whether any risk was ever recorded.
    var hasRisk: Bool { get }
    /// The audit log's view: the risk, not the profile.
    var presentedForAudit: JSONValue { get }
}

extension RiskyServicePrincipal: RiskDocument {
    var presentedForAudit: JSONValue {
        .object([
            "riskLevel": .string(riskLevel.rawValue), "riskState": .string(riskState.rawValue), "riskDetail": .string(riskDetail.rawValue),
            "detections": .number(Double(detections.count)),
        ])
    }
}

extension RiskyUser: RiskDocument {}

extension RiskyUser {
    /// The audit log's view: the risk, not the profile.
    var presentedForAudit: JSONValue {
        var object: [String: JSONValue] = [
            "riskLevel": .string(riskLevel.rawValue), "riskState": .string(riskState.rawValue), "riskDetail": .string(riskDetail.rawValue),
            "detections": .number(Double(detections.count)),
        ]
        if let insiderRiskLevel { object["insiderRiskLevel"] = .string(insiderRiskLevel.rawValue) }
        return .object(object)
    }
}

extension AuditAction {
    /// The risk engine found a detection, or learned (PROTOCOL §19).
    public static let riskDetected = AuditAction(rawValue: "riskDetected")
    /// An admin dismissed a user's risk.
    public static let dismissRisk = AuditAction(rawValue: "dismiss")
    /// A user's risk was remediated (a secure password change, a strong sign-in).
    public static let remediateRisk = AuditAction(rawValue: "remediate")
    /// A detection reported (leaked credentials, threat intelligence) or an insider risk level set.
    public static let reportRisk = AuditAction(rawValue: "reportRisk")
}

// MARK: Admins' and users' decisions

extension RiskEngine {
    /// An admin confirmed the user compromised (PROTOCOL §19): risk high, `confirmedCompromised`, and — committed with it —
    /// everything of theirs void and RISC `credential-compromise` on the tenant's streams (§14.1).
    func confirmCompromised(_ user: User, in snapshot: TenantSnapshot, actor: String) async throws {
        try await change(user: user, in: snapshot, actor: actor, action: .confirmCompromised) { risky, now in
            risky.add(
                [RiskDetection(type: .adminConfirmedUserCompromised, state: .confirmedCompromised, activity: now, detected: now, reportedBy: actor)], at: now,
                initiatedBy: actor)
            return true
        }
    }

    /// An admin dismissed the user's risk: every active detection and the user's risk closed as `dismissed`.
    func dismiss(_ user: User, in snapshot: TenantSnapshot, actor: String) async throws {
        try await change(user: user, in: snapshot, actor: actor, action: .dismissRisk) { risky, now in
            risky.close(.dismissed, detail: .adminDismissedAllRiskForUser, at: now, initiatedBy: actor)
        }
    }

    /// A detection reported about the user (leaked credentials, threat intelligence): it raises their risk, and revokes
    /// nothing by itself (policies decide, PROTOCOL §19).
    @discardableResult
    func report(
        _ type: RiskEventType, user: User, in snapshot: TenantSnapshot, actor: String, level: RiskLevel? = nil, additionalInfo: String? = nil
    ) async throws -> RiskyUser {
        try await change(user: user, in: snapshot, actor: actor, action: .reportRisk) { risky, now in
            risky.add(
                [RiskDetection(type: type, level: level, activity: now, detected: now, reportedBy: actor, additionalInfo: additionalInfo)], at: now,
                initiatedBy: actor)
            return true
        }
    }

    /// A workload identity's risk as an admin decides it: a leaked secret reported, a confirmation, a dismissal.
    func decide(
        _ decision: ServicePrincipalDecision, application: PortcullisCore.Application, in snapshot: TenantSnapshot, actor: String,
        additionalInfo: String? = nil
    ) async throws {
        try await change(application: application, in: snapshot, actor: actor, action: decision.action) { risky, now in
            switch decision {
            case .leakedCredentials:
                risky.add(
                    [RiskDetection(type: .leakedCredentials, activity: now, detected: now, reportedBy: actor, additionalInfo: additionalInfo)], at: now,
                    initiatedBy: actor)
                return true
            case .confirmCompromised:
                risky.add(
                    [
                        RiskDetection(
                            type: .adminConfirmedServicePrincipalCompromised, state: .confirmedCompromised, activity: now, detected: now, reportedBy: actor)
                    ], at: now, initiatedBy: actor)
                return true
            case .dismiss:
                return risky.close(.dismissed, detail: .adminDismissedAllRiskForServicePrincipal, at: now, initiatedBy: actor)
            }
        }
    }

    enum ServicePrincipalDecision {
        case leakedCredentials, confirmCompromised, dismiss

        var action: AuditAction {
            switch self {
            case .leakedCredentials: .reportRisk
            case .confirmCompromised: .confirmCompromised
            case .dismiss: .dismissRisk
            }
        }
    }

    /// Sets (or, `nil`, clears) the user's insider risk level (PROTOCOL §19).
    func setInsiderRisk(_ level: InsiderRiskLevel?, user: User, in snapshot: TenantSnapshot, actor: String) async throws {
        try await change(user: user, in: snapshot, actor: actor, action: .reportRisk) { risky, _ in
            guard risky.insiderRiskLevel != level else { return false }
            risky.insiderRiskLevel = level
            return true
        }
    }
}
