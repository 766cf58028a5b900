/// The Shared Signals event types Portcullis transmits (PROTOCOL §14.2): CAEP 1.0, RISC 1.0 and SSF's own.
public enum SharedSignalsEventType: String, Sendable, CaseIterable, Codable {
    case sessionRevoked = "https://schemas.openid.net/secevent/caep/event-type/session-revoked"
    case credentialChange = "https://schemas.openid.net/secevent/caep/event-type/credential-change"
    case assuranceLevelChange = "https://schemas.openid.net/secevent/caep/event-type/assurance-level-change"
    case deviceComplianceChange = "https://schemas.openid.net/secevent/caep/event-type/device-compliance-change"
    case tokenClaimsChange = "https://schemas.openid.net/secevent/caep/event-type/token-claims-change"
    /// CAEP 1.0 §3.8: a user's risk changed (PROTOCOL §19).
    case riskLevelChange = "https://schemas.openid.net/secevent/caep/event-type/risk-level-change"
    case accountDisabled = "https://schemas.openid.net/secevent/risc/event-type/account-disabled"
    case accountEnabled = "https://schemas.openid.net/secevent/risc/event-type/account-enabled"
    case accountPurged = "https://schemas.openid.net/secevent/risc/event-type/account-purged"
    case credentialCompromise = "https://schemas.openid.net/secevent/risc/event-type/credential-compromise"
    /// SSF §8.1.4: sent on request to check a stream works; not requested, always delivered.
    case verification = "https://schemas.openid.net/secevent/ssf/event-type/verification"
    /// SSF §8.1.5: the stream's status changed.
    case streamUpdated = "https://schemas.openid.net/secevent/ssf/event-type/stream-updated"

    /// What a receiver may request: every type but SSF's own, which are delivered without being asked for.
    public static let requestable: [SharedSignalsEventType] = allCases.filter { $0 != .verification && $0 != .streamUpdated }

    /// SSF's delivery method URIs.
    public static let pushDelivery = "urn:ietf:rfc:8935"
    public static let pollDelivery = "urn:ietf:rfc:8936"

    /// The transmitter's resource: receivers hold `SSF.Receiver` on it and ask for `{resource}/.default`.
    public static let transmitterResource = "api://portcullis-ssf"
}

extension SharedSignalsEventType {
    /// Whether an event of `type` with these members ends its subject's access — what a resource server enforces:
    /// `session-revoked` (which Portcullis sends with every critical event), and, for transmitters that send them alone,
    /// RISC's account and credential events, a credential removed or changed, and compliance lost.
    public static func endsAccess(type: String, members: JSONValue) -> Bool {
        switch SharedSignalsEventType(rawValue: type) {
        case .sessionRevoked, .accountDisabled, .accountPurged, .credentialCompromise: true
        case .credentialChange: members["change_type"]?.stringValue != "create"
        case .deviceComplianceChange: members["current_status"]?.stringValue == "not-compliant"
        default: false
        }
    }
}
