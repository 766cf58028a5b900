public import Foundation

/// One detection (Graph's `riskDetection`, PROTOCOL §19), kept with its user.
public struct RiskDetection: Codable, Sendable, Equatable {
    public var id: String
    public var riskEventType: RiskEventType
    public var riskLevel: RiskLevel
    public var riskState: RiskState
    public var riskDetail: RiskDetail
    /// The sign-in it was found in (its request and correlation IDs), when it was one.
    public var requestId: String?
    public var correlationId: String?
    public var ipAddress: String?
    public var countryOrRegion: String?
    /// When what it is about happened, and when it was found.
    public var activityDateTime: Date
    public var detectedDateTime: Date
    public var lastUpdatedDateTime: Date
    /// Who reported it, for detections received (an admin, a transmitter's issuer), and what they said.
    public var reportedBy: String?
    public var additionalInfo: String?

    public init(
        id: String = UUID.randomIdentifierText, type: RiskEventType, level: RiskLevel? = nil, state: RiskState = .atRisk, activity: Date, detected: Date,
        requestId: String? = nil, correlationId: String? = nil, ipAddress: String? = nil, countryOrRegion: String? = nil, reportedBy: String? = nil,
        additionalInfo: String? = nil
    ) {
        self.id = id
        self.riskEventType = type
        self.riskLevel = level ?? type.level
        self.riskState = state
        self.riskDetail = .none
        self.requestId = requestId
        self.correlationId = correlationId
        self.ipAddress = ipAddress
        self.countryOrRegion = countryOrRegion
        self.activityDateTime = activity
        self.detectedDateTime = detected
        self.lastUpdatedDateTime = detected
        self.reportedBy = reportedBy
        self.additionalInfo = additionalInfo.map { String($0.prefix(512)) }
    }
}

/// One change of a user's risk (Graph's `riskyUserHistoryItem`): the state after it, who caused it, what did.
public struct RiskyUserHistoryItem: Codable, Sendable, Equatable {
    public var id: String
    public var riskLevel: RiskLevel
    public var riskState: RiskState
    public var riskDetail: RiskDetail
    public var riskLastUpdatedDateTime: Date
    /// Graph's `initiatedBy`: an admin's or user's object ID, or the system.
    public var initiatedBy: String?
    /// Graph's `activity`: the detections' event types that changed it, and the detail.
    public var eventTypes: [RiskEventType]
}

/// Something that carries risk (PROTOCOL §19) — a user, a workload identity: its level, state and detail, the newest
/// detections and changes, and the one way they change (`add`, `close`).
public protocol RiskBearing {
    var riskLevel: RiskLevel { get set }
    var riskState: RiskState { get set }
    var riskDetail: RiskDetail { get set }
    var riskLastUpdatedDateTime: Date? { get set }
    /// The newest detections, newest last (at most `RiskDetection.kept`).
    var detections: [RiskDetection] { get set }
    /// The newest changes, newest last (at most `RiskyUserHistoryItem.kept`).
    var history: [RiskyUserHistoryItem] { get set }
}

extension RiskDetection {
    /// How many detections a user or workload identity keeps.
    public static let kept = 50
}

extension RiskyUserHistoryItem {
    /// How many changes of risk are kept.
    public static let kept = 50
}

extension RiskBearing {
    /// Adds detections; each active one raises the level to at least its own (a confirmed compromise stays so). Returns
    /// whether the risk changed.
    @discardableResult
    public mutating func add(_ found: [RiskDetection], at now: Date, initiatedBy: String?) -> Bool {
        guard !found.isEmpty else { return false }
        detections.append(contentsOf: found)
        if detections.count > RiskDetection.kept { detections.removeFirst(detections.count - RiskDetection.kept) }
        let active = found.filter { $0.riskState.isActive }
        guard !active.isEmpty else { return false }
        let level = max(riskLevel, RiskLevel.highest(active.map(\.riskLevel)))
        let compromised = riskState == .confirmedCompromised || active.contains { $0.riskState == .confirmedCompromised }
        let state: RiskState = compromised ? .confirmedCompromised : .atRisk
        let detail: RiskDetail = compromised ? (riskState == .confirmedCompromised ? riskDetail : confirmedDetail(active)) : .none
        guard level != riskLevel || state != riskState || detail != riskDetail else { return false }
        set(level: level, state: state, detail: detail, at: now, initiatedBy: initiatedBy, eventTypes: active.map(\.riskEventType))
        return true
    }

    /// The detail of a confirmation: the workload identity's, or the user's.
    func confirmedDetail(_ active: [RiskDetection]) -> RiskDetail {
        active.contains { $0.riskEventType == .adminConfirmedServicePrincipalCompromised }
            ? .adminConfirmedServicePrincipalCompromised : .adminConfirmedUserCompromised
    }

    /// Closes every active detection and the risk: `remediated` (a secure password change, a strong sign-in) or
    /// `dismissed` (an admin). Returns whether anything changed.
    @discardableResult
    public mutating func close(_ state: RiskState, detail: RiskDetail, at now: Date, initiatedBy: String?) -> Bool {
        guard riskState.isActive || riskLevel != .none else { return false }
        for index in detections.indices where detections[index].riskState.isActive {
            detections[index].riskState = state
            detections[index].riskDetail = detail
            detections[index].lastUpdatedDateTime = now
        }
        set(level: .none, state: state, detail: detail, at: now, initiatedBy: initiatedBy, eventTypes: [])
        return true
    }

    mutating func set(level: RiskLevel, state: RiskState, detail: RiskDetail, at now: Date, initiatedBy: String?, eventTypes: [RiskEventType]) {
        riskLevel = level
        riskState = state
        riskDetail = detail
        riskLastUpdatedDateTime = now
        history.append(
            RiskyUserHistoryItem(
                id: UUID.randomIdentifierText, riskLevel: level, riskState: state, riskDetail: detail, riskLastUpdatedDateTime: now, initiatedBy: initiatedBy,
                eventTypes: eventTypes))
        if history.count > RiskyUserHistoryItem.kept { history.removeFirst(history.count - RiskyUserHistoryItem.kept) }
    }
}

/// What Portcullis has learned of where and how a user signs in (PROTOCOL §19): the familiar countries, platforms and
/// clients that unfamiliar-properties detection compares against, and the last place per country that atypical travel
/// measures from. Bounded: a few of each, the oldest forgotten first.
public struct SignInProfile: Codable, Sendable, Equatable {
    /// Successful sign-ins counted towards the learning period (counting stops at `learningSignIns`).
    public var signIns: Int = 0
    public var firstSignIn: Date?
    /// Familiar values, each with when it was last seen (at `lastSeenGranularity`).
    public var countries: [String: Date] = [:]
    public var platforms: [String: Date] = [:]
    public var clients: [String: Date] = [:]

    public init() {}

    /// At least 10 sign-ins over at least 5 days, as Entra's learning period.
    public static let learningSignIns = 10
    public static let learningPeriod: TimeInterval = 5 * 86_400
    /// How many familiar values of each kind are kept.
    public static let maximumValues = 16
    /// A value already familiar is marked seen again at most this often (the profile is written only when it changes).
    public static let lastSeenGranularity: TimeInterval = 3_600

    public func learned(at now: Date) -> Bool {
        guard let first = firstSignIn else { return false }
        return signIns >= Self.learningSignIns && now.timeIntervalSince(first) >= Self.learningPeriod
    }
}

/// A user's risk (Graph's `riskyUser`, PROTOCOL §19), its detections and history, and the sign-in profile the detections
/// compare against: one document per user who has signed in or been at risk, ID the user's object ID. Written by the
/// risk engine after sign-ins, by admins (`confirmCompromised`, `dismiss`), by remediation and by received signals.
public struct RiskyUser: RiskBearing, Codable, Sendable, Equatable {
    public var id: ObjectID
    public var userPrincipalName: String
    public var userDisplayName: String
    public var riskLevel: RiskLevel
    public var riskState: RiskState
    public var riskDetail: RiskDetail
    public var riskLastUpdatedDateTime: Date?
    /// The insider risk level an admin, Graph or a transmitter set (`nil`: none).
    public var insiderRiskLevel: InsiderRiskLevel?
    /// The newest detections, newest last (at most `RiskDetection.kept`).
    public var detections: [RiskDetection]
    /// The newest changes of risk, newest last (at most `RiskyUserHistoryItem.kept`).
    public var history: [RiskyUserHistoryItem]
    public var profile: SignInProfile

    public init(user: User) {
        id = user.id
        userPrincipalName = user.userPrincipalName
        userDisplayName = user.displayName
        riskLevel = .none
        riskState = .none
        riskDetail = .none
        detections = []
        history = []
        profile = SignInProfile()
    }

    /// Whether anything about the user's risk was ever recorded (the Graph list shows only these users).
    public var hasRisk: Bool { riskState != .none || !history.isEmpty || insiderRiskLevel != nil }

}

extension RiskyUser: TenantDocument {
    public static let kind = DocumentKind.riskyUser
    public var documentId: String { id.rawValue }
    public static var list: WritableKeyPath<TenantContents, [RiskyUser]>? { \.riskyUsers }

    /// A change of risk (PROTOCOL §19): a user confirmed compromised by an admin loses everything, as `confirmCompromised`
    /// always did (§14.1); any change of level is CAEP `risk-level-change` on the tenant's streams. A profile's change
    /// (learning) is neither.
    public static func effects(before: RiskyUser?, after: RiskyUser?, tenantId: TenantID, at: Date) -> ChangeEffects {
        guard let after else { return .none(tenantId: tenantId, at: at) }
        var effects = ChangeEffects.none(tenantId: tenantId, at: at)
        let was = before?.riskLevel ?? RiskLevel.none
        let initiator: CriticalEvent.Initiator =
            switch after.riskDetail {
            case .userPerformedSecuredPasswordChange, .userPassedMFADrivenByRiskBasedPolicy: .user
            case .adminDismissedAllRiskForUser, .adminConfirmedUserCompromised: .admin
            default: .system
            }
        // An admin's confirmation voids everything each time it is made (the attacker may have signed in again since).
        let known = Set(before?.detections.map(\.id) ?? [])
        if after.detections.contains(where: { $0.riskEventType == .adminConfirmedUserCompromised && !known.contains($0.id) }) {
            effects.revocations.append(ChangeEffects.Revocation(userId: after.id, reach: .everything, voidsAccessTokens: true))
            effects.events.append(
                CriticalEvent(.credentialCompromised, tenantId: tenantId, userId: after.id, userPrincipalName: after.userPrincipalName, at: at))
        }
        if was != after.riskLevel {
            let reason = after.history.last.map { item in
                item.eventTypes.isEmpty ? item.riskDetail.rawValue : item.eventTypes.map(\.rawValue).joined(separator: ",")
            }
            effects.events.append(
                CriticalEvent(
                    .riskLevelChanged(from: was, to: after.riskLevel, reason: reason), tenantId: tenantId, userId: after.id,
                    userPrincipalName: after.userPrincipalName, at: at, initiator: initiator))
        }
        return effects
    }
}

extension RiskyUser: AdministeredDocument {
    public static func read(_ body: JSONValue, in write: DocumentWrite) async throws -> RiskyUser {
        throw DocumentRefusal(
            .notWritable, "A user's risk is computed from sign-ins; admins confirm it compromised or dismiss it (identityProtection/riskyUsers).")
    }
}
