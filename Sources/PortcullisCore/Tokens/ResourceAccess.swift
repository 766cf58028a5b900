/// Which resources a client may get tokens for (PROTOCOL §11, API permissions): decided once per grant, before
/// conditional access, by the token endpoint, the authorization endpoint and the device authorization endpoint.
///
/// - A token for the client itself (no resource, or the client as its own resource) needs nothing.
/// - Delegated (a user is signed in): the client lists the resource in `requiredResourceAccess` and every
///   requested scope among the listed ones (`.default` grants exactly the listed scopes), or the resource
///   pre-authorizes the client (every scope). Built-in: every client may request the compliance resource
///   (remediation must be able to start); the admin resource pre-authorizes the console client. Otherwise
///   AADSTS65001 (consent required).
/// - App-only (client credentials): the client holds at least one app role of the resource through an app role
///   assignment; otherwise AADSTS650057 (the resource is not among the client's permissions).
public enum ResourceAccess {
    /// `scope` as it may be granted to `client` (`.default` narrowed to what the client lists), or the refusal.
    public static func authorize(
        _ scope: ScopeRequest, client: Application, delegated: Bool, in directory: DirectorySnapshot
    ) throws(TokenError) -> ScopeRequest {
        guard let resource = scope.resource, resource.appId != client.appId else { return scope }
        guard delegated else {
            if directory.roles(ofPrincipal: PrincipalID(client.appId), on: resource).isEmpty {
                throw .resourceNotPermitted(client: client, resource: scope.audience ?? resource.appId.rawValue)
            }
            return scope
        }
        if resource.appId == BuiltInResources.complianceAppId || resource.preAuthorizedApplications.contains(client.appId) { return scope }
        guard let entry = client.requiredResourceAccess.first(where: { directory.resource(identifier: $0.resourceAppId)?.appId == resource.appId }) else {
            throw .consentRequired(client: client, resource: scope.audience ?? resource.appId.rawValue, scope: nil)
        }
        let listed = resource.scopes.filter { scope in entry.scopes.contains { $0.equalsIgnoringCase(scope) } }
        if scope.isDefault {
            guard !listed.isEmpty else { throw .consentRequired(client: client, resource: scope.audience ?? resource.appId.rawValue, scope: ".default") }
            return ScopeRequest(resource: resource, audience: scope.audience, resourceScopes: listed, isDefault: true, oidc: scope.oidc)
        }
        if let missing = scope.resourceScopes.first(where: { !listed.contains($0) }) {
            throw .consentRequired(client: client, resource: scope.audience ?? resource.appId.rawValue, scope: missing)
        }
        return scope
    }
}

extension TokenError {
    /// AADSTS65001: the client's API permissions do not cover what was asked on the user's behalf.
    public static func consentRequired(client: Application, resource: String, scope: String?) -> TokenError {
        let what = scope.map { "the scope '\($0.clipped())' of '\(resource.clipped())'" } ?? "the resource '\(resource.clipped())'"
        return TokenError(
            .invalidGrant, aadsts: 65001,
            "The user or administrator has not consented to use the application with ID '\(client.appId)' named '\(client.displayName.clipped())' for \(what): the application's API permissions (requiredResourceAccess) do not list it. An administrator can add it.",
            suberror: "consent_required")
    }

    /// AADSTS650057: an app-only token for a resource the client holds no app role of.
    public static func resourceNotPermitted(client: Application, resource: String) -> TokenError {
        TokenError(
            .unauthorizedClient, aadsts: 650057,
            "Invalid resource. The client has requested access to a resource which is not listed in the requested permissions in the client's application registration. Client app ID: \(client.appId) (\(client.displayName.clipped())). Resource value from request: \(resource.clipped()). No app role of the resource is assigned to the application."
        )
    }
}
