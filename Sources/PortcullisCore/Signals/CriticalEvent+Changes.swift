public import Foundation

/// Which critical events each kind of change raises (PROTOCOL §14.1): decided here, from the values before and after;
/// the server only stores the change and hands these to the transmitter.
extension CriticalEvent {
    /// A user's change: disabled, enabled, deleted, a new password, changed claims (`upn`, `name`).
    public static func userChanged(before: User?, after: User?, tenantId: String, at: Date) -> [CriticalEvent] {
        guard let before else { return [] }
        func event(_ kind: Kind) -> CriticalEvent {
            CriticalEvent(kind, tenantId: tenantId, userId: before.id, userPrincipalName: before.userPrincipalName, at: at)
        }
        guard let after else { return [event(.accountDeleted)] }
        var events: [CriticalEvent] = []
        if before.accountEnabled != after.accountEnabled { events.append(event(after.accountEnabled ? .accountEnabled : .accountDisabled)) }
        if before.passwordHash != after.passwordHash, after.passwordHash != nil { events.append(event(.passwordChanged)) }
        var claims: [String: String] = [:]
        if before.userPrincipalName != after.userPrincipalName { claims["upn"] = after.userPrincipalName }
        if before.displayName != after.displayName { claims["name"] = after.displayName }
        if !claims.isEmpty { events.append(event(.claimsChanged(claims))) }
        return events
    }

    /// An enrollment's stored change: a wipe ends the app's tokens for the account; compliance lost (or regained) is a
    /// `device-compliance-change`, and losing it ends them too.
    public static func enrollmentChanged(previous: Enrollment, current: Enrollment, wiped: Bool, at: Date) -> [CriticalEvent] {
        func event(_ kind: Kind, initiator: Initiator) -> CriticalEvent {
            CriticalEvent(kind, tenantId: current.tenantId, userId: current.userId, userPrincipalName: current.userPrincipalName, at: at, initiator: initiator)
        }
        if wiped { return [event(.enrollmentWiped(clientAppId: current.clientId, enrollmentId: current.id), initiator: .admin)] }
        let was = previous.complianceStatus.status == .compliant
        let now = current.complianceStatus.status == .compliant
        guard was != now else { return [] }
        return [event(.complianceChanged(clientAppId: current.clientId, enrollmentId: current.id, compliant: now), initiator: .policy)]
    }

    /// A sign-in method added or removed, given what the user holds after the change: `credential-change`, and
    /// `assurance-level-change` when the highest level the user's methods reach moved.
    public static func methodChanged(
        _ type: CredentialType, added: Bool, tenantId: String, user: User, initiator: Initiator, at: Date, passkeysAfter: Int, authenticatorAppAfter: Bool
    ) -> [CriticalEvent] {
        func event(_ kind: Kind) -> CriticalEvent {
            CriticalEvent(kind, tenantId: tenantId, userId: user.id, userPrincipalName: user.userPrincipalName, at: at, initiator: initiator)
        }
        let change = added ? 1 : -1
        let passkeysBefore = type == .fido2 ? max(0, passkeysAfter - change) : passkeysAfter
        let appBefore = type == .app ? !added : authenticatorAppAfter
        let before = AssuranceLevel.reached(hasPasskey: passkeysBefore > 0, hasSecondFactor: passkeysBefore > 0 || appBefore)
        let after = AssuranceLevel.reached(hasPasskey: passkeysAfter > 0, hasSecondFactor: passkeysAfter > 0 || authenticatorAppAfter)
        var events = [event(added ? .methodAdded(type) : .methodRemoved(type))]
        if before != after { events.append(event(.assuranceLevelChanged(from: before, to: after))) }
        return events
    }
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
