import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import PortcullisCore
import PortcullisTokens

/// Requires a bearer access token issued by this server for one resource (and, optionally, an app role),
/// and puts its claims in the context. 401 without a valid token, 403 without the role.
struct BearerAuthenticator: RouterMiddleware {
    typealias Context = PortcullisRequestContext
    let resource: PortcullisCore.Application
    let requiredRole: String?
    let signer: TokenSigner
    let configuration: ServerConfiguration
    let tenants: TenantCache
    let clock: any WallClock

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let header = request.headers[.authorization], header.lowercased().hasPrefix("bearer ") else {
            throw APIError.unauthenticated
        }
        let token = String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces)
        guard case .success(let claims) = await signer.verifyAccessToken(
            token, issuer: nil, audiences: resource.identifierUris + [resource.appId], now: clock.now(), leeway: 60),
            claims.iss == configuration.issuer(tenantId: claims.tid),
            try await tenants.snapshot(tenantSegment: claims.tid) != nil
        else { throw APIError.unauthenticated }
        if let requiredRole, !(claims.roles ?? []).contains(requiredRole) {
            throw APIError(.forbidden, "forbidden", "The token does not carry the \(requiredRole) app role.")
        }
        var context = context
        context.principal = claims
        return try await next(request, context)
    }
}

extension PortcullisRequestContext {
    /// The verified principal of a bearer-protected route.
    func requirePrincipal() throws -> AccessTokenClaims {
        guard let principal else { throw APIError.unauthenticated }
        return principal
    }

    /// Who did it, for the audit log.
    var actor: String {
        guard let principal else { return "unknown" }
        if let upn = principal.upn { return "\(upn) (\(principal.oid ?? principal.sub)) via \(principal.azp)" }
        return "app \(principal.azp)"
    }
}
