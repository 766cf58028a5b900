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
        documents.appProtectionPolicies.register(on: group)
        documents.appConfigurationPolicies.register(on: group)
        AppSecretRoutes(store: store, tenants: tenants, compliance: compliance, box: box, clock: clock).register(on: group)

        group.get("enrollments") { request, context in try await list(request, context) }
        group.get("enrollments/:id") { _, context in try await detail(context) }
        group.post("enrollments/:id/wipe") { _, context in try await wipe(context) }
        group.get("outbox") { request, context in try await outbox(request, context) }
        group.post("outbox/:id/redeliver") { _, context in try await redeliver(context) }
    }

    func tenant(_ context: PortcullisRequestContext) async throws -> TenantSnapshot { try await tenants.tenant(of: context) }

    struct Page<T: Encodable>: Encodable {
        let value: [T]
        var nextLink: String? = nil
    }

    func list(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let tenant = try await tenant(context)
        let query = request.uri.queryParameters
        var filter = try Self.enrollmentQuery(tenant: tenant) { query.get($0).map { String($0) } }
        filter.limit = try Paging.top(request, default: filter.limit, range: 1...1000)
        filter.offset = try Paging.skip(request)
        let enrollments = try await store.enrollments(filter)
        let next = Paging.nextLink(request, skip: filter.offset, limit: filter.limit, count: enrollments.count)
        return JSONResponse.make(status: .ok, data: try Self.encoder.encode(Page(value: enrollments, nextLink: next)))
    }

    /// The enrollment list's filter from its parameters (`account`, `app`, `device`, `status`).
    static func enrollmentQuery(tenant: TenantSnapshot, _ parameter: (String) -> String?) throws -> EnrollmentQuery {
        var filter = EnrollmentQuery(tenantId: TenantID(tenant.tenant.id))
        if let account = parameter("account") { filter.userId = tenant.directory.user(identity: account)?.id ?? ObjectID(account) }
        filter.clientId = parameter("app").map { AppID($0) }
        filter.deviceId = parameter("device").map { DeviceID($0) }
        if let status = parameter("status") {
            guard let state = Enrollment.State(rawValue: status) else {
                throw ValidationError(problems: [
                    ValidationProblem(pointer: "?status", message: "must be one of: \(Enrollment.State.allCases.map(\.rawValue).joined(separator: ", ")).")
                ])
            }
            filter.state = state
        }
        return filter
    }

    func enrollments(_ filter: EnrollmentQuery) async throws -> [Enrollment] { try await store.enrollments(filter) }

    struct Detail: Encodable {
        let enrollment: Enrollment
        let history: [EnrollmentHistoryEntry]
    }

    func detail(_ context: PortcullisRequestContext) async throws -> Response {
        let tenant = try await tenant(context)
        let id = context.parameters.get("id") ?? ""
        return JSONResponse.make(status: .ok, data: try Self.encoder.encode(try await detail(tenant, id: id)))
    }

    /// One enrollment of the tenant with its history.
    func detail(_ tenant: TenantSnapshot, id: String) async throws -> Detail {
        guard let enrollment = try await store.enrollment(id: RecordID(id)), enrollment.tenantId == tenant.tenant.id else {
            throw APIError.notFound("The enrollment \(id.prefix(64))")
        }
        return Detail(enrollment: enrollment, history: try await store.enrollmentHistory(id: RecordID(enrollment.id)))
    }

    func wipe(_ context: PortcullisRequestContext) async throws -> Response {
        let tenant = try await tenant(context)
        let wiped = try await wipe(tenant, id: context.parameters.get("id") ?? "", actor: context.actor)
        return JSONResponse.make(status: .accepted, data: try Self.encoder.encode(wiped))
    }

    /// Selective wipe of one enrollment (PROTOCOL §6).
    func wipe(_ tenant: TenantSnapshot, id: String, actor: String) async throws -> Enrollment {
        guard let wiped = try await compliance.wipe(tenantId: tenant.tenant.id, id: id, actor: actor) else {
            throw APIError(.conflict, "nothingToWipe", "The enrollment is already wiped or unenrolled.")
        }
        return wiped
    }

    func outbox(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let tenant = try await tenant(context)
        let state = try Self.outboxState(request.uri.queryParameters.get("state").map { String($0) })
        let limit = try Paging.top(request, default: 100, range: 1...1000)
        let skip = try Paging.skip(request)
        let messages = try await outbox(tenant, state: state, limit: limit, skip: skip)
        let next = Paging.nextLink(request, skip: skip, limit: limit, count: messages.count)
        return JSONResponse.make(status: .ok, data: try Self.encoder.encode(Page(value: messages, nextLink: next)))
    }

    static func outboxState(_ text: String?) throws -> OutboxMessage.State? {
        guard let text else { return nil }
        guard let parsed = OutboxMessage.State(rawValue: text) else {
            throw ValidationError(problems: [ValidationProblem(pointer: "?state", message: "must be pending, delivered or deadLetter.")])
        }
        return parsed
    }

    func outbox(_ tenant: TenantSnapshot, state: OutboxMessage.State?, limit: Int, skip: Int) async throws -> [OutboxMessage] {
        try await store.outboxMessages(tenantId: tenant.tenant.id.rawValue, state: state, limit: limit, offset: skip)
    }

    func redeliver(_ context: PortcullisRequestContext) async throws -> Response {
        let tenant = try await tenant(context)
        let id = context.parameters.get("id") ?? ""
        try await redeliver(tenant, id: id, actor: context.actor)
        return JSONResponse.make(status: .accepted, ["id": id, "state": "pending"])
    }

    /// A dead letter delivered again (with its audit record).
    func redeliver(_ tenant: TenantSnapshot, id: String, actor: String) async throws {
        guard try await store.redeliverOutbox(id: id, tenantId: tenant.tenant.id.rawValue, now: clock.now()) else {
            throw APIError.notFound("The outbox message \(id.prefix(64))")
        }
        outboxSignal.signal()
        try await store.appendAudit(
            AuditRecord(
                tenantId: tenant.tenant.id, at: clock.now(), actor: actor, action: .redeliver, kind: .outbox, documentId: id, before: nil, after: nil))
    }
}
