/// The OpenID Connect scopes that name no resource.
public enum OIDCScope: String, Sendable, CaseIterable, Codable {
    case openid, profile, email
    case offlineAccess = "offline_access"
}

/// A `scope` parameter resolved against a tenant's directory: at most one resource, its scopes, and the
/// OIDC scopes.
public struct ScopeRequest: Sendable, Equatable {
    /// The resource the access token is for, or `nil` when only OIDC scopes were asked.
    public let resource: Application?
    /// The identifier the client named the resource by (its `aud`).
    public let audience: String?
    /// The resource scopes granted (all of them for `/.default`).
    public let resourceScopes: [String]
    /// Whether the request used `{resource}/.default`.
    public let isDefault: Bool
    public let oidc: Set<OIDCScope>

    /// Parses a space-delimited `scope` value.
    public static func parse(_ raw: String, in directory: DirectorySnapshot) throws(TokenError) -> ScopeRequest {
        var oidc = Set<OIDCScope>()
        var resource: Application?
        var audience: String?
        var named: [String] = []
        var isDefault = false
        for item in raw.splitAtWhitespace() {
            let token = String(item)
            // An OIDC scope has no '/' and is ASCII: compared without lower-casing a copy of every token.
            if !token.utf8.contains(UInt8(ascii: "/")), let scope = OIDCScope.allCases.first(where: { $0.rawValue.equalsIgnoringCase(token) }) {
                oidc.insert(scope)
                continue
            }
            guard let slash = token.utf8.lastIndex(of: UInt8(ascii: "/")), slash != token.startIndex else {
                throw .invalidScope(token)
            }
            let identifier = String(token[..<slash])
            let name = String(token[token.index(after: slash)...])
            guard !name.isEmpty else { throw .invalidScope(token) }
            guard let found = directory.resource(identifier: identifier) else { throw .unknownResource(identifier) }
            if let resource, resource.appId != found.appId { throw .multipleResources }
            resource = found
            audience =
                audience
                ?? (found.appId == AppID(identifier)
                    ? found.appId.rawValue
                    : (found.identifierUris.first { $0.equalsIgnoringCase(identifier) } ?? found.primaryIdentifier))
            if name == ".default" {
                isDefault = true
            } else {
                guard let canonical = found.scopes.first(where: { $0.equalsIgnoringCase(name) }) else {
                    throw .invalidScope(token)
                }
                if !named.contains(canonical) { named.append(canonical) }
            }
        }
        if isDefault && !named.isEmpty { throw .defaultCombinedWithScopes }
        return ScopeRequest(
            resource: resource, audience: audience,
            resourceScopes: isDefault ? (resource?.scopes ?? []) : named,
            isDefault: isDefault, oidc: oidc
        )
    }

    public init(resource: Application?, audience: String?, resourceScopes: [String], isDefault: Bool, oidc: Set<OIDCScope>) {
        self.resource = resource
        self.audience = audience
        self.resourceScopes = resourceScopes
        self.isDefault = isDefault
        self.oidc = oidc
    }

    /// The `scope` value of the token response: what was granted, as the client can ask for it again.
    public var grantedScopeString: String {
        var parts: [String] = []
        if let audience {
            if isDefault { parts.append("\(audience)/.default") } else { parts += resourceScopes.map { "\(audience)/\($0)" } }
        }
        for scope in OIDCScope.allCases where oidc.contains(scope) { parts.append(scope.rawValue) }
        return parts.joined(separator: " ")
    }
}
