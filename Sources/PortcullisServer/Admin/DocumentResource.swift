import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import PortcullisCore
import PortcullisStorage
import PortcullisTokens

/// How the admin API handles one kind of tenant document: the one registration a kind needs beside its type
/// (PROTOCOL §7, §11). Everything else — listing with paging, reading, creating, replacing and deleting with
/// `If-Match`, dry runs, the audit log with the documents as JSON values, "no change" decided by comparing values,
/// and the tenant cache following the change — is `DocumentResource`'s, the same for every kind.
struct DocumentRegistration<Document: AdministeredDocument>: Sendable {
    /// What people call one ("conditional-access policy"): the kind's, from `DocumentKind.registry`.
    var noun: String { Document.kind.noun }
    /// What follows a stored change outside the document (`after` is `nil` for a delete); `actor` made it. The kind's
    /// own rules — reading, showing, delete guards — are its `AdministeredDocument` conformance.
    var afterWrite: @Sendable (_ before: Document?, _ after: Document?, _ tenant: TenantSnapshot, _ actor: String) async throws -> Void = { _, _, _, _ in }
}

/// What a write's query asks beside the body: `force=true` (past the lock-out guards) and `unenforceable=reportOnly`
/// (conditional access: keep a control this server cannot enforce in a policy that enforces nothing, PROTOCOL §17).
struct WriteOptions: Sendable {
    var force = false
    var unenforceable = ConditionalAccessPolicy.UnenforceableControls.refuse

    /// The options of `request`'s query; an `unenforceable` value other than `refuse` or `reportOnly` is refused.
    static func of(_ request: Request) throws -> WriteOptions {
        var options = WriteOptions(force: DocumentBody.flag(request, "force"))
        if let given = request.uri.queryParameters.get("unenforceable").map({ String($0) }) {
            guard let value = ConditionalAccessPolicy.UnenforceableControls(rawValue: given) else {
                throw APIError.validation(
                    ValidationError(problems: [ValidationProblem(pointer: "", message: "unenforceable must be refuse or reportOnly, not '\(given)'.")]))
            }
            options.unenforceable = value
        }
        return options
    }
}

/// Turns a change's Core effects into what the store commits with it, and wakes delivery once it has committed (the
/// Shared Signals transmitter).
protocol EffectRouter: Sendable {
    func committed(_ effects: ChangeEffects, tenant: TenantSnapshot, audit: [AuditRecord]) -> CommittedEffects
    func didCommit(_ committed: CommittedEffects)
}

/// A stored document read back into its type, with its version (the ETag).
struct Versioned<Document: TenantDocument>: Sendable {
    let document: Document
    let version: Int64
}

/// CRUD over one kind of tenant document, for the admin API and the console alike (the console calls the typed
/// functions; the routes parse HTTP around them).
struct DocumentResource<Document: AdministeredDocument>: Sendable {
    let registration: DocumentRegistration<Document>
    /// What the kind's rules need of the server (`DocumentServices`); `nil` for a kind the admin API only reads and
    /// deletes (Shared Signals streams, which receivers write).
    let services: (any DocumentServices)?
    let store: any PortcullisStore
    let tenants: TenantCache
    let clock: any WallClock
    /// Where a change's effects (`Document.effects`, PROTOCOL §14.1) are routed before they commit with it; `nil` for
    /// kinds whose changes have none.
    var effects: (any EffectRouter)? = nil

    var noun: String { registration.noun }

    /// The kind's routes at its path in `DocumentKind.registry`.
    func register(on group: RouterGroup<PortcullisRequestContext>) {
        guard let path = Document.kind.adminPath else { preconditionFailure("\(Document.kind.rawValue) has no path in DocumentKind.registry") }
        group.get(RouterPath(path)) { request, context in try await listResponse(request, context) }
        group.post(RouterPath(path)) { request, context in try await writeResponse(request, context, pathId: nil) }
        group.get(RouterPath("\(path)/:id")) { _, context in try await readResponse(context) }
        group.put(RouterPath("\(path)/:id")) { request, context in try await writeResponse(request, context, pathId: context.parameters.get("id")) }
        group.delete(RouterPath("\(path)/:id")) { request, context in try await deleteResponse(request, context) }
    }

    // MARK: The typed operations

    /// One page of the tenant's documents of this kind: the built-in ones first, then the stored ones in ID order.
    func list(_ tenant: TenantSnapshot, top: Int, skip: Int) async throws -> [Versioned<Document>] {
        let builtIn = Document.builtIns.map { Versioned(document: $0, version: 0) }
        let stored = try await store.documents(tenantId: tenant.tenant.id, kind: Document.kind).map(decode)
        return Array((builtIn + stored).dropFirst(skip).prefix(top))
    }

    /// The built-in document with this ID, if any.
    func builtIn(id: String) -> Document? { Document.builtIns.first { PolicyID($0.documentId) == PolicyID(id) } }

    /// One document, or `nil`.
    func read(_ tenant: TenantSnapshot, id: String) async throws -> Versioned<Document>? {
        if let document = builtIn(id: id) { return Versioned(document: document, version: 0) }
        return try await store.document(tenantId: tenant.tenant.id, kind: Document.kind, id: id.lowercased()).map(decode)
    }

    static func readOnly(_ id: String) -> APIError {
        APIError(.methodNotAllowed, "builtInReadOnly", "\(id) is built in and read-only; create a custom one instead.")
    }

    func decode(_ stored: StoredDocument) throws -> Versioned<Document> {
        do {
            return Versioned(document: try TenantDocuments.decoder.decode(Document.self, from: stored.body), version: stored.version)
        } catch {
            throw StorageError(.corrupt, "stored \(Document.kind.rawValue) \(stored.id) cannot be read", underlying: error)
        }
    }

    /// What a write would do, or did.
    enum WriteOutcome: Sendable {
        case created(Versioned<Document>)
        case replaced(Versioned<Document>)
        /// The same document as stored: nothing written (policy-as-code re-applies are no-ops).
        case unchanged(Versioned<Document>)
        /// A dry run: the stored document (if any) and the one the write would store.
        case dryRun(before: Versioned<Document>?, after: Document)
    }

    /// Validates `value` (its ID the path's on a replace) and stores it on `precondition` — `nil` for a create by
    /// POST — with its audit record; a dry run stores nothing and needs no precondition.
    func write(
        _ value: JSONValue, pathId: String?, precondition given: WritePrecondition?, options: WriteOptions, dryRun: Bool,
        tenant: TenantSnapshot, actor: String
    ) async throws -> WriteOutcome {
        if let pathId, builtIn(id: pathId) != nil { throw Self.readOnly(pathId.lowercased()) }
        let identified = try DocumentBody.identified(value, pathId: pathId?.lowercased(), key: Document.idMember)
        let document: Document
        guard let services else { throw APIError(DocumentRefusal(.notWritable, "The admin API does not write \(noun)s.")) }
        do {
            document = try await Document.read(
                identified, in: DocumentWrite(tenant: tenant, force: options.force, unenforceable: options.unenforceable, services: services))
        } catch let error as ValidationError {
            throw APIError.validation(error)
        } catch let refusal as DocumentRefusal {
            throw APIError(refusal)
        }
        let id = document.documentId
        // Unique across the installation (PROTOCOL §11): said here, for dry runs too; the store's write checks it atomically.
        if try await store.identifierOwner(kind: Document.kind, id: id, tenantId: tenant.tenant.id) != nil {
            throw APIError.identifierTaken(pointer: "/\(Document.idMember)")
        }
        let stored = try await read(tenant, id: id)
        if dryRun { return .dryRun(before: stored, after: document) }
        // A POST creates: what is stored under its ID makes it a conflict (409), not a comparison.
        let before = pathId == nil ? nil : stored
        let precondition = given ?? .mustNotExist
        if let before, before.document == document {
            // Nothing changes (equal values): no write, no new version, no audit record.
            if (try? precondition.check(current: before.version)) == nil {
                throw APIError.from(StorageError(.preconditionFailed, ""), what: "The \(noun) \(id)")!
            }
            return .unchanged(before)
        }
        do {
            let saved = try await save(document, before: before, precondition: precondition, tenant: tenant, actor: actor)
            return before == nil ? .created(saved) : .replaced(saved)
        } catch let error as StorageError {
            throw APIError.from(error, what: "The \(noun) \(id)", idPointer: "/\(Document.idMember)") ?? error
        }
    }

    /// Stores a document on its precondition with its audit record (as answers show it) and its effects (what it ends
    /// and announces, in the same transaction), applies it to this node's tenant cache, and runs `afterWrite`.
    /// StorageErrors are the caller's to map.
    func save(
        _ document: Document, before: Versioned<Document>?, precondition: WritePrecondition, tenant: TenantSnapshot, actor: String
    ) async throws -> Versioned<Document> {
        let id = document.documentId
        let now = clock.now()
        let committed = committedEffects(before: before?.document, after: document, tenant: tenant, at: now)
        let stored = try await store.put(
            tenantId: tenant.tenant.id, kind: Document.kind, id: id, body: try TenantDocuments.encoder.encode(document), precondition: precondition,
            at: now,
            audit: AuditRecord(
                tenantId: tenant.tenant.id, at: now, actor: actor, action: before == nil ? .create : .replace, kind: AuditSubject(Document.kind),
                documentId: id, before: before.map { $0.document.presented(in: tenant) }, after: document.presented(in: tenant)),
            effects: committed)
        if let committed { effects?.didCommit(committed) }
        try await tenants.documentChanged(tenantId: tenant.tenant.id, kind: Document.kind, id: id, revision: stored.version)
        try await registration.afterWrite(before?.document, document, tenant, actor)
        return Versioned(document: document, version: stored.version)
    }

    /// What a change of `before` into `after` commits besides itself (`Document.effects`, routed), or `nil` for nothing.
    func committedEffects(before: Document?, after: Document?, tenant: TenantSnapshot, at: Date) -> CommittedEffects? {
        let found = Document.effects(before: before, after: after, tenantId: tenant.tenant.id, at: at)
        guard !found.isEmpty, let effects else { return nil }
        return effects.committed(found, tenant: tenant, audit: [])
    }

    /// Deletes a document on `precondition` (after `beforeDelete`), with its audit record.
    func delete(id: String, precondition: WritePrecondition, force: Bool, tenant: TenantSnapshot, actor: String) async throws {
        if builtIn(id: id) != nil { throw Self.readOnly(id.lowercased()) }
        guard let before = try await read(tenant, id: id) else { throw APIError.notFound("The \(noun) \(id.lowercased())") }
        do {
            try before.document.checkDelete(in: tenant, force: force)
        } catch {
            throw APIError(error)
        }
        do {
            let now = clock.now()
            let committed = committedEffects(before: before.document, after: nil, tenant: tenant, at: now)
            let revision = try await store.delete(
                tenantId: tenant.tenant.id, kind: Document.kind, id: before.document.documentId, precondition: precondition,
                audit: AuditRecord(
                    tenantId: tenant.tenant.id, at: now, actor: actor, action: .delete, kind: AuditSubject(Document.kind),
                    documentId: before.document.documentId, before: before.document.presented(in: tenant), after: nil),
                effects: committed)
            if let committed { effects?.didCommit(committed) }
            try await tenants.documentChanged(tenantId: tenant.tenant.id, kind: Document.kind, id: before.document.documentId, revision: revision)
            try await registration.afterWrite(before.document, nil, tenant, actor)
        } catch let error as StorageError {
            throw APIError.from(error, what: "The \(noun) \(id)") ?? error
        }
    }

    // MARK: HTTP

    func tenant(_ context: PortcullisRequestContext) async throws -> TenantSnapshot { try await tenants.tenant(of: context) }

    /// The largest page of a document list, and the default.
    static var pageSize: Int { 1000 }

    func listResponse(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let tenant = try await tenant(context)
        let top = try Paging.top(request, default: Self.pageSize, range: 1...Self.pageSize)
        let skip = try Paging.skip(request)
        let page = try await list(tenant, top: top, skip: skip)
        let body = ListBody(
            value: page.map { $0.document.presented(in: tenant) }, nextLink: Paging.nextLink(request, skip: skip, limit: top, count: page.count))
        return JSONResponse.make(status: .ok, body)
    }

    struct ListBody: Encodable {
        let value: [JSONValue]
        let nextLink: String?
    }

    func readResponse(_ context: PortcullisRequestContext, id given: String? = nil) async throws -> Response {
        let tenant = try await tenant(context)
        let id = (given ?? context.parameters.get("id") ?? "").lowercased()
        guard let found = try await read(tenant, id: id) else { throw APIError.notFound("The \(noun) \(id)") }
        return JSONResponse.make(status: .ok, found.document.presented(in: tenant), headers: [.eTag: DocumentETag.etag(found.version)])
    }

    func writeResponse(_ request: Request, _ context: PortcullisRequestContext, pathId: String?) async throws -> Response {
        let tenant = try await tenant(context)
        let value = try await DocumentBody.body(request, context, limit: Document.maximumBody)
        let dryRun = DocumentBody.flag(request, "dryRun")
        let precondition: WritePrecondition? = pathId == nil || dryRun ? nil : try DocumentETag.precondition(request)
        let outcome = try await write(
            value, pathId: pathId, precondition: precondition, options: try WriteOptions.of(request), dryRun: dryRun, tenant: tenant, actor: context.actor)
        return response(outcome, tenant: tenant, collection: pathId == nil ? request.uri.path : nil)
    }

    /// The answer to a write: 201 with the document (and its `Location` under `collection`, for a create by POST), 200 for
    /// a replace or no change, or the dry run's account.
    func response(_ outcome: WriteOutcome, tenant: TenantSnapshot, collection: String?) -> Response {
        switch outcome {
        case .created(let stored):
            var headers: HTTPFields = [.eTag: DocumentETag.etag(stored.version)]
            if let collection { headers[.location] = "\(collection)/\(stored.document.documentId)" }
            return JSONResponse.make(status: .created, stored.document.presented(in: tenant), headers: headers)
        case .replaced(let stored), .unchanged(let stored):
            return JSONResponse.make(status: .ok, stored.document.presented(in: tenant), headers: [.eTag: DocumentETag.etag(stored.version)])
        case .dryRun(let before, let after):
            // `?dryRun=true` (PROTOCOL §11, policy as code): the write validated exactly as it would be, and what it would
            // do — `create`, `change` or `unchanged` — with the stored and the resulting documents as answers show them.
            let action = before == nil ? "create" : before?.document == after ? "unchanged" : "change"
            let body = DryRunBody(
                action: action, id: after.documentId, before: before.map { $0.document.presented(in: tenant) } ?? .null,
                after: after.presented(in: tenant))
            return JSONResponse.make(status: .ok, body, headers: before.map { [.eTag: DocumentETag.etag($0.version)] } ?? [:])
        }
    }

    struct DryRunBody: Encodable {
        let action: String
        let id: String
        let before: JSONValue
        let after: JSONValue
    }

    func deleteResponse(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let tenant = try await tenant(context)
        let precondition = try DocumentETag.precondition(request)
        try await delete(
            id: context.parameters.get("id") ?? "", precondition: precondition, force: DocumentBody.flag(request, "force"), tenant: tenant, actor: context.actor
        )
        return Response(status: .noContent)
    }
}

/// What the console's JSON editor needs of a kind of document, whatever its type: the document as answers show it,
/// and the resource's own write and delete (validation, `If-Match`, audit, the tenant cache — nothing of its own).
protocol EditableDocuments: Sendable {
    var noun: String { get }
    /// The kind, for its path in `DocumentKind.registry`.
    var kind: DocumentKind { get }
    func presented(_ tenant: TenantSnapshot, id: String) async throws -> (document: JSONValue, version: Int64)?
    /// Stores `value` (a create when `pathId` is nil) and returns its ID and version.
    func store(
        _ value: JSONValue, pathId: String?, precondition: WritePrecondition?, tenant: TenantSnapshot, actor: String
    ) async throws -> (id: String, version: Int64)
    func delete(id: String, precondition: WritePrecondition, force: Bool, tenant: TenantSnapshot, actor: String) async throws
}

extension DocumentResource: EditableDocuments {
    var kind: DocumentKind { Document.kind }

    func presented(_ tenant: TenantSnapshot, id: String) async throws -> (document: JSONValue, version: Int64)? {
        try await read(tenant, id: id).map { ($0.document.presented(in: tenant), $0.version) }
    }

    func store(
        _ value: JSONValue, pathId: String?, precondition: WritePrecondition?, tenant: TenantSnapshot, actor: String
    ) async throws -> (id: String, version: Int64) {
        switch try await write(value, pathId: pathId, precondition: precondition, options: WriteOptions(), dryRun: false, tenant: tenant, actor: actor) {
        case .created(let stored), .replaced(let stored), .unchanged(let stored): return (stored.document.documentId, stored.version)
        case .dryRun(_, let after): return (after.documentId, 0)
        }
    }
}

/// ETags and `If-Match` for every document route.
enum DocumentETag {
    static func etag(_ version: Int64) -> String { "\"\(version)\"" }

    /// The precondition of a replace or a delete (a create by POST needs none). They need one (PROTOCOL §11:
    /// two admins never overwrite each other unnoticed): `If-Match: "n"` (must be version n; a list of ETags, any
    /// of them), `If-Match: *` (must exist) or, for a PUT that creates a document under a chosen ID,
    /// `If-None-Match: *`. Without any, 428 Precondition Required. RFC 9110 §13.1.1: If-Match compares strongly, so
    /// a well-formed ETag that is no version of ours (`"stale"`, a weak `W/"3"`) can never match — 412 — and only a
    /// header that is not an ETag list at all is 400.
    static func precondition(_ request: Request) throws -> WritePrecondition {
        try precondition(ifMatch: request.headers[.ifMatch], ifNoneMatch: request.method == .put ? request.headers[.ifNoneMatch] : nil)
    }

    /// The precondition `If-Match` (or, for a PUT, `If-None-Match`) states; the console's forms carry the ETag they read.
    static func precondition(ifMatch: String?, ifNoneMatch: String? = nil) throws -> WritePrecondition {
        if let header = ifMatch?.trimmingCharacters(in: .whitespaces) {
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
        if ifNoneMatch?.trimmingCharacters(in: .whitespaces) == "*" { return .mustNotExist }
        throw APIError.preconditionRequired
    }
}

/// Reading a document body off a request.
enum DocumentBody {
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
