public import Foundation

/// Which critical events each kind of change raises (PROTOCOL §14.1): decided here, from the values before and after;
/// the server only stores the change and hands these to the transmitter.
extension CriticalEvent {
    /// A user's change: disabled, enabled, deleted, a new password, changed claims (`upn`, `name`).
    public static func userChanged(before: User?, after: User?, tenantId: TenantID, at: Date) -> [CriticalEvent] {
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
        let app = current.clientId
        let enrollment = current.id
        if wiped { return [event(.enrollmentWiped(clientAppId: app, enrollmentId: enrollment), initiator: .admin)] }
        let was = previous.complianceStatus.status == .compliant
        let now = current.complianceStatus.status == .compliant
        guard was != now else { return [] }
        return [event(.complianceChanged(clientAppId: app, enrollmentId: enrollment, compliant: now), initiator: .policy)]
    }

    /// A sign-in method added or removed, given what the user holds after the change: `credential-change`, and
    /// `assurance-level-change` when the highest level the user's methods reach moved.
    public static func methodChanged(
        _ type: CredentialType, added: Bool, tenantId: TenantID, user: User, initiator: Initiator, at: Date, passkeysAfter: Int, authenticatorAppAfter: Bool
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

extension CriticalEvent {
    /// A conditional-access change (PROTOCOL §14.1): the users whose tokens still live were issued for sign-ins the
    /// policies now refuse. Each of `signIns` (a successful sign-in whose token may still be live: issued less than its
    /// lifetime before `at`) is replayed with its recorded facts as impact analysis does, through the policies `before`
    /// and `after` the change; one event per user and client application that `before` allowed and `after` refuses.
    /// The app's tokens for the user end at resource servers; a token for a resource the policies still allow is
    /// renewed silently through the claims challenge, one they refuse is not.
    public static func conditionalAccessChanged(
        signIns: [SignInRecord], directory: DirectorySnapshot, before: CompiledPolicySet, after: CompiledPolicySet, tenantId: TenantID,
        accessTokenLifetime: TimeInterval, continuousAccessTokenLifetime: TimeInterval, at: Date
    ) -> [CriticalEvent] {
        var refused: [UserAtClient: (record: SignInRecord, policyIds: Set<String>)] = [:]
        var order: [UserAtClient] = []
        for record in signIns {
            guard let userId = record.userId, record.conditionalAccessStatus != .failure, record.errorCode == nil else { continue }
            let continuous =
                record.capabilities.contains { $0.equalsIgnoringCase(ClientCapability.cp1) }
                && directory.application(appId: AppID(record.resourceAppId))?.continuousAccessEvaluation == true
            let lifetime = continuous ? max(accessTokenLifetime, continuousAccessTokenLifetime) : accessTokenLifetime
            guard record.lastDateTime.addingTimeInterval(lifetime) > at else { continue }
            let facts = ImpactAnalysis.facts(of: record, directory: directory)
            guard !ImpactAnalysis.Outcome(before.evaluate(facts)).refused else { continue }
            let now = ImpactAnalysis.Outcome(after.evaluate(facts))
            guard now.refused else { continue }
            let key = UserAtClient(user: ObjectID(userId), client: AppID(record.clientAppId))
            if refused[key] == nil { order.append(key) }
            refused[key, default: (record, [])].policyIds.formUnion(now.policyIds)
        }
        return order.compactMap { key in
            guard let (record, policyIds) = refused[key] else { return nil }
            return CriticalEvent(
                .conditionalAccessRefuses(clientAppId: key.client, policyIds: policyIds.sorted()), tenantId: tenantId, userId: key.user,
                userPrincipalName: record.userPrincipalName, at: at, initiator: .policy,
                reason: "Conditional access now refuses this application's sign-in (policies \(policyIds.sorted().joined(separator: ", "))).")
        }
    }
}

/// A user at a client application: whose tokens one conditional-access refusal ends.
struct UserAtClient: Hashable {
    let user: ObjectID
    let client: AppID
}
