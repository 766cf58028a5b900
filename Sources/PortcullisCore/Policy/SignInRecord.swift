public import Foundation

/// One conditional-access evaluation, as the sign-in log keeps it (PROTOCOL §3).
public struct SignInRecord: Codable, Sendable, Equatable {
    public var id: String
    public var createdDateTime: Date
    public var correlationId: String
    public var tenantId: TenantID
    public var userId: ObjectID?
    public var userPrincipalName: String?
    public var clientAppId: AppID
    public var resourceAppId: AppID
    public var resource: String?
    public var grantType: String
    public var clientAppType: String
    public var capabilities: [String]
    public var ipAddress: String?
    public var platform: String?
    public var appProtection: String
    public var conditionalAccessStatus: Decision.Status
    public var appliedConditionalAccessPolicies: [Decision.AppliedPolicy]
    /// The AADSTS code of the refusal, when the grant was refused by conditional access.
    public var errorCode: Int?
    /// How the user had authenticated (`amr`), so that the impact of a draft can replay the sign-in
    /// (absent in records written before it was kept: replayed as password only).
    public var authenticationMethods: [String]?
    /// Graph's `authenticationContextClassReferences` (PROTOCOL §13): the contexts asked for (`required`) and those met
    /// unasked (`previouslySatisfied`); absent when none.
    public var authenticationContextClassReferences: [ContextReference]?
    /// The country of `ipAddress` in the IP-to-country table at the time (PROTOCOL §13), when known: what impact replays.
    public var countryOrRegion: String?
    /// Graph's `tokenProtectionStatusDetails` (PROTOCOL §15): whether the tokens were bound to a DPoP key. Recorded for a
    /// bound grant and for one a policy demanded binding of; absent otherwise (and before DPoP), which replays as unbound.
    public var tokenProtectionStatusDetails: TokenProtectionStatus?
    /// Graph's `isInteractive`: the user took part (a password, a page, a device code) — or not (a refresh, an app's own
    /// token, a code issued silently from a session). Absent in records written before it was kept: `interactive` reads
    /// it from the grant type then.
    public var isInteractive: Bool?
    /// Graph's `originalTransferMethod`: the authentication flow the sign-in's session began with (`deviceCodeFlow` for
    /// a device code and every later refresh of its family, PROTOCOL §13); absent for none.
    public var originalTransferMethod: TransferMethod?
    /// Graph's `deviceDetail`: the device the sign-in proved it came from (PROTOCOL §18); absent for an unregistered one.
    public var deviceDetail: DeviceDetail?
    /// Graph's risk members (PROTOCOL §19): the sign-in's own risk (`riskLevelDuringSignIn`), the user's as it stood
    /// (`riskLevelAggregated`), the real-time detections (`riskEventTypes_v2`); absent when all are none.
    public var riskLevelDuringSignIn: RiskLevel?
    public var riskLevelAggregated: RiskLevel?
    public var riskEventTypes_v2: [RiskEventType]?
    /// A record that stands for several non-interactive sign-ins of one window with the same facts (issue 32, as Entra's
    /// non-interactive log aggregates them): how many, and the last one's time and correlation ID. The record's own
    /// `createdDateTime` and `correlationId` are the first one's.
    public var aggregate: Aggregate?
    /// Graph's `clientCredentialType` (PROTOCOL §21): how the client authenticated — absent for a public client (and in
    /// records written before it was kept).
    public var clientCredentialType: ClientCredentialType?

    public struct Aggregate: Codable, Sendable, Equatable {
        public var count: Int
        public var lastDateTime: Date
        public var lastCorrelationId: String

        public init(count: Int, lastDateTime: Date, lastCorrelationId: String) {
            self.count = count
            self.lastDateTime = lastDateTime
            self.lastCorrelationId = lastCorrelationId
        }
    }

    /// Records the risk a sign-in was decided with (nothing when there was none).
    public mutating func record(risk: RiskFacts) {
        guard risk != .none, risk.signIn != .none || risk.user != .none || !risk.detections.isEmpty else { return }
        riskLevelDuringSignIn = risk.signIn
        riskLevelAggregated = risk.user
        riskEventTypes_v2 = risk.detections.isEmpty ? nil : risk.detections
    }

    /// The risk a replay decides with: what was recorded.
    public var risk: RiskFacts {
        RiskFacts(signIn: riskLevelDuringSignIn ?? .none, user: riskLevelAggregated ?? .none, detections: riskEventTypes_v2 ?? [])
    }

    /// Whether the user took part (`isInteractive`, or — for older records — what the grant type implies).
    public var interactive: Bool {
        isInteractive ?? !(grantType == GrantType.refreshToken.rawValue || grantType == GrantType.clientCredentials.rawValue)
    }

    /// How many sign-ins the record stands for.
    public var count: Int { aggregate?.count ?? 1 }

    /// The last sign-in it stands for.
    public var lastDateTime: Date { aggregate?.lastDateTime ?? createdDateTime }

    /// Graph's `deviceDetail` of a proven device: what conditional access decided on (replayed as a device with these).
    public struct DeviceDetail: Codable, Sendable, Equatable {
        public var deviceId: String
        public var displayName: String?
        public var operatingSystem: String?
        public var isCompliant: Bool
        public var isManaged: Bool
        public var trustType: DeviceFacts.TrustType

        public init(_ device: DeviceFacts) {
            deviceId = device.deviceId
            displayName = device.displayName
            operatingSystem = device.operatingSystem
            isCompliant = device.isCompliant
            isManaged = device.isManaged
            trustType = device.trustType
        }

        /// The device as a replay sees it: the properties recorded, no others.
        public var facts: DeviceFacts {
            DeviceFacts(
                deviceId: deviceId, displayName: displayName, trustType: trustType, isCompliant: isCompliant, isManaged: isManaged,
                operatingSystem: operatingSystem)
        }
    }

    /// Graph's `tokenProtectionStatusDetails`: `bound` when the request carried a valid DPoP proof.
    public struct TokenProtectionStatus: Codable, Sendable, Equatable {
        public enum Status: String, Codable, Sendable {
            case bound, unbound
        }

        public var signInSessionStatus: Status

        public init(bound: Bool) { signInSessionStatus = bound ? .bound : .unbound }
    }

    /// One entry of `authenticationContextClassReferences`.
    public struct ContextReference: Codable, Sendable, Equatable {
        /// Graph's `detail`: asked for, or met by this authentication and added unasked.
        public enum Detail: String, Codable, Sendable {
            case required, previouslySatisfied
        }

        public var id: String
        public var detail: Detail

        public init(id: String, detail: Detail) {
            self.id = id
            self.detail = detail
        }
    }

    public init(
        id: String, createdDateTime: Date, correlationId: String, tenantId: TenantID, userId: ObjectID?, userPrincipalName: String?,
        clientAppId: AppID, resourceAppId: AppID, resource: String?, grantType: String, clientAppType: String,
        capabilities: [String], ipAddress: String?, platform: String?, appProtection: String,
        conditionalAccessStatus: Decision.Status, appliedConditionalAccessPolicies: [Decision.AppliedPolicy], errorCode: Int?,
        authenticationMethods: [String]? = nil, authenticationContexts requested: [String] = [], met: [String] = []
    ) {
        self.authenticationMethods = authenticationMethods
        let references =
            requested.map { ContextReference(id: $0, detail: .required) }
            + met.filter { !requested.contains($0) }.map { ContextReference(id: $0, detail: .previouslySatisfied) }
        self.authenticationContextClassReferences = references.isEmpty ? nil : references
        self.id = id
        self.createdDateTime = createdDateTime
        self.correlationId = correlationId
        self.tenantId = tenantId
        self.userId = userId
        self.userPrincipalName = userPrincipalName
        self.clientAppId = clientAppId
        self.resourceAppId = resourceAppId
        self.resource = resource
        self.grantType = grantType
        self.clientAppType = clientAppType
        self.capabilities = capabilities
        self.ipAddress = ipAddress
        self.platform = platform
        self.appProtection = appProtection
        self.conditionalAccessStatus = conditionalAccessStatus
        self.appliedConditionalAccessPolicies = appliedConditionalAccessPolicies
        self.errorCode = errorCode
    }
}

/// Filters of the sign-in log query.
public struct SignInQuery: Sendable, Equatable {
    public var tenantId: TenantID
    public var userId: ObjectID?
    public var clientAppId: AppID?
    public var resourceAppId: AppID?
    public var status: Decision.Status?
    public var policyId: PolicyID?
    public var correlationId: String?
    /// Records with a sign-in at or after `from` (an aggregate's last one counts) and before `to` (its first one counts):
    /// those that overlap the window.
    public var from: Date?
    public var to: Date?
    /// Page size.
    public var limit: Int
    /// Continue after this cursor (exclusive), newest first.
    public var before: Int64?

    public init(
        tenantId: TenantID, userId: ObjectID? = nil, clientAppId: AppID? = nil, resourceAppId: AppID? = nil, status: Decision.Status? = nil,
        policyId: PolicyID? = nil, correlationId: String? = nil, from: Date? = nil, to: Date? = nil, limit: Int = 50, before: Int64? = nil
    ) {
        self.tenantId = tenantId
        self.userId = userId
        self.clientAppId = clientAppId
        self.resourceAppId = resourceAppId
        self.status = status
        self.policyId = policyId
        self.correlationId = correlationId
        self.from = from
        self.to = to
        self.limit = limit
        self.before = before
    }
}
