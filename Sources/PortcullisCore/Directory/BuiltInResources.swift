/// Resources that exist in every tenant.
public enum BuiltInResources {
    public static let complianceIdentifier = "api://portcullis-compliance"
    public static let complianceAppId: AppID = "5e3c5a5c-0c6b-4d6c-9f3e-6f7a1c0b0c01"
    public static let adminIdentifier = "api://portcullis-admin"
    public static let adminAppId: AppID = "5e3c5a5c-0c6b-4d6c-9f3e-6f7a1c0b0c02"
    public static let adminRole = "Portcullis.Admin"

    public static let compliance = Application(
        appId: complianceAppId, displayName: "Portcullis compliance service",
        identifierUris: [complianceIdentifier], scopes: ["Compliance.ReadWrite"]
    )
    /// The admin API: the console client is pre-authorized; any other client must list it (PROTOCOL §11).
    public static let admin = Application(
        appId: adminAppId, displayName: "Portcullis admin API",
        identifierUris: [adminIdentifier], scopes: ["Admin.ReadWrite"], appRoles: [adminRole], preAuthorizedApplications: [consoleAppId]
    )
    /// The Shared Signals transmitter (PROTOCOL §14.2): receivers hold `SSF.Receiver` on it.
    public static let sharedSignalsIdentifier = SharedSignalsEventType.transmitterResource
    public static let sharedSignalsAppId: AppID = "5e3c5a5c-0c6b-4d6c-9f3e-6f7a1c0b0c05"
    public static let sharedSignalsReceiverRole = "SSF.Receiver"
    public static let sharedSignals = Application(
        appId: sharedSignalsAppId, displayName: "Portcullis shared signals", identifierUris: [sharedSignalsIdentifier],
        appRoles: [sharedSignalsReceiverRole])
    /// Microsoft Graph's shape of the admin API (PROTOCOL §20): Graph's own app ID and identifier URI, so that the Graph
    /// SDKs' default scope (`https://graph.microsoft.com/.default`) names it; Graph's permission names are its app roles
    /// and delegated scopes.
    public static let graphAppId: AppID = "00000003-0000-0000-c000-000000000000"
    public static let graphIdentifier = "https://graph.microsoft.com"
    public static let graph = Application(
        appId: graphAppId, displayName: "Microsoft Graph", identifierUris: [graphIdentifier], scopes: GraphPermission.all,
        appRoles: GraphPermission.all)
    /// The device registration service (PROTOCOL §18): a user's token with `Device.Register` registers a device. A token for
    /// it is the user action `urn:user:registerdevice` in conditional access.
    public static let devicesIdentifier = "api://portcullis-devices"
    public static let devicesAppId: AppID = "5e3c5a5c-0c6b-4d6c-9f3e-6f7a1c0b0c06"
    public static let deviceRegisterScope = "Device.Register"
    public static let devices = Application(
        appId: devicesAppId, displayName: "Portcullis device registration", identifierUris: [devicesIdentifier], scopes: [deviceRegisterScope])
    public static let all: [Application] = [compliance, admin, sharedSignals, graph, devices]

    /// The admin console's public client (PROTOCOL §11; the console at `GET /admin`): authorization code + PKCE,
    /// its one redirect URI `{baseURL}/admin/callback` given by the server (`consoleRedirectPath`).
    public static let consoleAppId: AppID = "5e3c5a5c-0c6b-4d6c-9f3e-6f7a1c0b0c03"
    public static let consoleRedirectPath = "/admin/callback"
    public static let console = Application(
        appId: consoleAppId, displayName: "Portcullis admin console", publicClient: true,
        allowedGrantTypes: [GrantType.authorizationCode.rawValue]
    )
    /// The security info page's public client (PROTOCOL §12.1): a user without a session signs in through the
    /// authorization endpoint like any app, redirected back to `{baseURL}/{tenantId}/securityinfo`; conditional access
    /// applies to it as to any app.
    public static let securityInfoAppId: AppID = "5e3c5a5c-0c6b-4d6c-9f3e-6f7a1c0b0c04"
    public static let securityInfo = Application(
        appId: securityInfoAppId, displayName: "Security info", publicClient: true, allowedGrantTypes: [GrantType.authorizationCode.rawValue]
    )
    public static func securityInfoPath(tenantId: String) -> String { "/\(tenantId)/securityinfo" }
    /// Built-in client applications (sign in like any public client; never resources).
    public static let clients: [Application] = [console, securityInfo]
    /// Every built-in application ID: none can be taken by a tenant's own.
    public static let reserved: [Application] = all + clients
}
