import Foundation

/// The Intune SDK's compliance statuses (`IntuneMAMComplianceStatus`). `networkFailure` and
/// `userCancelled` only ever arise on the client.
public enum ComplianceStatusValue: String, Codable, Sendable, CaseIterable {
    case compliant, notCompliant, serviceFailure, networkFailure, interactionRequired, userCancelled
}

/// A compliance status with the localized title and message the app shows the user when it is not compliant.
public struct ComplianceStatus: Codable, Sendable, Equatable {
    public var status: ComplianceStatusValue
    public var errorTitle: String?
    public var errorMessage: String?

    public init(status: ComplianceStatusValue, errorTitle: String? = nil, errorMessage: String? = nil) {
        self.status = status
        self.errorTitle = errorTitle
        self.errorMessage = errorMessage
    }

    public static let compliant = ComplianceStatus(status: .compliant)
}

/// The Intune SDK's enrollment status codes (`IntuneMAMEnrollmentStatus`), plus one of Portcullis's own.
public enum EnrollmentStatusCode: Int, Codable, Sendable {
    case newPoliciesReceived = 100
    case policiesUnchanged = 101
    case wipeReceived = 102
    case noPolicyReceived = 103
    case unenrollmentSucceeded = 104
    case alreadyEnrolled = 208
    case licensedNotTargeted = 225
    case singleManagedAccountMode = 227
    /// Portcullis: the tenant's `allowedAccounts` does not include this account.
    case accountNotAllowed = 230
}
