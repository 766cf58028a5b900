import Foundation
import Hummingbird
import PortcullisCore
import PortcullisStorage

/// `POST /admin/v1/conditional-access/impact` (PROTOCOL §11): what draft policies would have done to the
/// stored sign-ins of a window, before anyone turns them on. Nothing is enforced or recorded.
extension AdminRoutes {
    static let impactDefaultWindow: TimeInterval = 7 * 24 * 3600
    static let impactMaximumSignIns = 10_000

    func impact(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let tenant = try await tenant(context)
        let value = try await DocumentBody.body(request, context)
        let problems = ProblemCollector()
        guard let root = JSONObjectReader(value, at: "", problems: problems) else { throw APIError.validation(ValidationError(problems: problems.problems)) }
        root.rejectUnknownMembers(allowed: ["policies", "from", "to", "top"])
        var drafts: [ConditionalAccessPolicy] = []
        if let items = root.array("policies", required: true) { drafts = Self.impactDrafts(items, tenant: tenant, problems: problems) }
        func date(_ key: String) -> Date? {
            guard let text = root.string(key) else { return nil }
            guard let parsed = try? Date(text, strategy: .iso8601) else {
                problems.add(root.path(key), "'\(text.prefix(64))' is not an ISO 8601 date-time (e.g. 2026-11-23T10:00:00Z).")
                return nil
            }
            return parsed
        }
        // Without `to`, up to now (inclusive: a sign-in of this instant counts); without `from`, a week before.
        let to = date("to")
        let from = date("from") ?? (to ?? clock.now()).addingTimeInterval(-Self.impactDefaultWindow)
        if let to, from >= to { problems.add(root.path("from"), "must be before 'to'.") }
        let top = root.integer("top", in: 1...Self.impactMaximumSignIns) ?? 1000
        try problems.check()
        let report = try await impact(drafts, from: from, to: to, top: top, tenant: tenant)
        return JSONResponse.make(status: .ok, data: try JSONResponse.encoder.encode(report))
    }

    /// Between 1 and 50 drafts at their pointers (`/policies/n`).
    static func impactDrafts(_ items: [(JSONValue, String)], tenant: TenantSnapshot, problems: ProblemCollector) -> [ConditionalAccessPolicy] {
        if items.isEmpty || items.count > 50 { problems.add("/policies", "give between 1 and 50 draft policies.") }
        return drafts(Array(items.prefix(50)), tenant: tenant, problems: problems)
    }

    /// The newest `top` stored sign-ins of [from, to] replayed with the tenant's policies and with the drafts applied.
    func impact(_ drafts: [ConditionalAccessPolicy], from: Date, to: Date?, top: Int, tenant: TenantSnapshot) async throws -> ImpactAnalysis.Report {
        let records = try await store.newestSignIns(tenantId: TenantID(tenant.tenant.id), from: from, to: to, limit: top)
        let current = tenant.conditionalAccess
        let drafted = tenant.compile(ImpactAnalysis.applying(drafts, to: current.policies))
        return ImpactAnalysis.replay(records, directory: tenant.directory, current: current, drafted: drafted)
    }
}
