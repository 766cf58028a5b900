public import Foundation

/// One managed account's enrollment of one app instance (device + client application).
public struct Enrollment: Codable, Sendable, Equatable {
    public enum State: String, Codable, Sendable, CaseIterable {
        /// Enrolled; the current policy not yet acknowledged by a good check-in.
        case pending
        case compliant
        /// The last check-in failed a launch condition, or the account is no longer targeted.
        case notCompliant
        /// Compliant once, but no check-in arrived within the grace period.
        case lapsed
        /// An admin wiped it; the next check-in delivers the wipe command.
        case wipePending
        /// Unenrolled (by the app, or acknowledging a wipe). Terminal.
        case unenrolled
    }

    public var id: RecordID
    public var tenantId: TenantID
    public var userId: ObjectID
    public var userPrincipalName: String
    public var clientId: AppID
    public var deviceId: DeviceID
    public var platform: DevicePlatform?
    public var osVersion: String?
    public var appVersion: String?
    public var sdkVersion: String?
    public var state: State
    public var complianceStatus: ComplianceStatus
    /// The merged policy version last delivered, and the one the app said it applied.
    public var policyVersion: String?
    public var appliedPolicyVersion: String?
    /// The callback URI the app chose among its registered ones (`nil`: all of them).
    public var callbackUri: String?
    public var enrolledAt: Date
    public var lastCheckInAt: Date?
    /// When a compliant enrollment lapses without another good check-in.
    public var lapsesAt: Date?
    public var updatedAt: Date
    /// Optimistic-concurrency version, managed by the store.
    public var revision: Int64
    /// The app configuration version last delivered to the app (PROTOCOL §8.2), and the last one announced by a
    /// `configuration-changed` callback: a check-in answers `refreshConfiguration` while the current version
    /// differs from the delivered one.
    public var configurationVersion: String? = nil
    public var configurationAnnounced: String? = nil
    /// The app instance's key (PROTOCOL §8.2): secrets are sealed to it, device identities certify it.
    public var appKey: AppKeyJWK? = nil

    public init(
        id: RecordID, tenantId: TenantID, userId: ObjectID, userPrincipalName: String, clientId: AppID, deviceId: DeviceID,
        platform: DevicePlatform?, osVersion: String?, appVersion: String?, sdkVersion: String?, state: State,
        complianceStatus: ComplianceStatus, policyVersion: String?, appliedPolicyVersion: String?, callbackUri: String?,
        enrolledAt: Date, lastCheckInAt: Date?, lapsesAt: Date?, updatedAt: Date, revision: Int64 = 0
    ) {
        self.id = id
        self.tenantId = tenantId
        self.userId = userId
        self.userPrincipalName = userPrincipalName
        self.clientId = clientId
        self.deviceId = deviceId
        self.platform = platform
        self.osVersion = osVersion
        self.appVersion = appVersion
        self.sdkVersion = sdkVersion
        self.state = state
        self.complianceStatus = complianceStatus
        self.policyVersion = policyVersion
        self.appliedPolicyVersion = appliedPolicyVersion
        self.callbackUri = callbackUri
        self.enrolledAt = enrolledAt
        self.lastCheckInAt = lastCheckInAt
        self.lapsesAt = lapsesAt
        self.updatedAt = updatedAt
        self.revision = revision
    }

    /// Whether this enrollment satisfies app protection now: compliant and checked in within its grace period.
    public func isCompliant(at now: Date) -> Bool {
        state == .compliant && (lapsesAt.map { now < $0 } ?? false)
    }

    /// Whether the app instance lacks its current configuration (PROTOCOL §8.2): the `current` version is not the
    /// one last delivered — never for an instance that had none and still has none (`managed` false).
    public func configurationOutdated(current: String, managed: Bool) -> Bool {
        if configurationVersion == nil && !managed { return false }
        return configurationVersion != current
    }

    /// Whether a `configuration-changed` callback is due: outdated, and that version not announced already.
    public func configurationAnnouncementDue(current: String, managed: Bool) -> Bool {
        configurationOutdated(current: current, managed: managed) && configurationAnnounced != current
    }

    /// Whether it still holds the app instance's managed-account slot.
    public var isActive: Bool { state != .unenrolled }
}

/// What an app instance reports at check-in.
public struct CheckInReport: Sendable, Equatable {
    public var appliedPolicyVersion: String?
    public var osVersion: String?
    public var appVersion: String?
    public var jailbroken: Bool?
    public var pinSet: Bool?
    /// The call cannot show UI (remediation with `silent: true`).
    public var silent: Bool

    public init(appliedPolicyVersion: String?, osVersion: String?, appVersion: String?, jailbroken: Bool?, pinSet: Bool?, silent: Bool = false) {
        self.appliedPolicyVersion = appliedPolicyVersion
        self.osVersion = osVersion
        self.appVersion = appVersion
        self.jailbroken = jailbroken
        self.pinSet = pinSet
        self.silent = silent
    }
}

/// Whether an account may enroll under the tenant's `allowedAccounts` (UPN or object ID, case-insensitive).
public enum AllowedAccounts {
    public static func permits(_ tenant: Tenant, userId: ObjectID, userPrincipalName: String) -> Bool {
        guard let allowed = tenant.allowedAccounts else { return true }
        return allowed.contains(AccountName(userId.rawValue)) || allowed.contains(AccountName(userPrincipalName))
    }
}
