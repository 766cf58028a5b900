import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import PortcullisAPI
import PortcullisCore
import PortcullisStorage
import PortcullisTokens

/// `/admin/v1` for the compliance service: app protection policies, enrollments (list, detail with
/// history, selective wipe) and the callback outbox (pending, dead letters, redeliver).
struct ComplianceAdminRoutes: Sendable {
    let store: any PortcullisStore
    let tenants: TenantCache
    let compliance: ComplianceService
    let outboxSignal: OutboxSignal
    let box: SecretMaterialBox
    let clock: any WallClock
    let documents: AdminDocuments

    static var encoder: JSONEncoder { JSONResponse.encoder }

    func register(on group: RouterGroup<PortcullisRequestContext>) {
        documents.appProtectionPolicies.register(on: group, path: "app-protection/policies")
        documents.appConfigurationPolicies.register(on: group, path: "app-configuration/policies")
        AppSecretRoutes(store: store, tenants: tenants, compliance: compliance, box: box, clock: clock).register(on: group)

        group.get("enrollments") { request, context in try await list(request, context) }
        group.get("enrollments/:id") { _, context in try await detail(context) }
        group.post("enrollments/:id/wipe") { _, context in try await wipe(context) }
        group.get("outbox") { request, context in try await outbox(request, context) }
        group.post("outbox/:id/redeliver") { _, context in try await redeliver(context) }
    }

    func tenant(_ context: PortcullisRequestContext) async throws -> TenantSnapshot {
        guard let tenant = try await tenants.snapshot(tenantSegment: try context.requirePrincipal().tid) else { throw APIError.unauthenticated }
        return tenant
    }

    struct Page<T: Encodable>: Encodable {
        let value: [T]
        var nextLink: String? = nil
    }

    func list(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let tenant = try await tenant(context)
        let query = request.uri.queryParameters
        var filter = EnrollmentQuery(tenantId: tenant.tenant.id)
        if let account = query.get("account") { filter.userId = tenant.directory.user(identity: account)?.id ?? account.lowercased() }
        filter.clientId = query.get("app")
        filter.deviceId = query.get("device")
        if let status = query.get("status") {
            guard let state = Enrollment.State(rawValue: status) else {
                throw ValidationError(problems: [ValidationProblem(pointer: "?status", message: "must be one of: \(Enrollment.State.allCases.map(\.rawValue).joined(separator: ", ")).")])
            }
            filter.state = state
        }
        filter.limit = try Paging.top(request, default: filter.limit, range: 1...1000)
        filter.offset = try Paging.skip(request)
        let enrollments = try await store.enrollments(filter)
        let next = Paging.nextLink(request, skip: filter.offset, limit: filter.limit, count: enrollments.count)
        return JSONResponse.make(status: .ok, data: try Self.encoder.encode(Page(value: enrollments, nextLink: next)))
    }

    struct Detail: Encodable {
        let enrollment: Enrollment
        let history: [EnrollmentHistoryEntry]
    }

    func detail(_ context: PortcullisRequestContext) async throws -> Response {
        let tenant = try await tenant(context)
        let id = context.parameters.get("id") ?? ""
        guard let enrollment = try await store.enrollment(id: id), enrollment.tenantId == tenant.tenant.id else { throw APIError.notFound("The enrollment \(id.prefix(64))") }
        return JSONResponse.make(status: .ok, data: try Self.encoder.encode(Detail(enrollment: enrollment, history: try await store.enrollmentHistory(id: enrollment.id))))
    }

    func wipe(_ context: PortcullisRequestContext) async throws -> Response {
        let tenant = try await tenant(context)
        let id = context.parameters.get("id") ?? ""
        guard let wiped = try await compliance.wipe(tenantId: tenant.tenant.id, id: id, actor: context.actor) else {
            throw APIError(.conflict, "nothingToWipe", "The enrollment is already wiped or unenrolled.")
        }
        return JSONResponse.make(status: .accepted, data: try Self.encoder.encode(wiped))
    }

    func outbox(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let tenant = try await tenant(context)
        var state: OutboxMessage.State?
        if let text = request.uri.queryParameters.get("state") {
            guard let parsed = OutboxMessage.State(rawValue: text) else {
                throw ValidationError(problems: [ValidationProblem(pointer: "?state", message: "must be pending, delivered or deadLetter.")])
            }
            state = parsed
        }
        let limit = try Paging.top(request, default: 100, range: 1...1000)
        let skip = try Paging.skip(request)
        let messages = try await store.outboxMessages(tenantId: tenant.tenant.id, state: state, limit: limit, offset: skip)
        let next = Paging.nextLink(request, skip: skip, limit: limit, count: messages.count)
        return JSONResponse.make(status: .ok, data: try Self.encoder.encode(Page(value: messages, nextLink: next)))
    }

    func redeliver(_ context: PortcullisRequestContext) async throws -> Response {
        let tenant = try await tenant(context)
        let id = context.parameters.get("id") ?? ""
        guard try await store.redeliverOutbox(id: id, tenantId: tenant.tenant.id, now: clock.now()) else { throw APIError.notFound("The outbox message \(id.prefix(64))") }
        outboxSignal.signal()
        try await store.appendAudit(AuditRecord(
            tenantId: tenant.tenant.id, at: clock.now(), actor: context.actor, action: .redeliver, kind: .outbox, documentId: id, before: nil, after: nil))
        return JSONResponse.make(status: .accepted, ["id": id, "state": "pending"])
    }
}
