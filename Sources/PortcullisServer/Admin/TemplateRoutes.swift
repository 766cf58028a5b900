import Foundation
import Hummingbird
import PortcullisCore
import PortcullisTokens

/// Microsoft's conditional-access templates (PROTOCOL §17): Graph's `conditionalAccessTemplate` list and items under
/// `/admin/v1/conditional-access/templates`, and "create from template" (`POST …/templates/{id}/instantiate`), which
/// makes the policy as the Entra portal does and writes it through the policies' one write path (validation, the
/// lock-out guard, `dryRun` and `force`, audit).
struct TemplateRoutes: Sendable {
    /// The catalogue compiled in (`ConditionalAccess/templates.json`).
    static let catalogue = ConditionalAccessTemplate.catalogue(Data(EmbeddedText.templates_json.utf8))

    let policies: DocumentResource<ConditionalAccessPolicy>

    static func template(_ id: String) -> ConditionalAccessTemplate? {
        let id = id.lowercased()
        return catalogue.first { $0.id == id }
    }

    struct List: Encodable {
        let value: [JSONValue]
    }

    func register(on group: RouterGroup<PortcullisRequestContext>) {
        group.get("conditional-access/templates") { _, _ in JSONResponse.make(status: .ok, List(value: Self.catalogue.map(\.document))) }
        group.get("conditional-access/templates/:id") { _, context in
            let id = context.parameters.get("id") ?? ""
            guard let template = Self.template(id) else { throw APIError.notFound("The conditional-access template \(id)") }
            return JSONResponse.make(status: .ok, template.document)
        }
        group.post("conditional-access/templates/:id/instantiate") { request, context in try await instantiate(request, context) }
    }

    /// Creates a policy of a template: `displayName` (default: the template's name), `state` (default: report-only) and
    /// `currentAdministrator` (a user's object ID or UPN; default: the signed-in admin — an app-only caller names one
    /// when the template excludes the current administrator).
    func instantiate(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let id = context.parameters.get("id") ?? ""
        guard let template = Self.template(id) else { throw APIError.notFound("The conditional-access template \(id)") }
        let tenant = try await policies.tenant(context)
        var request = request
        let buffer = try await request.collectBody(upTo: 16 * 1024)
        var value = JSONValue.object([:])
        if buffer.readableBytes > 0 {
            guard let parsed = JSONValue.parse(Data(buffer.readableBytesView)) else { throw APIError.malformedJSON() }
            value = parsed
        }
        let problems = ProblemCollector()
        guard let body = JSONObjectReader(value, at: "", problems: problems) else { throw APIError.validation(ValidationError(problems: problems.problems)) }
        body.rejectUnknownMembers(allowed: ["displayName", "state", "currentAdministrator"])
        let displayName = body.string("displayName")
        let state = body.enumeration("state", allowed: ConditionalAccessPolicy.State.allCases.map(\.rawValue)).flatMap(
            ConditionalAccessPolicy.State.init(rawValue:))
        var administrator: String?
        if let named = body.string("currentAdministrator") {
            administrator = tenant.directory.user(identity: named)?.id.rawValue
            if administrator == nil { problems.add(body.path("currentAdministrator"), "names no user of this tenant.") }
        } else if let principal = try? context.requirePrincipal(), principal.isDelegated {
            administrator = principal.oid
        } else if template.excludesCurrentAdministrator {
            problems.add(
                body.path("currentAdministrator"),
                "is required of an app-only caller: the template excludes the administrator who creates the policy (\"\(ConditionalAccessTemplate.currentAdministrator)\")."
            )
        }
        do { try problems.check() } catch { throw APIError.validation(error) }
        let outcome = try await policies.write(
            template.policy(displayName: displayName, state: state ?? .reportOnly, administrator: administrator), pathId: nil, precondition: nil,
            options: try WriteOptions.of(request), dryRun: DocumentBody.flag(request, "dryRun"), tenant: tenant, actor: context.actor)
        return policies.response(outcome, tenant: tenant, collection: "/admin/v1/conditional-access/policies")
    }
}
