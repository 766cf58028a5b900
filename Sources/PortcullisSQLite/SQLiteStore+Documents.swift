public import Foundation
public import PortcullisCore
public import PortcullisStorage
import SQLiteNIO

extension SQLiteStore {
    public func revision() async throws -> Int64 {
        try await read("SELECT value FROM revision WHERE id = 1").first?.int("value") ?? 0
    }

    public func tenantRevisions() async throws -> [String: Int64] {
        var revisions: [String: Int64] = [:]
        for row in try await read("SELECT tenant_id, revision FROM tenant_revisions") { revisions[try row.string("tenant_id")] = try row.int("revision") }
        return revisions
    }

    public func documents(tenantIds: [String]) async throws -> [StoredDocument] {
        guard !tenantIds.isEmpty else { return [] }
        let placeholders = tenantIds.map { _ in "?" }.joined(separator: ", ")
        return try await read(
            "SELECT tenant_id, kind, id, body, version, updated_at FROM documents WHERE tenant_id IN (\(placeholders)) ORDER BY tenant_id, kind, id",
            tenantIds.map { .text($0) }
        ).map(Self.document(from:))
    }

    /// One process writes an SQLite store: its own writes reach its cache directly, so there is nothing to follow.
    public func followDocumentChanges(_ changed: @escaping @Sendable (DocumentChange) async -> Void) async throws {
        while true { try await Task.sleep(for: .seconds(3600)) }
    }

    public func tenantIds() async throws -> [String] {
        try await read("SELECT id FROM documents WHERE kind = ? AND tenant_id = id ORDER BY id", [.text(DocumentKind.tenant.rawValue)])
            .map { try $0.string("id") }
    }

    public func identifierOwner(kind: DocumentKind, id: String, tenantId: TenantID) async throws -> IdentifierOwner? {
        guard let query = Self.identifierOwnerQuery(kind: kind, id: id, tenantId: tenantId) else { return nil }
        return try Self.identifierOwner(try await read(query.sql, query.binds).first)
    }

    /// Who else holds `id` in `kind`'s installation-wide namespace: the query (`nil` when the kind has none).
    static func identifierOwnerQuery(kind: DocumentKind, id: String, tenantId: TenantID) -> (sql: String, binds: [SQLiteData])? {
        guard let namespace = kind.installationWideNamespace else { return nil }
        let kinds = DocumentKind.kinds(inNamespace: namespace)
        let placeholders = kinds.map { _ in "?" }.joined(separator: ", ")
        return (
            "SELECT tenant_id, kind FROM documents WHERE id = ? AND kind IN (\(placeholders)) AND NOT (tenant_id = ? AND kind = ?) LIMIT 1",
            [.text(id)] + kinds.map { .text($0.rawValue) } + [.id(tenantId), .text(kind.rawValue)]
        )
    }

    static func identifierOwner(_ row: StoredRow?) throws -> IdentifierOwner? {
        try row.map { IdentifierOwner(tenantId: try $0.string("tenant_id"), kind: DocumentKind(rawValue: try $0.string("kind"))) }
    }

    public func documents(tenantId: TenantID, kind: DocumentKind) async throws -> [StoredDocument] {
        try await read(
            "SELECT tenant_id, kind, id, body, version, updated_at FROM documents WHERE tenant_id = ? AND kind = ? ORDER BY id",
            [.id(tenantId), .text(kind.rawValue)]
        ).map(Self.document(from:))
    }

    public func document(tenantId: TenantID, kind: DocumentKind, id: String) async throws -> StoredDocument? {
        try await read(
            "SELECT tenant_id, kind, id, body, version, updated_at FROM documents WHERE tenant_id = ? AND kind = ? AND id = ?",
            [.id(tenantId), .text(kind.rawValue), .text(id)]
        ).first.map(Self.document(from:))
    }

    static func document(from row: StoredRow) throws -> StoredDocument {
        StoredDocument(
            tenantId: try row.string("tenant_id"), kind: DocumentKind(rawValue: try row.string("kind")),
            id: try row.string("id"), body: Data(try row.string("body").utf8), version: try row.int("version"),
            updatedAt: try row.date("updated_at"))
    }

    /// Bumps the store-wide revision inside a transaction, records it as `tenantId`'s revision, and returns it.
    private static func bumpRevision(_ db: WriterStatements, tenantId: TenantID) throws -> Int64 {
        guard let value = try db.query("UPDATE revision SET value = value + 1 WHERE id = 1 RETURNING value").first?.int("value") else {
            throw StorageError(.corrupt, "the revision row is missing")
        }
        try recordTenantRevision(db, tenantId: tenantId, revision: value)
        return value
    }

    private static func recordTenantRevision(_ db: WriterStatements, tenantId: TenantID, revision: Int64) throws {
        _ = try db.query(
            "INSERT INTO tenant_revisions (tenant_id, revision) VALUES (?, ?) ON CONFLICT (tenant_id) DO UPDATE SET revision = excluded.revision",
            [.id(tenantId), .integer(Int(revision))])
    }

    /// Who else holds `id` in `kind`'s installation-wide namespace (another tenant, or another kind of directory
    /// object): the one writer makes this check and the write one step; the unique index is the backstop.
    static func identifierOwner(kind: DocumentKind, id: String, tenantId: TenantID, _ db: WriterStatements) throws -> IdentifierOwner? {
        guard let query = identifierOwnerQuery(kind: kind, id: id, tenantId: tenantId) else { return nil }
        return try identifierOwner(try db.query(query.sql, query.binds).first)
    }

    static func insertAudit(_ audit: AuditRecord, _ db: WriterStatements) throws {
        _ = try db.query(
            "INSERT INTO audit_log (tenant_id, at, actor, action, kind, document_id, before, after) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                .id(audit.tenantId), .date(audit.at), .text(audit.actor), .text(audit.action.rawValue), .text(audit.kind.rawValue),
                .text(audit.documentId), .optionalText(AuditRecord.text(of: audit.before)), .optionalText(AuditRecord.text(of: audit.after)),
            ])
    }

    public func put(
        tenantId: TenantID, kind: DocumentKind, id: String, body: Data, precondition: WritePrecondition, at: Date, audit: AuditRecord?,
        effects: CommittedEffects?
    ) async throws -> StoredDocument {
        let text = String(decoding: body, as: UTF8.self)
        return try await transaction { db in
            let current = try db.query(
                "SELECT version FROM documents WHERE tenant_id = ? AND kind = ? AND id = ?",
                [.id(tenantId), .text(kind.rawValue), .text(id)]
            ).first?.int("version")
            try precondition.check(current: current)
            if let owner = try Self.identifierOwner(kind: kind, id: id, tenantId: tenantId, db) { throw owner.error }
            let version = try Self.bumpRevision(db, tenantId: tenantId)
            _ = try db.query(
                """
                INSERT INTO documents (tenant_id, kind, id, body, version, updated_at) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (tenant_id, kind, id) DO UPDATE SET body = excluded.body, version = excluded.version, updated_at = excluded.updated_at
                """,
                [.id(tenantId), .text(kind.rawValue), .text(id), .text(text), .integer(Int(version)), .date(at)])
            if let audit { try Self.insertAudit(audit, db) }
            try Self.commit(effects, revision: version, db)
            return StoredDocument(tenantId: tenantId.rawValue, kind: kind, id: id, body: body, version: version, updatedAt: at)
        }
    }

    @discardableResult
    public func delete(
        tenantId: TenantID, kind: DocumentKind, id: String, precondition: WritePrecondition, audit: AuditRecord?, effects: CommittedEffects?
    ) async throws -> Int64 {
        try await transaction { db in
            let current = try db.query(
                "SELECT version FROM documents WHERE tenant_id = ? AND kind = ? AND id = ?",
                [.id(tenantId), .text(kind.rawValue), .text(id)]
            ).first?.int("version")
            try (precondition == .none ? .mustExist : precondition).check(current: current)
            let revision = try Self.bumpRevision(db, tenantId: tenantId)
            _ = try db.query(
                "DELETE FROM documents WHERE tenant_id = ? AND kind = ? AND id = ?",
                [.id(tenantId), .text(kind.rawValue), .text(id)])
            if let audit { try Self.insertAudit(audit, db) }
            try Self.commit(effects, revision: revision, db)
            return revision
        }
    }

    public func seed(_ documents: [StoredDocument]) async throws {
        guard !documents.isEmpty else { return }
        try await transaction { db in
            guard let version = try db.query("UPDATE revision SET value = value + 1 WHERE id = 1 RETURNING value").first?.int("value") else {
                throw StorageError(.corrupt, "the revision row is missing")
            }
            for tenantId in Set(documents.map { TenantID($0.tenantId) }) { try Self.recordTenantRevision(db, tenantId: tenantId, revision: version) }
            for document in documents {
                _ = try db.query(
                    "INSERT OR IGNORE INTO documents (tenant_id, kind, id, body, version, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
                    [
                        .text(document.tenantId), .text(document.kind.rawValue), .text(document.id),
                        .text(String(decoding: document.body, as: UTF8.self)), .integer(Int(version)), .date(document.updatedAt),
                    ])
            }
        }
    }

    public func appendAudit(_ record: AuditRecord) async throws {
        try await transaction { db in try Self.insertAudit(record, db) }
    }

    public func auditRecords(tenantId: TenantID, limit: Int, before: Int64?) async throws -> [AuditRecord] {
        try await read(
            """
            SELECT id, tenant_id, at, actor, action, kind, document_id, before, after FROM audit_log
            WHERE tenant_id = ? AND id < ? ORDER BY id DESC LIMIT ?
            """,
            [.id(tenantId), .integer(Int(before ?? Int64.max)), .integer(limit)]
        ).map { row in
            AuditRecord(
                id: try row.int("id"), tenantId: try row.id("tenant_id"), at: try row.date("at"),
                actor: try row.string("actor"), action: AuditAction(rawValue: try row.string("action")), kind: AuditSubject(rawValue: try row.string("kind")),
                documentId: try row.string("document_id"), before: AuditRecord.value(of: row.optionalString("before")),
                after: AuditRecord.value(of: row.optionalString("after")))
        }
    }
}
