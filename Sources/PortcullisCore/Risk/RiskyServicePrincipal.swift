public import Foundation

/// Where a workload identity signs in from (PROTOCOL §19): the networks (an IPv4 /24, an IPv6 /64) it has used, each with
/// when it was last seen, and the count towards its learning period. Bounded, written only when it changes.
public struct AddressProfile: Codable, Sendable, Equatable {
    public var signIns: Int = 0
    public var firstSignIn: Date?
    public var networks: [String: Date] = [:]

    public init() {}

    /// How many networks are kept (the oldest forgotten first).
    public static let maximumNetworks = 32

    public func learned(at now: Date) -> Bool {
        guard let first = firstSignIn else { return false }
        return signIns >= SignInProfile.learningSignIns && now.timeIntervalSince(first) >= SignInProfile.learningPeriod
    }

    /// An address's network as the profile keys it.
    public static func network(of address: IPAddress) -> String {
        address.isIPv4
            ? "\((address.low >> 24) & 0xFF).\((address.low >> 16) & 0xFF).\((address.low >> 8) & 0xFF).0/24"
            : String(address.high, radix: 16) + "::/64"
    }

    /// The profile after a sign-in from `address`, `nil` when nothing changed; whether the address was unusual (a network
    /// not seen, after the learning period).
    public func learning(_ address: IPAddress?, at now: Date) -> (profile: AddressProfile?, unusual: Bool) {
        var next = self
        if next.firstSignIn == nil { next.firstSignIn = now }
        if next.signIns < SignInProfile.learningSignIns { next.signIns += 1 }
        var unusual = false
        if let address {
            let network = Self.network(of: address)
            if let seen = networks[network] {
                if now.timeIntervalSince(seen) >= SignInProfile.lastSeenGranularity { next.networks[network] = now }
            } else {
                unusual = learned(at: now)
                next.networks[network] = now
                if next.networks.count > Self.maximumNetworks, let oldest = next.networks.min(by: { $0.value < $1.value })?.key {
                    next.networks[oldest] = nil
                }
            }
        }
        return (next == self ? nil : next, unusual)
    }
}

/// A workload identity's risk (Graph's `riskyServicePrincipal`, PROTOCOL §19): one document per application that signed
/// in as itself or was reported, ID its app ID. Its detections: a leaked secret reported (`leakedCredentials`), an
/// admin's confirmation, and sign-ins from a network it had not used after its learning period (`suspiciousSignins`).
public struct RiskyServicePrincipal: RiskBearing, Codable, Sendable, Equatable {
    public var id: AppID
    public var displayName: String
    public var riskLevel: RiskLevel
    public var riskState: RiskState
    public var riskDetail: RiskDetail
    public var riskLastUpdatedDateTime: Date?
    public var detections: [RiskDetection]
    public var history: [RiskyUserHistoryItem]
    public var profile: AddressProfile

    public init(application: Application) {
        id = application.appId
        displayName = application.displayName
        riskLevel = .none
        riskState = .none
        riskDetail = .none
        detections = []
        history = []
        profile = AddressProfile()
    }

    public var hasRisk: Bool { riskState != .none || !history.isEmpty }

    /// Graph's `riskyServicePrincipal` (its `id` the app ID, which Portcullis's `servicePrincipals` also answers to).
    public var graph: JSONValue {
        .object([
            "id": .string(id.rawValue), "appId": .string(id.rawValue), "displayName": .string(displayName), "isEnabled": .bool(true),
            "isProcessing": .bool(false), "servicePrincipalType": "Application",
            "riskLastUpdatedDateTime": riskLastUpdatedDateTime.map { .string(ISO8601.string($0)) } ?? .null, "riskLevel": .string(riskLevel.rawValue),
            "riskState": .string(riskState.rawValue), "riskDetail": .string(riskDetail.rawValue),
        ])
    }

    /// Graph's `servicePrincipalRiskDetection`s, newest first.
    public var graphDetections: [JSONValue] {
        detections.reversed().map { detection in
            .object([
                "id": .string(detection.id), "requestId": detection.requestId.map(JSONValue.string) ?? .null,
                "correlationId": detection.correlationId.map(JSONValue.string) ?? .null, "riskEventType": .string(detection.riskEventType.rawValue),
                "riskState": .string(detection.riskState.rawValue), "riskLevel": .string(detection.riskLevel.rawValue),
                "riskDetail": .string(detection.riskDetail.rawValue), "source": .string(detection.reportedBy == nil ? "IdentityProtection" : "Admin"),
                "detectionTimingType": .string(detection.riskEventType.timing.rawValue), "activity": "servicePrincipal", "tokenIssuerType": "AzureAD",
                "ipAddress": detection.ipAddress.map(JSONValue.string) ?? .null,
                "activityDateTime": .string(ISO8601.string(detection.activityDateTime)),
                "detectedDateTime": .string(ISO8601.string(detection.detectedDateTime)),
                "lastUpdatedDateTime": .string(ISO8601.string(detection.lastUpdatedDateTime)), "servicePrincipalId": .string(id.rawValue),
                "servicePrincipalDisplayName": .string(displayName), "appId": .string(id.rawValue), "keyIds": .array([]),
                "additionalInfo": detection.additionalInfo.map(JSONValue.string) ?? .null,
            ])
        }
    }
}

extension RiskyServicePrincipal: TenantDocument {
    public static let kind = DocumentKind.riskyServicePrincipal
    public var documentId: String { id.rawValue }
    public static var list: WritableKeyPath<TenantContents, [RiskyServicePrincipal]>? { \.riskyServicePrincipals }
}

extension RiskyServicePrincipal: AdministeredDocument {
    public static func read(_ body: JSONValue, in write: DocumentWrite) async throws -> RiskyServicePrincipal {
        throw DocumentRefusal(
            .notWritable,
            "A workload identity's risk is computed from its sign-ins; admins report, confirm or dismiss it (identityProtection/riskyServicePrincipals).")
    }
}

extension TenantSnapshot {
    /// A workload identity's risk as kept, `nil` for one never seen.
    public func riskyServicePrincipal(appId: AppID) -> RiskyServicePrincipal? { Self.find(appId.rawValue, in: contents.riskyServicePrincipals) }

    /// The workload identities whose risk was ever recorded.
    public var riskyServicePrincipals: [RiskyServicePrincipal] { contents.riskyServicePrincipals.filter(\.hasRisk) }

    /// Every kept workload identity detection of the tenant, newest first.
    public var servicePrincipalRiskDetections: [JSONValue] {
        contents.riskyServicePrincipals.flatMap { principal in principal.detections.map { (principal, $0) } }
            .sorted { $0.1.detectedDateTime > $1.1.detectedDateTime }
            .map { principal, detection in
                var one = principal
                one.detections = [detection]
                return one.graphDetections[0]
            }
    }
}
