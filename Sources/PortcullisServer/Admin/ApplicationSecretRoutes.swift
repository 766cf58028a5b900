import Foundation
import HTTPTypes
import Hummingbird
import PortcullisCore
import PortcullisStorage
import PortcullisTokens

/// `POST /admin/v1/applications/{appId}/secrets` and `DELETE …/secrets/{keyId}` (PROTOCOL §11): a new secret
/// of 256 random bits, shown once; several at once for rotation without downtime. Each is a replace of the
/// application document (its version, its audit record — metadata only, never the secret or its hash).
///
/// Neither needs `If-Match`: a secret is created or removed whole, never edited, so no change can be
/// overwritten unnoticed; one given is honoured (412 when stale).
struct ApplicationSecretRoutes: Sendable {
    let resource: DocumentResource<PortcullisCore.Application>
    let credentials: CredentialHasher

    func register(on group: RouterGroup<PortcullisRequestContext>) {
        group.post("applications/:id/secrets") { request, context in try await add(request, context) }
        group.delete("applications/:id/secrets/:keyId") { request, context in try await remove(request, context) }
    }

    struct Created: Encodable {
        let keyId: String
        let hint: String?
        let displayName: String?
        let startDateTime: String?
        let endDateTime: String?
        /// The secret itself: in this answer only.
        let secretText: String
    }

    func add(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let tenant = try await resource.tenant(context)
        let appId = (context.parameters.get("id") ?? "").lowercased()
        var request = request
        let buffer = try await request.collectBody(upTo: 4096)
        let problems = ProblemCollector()
        var displayName: String?
        var end: Date?
        if buffer.readableBytes > 0 {
            guard let value = JSONValue.parse(Data(buffer.readableBytesView)) else { throw APIError.malformedJSON() }
            if let reader = JSONObjectReader(value, at: "", problems: problems) {
                reader.rejectUnknownMembers(allowed: ["displayName", "endDateTime"])
                displayName = reader.string("displayName")
                if let name = displayName, name.count > 128 { problems.add("/displayName", "is longer than 128 characters.") }
                if let text = reader.string("endDateTime") {
                    end = ISO8601.date(text)
                    if end == nil {
                        problems.add("/endDateTime", "must be an ISO 8601 date-time such as 2027-01-31T00:00:00Z.")
                    } else if let end, end <= resource.clock.now() {
                        problems.add("/endDateTime", "must be in the future.")
                    }
                }
            }
        }
        do { try problems.check() } catch { throw APIError.validation(error) }
        let secretText = CredentialHasher.generateSecret()
        let secret = ClientSecret(
            keyId: RecordID.generate(), secretHash: credentials.hashSecret(secretText), hint: String(secretText.prefix(3)),
            displayName: displayName, startDateTime: resource.clock.now(), endDateTime: end)
        try await update(request, context, tenant, appId: appId) { application in
            guard !application.publicClient else {
                throw APIError(.conflict, "publicClient", "A public client cannot hold secrets (it authenticates with its client_id alone).")
            }
            guard application.secrets.count < PortcullisCore.Application.maximumSecrets else {
                throw APIError(
                    .conflict, "tooManySecrets", "The application already holds \(PortcullisCore.Application.maximumSecrets) secrets; remove one first.")
            }
            application.secrets.append(secret)
        }
        let body = Created(
            keyId: secret.keyId.rawValue, hint: secret.hint, displayName: displayName, startDateTime: secret.startDateTime.map(ISO8601.string),
            endDateTime: end.map(ISO8601.string), secretText: secretText)
        return JSONResponse.make(status: .created, body, headers: [.location: "\(request.uri.path)/\(secret.keyId)", .cacheControl: "no-store"])
    }

    func remove(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let tenant = try await resource.tenant(context)
        let appId = (context.parameters.get("id") ?? "").lowercased()
        let keyId = (context.parameters.get("keyId") ?? "").lowercased()
        try await update(request, context, tenant, appId: appId) { application in
            guard let index = application.secrets.firstIndex(where: { $0.keyId.rawValue == keyId }) else {
                throw APIError.notFound("The secret \(keyId) of application \(appId)")
            }
            application.secrets.remove(at: index)
        }
        return Response(status: .noContent)
    }

    /// Reads the application, changes it, and stores it on the condition that nobody wrote it meanwhile
    /// (retried a few times when someone did; an `If-Match` the caller gave is the condition instead).
    func update(
        _ request: Request, _ context: PortcullisRequestContext, _ tenant: TenantSnapshot, appId: String,
        _ change: (inout PortcullisCore.Application) throws -> Void
    ) async throws {
        let given = try request.headers[.ifMatch] == nil ? nil : DocumentETag.precondition(request)
        for attempt in 1...5 {
            guard let stored = try await resource.read(tenant, id: appId), !BuiltInResources.reserved.contains(where: { $0.appId.rawValue == appId })
            else { throw APIError.notFound("The application \(appId)") }
            var application = stored.document
            try change(&application)
            do {
                _ = try await resource.save(application, before: stored, precondition: given ?? .version(stored.version), tenant: tenant, actor: context.actor)
                return
            } catch let error as StorageError where error.code == .preconditionFailed && given == nil && attempt < 5 {
                continue
            } catch let error as StorageError {
                throw APIError.from(error, what: "The application \(appId)") ?? error
            }
        }
    }
}
