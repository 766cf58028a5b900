import Foundation
import HTTPTypes
import Hummingbird
import Logging
import PortcullisCore
import PortcullisStorage
import PortcullisTokens

/// The admin side of continuous access evaluation (PROTOCOL §14): ending a user's sessions (Graph's
/// `revokeSignInSessions`), reporting their credentials compromised, and the tenant's Shared Signals streams — listed
/// with their status and last deliveries, paused, resumed, disabled or deleted.
struct SignalAdminRoutes: Sendable {
    let store: any PortcullisStore
    let tenants: TenantCache
    let transmitter: SignalTransmitter
    /// A user confirmed compromised is a risk decision (PROTOCOL §19), made there.
    let risk: RiskEngine
    let clock: any WallClock
    let logger: Logger

    func register(on group: RouterGroup<PortcullisRequestContext>) {
        group.post("users/:id/revokeSignInSessions") { _, context in
            let (tenant, user) = try await user(context)
            try await revokeSessions(tenant: tenant, user: user, actor: context.actor, compromised: false)
            return JSONResponse.make(status: .ok, JSONValue.object(["value": .bool(true)]))
        }
        group.post("users/:id/confirmCompromised") { _, context in
            let (tenant, user) = try await user(context)
            try await revokeSessions(tenant: tenant, user: user, actor: context.actor, compromised: true)
            return Response(status: .noContent)
        }
        group.get("ssf-streams") { _, context in
            let tenant = try await tenant(context)
            var value: [JSONValue] = []
            for stream in tenant.contents.sharedSignalsStreams { value.append(try await summary(stream, tenant: tenant, deliveries: 0)) }
            return JSONResponse.make(status: .ok, JSONValue.object(["value": .array(value)]))
        }
        group.get("ssf-streams/:id") { _, context in
            let tenant = try await tenant(context)
            return JSONResponse.make(status: .ok, try await summary(try await stream(context, tenant: tenant).document, tenant: tenant, deliveries: 20))
        }
        group.post("ssf-streams/:id/status") { request, context in
            let tenant = try await tenant(context)
            let found = try await stream(context, tenant: tenant)
            let body = try await DocumentBody.body(request, context)
            let problems = ProblemCollector()
            guard let reader = JSONObjectReader(body, at: "", problems: problems) else {
                throw APIError.validation(ValidationError(problems: problems.problems))
            }
            reader.rejectUnknownMembers(allowed: ["status", "reason"])
            let status = reader.enumeration("status", allowed: SharedSignalsStream.Status.allCases.map(\.rawValue), required: true)
            let reason = reader.string("reason", nonEmpty: false)
            if let reason, reason.count > 256 { problems.add("/reason", "may be at most 256 characters.") }
            do { try problems.check() } catch let error as ValidationError { throw APIError.validation(error) }
            let stream = try await setStatus(
                found, to: status.flatMap(SharedSignalsStream.Status.init(rawValue:)) ?? found.document.status, reason: reason, tenant: tenant,
                actor: context.actor)
            return JSONResponse.make(status: .ok, try await summary(stream, tenant: tenant, deliveries: 0))
        }
        group.delete("ssf-streams/:id") { _, context in
            let tenant = try await tenant(context)
            try await transmitter.delete(try await stream(context, tenant: tenant), tenant: tenant, actor: context.actor)
            return Response(status: .noContent)
        }
    }

    func tenant(_ context: PortcullisRequestContext) async throws -> TenantSnapshot { try await tenants.tenant(of: context) }

    func user(_ context: PortcullisRequestContext) async throws -> (TenantSnapshot, User) { try await tenants.user(of: context) }

    func stream(_ context: PortcullisRequestContext, tenant: TenantSnapshot) async throws -> Versioned<SharedSignalsStream> {
        try await stream(id: context.parameters.get("id") ?? "", tenant: tenant)
    }

    func stream(id given: String, tenant: TenantSnapshot) async throws -> Versioned<SharedSignalsStream> {
        let id = given.lowercased()
        guard id.count <= 64, let found = try await transmitter.streams.read(tenant, id: id) else { throw APIError.notFound("The stream \(id.prefix(64))") }
        return found
    }

    /// Enables, pauses or disables a stream as its receiver can (SSF §8.1.2), with the admin's reason; saved (and
    /// audited) only when that changes something. Typed: the console calls it too.
    func setStatus(
        _ found: Versioned<SharedSignalsStream>, to status: SharedSignalsStream.Status, reason: String?, tenant: TenantSnapshot, actor: String
    ) async throws -> SharedSignalsStream {
        var stream = found.document
        stream.status = status
        stream.statusReason = reason
        guard stream != found.document else { return stream }
        return try await transmitter.save(stream, before: found, tenant: tenant, actor: actor)
    }

    /// Ends every refresh token and session of the user now and voids their access tokens at Portcullis's own APIs, tells
    /// receivers (`session-revoked`), audited — all in one transaction (PROTOCOL §14.1). With `compromised`, the admin
    /// confirms the user compromised, a risk decision (PROTOCOL §19) whose effects are the same and RISC
    /// `credential-compromise` first. Typed: the console calls it too.
    func revokeSessions(tenant: TenantSnapshot, user: User, actor: String, compromised: Bool) async throws {
        if compromised {
            try await risk.confirmCompromised(user, in: tenant, actor: actor)
            logger.notice("user's credentials reported compromised: sessions revoked", metadata: [LogKeys.userId: .string(user.id.rawValue)])
            return
        }
        let now = clock.now()
        let effects = ChangeEffects.sessionsRevoked(user: user, tenantId: tenant.tenant.id, compromised: false, at: now)
        let committed = transmitter.committed(
            effects, tenant: tenant,
            audit: [
                AuditRecord(
                    tenantId: tenant.tenant.id, at: now, actor: actor, action: .revokeSignInSessions, kind: .user, documentId: user.id.rawValue, before: nil,
                    after: ["refreshTokens": "revoked", "sessions": "ended", "accessTokensIssuedBefore": .string(now.formatted(.iso8601))])
            ])
        try await store.commit(committed)
        transmitter.didCommit(committed)
        logger.notice("user's sign-in sessions revoked", metadata: [LogKeys.userId: .string(user.id.rawValue)])
    }

    /// A stream as the admin API and console show it: its settings (never its credential), how many events wait, and
    /// (`deliveries` > 0) its newest messages.
    func summary(_ stream: SharedSignalsStream, tenant: TenantSnapshot, deliveries: Int) async throws -> JSONValue {
        guard case .object(var object) = stream.presentedForAdmin else { return .null }
        object["pending"] = .number(Double(try await store.pendingSignalCount(target: stream.outboxTarget)))
        object["eventsDelivered"] = .array(stream.eventsDelivered.map { .string($0.rawValue) })
        if deliveries > 0 {
            object["lastDeliveries"] = .array(
                try await store.recentSignals(target: stream.outboxTarget, limit: deliveries).map { message in
                    var entry: [String: JSONValue] = [
                        "jti": .string(message.jti), "state": .string(message.state.rawValue), "attempts": .number(Double(message.attempts)),
                        "createdAt": .string(message.createdAt.formatted(.iso8601)),
                    ]
                    if let delivered = message.deliveredAt { entry["deliveredAt"] = .string(delivered.formatted(.iso8601)) }
                    if let error = message.lastError { entry["lastError"] = .string(error) }
                    return .object(entry)
                })
        }
        return .object(object)
    }
}
