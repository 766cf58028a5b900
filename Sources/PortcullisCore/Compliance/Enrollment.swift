public import Foundation

extension ComplianceStatus {
    // The catalogue of non-compliant statuses (English; the titles and messages are shown to the user as-is).
    public static let policyNotApplied = ComplianceStatus(
        status: .notCompliant, errorTitle: "Protection policy not applied",
        errorMessage: "This app has not applied your organization's protection policy yet. Open the app again to finish setting it up.")
    public static let notTargeted = ComplianceStatus(
        status: .notCompliant, errorTitle: "Account not protected",
        errorMessage:
            "Your organization requires app protection for this account, but no app protection policy is assigned to it for this app. Contact your IT administrator."
    )
    public static let accountNotAllowed = ComplianceStatus(
        status: .notCompliant, errorTitle: "Account not allowed",
        errorMessage: "Your organization does not allow this account to be used with this app. Sign in with an allowed work account.")
    public static let anotherAccountManaged = ComplianceStatus(
        status: .notCompliant, errorTitle: "Another work account is signed in",
        errorMessage: "This app can protect one work account at a time. Remove the other work account from this app, then try again.")
    public static let jailbroken = ComplianceStatus(
        status: .notCompliant, errorTitle: "Device not supported",
        errorMessage: "Your organization's data cannot be used on a jailbroken or rooted device.")
    public static func osTooOld(_ minimum: String) -> ComplianceStatus {
        ComplianceStatus(
            status: .notCompliant, errorTitle: "Update your device",
            errorMessage: "Your organization requires operating system version \(minimum) or later. Update your device, then try again.")
    }
    public static func appTooOld(_ minimum: String) -> ComplianceStatus {
        ComplianceStatus(
            status: .notCompliant, errorTitle: "Update this app",
            errorMessage: "Your organization requires version \(minimum) or later of this app. Update the app, then try again.")
    }
    public static let pinRequiredInteractive = ComplianceStatus(
        status: .interactionRequired, errorTitle: "PIN required",
        errorMessage: "Your organization requires a PIN for this app. Set a PIN to continue.")
    public static let pinRequired = ComplianceStatus(
        status: .notCompliant, errorTitle: "PIN required",
        errorMessage: "Your organization requires a PIN for this app, and none is set.")
    public static let lapsed = ComplianceStatus(
        status: .notCompliant, errorTitle: "Compliance check overdue",
        errorMessage: "This app has not checked in with your organization for too long. Connect to the network and open the app to check in again.")
    public static let wiped = ComplianceStatus(
        status: .notCompliant, errorTitle: "Work data removed",
        errorMessage: "Your organization removed its data from this app for this account.")
    public static let unenrolled = ComplianceStatus(
        status: .notCompliant, errorTitle: "Account removed",
        errorMessage: "This account is no longer protected in this app.")
}

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

    public var id: String
    public var tenantId: String
    public var userId: String
    public var userPrincipalName: String
    public var clientId: String
    public var deviceId: String
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
        id: String, tenantId: String, userId: String, userPrincipalName: String, clientId: String, deviceId: String,
        platform: DevicePlatform?, osVersion: String?, appVersion: String?, sdkVersion: String?, state: State,
        complianceStatus: ComplianceStatus, policyVersion: String?, appliedPolicyVersion: String?, callbackUri: String?,
        enrolledAt: Date, lastCheckInAt: Date?, lapsesAt: Date?, updatedAt: Date, revision: Int64 = 0
    ) {
        self.id = id
        self.tenantId = tenantId
        self.userId = userId.lowercased()
        self.userPrincipalName = userPrincipalName
        self.clientId = clientId.lowercased()
        self.deviceId = deviceId.lowercased()
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

/// An app instance's public key as a JWK (RFC 7517): EC P-256, `x` and `y` base64url (32 bytes each).
/// Unknown members (`kid`, `use`, `alg`…) are ignored; whether the point is on the curve is the server's check.
public struct AppKeyJWK: Codable, Sendable, Equatable, Hashable {
    public var kty: String
    public var crv: String
    public var x: String
    public var y: String

    public init(kty: String = "EC", crv: String = "P-256", x: String, y: String) {
        self.kty = kty
        self.crv = crv
        self.x = x
        self.y = y
    }
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
    public static func permits(_ tenant: Tenant, userId: String, userPrincipalName: String) -> Bool {
        guard let allowed = tenant.allowedAccounts else { return true }
        return allowed.contains { $0.lowercased() == userId.lowercased() || $0.lowercased() == userPrincipalName.lowercased() }
    }
}
