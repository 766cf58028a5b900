public import Foundation

/// Graph's `riskLevel` (PROTOCOL §19): how sure a detection, a sign-in or a user's risk is. `hidden` is what Entra shows
/// without a licence for it; Portcullis never computes it, but a policy may name it (it then matches nothing).
public enum RiskLevel: String, Codable, Sendable, CaseIterable, Comparable {
    case low, medium, high, hidden, none, unknownFutureValue

    /// The levels a detection or a user can have here, lowest first.
    public static let computed: [RiskLevel] = [.none, .low, .medium, .high]

    var rank: Int {
        switch self {
        case .none, .hidden, .unknownFutureValue: 0
        case .low: 1
        case .medium: 2
        case .high: 3
        }
    }

    public static func < (a: RiskLevel, b: RiskLevel) -> Bool { a.rank < b.rank }

    /// The highest of `levels`, `none` for none.
    public static func highest<Levels: Sequence>(_ levels: Levels) -> RiskLevel where Levels.Element == RiskLevel {
        levels.reduce(RiskLevel.none) { max($0, $1) }
    }
}

/// Graph's `riskState`: where a user's (or a detection's) risk stands.
public enum RiskState: String, Codable, Sendable, CaseIterable {
    case none, confirmedSafe, remediated, dismissed, atRisk, confirmedCompromised, unknownFutureValue

    /// Whether risk in this state counts towards the user's level.
    public var isActive: Bool { self == .atRisk || self == .confirmedCompromised }
}

/// Graph's `riskDetail`: why the risk is where it is (the values Portcullis sets, and the rest of Graph's enumeration so
/// that a stored value from a transmitter or a later version reads back).
public enum RiskDetail: String, Codable, Sendable, CaseIterable {
    case none, adminGeneratedTemporaryPassword, userPerformedSecuredPasswordChange, userPerformedSecuredPasswordReset
    case adminConfirmedSigninSafe, aiConfirmedSigninSafe, userPassedMFADrivenByRiskBasedPolicy, adminDismissedAllRiskForUser
    case adminConfirmedSigninCompromised, hidden, adminConfirmedUserCompromised, unknownFutureValue
    case m365DAdminDismissedDetection, adminConfirmedServicePrincipalCompromised, adminDismissedAllRiskForServicePrincipal
    case userChangedPasswordOnPremises, adminDismissedRiskForSignIn, adminConfirmedAccountSafe
}

/// Graph's `riskEventType` values for the detections Portcullis makes (PROTOCOL §19), each with its level and timing.
public enum RiskEventType: String, Codable, Sendable, CaseIterable {
    /// A sign-in from an address in the operator's anonymizer list (Tor, anonymizing VPNs).
    case anonymizedIPAddress
    /// A sign-in from an address in the operator's malicious list.
    case maliciousIPAddress
    /// A country, platform or client this user has not signed in with during their learning window.
    case unfamiliarFeatures
    /// Atypical travel: two sign-ins from countries too far apart for the time between them.
    case unlikelyTravel
    /// A successful sign-in from an address that tried wrong passwords against many accounts.
    case passwordSpray
    /// The user's credentials were reported leaked (an admin, the API, a transmitter's `credential-compromise`).
    case leakedCredentials
    /// Threat intelligence received (an admin, the API, a transmitter's risk event).
    case investigationsThreatIntelligence
    /// An admin confirmed the user compromised.
    case adminConfirmedUserCompromised
    /// A workload identity signed in from an address it has not used during its learning period (Entra's
    /// `suspiciousSignins` for service principals).
    case suspiciousSignins
    /// An admin confirmed the workload identity compromised.
    case adminConfirmedServicePrincipalCompromised

    /// Graph's `riskDetectionTimingType`.
    public enum Timing: String, Codable, Sendable {
        case notDefined, realtime, nearRealtime, offline, unknownFutureValue
    }

    /// Real-time detections decide the sign-in they are found in (its sign-in risk); offline ones raise the user's risk,
    /// which the next sign-in or refresh sees (PROTOCOL §19, as Entra times them).
    public var timing: Timing {
        switch self {
        case .anonymizedIPAddress, .maliciousIPAddress, .unfamiliarFeatures: .realtime
        case .unlikelyTravel, .passwordSpray, .leakedCredentials, .investigationsThreatIntelligence, .adminConfirmedUserCompromised, .suspiciousSignins,
            .adminConfirmedServicePrincipalCompromised:
            .offline
        }
    }

    /// The level a detection of this type has (Entra documents no fixed levels; these are Portcullis's, in
    /// docs/decisions.md): reports of compromise and known-bad addresses high, the behavioural detections medium.
    public var level: RiskLevel {
        switch self {
        case .maliciousIPAddress, .passwordSpray, .leakedCredentials, .investigationsThreatIntelligence, .adminConfirmedUserCompromised,
            .adminConfirmedServicePrincipalCompromised:
            .high
        case .anonymizedIPAddress, .unlikelyTravel, .unfamiliarFeatures, .suspiciousSignins: .medium
        }
    }

    /// Graph's `activity`: whether the detection is about one sign-in or about the user.
    public var activity: String {
        switch self {
        case .leakedCredentials, .investigationsThreatIntelligence, .adminConfirmedUserCompromised: "user"
        case .adminConfirmedServicePrincipalCompromised: "servicePrincipal"
        default: "signin"
        }
    }

    /// Graph's `source` of a detection.
    public var source: String {
        switch self {
        case .adminConfirmedUserCompromised, .adminConfirmedServicePrincipalCompromised: "AdminConfirmed"
        default: "IdentityProtection"
        }
    }
}

/// Graph's `conditionalAccessInsiderRiskLevels` (a flags enumeration, one comma-separated string on the wire): the
/// per-user level an admin, Graph or a transmitter sets (PROTOCOL §19; Entra takes it from Purview).
public enum InsiderRiskLevel: String, Codable, Sendable, CaseIterable, Comparable {
    case minor, moderate, elevated

    public static func < (a: InsiderRiskLevel, b: InsiderRiskLevel) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }

    /// The levels a flags string names (unknown names ignored, as Graph's `unknownFutureValue`).
    public static func set(from text: String) -> Set<InsiderRiskLevel> {
        Set(text.split(separator: ",").compactMap { InsiderRiskLevel(rawValue: String($0.filter { $0 != " " })) })
    }

    /// A set as Graph writes it.
    public static func text(of levels: Set<InsiderRiskLevel>) -> String {
        allCases.filter(levels.contains).map(\.rawValue).joined(separator: ",")
    }
}

/// What risk a sign-in carries into conditional access (PROTOCOL §19): its own (the highest real-time detection), the
/// user's as kept, the insider level an admin set, and a workload identity's.
public struct RiskFacts: Sendable, Equatable {
    /// The sign-in's risk: the highest level among `detections` (real-time ones).
    public var signIn: RiskLevel
    /// The user's risk as aggregated and kept (`RiskyUser`), `none` for a user never at risk.
    public var user: RiskLevel
    /// When the user's risk last changed: a remediation must be a sign-in after it.
    public var userRiskUpdated: Date?
    public var insider: InsiderRiskLevel?
    /// An app-only sign-in's service principal risk.
    public var servicePrincipal: RiskLevel
    /// The real-time detections this sign-in raised.
    public var detections: [RiskEventType]

    public init(
        signIn: RiskLevel = .none, user: RiskLevel = .none, userRiskUpdated: Date? = nil, insider: InsiderRiskLevel? = nil,
        servicePrincipal: RiskLevel = .none, detections: [RiskEventType] = []
    ) {
        self.signIn = signIn
        self.user = user
        self.userRiskUpdated = userRiskUpdated
        self.insider = insider
        self.servicePrincipal = servicePrincipal
        self.detections = detections
    }

    public static let none = RiskFacts()
}
