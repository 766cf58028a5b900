public import Foundation

/// A tenant: the unit of isolation. Everything else in the directory belongs to exactly one tenant.
public struct Tenant: Codable, Sendable, Equatable {
    /// The tenant ID (a GUID).
    public var id: TenantID
    /// The tenant's verified domain, lower-case (e.g. `contoso.example`).
    public var domain: String
    public var displayName: String
    /// When set, only these accounts (UPNs or object IDs, case-insensitive) may enroll in the compliance service.
    public var allowedAccounts: [AccountName]?
    /// Where a user with no sign-in method yet may register a first one with a password alone (PROTOCOL §12.3); `nil`
    /// is the default, `trustedLocations`. A temporary access pass is always enough.
    public var passwordOnlyRegistration: PasswordOnlyRegistration?

    public enum PasswordOnlyRegistration: String, Codable, Sendable, CaseIterable {
        /// Only from a trusted named location.
        case trustedLocations
        /// From anywhere (a password alone then enrolls the first factor: the pre-wave-3 behaviour).
        case anywhere
        /// Never: a first method needs a temporary access pass.
        case never
    }

    /// At most this many `allowedAccounts` (a list for a pilot; larger populations belong in groups).
    public static let maximumAllowedAccounts = 10_000

    public init(
        id: TenantID, domain: String, displayName: String, allowedAccounts: [AccountName]? = nil, passwordOnlyRegistration: PasswordOnlyRegistration? = nil
    ) {
        self.id = id
        self.domain = domain.lowercased()
        self.displayName = displayName
        self.allowedAccounts = allowedAccounts
        self.passwordOnlyRegistration = passwordOnlyRegistration
    }
}

/// A user account of a tenant.
public struct User: Codable, Sendable, Equatable {
    /// The object ID (a GUID).
    public var id: ObjectID
    public var userPrincipalName: String
    public var displayName: String
    /// A bcrypt hash; `nil` for an account that cannot sign in with a password.
    public var passwordHash: String?
    public var accountEnabled: Bool
    /// Graph's `userType`: `Guest` for an account let in as a guest (PROTOCOL §17); absent means `Member` (a B2B user
    /// always has one).
    public var userType: UserType?

    /// Graph's `userType` values.
    public enum UserType: String, Codable, Sendable, CaseIterable {
        case member = "Member"
        case guest = "Guest"
    }

    /// For a B2B collaboration user (PROTOCOL §17): the account in its home tenant of this installation that signs in
    /// for this one. The home tenant's credentials authenticate it; this tenant issues its tokens.
    public var homeAccount: HomeAccount?

    /// Where a B2B collaboration user's account lives.
    public struct HomeAccount: Codable, Sendable, Equatable {
        /// The home tenant's ID.
        public var tenantId: TenantID
        /// The account's object ID in its home tenant.
        public var userId: ObjectID
        /// Its UPN there, as it was when invited (what the user types).
        public var userPrincipalName: String

        public init(tenantId: TenantID, userId: ObjectID, userPrincipalName: String) {
            self.tenantId = tenantId
            self.userId = userId
            self.userPrincipalName = userPrincipalName
        }
    }

    /// What conditional access's guest conditions see this user as: a B2B collaboration guest or member (an account of
    /// another tenant), an internal guest (a guest account of this tenant), or nobody's guest.
    public var guestType: GuestOrExternalUserType? {
        if homeAccount != nil { return userType == .member ? .b2bCollaborationMember : .b2bCollaborationGuest }
        return userType == .guest ? .internalGuest : nil
    }

    /// What the user types to sign in: a B2B collaboration user's home UPN (the one here is `…#EXT#@…`).
    public var signInName: String { homeAccount?.userPrincipalName ?? userPrincipalName }

    /// The token's `acct` (PROTOCOL §17): `1` for a guest, `0` for a B2B member; `nil` for a member of this tenant.
    public var account: Int? { guestType.map { $0 == .b2bCollaborationMember ? 0 : 1 } }

    /// `client_info`'s `uid` and `utid`: the home account — in its home tenant for a B2B collaboration user, as Entra's
    /// (so MSAL keeps one account across tenants) — else this user in `tenantId`.
    public func clientInfo(tenantId: TenantID) -> (uid: ObjectID, utid: TenantID) {
        homeAccount.map { ($0.userId, $0.tenantId) } ?? (id, tenantId)
    }

    /// The UPN a B2B collaboration user gets in the resource tenant, as Entra makes it: `alice_contoso.example#EXT#@fabrikam.example`.
    public static func externalPrincipalName(homePrincipalName: String, resourceDomain: String) -> String {
        "\(homePrincipalName.replacingOccurrences(of: "@", with: "_"))#EXT#@\(resourceDomain)"
    }

    public init(id: ObjectID, userPrincipalName: String, displayName: String, passwordHash: String? = nil, accountEnabled: Bool = true) {
        self.id = id
        self.userPrincipalName = userPrincipalName
        self.displayName = displayName
        self.passwordHash = passwordHash
        self.accountEnabled = accountEnabled
    }
}

/// A security group with direct members (user object IDs).
public struct Group: Codable, Sendable, Equatable {
    public var id: ObjectID
    public var displayName: String
    public var members: [ObjectID]

    public init(id: ObjectID, displayName: String, members: [ObjectID]) {
        self.id = id
        self.displayName = displayName
        self.members = members
    }
}

/// A client secret of a confidential application: its keyed hash (see `CredentialHasher`), never the
/// secret itself, with the metadata the admin API shows (Microsoft Graph's `passwordCredential` names).
public struct ClientSecret: Codable, Sendable, Equatable {
    /// A GUID naming the secret (for `DELETE /admin/v1/applications/{appId}/secrets/{keyId}`).
    public var keyId: RecordID
    public var secretHash: String
    /// The first three characters of the secret, so an admin can tell secrets apart; `nil` for imported hashes.
    public var hint: String?
    public var displayName: String?
    public var startDateTime: Date?
    /// After this instant the secret no longer authenticates; `nil` for one that does not expire.
    public var endDateTime: Date?

    public init(
        keyId: RecordID? = nil, secretHash: String, hint: String? = nil, displayName: String? = nil, startDateTime: Date? = nil, endDateTime: Date? = nil
    ) {
        self.keyId = keyId ?? Self.keyId(forHash: secretHash)
        self.secretHash = secretHash
        self.hint = hint
        self.displayName = displayName
        self.startDateTime = startDateTime
        self.endDateTime = endDateTime
    }

    /// Whether the secret still authenticates at `now`.
    public func isValid(at now: Date) -> Bool { endDateTime.map { now < $0 } ?? true }

    /// The key ID of a secret known only by its hash (`directory.json`'s `secret` / `secretHash`, and stores
    /// written before secrets had IDs): a GUID made of the hash's bytes, so importing the same secret twice
    /// names it the same way (re-applying a folder changes nothing).
    public static func keyId(forHash hash: String) -> RecordID { RecordID(StableGUID.make(from: hash)) }

    enum CodingKeys: String, CodingKey { case keyId, secretHash, hint, displayName, startDateTime, endDateTime }

    // Dates are ISO 8601 text whatever the encoder's strategy (stored documents and answers alike).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        secretHash = try container.decode(String.self, forKey: .secretHash)
        keyId = try container.decodeIfPresent(RecordID.self, forKey: .keyId) ?? Self.keyId(forHash: secretHash)
        hint = try container.decodeIfPresent(String.self, forKey: .hint)
        displayName = try container.decodeIfPresent(String.self, forKey: .displayName)
        startDateTime = try container.decodeIfPresent(String.self, forKey: .startDateTime).flatMap(ISO8601.date)
        endDateTime = try container.decodeIfPresent(String.self, forKey: .endDateTime).flatMap(ISO8601.date)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(keyId, forKey: .keyId)
        try container.encode(secretHash, forKey: .secretHash)
        try container.encodeIfPresent(hint, forKey: .hint)
        try container.encodeIfPresent(displayName, forKey: .displayName)
        try container.encodeIfPresent(startDateTime.map(ISO8601.string), forKey: .startDateTime)
        try container.encodeIfPresent(endDateTime.map(ISO8601.string), forKey: .endDateTime)
    }
}

/// ISO 8601 instants as the admin API writes them (`2026-11-23T20:47:07Z`).
public enum ISO8601 {
    public static func string(_ date: Date) -> String { date.formatted(.iso8601) }
    public static func date(_ text: String) -> Date? {
        (try? Date(text, strategy: .iso8601)) ?? (try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
    }
}

/// One resource an application may request tokens for, and what of it (PROTOCOL §11, Graph's
/// `requiredResourceAccess`): listing it is the administrator's consent.
public struct RequiredResourceAccess: Codable, Sendable, Equatable {
    /// The resource's app ID or one of its identifier URIs, as the administrator wrote it.
    public var resourceAppId: String
    /// Delegated permissions (the resource's scopes) the application may ask for on a user's behalf.
    public var scopes: [String]
    /// Application permissions (the resource's app roles) the application is meant to hold; app role
    /// assignments grant them.
    public var appRoles: [String]

    public init(resourceAppId: String, scopes: [String] = [], appRoles: [String] = []) {
        self.resourceAppId = resourceAppId
        self.scopes = scopes
        self.appRoles = appRoles
    }

    enum CodingKeys: String, CodingKey { case resourceAppId, scopes, appRoles }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        resourceAppId = try container.decode(String.self, forKey: .resourceAppId)
        scopes = try container.decodeIfPresent([String].self, forKey: .scopes) ?? []
        appRoles = try container.decodeIfPresent([String].self, forKey: .appRoles) ?? []
    }
}

/// A client application, a resource (API), or both.
public struct Application: Codable, Sendable, Equatable {
    public var appId: AppID
    public var displayName: String
    /// Public clients (mobile, desktop) cannot keep a secret and authenticate with `client_id` only.
    public var publicClient: Bool
    /// The client secrets (hashed; several at once allow rotation without downtime).
    public var secrets: [ClientSecret]
    /// The certificates it signs client assertions with (PROTOCOL §21; Graph `keyCredentials`).
    public var keyCredentials: [KeyCredential] = []
    /// The federated issuers' tokens it may authenticate with (PROTOCOL §21; Graph `federatedIdentityCredentials`).
    public var federatedIdentityCredentials: [FederatedIdentityCredential] = []
    public var allowedGrantTypes: [String]
    public var redirectUris: [String]
    public var complianceCallbackUris: [String]
    public var approvedClientApp: Bool
    public var identifierUris: [String]
    public var scopes: [String]
    public var appRoles: [String]
    /// The resources (and their scopes) this application may request (PROTOCOL §11).
    public var requiredResourceAccess: [RequiredResourceAccess]
    /// As a resource: client applications that may request any of its scopes without listing them.
    public var preAuthorizedApplications: [AppID]
    /// Every token request of this client must carry a DPoP proof (PROTOCOL §15; Keycloak's "DPoP bound tokens").
    public var requireDPoP: Bool
    /// As a resource: it enforces continuous access evaluation (PROTOCOL §14.1), so clients that declare `cp1` get
    /// long-lived tokens for it.
    public var continuousAccessEvaluation: Bool
    /// Graph's `tags`: `Office365` puts the application in conditional access's application group of that name
    /// (PROTOCOL §17).
    public var tags: [String] = []

    /// The tag that puts an application in the `Office365` group.
    public static let office365Tag = "Office365"
    /// At most this many tags, of at most 256 characters each.
    public static let maximumTags = 50

    /// At most this many secrets per application (two for rotation, with room to spare).
    public static let maximumSecrets = 10
    /// At most this many resources in `requiredResourceAccess`, and pre-authorized applications.
    public static let maximumResourceAccess = 50
    public static let maximumPreAuthorized = 100

    public init(
        appId: AppID, displayName: String, publicClient: Bool = false, secretHashes: [String] = [], secrets: [ClientSecret] = [],
        allowedGrantTypes: [String] = [], redirectUris: [String] = [], complianceCallbackUris: [String] = [],
        approvedClientApp: Bool = false, identifierUris: [String] = [], scopes: [String] = [], appRoles: [String] = [],
        requiredResourceAccess: [RequiredResourceAccess] = [], preAuthorizedApplications: [AppID] = [], requireDPoP: Bool = false,
        continuousAccessEvaluation: Bool = false
    ) {
        self.requireDPoP = requireDPoP
        self.continuousAccessEvaluation = continuousAccessEvaluation
        self.requiredResourceAccess = requiredResourceAccess
        self.preAuthorizedApplications = preAuthorizedApplications
        self.appId = appId
        self.displayName = displayName
        self.publicClient = publicClient
        self.secrets = secrets + secretHashes.map { ClientSecret(secretHash: $0) }
        self.allowedGrantTypes = allowedGrantTypes
        self.redirectUris = redirectUris
        self.complianceCallbackUris = complianceCallbackUris
        self.approvedClientApp = approvedClientApp
        self.identifierUris = identifierUris
        self.scopes = scopes
        self.appRoles = appRoles
    }

    enum CodingKeys: String, CodingKey {
        case appId, displayName, publicClient, secrets, secretHashes, allowedGrantTypes, redirectUris, complianceCallbackUris
        case approvedClientApp, identifierUris, scopes, appRoles, requiredResourceAccess, preAuthorizedApplications, requireDPoP
        case continuousAccessEvaluation, tags, keyCredentials, federatedIdentityCredentials
    }

    // Stores written before secrets had key IDs hold `secretHashes`; they read as secrets without metadata.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        appId = try container.decode(AppID.self, forKey: .appId)
        displayName = try container.decode(String.self, forKey: .displayName)
        publicClient = try container.decode(Bool.self, forKey: .publicClient)
        secrets =
            try container.decodeIfPresent([ClientSecret].self, forKey: .secrets)
            ?? (try container.decodeIfPresent([String].self, forKey: .secretHashes) ?? []).map { ClientSecret(secretHash: $0) }
        allowedGrantTypes = try container.decode([String].self, forKey: .allowedGrantTypes)
        redirectUris = try container.decodeIfPresent([String].self, forKey: .redirectUris) ?? []
        complianceCallbackUris = try container.decode([String].self, forKey: .complianceCallbackUris)
        approvedClientApp = try container.decode(Bool.self, forKey: .approvedClientApp)
        identifierUris = try container.decode([String].self, forKey: .identifierUris)
        scopes = try container.decode([String].self, forKey: .scopes)
        appRoles = try container.decode([String].self, forKey: .appRoles)
        requiredResourceAccess = try container.decodeIfPresent([RequiredResourceAccess].self, forKey: .requiredResourceAccess) ?? []
        preAuthorizedApplications = try container.decodeIfPresent([AppID].self, forKey: .preAuthorizedApplications) ?? []
        requireDPoP = try container.decodeIfPresent(Bool.self, forKey: .requireDPoP) ?? false
        continuousAccessEvaluation = try container.decodeIfPresent(Bool.self, forKey: .continuousAccessEvaluation) ?? false
        tags = try container.decodeIfPresent([String].self, forKey: .tags) ?? []
        keyCredentials = try container.decodeIfPresent([KeyCredential].self, forKey: .keyCredentials) ?? []
        federatedIdentityCredentials =
            try container.decodeIfPresent([FederatedIdentityCredential].self, forKey: .federatedIdentityCredentials) ?? []
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(appId, forKey: .appId)
        try container.encode(displayName, forKey: .displayName)
        try container.encode(publicClient, forKey: .publicClient)
        try container.encode(secrets, forKey: .secrets)
        try container.encode(allowedGrantTypes, forKey: .allowedGrantTypes)
        try container.encode(redirectUris, forKey: .redirectUris)
        try container.encode(complianceCallbackUris, forKey: .complianceCallbackUris)
        try container.encode(approvedClientApp, forKey: .approvedClientApp)
        try container.encode(identifierUris, forKey: .identifierUris)
        try container.encode(scopes, forKey: .scopes)
        try container.encode(appRoles, forKey: .appRoles)
        // Written only when set, so applications stored before API permissions keep their exact form.
        if !requiredResourceAccess.isEmpty { try container.encode(requiredResourceAccess, forKey: .requiredResourceAccess) }
        if !preAuthorizedApplications.isEmpty { try container.encode(preAuthorizedApplications, forKey: .preAuthorizedApplications) }
        if requireDPoP { try container.encode(requireDPoP, forKey: .requireDPoP) }
        if continuousAccessEvaluation { try container.encode(continuousAccessEvaluation, forKey: .continuousAccessEvaluation) }
        if !tags.isEmpty { try container.encode(tags, forKey: .tags) }
        if !keyCredentials.isEmpty { try container.encode(keyCredentials, forKey: .keyCredentials) }
        if !federatedIdentityCredentials.isEmpty { try container.encode(federatedIdentityCredentials, forKey: .federatedIdentityCredentials) }
    }

    /// The conditional-access application groups (PROTOCOL §17) this application is in as a resource: `Office365` when
    /// tagged so, `MicrosoftAdminPortals` for Portcullis's own admin API (which the console and Graph tools call).
    public var applicationGroups: Set<ConditionKeyword> {
        var groups: Set<ConditionKeyword> = []
        if tags.contains(where: { $0.equalsIgnoringCase(Self.office365Tag) }) { groups.insert(.office365) }
        if appId == BuiltInResources.adminAppId { groups.insert(.microsoftAdminPortals) }
        return groups
    }

    /// The hashes of the secrets that authenticate at `now`.
    public func secretHashes(validAt now: Date) -> [String] { secrets.filter { $0.isValid(at: now) }.map(\.secretHash) }

    /// Whether this application exposes an API that tokens can be issued for.
    public var isResource: Bool { !identifierUris.isEmpty || !scopes.isEmpty || !appRoles.isEmpty }

    /// The identifier a token's `aud` carries for this resource: its first identifier URI, else its app ID.
    public var primaryIdentifier: String { identifierUris.first ?? appId.rawValue }
}

/// Grants an app role of a resource to a user or to a client application (app-only).
public struct AppRoleAssignment: Codable, Sendable, Equatable, Hashable {
    /// A user object ID or a client app ID.
    public var principalId: PrincipalID
    /// The resource's identifier URI or app ID.
    public var resource: String
    public var role: String

    public init(principalId: PrincipalID, resource: String, role: String) {
        self.principalId = principalId
        self.resource = resource
        self.role = role
    }

    /// The ID an assignment is stored and addressed under: a GUID made of what it grants (the principal, the
    /// resource's app ID and the role), so one grant cannot be stored twice and a folder re-applied finds it.
    public static func documentId(principalId: PrincipalID, resourceAppId: AppID, role: String) -> String {
        StableGUID.make(from: "\(principalId)|\(resourceAppId)|\(role)")
    }
}

/// A named location: IP ranges (CIDR) an admin can refer to in conditional-access policies.
public struct NamedLocation: Codable, Sendable, Equatable {
    public var id: PolicyID
    public var displayName: String
    public var ipRanges: [String]
    public var isTrusted: Bool
    /// A country location (Graph's `countryNamedLocation`, PROTOCOL §13): ISO 3166-1 alpha-2 codes, upper-case; `nil` for
    /// an IP location. Looked up from the client's address in the operator's IP-to-country table.
    public var countriesAndRegions: [String]?
    /// Whether an address in no range of the table (or with no table) is in this location.
    public var includeUnknownCountriesAndRegions: Bool?

    public init(id: PolicyID, displayName: String, ipRanges: [String], isTrusted: Bool) {
        self.id = id
        self.displayName = displayName
        self.ipRanges = ipRanges
        self.isTrusted = isTrusted
    }
}
