public import Foundation

/// What a state change ends and announces (PROTOCOL §14.1), as a value: decided here from the values before and after
/// (and the few facts a change needs besides), committed by the store in the change's own transaction — the document,
/// its audit record and these effects together — and carried out later only where it must be: the dispatcher signs and
/// sends the events, a job replays the sign-ins a conditional-access change may now refuse. Nothing a revocation
/// promises is "best effort after the 200".
public struct ChangeEffects: Sendable, Equatable {
    /// Refresh-token families and sign-in sessions a change voids, and whether it voids the user's access tokens too.
    public struct Revocation: Sendable, Equatable {
        /// Which of the user's families and sessions.
        public enum Reach: Sendable, Equatable {
            /// Every family and session of the user.
            case everything
            /// The families and sessions whose sign-in used this credential (a password reset, a method removed).
            case credential(CriticalEvent.CredentialType)
            /// The user's families at one client application (an enrollment wiped or out of compliance, a
            /// conditional-access change that now refuses the app). Sessions stay: a browser session is not the app.
            case application(clientId: AppID)
        }

        public var userId: ObjectID
        public var reach: Reach
        /// Whether the user's access tokens issued up to the change's time stop counting at Portcullis's own APIs (admin,
        /// compliance, Shared Signals, console) and at `/introspect`: the per-user "void before" time.
        public var voidsAccessTokens: Bool

        public init(userId: ObjectID, reach: Reach, voidsAccessTokens: Bool) {
            self.userId = userId
            self.reach = reach
            self.voidsAccessTokens = voidsAccessTokens
        }

        /// Whether a family's or a session's recorded sign-in methods fall within this revocation's reach.
        public func covers(methods: [String]) -> Bool {
            switch reach {
            case .everything: true
            case .credential(let type): CredentialUse(type).matches(methods)
            case .application: true
            }
        }

        /// Whether it reaches sessions at all.
        public var endsSessions: Bool {
            if case .application = reach { return false }
            return true
        }
    }

    /// A conditional-access policy changed: the sign-ins whose tokens may still be live are replayed through the
    /// policies, off the request path, by a durable job enqueued with the change (the replay's findings are effects in
    /// their own right, `conditionalAccessReplayed`).
    public struct PolicyReplay: Sendable, Equatable {
        public var policyId: PolicyID
        /// The policy as it was before the change (`nil`: it was created).
        public var before: ConditionalAccessPolicy?

        public init(policyId: PolicyID, before: ConditionalAccessPolicy?) {
            self.policyId = policyId
            self.before = before
        }
    }

    public var tenantId: TenantID
    /// When it happened: what it voids was issued up to and including this time.
    public var at: Date
    public var revocations: [Revocation]
    public var events: [CriticalEvent]
    public var replays: [PolicyReplay]
    /// Users whose sign-in methods (authenticator app, passkeys, temporary access pass) go with them (deleted users).
    public var forgetMethodsOf: [ObjectID]
    /// Devices (object IDs) whose proof no longer counts (PROTOCOL §18: out of compliance, disabled, deleted): the refresh
    /// families granted on it end, whoever's they are.
    public var endsFamiliesOfDevices: [ObjectID]

    public init(
        tenantId: TenantID, at: Date, revocations: [Revocation] = [], events: [CriticalEvent] = [], replays: [PolicyReplay] = [],
        forgetMethodsOf: [ObjectID] = [], endsFamiliesOfDevices: [ObjectID] = []
    ) {
        self.endsFamiliesOfDevices = endsFamiliesOfDevices
        self.tenantId = tenantId
        self.at = at
        self.revocations = revocations
        self.events = events
        self.replays = replays
        self.forgetMethodsOf = forgetMethodsOf
    }

    public static func none(tenantId: TenantID, at: Date) -> ChangeEffects { ChangeEffects(tenantId: tenantId, at: at) }

    public var isEmpty: Bool {
        revocations.isEmpty && events.isEmpty && replays.isEmpty && forgetMethodsOf.isEmpty && endsFamiliesOfDevices.isEmpty
    }

    /// The users whose access tokens issued up to `at` no longer count at Portcullis's own APIs.
    public var voidedUsers: [ObjectID] {
        var seen = Set<ObjectID>()
        return revocations.filter(\.voidsAccessTokens).map(\.userId).filter { seen.insert($0).inserted }
    }

    /// Both changes' effects, as one (a change that is several: a user disabled and given a new password).
    public func merging(_ other: ChangeEffects) -> ChangeEffects {
        ChangeEffects(
            tenantId: tenantId, at: max(at, other.at), revocations: revocations + other.revocations, events: events + other.events,
            replays: replays + other.replays, forgetMethodsOf: forgetMethodsOf + other.forgetMethodsOf,
            endsFamiliesOfDevices: endsFamiliesOfDevices + other.endsFamiliesOfDevices)
    }
}

/// Which recorded sign-in methods show that a sign-in used a credential. A family or a session records its sign-in's
/// `amr` values (and what a strength needs besides, `AuthenticationContext`): a password sign-in holds `pwd`; an
/// authenticator-app code after it makes `pwd` + `mfa` (or `otp`, as Entra names a one-time code); a passkey `fido`.
/// A temporary access pass is no credential receivers hear of, and a sign-in with one used no other.
public struct CredentialUse: Sendable, Equatable {
    /// Any of these sets of markers, each present whole, shows the use.
    public let markers: [[String]]

    public init(_ type: CriticalEvent.CredentialType) {
        switch type {
        case .password: markers = [["pwd"]]
        case .app: markers = [["otp"], ["pwd", "mfa"]]
        case .fido2: markers = [["fido"]]
        }
    }

    public func matches(_ methods: [String]) -> Bool {
        markers.contains { set in set.allSatisfy(methods.contains) }
    }
}

// MARK: The changes

extension ChangeEffects {
    /// A user's document changed (PROTOCOL §14.1): disabled or deleted voids everything of theirs; a new password voids
    /// what the old one signed in (and their access tokens at Portcullis's own APIs); the events tell receivers.
    public static func userChanged(before: User?, after: User?, tenantId: TenantID, at: Date) -> ChangeEffects {
        var effects = ChangeEffects(tenantId: tenantId, at: at, events: CriticalEvent.userChanged(before: before, after: after, tenantId: tenantId, at: at))
        guard let before else { return effects }
        if before.accountEnabled, after?.accountEnabled != true {
            effects.revocations.append(Revocation(userId: before.id, reach: .everything, voidsAccessTokens: true))
        } else if let after, before.passwordHash != after.passwordHash, after.passwordHash != nil {
            effects.revocations.append(Revocation(userId: before.id, reach: .credential(.password), voidsAccessTokens: true))
        }
        if after == nil { effects.forgetMethodsOf.append(before.id) }
        return effects
    }

    /// An admin ended every session of the user (`revokeSignInSessions`) or reported their credentials compromised
    /// (`confirmCompromised`, RISC `credential-compromise` first): everything of theirs is void.
    public static func sessionsRevoked(user: User, tenantId: TenantID, compromised: Bool, at: Date) -> ChangeEffects {
        ChangeEffects(
            tenantId: tenantId, at: at, revocations: [Revocation(userId: user.id, reach: .everything, voidsAccessTokens: true)],
            events: [
                CriticalEvent(
                    compromised ? .credentialCompromised : .sessionsRevoked, tenantId: tenantId, userId: user.id,
                    userPrincipalName: user.userPrincipalName, at: at)
            ])
    }

    /// A sign-in method added or removed, given what the user holds after the change. A removal voids the families
    /// and sessions that used the method, and the user's access tokens at Portcullis's own APIs — as the
    /// `session-revoked` it raises ends them at every resource server (docs/decisions.md).
    public static func methodChanged(
        _ type: CriticalEvent.CredentialType, added: Bool, tenantId: TenantID, user: User, initiator: CriticalEvent.Initiator, at: Date,
        passkeysAfter: Int, authenticatorAppAfter: Bool
    ) -> ChangeEffects {
        var effects = ChangeEffects(
            tenantId: tenantId, at: at,
            events: CriticalEvent.methodChanged(
                type, added: added, tenantId: tenantId, user: user, initiator: initiator, at: at, passkeysAfter: passkeysAfter,
                authenticatorAppAfter: authenticatorAppAfter))
        if !added { effects.revocations.append(Revocation(userId: user.id, reach: .credential(type), voidsAccessTokens: true)) }
        return effects
    }

    /// An enrollment's stored change: a wipe voids the account's families at the app (PROTOCOL §5); compliance lost ends
    /// the app's tokens at resource servers (the event) while its refreshes are refused by conditional access until a good
    /// check-in — not revoked, so that an app back from a long offline spell resumes without a new sign-in
    /// (docs/decisions.md).
    public static func enrollmentChanged(previous: Enrollment, current: Enrollment, wiped: Bool, at: Date) -> ChangeEffects {
        let events = CriticalEvent.enrollmentChanged(previous: previous, current: current, wiped: wiped, at: at)
        var effects = ChangeEffects(tenantId: current.tenantId, at: at, events: events)
        if wiped {
            effects.revocations.append(Revocation(userId: current.userId, reach: .application(clientId: current.clientId), voidsAccessTokens: false))
        }
        return effects
    }

    /// A conditional-access policy written: only an enabled policy can refuse more than before (a delete, a report-only
    /// or disabled policy refuses nothing new), so only then are the live sign-ins replayed.
    public static func conditionalAccessChanged(
        before: ConditionalAccessPolicy?, after: ConditionalAccessPolicy?, tenantId: TenantID, at: Date
    ) -> ChangeEffects {
        guard let after, after.state == .enabled, before != after else { return .none(tenantId: tenantId, at: at) }
        return ChangeEffects(tenantId: tenantId, at: at, replays: [PolicyReplay(policyId: after.id, before: before)])
    }

    /// What a replay found (`CriticalEvent.conditionalAccessChanged`): for each user and client application the policies
    /// now refuse, the app's families for the user and its tokens at resource servers.
    public static func conditionalAccessReplayed(
        signIns: [SignInRecord], directory: DirectorySnapshot, before: CompiledPolicySet, after: CompiledPolicySet, tenantId: TenantID,
        accessTokenLifetime: TimeInterval, continuousAccessTokenLifetime: TimeInterval, at: Date
    ) -> ChangeEffects {
        let events = CriticalEvent.conditionalAccessChanged(
            signIns: signIns, directory: directory, before: before, after: after, tenantId: tenantId, accessTokenLifetime: accessTokenLifetime,
            continuousAccessTokenLifetime: continuousAccessTokenLifetime, at: at)
        let revocations = events.compactMap { event -> Revocation? in
            guard let clientId = event.revokedApplication else { return nil }
            return Revocation(userId: event.userId, reach: .application(clientId: clientId), voidsAccessTokens: false)
        }
        return ChangeEffects(tenantId: tenantId, at: at, revocations: revocations, events: events)
    }
}

extension User {
    public static func effects(before: User?, after: User?, tenantId: TenantID, at: Date) -> ChangeEffects {
        ChangeEffects.userChanged(before: before, after: after, tenantId: tenantId, at: at)
    }
}

extension ConditionalAccessPolicy {
    public static func effects(before: ConditionalAccessPolicy?, after: ConditionalAccessPolicy?, tenantId: TenantID, at: Date) -> ChangeEffects {
        ChangeEffects.conditionalAccessChanged(before: before, after: after, tenantId: tenantId, at: at)
    }
}
