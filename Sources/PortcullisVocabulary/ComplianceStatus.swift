import Foundation

/// The Intune SDK's compliance statuses (`IntuneMAMComplianceStatus`). `networkFailure` and
/// `userCancelled` only ever arise on the client.
public enum ComplianceStatusValue: String, Codable, Sendable, CaseIterable {
    case compliant, notCompliant, serviceFailure, networkFailure, interactionRequired, userCancelled
}

/// A compliance status with the localized title and message the app shows the user when it is not compliant.
/// `reason` names the message in the catalogue (`ComplianceMessage`), so that it can be shown again in another
/// language (`localized(_:)`); a status without one (an older server's) keeps the text it came with.
public struct ComplianceStatus: Codable, Sendable, Equatable {
    public var status: ComplianceStatusValue
    public var errorTitle: String?
    public var errorMessage: String?
    public var reason: ComplianceMessage?
    /// What the message's `{0}` stands for (a minimum version, an HTTP status).
    public var reasonArgument: String?

    public init(status: ComplianceStatusValue, errorTitle: String? = nil, errorMessage: String? = nil) {
        self.status = status
        self.errorTitle = errorTitle
        self.errorMessage = errorMessage
    }

    /// A status whose title and message are the catalogue's `reason`, in `language`.
    public init(_ status: ComplianceStatusValue, _ reason: ComplianceMessage, argument: String? = nil, language: MessageLanguage = .english) {
        self.status = status
        self.reason = reason
        self.reasonArgument = argument
        (errorTitle, errorMessage) = reason.text(language, argument: argument)
    }

    /// The same status with its title and message in `language` (unchanged when it has no `reason`).
    public func localized(_ language: MessageLanguage) -> ComplianceStatus {
        guard let reason else { return self }
        var copy = self
        (copy.errorTitle, copy.errorMessage) = reason.text(language, argument: reasonArgument)
        return copy
    }

    public static let compliant = ComplianceStatus(status: .compliant)

    enum CodingKeys: String, CodingKey { case status, errorTitle, errorMessage, reason, reasonArgument }

    /// A reason this version does not know (a newer server's) is dropped: the title and message it came with stay.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        status = try container.decode(ComplianceStatusValue.self, forKey: .status)
        errorTitle = try container.decodeIfPresent(String.self, forKey: .errorTitle)
        errorMessage = try container.decodeIfPresent(String.self, forKey: .errorMessage)
        reason = try container.decodeIfPresent(String.self, forKey: .reason).flatMap(ComplianceMessage.init(rawValue:))
        reasonArgument = reason == nil ? nil : try container.decodeIfPresent(String.self, forKey: .reasonArgument)
    }
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
