import Foundation
import HTTPTypes
import Hummingbird
import PortcullisCore
import PortcullisStorage
import PortcullisTokens

/// `/admin/v1/app-configuration/policies/{id}/secrets[/{identifier}]` (PROTOCOL §8.1): the material of the
/// secrets a policy declares. Written with `PUT`, removed with `DELETE`, never readable back — reads answer
/// `{identifier, kind, version, fingerprint, notAfter}`. Sealed at rest by `SecretMaterialBox`; every write is
/// audited with metadata only. A write of the material already stored (same fingerprint) changes nothing.
/// Like application secrets, neither needs `If-Match` (material is replaced whole); one given is honoured.
struct AppSecretRoutes: Sendable {
    let store: any PortcullisStore
    let tenants: TenantCache
    let compliance: ComplianceService
    let box: SecretMaterialBox
    let clock: any WallClock

    static let path = "app-configuration/policies/:id/secrets"

    func register(on group: RouterGroup<PortcullisRequestContext>) {
        group.get(RouterPath(Self.path)) { _, context in try await list(context) }
        group.get(RouterPath("\(Self.path)/:identifier")) { _, context in try await read(context) }
        group.put(RouterPath("\(Self.path)/:identifier")) { request, context in try await write(request, context) }
        group.delete(RouterPath("\(Self.path)/:identifier")) { request, context in try await remove(request, context) }
    }

    func located(_ context: PortcullisRequestContext) async throws -> (tenant: TenantSnapshot, policy: AppConfigurationPolicy) {
        guard let tenant = try await tenants.snapshot(tenantSegment: try context.requirePrincipal().tid) else { throw APIError.unauthenticated }
        let id = PolicyID(context.parameters.get("id") ?? "")
        guard let policy = tenant.appConfigurationPolicies.first(where: { $0.id == id }) else {
            throw APIError.notFound("The app configuration policy \(id.rawValue.prefix(64))")
        }
        return (tenant, policy)
    }

    func declaration(_ policy: AppConfigurationPolicy, _ context: PortcullisRequestContext) throws -> SecretDeclaration {
        let identifier = context.parameters.get("identifier") ?? ""
        guard let declaration = policy.declaration(identifier) else {
            throw APIError.notFound(
                "The secret '\(identifier.prefix(200))' of the app configuration policy \(policy.id) (declare it in the policy's secrets first)")
        }
        return declaration
    }

    static func metadata(_ material: StoredSecretMaterial) -> Data {
        (try? JSONResponse.encoder.encode(material.metadata)) ?? Data("{}".utf8)
    }

    func list(_ context: PortcullisRequestContext) async throws -> Response {
        let (tenant, policy) = try await located(context)
        let materials = (policy.secrets ?? []).compactMap {
            tenant.secretMaterials[StoredSecretMaterial.documentId(policyId: policy.id, identifier: $0.identifier)]
        }
        struct Page: Encodable { let value: [SecretMetadata] }
        return JSONResponse.make(status: .ok, data: try JSONResponse.encoder.encode(Page(value: materials.map(\.metadata))))
    }

    func read(_ context: PortcullisRequestContext) async throws -> Response {
        let (tenant, policy) = try await located(context)
        let declaration = try declaration(policy, context)
        let id = StoredSecretMaterial.documentId(policyId: policy.id, identifier: declaration.identifier)
        guard let document = try await store.document(tenantId: tenant.tenant.id, kind: .appSecretMaterial, id: id),
            let material = try? JSONDecoder().decode(StoredSecretMaterial.self, from: document.body)
        else { throw APIError.notFound("Material for the secret '\(declaration.identifier)'") }
        return JSONResponse.make(status: .ok, data: Self.metadata(material), headers: [.eTag: DocumentETag.etag(document.version)])
    }

    func write(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let (tenant, policy) = try await located(context)
        let declaration = try declaration(policy, context)
        // Up to 64 KiB of PEM, or a PKCS #12 in base64.
        let value = try await DocumentBody.body(request, context, limit: 4 * SecretMaterialReader.maximumPEMBytes)
        let now = clock.now()
        let read: SecretMaterialReader.Read
        do {
            read = try SecretMaterialReader.read(value, declaration: declaration, now: now)
        } catch let error as ValidationError {
            throw APIError.validation(error)
        }
        let id = StoredSecretMaterial.documentId(policyId: policy.id, identifier: declaration.identifier)
        let before = try await store.document(tenantId: tenant.tenant.id, kind: .appSecretMaterial, id: id)
        let previous = before.flatMap { try? JSONDecoder().decode(StoredSecretMaterial.self, from: $0.body) }
        var precondition: WritePrecondition = before.map { .version($0.version) } ?? .mustNotExist
        if request.headers[.ifMatch] != nil { precondition = try DocumentETag.precondition(request) }
        let fingerprint = read.certificateFingerprint ?? box.passwordFingerprint(String(decoding: read.material, as: UTF8.self))
        if let before, let previous, previous.fingerprint == fingerprint, previous.kind == declaration.kind {
            // The same material again: no new version (nothing for apps to fetch), no audit record.
            if (try? precondition.check(current: before.version)) == nil {
                throw APIError.from(StorageError(.preconditionFailed, ""), what: "The secret '\(declaration.identifier)'")!
            }
            return JSONResponse.make(status: .ok, data: Self.metadata(previous), headers: [.eTag: DocumentETag.etag(before.version)])
        }
        // A version greater than any this secret had, even across a delete: the store's revision only grows.
        let version = String(max(try await store.revision(), Int64(previous?.version ?? "0") ?? 0) + 1)
        let material = StoredSecretMaterial(
            policyId: policy.id, identifier: declaration.identifier, kind: declaration.kind, version: version, fingerprint: fingerprint,
            notAfter: read.notAfter, updatedAt: now,
            sealed: try box.seal(read.material, tenantId: tenant.tenant.id, policyId: policy.id, identifier: declaration.identifier, version: version))
        do {
            let stored = try await store.put(
                tenantId: tenant.tenant.id, kind: .appSecretMaterial, id: id, body: try TenantDocuments.encoder.encode(material), precondition: precondition,
                at: now,
                audit: AuditRecord(
                    tenantId: tenant.tenant.id, at: now, actor: context.actor, action: before == nil ? .create : .replace,
                    kind: AuditSubject(.appSecretMaterial), documentId: id, before: previous.flatMap { JSONValue.parse(Self.metadata($0)) },
                    after: JSONValue.parse(Self.metadata(material))))
            try await tenants.documentChanged(tenantId: tenant.tenant.id, kind: .appSecretMaterial, id: id, revision: stored.version)
            // Best effort: stored; an instance not told now learns at its next check-in or long poll.
            _ = try? await compliance.announceConfiguration(tenantId: tenant.tenant.id, clientIds: Set(policy.targets.applications))
            return JSONResponse.make(status: before == nil ? .created : .ok, data: Self.metadata(material), headers: [.eTag: DocumentETag.etag(stored.version)])
        } catch let error as StorageError {
            throw APIError.from(error, what: "The secret '\(declaration.identifier)'") ?? error
        }
    }

    func remove(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let (tenant, policy) = try await located(context)
        let declaration = try declaration(policy, context)
        let id = StoredSecretMaterial.documentId(policyId: policy.id, identifier: declaration.identifier)
        guard let before = try await store.document(tenantId: tenant.tenant.id, kind: .appSecretMaterial, id: id) else {
            throw APIError.notFound("Material for the secret '\(declaration.identifier)'")
        }
        let precondition = request.headers[.ifMatch] != nil ? try DocumentETag.precondition(request) : .version(before.version)
        try await Self.delete(before, precondition: precondition, actor: context.actor, at: clock.now(), store: store, tenants: tenants)
        _ = try? await compliance.announceConfiguration(tenantId: tenant.tenant.id, clientIds: Set(policy.targets.applications))
        return Response(status: .noContent)
    }

    /// Deletes stored material with its audit record (metadata only).
    static func delete(
        _ document: StoredDocument, precondition: WritePrecondition, actor: String, at now: Date, store: any PortcullisStore,
        tenants: TenantCache
    ) async throws {
        let metadata = (try? JSONDecoder().decode(StoredSecretMaterial.self, from: document.body)).flatMap { JSONValue.parse(Self.metadata($0)) }
        let tenantId = TenantID(document.tenantId)
        do {
            let revision = try await store.delete(
                tenantId: tenantId, kind: .appSecretMaterial, id: document.id, precondition: precondition,
                audit: AuditRecord(
                    tenantId: tenantId, at: now, actor: actor, action: .delete, kind: AuditSubject(.appSecretMaterial),
                    documentId: document.id, before: metadata, after: nil))
            try await tenants.documentChanged(tenantId: tenantId, kind: .appSecretMaterial, id: document.id, revision: revision)
        } catch let error as StorageError {
            throw APIError.from(error, what: "Material for the secret \(document.id)") ?? error
        }
    }

    /// After a policy write: the material of secrets it no longer declares (or of a deleted policy) goes, so
    /// nothing undeclared is kept — and a secret declared again later starts without material.
    static func removeUndeclared(
        policyId: PolicyID, declared: [SecretDeclaration], tenantId: TenantID, actor: String, at now: Date, store: any PortcullisStore,
        tenants: TenantCache
    ) async throws {
        let keep = Set(declared.map { StoredSecretMaterial.documentId(policyId: policyId, identifier: $0.identifier) })
        for document in try await store.documents(tenantId: tenantId, kind: .appSecretMaterial)
        where document.id.hasPrefix(policyId.rawValue + ":") && !keep.contains(document.id) {
            try await delete(document, precondition: .version(document.version), actor: actor, at: now, store: store, tenants: tenants)
        }
    }
}
