public import Foundation
public import PortcullisCore

/// Where a document's installation-wide identifier is already used (`StorageError.identifierTaken`).
public struct IdentifierOwner: Sendable, Equatable {
    public let tenantId: String
    public let kind: DocumentKind

    public init(tenantId: String, kind: DocumentKind) {
        self.tenantId = tenantId
        self.kind = kind
    }

    public var error: StorageError {
        StorageError(.identifierTaken, "the identifier is already used by a \(kind.rawValue) of tenant \(tenantId)")
    }
}

/// A stored document with its version (the ETag): a counter that grows on every write.
public struct StoredDocument: Sendable, Equatable {
    public let tenantId: String
    public let kind: DocumentKind
    public let id: String
    public let body: Data
    public let version: Int64
    public let updatedAt: Date

    public init(tenantId: String, kind: DocumentKind, id: String, body: Data, version: Int64, updatedAt: Date) {
        self.tenantId = tenantId
        self.kind = kind
        self.id = id
        self.body = body
        self.version = version
        self.updatedAt = updatedAt
    }

    /// A typed document as every writer stores it (`TenantDocuments.encoder`).
    public init<Document: TenantDocument>(tenantId: TenantID, document: Document, version: Int64 = 0, updatedAt: Date) throws {
        self.init(
            tenantId: tenantId.rawValue, kind: Document.kind, id: document.documentId, body: try TenantDocuments.encoder.encode(document),
            version: version, updatedAt: updatedAt)
    }
}

/// What a write must find before it applies (optimistic concurrency).
public enum WritePrecondition: Sendable, Equatable {
    case none
    /// The document must not exist (create).
    case mustNotExist
    /// The document must exist with this version (`If-Match`).
    case version(Int64)
    /// The document must exist with one of these versions (`If-Match` listing several ETags).
    case anyVersion(Set<Int64>)
    /// The document must exist (replace without `If-Match`).
    case mustExist

    /// Throws when a document at `current` (`nil`: none) does not meet the precondition: `duplicate`, `notFound`
    /// or `preconditionFailed`. One definition for every store.
    public func check(current: Int64?) throws {
        switch (self, current) {
        case (.none, _), (.mustNotExist, nil), (.mustExist, .some): return
        case (.mustNotExist, .some): throw StorageError(.duplicate, "the document already exists")
        case (.mustExist, nil), (.version, nil), (.anyVersion, nil): throw StorageError(.notFound, "the document does not exist")
        case (.version(let expected), .some(let actual)):
            if expected != actual { throw StorageError(.preconditionFailed, "the document has changed (version \(actual))") }
        case (.anyVersion(let expected), .some(let actual)):
            if !expected.contains(actual) { throw StorageError(.preconditionFailed, "the document has changed (version \(actual))") }
        }
    }
}

/// What kind of thing an audit record is about: a document kind, an enrollment, a callback delivery.
public struct AuditSubject: RawRepresentable, Sendable, Hashable, Codable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ kind: DocumentKind) { self.rawValue = kind.rawValue }

    public static let enrollment = AuditSubject(rawValue: "enrollment")
    public static let outbox = AuditSubject(rawValue: "outbox")
    public static let authenticationMethod = AuditSubject(rawValue: "authenticationMethod")
    public static let passkey = AuditSubject(rawValue: "passkey")
    public static let temporaryAccessPass = AuditSubject(rawValue: "temporaryAccessPass")
    public static let user = AuditSubject(DocumentKind.user)
}

/// An audit record: who changed what, when, and the before and after documents.
public struct AuditRecord: Sendable, Equatable, Codable {
    public var id: Int64?
    public var tenantId: TenantID
    public var at: Date
    public var actor: String
    public var action: AuditAction
    public var kind: AuditSubject
    public var documentId: String
    /// The document before and after, as JSON values (as answers show them: no hash, no secret).
    public var before: JSONValue?
    public var after: JSONValue?

    public init(
        id: Int64? = nil, tenantId: TenantID, at: Date, actor: String, action: AuditAction, kind: AuditSubject, documentId: String, before: JSONValue?,
        after: JSONValue?
    ) {
        self.id = id
        self.tenantId = tenantId
        self.at = at
        self.actor = actor
        self.action = action
        self.kind = kind
        self.documentId = documentId
        self.before = before
        self.after = after
    }
}

/// A committed change of a tenant's documents, as every node learns of it (`DocumentStore.followDocumentChanges`):
/// one document (`kind` and `id`), or — when they are `nil` — the tenant as a whole (seeding).
public struct DocumentChange: Sendable, Equatable {
    public var tenantId: String
    /// The tenant's revision after the change.
    public var revision: Int64
    public var kind: DocumentKind?
    public var id: String?

    public init(tenantId: String, revision: Int64, kind: DocumentKind? = nil, id: String? = nil) {
        self.tenantId = tenantId
        self.revision = revision
        self.kind = kind
        self.id = id
    }

    /// As a PostgreSQL notification carries it: `tenantId revision [kind id]` (no part contains a space).
    public var payload: String { [tenantId, String(revision), kind?.rawValue, id].compactMap { $0 }.joined(separator: " ") }

    public init?(payload: String) {
        let parts = payload.split(separator: " ").map(String.init)
        guard parts.count == 2 || parts.count == 4, let revision = Int64(parts[1]) else { return nil }
        self.init(
            tenantId: parts[0], revision: revision, kind: parts.count == 4 ? DocumentKind(rawValue: parts[2]) : nil, id: parts.count == 4 ? parts[3] : nil)
    }
}

/// Tenants' directory and policy documents. Every write bumps the store-wide revision (a document's version, its
/// ETag) and its tenant's revision, which caches use to know which tenant is stale.
public protocol DocumentStore: Sendable {
    /// The revision of all documents: increases with every write.
    func revision() async throws -> Int64
    /// Every tenant's revision: the store-wide revision of the tenant's last change.
    func tenantRevisions() async throws -> [String: Int64]
    /// Every document of these tenants, all kinds, in one read (loading many tenants at once).
    func documents(tenantIds: [String]) async throws -> [StoredDocument]
    /// Calls `changed` for every document change committed by any node — this one included — until cancelled. Returns
    /// or throws when the feed breaks (the caller then re-reads the tenants' revisions and follows again). A store
    /// that only one node writes (SQLite) has nothing to tell: it waits until cancelled.
    func followDocumentChanges(_ changed: @escaping @Sendable (DocumentChange) async -> Void) async throws
    func documents(tenantId: TenantID, kind: DocumentKind) async throws -> [StoredDocument]
    func document(tenantId: TenantID, kind: DocumentKind, id: String) async throws -> StoredDocument?
    /// All tenant IDs.
    func tenantIds() async throws -> [String]
    /// Who else holds `id` in `kind`'s installation-wide namespace (another tenant, or another kind of directory
    /// object), if anyone. `put` makes the same check atomically and throws `StorageError.identifierTaken`.
    func identifierOwner(kind: DocumentKind, id: String, tenantId: TenantID) async throws -> IdentifierOwner?
    /// Creates or replaces a document if `precondition` holds; appends `audit` (with the stored version) and commits
    /// `effects` (PROTOCOL §14.1) in the same transaction. Returns the stored document.
    @discardableResult
    func put(
        tenantId: TenantID, kind: DocumentKind, id: String, body: Data, precondition: WritePrecondition, at: Date, audit: AuditRecord?,
        effects: CommittedEffects?
    ) async throws -> StoredDocument
    /// Deletes a document if `precondition` holds; appends `audit` and commits `effects` in the same transaction.
    /// Returns the tenant's revision after the delete.
    @discardableResult
    func delete(
        tenantId: TenantID, kind: DocumentKind, id: String, precondition: WritePrecondition, audit: AuditRecord?, effects: CommittedEffects?
    ) async throws -> Int64
    /// Writes many documents in one transaction (seeding). Existing documents are left alone.
    func seed(_ documents: [StoredDocument]) async throws
    /// Appends an audit record for an action that changes no document (a wipe, a redelivery).
    func appendAudit(_ record: AuditRecord) async throws
    /// The audit log of a tenant, newest first.
    func auditRecords(tenantId: TenantID, limit: Int, before: Int64?) async throws -> [AuditRecord]
}

extension DocumentStore {
    /// A write with nothing to commit beside its audit record.
    @discardableResult
    public func put(
        tenantId: TenantID, kind: DocumentKind, id: String, body: Data, precondition: WritePrecondition, at: Date, audit: AuditRecord?
    ) async throws -> StoredDocument {
        try await put(tenantId: tenantId, kind: kind, id: id, body: body, precondition: precondition, at: at, audit: audit, effects: nil)
    }

    @discardableResult
    public func delete(tenantId: TenantID, kind: DocumentKind, id: String, precondition: WritePrecondition, audit: AuditRecord?) async throws -> Int64 {
        try await delete(tenantId: tenantId, kind: kind, id: id, precondition: precondition, audit: audit, effects: nil)
    }
}

extension AuditRecord {
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// A document as the stores keep it in the audit log: JSON text.
    public static func text(of value: JSONValue?) -> String? {
        value.flatMap { try? encoder.encode($0) }.map { String(decoding: $0, as: UTF8.self) }
    }

    /// A stored before/after back as a JSON value (text that is not JSON — an old record — as a string).
    public static func value(of text: String?) -> JSONValue? {
        text.map { JSONValue.parse(Data($0.utf8)) ?? .string($0) }
    }
}
