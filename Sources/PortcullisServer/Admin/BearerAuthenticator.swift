import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import PortcullisAPI
import PortcullisCore
import PortcullisStorage
import PortcullisTokens

/// Requires a bearer access token issued by this server for one resource (and, optionally, an app role),
/// and puts its claims in the context. 401 without a valid token, 403 without the role.
///
/// A signature alone is not enough: on every request the token must also not have been revoked (RFC 7009,
/// by `jti`) nor issued at or before its user's "void before" time (PROTOCOL §14.1: sessions revoked, compromised, a
/// new password, a method removed, disabled), its user must still exist and be enabled, its client application must
/// still exist, and the role must still be assigned in the directory *now* (the role claim only says it was at
/// issuance). The directory questions are answered by the tenant snapshot in memory; revocation by one indexed read.
struct BearerAuthenticator: RouterMiddleware {
    typealias Context = PortcullisRequestContext
    let resource: PortcullisCore.Application
    let requiredRole: String?
    let signers: TenantKeyRings
    let endpoints: ServerEndpoints
    let tenants: TenantCache
    let revocations: any RevokedAccessTokenStore & ProofReplayStore & EffectStore
    let clock: any WallClock

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let presented = ProtectedResourceRequest(authorization: request.headers[.authorization]) else { throw APIError.unauthenticated }
        var context = context
        let claims = try await authenticate(presented.token)
        // A DPoP-bound token (PROTOCOL §15) only with a proof by its key for this request, each proof once on every node.
        let now = clock.now()
        do {
            if let proof = try presented.checkBinding(
                confirmation: claims.cnf?.jkt, proofs: request.headers[values: .dpop], method: request.method.rawValue,
                url: endpoints.baseURL + request.uri.path, now: now)
            {
                guard try await revocations.claimProof(key: proof.replayKey, expiresAt: proof.replayExpiry, now: now) else {
                    throw ProtectedResourceRequest.Refusal.replayed
                }
            }
        } catch let refusal as ProtectedResourceRequest.Refusal {
            throw APIError(.unauthorized, refusal.error, refusal.message, headers: [.wwwAuthenticate: refusal.challenge])
        }
        context.principal = claims
        return try await next(request, context)
    }

    /// The token's verified claims, or `APIError.unauthenticated` (401) / `forbidden` (403). The console asks this of
    /// the token its cookie carries on every page, as the API asks it of every request.
    func authenticate(_ token: String) async throws -> AccessTokenClaims {
        // The tenant the token claims to be from chooses the key ring; only that tenant's keys may have signed it,
        // and its issuer must be that tenant's (PROTOCOL §11: no tenant's token verifies as another's).
        guard let claimedTenant = UnverifiedClaims.tenantId(of: token), let tenant = try await tenants.snapshot(tenantSegment: claimedTenant),
            tenant.tenant.id == claimedTenant.lowercased(),
            case .success(let claims) = try await signers.signer(tenantId: tenant.tenant.id).verifyAccessToken(
                token, issuer: endpoints.issuer(tenantId: tenant.tenant.id), audiences: resource.identifierUris + [resource.appId], now: clock.now(), leeway: 60
            ),
            claims.tid.lowercased() == tenant.tenant.id
        else { throw APIError.unauthenticated }
        let directory = tenant.directory
        guard directory.application(appId: claims.azp) != nil else { throw APIError.unauthenticated }
        let principalId: String
        if claims.isDelegated {
            guard let oid = claims.oid, let user = directory.user(id: oid), user.accountEnabled else { throw APIError.unauthenticated }
            principalId = user.id
        } else {
            principalId = claims.azp
        }
        if let requiredRole {
            guard (claims.roles ?? []).contains(requiredRole), directory.roles(ofPrincipal: principalId, on: resource).contains(requiredRole) else {
                throw APIError(.forbidden, "forbidden", "The token does not carry the \(requiredRole) app role, or the role is no longer assigned.")
            }
        }
        if try await revocations.isAccessTokenVoid(
            jti: claims.jti, tenantId: tenant.tenant.id, userId: claims.isDelegated ? principalId : nil,
            issuedAt: Date(epochMilliseconds: claims.issuedAtMilliseconds))
        {
            throw APIError.unauthenticated
        }
        return claims
    }
}

extension PortcullisRequestContext {
    /// The verified principal of a bearer-protected route.
    func requirePrincipal() throws -> AccessTokenClaims {
        guard let principal else { throw APIError.unauthenticated }
        return principal
    }

    /// Who did it, for the audit log.
    var actor: String { principal?.actor ?? "unknown" }
}

extension AccessTokenClaims {
    /// Who acts with this token, as the audit log names them.
    var actor: String {
        if let upn { return "\(upn) (\(oid ?? sub)) via \(azp)" }
        return "app \(azp)"
    }
}

/// A JWT's payload read without checking its signature: only to choose which tenant's key ring checks it, or to
/// read back a token the server itself sealed into a cookie.
enum UnverifiedClaims {
    static func payload(of token: String) -> [String: Any]? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[1].utf8.count <= 16_384, let payload = Base64URL.decode(String(parts[1])) else { return nil }
        return try? JSONSerialization.jsonObject(with: payload) as? [String: Any]
    }

    static func tenantId(of token: String) -> String? {
        guard let tid = payload(of: token)?["tid"] as? String, tid.isGUID else { return nil }
        return tid
    }
}
