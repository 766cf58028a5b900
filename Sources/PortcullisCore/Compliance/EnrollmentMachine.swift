public import Foundation

/// The enrollment state machine (PROTOCOL §5): pure functions from (enrollment, input, policy, now) to the
/// next enrollment and the actions the service must carry out. No I/O, no clock.
public enum EnrollmentMachine {
    /// A compliance status change, for the callbacks.
    public struct StatusChange: Sendable, Equatable {
        public let previous: ComplianceStatus
        public let current: ComplianceStatus
        /// Whether compliance itself flipped (compliant ↔ not), for the CAEP device-compliance-change event.
        public var complianceFlipped: Bool { (previous.status == .compliant) != (current.status == .compliant) }
    }

    public struct Outcome: Sendable, Equatable {
        public var enrollment: Enrollment
        public var statusCode: EnrollmentStatusCode
        /// Send the merged policy in the response.
        public var deliverPolicy: Bool
        public var commands: [EnrollmentCommand]
        public var change: StatusChange?
        /// Revoke the account's refresh-token families at this client (wipe).
        public var revokeTokens: Bool
    }

    /// The launch conditions of a policy against a report: `nil` when they pass.
    public static func launchFailure(_ policy: MergedAppProtectionPolicy, _ report: CheckInReport) -> ComplianceStatus? {
        let settings = policy.settings
        if settings.blockJailbrokenDevices == true && report.jailbroken == true { return .jailbroken }
        if let minimum = settings.minimumOsVersion {
            guard let os = report.osVersion, SoftwareVersion.compare(os, minimum) >= 0 else { return .osTooOld(minimum) }
        }
        if let minimum = settings.minimumAppVersion {
            guard let app = report.appVersion, SoftwareVersion.compare(app, minimum) >= 0 else { return .appTooOld(minimum) }
        }
        if settings.pinRequired == true && report.pinSet != true { return report.silent ? .pinRequiredInteractive : .pinRequired }
        return nil
    }

    /// A new enrollment of a targeted account: pending until a good check-in acknowledges `policy`.
    public static func enroll(
        id: RecordID, tenantId: TenantID, userId: ObjectID, userPrincipalName: String, clientId: AppID, deviceId: DeviceID,
        platform: DevicePlatform?, osVersion: String?, appVersion: String?, sdkVersion: String?, callbackUri: String?,
        policy: MergedAppProtectionPolicy, now: Date
    ) -> Outcome {
        let enrollment = Enrollment(
            id: id, tenantId: tenantId, userId: userId, userPrincipalName: userPrincipalName, clientId: clientId, deviceId: deviceId,
            platform: platform, osVersion: osVersion, appVersion: appVersion, sdkVersion: sdkVersion, state: .pending,
            complianceStatus: .policyNotApplied, policyVersion: policy.version, appliedPolicyVersion: nil, callbackUri: callbackUri,
            enrolledAt: now, lastCheckInAt: nil, lapsesAt: nil, updatedAt: now)
        return Outcome(enrollment: enrollment, statusCode: .newPoliciesReceived, deliverPolicy: true, commands: [], change: nil, revokeTokens: false)
    }

    /// A check-in. `policy` is the current merged policy for the account in this app (`nil`: no longer targeted).
    public static func checkIn(_ current: Enrollment, report: CheckInReport, policy: MergedAppProtectionPolicy?, now: Date) -> Outcome {
        var next = current
        next.updatedAt = now
        if current.state == .wipePending {
            return Outcome(enrollment: next, statusCode: .wipeReceived, deliverPolicy: false, commands: [.wipe], change: nil, revokeTokens: false)
        }
        next.osVersion = report.osVersion ?? current.osVersion
        next.appVersion = report.appVersion ?? current.appVersion
        next.lastCheckInAt = now
        let previous = effectiveStatus(current, now: now)

        guard let policy else {
            next.state = .notCompliant
            next.complianceStatus = .notTargeted
            next.lapsesAt = nil
            return Outcome(
                enrollment: next, statusCode: .noPolicyReceived, deliverPolicy: false, commands: [],
                change: change(previous, next.complianceStatus), revokeTokens: false)
        }
        next.policyVersion = policy.version
        if let applied = report.appliedPolicyVersion { next.appliedPolicyVersion = applied }
        let acknowledged = next.appliedPolicyVersion == policy.version
        let deliver = !acknowledged

        if let failure = launchFailure(policy, report) {
            next.state = .notCompliant
            next.complianceStatus = failure
            next.lapsesAt = nil
        } else if acknowledged || current.isCompliant(at: now) {
            // Compliant: either it acknowledged the current version, or it already was and receives the
            // new version now (it stays compliant while it applies it).
            next.state = .compliant
            next.complianceStatus = .compliant
            next.lapsesAt = now.addingTimeInterval(policy.gracePeriod)
        } else {
            next.state = .pending
            next.complianceStatus = .policyNotApplied
            next.lapsesAt = nil
        }
        return Outcome(
            enrollment: next, statusCode: deliver ? .newPoliciesReceived : .policiesUnchanged, deliverPolicy: deliver,
            commands: [], change: change(previous, next.complianceStatus), revokeTokens: false)
    }

    /// An admin's selective wipe: compliance is revoked at once, tokens revoked, the next check-in wipes.
    public static func wipe(_ current: Enrollment, now: Date) -> Outcome? {
        guard current.state != .unenrolled, current.state != .wipePending else { return nil }
        var next = current
        next.state = .wipePending
        next.complianceStatus = .wiped
        next.lapsesAt = nil
        next.updatedAt = now
        return Outcome(
            enrollment: next, statusCode: .wipeReceived, deliverPolicy: false, commands: [.wipe],
            change: change(effectiveStatus(current, now: now), next.complianceStatus), revokeTokens: true)
    }

    /// Unenrollment by the app (also the acknowledgement of a wipe). Frees the app instance's managed slot.
    public static func unenroll(_ current: Enrollment, now: Date) -> Outcome {
        var next = current
        next.state = .unenrolled
        next.complianceStatus = .unenrolled
        next.lapsesAt = nil
        next.updatedAt = now
        let previous = effectiveStatus(current, now: now)
        return Outcome(
            enrollment: next, statusCode: .unenrollmentSucceeded, deliverPolicy: false, commands: [],
            change: previous.status == .compliant ? change(previous, next.complianceStatus) : nil, revokeTokens: false)
    }

    /// The grace-period sweep: a compliant enrollment whose grace period has passed lapses.
    public static func lapse(_ current: Enrollment, now: Date) -> Outcome? {
        guard current.state == .compliant, let lapsesAt = current.lapsesAt, lapsesAt <= now else { return nil }
        var next = current
        next.state = .lapsed
        next.complianceStatus = .lapsed
        next.updatedAt = now
        return Outcome(
            enrollment: next, statusCode: .policiesUnchanged, deliverPolicy: false, commands: [],
            change: change(.compliant, .lapsed), revokeTokens: false)
    }

    /// The status as of `now` (a compliant enrollment past its grace period is effectively lapsed).
    public static func effectiveStatus(_ enrollment: Enrollment, now: Date) -> ComplianceStatus {
        if enrollment.state == .compliant && !enrollment.isCompliant(at: now) { return .lapsed }
        return enrollment.complianceStatus
    }

    static func change(_ previous: ComplianceStatus, _ current: ComplianceStatus) -> StatusChange? {
        previous == current ? nil : StatusChange(previous: previous, current: current)
    }
}
