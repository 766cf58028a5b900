import Foundation
import Hummingbird
import PortcullisCore
import PortcullisStorage
import PortcullisTokens

/// `/admin/v1/users/{id}/authentication-methods` (PROTOCOL §10): list a user's second factors and reset one
/// (the user registers again at the next sign-in that needs it). Metadata only: a secret never leaves the store.
struct AuthenticationMethodRoutes: Sendable {
    let store: any PortcullisStore
    let tenants: TenantCache
    let clock: any WallClock

    /// One method as the API shows it, in the shape of Graph's `softwareOathAuthenticationMethod`.
    struct Method: Encodable {
        let id: String
        let odataType = "#microsoft.graph.softwareOathAuthenticationMethod"
        let kind: String
        let createdDateTime: Date
        let lastUsedDateTime: Date?

        enum CodingKeys: String, CodingKey {
            case id, kind, createdDateTime, lastUsedDateTime
            case odataType = "@odata.type"
        }

        init(_ record: AuthenticationMethodRecord) {
            id = record.id
            kind = record.kind.rawValue
            createdDateTime = record.createdAt
            lastUsedDateTime = record.lastUsedAt
        }
    }

    struct Page: Encodable { let value: [Method] }

    static var encoder: JSONEncoder { JSONResponse.encoder }

    func register(on group: RouterGroup<PortcullisRequestContext>) {
        group.get("users/:id/authentication-methods") { _, context in try await list(context) }
        group.delete("users/:id/authentication-methods/:methodId") { _, context in try await reset(context) }
    }

    func user(_ context: PortcullisRequestContext) async throws -> (TenantSnapshot, User) {
        guard let tenant = try await tenants.snapshot(tenantSegment: try context.requirePrincipal().tid) else { throw APIError.unauthenticated }
        let identity = context.parameters.get("id") ?? ""
        guard let user = tenant.directory.user(identity: identity) else { throw APIError.notFound("The user \(identity.prefix(128))") }
        return (tenant, user)
    }

    func list(_ context: PortcullisRequestContext) async throws -> Response {
        let (tenant, user) = try await user(context)
        let methods = try await store.authenticationMethods(tenantId: tenant.tenant.id, userId: user.id)
        return JSONResponse.make(status: .ok, data: try Self.encoder.encode(Page(value: methods.map(Method.init))))
    }

    func reset(_ context: PortcullisRequestContext) async throws -> Response {
        let (tenant, user) = try await user(context)
        let id = (context.parameters.get("methodId") ?? "").lowercased()
        guard let method = try await store.authenticationMethods(tenantId: tenant.tenant.id, userId: user.id).first(where: { $0.id == id }),
            try await store.deleteAuthenticationMethod(tenantId: tenant.tenant.id, userId: user.id, id: id)
        else { throw APIError.notFound("The authentication method \(id.prefix(64)) of \(user.userPrincipalName)") }
        let before = JSONValue(encoding: Method(method))
        try await store.appendAudit(
            AuditRecord(
                tenantId: tenant.tenant.id, at: clock.now(), actor: context.actor, action: .delete, kind: .authenticationMethod,
                documentId: "\(user.id)/\(id)", before: before, after: nil))
        return Response(status: .noContent)
    }
}
