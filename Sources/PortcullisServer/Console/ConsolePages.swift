import Foundation
import HTTPTypes
import Hummingbird
import PortcullisCore

/// The console's pages (navigation: Policies, What if, Sign-ins, Enrollments, Callbacks, Audit, Directory,
/// App configuration). Each reads and writes through the admin API with the signed-in admin's token.
struct ConsolePages: Sendable {
    let console: ConsoleRoutes
    typealias Session = ConsoleRoutes.Session

    /// A kind of document the generic JSON editor handles.
    struct Kind: Sendable {
        let slug: String
        let collection: String
        let noun: String
        let label: String
        let idKey: String
        let nameKey: String
        let back: String
        let templates: [String: String]
    }

    static let kinds: [String: Kind] = Dictionary(uniqueKeysWithValues: [
        Kind(slug: "conditional-access", collection: "/conditional-access/policies", noun: "policy", label: "Conditional-access policy", idKey: "id",
             nameKey: "displayName", back: "/admin/policies", templates: ConsoleDocumentTemplates.conditionalAccess),
        Kind(slug: "app-protection", collection: "/app-protection/policies", noun: "policy", label: "App protection policy", idKey: "id",
             nameKey: "displayName", back: "/admin/policies", templates: ["basic": ConsoleDocumentTemplates.appProtection]),
        Kind(slug: "app-configuration", collection: "/app-configuration/policies", noun: "policy", label: "App configuration policy", idKey: "id",
             nameKey: "displayName", back: "/admin/app-configuration", templates: ["basic": ConsoleDocumentTemplates.appConfiguration]),
        Kind(slug: "users", collection: "/users", noun: "user", label: "User", idKey: "id", nameKey: "userPrincipalName", back: "/admin/directory",
             templates: ["basic": ConsoleDocumentTemplates.user]),
        Kind(slug: "groups", collection: "/groups", noun: "group", label: "Group", idKey: "id", nameKey: "displayName", back: "/admin/directory",
             templates: ["basic": ConsoleDocumentTemplates.group]),
        Kind(slug: "applications", collection: "/applications", noun: "application", label: "Application", idKey: "appId", nameKey: "displayName",
             back: "/admin/directory", templates: ["basic": ConsoleDocumentTemplates.application]),
        Kind(slug: "named-locations", collection: "/named-locations", noun: "named location", label: "Named location", idKey: "id", nameKey: "displayName",
             back: "/admin/directory", templates: ["basic": ConsoleDocumentTemplates.namedLocation]),
    ].map { ($0.slug, $0) })

    static let notices: [String: String] = [
        "saved": "Saved.", "created": "Created.", "deleted": "Deleted.", "state": "State changed.", "wiped": "Wipe requested: the app removes the account's data at its next check-in, and the account's tokens for this app stop now.",
        "redelivered": "Queued for delivery again.",
    ]

    var basePath: String { console.basePath }

    func register(on router: Router<PortcullisRequestContext>) {
        router.get("admin/policies") { request, context in try await signedIn(request, context) { try await policies(request, context, $0) } }
        router.post("admin/policies/state") { request, context in try await signedIn(request, context) { try await setState(request, context, $0) } }
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
        router.get("admin/app-configuration") { request, context in try await signedIn(request, context) { try await appConfiguration(request, context, $0) } }
    }

    // MARK: Plumbing

    func signedIn(_ request: Request, _ context: PortcullisRequestContext, _ body: (Session) async throws -> Response) async throws -> Response {
        switch console.requireSession(request) {
        case .failure(.response(let answer)): return answer
        case .success(let session):
            // Without the role, no page at all (not even a template): the no-access page.
            guard session.administrator else { return console.noAccess(session, context) }
            do {
                return try await body(session)
            } catch ConsoleAnswer.response(let answer) {
                return answer
            }
        }
    }

    /// An API call whose 401 sends the admin back through sign-in and whose 403 is the no-access page.
    func api(_ method: HTTPRequest.Method, _ path: String, query: [(String, String)] = [], json: Data? = nil, headers: HTTPFields = [:],
             _ session: Session, _ context: PortcullisRequestContext) async throws -> ConsoleRoutes.Reply {
        let reply: ConsoleRoutes.Reply
        do {
            reply = try await console.admin(method, path, query: query, json: json, headers: headers, session: session, context)
        } catch {
            throw ConsoleAnswer.response(console.page("failure", title: "Service unavailable", session: session, context,
                                                      values: ["message": "The service could not answer now; nothing was changed. Try again in a moment."], status: .serviceUnavailable))
        }
        switch reply.status {
        case .unauthorized: throw ConsoleAnswer.response(ConsoleRoutes.redirect(basePath + "/admin/signin?tenant=\(session.tenantId)"))
        case .forbidden: throw ConsoleAnswer.response(console.noAccess(session, context))
        case .serviceUnavailable, .internalServerError:
            throw ConsoleAnswer.response(console.page("failure", title: "Service unavailable", session: session, context,
                                                      values: ["message": reply.message], status: .serviceUnavailable))
        default: return reply
        }
    }

    func form(_ request: Request, _ context: PortcullisRequestContext, _ session: Session) async throws -> [String: String] {
        guard let fields = try await console.form(request, context, session: session) else { throw ConsoleAnswer.response(console.csrfRefused(context)) }
        return fields
    }

    func kind(_ context: PortcullisRequestContext) throws -> Kind {
        guard let kind = Self.kinds[context.parameters.get("kind") ?? ""] else { throw ConsoleAnswer.response(notFound(context)) }
        return kind
    }

    func notFound(_ context: PortcullisRequestContext, session: Session? = nil) -> Response {
        console.page("failure", title: "Not found", session: session, context, values: ["message": "There is nothing here.", "href": basePath + "/admin", "link": "Back to the console"],
                     status: .notFound)
    }

    func notice(_ request: Request) -> String? { request.uri.queryParameters.get("done").flatMap { Self.notices[String($0)] } }

    static func date(_ value: Any?) -> String {
        guard let text = value as? String else { return "" }
        return text.replacingOccurrences(of: "T", with: " ").replacingOccurrences(of: "Z", with: "")
    }

    static func path(_ segment: String) -> String { segment.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))) ?? segment }

    static func options(_ pairs: [(String, String)], selected: String?) -> [[String: Any]] {
        pairs.map { ["value": $0.0, "label": $0.1, "selected": $0.0 == selected] }
    }

    // MARK: Policies

    static let states = [("enabled", "On"), ("enabledForReportingButNotEnforced", "Report-only"), ("disabled", "Off")]

    func policies(_ request: Request, _ context: PortcullisRequestContext, _ session: Session) async throws -> Response {
        let ca = try await api(.get, "/conditional-access/policies", session, context).values
        let ap = try await api(.get, "/app-protection/policies", session, context).values
        let caRows: [[String: Any]] = ca.map { policy in
            let id = policy["id"] as? String ?? ""
            let state = policy["state"] as? String ?? ""
            let grant = policy["grantControls"] as? [String: Any]
            let controls = (grant?["builtInControls"] as? [String] ?? []).joined(separator: (grant?["operator"] as? String) == "AND" ? " and " : " or ")
            return ["id": id, "displayName": policy["displayName"] as? String ?? id, "href": "\(basePath)/admin/edit/conditional-access/\(Self.path(id))",
                    "state": state, "stateLabel": Self.states.first { $0.0 == state }?.1 ?? state, "controls": controls.isEmpty ? "—" : controls,
                    "states": Self.options(Self.states, selected: state), "csrf": console.csrfToken(session)]
        }
        let apRows: [[String: Any]] = ap.map { policy in
            let id = policy["id"] as? String ?? ""
            let targets = policy["targets"] as? [String: Any]
            return ["displayName": policy["displayName"] as? String ?? id, "href": "\(basePath)/admin/edit/app-protection/\(Self.path(id))",
                    "apps": "\((targets?["applications"] as? [Any])?.count ?? 0)", "groups": (targets?["includeGroups"] as? [String] ?? []).joined(separator: ", ")]
        }
        let templates = ConsoleDocumentTemplates.conditionalAccessLabels.map { ["value": $0.0, "label": $0.1] }
        return console.page("policies", title: "Policies", session: session, context, values: ["ca": caRows, "ap": apRows, "caTemplates": templates],
                            current: "/admin/policies", notice: notice(request))
    }

    func setState(_ request: Request, _ context: PortcullisRequestContext, _ session: Session) async throws -> Response {
        let fields = try await form(request, context, session)
        guard let id = fields["id"], let state = fields["state"], Self.states.contains(where: { $0.0 == state }) else { return notFound(context, session: session) }
        let current = try await api(.get, "/conditional-access/policies/\(Self.path(id))", session, context)
        guard current.status == .ok, let etag = current.headers[.eTag] else { return notFound(context, session: session) }
        var policy = current.object
        policy["state"] = state
        let saved = try await api(.put, "/conditional-access/policies/\(Self.path(id))", json: try JSONSerialization.data(withJSONObject: policy),
                                  headers: [.ifMatch: etag], session, context)
        guard saved.status == .ok else {
            // Refused (a lock-out the API guards against, a concurrent change): shown in the editor, where it can be fixed.
            let document = ConsoleJSON.pretty(JSONValue.parse(try JSONSerialization.data(withJSONObject: policy)) ?? .object([:]))
            return try await editorPage(Self.kinds["conditional-access"]!, id: id, document: document, etag: etag, reply: saved, session, context)
        }
        return ConsoleRoutes.redirect(basePath + "/admin/policies?done=state")
    }

    // MARK: The JSON editor

    func editor(_ request: Request, _ context: PortcullisRequestContext, _ session: Session) async throws -> Response {
        let kind = try kind(context)
        let id = context.parameters.get("id") ?? ""
        let reply = try await api(.get, "\(kind.collection)/\(Self.path(id))", session, context)
        guard reply.status == .ok else { return notFound(context, session: session) }
        return editorPage(kind, id: id, document: ConsoleJSON.pretty(JSONValue.parse(reply.data) ?? .object([:])), etag: reply.headers[.eTag] ?? "", problems: [], conflict: false,
                          notice: notice(request), session, context)
    }

    func editorPage(_ kind: Kind, id: String?, document: String, etag: String, problems: [[String: Any]], conflict: Bool, notice: String? = nil, error: String? = nil,
                    _ session: Session, _ context: PortcullisRequestContext, status: HTTPResponse.Status = .ok) -> Response {
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
        return console.page("editor", title: title, session: session, context, values: values, current: kind.back, notice: notice, error: error, status: status)
    }

    /// The editor again after the API refused a write: its problems at their pointers (with what stands there),
    /// an ETag conflict explained, or the API's message.
    func editorPage(_ kind: Kind, id: String?, document: String, etag: String, reply: ConsoleRoutes.Reply, _ session: Session,
                    _ context: PortcullisRequestContext) async throws -> Response {
        switch reply.status {
        case .preconditionFailed:
            return editorPage(kind, id: id, document: document, etag: etag, problems: [], conflict: true, session, context, status: .conflict)
        case .badRequest where !reply.problems.isEmpty:
            let parsed = JSONValue.parse(Data(document.utf8))
            let problems: [[String: Any]] = reply.problems.map { problem in
                let pointer = problem["pointer"] as? String ?? ""
                var row: [String: Any] = ["pointer": pointer.isEmpty ? "/" : pointer, "message": problem["message"] as? String ?? ""]
                if let parsed, !pointer.isEmpty, let value = ConsoleJSON.value(at: pointer, in: parsed) { row["excerpt"] = String(ConsoleJSON.pretty(value).prefix(400)) }
                return row
            }
            return editorPage(kind, id: id, document: document, etag: etag, problems: problems, conflict: false, session, context, status: .badRequest)
        default:
            return editorPage(kind, id: id, document: document, etag: etag, problems: [], conflict: false, error: reply.message, session, context,
                              status: reply.status.code >= 400 ? reply.status : .badRequest)
        }
    }

    static func name(in document: String, key: String) -> String? {
        ((try? JSONSerialization.jsonObject(with: Data(document.utf8))) as? [String: Any])?[key] as? String
    }

    func save(_ request: Request, _ context: PortcullisRequestContext, _ session: Session) async throws -> Response {
        let kind = try kind(context)
        let id = context.parameters.get("id") ?? ""
        let fields = try await form(request, context, session)
        let document = fields["document"] ?? ""
        let etag = fields["etag"] ?? ""
        guard JSONValue.parse(Data(document.utf8))?.objectValue != nil else {
            return editorPage(kind, id: id, document: document, etag: etag,
                              problems: [["pointer": "/", "message": "is not a JSON object (check quotes, commas and braces)."]], conflict: false, session, context, status: .badRequest)
        }
        let reply = try await api(.put, "\(kind.collection)/\(Self.path(id))", json: Data(document.utf8), headers: [.ifMatch: etag.isEmpty ? "*" : etag], session, context)
        guard reply.status == .ok || reply.status == .created else {
            return try await editorPage(kind, id: id, document: document, etag: etag, reply: reply, session, context)
        }
        return ConsoleRoutes.redirect("\(basePath)/admin/edit/\(kind.slug)/\(Self.path(id))?done=saved")
    }

    func newDocument(_ request: Request, _ context: PortcullisRequestContext, _ session: Session) async throws -> Response {
        let kind = try kind(context)
        let template = request.uri.queryParameters.get("template") ?? "basic"
        guard let text = kind.templates[template] ?? kind.templates.values.first else { return notFound(context, session: session) }
        return editorPage(kind, id: nil, document: text, etag: "", problems: [], conflict: false, session, context)
    }

    func create(_ request: Request, _ context: PortcullisRequestContext, _ session: Session) async throws -> Response {
        let kind = try kind(context)
        let fields = try await form(request, context, session)
        let document = fields["document"] ?? ""
        guard JSONValue.parse(Data(document.utf8))?.objectValue != nil else {
            return editorPage(kind, id: nil, document: document, etag: "",
                              problems: [["pointer": "/", "message": "is not a JSON object (check quotes, commas and braces)."]], conflict: false, session, context, status: .badRequest)
        }
        let reply = try await api(.post, kind.collection, json: Data(document.utf8), session, context)
        guard reply.status == .created, let id = reply.object[kind.idKey] as? String else {
            return try await editorPage(kind, id: nil, document: document, etag: "", reply: reply, session, context)
        }
        return ConsoleRoutes.redirect("\(basePath)/admin/edit/\(kind.slug)/\(Self.path(id))?done=created")
    }

    func confirmDelete(_ request: Request, _ context: PortcullisRequestContext, _ session: Session) async throws -> Response {
        let kind = try kind(context)
        let id = context.parameters.get("id") ?? ""
        let reply = try await api(.get, "\(kind.collection)/\(Self.path(id))", session, context)
        guard reply.status == .ok else { return notFound(context, session: session) }
        let name = reply.object[kind.nameKey] as? String ?? id
        return console.page("confirm", title: "Delete \(kind.noun)?", session: session, context, values: [
            "question": "Delete the \(kind.label.lowercased()) “\(name)”?", "detail": "This cannot be undone. It is recorded in the audit log.",
            "action": "\(basePath)/admin/delete/\(kind.slug)/\(Self.path(id))", "etag": reply.headers[.eTag] ?? "", "confirmLabel": "Delete",
            "backHref": "\(basePath)/admin/edit/\(kind.slug)/\(Self.path(id))",
        ], current: kind.back)
    }

    func delete(_ request: Request, _ context: PortcullisRequestContext, _ session: Session) async throws -> Response {
        let kind = try kind(context)
        let id = context.parameters.get("id") ?? ""
        let fields = try await form(request, context, session)
        let reply = try await api(.delete, "\(kind.collection)/\(Self.path(id))", headers: [.ifMatch: fields["etag"].flatMap { $0.isEmpty ? nil : $0 } ?? "*"], session, context)
        guard reply.status == .noContent else {
            let message = reply.status == .preconditionFailed ? "Someone else changed it since you opened it; nothing was deleted. Open it again to see their version." : reply.message
            return console.page("failure", title: "Not deleted", session: session, context, values: [
                "message": message, "href": "\(basePath)/admin/edit/\(kind.slug)/\(Self.path(id))", "link": "Back to the \(kind.noun)",
            ], current: kind.back, status: reply.status == .preconditionFailed ? .conflict : reply.status)
        }
        return ConsoleRoutes.redirect("\(basePath)\(kind.back)?done=deleted")
    }

    // MARK: What if and impact

    func whatIf(_ request: Request, _ context: PortcullisRequestContext, _ session: Session, form: [String: String]?, result: [String: Any]? = nil,
                problems: [[String: Any]] = [], impact: [String: Any]? = nil, impactProblems: [[String: Any]] = [], draft: String? = nil) async throws -> Response {
        let users = try await api(.get, "/users", session, context).values
        let applications = try await api(.get, "/applications", session, context).values
        let clients = applications.filter { !($0["isResourceOnly"] as? Bool ?? false) }
        let resources = applications.filter { !(($0["identifierUris"] as? [String]) ?? []).isEmpty }
        var values: [String: Any] = [
            "users": Self.options(users.map { ($0["userPrincipalName"] as? String ?? "", $0["userPrincipalName"] as? String ?? "") }, selected: form?["user"]),
            "apps": Self.options(clients.map { ($0["appId"] as? String ?? "", "\($0["displayName"] as? String ?? "") (\($0["appId"] as? String ?? ""))") }, selected: form?["app"]),
            "resources": Self.options(resources.map { (($0["identifierUris"] as? [String])?.first ?? "", $0["displayName"] as? String ?? "") }
                + [(BuiltInResources.adminIdentifier, "Portcullis admin API"), (BuiltInResources.complianceIdentifier, "Portcullis compliance service")], selected: form?["resource"]),
            "platforms": Self.options(DevicePlatform.allCases.map { ($0.rawValue, $0.rawValue) }, selected: form?["platform"]),
            "protections": Self.options([("none", "not enrolled"), ("compliant", "compliant enrollment"), ("notCompliant", "enrolled, not compliant")], selected: form?["protection"]),
            "ip": form?["ip"] ?? "", "protapp": form?["protapp"] == "1", "mfa": form?["mfa"] == "1",
            "problems": problems, "hasProblems": !problems.isEmpty, "impactProblems": impactProblems, "hasImpactProblems": !impactProblems.isEmpty,
            // A draft is never enforced here: it starts enabled, so that its impact shows.
            "draft": draft ?? ConsoleDocumentTemplates.conditionalAccess["mfa"]?.replacingOccurrences(of: "enabledForReportingButNotEnforced", with: "enabled") ?? "",
        ]
        if let result { values["result"] = result }
        if let impact { values["impact"] = impact }
        return console.page("whatIf", title: "What if", session: session, context, values: values, current: "/admin/what-if",
                            status: problems.isEmpty && impactProblems.isEmpty ? .ok : .badRequest)
    }

    func evaluate(_ request: Request, _ context: PortcullisRequestContext, _ session: Session) async throws -> Response {
        let fields = try await form(request, context, session)
        var signIn: [String: Any] = ["clientAppId": fields["app"] ?? "", "resourceAppId": fields["resource"] ?? "", "appProtection": fields["protection"] ?? "none"]
        if let user = fields["user"], !user.isEmpty { signIn["userId"] = user }
        if let platform = fields["platform"], !platform.isEmpty { signIn["platform"] = platform }
        if let ip = fields["ip"]?.trimmingCharacters(in: .whitespaces), !ip.isEmpty { signIn["ipAddress"] = ip }
        if fields["protapp"] == "1" { signIn["capabilities"] = ["protapp"] }
        if fields["mfa"] == "1" { signIn["mfa"] = true }
        let reply = try await api(.post, "/conditional-access/evaluate", json: try JSONSerialization.data(withJSONObject: ["signIn": signIn]), session, context)
        guard reply.status == .ok, let record = reply.object["signIn"] as? [String: Any] else {
            let problems = reply.problems.map { ["pointer": $0["pointer"] as? String ?? "", "message": $0["message"] as? String ?? ""] }
            return try await whatIf(request, context, session, form: fields, problems: problems.isEmpty ? [["pointer": "/", "message": reply.message]] : problems)
        }
        let status = record["conditionalAccessStatus"] as? String ?? ""
        let result: [String: Any] = [
            "status": status, "statusLabel": status == "failure" ? "Refused" : "Allowed", "error": reply.object["error"] as? String ?? "",
            "suberror": reply.object["suberror"] as? String ?? "", "errorCode": record["errorCode"].map { "\($0)" } ?? "",
            "policies": Self.policyResults(record),
        ]
        return try await whatIf(request, context, session, form: fields, result: result)
    }

    /// The per-policy results of a sign-in record, with why each applied or not.
    static func policyResults(_ record: [String: Any]) -> [[String: Any]] {
        (record["appliedConditionalAccessPolicies"] as? [[String: Any]] ?? []).map { policy in
            var why: [String] = []
            let controls = policy["enforcedGrantControls"] as? [String] ?? []
            if !controls.isEmpty { why.append("requires \(controls.joined(separator: ", "))") }
            for result in policy["grantControlResults"] as? [[String: Any]] ?? [] {
                why.append("\(result["control"] as? String ?? ""): \((result["satisfied"] as? Bool ?? false) ? "met" : "not met")\((result["reason"] as? String).map { " (\($0))" } ?? "")")
            }
            let unmet = policy["conditionsNotSatisfied"] as? [String] ?? []
            if !unmet.isEmpty { why.append("conditions not met: \(unmet.joined(separator: ", "))") }
            return ["displayName": policy["displayName"] as? String ?? "", "result": policy["result"] as? String ?? "", "why": why.joined(separator: "; ")]
        }
    }

    func impact(_ request: Request, _ context: PortcullisRequestContext, _ session: Session) async throws -> Response {
        let fields = try await form(request, context, session)
        let draft = fields["draft"] ?? ""
        guard let parsed = try? JSONSerialization.jsonObject(with: Data(draft.utf8)), parsed is [String: Any] || parsed is [Any] else {
            return try await whatIf(request, context, session, form: nil, impactProblems: [["pointer": "/", "message": "is not a JSON object or array."]], draft: draft)
        }
        let policies = (parsed as? [Any]) ?? [parsed]
        let reply = try await api(.post, "/conditional-access/impact", json: try JSONSerialization.data(withJSONObject: ["policies": policies]), session, context)
        guard reply.status == .ok else {
            let problems = reply.problems.map { ["pointer": $0["pointer"] as? String ?? "", "message": $0["message"] as? String ?? ""] }
            return try await whatIf(request, context, session, form: nil, impactProblems: problems.isEmpty ? [["pointer": "/", "message": reply.message]] : problems, draft: draft)
        }
        let report = reply.object
        let summary = report["summary"] as? [String: Any] ?? [:]
        func outcome(_ value: Any?) -> String {
            let outcome = value as? [String: Any] ?? [:]
            return "\(outcome["status"] as? String ?? "")\((outcome["refusal"] as? String).map { " (\($0))" } ?? "")"
        }
        let changes: [[String: Any]] = (report["changes"] as? [[String: Any]] ?? []).prefix(100).map { change in
            ["at": Self.date(change["createdDateTime"]), "user": change["userPrincipalName"] as? String ?? change["userId"] as? String ?? "(app)",
             "app": change["clientAppId"] as? String ?? "", "before": outcome(change["before"]), "after": outcome(change["after"])]
        }
        let impact: [String: Any] = [
            "evaluated": report["evaluated"] ?? 0, "newlyRefused": summary["newlyRefused"] ?? 0, "newlyAllowed": summary["newlyAllowed"] ?? 0,
            "changed": summary["changed"] ?? 0, "unchanged": summary["unchanged"] ?? 0, "changes": changes,
        ]
        return try await whatIf(request, context, session, form: nil, impact: impact, draft: draft)
    }

    // MARK: Sign-ins

    func signIns(_ request: Request, _ context: PortcullisRequestContext, _ session: Session) async throws -> Response {
        let query = request.uri.queryParameters
        var forwarded: [(String, String)] = [("top", "50")]
        for name in ["user", "app", "status", "correlationId", "before"] {
            if let value = query.get(name), !value.isEmpty { forwarded.append((name, String(value))) }
        }
        let reply = try await api(.get, "/sign-ins", query: forwarded, session, context)
        var error: String?
        if reply.status != .ok { error = reply.problems.first.map { "\($0["pointer"] as? String ?? "") \($0["message"] as? String ?? "")" } ?? reply.message }
        let records: [[String: Any]] = reply.values.map { record in
            let status = record["conditionalAccessStatus"] as? String ?? ""
            let policies = Self.policyResults(record)
            return [
                "at": Self.date(record["createdDateTime"]), "user": record["userPrincipalName"] as? String ?? "(app)", "app": record["clientAppId"] as? String ?? "",
                "status": status, "statusLabel": ["success": "allowed", "failure": "refused", "notApplied": "allowed (no policy)"][status] ?? status,
                "errorCode": record["errorCode"].map { "\($0)" } ?? "", "correlationId": record["correlationId"] as? String ?? "",
                "resource": record["resource"] as? String ?? record["resourceAppId"] as? String ?? "", "grantType": record["grantType"] as? String ?? "",
                "platform": record["platform"] as? String ?? "—", "ip": record["ipAddress"] as? String ?? "—", "appProtection": record["appProtection"] as? String ?? "",
                "policies": policies, "policyCount": policies.count, "onePolicy": policies.count == 1,
            ]
        }
        var older: String?
        if let next = reply.object["nextLink"] as? String, let cursor = URLComponents(string: next)?.queryItems?.first(where: { $0.name == "before" })?.value {
            var components = URLComponents()
            components.path = basePath + "/admin/sign-ins"
            components.queryItems = forwarded.filter { $0.0 != "top" && $0.0 != "before" }.map { URLQueryItem(name: $0.0, value: $0.1) } + [URLQueryItem(name: "before", value: cursor)]
            older = components.string
        }
        var values: [String: Any] = [
            "records": records, "filter_user": query.get("user") ?? "", "filter_app": query.get("app") ?? "", "filter_correlationId": query.get("correlationId") ?? "",
            "statuses": Self.options([("", "any"), ("success", "allowed"), ("failure", "refused"), ("notApplied", "no policy")], selected: query.get("status") ?? ""),
        ]
        if let older { values["older"] = older }
        return console.page("signIns", title: "Sign-ins", session: session, context, values: values, current: "/admin/sign-ins", error: error,
                            status: reply.status == .ok ? .ok : .badRequest)
    }

    // MARK: Enrollments

    static let enrollmentLimit = 100

    func enrollments(_ request: Request, _ context: PortcullisRequestContext, _ session: Session) async throws -> Response {
        let query = request.uri.queryParameters
        var forwarded: [(String, String)] = []
        for name in ["account", "app", "status"] {
            if let value = query.get(name), !value.isEmpty { forwarded.append((name, String(value))) }
        }
        let skip = query.get("skip").flatMap { Int($0) }.map { max(0, min($0, 100_000)) } ?? 0
        let reply = try await api(.get, "/enrollments", query: forwarded + [("top", "\(Self.enrollmentLimit)"), ("skip", "\(skip)")], session, context)
        let rows: [[String: Any]] = reply.values.map { enrollment in
            let id = enrollment["id"] as? String ?? ""
            return ["href": "\(basePath)/admin/enrollments/\(Self.path(id))", "upn": enrollment["userPrincipalName"] as? String ?? "", "app": enrollment["clientId"] as? String ?? "",
                    "device": enrollment["deviceId"] as? String ?? "", "state": enrollment["state"] as? String ?? "", "lastCheckIn": Self.date(enrollment["lastCheckInAt"])]
        }
        let states = [("", "any")] + ["pending", "compliant", "notCompliant", "lapsed", "wipePending", "unenrolled"].map { ($0, $0) }
        return console.page("enrollments", title: "Enrollments", session: session, context, values: [
            "enrollments": rows, "pager": pager("/admin/enrollments", forwarded, skip: skip, limit: Self.enrollmentLimit, full: reply.object["nextLink"] != nil),
            "filter_account": query.get("account") ?? "", "filter_app": query.get("app") ?? "", "statuses": Self.options(states, selected: query.get("status") ?? ""),
        ], current: "/admin/enrollments", error: reply.status == .ok ? nil : reply.message, status: reply.status == .ok ? .ok : .badRequest)
    }

    func enrollment(_ request: Request, _ context: PortcullisRequestContext, _ session: Session) async throws -> Response {
        let id = context.parameters.get("id") ?? ""
        let reply = try await api(.get, "/enrollments/\(Self.path(id))", session, context)
        guard reply.status == .ok, let enrollment = reply.object["enrollment"] as? [String: Any] else { return notFound(context, session: session) }
        let history: [[String: Any]] = (reply.object["history"] as? [[String: Any]] ?? []).reversed().map { entry in
            let from = entry["fromStatus"] as? String, to = entry["toStatus"] as? String
            return ["at": Self.date(entry["at"]), "event": entry["event"] as? String ?? "", "detail": entry["detail"] as? String ?? "",
                    "change": from == to ? (to ?? "") : "\(from ?? "—") → \(to ?? "—")"]
        }
        let state = enrollment["state"] as? String ?? ""
        let status = enrollment["complianceStatus"] as? [String: Any] ?? [:]
        return console.page("enrollment", title: "Enrollment", session: session, context, values: [
            "upn": enrollment["userPrincipalName"] as? String ?? "", "app": enrollment["clientId"] as? String ?? "", "device": enrollment["deviceId"] as? String ?? "",
            "platform": enrollment["platform"] as? String ?? "", "osVersion": enrollment["osVersion"] as? String ?? "", "state": state,
            "status": (status["errorTitle"] as? String) ?? (status["status"] as? String ?? ""), "enrolledAt": Self.date(enrollment["enrolledAt"]),
            "lastCheckIn": Self.date(enrollment["lastCheckInAt"]), "appliedPolicyVersion": enrollment["appliedPolicyVersion"] as? String ?? "—",
            "canWipe": state != "unenrolled" && state != "wipePending", "wipeHref": "\(basePath)/admin/enrollments/\(Self.path(id))/wipe", "history": history,
        ], current: "/admin/enrollments", notice: notice(request))
    }

    func confirmWipe(_ request: Request, _ context: PortcullisRequestContext, _ session: Session) async throws -> Response {
        let id = context.parameters.get("id") ?? ""
        let reply = try await api(.get, "/enrollments/\(Self.path(id))", session, context)
        guard reply.status == .ok, let enrollment = reply.object["enrollment"] as? [String: Any] else { return notFound(context, session: session) }
        return console.page("confirm", title: "Wipe this app's work data?", session: session, context, values: [
            "question": "Wipe the work data of \(enrollment["userPrincipalName"] as? String ?? "") from app \(enrollment["clientId"] as? String ?? "") on device \(enrollment["deviceId"] as? String ?? "")?",
            "detail": "The account's tokens for this app stop at once; the app removes the account's data at its next check-in. This cannot be undone.",
            "action": "\(basePath)/admin/enrollments/\(Self.path(id))/wipe", "confirmLabel": "Wipe", "backHref": "\(basePath)/admin/enrollments/\(Self.path(id))",
        ], current: "/admin/enrollments")
    }

    func wipe(_ request: Request, _ context: PortcullisRequestContext, _ session: Session) async throws -> Response {
        let id = context.parameters.get("id") ?? ""
        _ = try await form(request, context, session)
        let reply = try await api(.post, "/enrollments/\(Self.path(id))/wipe", session, context)
        guard reply.status == .accepted || reply.status == .ok else {
            return console.page("failure", title: "Not wiped", session: session, context, values: [
                "message": reply.message, "href": "\(basePath)/admin/enrollments/\(Self.path(id))", "link": "Back to the enrollment",
            ], current: "/admin/enrollments", status: reply.status)
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

    func callbacks(_ request: Request, _ context: PortcullisRequestContext, _ session: Session) async throws -> Response {
        let state = request.uri.queryParameters.get("state") ?? "pending"
        let tabs = [("pending", "Pending"), ("deadLetter", "Dead letters"), ("delivered", "Delivered")]
        guard tabs.contains(where: { $0.0 == state }) else { return notFound(context, session: session) }
        let skip = request.uri.queryParameters.get("skip").flatMap { Int($0) }.map { max(0, min($0, 100_000)) } ?? 0
        let reply = try await api(.get, "/outbox", query: [("state", state), ("top", "\(Self.enrollmentLimit)"), ("skip", "\(skip)")], session, context)
        let csrf = console.csrfToken(session)
        let rows: [[String: Any]] = reply.values.map { message in
            let id = message["id"].map { "\($0)" } ?? ""
            var row: [String: Any] = ["createdAt": Self.date(message["createdAt"]), "target": message["targetUri"] as? String ?? ""]
            row["attempts"] = message["attempts"] ?? 0
            row["lastError"] = message["lastError"] as? String ?? ""
            row["canRedeliver"] = (message["state"] as? String) == "deadLetter"
            row["redeliverAction"] = "\(basePath)/admin/callbacks/\(Self.path(id))/redeliver"
            row["csrf"] = csrf
            return row
        }
        return console.page("callbacks", title: "Callbacks", session: session, context, values: [
            "messages": rows, "pager": pager("/admin/callbacks", [("state", state)], skip: skip, limit: Self.enrollmentLimit, full: reply.object["nextLink"] != nil),
            "tabs": tabs.map { ["label": $0.1, "href": "\(basePath)/admin/callbacks?state=\($0.0)", "current": $0.0 == state] as [String: Any] },
        ], current: "/admin/callbacks", notice: notice(request))
    }

    func redeliver(_ request: Request, _ context: PortcullisRequestContext, _ session: Session) async throws -> Response {
        let id = context.parameters.get("id") ?? ""
        _ = try await form(request, context, session)
        let reply = try await api(.post, "/outbox/\(Self.path(id))/redeliver", session, context)
        guard reply.status.code < 300 else {
            return console.page("failure", title: "Not redelivered", session: session, context, values: [
                "message": reply.message, "href": "\(basePath)/admin/callbacks?state=deadLetter", "link": "Back to the dead letters",
            ], current: "/admin/callbacks", status: reply.status)
        }
        return ConsoleRoutes.redirect("\(basePath)/admin/callbacks?state=pending&done=redelivered")
    }

    // MARK: Audit

    func audit(_ request: Request, _ context: PortcullisRequestContext, _ session: Session) async throws -> Response {
        var forwarded: [(String, String)] = [("top", "50")]
        if let before = request.uri.queryParameters.get("before"), !before.isEmpty { forwarded.append(("before", String(before))) }
        let reply = try await api(.get, "/audit", query: forwarded, session, context)
        let rows: [[String: Any]] = reply.values.map { record in
            func parsed(_ key: String) -> Any? { record[key].flatMap { $0 is NSNull ? nil : $0 } }
            let lines = JSONDiff.lines(from: parsed("before").map(JSONDiff.maskedValue), to: parsed("after").map(JSONDiff.maskedValue))
            let diff: [[String: Any]] = lines.map { line in
                ["line": line, "sign": line.hasPrefix("+") ? "plus" : line.hasPrefix("-") ? "minus" : "change"]
            }
            return ["at": Self.date(record["at"]), "actor": record["actor"] as? String ?? "", "action": record["action"] as? String ?? "",
                    "kind": record["kind"] as? String ?? "", "documentId": record["documentId"] as? String ?? "", "diff": diff, "hasDiff": !diff.isEmpty,
                    "diffCount": diff.count, "plural": diff.count != 1]
        }
        var values: [String: Any] = ["records": rows]
        if let next = reply.object["nextLink"] as? String, let cursor = URLComponents(string: next)?.queryItems?.first(where: { $0.name == "before" })?.value {
            values["older"] = "\(basePath)/admin/audit?before=\(cursor)"
        }
        return console.page("audit", title: "Audit", session: session, context, values: values, current: "/admin/audit")
    }

    // MARK: Directory and app configuration

    func directory(_ request: Request, _ context: PortcullisRequestContext, _ session: Session) async throws -> Response {
        func section(_ slug: String, _ title: String, detailTitle: String, detail: ([String: Any]) -> String) async throws -> [String: Any] {
            let kind = Self.kinds[slug]!
            let rows: [[String: Any]] = try await api(.get, kind.collection, session, context).values.map { item in
                let id = item[kind.idKey] as? String ?? ""
                return ["name": item[kind.nameKey] as? String ?? id, "id": id, "href": "\(basePath)/admin/edit/\(slug)/\(Self.path(id))", "detail": detail(item)]
            }
            return ["slug": slug, "title": title, "noun": kind.noun, "newHref": "\(basePath)/admin/new/\(slug)", "detailTitle": detailTitle, "rows": rows]
        }
        let sections = [
            try await section("users", "Users", detailTitle: "Enabled") { ($0["accountEnabled"] as? Bool ?? true) ? "yes" : "no" },
            try await section("groups", "Groups", detailTitle: "Members") { "\(($0["members"] as? [Any])?.count ?? 0)" },
            try await section("applications", "Applications", detailTitle: "Kind") { app in
                var kinds: [String] = [(app["publicClient"] as? Bool ?? false) ? "public client" : "confidential client"]
                if !((app["identifierUris"] as? [String]) ?? []).isEmpty { kinds.append("API") }
                // API permissions (PROTOCOL §11): how many resources it may call.
                let calls = (app["requiredResourceAccess"] as? [Any])?.count ?? 0
                if calls > 0 { kinds.append("calls \(calls) API\(calls == 1 ? "" : "s")") }
                return kinds.joined(separator: ", ")
            },
            try await section("named-locations", "Named locations", detailTitle: "Trusted") { ($0["isTrusted"] as? Bool ?? false) ? "yes" : "no" },
        ]
        return console.page("directory", title: "Directory", session: session, context, values: ["sections": sections], current: "/admin/directory", notice: notice(request))
    }

    func appConfiguration(_ request: Request, _ context: PortcullisRequestContext, _ session: Session) async throws -> Response {
        let rows: [[String: Any]] = try await api(.get, "/app-configuration/policies", session, context).values.map { policy in
            let id = policy["id"] as? String ?? ""
            let secrets = (policy["secrets"] as? [[String: Any]] ?? []).compactMap { $0["identifier"] as? String }
            return ["displayName": policy["displayName"] as? String ?? id, "href": "\(basePath)/admin/edit/app-configuration/\(Self.path(id))",
                    "priority": policy["priority"] ?? "", "apps": "\(((policy["targets"] as? [String: Any])?["applications"] as? [Any])?.count ?? 0)",
                    "secrets": secrets.isEmpty ? "—" : secrets.joined(separator: ", ")]
        }
        return console.page("appConfiguration", title: "App configuration", session: session, context, values: ["policies": rows],
                            current: "/admin/app-configuration", notice: notice(request))
    }
}

/// Starting points for new documents: valid in shape, safe to save (new conditional access starts report-only).
enum ConsoleDocumentTemplates {
    static let conditionalAccessLabels = [("mfa", "Require MFA for everyone"), ("appProtection", "Require app protection on iOS and Android"),
                                          ("block", "Block access from outside trusted locations")]
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
      "requiredResourceAccess": []
    }
    """
    static let namedLocation = """
    {
      "displayName": "New location",
      "ipRanges": ["203.0.113.0/24"],
      "isTrusted": false
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
            return "{\n" + members.keys.sorted().map { key in
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
