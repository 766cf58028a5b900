/// The typed words the compliance service and its store exchange (STYLE §10: no strings as contracts
/// between modules). Each is a `RawRepresentable` struct over its wire string, so a value written by a newer
/// build still reads back.

/// A line of an enrollment's history: what happened.
public struct EnrollmentEvent: RawRepresentable, Sendable, Hashable, Codable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let enrolled = EnrollmentEvent(rawValue: "enrolled")
    public static let checkIn = EnrollmentEvent(rawValue: "checkIn")
    public static let callbackChanged = EnrollmentEvent(rawValue: "callbackChanged")
    public static let wipeRequested = EnrollmentEvent(rawValue: "wipeRequested")
    public static let wipeAcknowledged = EnrollmentEvent(rawValue: "wipeAcknowledged")
    public static let unenrolled = EnrollmentEvent(rawValue: "unenrolled")
    public static let lapsed = EnrollmentEvent(rawValue: "lapsed")
    /// A change of the app's configuration was announced by a callback.
    public static let configurationChanged = EnrollmentEvent(rawValue: "configurationChanged")
    /// The app fetched a new version of its configuration.
    public static let configurationDelivered = EnrollmentEvent(rawValue: "configurationDelivered")
    public static let appKeyRegistered = EnrollmentEvent(rawValue: "appKeyRegistered")
    public static let secretDelivered = EnrollmentEvent(rawValue: "secretDelivered")
    public static let identityIssued = EnrollmentEvent(rawValue: "identityIssued")
}

/// A command the app receives in its check-in answer (PROTOCOL §5).
public struct EnrollmentCommand: RawRepresentable, Sendable, Hashable, Codable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Delete the account's organization data, then unenroll (the acknowledgement).
    public static let wipe = EnrollmentCommand(rawValue: "wipe")
    /// The app's managed configuration changed since it last fetched it (PROTOCOL §8.2): fetch it again.
    public static let refreshConfiguration = EnrollmentCommand(rawValue: "refreshConfiguration")
}

/// What a remediation says is still missing before the app can be compliant (`missing`).
public struct RemediationGap: RawRepresentable, Sendable, Hashable, Codable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let allowedAccount = RemediationGap(rawValue: "allowedAccount")
    public static let policyAssignment = RemediationGap(rawValue: "policyAssignment")
    public static let singleManagedAccount = RemediationGap(rawValue: "singleManagedAccount")
    public static let wipeAcknowledgement = RemediationGap(rawValue: "wipeAcknowledgement")
    public static let policyAcknowledgement = RemediationGap(rawValue: "policyAcknowledgement")
    public static let osVersion = RemediationGap(rawValue: "osVersion")
    public static let appVersion = RemediationGap(rawValue: "appVersion")
    public static let pin = RemediationGap(rawValue: "pin")
}

/// What an audit record says was done.
public struct AuditAction: RawRepresentable, Sendable, Hashable, Codable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let create = AuditAction(rawValue: "create")
    public static let replace = AuditAction(rawValue: "replace")
    public static let delete = AuditAction(rawValue: "delete")
    public static let wipe = AuditAction(rawValue: "wipe")
    /// Graph's `revokeSignInSessions` (PROTOCOL §14.1).
    public static let revokeSignInSessions = AuditAction(rawValue: "revokeSignInSessions")
    /// An admin reported the user's credentials compromised (RISC `credential-compromise`).
    public static let confirmCompromised = AuditAction(rawValue: "confirmCompromised")
    public static let redeliver = AuditAction(rawValue: "redeliver")
    /// A secret delivered (sealed) to an app instance, or a device identity issued to one.
    public static let deliver = AuditAction(rawValue: "deliver")
    public static let issue = AuditAction(rawValue: "issue")
    /// A passkey's signature counter went backwards (PROTOCOL §12.1): the passkey is refused until an admin clears it.
    public static let passkeySuspect = AuditAction(rawValue: "passkeySuspect")
    /// An admin cleared a suspect passkey.
    public static let clearSuspicion = AuditAction(rawValue: "clearSuspicion")
    /// A user signed in with a temporary access pass (PROTOCOL §12.3).
    public static let signIn = AuditAction(rawValue: "signIn")
}
