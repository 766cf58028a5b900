import Foundation

/// A tenant: the unit of isolation. Everything else in the directory belongs to exactly one tenant.
public struct Tenant: Codable, Sendable, Equatable {
    /// The tenant ID, a lower-case GUID.
    public var id: String
    /// The tenant's verified domain, lower-case (e.g. `contoso.example`).
    public var domain: String
    public var displayName: String
    /// When set, only these accounts (UPNs or object IDs, case-insensitive) may enroll in the compliance service.
    public var allowedAccounts: [String]?

    public init(id: String, domain: String, displayName: String, allowedAccounts: [String]? = nil) {
        self.id = id.lowercased()
        self.domain = domain.lowercased()
        self.displayName = displayName
        self.allowedAccounts = allowedAccounts
    }
}

/// A user account of a tenant.
public struct User: Codable, Sendable, Equatable {
    /// The object ID, a lower-case GUID.
    public var id: String
    public var userPrincipalName: String
    public var displayName: String
    /// A bcrypt hash; `nil` for an account that cannot sign in with a password.
    public var passwordHash: String?
    public var accountEnabled: Bool

    public init(id: String, userPrincipalName: String, displayName: String, passwordHash: String? = nil, accountEnabled: Bool = true) {
        self.id = id.lowercased()
        self.userPrincipalName = userPrincipalName
        self.displayName = displayName
        self.passwordHash = passwordHash
        self.accountEnabled = accountEnabled
    }
}

/// A security group with direct members (user object IDs).
public struct Group: Codable, Sendable, Equatable {
    public var id: String
    public var displayName: String
    public var members: [String]

    public init(id: String, displayName: String, members: [String]) {
        self.id = id.lowercased()
        self.displayName = displayName
        self.members = members.map { $0.lowercased() }
    }
}

/// A client application, a resource (API), or both.
public struct Application: Codable, Sendable, Equatable {
    public var appId: String
    public var displayName: String
    /// Public clients (mobile, desktop) cannot keep a secret and authenticate with `client_id` only.
    public var publicClient: Bool
    /// Keyed hashes of the client secrets (see `CredentialHasher`); never the secrets themselves.
    public var secretHashes: [String]
    public var allowedGrantTypes: [String]
    public var redirectUris: [String]
    public var complianceCallbackUris: [String]
    public var approvedClientApp: Bool
    public var identifierUris: [String]
    public var scopes: [String]
    public var appRoles: [String]

    public init(
        appId: String, displayName: String, publicClient: Bool = false, secretHashes: [String] = [],
        allowedGrantTypes: [String] = [], redirectUris: [String] = [], complianceCallbackUris: [String] = [],
        approvedClientApp: Bool = false, identifierUris: [String] = [], scopes: [String] = [], appRoles: [String] = []
    ) {
        self.appId = appId.lowercased()
        self.displayName = displayName
        self.publicClient = publicClient
        self.secretHashes = secretHashes
        self.allowedGrantTypes = allowedGrantTypes
        self.redirectUris = redirectUris
        self.complianceCallbackUris = complianceCallbackUris
        self.approvedClientApp = approvedClientApp
        self.identifierUris = identifierUris
        self.scopes = scopes
        self.appRoles = appRoles
    }

    /// Whether this application exposes an API that tokens can be issued for.
    public var isResource: Bool { !identifierUris.isEmpty || !scopes.isEmpty || !appRoles.isEmpty }

    /// The identifier a token's `aud` carries for this resource: its first identifier URI, else its app ID.
    public var primaryIdentifier: String { identifierUris.first ?? appId }
}

/// Grants an app role of a resource to a user or to a client application (app-only).
public struct AppRoleAssignment: Codable, Sendable, Equatable, Hashable {
    /// A user object ID or a client app ID.
    public var principalId: String
    /// The resource's identifier URI or app ID.
    public var resource: String
    public var role: String

    public init(principalId: String, resource: String, role: String) {
        self.principalId = principalId.lowercased()
        self.resource = resource
        self.role = role
    }
}

/// A named location: IP ranges (CIDR) an admin can refer to in conditional-access policies.
public struct NamedLocation: Codable, Sendable, Equatable {
    public var id: String
    public var displayName: String
    public var ipRanges: [String]
    public var isTrusted: Bool

    public init(id: String, displayName: String, ipRanges: [String], isTrusted: Bool) {
        self.id = id.lowercased()
        self.displayName = displayName
        self.ipRanges = ipRanges
        self.isTrusted = isTrusted
    }
}
