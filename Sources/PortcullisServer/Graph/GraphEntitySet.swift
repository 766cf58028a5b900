import Foundation
import HTTPTypes
import Hummingbird
import PortcullisCore
import PortcullisStorage

/// One collection of the Graph API (`identity/conditionalAccess/policies`, `users`, …): where it is, what it needs, and
/// how it reads and writes — for a kind of tenant document, through its `DocumentResource` (`GraphEntitySet.documents`),
/// so that exposing a kind in Graph's shape is this one registration beside its `/admin/v1` one.
struct GraphEntitySet: Sendable {
    /// The path under the version root.
    let path: [String]
    /// The Graph type of the collection's members (`GraphSchema`), for `$select`/`$filter` and `@odata.context`.
    let type: String
    let permissions: GraphPermission.Requirement
    /// The admin API's path of the same documents: a delegated caller's directory roles are checked against it.
    let adminPath: String
    /// A directory object collection: `$count` needs `ConsistencyLevel: eventual`, as in Graph.
    var isDirectoryObject = false
    /// A POST that only asks (what-if).
    var postIsRead = false
    var expandable: Set<String> = []
    /// The Graph type of one member, when the collection holds several (named locations).
    var typeOf: @Sendable (JSONValue) -> String

    /// Every document, in Graph's shape (completed and selected by the caller of these closures).
    let list: @Sendable (GraphRoutes.Call) async throws -> [JSONValue]
    /// One document and its version (its ETag), or `nil`.
    var read: @Sendable (GraphRoutes.Call, String) async throws -> (document: JSONValue, version: Int64?)?
    var create: (@Sendable (GraphRoutes.Call, JSONValue) async throws -> (document: JSONValue, version: Int64?))? = nil
    /// A partial update: the body's members over the stored document's.
    var update: (@Sendable (GraphRoutes.Call, String, JSONValue, WritePrecondition?) async throws -> Void)? = nil
    var remove: (@Sendable (GraphRoutes.Call, String, WritePrecondition?) async throws -> Void)? = nil
    /// What lies under one member: navigation properties and actions (`members`, `revokeSignInSessions`), by name.
    var below: [String: @Sendable (GraphRoutes.Call, String, [String]) async throws -> GraphRoutes.Answer] = [:]
    /// An action at the set's own path (`identity/conditionalAccess/evaluate`): it answers every request there.
    var action: (@Sendable (GraphRoutes.Call) async throws -> GraphRoutes.Answer)? = nil
    /// Another name for a member's key (a user's UPN) resolved to its ID, as Graph accepts `users/{upn}`.
    var resolveKey: (@Sendable (GraphRoutes.Call, String) -> String)? = nil
    /// What a navigation or action needs, where it is not what the collection needs.
    var belowPermissions: [String: GraphPermission.Requirement] = [:]

    init(
        path: String, type: String, permissions: GraphPermission.Requirement, adminPath: String,
        typeOf: (@Sendable (JSONValue) -> String)? = nil,
        list: @escaping @Sendable (GraphRoutes.Call) async throws -> [JSONValue],
        read: (@Sendable (GraphRoutes.Call, String) async throws -> (document: JSONValue, version: Int64?)?)? = nil
    ) {
        self.path = path.split(separator: "/").map(String.init)
        self.type = type
        self.permissions = permissions
        self.adminPath = adminPath
        self.typeOf = typeOf ?? { _ in type }
        self.list = list
        self.read =
            read ?? { call, id in
                try await list(call).first { $0["id"]?.stringValue?.equalsIgnoringCase(id) == true }.map { ($0, nil) }
            }
    }

    var pathText: String { path.joined(separator: "/") }

    /// A document as this request shows it: complete, late enumeration members hidden unless asked for, selected.
    func shown(_ document: JSONValue, call: GraphRoutes.Call, query: ODataQuery?) -> JSONValue {
        let type = typeOf(document)
        var shown = GraphSchema.complete(document, type: type)
        if !call.includesLateEnumMembers { shown = EvolvableEnums.hidingLateMembers(shown, type: type) }
        return query?.selected(shown) ?? shown
    }

    func answer(_ call: GraphRoutes.Call, rest: [String]) async throws -> GraphRoutes.Answer {
        let context = "\(call.root)/$metadata#\(pathText)"
        if let action {
            guard rest.isEmpty, call.method == .post else { throw GraphError(.methodNotAllowed, "Request_BadRequest", "\(pathText) is a POST.") }
            return try await action(call)
        }
        switch (call.method, rest.count) {
        case (.get, 0):
            let query = try ODataQuery.read(type: type, expandable: expandable) { call.query[$0] }
            if query.count && isDirectoryObject && !call.eventualConsistency {
                throw GraphError(.badRequest, "Request_BadRequest", "$count on directory objects needs the header ConsistencyLevel: eventual.")
            }
            let all = try await list(call).map { shown($0, call: call, query: nil) }
            let page = query.page(all, pageSize: 100)
            var value: [JSONValue] = []
            for document in page.value {
                guard case .object(var object) = query.selected(document) else { continue }
                if let id = document["id"]?.stringValue {
                    for name in query.expand { object[name] = try await below[name]?(call.expanding, id, []).body?["value"] ?? .array([]) }
                }
                value.append(.object(object))
            }
            var body: [String: JSONValue] = ["@odata.context": .string(context), "value": .array(value)]
            if query.count { body["@odata.count"] = .number(Double(page.count)) }
            if let next = page.next { body["@odata.nextLink"] = .string(nextLink(call, position: next)) }
            return .json(.ok, .object(body))
        case (.get, 1) where rest[0] == "$count":
            if isDirectoryObject && !call.eventualConsistency {
                throw GraphError(.badRequest, "Request_BadRequest", "$count on directory objects needs the header ConsistencyLevel: eventual.")
            }
            let query = try ODataQuery.read(type: type) { call.query[$0] }
            let all = try await list(call).map { shown($0, call: call, query: nil) }
            return GraphRoutes.Answer(status: .ok, body: nil, text: String(query.page(all, pageSize: Int.max).count))
        case (.get, 1):
            let query = try ODataQuery.read(type: type, expandable: expandable) { call.query[$0] }
            guard let found = try await read(call, key(rest[0], call)) else { throw notFound(rest[0]) }
            guard case .object(var object) = shown(found.document, call: call, query: query) else { throw notFound(rest[0]) }
            object["@odata.context"] = .string("\(context)/$entity")
            for name in query.expand {
                if let navigation = below[name] {
                    object[name] = try await navigation(call.expanding, key(rest[0], call), []).body?["value"] ?? .array([])
                }
            }
            return .json(.ok, .object(object), headers: found.version.map { [.eTag: DocumentETag.etag($0)] } ?? [:])
        case (.post, 0):
            guard let create else { throw notWritable() }
            guard let body = call.body else { throw GraphError(.badRequest, "BadRequest", "The request needs a JSON body.") }
            let made = try await create(call, body)
            guard case .object(var object) = shown(made.document, call: call, query: nil) else { throw notWritable() }
            object["@odata.context"] = .string("\(context)/$entity")
            var headers: HTTPFields = [:]
            if let id = made.document["id"]?.stringValue { headers[.location] = "\(call.root)/\(pathText)/\(id)" }
            if let version = made.version { headers[.eTag] = DocumentETag.etag(version) }
            return .json(.created, .object(object), headers: headers)
        case (.patch, 1):
            guard let update else { throw notWritable() }
            guard let body = call.body, body.objectValue != nil else { throw GraphError(.badRequest, "BadRequest", "PATCH takes a JSON object.") }
            try await update(call, key(rest[0], call), body, try precondition(call))
            return .noContent
        case (.delete, 1):
            guard let remove else { throw notWritable() }
            try await remove(call, key(rest[0], call), try precondition(call))
            return .noContent
        default:
            if rest.count >= 2, let navigation = below[rest[1]] {
                return try await navigation(call, key(rest[0], call), Array(rest.dropFirst(2)))
            }
            throw GraphError(.methodNotAllowed, "Request_BadRequest", "\(call.method.rawValue) is not supported on this resource.")
        }
    }

    /// `If-Match`, honoured when sent and never required (the SDKs send none, PROTOCOL §20).
    func precondition(_ call: GraphRoutes.Call) throws -> WritePrecondition? {
        guard let header = call.headers[.ifMatch] else { return nil }
        return try DocumentETag.precondition(ifMatch: header)
    }

    /// The key in a path segment: an ID, or `(appId='…')` / `(id='…')` alternate keys; `resolveKey` may turn another
    /// name for a member (a user's UPN) into its ID.
    func key(_ segment: String, _ call: GraphRoutes.Call) -> String {
        var key = segment
        if segment.hasPrefix("("), segment.hasSuffix(")") {
            let inner = segment.dropFirst().dropLast()
            key =
                inner.firstIndex(of: "=").map { String(inner[inner.index(after: $0)...]).trimmingCharacters(in: CharacterSet(charactersIn: "'")) }
                ?? String(inner)
        }
        return resolveKey?(call, key) ?? key
    }

    func notFound(_ id: String) -> GraphError { GraphError.notFound(id) }
}

extension GraphError {
    static func notFound(_ id: String) -> GraphError {
        GraphError(
            .notFound, "Request_ResourceNotFound",
            "Resource '\(id.prefix(128))' does not exist or one of its queried reference-property objects are not present.")
    }
}

extension GraphEntitySet {
    func notWritable() -> GraphError {
        GraphError(.methodNotAllowed, "Request_BadRequest", "\(pathText) is read-only through Graph here; the admin API (/admin/v1) changes it.")
    }

    /// The absolute link to the page from `position`, with the request's other options.
    func nextLink(_ call: GraphRoutes.Call, position: Int) -> String {
        var components = URLComponents()
        components.queryItems =
            call.query.filter { $0.key != "$skiptoken" && $0.key != "skiptoken" }.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) }
            + [URLQueryItem(name: "$skiptoken", value: SkipToken.make(position: position))]
        return "\(call.root)/\(pathText)?\(components.percentEncodedQuery ?? "")"
    }
}

extension GraphEntitySet {
    /// A kind of tenant document through its `DocumentResource`: the same list, read, validation, write path, audit and
    /// effects as `/admin/v1` (whose path, from `DocumentKind.registry`, a delegated caller's roles are checked against).
    /// `toGraph` turns a document as the admin API shows it into Graph's shape, `fromGraph` a
    /// Graph body into the admin API's (a PATCH's members go over the stored document's first).
    static func documents<Document: AdministeredDocument>(
        _ resource: DocumentResource<Document>, path: String, type: String, permissions: GraphPermission.Requirement,
        typeOf: (@Sendable (JSONValue) -> String)? = nil,
        toGraph: @escaping @Sendable (JSONValue, TenantSnapshot) -> JSONValue = { value, _ in value },
        fromGraph: @escaping @Sendable (JSONValue, TenantSnapshot) throws -> JSONValue = { value, _ in value }
    ) -> GraphEntitySet {
        var set = GraphEntitySet(
            path: path, type: type, permissions: permissions, adminPath: Document.kind.adminPath ?? Document.kind.rawValue, typeOf: typeOf,
            list: { call in
                try await resource.list(call.tenant, top: Int.max, skip: 0).map { toGraph($0.document.presented(in: call.tenant), call.tenant) }
            },
            read: { call, id in
                try await resource.read(call.tenant, id: id).map { (toGraph($0.document.presented(in: call.tenant), call.tenant), $0.version) }
            })
        set.create = { call, body in
            var value = try fromGraph(GraphBody.cleaned(body), call.tenant)
            // `id` is read-only on create, as in Graph: the server makes one.
            if case .object(var object) = value, Document.idMember == "id" {
                object["id"] = .string(RecordID.generate().rawValue)
                value = .object(object)
            }
            let outcome = try await resource.write(
                value, pathId: nil, precondition: nil, options: WriteOptions(), dryRun: false, tenant: call.tenant, actor: call.caller.actor)
            guard case .created(let stored) = outcome else { throw GraphError(.conflict, "Request_BadRequest", "The object was not created.") }
            return (toGraph(stored.document.presented(in: call.tenant), call.tenant), stored.version)
        }
        set.update = { call, id, body, precondition in
            guard let current = try await resource.read(call.tenant, id: id) else { throw GraphError.notFound(id) }
            let patch = try fromGraph(GraphBody.cleaned(body, keepingNulls: true), call.tenant)
            let merged = GraphBody.withoutNulls(GraphBody.merge(current.document.presented(in: call.tenant), patch))
            _ = try await resource.write(
                merged, pathId: current.document.documentId, precondition: precondition ?? .version(current.version), options: WriteOptions(),
                dryRun: false, tenant: call.tenant, actor: call.caller.actor)
        }
        set.remove = { call, id, precondition in
            try await resource.delete(id: id, precondition: precondition ?? .mustExist, force: false, tenant: call.tenant, actor: call.caller.actor)
        }
        return set
    }
}

/// Graph bodies read into the admin API's documents.
enum GraphBody {
    /// OData annotations a client sends back (`@odata.context`, `@odata.etag`) dropped; `@odata.type` kept, for the kinds
    /// that read it. Without `keepingNulls`, members that are `null` are dropped too (Graph's "absent").
    static func cleaned(_ value: JSONValue, keepingNulls: Bool = false) -> JSONValue {
        guard case .object(let object) = value else { return value }
        return .object(
            object.filter { key, member in
                if key.hasPrefix("@odata."), key != "@odata.type" { return false }
                return keepingNulls || member != .null
            })
    }

    /// A PATCH: objects merge member by member, anything else replaces (`null` clears).
    static func merge(_ base: JSONValue, _ patch: JSONValue) -> JSONValue {
        guard case .object(var target) = base, case .object(let changes) = patch else { return patch }
        for (key, value) in changes {
            if case .object = value, let existing = target[key], case .object = existing {
                target[key] = merge(existing, value)
            } else {
                target[key] = value
            }
        }
        return .object(target)
    }

    /// Top-level `null` members dropped: cleared is absent to the admin API's readers.
    static func withoutNulls(_ value: JSONValue) -> JSONValue {
        guard case .object(let object) = value else { return value }
        return .object(object.filter { $0.value != .null })
    }

    /// The object ID at the end of a `@odata.id` or `@odata.bind` URL (`…/directoryObjects/{id}`).
    static func objectId(_ reference: String) -> String? {
        let last = reference.split(separator: "/").last.map(String.init) ?? reference
        var id = last
        if let open = last.firstIndex(of: "("), last.hasSuffix(")") {
            id = String(last[last.index(after: open)..<last.index(before: last.endIndex)]).trimmingCharacters(in: CharacterSet(charactersIn: "'"))
        }
        return id.isGUID ? ObjectID(id).rawValue : nil
    }
}
