import Foundation
import HTTPTypes
import Hummingbird
import Logging
import PortcullisCore
import PortcullisStorage
import PortcullisTokens

/// The console's pages (navigation: Policies, What if, Sign-ins, Enrollments, Callbacks, Audit, Directory — devices
/// and their compliance policies among it —, App configuration). Each checks the signed-in admin's token as the API does, then calls the admin API's typed
/// functions (`AdminRoutes`, `ComplianceAdminRoutes`, `AdminDocuments`) for the token's tenant.
struct ConsolePages: Sendable {
    let console: ConsoleRoutes
    typealias Session = ConsoleRoutes.Session

    /// A page's caller: the session, its tenant (the token's) and who acts, for the audit log.
    struct Admin: Sendable {
        let session: Session
        let tenant: TenantSnapshot
        let actor: String
    }

    /// A kind of document the generic JSON editor handles.
    struct Kind: Sendable {
        let slug: String
        let noun: String
        let label: String
        let nameKey: String
        let back: String
        let templates: [String: String]
        let documents: any EditableDocuments

        /// Where the admin API serves the kind (under `/admin/v1/`, `DocumentKind.registry`): a role holder's rights are the API's.
        var apiPath: String? { documents.kind.adminPath }
    }

    let kinds: [String: Kind]

    init(console: ConsoleRoutes) {
        self.console = console
        let documents = console.admin.documents
        kinds = Dictionary(
            uniqueKeysWithValues: [
                Kind(
                    slug: "conditional-access", noun: "policy", label: "Conditional-access policy",
                    nameKey: "displayName", back: "/admin/policies",
                    templates: ConsoleDocumentTemplates.conditionalAccess, documents: documents.conditionalAccessPolicies),
                Kind(
                    slug: "app-protection", noun: "policy", label: "App protection policy", nameKey: "displayName",
                    back: "/admin/policies",
                    templates: ["basic": ConsoleDocumentTemplates.appProtection], documents: documents.appProtectionPolicies),
                Kind(
                    slug: "app-configuration", noun: "policy", label: "App configuration policy", nameKey: "displayName",
                    back: "/admin/app-configuration",
                    templates: ["basic": ConsoleDocumentTemplates.appConfiguration], documents: documents.appConfigurationPolicies),
                Kind(
                    slug: "users", noun: "user", label: "User", nameKey: "userPrincipalName", back: "/admin/directory",
                    templates: ["basic": ConsoleDocumentTemplates.user], documents: documents.users),
                Kind(
                    slug: "groups", noun: "group", label: "Group", nameKey: "displayName", back: "/admin/directory",
                    templates: ["basic": ConsoleDocumentTemplates.group], documents: documents.groups),
                Kind(
                    slug: "applications", noun: "application", label: "Application", nameKey: "displayName", back: "/admin/directory",
                    templates: ["basic": ConsoleDocumentTemplates.application], documents: documents.applications),
                Kind(
                    slug: "named-locations", noun: "named location", label: "Named location", nameKey: "displayName",
                    back: "/admin/directory",
                    templates: ["basic": ConsoleDocumentTemplates.namedLocation, "country": ConsoleDocumentTemplates.countryLocation],
                    documents: documents.namedLocations),
                Kind(
                    slug: "authentication-strengths", noun: "authentication strength", label: "Authentication strength",
                    nameKey: "displayName",
                    back: "/admin/directory", templates: ["basic": ConsoleDocumentTemplates.authenticationStrength],
                    documents: documents.authenticationStrengths),
                Kind(
                    slug: "agreements", noun: "agreement", label: "Terms of use", nameKey: "displayName", back: "/admin/directory",
                    templates: ["basic": ConsoleDocumentTemplates.agreement], documents: documents.agreements),
                Kind(
                    slug: "invitations", noun: "invitation", label: "Invitation (B2B)", nameKey: "invitedUserEmailAddress", back: "/admin/directory",
                    templates: ["basic": ConsoleDocumentTemplates.invitation], documents: documents.invitations),
                Kind(
                    slug: "cross-tenant-access", noun: "cross-tenant access setting", label: "Cross-tenant access setting", nameKey: "tenantId",
                    back: "/admin/directory", templates: ["basic": ConsoleDocumentTemplates.crossTenantAccessPartner],
                    documents: documents.crossTenantAccessPartners),
                Kind(
                    slug: "devices", noun: "device", label: "Device", nameKey: "displayName", back: "/admin/directory",
                    templates: ["basic": ConsoleDocumentTemplates.joinedDevice], documents: documents.devices),
                Kind(
                    slug: "device-compliance", noun: "device compliance policy", label: "Device compliance policy", nameKey: "displayName",
                    back: "/admin/directory",
                    templates: [
                        "basic": ConsoleDocumentTemplates.windowsCompliance, "ios": ConsoleDocumentTemplates.iosCompliance,
                    ],
                    documents: documents.deviceCompliancePolicies),
                Kind(
                    slug: "authentication-contexts", noun: "authentication context",
                    label: "Authentication context", nameKey: "displayName",
                    back: "/admin/directory", templates: ["basic": ConsoleDocumentTemplates.authenticationContext],
                    documents: documents.authenticationContexts),
            ].map { ($0.slug, $0) })
    }

    var documents: AdminDocuments { console.admin.documents }
    var compliance: ComplianceAdminRoutes { console.admin.compliance }

    static let notices: [String: String] = [
        "saved": "Saved.", "created": "Created.", "deleted": "Deleted.", "state": "State changed.",
        "wiped": "Wipe requested: the app removes the account's data at its next check-in, and the account's tokens for this app stop now.",
        "redelivered": "Queued for delivery again.", "removed": "Removed.", "cleared": "Cleared: the passkey signs in again.",
        "revoked": "Sign-in sessions revoked: the user's refresh tokens and browser sessions ended, and the receivers of Shared Signals were told.",
        "compromised": "Reported compromised: the user's sessions ended, and the receivers of Shared Signals were told.",
        "dismissed": "Risk dismissed.", "confirmed": "Confirmed compromised: the workload identity's risk is high.",
    ]

    var basePath: String { console.basePath }

    func register(on router: Router<PortcullisRequestContext>) {
        router.get("admin/policies") { request, context in try await signedIn(request, context) { try await policies(request, context, $0) } }
        router.post("admin/policies/state") { request, context in try await signedIn(request, context) { try await setState(request, context, $0) } }
        router.post("admin/policies/import") { request, context in try await signedIn(request, context) { try await importPolicies(request, context, $0) } }
        router.get("admin/edit/:kind/:id") { request, context in try await signedIn(request, context) { try await editor(request, context, $0) } }
        router.post("admin/edit/:kind/:id") { request, context in try await signedIn(request, context) { try await save(request, context, $0) } }
        router.get("admin/new/:kind") { request, context in try await signedIn(request, context) { try await newDocument(request, context, $0) } }
        router.post("admin/new/:kind") { request, context in try await signedIn(request, context) { try await create(request, context, $0) } }
        router.get("admin/delete/:kind/:id") { request, context in try await signedIn(request, context) { try await confirmDelete(request, context, $0) } }
        router.post("admin/delete/:kind/:id") { request, context in try await signedIn(request, context) { try await delete(request, context, $0) } }
        router.get("admin/what-if") { request, context in try await signedIn(request, context) { try await whatIf(request, context, $0, form: nil) } }
        router.post("admin/what-if") { request, context in try await signedIn(request, context) { try await evaluate(request, context, $0) } }
        router.post("admin/what-if/impact") { request, context in try await signedIn(request, context) { try await impact(request, context, $0) } }
        router.get("admin/sign-ins") { request, context in try await signedIn(request, context) { try await signIns(request, context, $0) } }
        router.get("admin/enrollments") { request, context in try await signedIn(request, context) { try await enrollments(request, context, $0) } }
        router.get("admin/enrollments/:id") { request, context in try await signedIn(request, context) { try await enrollment(request, context, $0) } }
        router.get("admin/enrollments/:id/wipe") { request, context in try await signedIn(request, context) { try await confirmWipe(request, context, $0) } }
        router.post("admin/enrollments/:id/wipe") { request, context in try await signedIn(request, context) { try await wipe(request, context, $0) } }
        router.get("admin/callbacks") { request, context in try await signedIn(request, context) { try await callbacks(request, context, $0) } }
        router.post("admin/callbacks/:id/redeliver") { request, context in try await signedIn(request, context) { try await redeliver(request, context, $0) } }
        router.get("admin/audit") { request, context in try await signedIn(request, context) { try await audit(request, context, $0) } }
        router.get("admin/directory") { request, context in try await signedIn(request, context) { try await directory(request, context, $0) } }
        registerMethods(on: router)
        registerSignals(on: router)
        registerRisk(on: router)
        router.get("admin/app-configuration") { request, context in try await signedIn(request, context) { try await appConfiguration(request, context, $0) } }
    }

    // MARK: Plumbing

    /// Runs a page for a signed-in administrator. The session's token is checked as the API checks a bearer token: a
    /// token that no longer passes (revoked, expired, its user disabled) sends the admin back through sign-in, one whose
    /// role was taken away gets the no-access page. A refusal no step handled becomes a failure page with its status;
    /// anything else (the store unavailable) a 503 page — nothing was changed.
    func signedIn(_ request: Request, _ context: PortcullisRequestContext, _ body: (Admin) async throws -> Response) async throws -> Response {
        let session: Session
        switch console.requireSession(request) {
        case .failure(.response(let answer)): return answer
        case .success(let found): session = found
        }
        // Without the role, no page at all (not even a template): the no-access page.
        guard session.administrator else { return console.noAccess(session, context) }
        do {
            // A holder of directory roles (PROTOCOL §17) may do in the console what the same request of the admin API may.
            let verified = try await console.authenticator.verify(session.token, directoryRoles: true)
            if let roles = verified.directoryRoles {
                // Outside the roles: said on a page of its own (the console's other pages stay open to them).
                do {
                    guard let (method, path) = apiEquivalent(method: request.method.rawValue, path: request.uri.path) else {
                        throw APIError(.forbidden, "forbidden", "Only a full administrator opens this page.")
                    }
                    try BearerAuthenticator.authorize(roles: roles, method: method, path: path, directory: verified.directory)
                } catch let refusal as APIError {
                    let names = roles.compactMap { DirectoryRoleDefinition.builtIn(id: RoleID($0))?.displayName }.sorted().joined(separator: ", ")
                    return console.page(
                        "failure", title: "Not allowed", session: session, context,
                        values: [
                            "message": "\(refusal.message) Your roles: \(names.isEmpty ? "none" : names). Nothing was changed.",
                            "href": basePath + "/admin/policies", "link": "Back to the policies",
                        ], status: .forbidden)
                }
            }
            let claims = verified.claims
            guard let tenant = try await console.tenants.snapshot(tenantSegment: claims.tid) else { throw APIError.unauthenticated }
            return try await body(Admin(session: session, tenant: tenant, actor: claims.actor))
        } catch ConsoleAnswer.response(let answer) {
            return answer
        } catch let error as APIError where error.status == .unauthorized {
            return ConsoleRoutes.redirect(basePath + "/admin/signin?tenant=\(session.tenantId)")
        } catch let error as APIError where error.status == .forbidden {
            return console.noAccess(session, context)
        } catch let error as APIError where error.status.code < 500 {
            return console.page(
                "failure", title: "Not done", session: session, context,
                values: ["message": error.message, "href": basePath + "/admin", "link": "Back to the console"], status: error.status)
        } catch let error as ValidationError {
            return console.page(
                "failure", title: "Not done", session: session, context,
                values: [
                    "message": error.problems.map { "\($0.pointer) \($0.message)" }.joined(separator: "; "), "href": basePath + "/admin",
                    "link": "Back to the console",
                ], status: .badRequest)
        } catch {
            context.logger.error("a console page failed", metadata: [LogKeys.error: .string(String(describing: type(of: error)))])
            return console.page(
                "failure", title: "Service unavailable", session: session, context,
                values: ["message": "The service could not answer now; nothing was changed. Try again in a moment."], status: .serviceUnavailable)
        }
    }

    /// The admin API request (method, path under `/admin/v1/`) a console request amounts to, for a role holder's rights
    /// (`AdminAuthorization`); `nil` for a page no area covers (only full administrators open it).
    func apiEquivalent(method: String, path: String) -> (String, String)? {
        let prefix = basePath + "/admin/"
        guard path.hasPrefix(prefix) else { return nil }
        let segments = path.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let posting = method == "POST"
        func kindPath(_ slug: String) -> String? { kinds[slug]?.apiPath }
        switch segments.first ?? "" {
        case "policies":
            guard segments.count == 2 else { return ("GET", "conditional-access/policies") }
            return segments[1] == "state" ? ("PUT", "conditional-access/policies/-") : ("POST", "conditional-access/policies")
        case "edit" where segments.count == 3:
            return kindPath(segments[1]).map { (posting ? "PUT" : "GET", "\($0)/\(segments[2])") }
        case "new" where segments.count == 2:
            return kindPath(segments[1]).map { (posting ? "POST" : "GET", $0) }
        case "delete" where segments.count == 3:
            return kindPath(segments[1]).map { (posting ? "DELETE" : "GET", "\($0)/\(segments[2])") }
        case "what-if": return ("POST", segments.count == 2 && segments[1] == "impact" ? "conditional-access/impact" : "conditional-access/evaluate")
        case "sign-ins": return ("GET", "sign-ins")
        case "audit": return ("GET", "audit")
        case "directory": return ("GET", "users")
        case "app-configuration": return ("GET", "app-configuration/policies")
        case "enrollments":
            return segments.count == 3 && segments[2] == "wipe" && posting ? ("POST", "enrollments/\(segments[1])/wipe") : ("GET", "enrollments")
        case "callbacks": return segments.count == 3 && posting ? ("POST", "outbox/\(segments[1])/redeliver") : ("GET", "outbox")
        case "users" where segments.count >= 3:
            let user = segments[1]
            switch (segments[2], segments.count > 3 ? segments[3] : "") {
            case ("methods", ""): return ("GET", "users/\(user)/authentication-methods")
            case ("methods", "remove"): return ("DELETE", "users/\(user)/authentication-methods/-")
            case ("methods", "clear"): return ("POST", "users/\(user)/authentication-methods/-/clearSuspicion")
            case ("methods", "pass"): return ("POST", "users/\(user)/authentication-methods/temporaryAccessPass")
            case ("revoke", ""): return ("POST", "users/\(user)/revokeSignInSessions")
            default: return nil
            }
        case "risk":
            // Deciding a user's or a workload identity's risk is the risk area's (Security Administrator).
            guard segments.count == 3, posting else { return ("GET", "identityProtection/riskyUsers") }
            return ("POST", segments[1] == "users" ? "identityProtection/riskyUsers/dismiss" : "identityProtection/riskyServicePrincipals/dismiss")
        case "signals":
            guard segments.count > 1 else { return ("GET", "ssf-streams") }
            if segments.count == 3 && posting {
                return segments[2] == "delete" ? ("DELETE", "ssf-streams/\(segments[1])") : ("POST", "ssf-streams/\(segments[1])/status")
            }
            return ("GET", "ssf-streams/\(segments[1])")
        default: return nil
        }
    }

    /// A step that may be refused in a way its page shows (a validation problem, a stale ETag, a conflict): the refusal
    /// as a value. Refusals of the session itself (401, 403) and failures of the service are left to `signedIn`.
    func attempt<T>(_ work: () async throws -> T) async throws -> Result<T, APIError> {
        do {
            return .success(try await work())
        } catch let error as APIError where error.status != .unauthorized && error.status != .forbidden && error.status.code < 500 {
            return .failure(error)
        } catch let error as ValidationError {
            return .failure(.validation(error))
        }
    }

    func form(_ request: Request, _ context: PortcullisRequestContext, _ admin: Admin) async throws -> [String: String] {
        guard let fields = try await console.form(request, context, session: admin.session) else { throw ConsoleAnswer.response(console.csrfRefused(context)) }
        return fields
    }

    func kind(_ context: PortcullisRequestContext) throws -> Kind {
        guard let kind = kinds[context.parameters.get("kind") ?? ""] else { throw ConsoleAnswer.response(notFound(context)) }
        return kind
    }

    func notFound(_ context: PortcullisRequestContext, session: Session? = nil) -> Response {
        console.page(
            "failure", title: "Not found", session: session, context,
            values: ["message": "There is nothing here.", "href": basePath + "/admin", "link": "Back to the console"],
            status: .notFound)
    }

    func notice(_ request: Request) -> String? { request.uri.queryParameters.get("done").flatMap { Self.notices[String($0)] } }

    static func date(_ value: Date?) -> String {
        guard let value else { return "" }
        return value.formatted(.iso8601).replacingOccurrences(of: "T", with: " ").replacingOccurrences(of: "Z", with: "")
    }

    static func path(_ segment: String) -> String {
        segment.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))) ?? segment
    }

    static func options(_ pairs: [(String, String)], selected: String?) -> [[String: Any]] {
        pairs.map { ["value": $0.0, "label": $0.1, "selected": $0.0 == selected] }
    }

    static func problemRows(_ problems: [ValidationProblem]) -> [[String: Any]] {
        problems.map { ["pointer": $0.pointer, "message": $0.message] }
    }

    /// A query parameter, `nil` when absent or empty.
    static func parameter(_ request: Request, _ name: String) -> String? {
        request.uri.queryParameters.get(name).map { String($0) }.flatMap { $0.isEmpty ? nil : $0 }
    }

    // MARK: Policies

    static let states = [("enabled", "On"), ("enabledForReportingButNotEnforced", "Report-only"), ("disabled", "Off")]

    func policies(_ request: Request, _ context: PortcullisRequestContext, _ admin: Admin) async throws -> Response {
        let ca = try await documents.conditionalAccessPolicies.list(admin.tenant, top: DocumentResource<ConditionalAccessPolicy>.pageSize, skip: 0)
        let ap = try await documents.appProtectionPolicies.list(admin.tenant, top: DocumentResource<AppProtectionPolicy>.pageSize, skip: 0)
        let csrf = console.csrfToken(admin.session)
        let caRows: [[String: Any]] = ca.map(\.document).map { policy in
            let state = policy.state.rawValue
            let grant = policy.grantControls
            let controls = grant.builtInControls.map(\.rawValue).joined(separator: grant.operator == .and ? " and " : " or ")
            return [
                "id": policy.id, "displayName": policy.displayName, "href": "\(basePath)/admin/edit/conditional-access/\(Self.path(policy.id.rawValue))",
                "state": state, "stateLabel": Self.states.first { $0.0 == state }?.1 ?? state, "controls": controls.isEmpty ? "—" : controls,
                "states": Self.options(Self.states, selected: state), "csrf": csrf,
            ]
        }
        let apRows: [[String: Any]] = ap.map(\.document).map { policy in
            [
                "displayName": policy.displayName, "href": "\(basePath)/admin/edit/app-protection/\(Self.path(policy.id.rawValue))",
                "apps": "\(policy.targets.applications.count)", "groups": policy.targets.includeGroups.strings.joined(separator: ", "),
            ]
        }
        let templates = ConsoleDocumentTemplates.conditionalAccessLabels.map { ["value": $0.0, "label": $0.1] }
        // Microsoft's templates (PROTOCOL §17): the editor opens on the policy as the portal makes it, to review and create.
        let microsoft = TemplateRoutes.catalogue.sorted { $0.name < $1.name }.map { ["value": $0.id, "label": $0.name] }
        return console.page(
            "policies", title: "Policies", session: admin.session, context,
            values: ["ca": caRows, "ap": apRows, "caTemplates": templates, "msTemplates": microsoft, "csrf": csrf],
            current: "/admin/policies", notice: notice(request))
    }

    /// The import (PROTOCOL §17): policies as Graph exports them, one or a list, with an optional map of another
    /// directory's IDs; each written through the policies' one write path (a stored ID is replaced, any other created),
    /// and each one's outcome or problems shown.
    func importPolicies(_ request: Request, _ context: PortcullisRequestContext, _ admin: Admin) async throws -> Response {
        let fields = try await form(request, context, admin)
        func failure(_ message: String) -> Response {
            console.page(
                "failure", title: "Not imported", session: admin.session, context,
                values: ["message": message, "href": basePath + "/admin/policies", "link": "Back to the policies"], current: "/admin/policies",
                status: .badRequest)
        }
        guard let value = JSONValue.parse(Data((fields["policies"] ?? "").utf8)), value.objectValue != nil else {
            return failure("The policies are not a JSON object (one policy, or Graph's list {\"value\": [...]}).")
        }
        var map: [String: String] = [:]
        if let text = fields["map"], !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            guard let parsed = JSONValue.parse(Data(text.utf8)) else { return failure("The ID map is not JSON.") }
            do { map = try PolicyImport.parseMap(parsed) } catch {
                return failure("The ID map: " + error.problems.map(\.description).joined(separator: "; "))
            }
        }
        let options = WriteOptions(unenforceable: fields["reportOnly"] == "1" ? .reportOnly : .refuse)
        let policies = documents.conditionalAccessPolicies
        var rows: [[String: Any]] = []
        var tenant = admin.tenant
        for (element, pointer) in PolicyImport.policies(in: value).prefix(200) {
            let mapped = PolicyImport.mapping(element, with: map)
            let name = mapped["displayName"]?.stringValue ?? (pointer.isEmpty ? "(the policy)" : pointer)
            let id = mapped["id"]?.stringValue?.lowercased()
            var stored: Versioned<ConditionalAccessPolicy>?
            if let id { stored = try await policies.read(tenant, id: id) }
            let outcome = try await attempt {
                try await policies.write(
                    mapped, pathId: stored == nil ? nil : id, precondition: stored.map { .version($0.version) }, options: options, dryRun: false,
                    tenant: tenant, actor: admin.actor)
            }
            switch outcome {
            case .success(let written):
                let (label, document): (String, ConditionalAccessPolicy?) =
                    switch written {
                    case .created(let d): ("created", d.document)
                    case .replaced(let d): ("changed", d.document)
                    case .unchanged(let d): ("unchanged", d.document)
                    case .dryRun: ("unchanged", nil)
                    }
                var row: [String: Any] = ["name": name, "outcome": label]
                if let document {
                    row["href"] = "\(basePath)/admin/edit/conditional-access/\(Self.path(document.id.rawValue))"
                    if label != "unchanged", document.state == .reportOnly, mapped["state"]?.stringValue == ConditionalAccessPolicy.State.enabled.rawValue {
                        row["outcome"] = "\(label) report-only"
                    }
                }
                rows.append(row)
                tenant = try await console.tenants.snapshot(tenantSegment: tenant.tenant.id.rawValue) ?? tenant
            case .failure(let refusal):
                let problems =
                    refusal.details.isEmpty
                    ? [["pointer": "", "message": refusal.message]]
                    : refusal.details.map {
                        ["pointer": pointer + $0.pointer, "message": $0.message]
                    }
                rows.append(["name": name, "outcome": "refused", "problems": problems])
            }
        }
        let refused = rows.filter { $0["outcome"] as? String == "refused" }.count
        return console.page(
            "policyImport", title: "Import", session: admin.session, context,
            values: ["rows": rows, "summary": "\(rows.count - refused) imported, \(refused) refused."], current: "/admin/policies",
            status: refused == rows.count && !rows.isEmpty ? .badRequest : .ok)
    }

    func setState(_ request: Request, _ context: PortcullisRequestContext, _ admin: Admin) async throws -> Response {
        let fields = try await form(request, context, admin)
        let kind = kinds["conditional-access"]!
        guard let id = fields["id"], let state = fields["state"], Self.states.contains(where: { $0.0 == state }),
            let current = try await kind.documents.presented(admin.tenant, id: id), case .object(var policy) = current.document
        else { return notFound(context, session: admin.session) }
        policy["state"] = .string(state)
        let saved = try await attempt {
            try await kind.documents.store(.object(policy), pathId: id, precondition: .version(current.version), tenant: admin.tenant, actor: admin.actor)
        }
        if case .failure(let refusal) = saved {
            // Refused (a lock-out the API guards against, a concurrent change): shown in the editor, where it can be fixed.
            return editorPage(
                kind, id: id, document: ConsoleJSON.pretty(.object(policy)), etag: DocumentETag.etag(current.version), refusal: refusal, admin, context)
        }
        return ConsoleRoutes.redirect(basePath + "/admin/policies?done=state")
    }

    // MARK: The JSON editor

    func editor(_ request: Request, _ context: PortcullisRequestContext, _ admin: Admin) async throws -> Response {
        let kind = try kind(context)
        let id = context.parameters.get("id") ?? ""
        guard let found = try await kind.documents.presented(admin.tenant, id: id) else { return notFound(context, session: admin.session) }
        return editorPage(
            kind, id: id, document: ConsoleJSON.pretty(found.document), etag: DocumentETag.etag(found.version), problems: [], conflict: false,
            notice: notice(request), admin, context)
    }

    func editorPage(
        _ kind: Kind, id: String?, document: String, etag: String, problems: [[String: Any]], conflict: Bool, notice: String? = nil, error: String? = nil,
        _ admin: Admin, _ context: PortcullisRequestContext, status: HTTPResponse.Status = .ok
    ) -> Response {
        var values: [String: Any] = [
            "kindLabel": kind.label, "noun": kind.noun, "document": document, "etag": etag, "problems": problems, "hasProblems": !problems.isEmpty,
            "problemCount": problems.count, "plural": problems.count != 1, "conflict": conflict, "backHref": basePath + kind.back,
            "saveLabel": id == nil ? "Create" : "Save",
        ]
        if let id {
            values["id"] = id
            values["action"] = "\(basePath)/admin/edit/\(kind.slug)/\(Self.path(id))"
            values["deleteHref"] = "\(basePath)/admin/delete/\(kind.slug)/\(Self.path(id))"
            values["reloadHref"] = "\(basePath)/admin/edit/\(kind.slug)/\(Self.path(id))"
            values["version"] = etag.trimmingCharacters(in: CharacterSet(charactersIn: "\"W/"))
        } else {
            values["action"] = "\(basePath)/admin/new/\(kind.slug)"
        }
        let title = id == nil ? "New \(kind.label.lowercased())" : (Self.name(in: document, key: kind.nameKey) ?? kind.label)
        return console.page(
            "editor", title: title, session: admin.session, context, values: values, current: kind.back, notice: notice, error: error, status: status)
    }

    /// The editor again after a write was refused: its problems at their pointers (with what stands there), an ETag
    /// conflict explained, or the refusal's message.
    func editorPage(
        _ kind: Kind, id: String?, document: String, etag: String, refusal: APIError, _ admin: Admin, _ context: PortcullisRequestContext
    ) -> Response {
        switch refusal.status {
        case .preconditionFailed:
            return editorPage(kind, id: id, document: document, etag: etag, problems: [], conflict: true, admin, context, status: .conflict)
        case .badRequest where !refusal.details.isEmpty:
            let parsed = JSONValue.parse(Data(document.utf8))
            let problems: [[String: Any]] = refusal.details.map { problem in
                var row: [String: Any] = ["pointer": problem.pointer.isEmpty ? "/" : problem.pointer, "message": problem.message]
                if let parsed, !problem.pointer.isEmpty, let value = ConsoleJSON.value(at: problem.pointer, in: parsed) {
                    row["excerpt"] = String(ConsoleJSON.pretty(value).prefix(400))
                }
                return row
            }
            return editorPage(kind, id: id, document: document, etag: etag, problems: problems, conflict: false, admin, context, status: .badRequest)
        default:
            return editorPage(
                kind, id: id, document: document, etag: etag, problems: [], conflict: false, error: refusal.message, admin, context,
                status: refusal.status.code >= 400 ? refusal.status : .badRequest)
        }
    }

    static func name(in document: String, key: String) -> String? {
        JSONValue.parse(Data(document.utf8))?[key]?.stringValue
    }

    static let notAnObject = [["pointer": "/", "message": "is not a JSON object (check quotes, commas and braces)."]]

    func save(_ request: Request, _ context: PortcullisRequestContext, _ admin: Admin) async throws -> Response {
        let kind = try kind(context)
        let id = context.parameters.get("id") ?? ""
        let fields = try await form(request, context, admin)
        let document = fields["document"] ?? ""
        let etag = fields["etag"] ?? ""
        guard let value = JSONValue.parse(Data(document.utf8)), value.objectValue != nil else {
            return editorPage(kind, id: id, document: document, etag: etag, problems: Self.notAnObject, conflict: false, admin, context, status: .badRequest)
        }
        let saved = try await attempt {
            try await kind.documents.store(
                value, pathId: id, precondition: try DocumentETag.precondition(ifMatch: etag.isEmpty ? "*" : etag),
                tenant: admin.tenant, actor: admin.actor)
        }
        if case .failure(let refusal) = saved {
            return editorPage(kind, id: id, document: document, etag: etag, refusal: refusal, admin, context)
        }
        return ConsoleRoutes.redirect("\(basePath)/admin/edit/\(kind.slug)/\(Self.path(id))?done=saved")
    }

    func newDocument(_ request: Request, _ context: PortcullisRequestContext, _ admin: Admin) async throws -> Response {
        let kind = try kind(context)
        let template = request.uri.queryParameters.get("template").map { String($0) } ?? "basic"
        if kind.slug == "conditional-access", let microsoft = TemplateRoutes.template(template) {
            // As the portal makes it: report-only, the signed-in administrator excluded.
            let administrator = admin.tenant.directory.user(principalName: admin.session.upn)?.id
            return editorPage(
                kind, id: nil, document: ConsoleJSON.pretty(microsoft.policy(administrator: administrator?.rawValue)), etag: "", problems: [], conflict: false,
                admin,
                context)
        }
        guard let text = kind.templates[template] ?? kind.templates.values.first else { return notFound(context, session: admin.session) }
        return editorPage(kind, id: nil, document: text, etag: "", problems: [], conflict: false, admin, context)
    }

    func create(_ request: Request, _ context: PortcullisRequestContext, _ admin: Admin) async throws -> Response {
        let kind = try kind(context)
        let fields = try await form(request, context, admin)
        let document = fields["document"] ?? ""
        guard let value = JSONValue.parse(Data(document.utf8)), value.objectValue != nil else {
            return editorPage(kind, id: nil, document: document, etag: "", problems: Self.notAnObject, conflict: false, admin, context, status: .badRequest)
        }
        switch try await attempt({ try await kind.documents.store(value, pathId: nil, precondition: nil, tenant: admin.tenant, actor: admin.actor) }) {
        case .failure(let refusal):
            return editorPage(kind, id: nil, document: document, etag: "", refusal: refusal, admin, context)
        case .success(let created):
            return ConsoleRoutes.redirect("\(basePath)/admin/edit/\(kind.slug)/\(Self.path(created.id))?done=created")
        }
    }

    func confirmDelete(_ request: Request, _ context: PortcullisRequestContext, _ admin: Admin) async throws -> Response {
        let kind = try kind(context)
        let id = context.parameters.get("id") ?? ""
        guard let found = try await kind.documents.presented(admin.tenant, id: id) else { return notFound(context, session: admin.session) }
        let name = found.document[kind.nameKey]?.stringValue ?? id
        return console.page(
            "confirm", title: "Delete \(kind.noun)?", session: admin.session, context,
            values: [
                "question": "Delete the \(kind.label.lowercased()) “\(name)”?", "detail": "This cannot be undone. It is recorded in the audit log.",
                "action": "\(basePath)/admin/delete/\(kind.slug)/\(Self.path(id))", "etag": DocumentETag.etag(found.version), "confirmLabel": "Delete",
                "backHref": "\(basePath)/admin/edit/\(kind.slug)/\(Self.path(id))",
            ], current: kind.back)
    }

    func delete(_ request: Request, _ context: PortcullisRequestContext, _ admin: Admin) async throws -> Response {
        let kind = try kind(context)
        let id = context.parameters.get("id") ?? ""
        let fields = try await form(request, context, admin)
        let etag = fields["etag"].flatMap { $0.isEmpty ? nil : $0 } ?? "*"
        let deleted = try await attempt {
            try await kind.documents.delete(
                id: id, precondition: try DocumentETag.precondition(ifMatch: etag), force: false, tenant: admin.tenant, actor: admin.actor)
        }
        if case .failure(let refusal) = deleted {
            let stale = refusal.status == .preconditionFailed
            let message = stale ? "Someone else changed it since you opened it; nothing was deleted. Open it again to see their version." : refusal.message
            return console.page(
                "failure", title: "Not deleted", session: admin.session, context,
                values: [
                    "message": message, "href": "\(basePath)/admin/edit/\(kind.slug)/\(Self.path(id))", "link": "Back to the \(kind.noun)",
                ], current: kind.back, status: stale ? .conflict : refusal.status)
        }
        return ConsoleRoutes.redirect("\(basePath)\(kind.back)?done=deleted")
    }

    // MARK: What if and impact

    func whatIf(
        _ request: Request, _ context: PortcullisRequestContext, _ admin: Admin, form: [String: String]?, result: [String: Any]? = nil,
        problems: [[String: Any]] = [], impact: [String: Any]? = nil, impactProblems: [[String: Any]] = [], draft: String? = nil
    ) async throws -> Response {
        let users = try await documents.users.list(admin.tenant, top: DocumentResource<User>.pageSize, skip: 0).map(\.document)
        let applications = try await documents.applications.list(admin.tenant, top: DocumentResource<PortcullisCore.Application>.pageSize, skip: 0).map(
            \.document)
        let resources = applications.filter { !$0.identifierUris.isEmpty }
        var values: [String: Any] = [
            "users": Self.options(users.map { ($0.userPrincipalName, $0.userPrincipalName) }, selected: form?["user"]),
            "apps": Self.options(applications.map { ($0.appId.rawValue, "\($0.displayName) (\($0.appId))") }, selected: form?["app"]),
            "resources": Self.options(
                resources.map { ($0.identifierUris.first ?? "", $0.displayName) }
                    + [(BuiltInResources.adminIdentifier, "Portcullis admin API"), (BuiltInResources.complianceIdentifier, "Portcullis compliance service")],
                selected: form?["resource"]),
            "platforms": Self.options(DevicePlatform.detectable.map { ($0.rawValue, $0.rawValue) }, selected: form?["platform"]),
            "protections": Self.options(
                [("none", "not enrolled"), ("compliant", "compliant enrollment"), ("notCompliant", "enrolled, not compliant")], selected: form?["protection"]),
            "ip": form?["ip"] ?? "", "contexts": form?["contexts"] ?? "", "protapp": form?["protapp"] == "1", "mfa": form?["mfa"] == "1",
            "deviceCode": form?["deviceCode"] == "1", "dpop": form?["dpop"] == "1",
            "problems": problems, "hasProblems": !problems.isEmpty, "impactProblems": impactProblems, "hasImpactProblems": !impactProblems.isEmpty,
            // A draft is never enforced here: it starts enabled, so that its impact shows.
            "draft": draft ?? ConsoleDocumentTemplates.conditionalAccess["mfa"]?.replacingOccurrences(of: "enabledForReportingButNotEnforced", with: "enabled")
                ?? "",
        ]
        if let result { values["result"] = result }
        if let impact { values["impact"] = impact }
        return console.page(
            "whatIf", title: "What if", session: admin.session, context, values: values, current: "/admin/what-if",
            status: problems.isEmpty && impactProblems.isEmpty ? .ok : .badRequest)
    }

    func evaluate(_ request: Request, _ context: PortcullisRequestContext, _ admin: Admin) async throws -> Response {
        let fields = try await form(request, context, admin)
        func field(_ name: String) -> String? { fields[name]?.trimmingCharacters(in: .whitespaces).nilIfEmpty }
        let protection: SignInFacts.AppProtection =
            switch fields["protection"] {
            case "compliant": .compliant(enrollmentId: "what-if")
            case "notCompliant": .notCompliant
            default: .none
            }
        var signIn = WhatIfSignIn(
            userId: field("user"), clientAppId: fields["app"] ?? "", resourceAppId: fields["resource"] ?? "", platform: field("platform"),
            ipAddress: field("ip"),
            capabilities: fields["protapp"] == "1" ? [ClientCapability.protApp] : [], appProtection: protection, mfa: fields["mfa"] == "1",
            transferMethod: fields["deviceCode"] == "1" ? .deviceCodeFlow : nil)
        // "c1 c2" or "c1, c2": what the `acrs` claims request would ask for (checked like the API's member).
        let contexts = (field("contexts") ?? "").split(whereSeparator: { $0 == " " || $0 == "," }).map { $0.lowercased() }
        if let bad = contexts.first(where: { !AuthenticationContextClassReference.isValidId($0) }) {
            return try await whatIf(
                request, context, admin, form: fields, problems: [["pointer": "contexts", "message": "'\(bad)' is not an authentication context (c1 to c99)."]])
        }
        signIn.authenticationContexts = AuthenticationContextClassReference.sorted(contexts)
        signIn.dpop = fields["dpop"] == "1"
        let answer: AdminRoutes.WhatIfResponse
        switch try await attempt({ try console.admin.whatIf(signIn, drafts: nil, tenant: admin.tenant, correlationId: context.correlationId) }) {
        case .failure(let refusal):
            let problems = refusal.details.isEmpty ? [["pointer": "/", "message": refusal.message]] : Self.problemRows(refusal.details)
            return try await whatIf(request, context, admin, form: fields, problems: problems)
        case .success(let found): answer = found
        }
        let record = answer.signIn
        let status = record.conditionalAccessStatus.rawValue
        let result: [String: Any] = [
            "status": status, "statusLabel": status == "failure" ? "Refused" : "Allowed", "error": answer.error ?? "",
            "suberror": answer.suberror ?? "", "errorCode": record.errorCode.map { "\($0)" } ?? "", "policies": Self.policyResults(record),
            "contexts": (record.authenticationContextClassReferences ?? []).map { "\($0.id) (\($0.detail.rawValue))" }.joined(separator: ", "),
        ]
        return try await whatIf(request, context, admin, form: fields, result: result)
    }

    /// The per-policy results of a sign-in record, with why each applied or not.
    static func policyResults(_ record: SignInRecord) -> [[String: Any]] {
        record.appliedConditionalAccessPolicies.map { policy in
            var why: [String] = []
            if !policy.enforcedGrantControls.isEmpty { why.append("requires \(policy.enforcedGrantControls.joined(separator: ", "))") }
            for result in policy.grantControlResults ?? [] {
                why.append("\(result.control): \(result.satisfied ? "met" : "not met") (\(result.reason))")
            }
            if let session = policy.enforcedSessionControls, !session.isEmpty {
                why.append("session controls: \(session.joined(separator: ", "))")
            }
            if !policy.conditionsNotSatisfied.isEmpty {
                why.append("conditions not met: \(policy.conditionsNotSatisfied.map(\.rawValue).joined(separator: ", "))")
            }
            return ["displayName": policy.displayName, "result": policy.result.rawValue, "why": why.joined(separator: "; ")]
        }
    }

    func impact(_ request: Request, _ context: PortcullisRequestContext, _ admin: Admin) async throws -> Response {
        let fields = try await form(request, context, admin)
        let draft = fields["draft"] ?? ""
        let items: [JSONValue]
        switch JSONValue.parse(Data(draft.utf8)) {
        case .array(let list)?: items = list
        case let object? where object.objectValue != nil: items = [object]
        default:
            return try await whatIf(
                request, context, admin, form: nil, impactProblems: [["pointer": "/", "message": "is not a JSON object or array."]], draft: draft)
        }
        let problems = ProblemCollector()
        let drafts = AdminRoutes.impactDrafts(items.enumerated().map { ($0.element, "/policies/\($0.offset)") }, tenant: admin.tenant, problems: problems)
        if !problems.problems.isEmpty {
            return try await whatIf(request, context, admin, form: nil, impactProblems: Self.problemRows(problems.problems), draft: draft)
        }
        let report = try await console.admin.impact(
            drafts, from: console.clock.now().addingTimeInterval(-AdminRoutes.impactDefaultWindow), to: nil, top: 1000,
            tenant: admin.tenant)
        func outcome(_ outcome: ImpactAnalysis.Outcome) -> String { "\(outcome.status.rawValue)\(outcome.refusal.map { " (\($0))" } ?? "")" }
        let changes: [[String: Any]] = report.changes.prefix(100).map { change in
            [
                "at": Self.date(change.createdDateTime), "user": change.userPrincipalName ?? change.userId ?? "(app)", "app": change.clientAppId,
                "before": outcome(change.before), "after": outcome(change.after),
            ]
        }
        let impact: [String: Any] = [
            "evaluated": report.evaluated, "newlyRefused": report.summary.newlyRefused, "newlyAllowed": report.summary.newlyAllowed,
            "changed": report.summary.changed, "unchanged": report.summary.unchanged, "changes": changes,
        ]
        return try await whatIf(request, context, admin, form: nil, impact: impact, draft: draft)
    }

    // MARK: Sign-ins

    func signIns(_ request: Request, _ context: PortcullisRequestContext, _ admin: Admin) async throws -> Response {
        var forwarded: [(String, String)] = [("top", "50")]
        for name in ["user", "app", "status", "correlationId", "before"] {
            if let value = Self.parameter(request, name) { forwarded.append((name, value)) }
        }
        let parameters = Dictionary(forwarded, uniquingKeysWith: { a, _ in a })
        var error: String?
        var page: [(cursor: Int64, record: SignInRecord)] = []
        switch try await attempt({ try AdminRoutes.signInQuery(tenant: admin.tenant) { parameters[$0] } }) {
        case .failure(let refusal): error = refusal.details.first.map { "\($0.pointer) \($0.message)" } ?? refusal.message
        case .success(let filter): page = try await console.admin.signIns(filter, tenant: admin.tenant)
        }
        let records: [[String: Any]] = page.map(\.record).map { record in
            let status = record.conditionalAccessStatus.rawValue
            let policies = Self.policyResults(record)
            return [
                "at": Self.date(record.createdDateTime), "user": record.userPrincipalName ?? "(app)", "app": record.clientAppId,
                "status": status, "statusLabel": ["success": "allowed", "failure": "refused", "notApplied": "allowed (no policy)"][status] ?? status,
                "errorCode": record.errorCode.map { "\($0)" } ?? "", "correlationId": record.correlationId,
                "resource": record.resource ?? record.resourceAppId, "grantType": record.grantType,
                "platform": record.platform ?? "—", "ip": record.ipAddress ?? "—", "appProtection": record.appProtection,
                "country": record.countryOrRegion ?? "",
                "tokenBinding": record.tokenProtectionStatusDetails.map { $0.signInSessionStatus == .bound ? "bound to a DPoP key" : "bearer" } ?? "",
                "contexts": (record.authenticationContextClassReferences ?? []).map { "\($0.id) (\($0.detail.rawValue))" }
                    .joined(separator: ", "),
                "policies": policies, "policyCount": policies.count, "onePolicy": policies.count == 1, "hasPolicies": !policies.isEmpty,
                "kind": record.aggregate == nil
                    ? (record.interactive ? "interactive" : "non-interactive")
                    : "non-interactive, \(record.count) sign-ins with the same details counted together",
                "aggregate": record.aggregate != nil, "count": record.count, "lastAt": Self.date(record.lastDateTime),
                "lastCorrelationId": record.aggregate?.lastCorrelationId ?? "",
            ]
        }
        var values: [String: Any] = [
            "records": records, "filter_user": parameters["user"] ?? "", "filter_app": parameters["app"] ?? "",
            "filter_correlationId": parameters["correlationId"] ?? "",
            "statuses": Self.options(
                [("", "any"), ("success", "allowed"), ("failure", "refused"), ("notApplied", "no policy")], selected: parameters["status"] ?? ""),
        ]
        if page.count == 50, let last = page.last {
            var components = URLComponents()
            components.path = basePath + "/admin/sign-ins"
            components.queryItems =
                forwarded.filter { $0.0 != "top" && $0.0 != "before" }.map { URLQueryItem(name: $0.0, value: $0.1) }
                + [URLQueryItem(name: "before", value: String(last.cursor))]
            values["older"] = components.string
        }
        return console.page(
            "signIns", title: "Sign-ins", session: admin.session, context, values: values, current: "/admin/sign-ins", error: error,
            status: error == nil ? .ok : .badRequest)
    }

    // MARK: Enrollments

    static let enrollmentLimit = 100

    /// `?skip=` of the console's paged lists, clamped.
    static func skip(_ request: Request) -> Int {
        parameter(request, "skip").flatMap { Int($0) }.map { max(0, min($0, 100_000)) } ?? 0
    }

    func enrollments(_ request: Request, _ context: PortcullisRequestContext, _ admin: Admin) async throws -> Response {
        var forwarded: [(String, String)] = []
        for name in ["account", "app", "status"] {
            if let value = Self.parameter(request, name) { forwarded.append((name, value)) }
        }
        let parameters = Dictionary(forwarded, uniquingKeysWith: { a, _ in a })
        let skip = Self.skip(request)
        var error: String?
        var found: [Enrollment] = []
        switch try await attempt({ try ComplianceAdminRoutes.enrollmentQuery(tenant: admin.tenant) { parameters[$0] } }) {
        case .failure(let refusal): error = refusal.details.first.map { "\($0.pointer) \($0.message)" } ?? refusal.message
        case .success(var filter):
            filter.limit = Self.enrollmentLimit
            filter.offset = skip
            found = try await compliance.enrollments(filter)
        }
        let rows: [[String: Any]] = found.map { enrollment in
            [
                "href": "\(basePath)/admin/enrollments/\(Self.path(enrollment.id.rawValue))", "upn": enrollment.userPrincipalName, "app": enrollment.clientId,
                "device": enrollment.deviceId, "state": enrollment.state.rawValue, "lastCheckIn": Self.date(enrollment.lastCheckInAt),
            ]
        }
        let states = [("", "any")] + Enrollment.State.allCases.map { ($0.rawValue, $0.rawValue) }
        return console.page(
            "enrollments", title: "Enrollments", session: admin.session, context,
            values: [
                "enrollments": rows,
                "pager": pager("/admin/enrollments", forwarded, skip: skip, limit: Self.enrollmentLimit, full: found.count == Self.enrollmentLimit),
                "filter_account": parameters["account"] ?? "", "filter_app": parameters["app"] ?? "",
                "statuses": Self.options(states, selected: parameters["status"] ?? ""),
            ], current: "/admin/enrollments", error: error, status: error == nil ? .ok : .badRequest)
    }

    /// One enrollment of the tenant with its history, or the not-found page.
    func detail(_ context: PortcullisRequestContext, _ admin: Admin) async throws -> ComplianceAdminRoutes.Detail {
        let id = context.parameters.get("id") ?? ""
        guard case .success(let detail) = try await attempt({ try await compliance.detail(admin.tenant, id: id) }) else {
            throw ConsoleAnswer.response(notFound(context, session: admin.session))
        }
        return detail
    }

    func enrollment(_ request: Request, _ context: PortcullisRequestContext, _ admin: Admin) async throws -> Response {
        let detail = try await detail(context, admin)
        let enrollment = detail.enrollment
        let history: [[String: Any]] = detail.history.reversed().map { entry in
            let from = entry.fromStatus
            let to = entry.toStatus
            return [
                "at": Self.date(entry.at), "event": entry.event.rawValue, "detail": entry.detail ?? "",
                "change": from == to ? (to ?? "") : "\(from ?? "—") → \(to ?? "—")",
            ]
        }
        let state = enrollment.state
        return console.page(
            "enrollment", title: "Enrollment", session: admin.session, context,
            values: [
                "upn": enrollment.userPrincipalName, "app": enrollment.clientId, "device": enrollment.deviceId,
                "platform": enrollment.platform?.rawValue ?? "", "osVersion": enrollment.osVersion ?? "", "state": state.rawValue,
                "status": enrollment.complianceStatus.errorTitle ?? enrollment.complianceStatus.status.rawValue, "enrolledAt": Self.date(enrollment.enrolledAt),
                "lastCheckIn": Self.date(enrollment.lastCheckInAt), "appliedPolicyVersion": enrollment.appliedPolicyVersion ?? "—",
                "canWipe": state != .unenrolled && state != .wipePending, "wipeHref": "\(basePath)/admin/enrollments/\(Self.path(enrollment.id.rawValue))/wipe",
                "history": history,
            ], current: "/admin/enrollments", notice: notice(request))
    }

    func confirmWipe(_ request: Request, _ context: PortcullisRequestContext, _ admin: Admin) async throws -> Response {
        let enrollment = try await detail(context, admin).enrollment
        let id = enrollment.id
        return console.page(
            "confirm", title: "Wipe this app's work data?", session: admin.session, context,
            values: [
                "question": "Wipe the work data of \(enrollment.userPrincipalName) from app \(enrollment.clientId) on device \(enrollment.deviceId)?",
                "detail": "The account's tokens for this app stop at once; the app removes the account's data at its next check-in. This cannot be undone.",
                "action": "\(basePath)/admin/enrollments/\(Self.path(id.rawValue))/wipe", "confirmLabel": "Wipe",
                "backHref": "\(basePath)/admin/enrollments/\(Self.path(id.rawValue))",
            ], current: "/admin/enrollments")
    }

    func wipe(_ request: Request, _ context: PortcullisRequestContext, _ admin: Admin) async throws -> Response {
        let id = context.parameters.get("id") ?? ""
        _ = try await form(request, context, admin)
        if case .failure(let refusal) = try await attempt({ try await compliance.wipe(admin.tenant, id: id, actor: admin.actor) }) {
            return console.page(
                "failure", title: "Not wiped", session: admin.session, context,
                values: [
                    "message": refusal.message, "href": "\(basePath)/admin/enrollments/\(Self.path(id))", "link": "Back to the enrollment",
                ], current: "/admin/enrollments", status: refusal.status)
        }
        return ConsoleRoutes.redirect("\(basePath)/admin/enrollments/\(Self.path(id))?done=wiped")
    }

    /// Links to the pages before and after this one (lists that page by position).
    func pager(_ path: String, _ query: [(String, String)], skip: Int, limit: Int, full: Bool) -> [String: Any] {
        func link(_ to: Int) -> String {
            var components = URLComponents()
            components.path = basePath + path
            components.queryItems = query.map { URLQueryItem(name: $0.0, value: $0.1) } + (to > 0 ? [URLQueryItem(name: "skip", value: String(to))] : [])
            return components.string ?? basePath + path
        }
        var pager: [String: Any] = ["from": skip + 1]
        if skip > 0 { pager["previous"] = link(max(0, skip - limit)) }
        if full { pager["next"] = link(skip + limit) }
        return pager
    }

    // MARK: Callbacks

    func callbacks(_ request: Request, _ context: PortcullisRequestContext, _ admin: Admin) async throws -> Response {
        let state = Self.parameter(request, "state") ?? "pending"
        let tabs: [(OutboxMessage.State, String)] = [(.pending, "Pending"), (.deadLetter, "Dead letters"), (.delivered, "Delivered")]
        guard let selected = tabs.first(where: { $0.0.rawValue == state })?.0 else { return notFound(context, session: admin.session) }
        let skip = Self.skip(request)
        let messages = try await compliance.outbox(admin.tenant, state: selected, limit: Self.enrollmentLimit, skip: skip)
        let csrf = console.csrfToken(admin.session)
        let rows: [[String: Any]] = messages.map { message in
            [
                "createdAt": Self.date(message.createdAt), "target": message.targetUri, "attempts": message.attempts, "lastError": message.lastError ?? "",
                "canRedeliver": message.state == .deadLetter, "redeliverAction": "\(basePath)/admin/callbacks/\(Self.path(message.id))/redeliver", "csrf": csrf,
            ]
        }
        return console.page(
            "callbacks", title: "Callbacks", session: admin.session, context,
            values: [
                "messages": rows,
                "pager": pager("/admin/callbacks", [("state", state)], skip: skip, limit: Self.enrollmentLimit, full: messages.count == Self.enrollmentLimit),
                "tabs": tabs.map {
                    ["label": $0.1, "href": "\(basePath)/admin/callbacks?state=\($0.0.rawValue)", "current": $0.0 == selected] as [String: Any]
                },
            ], current: "/admin/callbacks", notice: notice(request))
    }

    func redeliver(_ request: Request, _ context: PortcullisRequestContext, _ admin: Admin) async throws -> Response {
        let id = context.parameters.get("id") ?? ""
        _ = try await form(request, context, admin)
        if case .failure(let refusal) = try await attempt({ try await compliance.redeliver(admin.tenant, id: id, actor: admin.actor) }) {
            return console.page(
                "failure", title: "Not redelivered", session: admin.session, context,
                values: [
                    "message": refusal.message, "href": "\(basePath)/admin/callbacks?state=deadLetter", "link": "Back to the dead letters",
                ], current: "/admin/callbacks", status: refusal.status)
        }
        return ConsoleRoutes.redirect("\(basePath)/admin/callbacks?state=pending&done=redelivered")
    }

    // MARK: Audit

    static let auditLimit = 50

    func audit(_ request: Request, _ context: PortcullisRequestContext, _ admin: Admin) async throws -> Response {
        let before = Self.parameter(request, "before").flatMap { Int64($0) }.flatMap { $0 >= 0 ? $0 : nil }
        let records = try await console.admin.audit(admin.tenant, limit: Self.auditLimit, before: before)
        let rows: [[String: Any]] = records.map { record in
            let lines = JSONDiff.lines(from: record.before.map(JSONDiff.masked), to: record.after.map(JSONDiff.masked))
            let diff: [[String: Any]] = lines.map { line in
                ["line": line, "sign": line.hasPrefix("+") ? "plus" : line.hasPrefix("-") ? "minus" : "change"]
            }
            return [
                "at": Self.date(record.at), "actor": record.actor, "action": record.action.rawValue, "kind": record.kind.rawValue,
                "documentId": record.documentId, "diff": diff, "hasDiff": !diff.isEmpty, "diffCount": diff.count, "plural": diff.count != 1,
            ]
        }
        var values: [String: Any] = ["records": rows]
        if records.count == Self.auditLimit, let last = records.last?.id { values["older"] = "\(basePath)/admin/audit?before=\(last)" }
        return console.page("audit", title: "Audit", session: admin.session, context, values: values, current: "/admin/audit")
    }

    // MARK: Directory and app configuration

    func directory(_ request: Request, _ context: PortcullisRequestContext, _ admin: Admin) async throws -> Response {
        // The partners' names (tenants of this installation), for the cross-tenant access section.
        let tenants = try await console.admin.tenants.snapshots()
        func section<Document: TenantDocument>(
            _ slug: String, _ title: String, _ resource: DocumentResource<Document>, detailTitle: String,
            name: (Document) -> String, detail: (Document) -> String, extra: (Document) -> [String: Any] = { _ in [:] }
        ) async throws -> [String: Any] {
            let noun = kinds[slug]?.noun ?? resource.noun
            let rows: [[String: Any]] = try await resource.list(admin.tenant, top: DocumentResource<Document>.pageSize, skip: 0).map(\.document).map { item in
                let id = item.documentId
                return ["name": name(item), "id": id, "href": "\(basePath)/admin/edit/\(slug)/\(Self.path(id))", "detail": detail(item)]
                    .merging(extra(item)) { $1 }
            }
            return ["slug": slug, "title": title, "noun": noun, "newHref": "\(basePath)/admin/new/\(slug)", "detailTitle": detailTitle, "rows": rows]
        }
        let sections = [
            try await section(
                "users", "Users", documents.users, detailTitle: "Enabled", name: \.userPrincipalName,
                detail: { user in
                    let enabled = user.accountEnabled ? "yes" : "no"
                    guard let home = user.homeAccount else { return user.userType == .guest ? "\(enabled) (guest)" : enabled }
                    return "\(enabled) (\(user.userType == .member ? "member" : "guest") from \(home.userPrincipalName))"
                },
                extra: { ["methodsHref": "\(basePath)/admin/users/\(Self.path($0.id.rawValue))/methods"] }),
            try await section("groups", "Groups", documents.groups, detailTitle: "Members", name: \.displayName) { "\($0.members.count)" },
            try await section("applications", "Applications", documents.applications, detailTitle: "Kind", name: \.displayName) { app in
                var kinds: [String] = [app.publicClient ? "public client" : "confidential client"]
                if !app.identifierUris.isEmpty { kinds.append("API") }
                // API permissions (PROTOCOL §11): how many resources it may call.
                let calls = app.requiredResourceAccess.count
                if calls > 0 { kinds.append("calls \(calls) API\(calls == 1 ? "" : "s")") }
                if app.requireDPoP { kinds.append("DPoP required") }
                // Its credentials (PROTOCOL §21): secrets, certificates (how many are valid now), federated credentials.
                if !app.secrets.isEmpty { kinds.append("\(app.secrets.count) secret\(app.secrets.count == 1 ? "" : "s")") }
                if !app.keyCredentials.isEmpty {
                    let valid = app.keyCredentials.filter { $0.isValid(at: console.clock.now()) }.count
                    kinds.append("\(app.keyCredentials.count) certificate\(app.keyCredentials.count == 1 ? "" : "s") (\(valid) valid now)")
                }
                let federated = app.federatedIdentityCredentials.count
                if federated > 0 { kinds.append("\(federated) federated credential\(federated == 1 ? "" : "s")") }
                return kinds.joined(separator: ", ")
            },
            try await section("named-locations", "Named locations", documents.namedLocations, detailTitle: "What", name: \.displayName) { location in
                if let countries = location.countriesAndRegions {
                    let unknown = location.includeUnknownCountriesAndRegions == true ? " and unknown" : ""
                    return "countries: \(countries.joined(separator: ", "))\(unknown)"
                }
                return "\(location.ipRanges.count) IP range\(location.ipRanges.count == 1 ? "" : "s")\(location.isTrusted ? ", trusted" : "")"
            },
            try await section(
                "authentication-strengths", "Authentication strengths", documents.authenticationStrengths, detailTitle: "Allowed combinations",
                name: { $0.policyType == .builtIn ? "\($0.displayName) (built-in)" : $0.displayName },
                detail: { $0.allowedCombinations.map(\.rawValue).joined(separator: "; ") }),
            try await section(
                "authentication-contexts", "Authentication contexts", documents.authenticationContexts, detailTitle: "Available to apps",
                name: { "\($0.id): \($0.displayName)" }, detail: { $0.isAvailable ? "yes" : "no (policies only)" }),
            try await section("agreements", "Terms of use", documents.agreements, detailTitle: "Files", name: \.displayName) { agreement in
                let languages = agreement.files.map { "\($0.language) (\($0.format.rawValue))" }.joined(separator: ", ")
                return languages + (agreement.userReacceptRequiredFrequency.map { ", accepted again every \($0)" } ?? "")
            },
            try await section(
                "invitations", "Invitations (B2B collaboration)", documents.invitations, detailTitle: "Invited as", name: \.invitedUserEmailAddress
            ) {
                "\($0.invitedUserType.rawValue), user \($0.invitedUser.id)"
            },
            try await section("devices", "Devices", documents.devices, detailTitle: "State", name: \.displayName) { device in
                Self.deviceState(device, owners: admin.tenant, now: console.clock.now())
            },
            try await section(
                "device-compliance", "Device compliance policies", documents.deviceCompliancePolicies, detailTitle: "Requires",
                name: \.displayName, detail: Self.requirements),
            try await section(
                "cross-tenant-access", "Cross-tenant access (partners)", documents.crossTenantAccessPartners, detailTitle: "Inbound trust",
                name: { partner in tenants[partner.tenantId.rawValue].map { "\($0.tenant.displayName) (\(partner.tenantId))" } ?? partner.tenantId.rawValue },
                detail: { $0.inboundTrust.isMfaAccepted ? "MFA trusted" : "nothing trusted" }),
        ]
        return console.page(
            "directory", title: "Directory", session: admin.session, context, values: ["sections": sections], current: "/admin/directory",
            notice: notice(request))
    }

    /// A device in a line (PROTOCOL §18): how it is joined, its operating system, whether conditional access takes it as
    /// compliant now (a grace period named), enabled, its owners, its last check-in.
    static func deviceState(_ device: Device, owners tenant: TenantSnapshot, now: Date) -> String {
        let trust =
            switch device.trustType {
            case .azureAd: "joined"
            case .serverAd: "hybrid joined"
            case .workplace: "registered"
            }
        var parts = [trust]
        if let os = device.operatingSystem { parts.append([os, device.operatingSystemVersion].compactMap { $0 }.joined(separator: " ")) }
        if !device.accountEnabled {
            parts.append("disabled")
        } else if device.isCompliant(at: now) {
            parts.append(device.complianceGracePeriodExpirationDateTime.map { "compliant (grace until \(Self.date($0)))" } ?? "compliant")
        } else {
            parts.append("not compliant")
        }
        if device.isManaged { parts.append("managed") }
        let owners = device.registeredOwners.map { tenant.directory.user(id: $0)?.userPrincipalName ?? $0.rawValue }
        if !owners.isEmpty { parts.append("owner \(owners.joined(separator: ", "))") }
        parts.append(device.lastSyncDateTime.map { "checked in \(Self.date($0))" } ?? "never checked in")
        return parts.joined(separator: " · ")
    }

    /// A device compliance policy in a line: its platform and what it requires.
    static func requirements(_ policy: DeviceCompliancePolicy) -> String {
        let platform =
            switch policy.platform {
            case .iOS: "iOS"
            case .android: "Android"
            case .macOS: "macOS"
            case .windows: "Windows"
            }
        var parts: [String] = []
        if let minimum = policy.osMinimumVersion { parts.append("OS \(minimum) or later") }
        if let maximum = policy.osMaximumVersion { parts.append("OS \(maximum) at most") }
        if policy.passcodeRequired { parts.append("a passcode") }
        if policy.storageRequireEncryption { parts.append("encryption") }
        if policy.securityBlockJailbrokenDevices { parts.append("not jailbroken") }
        let grace = policy.gracePeriodHours > 0 ? "; \(policy.gracePeriodHours) h grace" : ""
        return "\(platform): " + (parts.isEmpty ? "nothing" : parts.joined(separator: ", ")) + grace
    }

    func appConfiguration(_ request: Request, _ context: PortcullisRequestContext, _ admin: Admin) async throws -> Response {
        let policies = try await documents.appConfigurationPolicies.list(admin.tenant, top: DocumentResource<AppConfigurationPolicy>.pageSize, skip: 0)
        let rows: [[String: Any]] = policies.map(\.document).map { policy in
            let secrets = (policy.secrets ?? []).map(\.identifier)
            return [
                "displayName": policy.displayName, "href": "\(basePath)/admin/edit/app-configuration/\(Self.path(policy.id.rawValue))",
                "priority": policy.priority, "apps": "\(policy.targets.applications.count)", "secrets": secrets.isEmpty ? "—" : secrets.joined(separator: ", "),
            ]
        }
        return console.page(
            "appConfiguration", title: "App configuration", session: admin.session, context, values: ["policies": rows],
            current: "/admin/app-configuration", notice: notice(request))
    }
}

extension String {
    var nilIfEmpty: String? { isEmpty ? nil : self }
}

/// Starting points for new documents: valid in shape, safe to save (new conditional access starts report-only).
enum ConsoleDocumentTemplates {
    static let conditionalAccessLabels = [
        ("mfa", "Require MFA for everyone"), ("appProtection", "Require app protection on iOS and Android"),
        ("block", "Block access from outside trusted locations"), ("tokenProtection", "Require token protection (DPoP-bound tokens)"),
    ]
    static let conditionalAccess: [String: String] = [
        "mfa": """
        {
          "displayName": "Require MFA for everyone",
          "state": "enabledForReportingButNotEnforced",
          "conditions": {
            "users": { "includeUsers": ["All"], "excludeUsers": [], "includeGroups": [], "excludeGroups": [] },
            "applications": { "includeApplications": ["All"], "excludeApplications": [] },
            "clientAppTypes": ["all"]
          },
          "grantControls": { "operator": "OR", "builtInControls": ["mfa"] }
        }
        """,
        "appProtection": """
        {
          "displayName": "Require app protection on iOS and Android",
          "state": "enabledForReportingButNotEnforced",
          "conditions": {
            "users": { "includeUsers": ["All"], "excludeUsers": [], "includeGroups": [], "excludeGroups": [] },
            "applications": { "includeApplications": ["All"], "excludeApplications": [] },
            "platforms": { "includePlatforms": ["iOS", "android"], "excludePlatforms": [] },
            "clientAppTypes": ["mobileAppsAndDesktopClients"]
          },
          "grantControls": { "operator": "OR", "builtInControls": ["compliantApplication"] }
        }
        """,
        "block": """
        {
          "displayName": "Block access from outside trusted locations",
          "state": "enabledForReportingButNotEnforced",
          "conditions": {
            "users": { "includeUsers": ["All"], "excludeUsers": [], "includeGroups": [], "excludeGroups": [] },
            "applications": { "includeApplications": ["All"], "excludeApplications": [] },
            "locations": { "includeLocations": ["All"], "excludeLocations": ["AllTrusted"] },
            "clientAppTypes": ["all"]
          },
          "grantControls": { "operator": "OR", "builtInControls": ["block"] }
        }
        """,
        "tokenProtection": """
        {
          "displayName": "Require token protection (DPoP-bound tokens)",
          "state": "enabledForReportingButNotEnforced",
          "conditions": {
            "users": { "includeUsers": ["All"], "excludeUsers": [], "includeGroups": [], "excludeGroups": [] },
            "applications": { "includeApplications": ["All"], "excludeApplications": [] },
            "clientAppTypes": ["mobileAppsAndDesktopClients"]
          },
          "grantControls": null,
          "sessionControls": { "secureSignInSession": { "isEnabled": true } }
        }
        """,
    ]
    static let appProtection = """
        {
          "displayName": "New app protection policy",
          "targets": { "applications": [], "includeGroups": ["All"], "excludeGroups": [] },
          "settings": { "pinRequired": true, "minimumOsVersion": "16.0", "offlineGracePeriodMinutes": 720, "recheckIntervalMinutes": 30 }
        }
        """
    static let appConfiguration = """
        {
          "displayName": "New app configuration policy",
          "targets": { "applications": [], "includeGroups": ["All"], "excludeGroups": [] },
          "priority": 100,
          "configuration": {},
          "secrets": []
        }
        """
    /// Terms of use (PROTOCOL §17): one plain-text file ("Replace these terms with your organization's.", base64).
    static let agreement = """
        {
          "displayName": "Terms of use",
          "isViewingBeforeAcceptanceRequired": true,
          "isPerDeviceAcceptanceRequired": false,
          "userReacceptRequiredFrequency": "P365D",
          "files": [
            {
              "fileName": "terms.txt",
              "language": "en",
              "isDefault": true,
              "fileData": { "data": "UmVwbGFjZSB0aGVzZSB0ZXJtcyB3aXRoIHlvdXIgb3JnYW5pemF0aW9uJ3Mu" }
            }
          ]
        }
        """
    /// B2B collaboration (PROTOCOL §17): a user of another tenant of this installation, by address.
    static let invitation = """
        {
          "invitedUserEmailAddress": "someone@partner.example",
          "inviteRedirectUrl": "https://apps.example.com/",
          "invitedUserType": "Guest",
          "sendInvitationMessage": false
        }
        """
    /// Trust in a partner tenant's multifactor authentication for its B2B users here.
    static let crossTenantAccessPartner = """
        {
          "tenantId": "00000000-0000-0000-0000-000000000000",
          "inboundTrust": { "isMfaAccepted": true }
        }
        """
    static let user = """
        {
          "userPrincipalName": "new.user@example.com",
          "displayName": "New User",
          "password": "change-me-Long-enough-1",
          "accountEnabled": true
        }
        """
    static let group = """
        {
          "displayName": "New group",
          "members": []
        }
        """
    static let application = """
        {
          "displayName": "New application",
          "publicClient": true,
          "allowedGrantTypes": ["authorization_code", "refresh_token"],
          "redirectUris": ["https://app.example.com/callback"],
          "requiredResourceAccess": [],
          "requireDPoP": false
        }
        """
    static let namedLocation = """
        {
          "displayName": "New location",
          "ipRanges": ["203.0.113.0/24"],
          "isTrusted": false
        }
        """
    static let countryLocation = """
        {
          "@odata.type": "#microsoft.graph.countryNamedLocation",
          "displayName": "Blocked countries",
          "countriesAndRegions": ["KP"],
          "includeUnknownCountriesAndRegions": false,
          "countryLookupMethod": "clientIpAddress"
        }
        """
    static let authenticationContext = """
        {
          "id": "c1",
          "displayName": "Sensitive actions",
          "description": "Asked for by resources before a sensitive action (step-up)",
          "isAvailable": true
        }
        """

    /// A device an admin joins (PROTOCOL §18): the device's certificate request goes in `csr` (its key never leaves it);
    /// the saved device carries the certificate to hand to it.
    static let joinedDevice = """
        {
          "displayName": "Reception desktop",
          "trustType": "AzureAd",
          "operatingSystem": "Windows",
          "operatingSystemVersion": "10.0.22631",
          "deviceOwnership": "Company",
          "accountEnabled": true,
          "csr": "-----BEGIN CERTIFICATE REQUEST-----\\n(the device's PKCS #10 request: RSA 2048 or larger, or P-256)\\n-----END CERTIFICATE REQUEST-----"
        }
        """
    static let windowsCompliance = """
        {
          "@odata.type": "#microsoft.graph.windows10CompliancePolicy",
          "displayName": "Windows baseline",
          "osMinimumVersion": "10.0.19045",
          "passwordRequired": true,
          "storageRequireEncryption": true
        }
        """
    static let iosCompliance = """
        {
          "@odata.type": "#microsoft.graph.iosCompliancePolicy",
          "displayName": "iOS baseline",
          "osMinimumVersion": "17.0",
          "passcodeRequired": true,
          "securityBlockJailbrokenDevices": true
        }
        """

    static let authenticationStrength = """
        {
          "displayName": "Passkey or temporary access pass",
          "description": "Phishing-resistant sign-in, or a pass to set one up",
          "allowedCombinations": ["fido2", "temporaryAccessPassOneTime"]
        }
        """
}

/// JSON as people read and edit it in the console: two-space indents, sorted keys, `[]` and `{}` for empty ones.
enum ConsoleJSON {
    static func pretty(_ value: JSONValue, indent: String = "") -> String {
        let inner = indent + "  "
        switch value {
        case .null: return "null"
        case .bool(let flag): return flag ? "true" : "false"
        case .number(let number):
            if number.rounded() == number, abs(number) < 1e15 { return String(Int64(number)) }
            return String(number)
        case .string(let text):
            return (try? String(decoding: JSONEncoder.console.encode(text), as: UTF8.self)) ?? "\"\""
        case .array(let items):
            if items.isEmpty { return "[]" }
            return "[\n" + items.map { inner + pretty($0, indent: inner) }.joined(separator: ",\n") + "\n" + indent + "]"
        case .object(let members):
            if members.isEmpty { return "{}" }
            return "{\n"
                + members.keys.sorted().map { key in
                    inner + pretty(.string(key)) + ": " + pretty(members[key]!, indent: inner)
                }.joined(separator: ",\n") + "\n" + indent + "}"
        }
    }

    /// The value a JSON Pointer (RFC 6901) names, if any.
    static func value(at pointer: String, in document: JSONValue) -> JSONValue? {
        var current = document
        for raw in pointer.split(separator: "/", omittingEmptySubsequences: false).dropFirst() {
            let token = raw.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
            switch current {
            case .object(let members):
                guard let next = members[token] else { return nil }
                current = next
            case .array(let items):
                guard let index = Int(token), items.indices.contains(index) else { return nil }
                current = items[index]
            default: return nil
            }
        }
        return current
    }
}

extension JSONEncoder {
    static let console: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return encoder
    }()
}
