import Foundation

/// Everything conditional access needs to know about one sign-in, fetched before evaluation.
public struct SignInFacts: Sendable, Equatable {
    public enum ClientAppType: String, Sendable, Codable, CaseIterable {
        case browser, mobileAppsAndDesktopClients
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
    public var userId: String?
    /// The user's direct groups.
    public var groupIds: [String]
    public var clientAppId: String
    /// The resource (cloud app) the token is for.
    public var resourceAppId: String
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
    /// The request carried a valid DPoP proof, so the tokens will be bound to its key (PROTOCOL §15).
    public var proofOfPossession = false
    /// Whether the sign-in carried multi-factor authentication.
    public var multiFactorAuthenticated: Bool { authentication.includesSecondFactor }

    public init(
        userId: String?, groupIds: [String], clientAppId: String, resourceAppId: String,
        clientAppType: ClientAppType = .mobileAppsAndDesktopClients, platform: DevicePlatform? = nil, ipAddress: IPAddress? = nil,
        capabilities: [String] = [], appProtection: AppProtection = .none, approvedClientApp: Bool = false,
        authentication: AuthenticationContext = .none
    ) {
        self.userId = userId?.lowercased()
        self.groupIds = groupIds.map { $0.lowercased() }
        self.clientAppId = clientAppId.lowercased()
        self.resourceAppId = resourceAppId.lowercased()
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
    /// The one way a sign-in's facts are put together — by the token endpoint, the sign-in page and what-if alike —
    /// from the directory's objects: the user's groups from the directory, whether the client is an approved app
    /// from its registration (what-if may say otherwise), the second factor from how the user authenticated.
    public init(
        user: User?, client: Application, resource: Application, directory: DirectorySnapshot, authentication: AuthenticationContext,
        platform: DevicePlatform?, ipAddress: IPAddress?, capabilities: ClaimsRequest, appProtection: AppProtection = .none,
        approvedClientApp: Bool? = nil, clientAppType: ClientAppType = .mobileAppsAndDesktopClients
    ) {
        self.init(
            userId: user?.id, groupIds: user.map { directory.groupIds(ofUser: $0.id) } ?? [], clientAppId: client.appId, resourceAppId: resource.appId,
            clientAppType: clientAppType, platform: platform, ipAddress: ipAddress, capabilities: capabilities.capabilities, appProtection: appProtection,
            approvedClientApp: approvedClientApp ?? client.approvedClientApp, authentication: authentication)
        self.authenticationContexts = capabilities.authenticationContexts
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
