import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import PortcullisAPI
import PortcullisCore
import PortcullisStorage
import PortcullisTokens

/// The browser's sign-in session (SSO) and sign-out (PROTOCOL §9.3).
extension SignInRoutes {
    // MARK: Session

    /// The session cookie is scoped to the tenant: under its ID and its domain (authorities name either).
    func sessionPaths(_ tenant: TenantSnapshot) -> [String] {
        ["\(basePath)/\(tenant.tenant.id)", "\(basePath)/\(tenant.tenant.domain)"]
    }

    /// The browser's live session for this tenant, if any (expired, idle or disabled ones do not count).
    func currentSession(_ request: Request, tenant: TenantSnapshot) async throws -> (record: SessionRecord, user: User)? {
        guard let token = Self.cookies(request)[Self.sessionCookie], token.count >= 20,
            let record = try await store.session(idHash: CredentialHasher.hashToken(token)), record.tenantId == tenant.tenant.id
        else { return nil }
        let now = clock.now()
        guard record.expiresAt > now, now.timeIntervalSince(record.lastSeenAt) < configuration.signIn.sessionIdleTimeout,
            let user = tenant.directory.user(id: record.userId), user.accountEnabled, try await tenants.homeAccountUsable(user)
        else { return nil }
        return (record, user)
    }

    func logout(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let segment = context.parameters.get("tenant") ?? ""
        guard let tenant = try await tenants.snapshot(tenantSegment: segment) else { return errorPage(.unknownTenant(segment), tenant: nil, context) }
        if let token = Self.cookies(request)[Self.sessionCookie] { try await store.deleteSession(idHash: CredentialHasher.hashToken(token)) }
        var headers: HTTPFields = [:]
        for path in sessionPaths(tenant) { headers.append(HTTPField(name: .setCookie, value: cookie(Self.sessionCookie, "", path: path, maxAge: 0))) }
        func query(_ name: String) -> String? { Self.queryValue(request, name) }
        // Only to a URI registered for the client named by client_id or by the ID token hint (whose signature is checked).
        var clientId = query("client_id")
        if clientId == nil, let hint = query("id_token_hint") {
            clientId = await (try? signers.signer(tenantId: tenant.tenant.id))?.idTokenAudience(
                hint, issuer: endpoints.issuer(tenantId: tenant.tenant.id.rawValue))
        }
        if let target = query("post_logout_redirect_uri"), let clientId, let client = tenant.directory.application(appId: AppID(clientId)),
            client.redirectUris.contains(target), var components = URLComponents(string: target)
        {
            if let state = query("state") {
                components.percentEncodedQuery = [components.percentEncodedQuery, FormEncoding.encode([("state", state)])]
                    .compactMap { $0?.isEmpty == false ? $0 : nil }.joined(separator: "&")
            }
            headers[.location] = components.string ?? target
            Pages.secure(&headers)
            return Response(status: .found, headers: headers)
        }
        return pages.render(
            "message", frame: frame("Signed out", tenant: tenant, context),
            values: ["text": "You have signed out.", "detail": "You can close this window."], headers: headers)
    }
}
