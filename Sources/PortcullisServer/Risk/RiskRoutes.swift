import Foundation
import HTTPTypes
import Hummingbird
import PortcullisCore
import PortcullisStorage
import PortcullisTokenVerification

/// The admin API of risk (PROTOCOL §19), on Graph's paths under `/admin/v1/identityProtection`: risky users (list, one,
/// history), confirming compromise and dismissing (`{"userIds": […]}`, 204, as Graph), the tenant's detections, a
/// detection reported by an admin (leaked credentials, threat intelligence), and a user's insider risk level.
struct RiskRoutes: Sendable {
    let tenants: TenantCache
    let risk: RiskEngine

    /// The detections an admin may report; the rest are Portcullis's own.
    static let reportable: [RiskEventType] = [.leakedCredentials, .investigationsThreatIntelligence]
    /// At most this many users in one `confirmCompromised` or `dismiss` (Graph's limit is 60).
    static let maximumUserIds = 60

    func register(on group: RouterGroup<PortcullisRequestContext>) {
        group.get("identityProtection/riskyUsers") { _, context in
            let tenant = try await tenant(context)
            return JSONResponse.make(status: .ok, JSONValue.object(["value": .array(tenant.riskyUsers.map(\.graph))]))
        }
        group.get("identityProtection/riskyUsers/:id") { _, context in
            let (tenant, user) = try await user(context)
            guard let risky = tenant.riskyUser(id: user.id), risky.hasRisk else { throw APIError.notFound("The risky user \(user.id)") }
            return JSONResponse.make(status: .ok, risky.graph)
        }
        group.get("identityProtection/riskyUsers/:id/history") { _, context in
            let (tenant, user) = try await user(context)
            guard let risky = tenant.riskyUser(id: user.id), risky.hasRisk else { throw APIError.notFound("The risky user \(user.id)") }
            return JSONResponse.make(status: .ok, JSONValue.object(["value": .array(risky.graphHistory)]))
        }
        group.post("identityProtection/riskyUsers/confirmCompromised") { request, context in
            try await decide(request, context) { user, tenant in try await risk.confirmCompromised(user, in: tenant, actor: context.actor) }
        }
        group.post("identityProtection/riskyUsers/dismiss") { request, context in
            try await decide(request, context) { user, tenant in try await risk.dismiss(user, in: tenant, actor: context.actor) }
        }
        group.put("identityProtection/riskyUsers/:id/insiderRiskLevel") { request, context in
            let (tenant, user) = try await user(context)
            let body = try await DocumentBody.body(request, context)
            let problems = ProblemCollector()
            guard let reader = JSONObjectReader(body, at: "", problems: problems) else {
                throw APIError.validation(ValidationError(problems: problems.problems))
            }
            reader.rejectUnknownMembers(allowed: ["level"])
            var level: InsiderRiskLevel?
            if reader.object["level"] != .null {
                level = reader.enumeration("level", allowed: InsiderRiskLevel.allCases.map(\.rawValue), required: true).flatMap(InsiderRiskLevel.init)
            }
            try Self.check(problems)
            try await risk.setInsiderRisk(level, user: user, in: tenant, actor: context.actor)
            return Response(status: .noContent)
        }
        // Workload identities (PROTOCOL §19), by app ID (or Graph's service principal ID).
        group.get("identityProtection/riskyServicePrincipals") { _, context in
            let tenant = try await tenant(context)
            return JSONResponse.make(status: .ok, JSONValue.object(["value": .array(tenant.riskyServicePrincipals.map(\.graph))]))
        }
        group.get("identityProtection/riskyServicePrincipals/:id") { _, context in
            let tenant = try await tenant(context)
            let given = context.parameters.get("id") ?? ""
            guard let application = Self.application(given, in: tenant), let risky = tenant.riskyServicePrincipal(appId: application.appId), risky.hasRisk
            else { throw APIError.notFound("The risky service principal \(given.prefix(64))") }
            return JSONResponse.make(status: .ok, risky.graph)
        }
        group.post("identityProtection/riskyServicePrincipals/confirmCompromised") { request, context in
            try await decideServicePrincipals(request, context, .confirmCompromised)
        }
        group.post("identityProtection/riskyServicePrincipals/dismiss") { request, context in
            try await decideServicePrincipals(request, context, .dismiss)
        }
        group.get("identityProtection/servicePrincipalRiskDetections") { _, context in
            let tenant = try await tenant(context)
            return JSONResponse.make(status: .ok, JSONValue.object(["value": .array(tenant.servicePrincipalRiskDetections)]))
        }
        group.post("identityProtection/servicePrincipalRiskDetections") { request, context in
            let tenant = try await tenant(context)
            let body = try await DocumentBody.body(request, context)
            let problems = ProblemCollector()
            guard let reader = JSONObjectReader(body, at: "", problems: problems) else {
                throw APIError.validation(ValidationError(problems: problems.problems))
            }
            reader.rejectUnknownMembers(allowed: ["appId", "riskEventType", "additionalInfo"])
            let appId = reader.string("appId", required: true)
            _ = reader.enumeration("riskEventType", allowed: [RiskEventType.leakedCredentials.rawValue], required: true)
            let info = reader.string("additionalInfo", nonEmpty: false)
            if let info, info.count > 512 { problems.add("/additionalInfo", "may be at most 512 characters.") }
            let application = appId.flatMap { Self.application($0, in: tenant) }
            if appId != nil, application == nil { problems.add("/appId", "names no application of this tenant.") }
            try Self.check(problems)
            guard let application else { throw APIError.validation(ValidationError(problems: problems.problems)) }
            try await risk.decide(.leakedCredentials, application: application, in: tenant, actor: context.actor, additionalInfo: info)
            let stored = try await tenants.snapshot(id: tenant.tenant.id)?.riskyServicePrincipal(appId: application.appId)
            return JSONResponse.make(status: .created, stored?.graphDetections.first ?? .null)
        }
        group.get("identityProtection/riskDetections") { _, context in
            let tenant = try await tenant(context)
            return JSONResponse.make(status: .ok, JSONValue.object(["value": .array(tenant.riskDetections)]))
        }
        group.post("identityProtection/riskDetections") { request, context in
            let tenant = try await tenant(context)
            let body = try await DocumentBody.body(request, context)
            let problems = ProblemCollector()
            guard let reader = JSONObjectReader(body, at: "", problems: problems) else {
                throw APIError.validation(ValidationError(problems: problems.problems))
            }
            reader.rejectUnknownMembers(allowed: ["userId", "riskEventType", "riskLevel", "additionalInfo"])
            let userId = reader.string("userId", required: true)
            let type = reader.enumeration("riskEventType", allowed: Self.reportable.map(\.rawValue), required: true).flatMap(RiskEventType.init)
            let level = reader.enumeration("riskLevel", allowed: ["low", "medium", "high"]).flatMap(RiskLevel.init)
            let info = reader.string("additionalInfo", nonEmpty: false)
            if let info, info.count > 512 { problems.add("/additionalInfo", "may be at most 512 characters.") }
            let user = userId.flatMap { tenant.directory.user(identity: $0) }
            if userId != nil, user == nil { problems.add("/userId", "names no user of this tenant.") }
            try Self.check(problems)
            guard let user, let type else { throw APIError.validation(ValidationError(problems: problems.problems)) }
            let risky = try await risk.report(type, user: user, in: tenant, actor: context.actor, level: level, additionalInfo: info)
            return JSONResponse.make(status: .created, risky.graphDetections.first ?? .null)
        }
    }

    /// `{"userIds": [...]}`: each user decided in turn; every ID must name a user of the tenant, or nothing is done.
    func decide(
        _ request: Request, _ context: PortcullisRequestContext, _ each: (User, TenantSnapshot) async throws -> Void
    ) async throws -> Response {
        let tenant = try await tenant(context)
        let body = try await DocumentBody.body(request, context)
        let problems = ProblemCollector()
        guard let reader = JSONObjectReader(body, at: "", problems: problems) else { throw APIError.validation(ValidationError(problems: problems.problems)) }
        reader.rejectUnknownMembers(allowed: ["userIds"])
        var users: [User] = []
        let ids = reader.strings("userIds", required: true) ?? []
        if ids.isEmpty && reader.has("userIds") { problems.add("/userIds", "name at least one user.") }
        if ids.count > Self.maximumUserIds { problems.add("/userIds", "name at most \(Self.maximumUserIds) users at once.") }
        for (id, pointer) in ids.prefix(Self.maximumUserIds) {
            if let user = tenant.directory.user(identity: id) { users.append(user) } else { problems.add(pointer, "names no user of this tenant.") }
        }
        try Self.check(problems)
        for user in users { try await each(user, try await tenants.snapshot(id: tenant.tenant.id) ?? tenant) }
        return Response(status: .noContent)
    }

    /// `{"servicePrincipalIds": [...]}` (app IDs, or Graph's service principal IDs), as `decide` for users.
    func decideServicePrincipals(
        _ request: Request, _ context: PortcullisRequestContext, _ decision: RiskEngine.ServicePrincipalDecision
    ) async throws -> Response {
        let tenant = try await tenant(context)
        let body = try await DocumentBody.body(request, context)
        let problems = ProblemCollector()
        guard let reader = JSONObjectReader(body, at: "", problems: problems) else { throw APIError.validation(ValidationError(problems: problems.problems)) }
        reader.rejectUnknownMembers(allowed: ["servicePrincipalIds"])
        var applications: [PortcullisCore.Application] = []
        let ids = reader.strings("servicePrincipalIds", required: true) ?? []
        if ids.isEmpty && reader.has("servicePrincipalIds") { problems.add("/servicePrincipalIds", "name at least one service principal.") }
        if ids.count > Self.maximumUserIds { problems.add("/servicePrincipalIds", "name at most \(Self.maximumUserIds) at once.") }
        for (id, pointer) in ids.prefix(Self.maximumUserIds) {
            if let application = Self.application(id, in: tenant) {
                applications.append(application)
            } else {
                problems.add(pointer, "names no application of this tenant.")
            }
        }
        try Self.check(problems)
        for application in applications {
            try await risk.decide(decision, application: application, in: try await tenants.snapshot(id: tenant.tenant.id) ?? tenant, actor: context.actor)
        }
        return Response(status: .noContent)
    }

    /// An application of the tenant by its app ID or its service principal's ID in Graph.
    static func application(_ id: String, in tenant: TenantSnapshot) -> PortcullisCore.Application? {
        tenant.directory.application(appId: AppID(id)) ?? tenant.directory.applications.first { Applications.principalId($0).equalsIgnoringCase(id) }
    }

    /// The problems found, as the admin API's validation error.
    static func check(_ problems: ProblemCollector) throws {
        do { try problems.check() } catch { throw APIError.validation(error) }
    }

    func tenant(_ context: PortcullisRequestContext) async throws -> TenantSnapshot { try await tenants.tenant(of: context) }

    func user(_ context: PortcullisRequestContext) async throws -> (TenantSnapshot, User) { try await tenants.user(of: context) }
}
