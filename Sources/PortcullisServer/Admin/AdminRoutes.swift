import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import PortcullisCore
import PortcullisStorage
import PortcullisTokens

/// `/admin/v1`: conditional-access policies, named locations, what-if, the sign-in log and the audit log.
/// Every route requires an access token for `api://portcullis-admin` with the `Portcullis.Admin` role and
/// acts on that token's tenant.
struct AdminRoutes: Sendable {
    let configuration: ServerConfiguration
    let endpoints: ServerEndpoints
    let store: any PortcullisStore
    let tenants: TenantCache
    let signers: TenantKeyRings
    let recorder: SignInRecorder
    let countries: CountryTableSource
    let clock: any WallClock
    let compliance: ComplianceAdminRoutes
    let directory: DirectoryRoutes
    /// Every kind of tenant document the admin API serves.
    let documents: AdminDocuments
    /// Risk (PROTOCOL §19).
    let risk: RiskEngine

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// The check of every admin API request's token (and of every console page's session token).
    var authenticationMethods: AuthenticationMethodRoutes {
        AuthenticationMethodRoutes(
            store: store, tenants: tenants, passes: TemporaryAccessPasses(store: store, credentials: directory.credentials),
            transmitter: documents.transmitter, metadata: configuration.passkeyMetadata, clock: clock)
    }

    var signals: SignalAdminRoutes {
        SignalAdminRoutes(store: store, tenants: tenants, transmitter: documents.transmitter, risk: risk, clock: clock, logger: documents.logger)
    }

    var authenticator: BearerAuthenticator {
        BearerAuthenticator(
            resource: BuiltInResources.admin, requiredRole: BuiltInResources.adminRole, signers: signers,
            endpoints: endpoints, tenants: tenants, revocations: store, clock: clock, directoryRolesUnder: "/admin/v1/")
    }

    func register(on router: Router<PortcullisRequestContext>) {
        let group = router.group("admin/v1").add(middleware: authenticator)

        documents.conditionalAccessPolicies.register(on: group)
        TemplateRoutes(policies: documents.conditionalAccessPolicies).register(on: group)
        documents.namedLocations.register(on: group)
        documents.authenticationStrengths.register(on: group)
        documents.authenticationContexts.register(on: group)
        documents.agreements.register(on: group)
        group.get("agreements/:id/acceptances") { request, context in try await acceptances(request, context) }
        documents.attestationRoots.register(on: group)

        compliance.register(on: group)
        directory.register(on: group)
        authenticationMethods.register(on: group)
        signals.register(on: group)
        documents.sharedSignalsTransmitters.register(on: group)
        RiskRoutes(tenants: tenants, risk: risk).register(on: group)
        group.post("conditional-access/evaluate") { request, context in try await whatIf(request, context) }
        group.post("conditional-access/impact") { request, context in try await impact(request, context) }
        group.get("sign-ins") { request, context in try await signIns(request, context) }
        group.get("audit") { request, context in try await audit(request, context) }
    }

    /// Graph's `agreement/acceptances`: each user's latest answer to the agreement (read-only; the sign-in page writes them).
    func acceptances(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let tenant = try await tenant(context)
        let id = (context.parameters.get("id") ?? "").lowercased()
        guard tenant.agreement(id: PolicyID(id)) != nil else { throw APIError.notFound("The agreement \(id)") }
        let top = try Paging.top(request, default: 1000, range: 1...1000)
        let skip = try Paging.skip(request)
        let all = tenant.contents.agreementAcceptances.filter { $0.agreementId.rawValue == id }
        let page = Array(all.dropFirst(skip).prefix(top))
        return JSONResponse.make(
            status: .ok,
            DocumentResource<AgreementAcceptance>.ListBody(
                value: page.map { JSONValue(encoding: $0) }, nextLink: Paging.nextLink(request, skip: skip, limit: top, count: page.count)))
    }

    func tenant(_ context: PortcullisRequestContext) async throws -> TenantSnapshot { try await tenants.tenant(of: context) }

    /// What-if: evaluates a described sign-in against the stored policies, or against drafts, explaining
    /// every policy, and issues nothing.
    func whatIf(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let tenant = try await tenant(context)
        let value = try await DocumentBody.body(request, context)
        let problems = ProblemCollector()
        guard let root = JSONObjectReader(value, at: "", problems: problems) else { throw APIError.validation(ValidationError(problems: problems.problems)) }
        root.rejectUnknownMembers(allowed: ["signIn", "policies"])
        let signIn = root.object("signIn", required: true).flatMap(WhatIfSignIn.read)
        var drafts: [ConditionalAccessPolicy]?
        if let items = root.array("policies") { drafts = Self.drafts(items, tenant: tenant, problems: problems) }
        guard let signIn else { throw APIError.validation(ValidationError(problems: problems.problems)) }
        let answer = try whatIf(signIn, drafts: drafts, tenant: tenant, correlationId: context.correlationId, problems: problems)
        return JSONResponse.make(status: .ok, answer)
    }

    /// Draft policies at their pointers, read as a write would read them but never enforced (the lock-out guard
    /// does not apply to what-if and impact).
    static func drafts(_ items: [(JSONValue, String)], tenant: TenantSnapshot, problems: ProblemCollector) -> [ConditionalAccessPolicy] {
        items.compactMap { draft, pointer in
            ConditionalAccessPolicy.read(
                draft, directory: tenant.directory, strengths: tenant.contents.authenticationStrengths, contexts: tenant.contents.authenticationContexts,
                agreements: tenant.contents.agreements,
                generatedId: PolicyID.generate(),
                force: true, pointer: pointer, problems: problems)
        }
    }

    /// Exactly the token endpoint's decision over a described sign-in (and, with `drafts`, those policies instead of
    /// the tenant's): nothing is issued or recorded. Throws the description's problems at their pointers under `/signIn`,
    /// with any already in `problems` (the request's others, all reported at once).
    func whatIf(
        _ signIn: WhatIfSignIn, drafts: [ConditionalAccessPolicy]?, tenant: TenantSnapshot, correlationId: String,
        problems: ProblemCollector = ProblemCollector()
    ) throws -> WhatIfResponse {
        var facts = signIn.facts(tenant: tenant.directory, at: "/signIn", now: clock.now(), problems: problems, kept: { tenant.riskyUser(id: $0) })
        let country = countries.country(of: facts?.signIn.ipAddress)
        facts?.signIn.country = country
        let accepted = tenant.acceptedAgreements(userId: facts?.user?.id, now: clock.now())
        facts?.signIn.acceptedAgreements = accepted
        try problems.check()
        guard let facts else { throw ValidationError(problems: [ValidationProblem(pointer: "/signIn", message: "does not describe a sign-in.")]) }
        let policies = drafts.map(tenant.compile) ?? tenant.conditionalAccess
        let result = GrantDecision.decide(facts, policies: policies, settings: configuration.grant, explain: true)
        let refusal: TokenError? = if case .refuse(let refusal) = result.outcome { refusal.tokenError(baseURL: endpoints.baseURL) } else { nil }
        var record = GrantDecision.signInRecord(
            facts, decision: result.decision, errorCode: refusal?.aadsts, id: "what-if",
            correlationId: correlationId, grantLabel: "what-if")
        record.resource = nil
        return WhatIfResponse(signIn: record, error: refusal?.code.description, suberror: refusal?.suberror)
    }

    struct WhatIfResponse: Encodable {
        let signIn: SignInRecord
        let error: String?
        let suberror: String?
    }

    func signIns(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let tenant = try await tenant(context)
        let query = request.uri.queryParameters
        let filter = try Self.signInQuery(tenant: tenant) { query.get($0).map { String($0) } }
        let page = try await signIns(filter, tenant: tenant)
        var nextLink: String?
        if page.count == filter.limit, let last = page.last {
            var components = URLComponents()
            components.path = request.uri.path
            components.queryItems =
                query.filter { $0.key != "before" }.map { URLQueryItem(name: String($0.key), value: String($0.value)) }
                + [URLQueryItem(name: "before", value: String(last.cursor))]
            nextLink = components.string
        }
        let data = try JSONResponse.encoder.encode(Page(value: page.map(\.record), nextLink: nextLink))
        return JSONResponse.make(status: .ok, data: data)
    }

    /// The sign-in log's filter from its parameters (`user`, `app`, `resource`, `status`, `policy`, `correlationId`, `from`,
    /// `to`, `top`, `before`), every bad one a problem at `?name`.
    static func signInQuery(tenant: TenantSnapshot, _ parameter: (String) -> String?) throws -> SignInQuery {
        var filter = SignInQuery(tenantId: TenantID(tenant.tenant.id))
        var problems: [ValidationProblem] = []
        if let user = parameter("user") {
            filter.userId = tenant.directory.user(identity: user)?.id ?? ObjectID(user)
        }
        filter.clientAppId = parameter("app").map { AppID($0) }
        if let resource = parameter("resource") {
            filter.resourceAppId =
                (tenant.directory.resource(identifier: resource) ?? tenant.directory.application(appId: AppID(resource)))?.appId ?? AppID(resource)
        }
        if let status = parameter("status") {
            filter.status = Decision.Status(rawValue: status)
            if filter.status == nil { problems.append(ValidationProblem(pointer: "?status", message: "must be success, failure or notApplied.")) }
        }
        filter.policyId = parameter("policy").map { PolicyID($0) }
        filter.correlationId = parameter("correlationId")
        for (name, keyPath) in [("from", \SignInQuery.from), ("to", \SignInQuery.to)] {
            if let text = parameter(name) {
                if let date = try? Date(text, strategy: .iso8601) {
                    filter[keyPath: keyPath] = date
                } else {
                    problems.append(ValidationProblem(pointer: "?\(name)", message: "must be an ISO 8601 date-time such as 2026-11-21T23:04:00Z."))
                }
            }
        }
        if let top = parameter("top") {
            if let value = Int(top), (1...500).contains(value) {
                filter.limit = value
            } else {
                problems.append(ValidationProblem(pointer: "?top", message: "must be 1…500."))
            }
        }
        if let before = parameter("before") {
            if let value = Int64(before) {
                filter.before = value
            } else {
                problems.append(ValidationProblem(pointer: "?before", message: "must be a cursor this API returned."))
            }
        }
        if !problems.isEmpty { throw ValidationError(problems: problems) }
        return filter
    }

    /// One page of the sign-in log, the recorder's queue written first (a sign-in just made is in it). Records keep no
    /// policy names (issue 32): each is shown with the tenant's current name, or "(deleted policy)".
    func signIns(_ filter: SignInQuery, tenant: TenantSnapshot) async throws -> [(cursor: Int64, record: SignInRecord)] {
        await recorder.flush()
        let names = Dictionary(tenant.conditionalAccess.policies.map { ($0.id.rawValue, $0.displayName) }, uniquingKeysWith: { a, _ in a })
        return try await store.signIns(filter).map { entry in
            var record = entry.record
            for index in record.appliedConditionalAccessPolicies.indices where record.appliedConditionalAccessPolicies[index].displayName.isEmpty {
                let id = record.appliedConditionalAccessPolicies[index].id.lowercased()
                record.appliedConditionalAccessPolicies[index].displayName = names[id] ?? "(deleted policy)"
            }
            return (entry.cursor, record)
        }
    }

    struct Page<T: Encodable>: Encodable {
        let value: [T]
        let nextLink: String?
    }

    func audit(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let tenant = try await tenant(context)
        let limit = try Paging.top(request, default: 50, range: 1...500)
        let records = try await audit(tenant, limit: limit, before: try Paging.before(request))
        var nextLink: String?
        if records.count == limit, let last = records.last?.id { nextLink = "\(request.uri.path)?top=\(limit)&before=\(last)" }
        return JSONResponse.make(status: .ok, data: try JSONResponse.encoder.encode(Page(value: records, nextLink: nextLink)))
    }

    /// One page of the audit log, newest first, older than the cursor `before`.
    func audit(_ tenant: TenantSnapshot, limit: Int, before: Int64?) async throws -> [AuditRecord] {
        try await store.auditRecords(tenantId: tenant.tenant.id, limit: limit, before: before)
    }
}
