import Foundation
import Hummingbird
import PortcullisCore
import PortcullisStorage
import PortcullisTokens

/// `/admin/v1/users/{id}/authentication-methods` (PROTOCOL §10, §12): a user's TOTP authenticator, passkeys and
/// temporary access pass in Graph's shapes; remove any of them (the user registers again), issue a temporary access
/// pass (shown once), clear a suspect passkey. Metadata only: a secret never leaves the store.
struct AuthenticationMethodRoutes: Sendable {
    let store: any PortcullisStore
    let tenants: TenantCache
    let passes: TemporaryAccessPasses
    let transmitter: SignalTransmitter
    /// The FIDO metadata BLOB's authenticators: an attested passkey's model name.
    let metadata: FidoMetadata
    let clock: any WallClock

    struct Page: Encodable { let value: [Method] }

    /// One method as the API shows it, in the shape of Graph's `…AuthenticationMethod` of its kind.
    enum Method: Encodable {
        case totp(SoftwareOathMethod)
        case passkey(PasskeyMethod)
        case temporaryAccessPass(TemporaryAccessPassMethod)

        func encode(to encoder: any Encoder) throws {
            switch self {
            case .totp(let method): try method.encode(to: encoder)
            case .passkey(let method): try method.encode(to: encoder)
            case .temporaryAccessPass(let method): try method.encode(to: encoder)
            }
        }

        var json: JSONValue {
            switch self {
            case .totp(let method): JSONValue(encoding: method)
            case .passkey(let method): JSONValue(encoding: method)
            case .temporaryAccessPass(let method): JSONValue(encoding: method)
            }
        }
    }

    func register(on group: RouterGroup<PortcullisRequestContext>) {
        group.get("users/:id/authentication-methods") { _, context in try await list(context) }
        group.post("users/:id/authentication-methods/temporaryAccessPass") { request, context in try await issuePass(request, context) }
        group.delete("users/:id/authentication-methods/:methodId") { _, context in try await remove(context) }
        group.post("users/:id/authentication-methods/:methodId/clearSuspicion") { _, context in try await clearSuspicion(context) }
    }

    func user(_ context: PortcullisRequestContext) async throws -> (TenantSnapshot, User) {
        guard let tenant = try await tenants.snapshot(tenantSegment: try context.requirePrincipal().tid) else { throw APIError.unauthenticated }
        let identity = context.parameters.get("id") ?? ""
        guard let user = tenant.directory.user(identity: identity) else { throw APIError.notFound("The user \(identity.prefix(128))") }
        return (tenant, user)
    }

    /// Every method of the user: TOTP, passkeys (oldest first), the temporary access pass.
    func methods(tenantId: String, userId: String) async throws -> [(id: String, method: Method)] {
        let now = clock.now()
        var found: [(String, Method)] = try await store.authenticationMethods(tenantId: TenantID(tenantId), userId: ObjectID(userId)).map {
            ($0.id.rawValue, .totp(SoftwareOathMethod($0)))
        }
        found += try await store.passkeys(tenantId: TenantID(tenantId), userId: ObjectID(userId)).map {
            ($0.id.rawValue, .passkey(PasskeyMethod($0, metadata: metadata)))
        }
        if let pass = try await store.temporaryAccessPass(tenantId: TenantID(tenantId), userId: ObjectID(userId)) {
            found.append((pass.id.rawValue, .temporaryAccessPass(TemporaryAccessPassMethod(pass, now: now, secret: nil))))
        }
        return found
    }

    func list(_ context: PortcullisRequestContext) async throws -> Response {
        let (tenant, user) = try await user(context)
        return JSONResponse.make(status: .ok, Page(value: try await methods(tenantId: tenant.tenant.id.rawValue, userId: user.id.rawValue).map(\.method)))
    }

    /// `DELETE …/{methodId}`.
    func remove(_ context: PortcullisRequestContext) async throws -> Response {
        let (tenant, user) = try await user(context)
        try await removeMethod(tenant: tenant, user: user, id: context.parameters.get("methodId") ?? "", actor: context.actor)
        return Response(status: .noContent)
    }

    /// `POST …/temporaryAccessPass`: Graph's `temporaryAccessPassAuthenticationMethod` (`startDateTime`,
    /// `lifetimeInMinutes` 10–43,200, `isUsableOnce`; all optional).
    func issuePass(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let (tenant, user) = try await user(context)
        let now = clock.now()
        var request = request
        let buffer = try await request.collectBody(upTo: 4096)
        let problems = ProblemCollector()
        var start: Date?
        var lifetime = TemporaryAccessPasses.defaultLifetime
        var usableOnce = false
        if buffer.readableBytes > 0 {
            guard let value = JSONValue.parse(Data(buffer.readableBytesView)) else { throw APIError.malformedJSON() }
            if let reader = JSONObjectReader(value, at: "", problems: problems) {
                reader.rejectUnknownMembers(allowed: ["@odata.type", "startDateTime", "lifetimeInMinutes", "isUsableOnce"])
                if let type = reader.string("@odata.type"), type != TemporaryAccessPassMethod.odataType {
                    problems.add("/@odata.type", "must be \(TemporaryAccessPassMethod.odataType) when present.")
                }
                if let text = reader.string("startDateTime") {
                    if let date = ISO8601.date(text) {
                        if date < now.addingTimeInterval(-300) { problems.add("/startDateTime", "must not be in the past.") }
                        if date > now.addingTimeInterval(180 * 86_400) { problems.add("/startDateTime", "must be within 180 days.") }
                        start = date
                    } else {
                        problems.add("/startDateTime", "must be an ISO 8601 date-time such as 2027-01-31T09:00:00Z.")
                    }
                }
                lifetime = reader.integer("lifetimeInMinutes", in: TemporaryAccessPasses.lifetimeRange) ?? lifetime
                usableOnce = reader.bool("isUsableOnce") ?? usableOnce
            }
        }
        do { try problems.check() } catch { throw APIError.validation(error) }
        let issued = try await issuePass(tenant: tenant, user: user, start: start, lifetime: lifetime, usableOnce: usableOnce, actor: context.actor)
        return JSONResponse.make(
            status: .created, issued, headers: [.location: request.uri.path.replacingOccurrences(of: "/temporaryAccessPass", with: "/\(issued.id)")])
    }

    /// `POST …/{methodId}/clearSuspicion`.
    func clearSuspicion(_ context: PortcullisRequestContext) async throws -> Response {
        let (tenant, user) = try await user(context)
        let cleared = try await clearSuspicion(tenant: tenant, user: user, id: context.parameters.get("methodId") ?? "", actor: context.actor)
        return JSONResponse.make(status: .ok, cleared)
    }

    // MARK: The typed operations (the API and the console)

    /// Removes a method of any kind (PROTOCOL §10, §12.1, §12.3); audited with what it was.
    func removeMethod(tenant: TenantSnapshot, user: User, id rawId: String, actor: String) async throws {
        let id = rawId.lowercased()
        guard let (_, method) = try await methods(tenantId: tenant.tenant.id.rawValue, userId: user.id.rawValue).first(where: { $0.id == id }) else {
            throw APIError.notFound("The authentication method \(id.prefix(64)) of \(user.userPrincipalName)")
        }
        let now = clock.now()
        func audit(_ kind: AuditSubject) -> AuditRecord {
            AuditRecord(
                tenantId: tenant.tenant.id, at: now, actor: actor, action: .delete, kind: kind, documentId: "\(user.id)/\(id)", before: method.json,
                after: nil)
        }
        // A method removed voids what it signed in and tells receivers (PROTOCOL §14.1), committed with the removal; a
        // temporary access pass is not a credential receivers hear of.
        func effects(_ type: CriticalEvent.CredentialType, _ kind: AuditSubject) async throws -> CommittedEffects {
            try await transmitter.methodChangeEffects(type, added: false, tenant: tenant, user: user, initiator: .admin, at: now, audit: audit(kind))
        }
        let removed: Bool
        var committed: CommittedEffects?
        switch method {
        case .totp:
            committed = try await effects(.app, .authenticationMethod)
            removed = try await store.deleteAuthenticationMethod(
                tenantId: TenantID(tenant.tenant.id), userId: ObjectID(user.id), id: RecordID(id), effects: committed)
        case .passkey:
            committed = try await effects(.fido2, .passkey)
            removed = try await store.deletePasskey(tenantId: TenantID(tenant.tenant.id), userId: ObjectID(user.id), id: RecordID(id), effects: committed)
        case .temporaryAccessPass:
            removed = try await store.deleteTemporaryAccessPass(tenantId: TenantID(tenant.tenant.id), userId: ObjectID(user.id), id: RecordID(id))
            if removed { try await store.appendAudit(audit(.temporaryAccessPass)) }
        }
        guard removed else { throw APIError.notFound("The authentication method \(id.prefix(64)) of \(user.userPrincipalName)") }
        if let committed { transmitter.didCommit(committed) }
    }

    /// Issues the user's temporary access pass (PROTOCOL §12.3), replacing the one they had; the answer holds the pass,
    /// which nothing else ever shows. Times are whole seconds, as Graph shows them (the stores keep them exactly, so a
    /// pass is usable at the instant it is issued).
    func issuePass(
        tenant: TenantSnapshot, user: User, start: Date?, lifetime: Int, usableOnce: Bool, actor: String
    ) async throws -> TemporaryAccessPassMethod {
        let now = Date(timeIntervalSince1970: clock.now().timeIntervalSince1970.rounded(.down))
        guard user.accountEnabled else {
            throw APIError(.conflict, "accountDisabled", "\(user.userPrincipalName) is disabled: a temporary access pass could not sign in.")
        }
        let secret = TemporaryAccessPasses.generate()
        let pass = TemporaryAccessPassRecord(
            id: RecordID.generate(), tenantId: TenantID(tenant.tenant.id), userId: ObjectID(user.id), passHash: passes.hash(secret), createdAt: now,
            startAt: max(start.map { Date(timeIntervalSince1970: $0.timeIntervalSince1970.rounded(.down)) } ?? now, now), lifetimeMinutes: lifetime,
            usableOnce: usableOnce)
        let replaced = try await store.replaceTemporaryAccessPass(pass)
        try await store.appendAudit(
            AuditRecord(
                tenantId: tenant.tenant.id, at: now, actor: actor, action: .create, kind: .temporaryAccessPass,
                documentId: "\(user.id)/\(pass.id)", before: replaced.map { JSONValue(encoding: TemporaryAccessPassMethod($0, now: now, secret: nil)) },
                after: JSONValue(encoding: TemporaryAccessPassMethod(pass, now: now, secret: nil))))
        return TemporaryAccessPassMethod(pass, now: now, secret: secret)
    }

    /// An admin's decision that a passkey marked suspect (its counter went backwards, PROTOCOL §12.1) may sign in again.
    func clearSuspicion(tenant: TenantSnapshot, user: User, id rawId: String, actor: String) async throws -> PasskeyMethod {
        let id = RecordID(rawId)
        guard let passkey = try await store.passkeys(tenantId: TenantID(tenant.tenant.id), userId: ObjectID(user.id)).first(where: { $0.id == id }) else {
            throw APIError.notFound("The passkey \(id.rawValue.prefix(64)) of \(user.userPrincipalName)")
        }
        guard passkey.suspectSince != nil, try await store.clearPasskeySuspicion(tenantId: TenantID(tenant.tenant.id), userId: ObjectID(user.id), id: id) else {
            throw APIError(.conflict, "notSuspect", "The passkey \(passkey.displayName) is not marked suspect.")
        }
        var cleared = passkey
        cleared.suspectSince = nil
        try await store.appendAudit(
            AuditRecord(
                tenantId: tenant.tenant.id, at: clock.now(), actor: actor, action: .clearSuspicion, kind: .passkey,
                documentId: "\(user.id)/\(id)", before: JSONValue(encoding: PasskeyMethod(passkey)), after: JSONValue(encoding: PasskeyMethod(cleared))))
        return PasskeyMethod(cleared, metadata: metadata)
    }
}

/// A TOTP authenticator in the shape of Graph's `softwareOathAuthenticationMethod`.
struct SoftwareOathMethod: Encodable {
    let odataType = "#microsoft.graph.softwareOathAuthenticationMethod"
    let id: String
    let kind: String
    let createdDateTime: Date
    let lastUsedDateTime: Date?

    enum CodingKeys: String, CodingKey {
        case id, kind, createdDateTime, lastUsedDateTime
        case odataType = "@odata.type"
    }

    init(_ record: AuthenticationMethodRecord) {
        id = record.id.rawValue
        kind = record.kind.rawValue
        createdDateTime = record.createdAt
        lastUsedDateTime = record.lastUsedAt
    }
}

/// A passkey as the admin API and the audit log show it: Graph's `fido2AuthenticationMethod`, plus what Portcullis
/// knows besides (last use, backup state, suspicion).
struct PasskeyMethod: Encodable {
    let odataType = "#microsoft.graph.fido2AuthenticationMethod"
    let id: String
    let displayName: String
    let aaGuid: String
    let createdDateTime: Date
    let lastUsedDateTime: Date?
    let attestationLevel: String
    /// The model's name, when the attestation verified and the FIDO metadata BLOB names it.
    let model: String?
    let backedUp: Bool
    let suspect: Bool

    enum CodingKeys: String, CodingKey {
        case odataType = "@odata.type"
        case id, displayName, aaGuid, createdDateTime, lastUsedDateTime, attestationLevel, model, backedUp, suspect
    }

    init(_ passkey: PasskeyRecord, metadata: FidoMetadata = .empty) {
        id = passkey.id.rawValue
        displayName = passkey.displayName
        aaGuid = passkey.aaguid.identifierText
        createdDateTime = passkey.createdAt
        lastUsedDateTime = passkey.lastUsedAt
        // Graph: `attested` when the attestation verified to a root the tenant trusts, else `notAttested` (PROTOCOL §12.1).
        attestationLevel = passkey.attestation == .attested ? "attested" : "notAttested"
        model = passkey.attestedModel.flatMap { metadata.authenticators[$0]?.description }.flatMap { $0.isEmpty ? nil : $0 }
        backedUp = passkey.backedUp
        suspect = passkey.suspectSince != nil
    }
}

/// A temporary access pass in the shape of Graph's `temporaryAccessPassAuthenticationMethod`; `temporaryAccessPass`
/// (the pass itself) only in the answer that issued it.
struct TemporaryAccessPassMethod: Encodable {
    static let odataType = "#microsoft.graph.temporaryAccessPassAuthenticationMethod"
    let odataType = Self.odataType
    let id: String
    let temporaryAccessPass: String?
    let createdDateTime: Date
    let startDateTime: Date
    let lifetimeInMinutes: Int
    let isUsableOnce: Bool
    let isUsable: Bool
    let methodUsabilityReason: String
    let lastUsedDateTime: Date?

    enum CodingKeys: String, CodingKey {
        case odataType = "@odata.type"
        case id, temporaryAccessPass, createdDateTime, startDateTime, lifetimeInMinutes, isUsableOnce, isUsable, methodUsabilityReason
        case lastUsedDateTime
    }

    init(_ pass: TemporaryAccessPassRecord, now: Date, secret: String?) {
        id = pass.id.rawValue
        temporaryAccessPass = secret
        createdDateTime = pass.createdAt
        startDateTime = pass.startAt
        lifetimeInMinutes = pass.lifetimeMinutes
        isUsableOnce = pass.usableOnce
        let usability = pass.usability(at: now)
        isUsable = usability == .enabledByPolicy
        methodUsabilityReason = usability.rawValue
        lastUsedDateTime = pass.usedAt
    }
}
