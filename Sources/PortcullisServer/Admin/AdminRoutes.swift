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
    let clock: any WallClock
    let compliance: ComplianceAdminRoutes
    let directory: DirectoryRoutes
    /// Every kind of tenant document the admin API serves.
    let documents: AdminDocuments

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    func register(on router: Router<PortcullisRequestContext>) {
        let group = router.group("admin/v1")
            .add(middleware: BearerAuthenticator(
                resource: BuiltInResources.admin, requiredRole: BuiltInResources.adminRole, signers: signers,
                endpoints: endpoints, tenants: tenants, revocations: store, clock: clock))

        documents.conditionalAccessPolicies.register(on: group, path: "conditional-access/policies")
        documents.namedLocations.register(on: group, path: "named-locations")

        compliance.register(on: group)
        directory.register(on: group)
        AuthenticationMethodRoutes(store: store, tenants: tenants, clock: clock).register(on: group)
        group.post("conditional-access/evaluate") { request, context in try await whatIf(request, context) }
        group.post("conditional-access/impact") { request, context in try await impact(request, context) }
        group.get("sign-ins") { request, context in try await signIns(request, context) }
        group.get("audit") { request, context in try await audit(request, context) }
    }

    func tenant(_ context: PortcullisRequestContext) async throws -> TenantSnapshot {
        guard let tenant = try await tenants.snapshot(tenantSegment: try context.requirePrincipal().tid) else { throw APIError.unauthenticated }
        return tenant
    }

    /// What-if: evaluates a described sign-in against the stored policies, or against drafts, explaining
    /// every policy, and issues nothing.
    func whatIf(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let tenant = try await tenant(context)
        let value = try await DocumentBody.body(request, context)
        let problems = ProblemCollector()
        guard let root = JSONObjectReader(value, at: "", problems: problems) else { throw APIError.validation(ValidationError(problems: problems.problems)) }
        root.rejectUnknownMembers(allowed: ["signIn", "policies"])
        var facts: GrantFacts?
        if let signIn = root.object("signIn", required: true) {
            signIn.rejectUnknownMembers(allowed: ["userId", "servicePrincipalId", "clientAppId", "resourceAppId", "platform", "ipAddress", "clientAppType", "capabilities", "appProtection", "approvedClientApp", "mfa"])
            let directory = tenant.directory
            var user: User?
            if let id = signIn.string("userId") {
                user = directory.user(identity: id)
                if user == nil { problems.add(signIn.path("userId"), "'\(id)' names no user of this tenant.") }
            }
            let clientId = signIn.string("clientAppId", required: true)
            let client = clientId.flatMap { directory.application(appId: $0) }
            if let clientId, client == nil { problems.add(signIn.path("clientAppId"), "'\(clientId)' names no application of this tenant.") }
            let resourceId = signIn.string("resourceAppId", required: true)
            let resource = resourceId.flatMap { directory.resource(identifier: $0) ?? directory.application(appId: $0) }
            if let resourceId, resource == nil { problems.add(signIn.path("resourceAppId"), "'\(resourceId)' names no resource of this tenant.") }
            var platform: DevicePlatform?
            if let name = signIn.string("platform") {
                platform = DevicePlatform(caseInsensitive: name)
                if platform == nil { problems.add(signIn.path("platform"), "'\(name)' is not one of: \(DevicePlatform.allCases.map(\.rawValue).joined(separator: ", ")).") }
            }
            var ip: IPAddress?
            if let text = signIn.string("ipAddress") {
                ip = IPAddress(text)
                if ip == nil { problems.add(signIn.path("ipAddress"), "'\(text)' is not an IPv4 or IPv6 address.") }
            }
            let type = signIn.enumeration("clientAppType", allowed: SignInFacts.ClientAppType.allCases.map(\.rawValue)).flatMap(SignInFacts.ClientAppType.init(rawValue:)) ?? .mobileAppsAndDesktopClients
            let capabilities = ClaimsRequest(capabilities: (signIn.strings("capabilities") ?? []).map(\.value))
            let protection: SignInFacts.AppProtection
            switch signIn.enumeration("appProtection", allowed: ["compliant", "notCompliant", "none"]) {
            case "compliant": protection = .compliant(enrollmentId: "what-if")
            case "notCompliant": protection = .notCompliant
            default: protection = .none
            }
            let mfa = signIn.bool("mfa") ?? false
            if let client, let resource {
                // The facts the token endpoint would have gathered, described instead.
                facts = GrantFacts(
                    grantType: user == nil ? .clientCredentials : .password, tenant: directory, client: client, clientAuthenticated: !client.publicClient,
                    user: user, scope: ScopeRequest(resource: resource, audience: resource.primaryIdentifier, resourceScopes: [], isDefault: true, oidc: []),
                    scopeText: "\(resource.primaryIdentifier)/.default", capabilities: capabilities,
                    signIn: SignInFacts(
                        userId: user?.id, groupIds: user.map { directory.groupIds(ofUser: $0.id) } ?? [], clientAppId: client.appId,
                        resourceAppId: resource.appId, clientAppType: type, platform: platform, ipAddress: ip, capabilities: capabilities.capabilities,
                        appProtection: protection, approvedClientApp: signIn.bool("approvedClientApp") ?? client.approvedClientApp,
                        multiFactorAuthenticated: mfa),
                    authentication: user == nil ? .none : AuthenticationContext(methods: mfa ? ["pwd", "mfa"] : ["pwd"], time: clock.now()),
                    clientInfoRequested: false, now: clock.now())
            }
        }
        var policySet = tenant.conditionalAccess
        if let drafts = root.array("policies") {
            var policies: [ConditionalAccessPolicy] = []
            for (draft, pointer) in drafts {
                if let policy = ConditionalAccessPolicy.read(draft, directory: tenant.directory, generatedId: UUID().uuidString.lowercased(), force: true, pointer: pointer, problems: problems) {
                    policies.append(policy)
                }
            }
            policySet = CompiledPolicySet(policies: policies, namedLocations: tenant.directory.namedLocations)
        }
        try problems.check()
        guard let facts else { throw APIError.validation(ValidationError(problems: problems.problems)) }
        // Exactly the token endpoint's decision, over described facts; nothing is issued or recorded.
        let result = GrantDecision.decide(facts, policies: policySet, settings: configuration.grant, explain: true)
        let refusal: TokenError? = if case .refuse(let refusal) = result.outcome { refusal.tokenError(baseURL: endpoints.baseURL) } else { nil }
        var record = GrantDecision.signInRecord(facts, decision: result.decision, errorCode: refusal?.aadsts, id: "what-if",
                                                correlationId: context.correlationId, grantLabel: "what-if")
        record.resource = nil
        return JSONResponse.make(status: .ok, WhatIfResponse(signIn: record, error: refusal?.code.description, suberror: refusal?.suberror))
    }

    struct WhatIfResponse: Encodable {
        let signIn: SignInRecord
        let error: String?
        let suberror: String?
    }

    func signIns(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let tenant = try await tenant(context)
        await recorder.flush()
        let query = request.uri.queryParameters
        var filter = SignInQuery(tenantId: tenant.tenant.id)
        var problems: [ValidationProblem] = []
        if let user = query.get("user") {
            filter.userId = tenant.directory.user(identity: user)?.id ?? user.lowercased()
        }
        filter.clientAppId = query.get("app")
        if let resource = query.get("resource") {
            filter.resourceAppId = (tenant.directory.resource(identifier: resource) ?? tenant.directory.application(appId: resource))?.appId ?? resource
        }
        if let status = query.get("status") {
            filter.status = Decision.Status(rawValue: status)
            if filter.status == nil { problems.append(ValidationProblem(pointer: "?status", message: "must be success, failure or notApplied.")) }
        }
        filter.policyId = query.get("policy")
        filter.correlationId = query.get("correlationId")
        for (name, keyPath) in [("from", \SignInQuery.from), ("to", \SignInQuery.to)] {
            if let text = query.get(name) {
                if let date = ISO8601DateFormatter().date(from: text) { filter[keyPath: keyPath] = date } else {
                    problems.append(ValidationProblem(pointer: "?\(name)", message: "must be an ISO 8601 date-time such as 2026-11-21T23:04:00Z."))
                }
            }
        }
        if let top = query.get("top") {
            if let value = Int(top), (1...500).contains(value) { filter.limit = value } else {
                problems.append(ValidationProblem(pointer: "?top", message: "must be 1…500."))
            }
        }
        if let before = query.get("before") {
            if let value = Int64(before) { filter.before = value } else { problems.append(ValidationProblem(pointer: "?before", message: "must be a cursor this API returned.")) }
        }
        if !problems.isEmpty { throw APIError.validation(ValidationError(problems: problems)) }
        let page = try await store.signIns(filter)
        var nextLink: String?
        if page.count == filter.limit, let last = page.last {
            var components = URLComponents()
            components.path = request.uri.path
            components.queryItems = query.filter { $0.key != "before" }.map { URLQueryItem(name: String($0.key), value: String($0.value)) }
                + [URLQueryItem(name: "before", value: String(last.cursor))]
            nextLink = components.string
        }
        let data = try JSONResponse.encoder.encode(Page(value: page.map(\.record), nextLink: nextLink))
        return JSONResponse.make(status: .ok, data: data)
    }

    struct Page<T: Encodable>: Encodable {
        let value: [T]
        let nextLink: String?
    }

    func audit(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let tenant = try await tenant(context)
        let limit = try Paging.top(request, default: 50, range: 1...500)
        let records = try await store.auditRecords(tenantId: tenant.tenant.id, limit: limit, before: try Paging.before(request))
        var nextLink: String?
        if records.count == limit, let last = records.last?.id { nextLink = "\(request.uri.path)?top=\(limit)&before=\(last)" }
        return JSONResponse.make(status: .ok, data: try JSONResponse.encoder.encode(Page(value: records, nextLink: nextLink)))
    }
}
