public import Foundation
import HTTPTypes
import Logging
import PortcullisAPI
public import PortcullisCore
import PortcullisStorage
import PortcullisTokens
import Synchronization

/// The compliance service (PROTOCOL §5): enrollment, check-ins, remediation, unenrollment, wipe and the
/// grace-period lapse, each state change written with its history line and its callback SETs in one
/// transaction. It also answers the token endpoint's question "is this account's app compliant?".
public struct ComplianceService: AppProtectionStatusProvider {
    let configuration: ServerConfiguration
    let endpoints: ServerEndpoints
    let store: any PortcullisStore
    let tenants: TenantCache
    let signers: TenantKeyRings
    let clock: any WallClock
    let outboxSignal: OutboxSignal
    /// Tells Shared Signals receivers of wipes and lost compliance (PROTOCOL §14.1).
    let transmitter: SignalTransmitter
    let logger: Logger

    /// The account and client application a compliance call acts for (from its bearer token).
    struct Caller {
        let tenant: TenantSnapshot
        let user: User
        let client: PortcullisCore.Application
    }

    // MARK: Token endpoint

    public func appProtection(
        tenantId: TenantID, userId: ObjectID, clientId: AppID, enrollmentId: String?, now: Date
    ) async throws
        -> (fact: SignInFacts.AppProtection, platform: DevicePlatform?)
    {
        if let enrollmentId {
            // A named enrollment must belong to the same tenant, account and client, else it is as if none existed.
            guard let enrollment = try await store.enrollment(id: RecordID(enrollmentId)), enrollment.tenantId == tenantId,
                enrollment.userId == userId, enrollment.clientId == clientId, enrollment.isActive
            else { return (.none, nil) }
            return (enrollment.isCompliant(at: now) ? .compliant(enrollmentId: enrollment.id.rawValue) : .notCompliant, enrollment.platform)
        }
        // The common case reads one indexed row: the account's compliant enrollment of this client, if any.
        if let compliant = try await store.compliantEnrollment(tenantId: tenantId, userId: userId, clientId: clientId, now: now) {
            return (.compliant(enrollmentId: compliant.id.rawValue), compliant.platform)
        }
        return (
            try await store.hasActiveEnrollment(tenantId: tenantId, userId: userId, clientId: clientId) ? .notCompliant : .none, nil
        )
    }

    // MARK: /mam/v1

    func response(
        _ enrollment: Enrollment, code: EnrollmentStatusCode, policy: MergedAppProtectionPolicy?, deliver: Bool,
        commands: [EnrollmentCommand] = [], missing: [RemediationGap]? = nil, now: Date
    ) -> EnrollmentResponse {
        EnrollmentResponse(
            enrollmentId: enrollment.id.rawValue, statusCode: code,
            policy: deliver ? policy.map { PolicyDocument(version: $0.version, settings: $0.settings) } : nil,
            complianceStatus: EnrollmentMachine.effectiveStatus(enrollment, now: now), commands: commands.isEmpty ? nil : commands.map(\.rawValue),
            missing: missing?.map(\.rawValue), accountId: enrollment.userId.rawValue, tenantId: enrollment.tenantId.rawValue, upn: enrollment.userPrincipalName,
            recheckIntervalMinutes: policy?.settings.recheckIntervalMinutes)
    }

    func unenrolledResponse(_ caller: Caller, code: EnrollmentStatusCode, status: ComplianceStatus, missing: [RemediationGap]) -> EnrollmentResponse {
        EnrollmentResponse(
            enrollmentId: nil, statusCode: code, policy: nil, complianceStatus: status, missing: missing.map(\.rawValue),
            accountId: caller.user.id.rawValue, tenantId: caller.tenant.tenant.id.rawValue, upn: caller.user.userPrincipalName)
    }

    /// What enrolling an account on an app instance came to.
    enum Claim {
        /// The account's enrollment of the instance (`created` when this request made it), and the merged
        /// app protection policy it is under.
        case enrolled(Enrollment, created: Bool, policy: MergedAppProtectionPolicy)
        /// The account cannot hold one (unmanaged, not allowed, another managed account): the answer to send.
        case refused(EnrollmentResponse)
    }

    /// Why an account cannot hold an enrollment of this app, if it cannot.
    func refusal(_ caller: Caller) -> (code: EnrollmentStatusCode, status: ComplianceStatus, missing: RemediationGap)? {
        if !AllowedAccounts.permits(caller.tenant.tenant, userId: caller.user.id, userPrincipalName: caller.user.userPrincipalName) {
            logger.notice(
                "enrollment refused: the account is not in the tenant's allowedAccounts", metadata: [LogKeys.clientId: .string(caller.client.appId.rawValue)])
            return (.accountNotAllowed, .accountNotAllowed, .allowedAccount)
        }
        if caller.tenant.appProtectionPolicy(userId: caller.user.id, clientId: caller.client.appId) == nil {
            let code: EnrollmentStatusCode = caller.tenant.appProtectionTargets(clientId: caller.client.appId) ? .licensedNotTargeted : .noPolicyReceived
            return (code, .notTargeted, .policyAssignment)
        }
        return nil
    }

    /// Enrolls (or finds the enrollment of) this account on this app instance.
    func enrollOrFind(
        _ caller: Caller, deviceId: String, platform: String?, osVersion: String?, appVersion: String?, sdkVersion: String?,
        callbackUri: String?, appKey: AppKeyJWK? = nil
    ) async throws -> Claim {
        if let refusal = refusal(caller) {
            return .refused(unenrolledResponse(caller, code: refusal.code, status: refusal.status, missing: [refusal.missing]))
        }
        guard let policy = caller.tenant.appProtectionPolicy(userId: caller.user.id, clientId: caller.client.appId) else {
            return .refused(unenrolledResponse(caller, code: .noPolicyReceived, status: .notTargeted, missing: [.policyAssignment]))
        }
        for _ in 0..<3 {
            let now = clock.now()
            if let existing = try await store.activeEnrollment(
                tenantId: TenantID(caller.tenant.tenant.id), clientId: AppID(caller.client.appId), deviceId: DeviceID(deviceId))
            {
                if existing.userId == caller.user.id { return .enrolled(try await registering(appKey, on: existing, now: now), created: false, policy: policy) }
                return .refused(unenrolledResponse(caller, code: .singleManagedAccountMode, status: .anotherAccountManaged, missing: [.singleManagedAccount]))
            }
            let outcome = EnrollmentMachine.enroll(
                id: RecordID.generate(), tenantId: caller.tenant.tenant.id, userId: caller.user.id,
                userPrincipalName: caller.user.userPrincipalName, clientId: caller.client.appId, deviceId: DeviceID(deviceId),
                platform: platform.flatMap(DevicePlatform.init(caseInsensitive:)), osVersion: osVersion, appVersion: appVersion,
                sdkVersion: sdkVersion, callbackUri: callbackUri, policy: policy, now: now)
            var enrollment = outcome.enrollment
            enrollment.appKey = appKey
            do {
                let stored = try await store.insertEnrollment(
                    enrollment,
                    history: EnrollmentHistoryEntry(at: now, event: .enrolled, fromStatus: nil, toStatus: outcome.enrollment.complianceStatus.status.rawValue),
                    outbox: try await callbacks(previous: nil, enrollment: outcome.enrollment, client: caller.client, now: now),
                    keepingAtMost: configuration.maximumEnrollmentsPerAccount)
                outboxSignal.signal()
                return .enrolled(stored, created: true, policy: policy)
            } catch let error as StorageError where error.code == .duplicate {
                continue  // Another request took the slot first: look again.
            }
        }
        throw StorageError(.unavailable, "the enrollment kept changing under concurrent requests")
    }

    /// The enrollment with `appKey` as its instance key (PROTOCOL §8.2): a key registered again replaces the one
    /// before (the app may have lost its key store); secrets sealed to the old key no longer reach this instance.
    func registering(_ appKey: AppKeyJWK?, on enrollment: Enrollment, now: Date) async throws -> Enrollment {
        guard let appKey, enrollment.appKey != appKey, enrollment.isActive else { return enrollment }
        var updated = enrollment
        updated.appKey = appKey
        updated.updatedAt = now
        let status = enrollment.complianceStatus.status.rawValue
        return try await store.updateEnrollment(
            updated, expectedRevision: enrollment.revision,
            history: EnrollmentHistoryEntry(at: now, event: .appKeyRegistered, fromStatus: status, toStatus: status, detail: SecretDelivery.thumbprint(appKey)),
            outbox: []) ?? enrollment
    }

    func enroll(_ caller: Caller, _ request: EnrollmentRequest) async throws -> (created: Bool, EnrollmentResponse) {
        switch try await enrollOrFind(
            caller, deviceId: request.deviceId, platform: request.platform, osVersion: request.osVersion, appVersion: request.appVersion,
            sdkVersion: request.sdkVersion, callbackUri: nil, appKey: request.appKey)
        {
        case .refused(let answer):
            return (false, answer)
        case .enrolled(let enrollment, let created, let policy):
            return (created, response(enrollment, code: created ? .newPoliciesReceived : .alreadyEnrolled, policy: policy, deliver: true, now: clock.now()))
        }
    }

    func remediate(_ caller: Caller, _ request: RemediationRequest) async throws -> EnrollmentResponse {
        if let uri = request.callbackUri, !caller.client.complianceCallbackUris.contains(uri) {
            throw APIError(
                .badRequest, "callbackNotRegistered", "callbackUri must be one of the application's registered complianceCallbackUris (exact match).",
                details: [ValidationProblem(pointer: "/callbackUri", message: "is not registered for this application.")])
        }
        let claim = try await enrollOrFind(
            caller, deviceId: request.deviceId, platform: request.platform, osVersion: request.osVersion, appVersion: request.appVersion,
            sdkVersion: request.sdkVersion, callbackUri: request.callbackUri, appKey: request.appKey)
        var enrollment: Enrollment
        let created: Bool
        let policy: MergedAppProtectionPolicy
        switch claim {
        case .refused(let answer): return answer
        case .enrolled(let found, let wasCreated, let merged): (enrollment, created, policy) = (found, wasCreated, merged)
        }
        let now = clock.now()
        if enrollment.state == .wipePending {
            return response(enrollment, code: .wipeReceived, policy: policy, deliver: false, commands: [.wipe], missing: [.wipeAcknowledgement], now: now)
        }
        if let uri = request.callbackUri, enrollment.callbackUri != uri, !created {
            var changed = enrollment
            changed.callbackUri = uri
            changed.updatedAt = now
            if let stored = try await store.updateEnrollment(
                changed, expectedRevision: enrollment.revision,
                history: EnrollmentHistoryEntry(at: now, event: .callbackChanged, fromStatus: nil, toStatus: nil, detail: uri),
                outbox: [])
            {
                enrollment = stored
            }
        }
        var missing: [RemediationGap] = []
        if enrollment.appliedPolicyVersion != policy.version && !enrollment.isCompliant(at: now) { missing.append(.policyAcknowledgement) }
        if let minimum = policy.settings.minimumOsVersion, request.osVersion.map({ SoftwareVersion.compare($0, minimum) < 0 }) ?? true {
            missing.append(.osVersion)
        }
        if let minimum = policy.settings.minimumAppVersion, request.appVersion.map({ SoftwareVersion.compare($0, minimum) < 0 }) ?? true {
            missing.append(.appVersion)
        }
        if policy.settings.pinRequired == true { missing.append(.pin) }
        if enrollment.isCompliant(at: now) && enrollment.appliedPolicyVersion == policy.version { missing = [] }
        let code: EnrollmentStatusCode =
            created ? .newPoliciesReceived : (enrollment.appliedPolicyVersion == policy.version ? .policiesUnchanged : .newPoliciesReceived)
        return response(enrollment, code: code, policy: policy, deliver: true, missing: missing, now: now)
    }

    func owned(_ caller: Caller, id: String) async throws -> Enrollment {
        guard let enrollment = try await store.enrollment(id: RecordID(id)), enrollment.tenantId == caller.tenant.tenant.id,
            enrollment.userId == caller.user.id, enrollment.clientId == caller.client.appId
        else { throw APIError.notFound("The enrollment \(id.prefix(64))") }
        return enrollment
    }

    func get(_ caller: Caller, id: String) async throws -> EnrollmentResponse {
        let enrollment = try await owned(caller, id: id)
        let policy = caller.tenant.appProtectionPolicy(userId: caller.user.id, clientId: caller.client.appId)
        let commands: [EnrollmentCommand] = enrollment.state == .wipePending ? [.wipe] : []
        return response(
            enrollment, code: enrollment.state == .wipePending ? .wipeReceived : .policiesUnchanged, policy: policy,
            deliver: enrollment.state != .unenrolled && enrollment.state != .wipePending, commands: commands, now: clock.now())
    }

    func checkIn(_ caller: Caller, id: String, _ request: CheckInRequest) async throws -> EnrollmentResponse {
        let report = CheckInReport(
            appliedPolicyVersion: request.appliedPolicyVersion, osVersion: request.osVersion, appVersion: request.appVersion,
            jailbroken: request.jailbroken, pinSet: request.pinSet, silent: request.silent ?? false)
        for _ in 0..<5 {
            let current = try await owned(caller, id: id)
            guard current.state != .unenrolled else {
                throw APIError(.gone, "unenrolled", "The enrollment was unenrolled; enroll again.")
            }
            let now = clock.now()
            let policy = caller.tenant.appProtectionPolicy(userId: caller.user.id, clientId: caller.client.appId)
            let outcome = EnrollmentMachine.checkIn(current, report: report, policy: policy, now: now)
            if let stored = try await persist(outcome, previous: current, event: .checkIn, client: caller.client, now: now) {
                return response(
                    stored, code: outcome.statusCode, policy: policy, deliver: outcome.deliverPolicy,
                    commands: outcome.commands + configurationCommands(stored, caller, now: now), now: now)
            }
        }
        throw StorageError(.unavailable, "the enrollment kept changing under concurrent check-ins")
    }

    func unenroll(_ caller: Caller, id: String) async throws -> EnrollmentResponse {
        for _ in 0..<5 {
            let current = try await owned(caller, id: id)
            let now = clock.now()
            if current.state == .unenrolled { return response(current, code: .unenrollmentSucceeded, policy: nil, deliver: false, now: now) }
            let outcome = EnrollmentMachine.unenroll(current, now: now)
            if let stored = try await persist(
                outcome, previous: current, event: current.state == .wipePending ? .wipeAcknowledged : .unenrolled,
                client: caller.client, now: now)
            {
                return response(stored, code: .unenrollmentSucceeded, policy: nil, deliver: false, now: now)
            }
        }
        throw StorageError(.unavailable, "the enrollment kept changing under concurrent requests")
    }

    // MARK: App configuration (PROTOCOL §8.2)

    /// `refreshConfiguration` while a compliant enrollment's current configuration is not the version last
    /// delivered to it (nothing for an app that never had one and still has none).
    func configurationCommands(_ enrollment: Enrollment, _ caller: Caller, now: Date) -> [EnrollmentCommand] {
        guard enrollment.isCompliant(at: now) else { return [] }
        let merged = caller.tenant.appConfiguration(userId: caller.user.id, clientId: caller.client.appId)
        return enrollment.configurationOutdated(current: ConfigurationDelivery.version(merged), managed: merged.configuration != nil)
            ? [.refreshConfiguration] : []
    }

    /// Remembers the configuration version an app instance fetched (one history line per new version). A
    /// concurrent change of the enrollment wins; the next fetch records it.
    func recordDelivery(_ enrollment: Enrollment, version: String) async throws {
        guard enrollment.configurationVersion != version else { return }
        var updated = enrollment
        updated.configurationVersion = version
        updated.updatedAt = clock.now()
        let status = enrollment.complianceStatus.status.rawValue + "/" + enrollment.state.rawValue
        _ = try await store.updateEnrollment(
            updated, expectedRevision: enrollment.revision,
            history: EnrollmentHistoryEntry(at: clock.now(), event: .configurationDelivered, fromStatus: status, toStatus: status, detail: version),
            outbox: [])
    }

    /// After an app configuration policy changed: a `configuration-changed` SET to every compliant enrollment of
    /// these apps whose configuration version moved (and was neither delivered nor announced yet), at most
    /// `limit` per call — the others learn at their next check-in (`refreshConfiguration`) or long poll.
    /// Returns how many were announced.
    @discardableResult
    func announceConfiguration(tenantId: TenantID, clientIds: Set<AppID>, limit: Int = 1000) async throws -> Int {
        guard let tenant = try await tenants.snapshot(id: tenantId) else { return 0 }
        var announced = 0
        let now = clock.now()
        for clientId in clientIds.sorted() {
            guard let client = tenant.directory.application(appId: clientId) else { continue }
            for enrollment in try await store.enrollments(
                EnrollmentQuery(tenantId: TenantID(tenantId), clientId: AppID(clientId), state: .compliant, limit: limit))
            {
                guard announced < limit, enrollment.isCompliant(at: now) else { continue }
                let merged = tenant.appConfiguration(userId: enrollment.userId, clientId: clientId)
                let version = ConfigurationDelivery.version(merged)
                guard enrollment.configurationAnnouncementDue(current: version, managed: merged.configuration != nil) else { continue }
                var updated = enrollment
                updated.configurationAnnounced = version
                updated.updatedAt = now
                let status = enrollment.complianceStatus.status.rawValue + "/" + enrollment.state.rawValue
                let outbox = try await configurationCallbacks(enrollment: enrollment, version: version, client: client, now: now)
                if try await store.updateEnrollment(
                    updated, expectedRevision: enrollment.revision,
                    history: EnrollmentHistoryEntry(at: now, event: .configurationChanged, fromStatus: status, toStatus: status, detail: version),
                    outbox: outbox) != nil
                {
                    announced += 1
                }
            }
        }
        if announced > 0 { outboxSignal.signal() }
        return announced
    }

    func configurationCallbacks(enrollment: Enrollment, version: String, client: PortcullisCore.Application, now: Date) async throws -> [OutboxMessage] {
        try await outbox(enrollment: enrollment, client: client, now: now) { _ in
            .init(
                deviceComplianceChange: nil, complianceStatus: nil,
                configurationChanged: ConfigurationChangedEvent(enrollmentId: enrollment.id.rawValue, version: version))
        }
    }

    // MARK: Admin and sweeper

    /// Selective wipe: compliance revoked at once, the account's refresh tokens at this client revoked, the
    /// `wipe` command waiting for the next check-in — the enrollment, its history, its callbacks, the token
    /// revocation (the state machine's `revokeTokens` action) and the audit record in one transaction.
    /// `nil` when there is nothing to wipe.
    func wipe(tenantId: TenantID, id: String, actor: String) async throws -> Enrollment? {
        for _ in 0..<5 {
            guard let current = try await store.enrollment(id: RecordID(id)), current.tenantId == tenantId else {
                throw APIError.notFound("The enrollment \(id.prefix(64))")
            }
            let now = clock.now()
            guard let outcome = EnrollmentMachine.wipe(current, now: now) else { return nil }
            guard let client = try await tenants.snapshot(id: tenantId)?.directory.application(appId: current.clientId) else { return nil }
            var after = outcome.enrollment
            after.revision = current.revision + 1
            let audit = AuditRecord(
                tenantId: tenantId, at: now, actor: actor, action: .wipe, kind: .enrollment, documentId: current.id.rawValue,
                // As the admin API shows enrollments (dates ISO 8601).
                before: JSONValue(encoding: current), after: JSONValue(encoding: after))
            if let stored = try await persist(outcome, previous: current, event: .wipeRequested, client: client, now: now, detail: actor, audit: audit) {
                logger.notice(
                    "selective wipe requested",
                    metadata: [
                        LogKeys.clientId: .string(current.clientId.rawValue), "portcullis.enrollment_id": .string(current.id.rawValue),
                    ])
                return stored
            }
        }
        throw StorageError(.unavailable, "the enrollment kept changing under concurrent requests")
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// Lapses every compliant enrollment past its grace period. Returns how many lapsed.
    @discardableResult
    public func lapseOverdue() async throws -> Int {
        let now = clock.now()
        var lapsed = 0
        for enrollment in try await store.lapsingEnrollments(now: now, limit: 500) {
            guard let outcome = EnrollmentMachine.lapse(enrollment, now: now),
                let client = try await tenants.snapshot(tenantSegment: enrollment.tenantId.rawValue)?.directory.application(appId: enrollment.clientId)
            else { continue }
            if try await persist(outcome, previous: enrollment, event: .lapsed, client: client, now: now) != nil { lapsed += 1 }
        }
        return lapsed
    }

    // MARK: Persistence and callbacks

    /// Writes an outcome with its history line, its callback SETs and its other effects (token revocation,
    /// audit), in one transaction; `nil` on a concurrent change (retry).
    func persist(
        _ outcome: EnrollmentMachine.Outcome, previous: Enrollment, event: EnrollmentEvent, client: PortcullisCore.Application, now: Date,
        detail: String? = nil, audit: AuditRecord? = nil
    ) async throws -> Enrollment? {
        var outbox: [OutboxMessage] = []
        if let change = outcome.change {
            outbox = try await callbacks(previous: change.previous, enrollment: outcome.enrollment, client: client, now: now)
        }
        let history = EnrollmentHistoryEntry(
            at: now, event: event, fromStatus: previous.complianceStatus.status.rawValue + "/" + previous.state.rawValue,
            toStatus: outcome.enrollment.complianceStatus.status.rawValue + "/" + outcome.enrollment.state.rawValue, detail: detail)
        // What the change ends and announces (a wipe revokes the app's families for the account; compliance lost or regained
        // is told to receivers) commits with it (PROTOCOL §14.1).
        var committed: CommittedEffects?
        let effects = ChangeEffects.enrollmentChanged(previous: previous, current: outcome.enrollment, wiped: event == .wipeRequested, at: now)
        if !effects.isEmpty || audit != nil {
            let audits = audit.map { [$0] } ?? []
            if let tenant = try await tenants.snapshot(tenantSegment: outcome.enrollment.tenantId.rawValue) {
                committed = transmitter.committed(effects, tenant: tenant, audit: audits)
            } else {
                committed = CommittedEffects(effects: effects, audit: audits)
            }
        }
        let stored = try await store.updateEnrollment(
            outcome.enrollment, expectedRevision: previous.revision, history: history, outbox: outbox, effects: committed)
        if stored != nil && !outbox.isEmpty { outboxSignal.signal() }
        if stored != nil, let committed { transmitter.didCommit(committed) }
        return stored
    }

    /// The SETs announcing a status change, one outbox message per callback URI of the application (or the
    /// one the app chose). URIs come only from the application's registration, never from a request.
    func callbacks(previous: ComplianceStatus?, enrollment: Enrollment, client: PortcullisCore.Application, now: Date) async throws -> [OutboxMessage] {
        let current = enrollment.complianceStatus
        func caep(_ status: ComplianceStatus?) -> String { status?.status == .compliant ? "compliant" : "not-compliant" }
        let flipped = (previous?.status == .compliant) != (current.status == .compliant)
        return try await outbox(enrollment: enrollment, client: client, now: now) { iat in
            .init(
                deviceComplianceChange: flipped && previous != nil
                    ? DeviceComplianceChangeEvent(
                        subject: SubjectIdentifier(id: enrollment.id.rawValue), previousStatus: caep(previous), currentStatus: caep(current),
                        eventTimestamp: iat)
                    : nil,
                complianceStatus: ComplianceStatusEvent(
                    enrollmentId: enrollment.id.rawValue, accountId: enrollment.userId.rawValue, tenantId: enrollment.tenantId.rawValue,
                    upn: enrollment.userPrincipalName,
                    status: current.status, errorTitle: current.errorTitle, errorMessage: current.errorMessage, reason: current.reason,
                    reasonArgument: current.reasonArgument))
        }
    }

    /// One signed SET carrying `events` (given the `iat`), as one outbox message per callback URI of the
    /// application (or the one the app chose). URIs come only from the application's registration.
    func outbox(
        enrollment: Enrollment, client: PortcullisCore.Application, now: Date,
        events: (_ iat: Int) -> ComplianceSecurityEvent.Events
    ) async throws -> [OutboxMessage] {
        let targets = enrollment.callbackUri.map { client.complianceCallbackUris.contains($0) ? [$0] : [] } ?? client.complianceCallbackUris
        guard !targets.isEmpty else { return [] }
        let iat = Int(now.wholeSeconds.timeIntervalSince1970)
        let jti = UUID.randomIdentifierText
        let token = try await signers.signer(tenantId: enrollment.tenantId).sign(
            securityEvent: ComplianceSecurityEvent(
                iss: endpoints.issuer(tenantId: enrollment.tenantId.rawValue), aud: client.appId.rawValue, iat: iat, jti: jti, events: events(iat)))
        return targets.map {
            OutboxMessage(
                id: UUID.randomIdentifierText, tenantId: enrollment.tenantId.rawValue, enrollmentId: enrollment.id.rawValue, targetUri: $0,
                payload: token, jti: jti, nextAttemptAt: now, createdAt: now)
        }
    }
}
