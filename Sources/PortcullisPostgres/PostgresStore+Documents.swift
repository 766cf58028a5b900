public import Foundation
public import PortcullisCore
public import PortcullisStorage
import PostgresNIO

extension PostgresStore {
    public func revision() async throws -> Int64 {
        try await rows("SELECT value FROM revision WHERE id = 1").first?.decode(Int64.self) ?? 0
    }

    public func tenantRevisions() async throws -> [String: Int64] {
        var revisions: [String: Int64] = [:]
        for row in try await rows("SELECT tenant_id, revision FROM tenant_revisions") {
            let (tenant, revision) = try row.decode((String, Int64).self)
            revisions[tenant] = revision
        }
        return revisions
    }

    public func documents(tenantIds: [String]) async throws -> [StoredDocument] {
        guard !tenantIds.isEmpty else { return [] }
        return try await rows(
            "SELECT tenant_id, kind, id, body, version, updated_at FROM documents WHERE tenant_id = ANY(\(tenantIds)) ORDER BY tenant_id, kind, id"
        ).map(Self.document)
    }

    /// The channel every document write notifies in its own transaction (delivered on commit, to every node).
    static let changeChannel = "portcullis_documents"

    /// LISTENs on a connection of the pool for as long as it lasts.
    public func followDocumentChanges(_ changed: @escaping @Sendable (DocumentChange) async -> Void) async throws {
        try await client.withConnection { connection in
            try await connection.listen(on: Self.changeChannel) { notifications in
                for try await notification in notifications {
                    if let change = DocumentChange(payload: notification.payload) { await changed(change) }
                }
            }
        }
    }

    public func tenantIds() async throws -> [String] {
        try await rows("SELECT id FROM documents WHERE kind = \(DocumentKind.tenant.rawValue) AND tenant_id = id ORDER BY id").map {
            try $0.decode(String.self)
        }
    }

    public func identifierOwner(kind: DocumentKind, id: String, tenantId: TenantID) async throws -> IdentifierOwner? {
        guard let query = Self.identifierOwnerQuery(kind: kind, id: id, tenantId: tenantId) else { return nil }
        return try Self.identifierOwner(try await rows(query).first)
    }

    /// Who else holds `id` in `kind`'s installation-wide namespace: the query (`nil` when the kind has none).
    static func identifierOwnerQuery(kind: DocumentKind, id: String, tenantId: TenantID) -> PostgresQuery? {
        guard let namespace = kind.installationWideNamespace else { return nil }
        let kinds = DocumentKind.kinds(inNamespace: namespace).map(\.rawValue)
        return """
            SELECT tenant_id, kind FROM documents WHERE id = \(id) AND kind = ANY(\(kinds)) AND NOT (tenant_id = \(tenantId) AND kind = \(kind.rawValue)) LIMIT 1
            """
    }

    static func identifierOwner(_ row: PostgresRow?) throws -> IdentifierOwner? {
        try row.map { row in
            let (tenant, kind) = try row.decode((String, String).self)
            return IdentifierOwner(tenantId: tenant, kind: DocumentKind(rawValue: kind))
        }
    }

    static func document(_ row: PostgresRow) throws -> StoredDocument {
        let (tenant, kind, id, body, version, updated) = try row.decode((String, String, String, String, Int64, Double).self)
        return StoredDocument(
            tenantId: tenant, kind: DocumentKind(rawValue: kind), id: id, body: Data(body.utf8), version: version, updatedAt: Date(seconds: updated))
    }

    public func documents(tenantId: TenantID, kind: DocumentKind) async throws -> [StoredDocument] {
        try await rows(
            "SELECT tenant_id, kind, id, body, version, updated_at FROM documents WHERE tenant_id = \(tenantId) AND kind = \(kind.rawValue) ORDER BY id"
        ).map(Self.document)
    }

    public func document(tenantId: TenantID, kind: DocumentKind, id: String) async throws -> StoredDocument? {
        try await rows(
            "SELECT tenant_id, kind, id, body, version, updated_at FROM documents WHERE tenant_id = \(tenantId) AND kind = \(kind.rawValue) AND id = \(id)"
        ).first.map(Self.document)
    }

    /// Bumps the store-wide revision (its row lock serialises every document writer), records it as the tenant's
    /// revision, and tells every node through `pg_notify` — delivered only if the transaction commits.
    static func bumpRevision(_ db: Statements, tenantId: TenantID, kind: DocumentKind?, id: String?) async throws -> Int64 {
        guard let value = try await db.query("UPDATE revision SET value = value + 1 WHERE id = 1 RETURNING value").first?.decode(Int64.self) else {
            throw StorageError(.corrupt, "the revision row is missing")
        }
        try await recordTenantRevision(db, DocumentChange(tenantId: tenantId.rawValue, revision: value, kind: kind, id: id))
        return value
    }

    static func recordTenantRevision(_ db: Statements, _ change: DocumentChange) async throws {
        try await db.query(
            """
            INSERT INTO tenant_revisions (tenant_id, revision) VALUES (\(change.tenantId), \(change.revision))
            ON CONFLICT (tenant_id) DO UPDATE SET revision = excluded.revision
            """)
        try await db.query("SELECT pg_notify(\(changeChannel), \(change.payload))")
    }

    /// Who else holds `id` in `kind`'s installation-wide namespace (another tenant, or another kind of directory
    /// object). Document writers are serialised by the revision row, so the check and the write are one step;
    /// the unique index `documents_installation_ids` is the backstop.
    static func identifierOwner(kind: DocumentKind, id: String, tenantId: TenantID, _ db: Statements) async throws -> IdentifierOwner? {
        guard let query = identifierOwnerQuery(kind: kind, id: id, tenantId: tenantId) else { return nil }
        return try identifierOwner(try await db.query(query).first)
    }

    static func insertAudit(_ audit: AuditRecord, _ db: Statements) async throws {
        try await db.query(
            """
            INSERT INTO audit_log (tenant_id, at, actor, action, kind, document_id, before, after)
            VALUES (\(audit.tenantId), \(audit.at.seconds), \(audit.actor), \(audit.action.rawValue), \(audit.kind.rawValue), \(audit.documentId),
                    \(AuditRecord.text(of: audit.before)), \(AuditRecord.text(of: audit.after)))
            """)
    }

    public func put(
        tenantId: TenantID, kind: DocumentKind, id: String, body: Data, precondition: WritePrecondition, at: Date, audit: AuditRecord?,
        effects: CommittedEffects?
    ) async throws -> StoredDocument {
        let text = String(decoding: body, as: UTF8.self)
        return try await transaction { db in
            // The revision row's lock serialises every document writer, so the check below sees the latest commit.
            let version = try await Self.bumpRevision(db, tenantId: tenantId, kind: kind, id: id)
            let current = try await db.query(
                "SELECT version FROM documents WHERE tenant_id = \(tenantId) AND kind = \(kind.rawValue) AND id = \(id)"
            ).first?.decode(Int64.self)
            try precondition.check(current: current)
            if let owner = try await Self.identifierOwner(kind: kind, id: id, tenantId: tenantId, db) { throw owner.error }
            try await db.query(
                """
                INSERT INTO documents (tenant_id, kind, id, body, version, updated_at) VALUES (\(tenantId), \(kind.rawValue), \(id), \(text), \(version), \(at.seconds))
                ON CONFLICT (tenant_id, kind, id) DO UPDATE SET body = excluded.body, version = excluded.version, updated_at = excluded.updated_at
                """)
            if let audit { try await Self.insertAudit(audit, db) }
            try await Self.commit(effects, revision: version, db)
            return StoredDocument(tenantId: tenantId.rawValue, kind: kind, id: id, body: body, version: version, updatedAt: at)
        }
    }

    @discardableResult
    public func delete(
        tenantId: TenantID, kind: DocumentKind, id: String, precondition: WritePrecondition, audit: AuditRecord?, effects: CommittedEffects?
    ) async throws -> Int64 {
        try await transaction { db in
            let revision = try await Self.bumpRevision(db, tenantId: tenantId, kind: kind, id: id)
            let current = try await db.query(
                "SELECT version FROM documents WHERE tenant_id = \(tenantId) AND kind = \(kind.rawValue) AND id = \(id)"
            ).first?.decode(Int64.self)
            try (precondition == .none ? .mustExist : precondition).check(current: current)
            try await db.query("DELETE FROM documents WHERE tenant_id = \(tenantId) AND kind = \(kind.rawValue) AND id = \(id)")
            if let audit { try await Self.insertAudit(audit, db) }
            try await Self.commit(effects, revision: revision, db)
            return revision
        }
    }

    public func seed(_ documents: [StoredDocument]) async throws {
        guard !documents.isEmpty else { return }
        try await transaction { db in
            guard let version = try await db.query("UPDATE revision SET value = value + 1 WHERE id = 1 RETURNING value").first?.decode(Int64.self) else {
                throw StorageError(.corrupt, "the revision row is missing")
            }
            for tenantId in Set(documents.map(\.tenantId)) { try await Self.recordTenantRevision(db, DocumentChange(tenantId: tenantId, revision: version)) }
            for document in documents {
                try await db.query(
                    """
                    INSERT INTO documents (tenant_id, kind, id, body, version, updated_at)
                    VALUES (\(document.tenantId), \(document.kind.rawValue), \(document.id), \(String(decoding: document.body, as: UTF8.self)), \(version), \(document.updatedAt.seconds))
                    ON CONFLICT DO NOTHING
                    """)
            }
        }
    }

    public func appendAudit(_ record: AuditRecord) async throws {
        try await transaction { db in try await Self.insertAudit(record, db) }
    }

    public func auditRecords(tenantId: TenantID, limit: Int, before: Int64?) async throws -> [AuditRecord] {
        try await rows(
            """
            SELECT id, tenant_id, at, actor, action, kind, document_id, before, after FROM audit_log
            WHERE tenant_id = \(tenantId) AND id < \(before ?? Int64.max) ORDER BY id DESC LIMIT \(limit)
            """
        ).map { row in
            let (id, tenant, at, actor, action, kind, documentId, before, after) = try row.decode(
                (Int64, String, Double, String, String, String, String, String?, String?).self)
            return AuditRecord(
                id: id, tenantId: TenantID(tenant), at: Date(seconds: at), actor: actor, action: AuditAction(rawValue: action),
                kind: AuditSubject(rawValue: kind),
                documentId: documentId, before: AuditRecord.value(of: before), after: AuditRecord.value(of: after))
        }
    }
}
