public import Foundation
public import PortcullisAPI
public import PortcullisVocabulary

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// This app instance, as the compliance service sees it.
public struct DeviceInfo: Sendable {
    /// Stable per app installation (the Intune SDK's device/app instance identifier).
    public var deviceId: String
    /// `iOS`, `android`, `windows`, `macOS` or `linux`.
    public var platform: String
    public var osVersion: String
    public var appVersion: String
    public var sdkVersion: String
    public var jailbroken: Bool

    public init(
        deviceId: String, platform: String, osVersion: String, appVersion: String, sdkVersion: String = PortcullisClientVersion.string, jailbroken: Bool = false
    ) {
        self.deviceId = deviceId
        self.platform = platform
        self.osVersion = osVersion
        self.appVersion = appVersion
        self.sdkVersion = sdkVersion
        self.jailbroken = jailbroken
    }
}

/// What the app reports after applying a policy.
public struct PolicyApplication: Sendable, Equatable {
    /// The app applied the policy's settings.
    public var applied: Bool
    /// An app PIN is set (asked for when `interactive` and the policy requires one).
    public var pinSet: Bool
    /// The user cancelled what the app asked of them (the PIN prompt, say): the remediation ends `userCancelled`
    /// without a check-in, and nothing about the enrollment changes.
    public var cancelled: Bool

    public init(applied: Bool, pinSet: Bool, cancelled: Bool = false) {
        self.applied = applied
        self.pinSet = pinSet
        self.cancelled = cancelled
    }

    /// The user cancelled.
    public static let cancelled = PolicyApplication(applied: false, pinSet: false, cancelled: true)
}

/// The app's part of remediation: apply a policy's settings (and, when interactive, ask the user for what
/// is missing, such as a PIN).
public protocol PolicyApplier: Sendable {
    func apply(_ policy: PolicyDocument, for account: Account, interactive: Bool) async -> PolicyApplication
}

/// The Intune SDK's policy delegate: selective wipe and restart.
public protocol ComplianceDelegate: AnyObject, Sendable {
    /// Remove every piece of this account's data; return `true` when done.
    func wipeData(for account: Account) async -> Bool
    /// A newly received policy changes how the app must store the account's data (file encryption): the
    /// app should save its state and restart, so that everything it opens from now on follows the policy.
    func restartApplication() async
    /// The organization's configuration for this app could not be decoded into the app's type (the stream
    /// yielded `nil` instead of crashing): a newer server, or a policy that does not match the app.
    func configurationDecodingFailed(_ error: any Error, for account: Account) async
    /// The SDK needs the app to show `account` (`nil`: unmanaged) instead of the identity it shows now, because data
    /// owned by it is being opened (seed 002's `identitySwitchRequired`). Return `true` to switch (the launch conditions
    /// then run), `false` to refuse. The default refuses.
    func identitySwitchRequired(to account: Account?) async -> Bool
    /// A switch to `account` was refused: by the launch conditions (`status`), or by the app (`nil`).
    func identitySwitchRefused(to account: Account?, status: ComplianceStatus?) async
}

extension ComplianceDelegate {
    public func identitySwitchRequired(to account: Account?) async -> Bool { false }
    public func identitySwitchRefused(to account: Account?, status: ComplianceStatus?) async {}
    public func restartApplication() async {}
    public func configurationDecodingFailed(_ error: any Error, for account: Account) async {}
}

/// A compliance status change for one account (the `hasComplianceStatus` callback).
public struct ComplianceStatusUpdate: Sendable, Equatable {
    public var account: Account
    public var status: ComplianceStatus
}

/// What the SDK remembers about an account's enrollment between runs.
public struct EnrollmentState: Codable, Sendable, Equatable {
    public var account: Account
    public var enrollmentId: String
    public var policy: PolicyDocument?
    public var appliedVersion: String?
    public var status: ComplianceStatus
    public var recheckIntervalMinutes: Int?
    /// The account's tenant's allowed accounts as last delivered (kept so that a restarted app still refuses first).
    public var tenantAllowedAccounts: DeliveredAllowedAccounts?
}

/// Where enrollment state lives (`InMemoryComplianceStateStore`, `FileComplianceStateStore`, or your own).
public protocol ComplianceStateStore: Sendable {
    func state(homeAccountId: String) async throws -> EnrollmentState?
    func states() async throws -> [EnrollmentState]
    func store(_ state: EnrollmentState) async throws
    func remove(homeAccountId: String) async throws
}

public actor InMemoryComplianceStateStore: ComplianceStateStore {
    private var values: [String: EnrollmentState] = [:]
    public init() {}
    public func state(homeAccountId: String) -> EnrollmentState? { values[homeAccountId.lowercased()] }
    public func states() -> [EnrollmentState] { Array(values.values) }
    public func store(_ state: EnrollmentState) { values[state.account.homeAccountId] = state }
    public func remove(homeAccountId: String) { values[homeAccountId.lowercased()] = nil }
}

public actor FileComplianceStateStore: ComplianceStateStore {
    public let url: URL
    public init(url: URL) { self.url = url }

    private func load() throws -> [String: EnrollmentState] {
        guard let data = try? Data(contentsOf: url) else { return [:] }
        return try JSONDecoder().decode([String: EnrollmentState].self, from: data)
    }

    private func save(_ values: [String: EnrollmentState]) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try encoder.encode(values).write(to: url, options: .atomic)
    }

    public func state(homeAccountId: String) throws -> EnrollmentState? { try load()[homeAccountId.lowercased()] }
    public func states() throws -> [EnrollmentState] { Array(try load().values) }
    public func store(_ state: EnrollmentState) throws {
        var values = try load()
        values[state.account.homeAccountId] = state
        try save(values)
    }
    public func remove(homeAccountId: String) throws {
        var values = try load()
        values[homeAccountId.lowercased()] = nil
        try save(values)
    }
}

/// The client side of the compliance service (the Intune SDK's `IntuneMAMComplianceManager` and
/// policy manager): remediation, check-ins, wipe, status updates, and the policy queries the app asks
/// before saving or opening data.
public actor ComplianceManager: ComplianceRemediator {
    public static let complianceScope = "api://portcullis-compliance/.default"

    public let application: PublicClientApplication
    public let device: DeviceInfo
    let applier: any PolicyApplier
    weak var delegate: (any ComplianceDelegate)?
    public nonisolated let stateStore: any ComplianceStateStore
    let callbackUri: String?
    /// The instance keys secrets are sealed to (`nil`: this app takes no secrets).
    public nonisolated let keyStore: (any InstanceKeyStore)?
    /// The accounts the app is allowed to use (UPNs or object IDs), `nil` for no restriction.
    public let allowedAccounts: [String]?
    private let continuation: AsyncStream<ComplianceStatusUpdate>.Continuation
    /// Enrollments being wiped right now: a wipe runs once however many paths learn of it, and every path
    /// waits for it to finish (data, enrollment state, instance key and tokens all gone).
    var wipesInProgress: [String: Task<ComplianceStatus, Never>] = [:]
    /// Every compliance status the manager learns, in order (the app's `hasComplianceStatus`).
    public nonisolated let statusUpdates: AsyncStream<ComplianceStatusUpdate>
    /// The language of the statuses' titles and messages: the first of the configuration's languages we have.
    public nonisolated let language: MessageLanguage
    /// The tenants' allowed accounts as the server last delivered them (PROTOCOL §4, §16), by tenant ID.
    var tenantAllowedAccounts: [String: DeliveredAllowedAccounts] = [:]
    let allowedContinuation: AsyncStream<AllowedAccountsChange>.Continuation
    /// Each change of a tenant's allowed accounts, as the server delivers it with the policy (the Intune SDK's
    /// `IntuneMAMAllowedAccountsDidChangeNotification`).
    public nonisolated let allowedAccountsUpdates: AsyncStream<AllowedAccountsChange>
    /// The identity the app shows now (`switchIdentity(to:)`), `nil` for none (unmanaged). A task's own
    /// `withIdentity` scope comes first (`effectiveIdentity`).
    public internal(set) var uiIdentity: Account?
    /// Where the app keeps protected files, scanned for a wiped account's files when the delegate leaves them.
    public nonisolated let protectedFileDirectories: [URL]

    public init(
        application: PublicClientApplication, device: DeviceInfo, applier: any PolicyApplier, delegate: (any ComplianceDelegate)? = nil,
        stateStore: any ComplianceStateStore = InMemoryComplianceStateStore(), callbackUri: String? = nil, allowedAccounts: [String]? = nil,
        keyStore: (any InstanceKeyStore)? = nil, protectedFileDirectories: [URL] = []
    ) {
        self.keyStore = keyStore
        self.protectedFileDirectories = protectedFileDirectories
        self.language = application.configuration.messageLanguage
        (allowedAccountsUpdates, allowedContinuation) = AsyncStream.makeStream(of: AllowedAccountsChange.self, bufferingPolicy: .bufferingNewest(64))
        self.application = application
        self.device = device
        self.applier = applier
        self.delegate = delegate
        self.stateStore = stateStore
        self.callbackUri = callbackUri
        self.allowedAccounts = allowedAccounts
        (statusUpdates, continuation) = AsyncStream.makeStream(of: ComplianceStatusUpdate.self, bufferingPolicy: .unbounded)
        application.remediator = self
    }

    public func setDelegate(_ delegate: (any ComplianceDelegate)?) { self.delegate = delegate }

    // MARK: ComplianceRemediator

    public func enrollmentId(for account: Account) async -> String? {
        try? await stateStore.state(homeAccountId: account.homeAccountId)?.enrollmentId
    }

    public func enrollmentId(forUsername username: String) async -> String? {
        try? await stateStore.states().first { $0.account.matches(identity: username) }?.enrollmentId
    }

    /// `remediateCompliance(accountId, silent)`: enroll if needed, apply the policy, check in. Never
    /// throws: the result is a compliance status, with a title and message to show when not compliant.
    public func remediate(account: Account, silent: Bool) async -> ComplianceStatus {
        // Refused here, before the server does: the app's own list, and the tenant's as the server last delivered it.
        let tenantAllowed = await trustedAllowedAccounts(tenantId: account.tenantId, now: Date())
        if !Self.isAccountAllowed(account, allowed: allowedAccounts) || !Self.isAccountAllowed(account, allowed: tenantAllowed) {
            return publish(account, ComplianceStatus(.notCompliant, .accountNotAllowed, language: language))
        }
        var appKey: AppKeyJWK?
        if let keyStore {
            // Registered at every remediation: the server keeps it, or replaces a key this store lost.
            do { appKey = try await keyStore.publicKey(for: account) } catch {
                return publish(account, ComplianceStatus(.serviceFailure, .deviceKeyUnavailable, language: language))
            }
        }
        let body = RemediationRequest(
            deviceId: device.deviceId, platform: device.platform, osVersion: device.osVersion, appVersion: device.appVersion,
            sdkVersion: device.sdkVersion, silent: silent, callbackUri: callbackUri, appKey: appKey)
        let response: EnrollmentResponse
        switch await call("POST", "remediations", body: body, account: account) {
        case .success(let value): response = value
        case .failure(let failure): return publish(account, failure.status)
        }
        return await handle(response, account: account, silent: silent, depth: 0)
    }

    /// A check-in for an enrolled account (also what periodic check-ins run).
    public func checkIn(account: Account, silent: Bool = true) async -> ComplianceStatus {
        guard let state = try? await stateStore.state(homeAccountId: account.homeAccountId) else {
            return ComplianceStatus(.notCompliant, .notEnrolled, language: language)
        }
        return await sendCheckIn(state, silent: silent, depth: 0)
    }

    /// Checks in every enrolled account every `interval` (default: the policy's recheck interval) until the
    /// calling task is cancelled. Run it in the app's own task.
    public func runPeriodicCheckIns(every interval: Duration? = nil) async {
        while !Task.isCancelled {
            let states = (try? await stateStore.states()) ?? []
            for state in states { _ = await checkIn(account: state.account) }
            let minutes = states.compactMap(\.recheckIntervalMinutes).min() ?? 30
            do { try await Task.sleep(for: interval ?? .seconds(minutes * 60)) } catch { return }
        }
    }

    /// Signs the managed account out of this app instance: unenrolls it (freeing the single managed slot).
    /// The app removes its data; other accounts are untouched.
    public func unenroll(account: Account) async throws {
        guard let state = try await stateStore.state(homeAccountId: account.homeAccountId) else { return }
        if case .failure(let failure) = await call("DELETE", "enrollments/\(state.enrollmentId)", body: Optional<String>.none, account: account),
            failure.status.status == .networkFailure
        {
            throw PortcullisClientError.transport("cannot reach the compliance service to unenroll")
        }
        try await stateStore.remove(homeAccountId: account.homeAccountId)
        try? await keyStore?.removeKey(for: account)
        if uiIdentity == account { uiIdentity = nil }
        _ = publish(account, ComplianceStatus(.notCompliant, .unenrolled, language: language))
    }

    // MARK: Policy queries (seed 003)

    /// The policy the account's data is under, or `nil` for an unmanaged account (no restrictions).
    public func policy(for account: Account?) async -> PolicyDocument? {
        guard let account else { return nil }
        return try? await stateStore.state(homeAccountId: account.homeAccountId)?.policy
    }

    /// `isFileEncryptionRequired`: every file the app writes for this account must be encrypted.
    public func fileEncryptionRequired(account: Account?) async -> Bool {
        await policy(for: account)?.settings.fileEncryptionRequired ?? false
    }

    /// Allowed accounts: `nil` allows everyone; otherwise UPN or object ID, case-insensitive.
    public static func isAccountAllowed(_ account: Account, allowed: [String]?) -> Bool {
        guard let allowed else { return true }
        return allowed.contains { account.matches(identity: $0) }
    }

    // MARK: Internals

    var networkFailure: ComplianceStatus { ComplianceStatus(.networkFailure, .networkFailure, language: language) }

    func handle(_ response: EnrollmentResponse, account: Account, silent: Bool, depth: Int) async -> ComplianceStatus {
        noteAllowedAccounts(response, tenantId: account.tenantId)
        guard let id = response.enrollmentId else { return publish(account, response.complianceStatus) }
        if response.commands?.contains("wipe") == true { return await wipe(account: account, enrollmentId: id) }
        var state =
            (try? await stateStore.state(homeAccountId: account.homeAccountId))
            ?? EnrollmentState(
                account: account, enrollmentId: id, policy: nil, appliedVersion: nil, status: response.complianceStatus)
        state.enrollmentId = id
        state.status = response.complianceStatus
        state.recheckIntervalMinutes = response.recheckIntervalMinutes ?? state.recheckIntervalMinutes
        state.tenantAllowedAccounts = tenantAllowedAccounts[state.account.tenantId] ?? state.tenantAllowedAccounts
        if let policy = response.policy { state.policy = policy }
        try? await stateStore.store(state)
        return await sendCheckIn(state, silent: silent, depth: depth)
    }

    func sendCheckIn(_ state: EnrollmentState, silent: Bool, depth: Int) async -> ComplianceStatus {
        var state = state
        var application = PolicyApplication(applied: state.appliedVersion != nil, pinSet: false)
        if let policy = state.policy {
            application = await applier.apply(policy, for: state.account, interactive: !silent)
            if application.cancelled { return publish(state.account, ComplianceStatus(.userCancelled, .userCancelled, language: language)) }
            if application.applied { state.appliedVersion = policy.version }
        }
        let body = CheckInRequest(
            appliedPolicyVersion: state.appliedVersion, osVersion: device.osVersion, appVersion: device.appVersion,
            jailbroken: device.jailbroken, pinSet: application.pinSet, silent: silent)
        let response: EnrollmentResponse
        switch await call("POST", "enrollments/\(state.enrollmentId)/checkin", body: body, account: state.account) {
        case .success(let value): response = value
        case .failure(let failure):
            if failure.status.status == .notCompliant {  // gone: the enrollment no longer exists
                try? await stateStore.remove(homeAccountId: state.account.homeAccountId)
            }
            return publish(state.account, failure.status)
        }
        noteAllowedAccounts(response, tenantId: state.account.tenantId)
        if response.commands?.contains("wipe") == true { return await wipe(account: state.account, enrollmentId: state.enrollmentId) }
        state.status = response.complianceStatus
        state.recheckIntervalMinutes = response.recheckIntervalMinutes ?? state.recheckIntervalMinutes
        state.tenantAllowedAccounts = tenantAllowedAccounts[state.account.tenantId] ?? state.tenantAllowedAccounts
        if let policy = response.policy, policy.version != state.appliedVersion, depth < 2 {
            // A newer policy: apply it and acknowledge it at once. If it changes file encryption for data
            // the app already holds, the app must restart to re-open that data under the new rule.
            if let previous = state.policy, previous.settings.fileEncryptionRequired != policy.settings.fileEncryptionRequired {
                await delegate?.restartApplication()
            }
            state.policy = policy
            try? await stateStore.store(state)
            return await sendCheckIn(state, silent: silent, depth: depth + 1)
        }
        try? await stateStore.store(state)
        return publish(state.account, response.complianceStatus)
    }

    func wipe(account: Account, enrollmentId: String) async -> ComplianceStatus {
        // Once per enrollment, however many paths (check-in, configuration stream, secret look-up) learn of it at the same time.
        if let running = wipesInProgress[enrollmentId] { return await running.value }
        let wiping = Task { await self.carryOutWipe(account: account, enrollmentId: enrollmentId) }
        wipesInProgress[enrollmentId] = wiping
        let status = await wiping.value
        wipesInProgress[enrollmentId] = nil
        return status
    }

    private func carryOutWipe(account: Account, enrollmentId: String) async -> ComplianceStatus {
        // Seed 002's `wipeDataForAccount`: when the app answers `false`, the SDK removes the account's protected files itself.
        var removed = await delegate?.wipeData(for: account) ?? false
        if !removed { removed = removeProtectedFiles(of: account) }
        _ = await call("DELETE", "enrollments/\(enrollmentId)", body: Optional<String>.none, account: account)
        try? await stateStore.remove(homeAccountId: account.homeAccountId)
        // The instance keys go too: a device identity certified for them must not outlive the wipe, and the account's
        // data protection key with them, so that whatever was protected for it can no longer be opened.
        try? await keyStore?.removeKey(for: account)
        try? await application.signOut(account: account)
        if uiIdentity == account { uiIdentity = nil }
        return publish(account, ComplianceStatus(.notCompliant, removed ? .wiped : .wipedPartially, language: language))
    }

    @discardableResult
    func publish(_ account: Account, _ status: ComplianceStatus) -> ComplianceStatus {
        continuation.yield(ComplianceStatusUpdate(account: account, status: status))
        return status
    }

    /// A token for the compliance service, from the cache or refreshed (`forceRefresh` after a 401).
    func complianceToken(_ account: Account, forceRefresh: Bool = false) async -> Result<String, StatusFailure> {
        do {
            return .success(try await application.acquireTokenSilent(account: account, scopes: [Self.complianceScope], forceRefresh: forceRefresh).accessToken)
        } catch let error as PortcullisClientError where error.kind == .transport {
            return .failure(StatusFailure(networkFailure))
        } catch let error as PortcullisClientError where error.kind == .temporarilyUnavailable {
            return .failure(StatusFailure(ComplianceStatus(.serviceFailure, .serviceFailure, argument: "503", language: language)))
        } catch {
            return .failure(StatusFailure(ComplianceStatus(.interactionRequired, .signInAgain, language: language)))
        }
    }

    /// A `/mam/v1` call for `account`; a rejected token (401) is refreshed once. A failure comes back as the status to report.
    func call<Body: Encodable & Sendable>(_ method: String, _ path: String, body: Body?, account: Account) async -> Result<EnrollmentResponse, StatusFailure> {
        let url = application.configuration.baseURL.appendingPathComponent("mam/v1").appendingPathComponent(path)
        var reply: HTTPTransport.Reply?
        for forceRefresh in [false, true] {
            let token: String
            switch await complianceToken(account, forceRefresh: forceRefresh) {
            case .success(let value): token = value
            case .failure(let failure): return .failure(failure)
            }
            do {
                reply = try await application.transport.send(
                    url, method: method, json: try body.map { try JSONEncoder().encode($0) }, bearer: token,
                    correlationId: UUID().identifierText)
            } catch {
                return .failure(StatusFailure(networkFailure))
            }
            if reply?.status != 401 { break }
        }
        guard let reply else { return .failure(StatusFailure(networkFailure)) }
        if reply.status < 500, var response = try? JSONDecoder().decode(EnrollmentResponse.self, from: reply.body) {
            response.complianceStatus = response.complianceStatus.localized(language)
            return .success(response)
        }
        if reply.status == 410 || reply.status == 404 {
            return .failure(StatusFailure(ComplianceStatus(.notCompliant, .enrollmentRemoved, language: language)))
        }
        return .failure(StatusFailure(ComplianceStatus(.serviceFailure, .serviceFailure, argument: String(reply.status), language: language)))
    }

    struct StatusFailure: Error {
        let status: ComplianceStatus
        init(_ status: ComplianceStatus) { self.status = status }
    }
}
