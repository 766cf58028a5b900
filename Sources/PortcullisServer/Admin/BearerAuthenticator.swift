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
    /// The path under which the routes lie (`/admin/v1/`) when directory roles may stand in for `requiredRole` (the
    /// admin API, PROTOCOL §17): each request of a role holder is then checked against `AdminAuthorization`.
    var directoryRolesUnder: String? = nil

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        let verified = try await admit(request, directoryRoles: directoryRolesUnder != nil)
        if let roles = verified.directoryRoles, let prefix = directoryRolesUnder {
            try Self.authorize(
                roles: roles, method: request.method.rawValue, path: String(request.uri.path.dropFirst(prefix.count)), directory: verified.directory)
        }
        context.principal = verified.claims
        return try await next(request, context)
    }

    /// A request's token verified (`verify`) and its binding checked: a DPoP-bound token only with a proof by its key for
    /// this request. `revoked` is what a revoked token throws (the Graph API challenges for a new one, PROTOCOL §14.3).
    func admit(
        _ request: Request, directoryRoles: Bool, revoked: @Sendable (AccessTokenClaims) -> any Error = { _ in APIError.unauthenticated }
    ) async throws -> Verified {
        guard let presented = ProtectedResourceRequest(authorization: request.headers[.authorization]) else { throw APIError.unauthenticated }
        let verified = try await verify(presented.token, directoryRoles: directoryRoles, revoked: revoked)
        let claims = verified.claims
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
        return verified
    }

    /// The token's verified claims, or `APIError.unauthenticated` (401) / `forbidden` (403). The console asks this of
    /// the token its cookie carries on every page, as the API asks it of every request.
    func authenticate(_ token: String) async throws -> AccessTokenClaims { try await verify(token, directoryRoles: false).claims }

    /// A token verified: its claims, and — when directory roles stood in for the required app role — the roles the user
    /// holds now (`nil`: the app role itself, every right).
    struct Verified {
        let claims: AccessTokenClaims
        let directoryRoles: [RoleID]?
        let directory: DirectorySnapshot
    }

    /// A role holder's request checked against `AdminAuthorization` (403 when outside their roles). A write to a user,
    /// group or application that holds administrative rights (the app role, or an administrative directory role) needs
    /// a Global Administrator: otherwise a User Administrator could reset a Global Administrator's password or join a
    /// role-holding group, or an Application Administrator add a secret to an application holding `Portcullis.Admin`,
    /// and take those rights (as Entra protects privileged accounts).
    static func authorize(roles: [RoleID], method: String, path: String, directory: DirectorySnapshot) throws {
        guard AdminAuthorization.allows(roles: roles, method: method, path: path) else {
            throw APIError(.forbidden, "forbidden", "Your directory roles do not allow \(method) on this part of the admin API.")
        }
        let writing = method != "GET" && method != "HEAD"
        if writing, !roles.contains(DirectoryRoleDefinition.globalAdministrator), isPrivilegedTarget(path: path, directory: directory) {
            throw APIError(.forbidden, "forbidden", "This account or group holds administrative rights: only a Global Administrator changes it.")
        }
    }

    /// Whether `path` (under `/admin/v1/`) names a user, group or application that holds administrative rights: the app
    /// role `Portcullis.Admin`, or an administrative directory role (a group's own, a user's own or through groups).
    static func isPrivilegedTarget(path: String, directory: DirectorySnapshot) -> Bool {
        let segments = path.split(separator: "/").map(String.init)
        guard segments.count > 1, ["users", "groups", "applications"].contains(segments[0]) else { return false }
        let target = segments[1]
        let directoryRoles =
            switch segments[0] {
            case "users": directory.roleIds(ofUser: ObjectID(target))
            case "groups": directory.directoryRoleAssignments(ofPrincipal: ObjectID(target)).map(\.roleDefinitionId)
            default: [RoleID]()
            }
        return AdminAuthorization.isAdministrative(directoryRoles)
            || directory.roles(ofPrincipal: PrincipalID(target), on: BuiltInResources.admin).contains(BuiltInResources.adminRole)
    }

    func verify(
        _ token: String, directoryRoles allowDirectoryRoles: Bool,
        revoked: @Sendable (AccessTokenClaims) -> any Error = { _ in APIError.unauthenticated }
    ) async throws -> Verified {
        // The tenant the token claims to be from chooses the key ring; only that tenant's keys may have signed it,
        // and its issuer must be that tenant's (PROTOCOL §11: no tenant's token verifies as another's).
        guard let claimedTenant = UnverifiedClaims.tenantId(of: token), let tenant = try await tenants.snapshot(tenantSegment: claimedTenant),
            tenant.tenant.id == TenantID(claimedTenant),
            case .success(let claims) = try await signers.signer(tenantId: tenant.tenant.id).verifyAccessToken(
                token, issuer: endpoints.issuer(tenantId: tenant.tenant.id.rawValue), audiences: resource.identifierUris + [resource.appId.rawValue],
                now: clock.now(), leeway: 60
            ),
            TenantID(claims.tid) == tenant.tenant.id
        else { throw APIError.unauthenticated }
        let directory = tenant.directory
        guard directory.application(appId: AppID(claims.azp)) != nil else { throw APIError.unauthenticated }
        let principalId: PrincipalID
        if claims.isDelegated {
            guard let oid = claims.oid, let user = directory.user(id: ObjectID(oid)), user.accountEnabled else { throw APIError.unauthenticated }
            principalId = PrincipalID(user.id)
        } else {
            principalId = PrincipalID(claims.azp)
        }
        var directoryRoles: [RoleID]?
        if let requiredRole, !((claims.roles ?? []).contains(requiredRole) && directory.roles(ofPrincipal: principalId, on: resource).contains(requiredRole)) {
            // Directory roles, read from the directory now (PROTOCOL §17), stand in where the routes allow them.
            let held = claims.isDelegated ? directory.roleIds(ofUser: ObjectID(principalId)) : []
            guard allowDirectoryRoles, AdminAuthorization.isAdministrative(held) else {
                throw APIError(.forbidden, "forbidden", "The token does not carry the \(requiredRole) app role, or the role is no longer assigned.")
            }
            directoryRoles = held
        }
        if try await revocations.isAccessTokenVoid(
            jti: claims.jti, tenantId: tenant.tenant.id, userId: claims.isDelegated ? ObjectID(principalId) : nil,
            issuedAt: Date(epochMilliseconds: claims.issuedAtMilliseconds))
        {
            throw revoked(claims)
        }
        return Verified(claims: claims, directoryRoles: directoryRoles, directory: directory)
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

extension TenantCache {
    /// The tenant of a bearer-protected admin request: its token's (`tid`).
    func tenant(of context: PortcullisRequestContext) async throws -> TenantSnapshot {
        guard let tenant = try await snapshot(tenantSegment: try context.requirePrincipal().tid) else { throw APIError.unauthenticated }
        return tenant
    }

    /// The tenant and the user the request's `:id` names (object ID or UPN), or 404.
    func user(of context: PortcullisRequestContext) async throws -> (TenantSnapshot, User) {
        let tenant = try await tenant(of: context)
        let identity = context.parameters.get("id") ?? ""
        guard let user = tenant.directory.user(identity: identity) else { throw APIError.notFound("The user \(identity.prefix(128))") }
        return (tenant, user)
    }
}
