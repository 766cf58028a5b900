import Foundation

/// Everything conditional access needs to know about one sign-in, fetched before evaluation.
public struct SignInFacts: Sendable, Equatable {
    /// Graph's `conditionalAccessClientApp`. `exchangeActiveSync` and `other` are the legacy clients (POP, IMAP, SMTP,
    /// older Office): a policy may name them, as Microsoft's "Block legacy authentication" does, but Portcullis speaks
    /// no legacy protocol, so no sign-in is ever one of them (PROTOCOL §17).
    public enum ClientAppType: String, Sendable, Codable, CaseIterable {
        case browser, mobileAppsAndDesktopClients, exchangeActiveSync, other

        /// The client types a sign-in here can have.
        public static let modern: [ClientAppType] = [.browser, .mobileAppsAndDesktopClients]

        /// A sign-in's type, as Entra tells them apart: a web app (a confidential client) signing a user in through the
        /// page — the page itself (`grant` nil), its code, and the refreshes of that sign-in — is `browser`; a native app
        /// (a public client) is `mobileAppsAndDesktopClients` even where a browser shows the page, and so is any other
        /// grant (a password, a device code).
        public static func of(client: Application, grant: GrantType?) -> ClientAppType {
            guard !client.publicClient else { return .mobileAppsAndDesktopClients }
            switch grant {
            case nil, .authorizationCode?, .refreshToken?: return .browser
            default: return .mobileAppsAndDesktopClients
            }
        }
    }

    /// What the compliance service says about this account and client application.
    public enum AppProtection: Sendable, Equatable {
        /// A compliant, fresh enrollment (its ID).
        case compliant(enrollmentId: String)
        /// Enrolled (or known) but not compliant.
        case notCompliant
        /// No enrollment at all.
        case none

        public var isCompliant: Bool { if case .compliant = self { true } else { false } }
    }

    /// The user's object ID; `nil` for an app-only (client credentials) sign-in.
    public var userId: ObjectID?
    /// The user's direct groups.
    public var groupIds: [ObjectID]
    /// The directory roles the user holds (template IDs, PROTOCOL §17), directly or through a group.
    public var roleIds: [RoleID] = []
    /// What kind of guest the user is (`nil`: a member), and their home tenant when it is another (PROTOCOL §17).
    public var guestType: GuestOrExternalUserType?
    public var homeTenantId: TenantID?
    public var clientAppId: AppID
    /// The resource (cloud app) the token is for.
    public var resourceAppId: AppID
    /// The application groups the resource is in (`Office365`, `MicrosoftAdminPortals`; PROTOCOL §17).
    public var resourceApplicationGroups: Set<ConditionKeyword> = []
    public var clientAppType: ClientAppType
    public var platform: DevicePlatform?
    public var ipAddress: IPAddress?
    /// Declared client capabilities, lower-case.
    public var capabilities: [String]
    public var appProtection: AppProtection
    /// Whether the client application is an approved client app.
    public var approvedClientApp: Bool
    /// How the user authenticated (what authentication strengths compare).
    public var authentication: AuthenticationContext
    /// Set when this is not a sign-in to an application but a user action (PROTOCOL §12.3,
    /// `urn:user:registersecurityinfo`): then only the policies that include the action apply, and no others.
    public var userAction: String?
    /// How the sign-in was transferred from another device, if it was (PROTOCOL §13): the device code flow's
    /// approval on `/devicelogin` and its grant.
    public var transferMethod: TransferMethod?
    /// The country of `ipAddress` in the operator's IP-to-country table (PROTOCOL §13), `nil` when unknown (no address, no
    /// table, or an address in no range).
    public var country: String?
    /// The authentication contexts the sign-in asks for (PROTOCOL §13, `acrs`): the policies that target them apply too.
    public var authenticationContexts: [String] = []
    /// Policies a claims challenge named (`polids`, PROTOCOL §21): they apply to this sign-in whatever application they
    /// target, so that the user meets what a downstream API's policy asked for.
    public var challengedPolicies: Set<String> = []
    /// The request carried a valid DPoP proof, so the tokens will be bound to its key (PROTOCOL §15).
    public var proofOfPossession = false
    /// The agreements (terms of use) the user has accepted and whose acceptance is current (PROTOCOL §17): gathered only
    /// for those some policy requires (`CompiledPolicySet.termsOfUseAgreements`).
    public var acceptedAgreements: Set<PolicyID> = []
    /// The device the sign-in proved it came from (PROTOCOL §18); `nil`: an unregistered device.
    public var device: DeviceFacts?
    /// The sign-in's, the user's, the insider and the workload identity's risk (PROTOCOL §19).
    public var risk = RiskFacts.none
    /// Whether the sign-in carried multi-factor authentication.
    public var multiFactorAuthenticated: Bool { authentication.includesSecondFactor }

    public init(
        userId: ObjectID?, groupIds: [ObjectID], clientAppId: AppID, resourceAppId: AppID,
        clientAppType: ClientAppType = .mobileAppsAndDesktopClients, platform: DevicePlatform? = nil, ipAddress: IPAddress? = nil,
        capabilities: [String] = [], appProtection: AppProtection = .none, approvedClientApp: Bool = false,
        authentication: AuthenticationContext = .none
    ) {
        self.userId = userId
        self.groupIds = groupIds
        self.clientAppId = clientAppId
        self.resourceAppId = resourceAppId
        self.clientAppType = clientAppType
        self.platform = platform
        self.ipAddress = ipAddress
        self.capabilities = capabilities
        self.appProtection = appProtection
        self.approvedClientApp = approvedClientApp
        self.authentication = authentication
    }

    public var declaresProtApp: Bool { capabilities.contains(ClientCapability.protApp) }
}

extension SignInFacts {
    /// What one surface knows of a sign-in — the token endpoint, the sign-in pages, what-if, the replay of a recorded
    /// sign-in — for the one builder (`SignInFacts(_:directory:)`).
    public struct Input: Sendable {
        public var userId: ObjectID?
        public var clientAppId: AppID
        public var resourceAppId: AppID
        public var authentication: AuthenticationContext
        public var platform: DevicePlatform?
        public var ipAddress: IPAddress?
        /// The address's country in the IP-to-country table, when known.
        public var country: String?
        public var capabilities: ClaimsRequest
        public var appProtection: AppProtection = .none
        /// Whether the client is an approved app: its registration's, unless the surface says otherwise (what-if, replay).
        public var approvedClientApp: Bool?
        public var clientAppType: ClientAppType = .mobileAppsAndDesktopClients
        public var transferMethod: TransferMethod?
        public var proofOfPossession = false
        public var userAction: String?
        /// The device proven at sign-in (PROTOCOL §18), `nil` when none was.
        public var device: DeviceFacts?
        /// The risk the surface found or was told (PROTOCOL §19).
        public var risk = RiskFacts.none

        public init(
            userId: ObjectID?, clientAppId: AppID, resourceAppId: AppID, authentication: AuthenticationContext, capabilities: ClaimsRequest = ClaimsRequest()
        ) {
            self.userId = userId
            self.clientAppId = clientAppId
            self.resourceAppId = resourceAppId
            self.authentication = authentication
            self.capabilities = capabilities
        }

        /// From the directory's objects.
        public init(
            user: User?, client: Application, resource: Application, authentication: AuthenticationContext, platform: DevicePlatform?,
            ipAddress: IPAddress?, capabilities: ClaimsRequest
        ) {
            self.init(userId: user?.id, clientAppId: client.appId, resourceAppId: resource.appId, authentication: authentication, capabilities: capabilities)
            self.platform = platform
            self.ipAddress = ipAddress
        }
    }

    /// The one way a sign-in's facts are put together, whichever surface asks: the user's groups from the directory,
    /// whether the client is an approved app from its registration (unless the input says otherwise), the second factor
    /// from how the user authenticated, the contexts asked for from the claims request.
    public init(_ input: Input, directory: DirectorySnapshot) {
        self.init(
            userId: input.userId, groupIds: input.userId.map { directory.groupIds(ofUser: $0) } ?? [], clientAppId: input.clientAppId,
            resourceAppId: input.resourceAppId, clientAppType: input.clientAppType, platform: input.platform, ipAddress: input.ipAddress,
            capabilities: input.capabilities.capabilities, appProtection: input.appProtection,
            approvedClientApp: input.approvedClientApp ?? directory.application(appId: input.clientAppId)?.approvedClientApp ?? false,
            authentication: input.authentication)
        roleIds = input.userId.map { directory.roleIds(ofUser: $0) } ?? []
        let user = input.userId.flatMap { directory.user(id: $0) }
        guestType = user?.guestType
        homeTenantId = user?.homeAccount?.tenantId
        resourceApplicationGroups = directory.application(appId: input.resourceAppId)?.applicationGroups ?? []
        authenticationContexts = input.capabilities.authenticationContexts
        challengedPolicies = Set(input.capabilities.policyIds)
        country = input.country
        transferMethod = input.transferMethod
        proofOfPossession = input.proofOfPossession
        // A token for the device registration service is the user action of registering a device (PROTOCOL §18), as in Entra:
        // the policies for that action apply to it, and no others.
        userAction = input.userAction ?? (input.resourceAppId == BuiltInResources.devicesAppId ? ConditionalAccessPolicy.UserAction.registerDevice : nil)
        device = input.device
        risk = input.risk
    }
}

/// Graph's `conditionalAccessTransferMethods`: how a sign-in moved from one device to another.
public enum TransferMethod: String, Codable, Sendable, CaseIterable {
    /// The device code flow (RFC 8628).
    case deviceCodeFlow
    /// Entra's cross-device authentication transfer (Outlook mobile): no flow of this server uses it, so a policy
    /// naming only it never applies.
    case authenticationTransfer
}
