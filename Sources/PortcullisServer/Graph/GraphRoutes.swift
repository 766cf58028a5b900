import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import PortcullisCore
import PortcullisStorage
import PortcullisTokens

/// The admin API in Microsoft Graph's shape (PROTOCOL §20): `{base}/v1.0/…` and `{base}/beta/…`, the tenant the token's,
/// over the same documents, validation, audit and ETags as `/admin/v1` — this is presentation and OData, never a second
/// model. A request is authorised by Graph's permission names (the token's app roles, or its delegated scopes and the
/// user's directory roles, PROTOCOL §17), answered in Graph's shapes and with Graph's errors; `$batch` runs up to 20.
struct GraphRoutes: Sendable {
    let endpoints: ServerEndpoints
    let tenants: TenantCache
    let clock: any WallClock
    let authenticator: BearerAuthenticator
    let sets: [GraphEntitySet]

    static let versions = ["v1.0", "beta"]
    /// The application permission that may change objects holding administrative rights (it can grant roles itself).
    static let privilegedPermission = "RoleManagement.ReadWrite.Directory"
    /// The most requests one `$batch` carries, as Graph.
    static let batchLimit = 20

    func register(on router: Router<PortcullisRequestContext>) {
        for version in Self.versions {
            let group = router.group(RouterPath(version))
            for method: HTTPRequest.Method in [.get, .post, .patch, .delete] {
                group.on("**", method: method) { request, context in await handle(request, context, version: version) }
            }
        }
    }

    // MARK: Requests

    /// One Graph request, whether it came over HTTP or inside a `$batch`.
    struct Call: Sendable {
        let version: String
        let method: HTTPRequest.Method
        /// The path under the version, `//` collapsed, percent-decoded per segment.
        let segments: [String]
        let query: [String: String]
        let headers: HTTPFields
        let body: JSONValue?
        let caller: Caller
        let tenant: TenantSnapshot
        /// `https://host/v1.0`: where this request's absolute links point (the host the client used, when it names one).
        let root: String

        var writing: Bool { method != .get && method != .head }
        /// The same request as a GET without query options: what `$expand` asks of a navigation.
        var expanding: Call {
            Call(version: version, method: .get, segments: segments, query: [:], headers: headers, body: nil, caller: caller, tenant: tenant, root: root)
        }
        /// `Prefer: include-unknown-enum-members`: the client reads evolvable enumerations' late members.
        var includesLateEnumMembers: Bool {
            headers[values: HTTPField.Name("Prefer")!].contains { $0.range(of: "include-unknown-enum-members", options: .caseInsensitive) != nil }
        }
        var eventualConsistency: Bool { headers[HTTPField.Name("ConsistencyLevel")!]?.equalsIgnoringCase("eventual") == true }
    }

    /// Who calls: the token's claims, the Graph permissions it holds now, and (delegated) the user's directory roles.
    struct Caller: Sendable {
        let claims: AccessTokenClaims
        let permissions: Set<String>
        let directoryRoles: [RoleID]?
        let directory: DirectorySnapshot
        var actor: String { claims.actor }
    }

    /// What a Graph request answers.
    struct Answer: Sendable {
        var status: HTTPResponse.Status
        var body: JSONValue?
        var headers: HTTPFields = [:]
        /// A body that is not JSON (`$count`'s number).
        var text: String?

        static func json(_ status: HTTPResponse.Status, _ body: JSONValue, headers: HTTPFields = [:]) -> Answer {
            Answer(status: status, body: body, headers: headers)
        }
        static let noContent = Answer(status: .noContent, body: nil)

        /// A collection that is not an entity set (a navigation, an action's results): `@odata.context` and `value`.
        static func collection(_ call: Call, context: String, _ values: [JSONValue]) -> Answer {
            .json(.ok, ["@odata.context": .string("\(call.root)/$metadata#\(context)"), "value": .array(values)])
        }
    }

    func handle(_ request: Request, _ context: PortcullisRequestContext, version: String) async -> Response {
        let answer: Answer
        do {
            let caller = try await caller(request)
            guard let tenant = try await tenants.snapshot(id: TenantID(caller.claims.tid)) else { throw APIError.unauthenticated }
            var request = request
            var body: JSONValue?
            if request.method == .post || request.method == .patch {
                let buffer = try await request.collectBody(upTo: context.maxUploadSize)
                if buffer.readableBytes > 0 {
                    guard let value = JSONValue.parse(Data(buffer.readableBytesView)) else { throw APIError.malformedJSON() }
                    body = value
                }
            }
            let call = Call(
                version: version, method: request.method, segments: Self.segments(context.parameters.getCatchAll().map(String.init)),
                query: Self.query(request.uri.query ?? ""), headers: request.headers, body: body, caller: caller, tenant: tenant,
                root: root(request, version: version))
            answer = try await dispatch(call, batch: true)
        } catch {
            answer = Self.errorAnswer(error, context: context, clientRequestId: request.headers[HTTPField.Name("client-request-id")!])
        }
        return Self.response(answer)
    }

    static func response(_ answer: Answer) -> Response {
        if let text = answer.text {
            return JSONResponse.make(status: answer.status, data: Data(text.utf8), contentType: "text/plain; charset=utf-8", headers: answer.headers)
        }
        guard let body = answer.body else { return Response(status: answer.status, headers: answer.headers) }
        return JSONResponse.make(status: answer.status, body, headers: answer.headers)
    }

    /// The absolute root of this request's links: the scheme of the server's base URL and the host the client named (a
    /// client that reached this server as `graph.microsoft.com` follows links there), else the base URL.
    func root(_ request: Request, version: String) -> String {
        let base = endpoints.baseURL
        if let host = request.head.authority, !host.isEmpty, host.utf8.count <= 255,
            host.utf8.allSatisfy({
                ($0 >= 0x30 && $0 <= 0x3A) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) || $0 == 0x2E || $0 == 0x2D || $0 == 0x5B || $0 == 0x5D
            }),
            let scheme = base.split(separator: ":").first
        {
            return "\(scheme)://\(host)/\(version)"
        }
        return "\(base)/\(version)"
    }

    static func segments(_ raw: [String]) -> [String] {
        raw.filter { !$0.isEmpty }.map { $0.removingPercentEncoding ?? $0 }
    }

    /// The query's options by name, names and values percent-decoded: the SDKs send `%24filter` (Hummingbird's
    /// `queryParameters` leaves names encoded). The first of a repeated name counts; at most 32 names are read.
    static func query(_ text: String) -> [String: String] {
        var query: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            let name = (parts[0].replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? parts[0])
            let value = parts.count > 1 ? (parts[1].replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? parts[1]) : ""
            if query[name] == nil, query.count < 32 { query[name] = value }
        }
        return query
    }

    /// The token checked as every admin request's is (signature, issuer, audience Graph, revocation, binding), and the
    /// permissions it holds now: app roles still assigned to the app on Graph, or delegated scopes the user's directory
    /// roles back. A revoked token of a client that handles claims challenges (`xms_cc` `cp1`) is challenged for a new
    /// one, as Graph does under continuous access evaluation (PROTOCOL §14.3).
    func caller(_ request: Request) async throws -> Caller {
        let now = clock.now()
        let verified = try await authenticator.admit(request, directoryRoles: false) { claims in
            guard claims.xmsCC?.contains("cp1") == true else { return APIError.unauthenticated }
            let challenge = Data(#"{"access_token":{"nbf":{"essential":true,"value":"\#(Int(now.timeIntervalSince1970))"}}}"#.utf8).base64EncodedString()
            return APIError(
                .unauthorized, "InvalidAuthenticationToken",
                "Continuous access evaluation resulted in challenge with result: InteractionRequired and code: TokenIssuedBeforeRevocationTimestamp",
                headers: [
                    .wwwAuthenticate:
                        #"Bearer realm="", authorization_uri="\#(endpoints.baseURL)/\#(claims.tid)/oauth2/v2.0/authorize", client_id="00000003-0000-0000-c000-000000000000", error="insufficient_claims", claims="\#(challenge)""#
                ])
        }
        let claims = verified.claims
        let directory = verified.directory
        if claims.isDelegated {
            let scopes = Set((claims.scp ?? "").split(separator: " ").map(String.init))
            let roles = directory.roleIds(ofUser: ObjectID(claims.oid ?? ""))
            return Caller(claims: claims, permissions: scopes, directoryRoles: roles, directory: directory)
        }
        let assigned = Set(directory.roles(ofPrincipal: PrincipalID(claims.azp), on: BuiltInResources.graph))
        return Caller(claims: claims, permissions: Set(claims.roles ?? []).intersection(assigned), directoryRoles: nil, directory: directory)
    }

    // MARK: Dispatch

    func dispatch(_ call: Call, batch allowed: Bool) async throws -> Answer {
        if call.segments == ["$batch"] {
            guard allowed, call.method == .post else { throw GraphError(.badRequest, "BadRequest", "$batch takes a POST and does not nest.") }
            return try await batch(call)
        }
        if call.segments == ["$metadata"] { throw GraphError(.notFound, "Request_ResourceNotFound", "$metadata is not served; the SDKs do not need it.") }
        guard let (set, rest) = set(for: call.segments) else {
            throw GraphError(
                .badRequest, "BadRequest", "Resource not found for the segment '\(call.segments.first?.prefix(64) ?? "")'.")
        }
        try authorize(call, set: set, rest: rest)
        return try await set.answer(call, rest: rest)
    }

    /// The entity set the path names (the longest match), and the segments after it. `name(appId='…')` is an alternate key.
    func set(for segments: [String]) -> (GraphEntitySet, [String])? {
        var best: (GraphEntitySet, [String])?
        for set in sets where segments.count >= set.path.count {
            var matches = true
            var rest = Array(segments.dropFirst(set.path.count))
            for (index, part) in set.path.enumerated() {
                let given = segments[index]
                if given == part { continue }
                // `servicePrincipals(appId='…')`: the set, then that key.
                if index == set.path.count - 1, given.hasPrefix(part + "("), given.hasSuffix(")") {
                    rest.insert(String(given.dropFirst(part.count)), at: 0)
                    continue
                }
                matches = false
                break
            }
            if matches, best.map({ $0.0.path.count < set.path.count }) ?? true { best = (set, rest) }
        }
        return best
    }

    /// Graph's permissions for the set (any of its read or write names), and for a delegated call the user's directory
    /// roles as the admin API checks them (`AdminAuthorization`, privileged targets included).
    func authorize(_ call: Call, set: GraphEntitySet, rest: [String]) throws {
        let writing = call.writing && !set.postIsRead
        let permissions = rest.count >= 2 ? set.belowPermissions[rest[1]] ?? set.permissions : set.permissions
        guard permissions.allows(call.caller.permissions, writing: writing) else {
            throw GraphError(
                .forbidden, "Authorization_RequestDenied",
                "Insufficient privileges to complete the operation. This request needs one of: \(permissions.needed(writing: writing)).")
        }
        // The object the request is about, by its ID (a user named by UPN too), in the admin API's terms.
        let path = ([set.adminPath] + rest.prefix(1).map { set.key($0, call) }).joined(separator: "/")
        if let roles = call.caller.directoryRoles {
            do {
                try BearerAuthenticator.authorize(roles: roles, method: writing ? call.method.rawValue : "GET", path: path, directory: call.caller.directory)
            } catch {
                throw GraphError(
                    .forbidden, "Authorization_RequestDenied", "Insufficient privileges to complete the operation: your directory roles do not allow this.")
            }
        } else if writing, BearerAuthenticator.isPrivilegedTarget(path: path, directory: call.caller.directory),
            !call.caller.permissions.contains(Self.privilegedPermission)
        {
            // An application may not take administrative rights by changing who holds them (a Global Administrator's
            // password, a role-holding group's members) with a directory permission: that needs the permission that
            // grants roles anyway, as Entra protects privileged accounts from User.ReadWrite.All.
            throw GraphError(
                .forbidden, "Authorization_RequestDenied",
                "Insufficient privileges to complete the operation: this object holds administrative rights; changing it needs \(Self.privilegedPermission).")
        }
    }

    /// `$batch` (JSON batching): up to 20 requests, run in order with the batch's caller, each answered on its own.
    func batch(_ call: Call) async throws -> Answer {
        guard let requests = call.body?["requests"]?.arrayValue else {
            throw GraphError(.badRequest, "BadRequest", "A batch is {\"requests\": [{\"id\", \"method\", \"url\", …}]}.")
        }
        guard requests.count <= Self.batchLimit else {
            throw GraphError(.badRequest, "BadRequest", "A batch carries at most \(Self.batchLimit) requests, not \(requests.count).")
        }
        var ids = Set<String>()
        var responses: [JSONValue] = []
        for item in requests {
            let id = item["id"]?.stringValue ?? ""
            var answer: Answer
            do {
                guard !id.isEmpty, ids.insert(id).inserted else { throw GraphError(.badRequest, "BadRequest", "Each request of a batch has its own id.") }
                guard let methodName = item["method"]?.stringValue, let method = HTTPRequest.Method(methodName.uppercased()),
                    [.get, .post, .patch, .put, .delete].contains(method), let url = item["url"]?.stringValue, url.utf8.count <= 4096
                else { throw GraphError(.badRequest, "BadRequest", "A batch request needs a method (GET, POST, PATCH, PUT, DELETE) and a url.") }
                var path = Substring(url)
                var queryText = ""
                if let mark = url.firstIndex(of: "?") {
                    path = url[..<mark]
                    queryText = String(url[url.index(after: mark)...])
                }
                // Relative to the version root; an absolute URL or one naming the version is read the same way.
                var parts = path.split(separator: "/").map(String.init)
                if let index = parts.firstIndex(where: { Self.versions.contains($0) }) { parts = Array(parts[(index + 1)...]) }
                var headers = call.headers
                for (name, value) in item["headers"]?.objectValue ?? [:] {
                    if let field = HTTPField.Name(name), let text = value.stringValue { headers[field] = text }
                }
                let inner = Call(
                    version: call.version, method: method, segments: Self.segments(parts), query: Self.query(queryText), headers: headers,
                    body: item["body"], caller: call.caller, tenant: try await tenants.snapshot(id: call.tenant.tenant.id) ?? call.tenant, root: call.root)
                answer = try await dispatch(inner, batch: false)
            } catch {
                answer = Self.errorAnswer(error, context: nil, clientRequestId: call.headers[HTTPField.Name("client-request-id")!])
            }
            var headers: [String: JSONValue] = [:]
            for field in answer.headers where field.name != .cacheControl && field.name != .pragma { headers[field.name.rawName] = .string(field.value) }
            if answer.body != nil { headers["Content-Type"] = "application/json" }
            var response: [String: JSONValue] = ["id": .string(id), "status": .number(Double(answer.status.code)), "headers": .object(headers)]
            if let body = answer.body { response["body"] = body }
            if let text = answer.text { response["body"] = .string(text) }
            responses.append(.object(response))
        }
        return .json(.ok, .object(["responses": .array(responses)]))
    }

    // MARK: Errors

    /// Graph's error body: `{"error": {"code", "message", "innerError": {"date", "request-id", "client-request-id"}}}`,
    /// with a validation failure's problems as `details` (`target` the JSON Pointer).
    static func errorAnswer(_ error: any Error, context: PortcullisRequestContext?, clientRequestId: String?) -> Answer {
        let graph: GraphError
        switch error {
        case let error as GraphError: graph = error
        case let error as APIError: graph = GraphError(error)
        case let error as ValidationError: graph = GraphError(APIError.validation(error))
        case let error as ODataQuery.Refusal: graph = GraphError(.badRequest, error.code, error.message)
        case let error as DocumentRefusal: graph = GraphError(APIError(error))
        case let error as any HTTPResponseError where error.status.code < 500:
            graph = GraphError(error.status, error.status == .contentTooLarge ? "RequestEntityTooLarge" : "BadRequest", error.status.reasonPhrase)
        case let error as StorageError:
            graph = APIError.from(error, what: "The object").map(GraphError.init) ?? GraphError(.internalServerError, "generalException", "An error occurred.")
        default: graph = GraphError(.internalServerError, "generalException", "An error occurred; the request ID identifies it in the server's log.")
        }
        var inner: [String: JSONValue] = [
            "date": .string(Date().formatted(.iso8601)), "request-id": .string(context?.traceId ?? RecordID.generate().rawValue),
        ]
        if let clientRequestId { inner["client-request-id"] = .string(String(clientRequestId.prefix(128))) }
        var object: [String: JSONValue] = ["code": .string(graph.code), "message": .string(graph.message), "innerError": .object(inner)]
        if !graph.details.isEmpty {
            object["details"] = .array(
                graph.details.map { .object(["code": "invalidValue", "message": .string($0.message), "target": .string($0.pointer)]) })
        }
        return Answer(status: graph.status, body: .object(["error": .object(object)]), headers: graph.headers)
    }
}

/// A refusal in Graph's terms: its status, its code (`Request_ResourceNotFound`, `Authorization_RequestDenied`, …) and a
/// sentence; a validation failure's problems with their pointers.
struct GraphError: Error, Sendable {
    let status: HTTPResponse.Status
    let code: String
    let message: String
    var details: [ValidationProblem] = []
    var headers: HTTPFields = [:]

    init(_ status: HTTPResponse.Status, _ code: String, _ message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    /// The admin API's refusal in Graph's codes.
    init(_ error: APIError) {
        status = error.status
        message = error.message
        details = error.details
        headers = error.headers
        switch error.status {
        case .badRequest: code = error.code == "malformedJSON" ? "BadRequest" : "Request_BadRequest"
        case .unauthorized: code = "InvalidAuthenticationToken"
        case .forbidden: code = "Authorization_RequestDenied"
        case .notFound: code = "Request_ResourceNotFound"
        case .conflict: code = error.code == "alreadyExists" ? "Request_MultipleObjectsWithSameKeyValue" : "Request_BadRequest"
        case .preconditionFailed: code = "PreconditionFailed"
        case .methodNotAllowed: code = "Request_BadRequest"
        case .contentTooLarge: code = "RequestEntityTooLarge"
        default: code = error.status.code >= 500 ? "generalException" : "BadRequest"
        }
    }
}
