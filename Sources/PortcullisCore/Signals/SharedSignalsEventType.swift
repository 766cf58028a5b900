/// The Shared Signals event types Portcullis transmits (PROTOCOL §14.2): CAEP 1.0, RISC 1.0 and SSF's own.
public enum SharedSignalsEventType: String, Sendable, CaseIterable, Codable {
    case sessionRevoked = "https://schemas.openid.net/secevent/caep/event-type/session-revoked"
    case credentialChange = "https://schemas.openid.net/secevent/caep/event-type/credential-change"
    case assuranceLevelChange = "https://schemas.openid.net/secevent/caep/event-type/assurance-level-change"
    case deviceComplianceChange = "https://schemas.openid.net/secevent/caep/event-type/device-compliance-change"
    case tokenClaimsChange = "https://schemas.openid.net/secevent/caep/event-type/token-claims-change"
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
}
