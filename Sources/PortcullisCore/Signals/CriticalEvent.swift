public import Foundation

/// Something that happened to a user's access (PROTOCOL §14.1), defined here once: whether it ends the access the
/// user's tokens already carry, and which Shared Signals events (CAEP 1.0, RISC) tell receivers about it. The server
/// raises one for each admin action or state change; the transmitter turns it into SETs; the resource side reads
/// the `session-revoked` it implies.
public struct CriticalEvent: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// `accountEnabled` became false.
        case accountDisabled
        /// `accountEnabled` became true again.
        case accountEnabled
        /// The user was deleted.
        case accountDeleted
        /// The password was set by an admin or changed.
        case passwordChanged
        /// `revokeSignInSessions`.
        case sessionsRevoked
        /// An admin reported the user's credentials as compromised (`confirmCompromised`).
        case credentialCompromised
        /// A sign-in method was registered.
        case methodAdded(CredentialType)
        /// A sign-in method was removed.
        case methodRemoved(CredentialType)
        /// The strongest assurance the user's methods can reach changed (NIST AAL, after a method was added or removed).
        case assuranceLevelChanged(from: AssuranceLevel, to: AssuranceLevel)
        /// The app's enrollment for this user was wiped: the app's tokens for the user end.
        case enrollmentWiped(clientAppId: AppID, enrollmentId: RecordID)
        /// The enrollment's compliance changed; losing it ends the app's tokens for the user.
        case complianceChanged(clientAppId: AppID, enrollmentId: RecordID, compliant: Bool)
        /// A device of the user became compliant, or stopped being so (PROTOCOL §18).
        case deviceComplianceChanged(deviceId: DeviceID, compliant: Bool)
        /// The user's risk changed (PROTOCOL §19): CAEP `risk-level-change`. Ends nothing by itself: policies decide.
        case riskLevelChanged(from: RiskLevel, to: RiskLevel, reason: String?)
        /// Claims the user's tokens carry changed (`upn`, `name`).
        case claimsChanged([String: String])
        /// A conditional-access change now refuses what the user's tokens at this client application were issued for
        /// (the policies that refuse it): the app's tokens for the user end, and its next request is evaluated afresh.
        case conditionalAccessRefuses(clientAppId: AppID, policyIds: [String])
    }

    /// CAEP's `credential_type` values for the methods Portcullis has.
    public enum CredentialType: String, Sendable, Equatable {
        case password
        /// A passkey (FIDO2).
        case fido2 = "fido2-roaming"
        /// A TOTP authenticator app.
        case app
    }

    /// NIST SP 800-63B assurance levels, as CAEP's `NIST-AAL` namespace names them.
    public enum AssuranceLevel: String, Sendable, Equatable, Comparable {
        case aal1 = "nist-aal1"
        case aal2 = "nist-aal2"
        case aal3 = "nist-aal3"

        /// The highest level a user's registered methods reach: a passkey is phishing-resistant (AAL3), a second
        /// factor makes AAL2, a password alone AAL1.
        public static func reached(hasPasskey: Bool, hasSecondFactor: Bool) -> AssuranceLevel {
            hasPasskey ? .aal3 : hasSecondFactor ? .aal2 : .aal1
        }

        public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rank < rhs.rank }
        var rank: Int {
            switch self {
            case .aal1: 1
            case .aal2: 2
            case .aal3: 3
            }
        }
    }

    /// Who caused it (CAEP's `initiating_entity`).
    public enum Initiator: String, Sendable, Equatable {
        case admin, user, policy, system
    }

    public var kind: Kind
    public var tenantId: TenantID
    public var userId: ObjectID
    public var userPrincipalName: String?
    /// When it happened (`event_timestamp`); tokens issued before this end when the event ends access.
    public var at: Date
    public var initiator: Initiator
    /// What the admin wrote, if anything (`reason_admin`).
    public var reason: String?

    public init(
        _ kind: Kind, tenantId: TenantID, userId: ObjectID, userPrincipalName: String? = nil, at: Date, initiator: Initiator = .admin,
        reason: String? = nil
    ) {
        self.kind = kind
        self.tenantId = tenantId
        self.userId = userId
        self.userPrincipalName = userPrincipalName
        self.at = at
        self.initiator = initiator
        self.reason = reason.map { String($0.prefix(256)) }
    }

    /// Whether the user's existing tokens must stop working (PROTOCOL §14.1's critical events).
    public var endsAccess: Bool {
        switch kind {
        case .accountDisabled, .accountDeleted, .passwordChanged, .sessionsRevoked, .credentialCompromised, .methodRemoved, .enrollmentWiped,
            .conditionalAccessRefuses:
            true
        case .complianceChanged(_, _, let compliant), .deviceComplianceChanged(_, let compliant): !compliant
        case .accountEnabled, .methodAdded, .assuranceLevelChanged, .claimsChanged, .riskLevelChanged: false
        }
    }

    /// Whose tokens end: every token of the user, or only those one client application holds (`azp`).
    public var revokedApplication: AppID? {
        switch kind {
        case .enrollmentWiped(let clientAppId, _), .complianceChanged(let clientAppId, _, _), .conditionalAccessRefuses(let clientAppId, _):
            clientAppId
        default: nil
        }
    }

    /// One SET's event: its type and its members (without the common ones `signals` adds).
    public struct Signal: Sendable, Equatable {
        public var type: SharedSignalsEventType
        public var members: [String: JSONValue]
    }

    /// The events that tell receivers about it, one SET each: what happened, then — when access ends — the
    /// `session-revoked` that a receiver enforcing CAE needs (so a receiver may ask for that one event alone).
    public var signals: [Signal] {
        var found: [Signal] = []
        switch kind {
        case .accountDisabled: found.append(Signal(type: .accountDisabled, members: [:]))
        case .accountEnabled: found.append(Signal(type: .accountEnabled, members: [:]))
        case .accountDeleted: found.append(Signal(type: .accountPurged, members: [:]))
        case .passwordChanged:
            found.append(Signal(type: .credentialChange, members: ["credential_type": .string(CredentialType.password.rawValue), "change_type": "update"]))
        case .sessionsRevoked, .enrollmentWiped, .conditionalAccessRefuses: break
        case .credentialCompromised:
            found.append(Signal(type: .credentialCompromise, members: ["credential_type": .string(CredentialType.password.rawValue)]))
        case .methodAdded(let type):
            found.append(Signal(type: .credentialChange, members: ["credential_type": .string(type.rawValue), "change_type": "create"]))
        case .methodRemoved(let type):
            found.append(Signal(type: .credentialChange, members: ["credential_type": .string(type.rawValue), "change_type": "delete"]))
        case .assuranceLevelChanged(let from, let to):
            found.append(
                Signal(
                    type: .assuranceLevelChange,
                    members: [
                        "namespace": "NIST-AAL", "previous_level": .string(from.rawValue), "current_level": .string(to.rawValue),
                        "change_direction": from < to ? "increase" : "decrease",
                    ]))
        case .complianceChanged(_, _, let compliant), .deviceComplianceChanged(_, let compliant):
            found.append(
                Signal(
                    type: .deviceComplianceChange,
                    members: [
                        "previous_status": compliant ? "not-compliant" : "compliant", "current_status": compliant ? "compliant" : "not-compliant",
                    ]))
        case .claimsChanged(let claims):
            found.append(Signal(type: .tokenClaimsChange, members: ["claims": .object(claims.mapValues(JSONValue.string))]))
        case .riskLevelChanged(let from, let to, let reason):
            // CAEP 1.0 §3.8: levels in upper case; `none` is no level at all (the previous one omitted).
            var members: [String: JSONValue] = ["principal": "USER", "current_level": .string(to == .none ? "LOW" : to.rawValue.uppercased())]
            if from != .none { members["previous_level"] = .string(from.rawValue.uppercased()) }
            if let reason { members["risk_reason"] = .string(reason) }
            found.append(Signal(type: .riskLevelChange, members: members))
        }
        if endsAccess { found.append(Signal(type: .sessionRevoked, members: [:])) }
        let common: [String: JSONValue] = {
            var members: [String: JSONValue] = [
                // To the millisecond (a JSON number, as CAEP's NumericDate allows): a token issued after the event, even in
                // its second, is told from one issued before it (PROTOCOL §14.1).
                "event_timestamp": .number(Double(at.epochMilliseconds) / 1000), "initiating_entity": .string(initiator.rawValue),
            ]
            if let reason { members["reason_admin"] = .object(["en": .string(reason)]) }
            return members
        }()
        return found.map { signal in
            Signal(type: signal.type, members: signal.members.merging(common) { own, _ in own })
        }
    }

    /// The event's subject in SSF's `complex` format: the user (`iss_sub`, `issuer` the tenant's token issuer), the
    /// tenant, and — for an app-scoped event — the application and its enrollment as the device.
    public func subject(issuer: String) -> SignalSubject {
        var subject = SignalSubject.complex(
            user: .issuerSubject(issuer: issuer, subject: userId.rawValue), tenant: .opaque(tenantId.rawValue), application: nil, device: nil)
        switch kind {
        case .enrollmentWiped(let clientAppId, let enrollmentId), .complianceChanged(let clientAppId, let enrollmentId, _):
            subject = .complex(
                user: .issuerSubject(issuer: issuer, subject: userId.rawValue), tenant: .opaque(tenantId.rawValue), application: .opaque(clientAppId.rawValue),
                device: .opaque(enrollmentId.rawValue))
        case .conditionalAccessRefuses(let clientAppId, _):
            subject = .complex(
                user: .issuerSubject(issuer: issuer, subject: userId.rawValue), tenant: .opaque(tenantId.rawValue), application: .opaque(clientAppId.rawValue),
                device: nil)
        case .deviceComplianceChanged(let deviceId, _):
            subject = .complex(
                user: .issuerSubject(issuer: issuer, subject: userId.rawValue), tenant: .opaque(tenantId.rawValue), application: nil,
                device: .opaque(deviceId.rawValue))
        default: break
        }
        return subject
    }
}
