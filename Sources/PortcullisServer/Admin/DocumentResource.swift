import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import PortcullisCore
import PortcullisStorage

/// CRUD over one kind of tenant document (policies, named locations…) with validation identical to the
/// configuration files, `ETag` / `If-Match`, the audit log, and cache invalidation.
struct DocumentResource: Sendable {
    /// Parses a document (whose `id`, on a replace, is already the path's) into its ID and stored form.
    typealias Validator = @Sendable (_ body: JSONValue, _ tenant: TenantSnapshot, _ force: Bool) async throws -> (id: String, body: Data)
    /// Refuses a delete that would leave something broken (`force` is the request's `?force=true`).
    typealias ReferenceCheck = @Sendable (_ id: String, _ tenant: TenantSnapshot, _ force: Bool) throws -> Void

    let kind: DocumentKind
    let noun: String
    let store: any PortcullisStore
    let tenants: TenantCache
    let clock: any WallClock
    let validate: Validator
    let beforeDelete: ReferenceCheck
    /// The member that names a document (`appId` for applications).
    var idKey = "id"
    /// The largest body a write accepts (`nil`: the server's usual limit, 64 KiB).
    var maximumBody: Int? = nil
    /// How a stored document is shown, in answers and in the audit log (users: without the password hash).
    var present: @Sendable (Data) -> Data = { $0 }
    /// What follows a write or a delete (`after` is `nil` for a delete), once it is stored; `actor` made it.
    var afterWrite: @Sendable (_ before: Data?, _ after: Data?, _ tenant: TenantSnapshot, _ actor: String) async throws -> Void = { _, _, _, _ in }

    func register(on group: RouterGroup<PortcullisRequestContext>, path: String) {
        group.get(RouterPath(path)) { _, context in try await list(context) }
        group.post(RouterPath(path)) { request, context in try await write(request, context, pathId: nil) }
        group.get(RouterPath("\(path)/:id")) { _, context in try await read(context) }
        group.put(RouterPath("\(path)/:id")) { request, context in try await write(request, context, pathId: context.parameters.get("id")) }
        group.delete(RouterPath("\(path)/:id")) { request, context in try await delete(request, context) }
    }

    static func etag(_ version: Int64) -> String { "\"\(version)\"" }

    /// The precondition of a write. Creating (POST) needs none. Replacing and deleting need one (PROTOCOL §11:
    /// two admins never overwrite each other unnoticed): `If-Match: "n"` (must be version n; a list of ETags, any
    /// of them), `If-Match: *` (must exist) or, for a PUT that creates a document under a chosen ID,
    /// `If-None-Match: *`. Without any, 428 Precondition Required. RFC 9110 §13.1.1: If-Match compares strongly, so
    /// a well-formed ETag that is no version of ours (`"stale"`, a weak `W/"3"`) can never match — 412 — and only a
    /// header that is not an ETag list at all is 400.
    static func precondition(_ request: Request, creating: Bool) throws -> WritePrecondition {
        if creating { return .mustNotExist }
        if let header = request.headers[.ifMatch]?.trimmingCharacters(in: .whitespaces) {
            if header == "*" { return .mustExist }
            guard let tags = EntityTags.parse(header) else {
                throw APIError(.badRequest, "invalidIfMatch", "If-Match must be a list of ETags (such as \"42\") or *.")
            }
            let versions = Set(tags.filter { !$0.weak }.compactMap { Int64($0.opaque) })
            switch versions.count {
            case 0: throw APIError.from(StorageError(.preconditionFailed, "no ETag of If-Match is a version"), what: "The document")!
            case 1: return .version(versions.first!)
            default: return .anyVersion(versions)
            }
        }
        if request.method == .put, request.headers[.ifNoneMatch]?.trimmingCharacters(in: .whitespaces) == "*" { return .mustNotExist }
        throw APIError.preconditionRequired
    }

    /// On a create, a document without an `id` (or `key`) gets a new GUID (a replace already has the path's).
    static func withGeneratedId(_ value: JSONValue, key: String = "id") -> JSONValue {
        guard case .object(var object) = value, object[key] == nil else { return value }
        object[key] = .string(UUID().uuidString.lowercased())
        return .object(object)
    }

    /// On a replace, the document's ID is the path's (a different one in the body is a validation error).
    static func identified(_ value: JSONValue, pathId: String?, key: String = "id") throws -> JSONValue {
        guard let pathId, case .object(var object) = value else { return value }
        if let given = object[key]?.stringValue, given.lowercased() != pathId {
            throw ValidationError(problems: [ValidationProblem(pointer: "/\(key)", message: "must match the ID in the path (\(pathId)).")])
        }
        object[key] = .string(pathId)
        return .object(object)
    }

    static func flag(_ request: Request, _ name: String) -> Bool {
        request.uri.queryParameters.get(name).map { $0 == "true" || $0 == "1" } ?? false
    }

    static func body(_ request: Request, _ context: PortcullisRequestContext, limit: Int? = nil) async throws -> JSONValue {
        var request = request
        let buffer = try await request.collectBody(upTo: limit ?? context.maxUploadSize)
        guard let value = JSONValue.parse(Data(buffer.readableBytesView)) else { throw APIError.malformedJSON() }
        return value
    }

    func tenant(_ context: PortcullisRequestContext) async throws -> TenantSnapshot {
        let principal = try context.requirePrincipal()
        guard let tenant = try await tenants.snapshot(tenantSegment: principal.tid) else { throw APIError.unauthenticated }
        return tenant
    }

    func list(_ context: PortcullisRequestContext) async throws -> Response {
        let tenant = try await tenant(context)
        let documents = try await store.documents(tenantId: tenant.tenant.id, kind: kind)
        var data = Data(#"{"value":["#.utf8)
        for (index, document) in documents.enumerated() {
            if index > 0 { data.append(UInt8(ascii: ",")) }
            data.append(present(document.body))
        }
        data.append(contentsOf: Array("]}".utf8))
        return JSONResponse.make(status: .ok, data: data)
    }

    func read(_ context: PortcullisRequestContext, id given: String? = nil) async throws -> Response {
        let tenant = try await tenant(context)
        let id = (given ?? context.parameters.get("id") ?? "").lowercased()
        guard let document = try await store.document(tenantId: tenant.tenant.id, kind: kind, id: id) else { throw APIError.notFound("The \(noun) \(id)") }
        return JSONResponse.make(status: .ok, data: present(document.body), headers: [.eTag: Self.etag(document.version)])
    }

    func write(_ request: Request, _ context: PortcullisRequestContext, pathId: String?) async throws -> Response {
        let tenant = try await tenant(context)
        let value = try Self.identified(try await Self.body(request, context, limit: maximumBody), pathId: pathId?.lowercased(), key: idKey)
        let force = Self.flag(request, "force")
        let validated: (id: String, body: Data)
        do {
            validated = try await validate(value, tenant, force)
        } catch let error as ValidationError {
            throw APIError.validation(error)
        }
        let creating = pathId == nil
        // Unique across the installation (PROTOCOL §11): said here, for dry runs too; the store's write checks it atomically.
        if try await store.identifierOwner(kind: kind, id: validated.id, tenantId: tenant.tenant.id) != nil {
            throw APIError.identifierTaken(pointer: "/\(idKey)")
        }
        if Self.flag(request, "dryRun") { return try await dryRun(tenant, validated) }
        let precondition = try Self.precondition(request, creating: creating)
        let before = creating ? nil : try await store.document(tenantId: tenant.tenant.id, kind: kind, id: validated.id)
        if let before, before.body == validated.body {
            // Nothing changes: no write, no new version, no audit record (policy-as-code re-applies are no-ops).
            if (try? precondition.check(current: before.version)) == nil {
                throw APIError.from(StorageError(.preconditionFailed, ""), what: "The \(noun) \(validated.id)")!
            }
            return JSONResponse.make(status: .ok, data: present(before.body), headers: [.eTag: Self.etag(before.version)])
        }
        do {
            let stored = try await save(validated.body, id: validated.id, before: before, precondition: precondition, tenant: tenant, actor: context.actor)
            var headers: HTTPFields = [.eTag: Self.etag(stored.version)]
            if creating { headers[.location] = "\(request.uri.path)/\(validated.id)" }
            return JSONResponse.make(status: before == nil ? .created : .ok, data: present(stored.body), headers: headers)
        } catch let error as StorageError {
            throw APIError.from(error, what: "The \(noun) \(validated.id)", idPointer: "/\(idKey)") ?? error
        }
    }

    /// Stores a document on its precondition with its audit record (as answers show it: no hash, no secret),
    /// makes every node's next request see it, and runs `afterWrite`. StorageErrors are the caller's to map.
    func save(_ body: Data, id: String, before: StoredDocument?, precondition: WritePrecondition, tenant: TenantSnapshot, actor: String) async throws -> StoredDocument {
        let stored = try await store.put(
            tenantId: tenant.tenant.id, kind: kind, id: id, body: body, precondition: precondition, at: clock.now(),
            audit: AuditRecord(
                tenantId: tenant.tenant.id, at: clock.now(), actor: actor, action: before == nil ? .create : .replace,
                kind: AuditSubject(kind), documentId: id, before: before.map { String(decoding: present($0.body), as: UTF8.self) },
                after: String(decoding: present(body), as: UTF8.self)))
        try await tenants.documentChanged(tenantId: tenant.tenant.id, kind: kind, id: id, revision: stored.version)
        try await afterWrite(before?.body, stored.body, tenant, actor)
        return stored
    }

    /// `?dryRun=true` on a write (PROTOCOL §11, policy as code): the write validated exactly as it would be, and
    /// what it would do — `create`, `change` or `unchanged`, with the stored and the resulting documents as
    /// answers show them — without storing anything. Needs no precondition.
    func dryRun(_ tenant: TenantSnapshot, _ validated: (id: String, body: Data)) async throws -> Response {
        let before = try await store.document(tenantId: tenant.tenant.id, kind: kind, id: validated.id)
        let action = before == nil ? "create" : before?.body == validated.body ? "unchanged" : "change"
        var data = Data(#"{"action":"\#(action)","id":"#.utf8)
        data.append(try JSONEncoder().encode(validated.id))
        data.append(contentsOf: Array(#","before":"#.utf8))
        data.append(before.map { present($0.body) } ?? Data("null".utf8))
        data.append(contentsOf: Array(#","after":"#.utf8))
        data.append(present(validated.body))
        data.append(UInt8(ascii: "}"))
        var headers: HTTPFields = [:]
        if let before { headers[.eTag] = Self.etag(before.version) }
        return JSONResponse.make(status: .ok, data: data, headers: headers)
    }

    func delete(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let tenant = try await tenant(context)
        let id = (context.parameters.get("id") ?? "").lowercased()
        let precondition = try Self.precondition(request, creating: false)
        guard let before = try await store.document(tenantId: tenant.tenant.id, kind: kind, id: id) else { throw APIError.notFound("The \(noun) \(id)") }
        try beforeDelete(id, tenant, Self.flag(request, "force"))
        do {
            let revision = try await store.delete(
                tenantId: tenant.tenant.id, kind: kind, id: id, precondition: precondition,
                audit: AuditRecord(tenantId: tenant.tenant.id, at: clock.now(), actor: context.actor, action: .delete, kind: AuditSubject(kind),
                                   documentId: id, before: String(decoding: present(before.body), as: UTF8.self), after: nil))
            try await tenants.documentChanged(tenantId: tenant.tenant.id, kind: kind, id: id, revision: revision)
            try await afterWrite(before.body, nil, tenant, context.actor)
            return Response(status: .noContent)
        } catch let error as StorageError {
            throw APIError.from(error, what: "The \(noun) \(id)") ?? error
        }
    }
}


/// `#entity-tag` lists (RFC 9110 §8.8.3): `"opaque"` or `W/"opaque"`, the opaque part of `etagc` characters,
/// separated by commas and optional whitespace.
enum EntityTags {
    static func parse(_ header: String) -> [(weak: Bool, opaque: String)]? {
        var tags: [(weak: Bool, opaque: String)] = []
        for item in header.split(separator: ",", omittingEmptySubsequences: false) {
            var text = item.trimmingCharacters(in: .whitespaces)
            if text.isEmpty { continue }  // empty list elements are allowed (RFC 9110 §5.6.1)
            let weak = text.hasPrefix("W/")
            if weak { text.removeFirst(2) }
            guard text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") else { return nil }
            let opaque = text.dropFirst().dropLast()
            // etagc = %x21 / %x23-7E / obs-text: no quote, no space, no control character.
            guard opaque.unicodeScalars.allSatisfy({ $0.value == 0x21 || (0x23...0x7E).contains($0.value) || $0.value >= 0x80 }) else { return nil }
            tags.append((weak, String(opaque)))
        }
        return tags.isEmpty ? nil : tags
    }
}
