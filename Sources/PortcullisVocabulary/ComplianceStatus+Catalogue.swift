import Foundation

extension ComplianceStatus {
    // The statuses the server decides (PROTOCOL §5), in English; a response or callback shows them in the caller's
    // language (`localized(_:)`).
    public static let policyNotApplied = ComplianceStatus(.notCompliant, .policyNotApplied)
    public static let notTargeted = ComplianceStatus(.notCompliant, .notTargeted)
    public static let accountNotAllowed = ComplianceStatus(.notCompliant, .accountNotAllowed)
    public static let anotherAccountManaged = ComplianceStatus(.notCompliant, .anotherAccountManaged)
    public static let jailbroken = ComplianceStatus(.notCompliant, .jailbroken)
    public static func osTooOld(_ minimum: String) -> ComplianceStatus { ComplianceStatus(.notCompliant, .osTooOld, argument: minimum) }
    public static func appTooOld(_ minimum: String) -> ComplianceStatus { ComplianceStatus(.notCompliant, .appTooOld, argument: minimum) }
    public static let pinRequiredInteractive = ComplianceStatus(.interactionRequired, .pinRequiredInteractive)
    public static let pinRequired = ComplianceStatus(.notCompliant, .pinRequired)
    public static let lapsed = ComplianceStatus(.notCompliant, .lapsed)
    public static let wiped = ComplianceStatus(.notCompliant, .wiped)
    public static let unenrolled = ComplianceStatus(.notCompliant, .unenrolled)
}
