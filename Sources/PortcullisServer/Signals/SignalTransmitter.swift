import Foundation
import HTTPTypes
import Logging
public import PortcullisCore
import PortcullisStorage
import PortcullisTokens

/// The Shared Signals transmitter (PROTOCOL §14.2): turns each `CriticalEvent` into SETs for every stream of its tenant
/// that asked for them, queued in the durable outbox (push: the dispatcher sends them in order, with retries; poll: they
/// wait for the receiver, bounded per stream), and keeps the streams receivers configure. Raising is best effort after
/// the change it reports was stored: a failure is logged, never undoes the change.
public final class SignalTransmitter: Sendable {
    let store: any PortcullisStore
    let tenants: TenantCache
    let signers: TenantKeyRings
    let endpoints: ServerEndpoints
    let settings: SignalSettings
    let outboxSignal: OutboxSignal
    let polls = PollWaiters()
    let box: FactorSecretBox
    let clock: any WallClock
    let logger: Logger
    /// How long the access tokens of a sign-in live (normal, and `cp1` at a CAE resource): which sign-ins' tokens a
    /// conditional-access change can still end.
    let accessTokenLifetime: TimeInterval
    let continuousAccessTokenLifetime: TimeInterval
    /// Streams go through the one document pipeline (stored, audited, cached).
    let streams: DocumentResource<SharedSignalsStream>

    init(
        store: any PortcullisStore, tenants: TenantCache, signers: TenantKeyRings, endpoints: ServerEndpoints, settings: SignalSettings,
        outboxSignal: OutboxSignal, box: FactorSecretBox, clock: any WallClock, accessTokenLifetime: TimeInterval,
        continuousAccessTokenLifetime: TimeInterval, logger: Logger
    ) {
        self.accessTokenLifetime = accessTokenLifetime
        self.continuousAccessTokenLifetime = continuousAccessTokenLifetime
        self.store = store
        self.tenants = tenants
        self.signers = signers
        self.endpoints = endpoints
        self.settings = settings
        self.outboxSignal = outboxSignal
        self.box = box
        self.clock = clock
        self.logger = logger
        self.streams = DocumentResource(
            registration: DocumentRegistration(
                noun: "stream",
                read: { _, _, _ in
                    throw APIError(.methodNotAllowed, "methodNotAllowed", "Streams are created by receivers through the Shared Signals API.")
                },
                present: { stream, _ in Self.presentForAdmin(stream) }),
            store: store, tenants: tenants, clock: clock)
    }

    // MARK: Raising events

    /// Tells every stream that wants them about `events` (in order). Never throws: the change is stored already.
    public func raise(_ events: CriticalEvent...) async { await raise(events) }

    public func raise(_ events: [CriticalEvent]) async {
        for event in events {
            do {
                try await transmit(event)
            } catch {
                logger.error(
                    "could not queue a shared signal",
                    metadata: [LogKeys.tenantId: .string(event.tenantId), LogKeys.error: .string("\(type(of: error))")])
            }
        }
    }

    func transmit(_ event: CriticalEvent) async throws {
        guard let tenant = try await tenants.snapshot(tenantSegment: event.tenantId), !tenant.contents.sharedSignalsStreams.isEmpty else { return }
        let issuer = endpoints.issuer(tenantId: tenant.tenant.id)
        let subject = event.subject(issuer: issuer)
        let signals = event.signals
        let txn = UUID().uuidString.lowercased()
        for stream in tenant.contents.sharedSignalsStreams {
            let wanted = signals.filter { stream.wants($0.type, subject: subject, userPrincipalName: event.userPrincipalName) }
            guard !wanted.isEmpty else { continue }
            var messages: [OutboxMessage] = []
            for signal in wanted {
                messages.append(
                    try await message(
                        for: stream, tenantId: tenant.tenant.id, events: [signal.type.rawValue: .object(signal.members)], subject: subject, txn: txn))
            }
            try await enqueue(messages, for: stream)
        }
    }

    /// One signed SET for `stream`, as an outbox message routed by the stream.
    func message(
        for stream: SharedSignalsStream, tenantId: String, events: [String: JSONValue], subject: SignalSubject, txn: String?
    ) async throws -> OutboxMessage {
        let now = clock.now()
        let jti = UUID().uuidString.lowercased()
        let token = try await signers.signer(tenantId: tenantId).sign(
            sharedSignal: SharedSignalsSecurityEvent(
                iss: endpoints.issuer(tenantId: tenantId), aud: stream.audience, iat: Int(now.timeIntervalSince1970), jti: jti, subId: subject.json,
                events: events, txn: txn))
        return OutboxMessage(
            id: UUID().uuidString.lowercased(), tenantId: tenantId, enrollmentId: nil, targetUri: stream.outboxTarget, payload: token, jti: jti,
            nextAttemptAt: Self.nextAttempt(for: stream, now: now), createdAt: now)
    }

    /// When a stream's new messages are due for the dispatcher: now for an enabled push stream; held otherwise.
    static func nextAttempt(for stream: SharedSignalsStream, now: Date) -> Date { stream.pushesNow ? now : OutboxMessage.held }

    func enqueue(_ messages: [OutboxMessage], for stream: SharedSignalsStream) async throws {
        let dropped = try await store.enqueueSignals(messages, target: stream.outboxTarget, keepingAtMost: settings.pendingPerStream)
        if dropped > 0 {
            logger.warning(
                "a stream's undelivered events passed its bound; the oldest were dropped",
                metadata: ["portcullis.stream_id": .string(stream.id), "portcullis.dropped": .stringConvertible(dropped)])
        }
        if stream.pushesNow { outboxSignal.signal() }
        polls.wake(stream.id)
    }

    /// A sign-in method was added or removed (PROTOCOL §14.1): the events are Core's, from what the user holds now.
    public func methodChanged(
        _ type: CriticalEvent.CredentialType, added: Bool, tenantId: String, user: User, initiator: CriticalEvent.Initiator
    ) async {
        do {
            let passkeys = try await store.passkeys(tenantId: tenantId, userId: user.id).count
            let app = try await store.authenticationMethods(tenantId: tenantId, userId: user.id).contains { $0.kind == .totp }
            await raise(
                CriticalEvent.methodChanged(
                    type, added: added, tenantId: tenantId, user: user, initiator: initiator, at: clock.now(), passkeysAfter: passkeys,
                    authenticatorAppAfter: app))
        } catch {
            logger.error("could not read a user's methods for a shared signal", metadata: [LogKeys.error: .string("\(Swift.type(of: error))")])
        }
    }

    /// At most this many of the newest sign-ins (refusals are skipped) are replayed when a conditional-access policy changes.
    static let policyReplayLimit = 10_000

    /// A conditional-access policy was created or changed (PROTOCOL §14.1): the sign-ins whose tokens may still be live
    /// and that the policies now refuse end those tokens (Core decides which, `CriticalEvent.conditionalAccessChanged`).
    /// Only an enabled policy can refuse more than before; a delete or a report-only policy refuses nothing new.
    func conditionalAccessChanged(tenant: TenantSnapshot, before: ConditionalAccessPolicy?, after: ConditionalAccessPolicy?) async {
        guard let after, after.state == .enabled, before != after, !tenant.contents.sharedSignalsStreams.isEmpty else { return }
        let now = clock.now()
        let from = now.addingTimeInterval(-max(accessTokenLifetime, continuousAccessTokenLifetime))
        do {
            let records = try await store.newestSignIns(tenantId: tenant.tenant.id, from: from, to: now, limit: Self.policyReplayLimit)
            let current = tenant.conditionalAccess
            let changed = tenant.compile(ImpactAnalysis.applying([after], to: current.policies))
            let events = CriticalEvent.conditionalAccessChanged(
                signIns: records, directory: tenant.directory, before: current, after: changed, tenantId: tenant.tenant.id,
                accessTokenLifetime: accessTokenLifetime, continuousAccessTokenLifetime: continuousAccessTokenLifetime, at: now)
            if records.count == Self.policyReplayLimit {
                logger.warning(
                    "a conditional-access change was replayed over the newest sign-ins only",
                    metadata: [LogKeys.tenantId: .string(tenant.tenant.id), "portcullis.sign_ins": .stringConvertible(records.count)])
            }
            await raise(events)
        } catch {
            logger.error(
                "could not replay sign-ins for a conditional-access change", metadata: [LogKeys.error: .string("\(Swift.type(of: error))")])
        }
    }

    /// SSF §8.1.4: a verification event, sent to this stream alone (requested or not), with the receiver's `state`.
    func verify(_ stream: SharedSignalsStream, tenantId: String, state: String?) async throws {
        var members: [String: JSONValue] = [:]
        if let state { members["state"] = .string(state) }
        let message = try await message(
            for: stream, tenantId: tenantId, events: [SharedSignalsEventType.verification.rawValue: .object(members)], subject: .opaque(stream.id),
            txn: nil)
        try await enqueue([message], for: stream)
    }

    // MARK: Streams

    /// Stores a stream (created or changed by its receiver, or its status set by an admin) and moves its queue to
    /// match its status: released when it delivers by push and is enabled, held when paused or polled, emptied when
    /// disabled.
    func save(
        _ stream: SharedSignalsStream, before: Versioned<SharedSignalsStream>?, tenant: TenantSnapshot, actor: String
    ) async throws
        -> SharedSignalsStream
    {
        let saved: Versioned<SharedSignalsStream>
        do {
            saved = try await streams.save(
                stream, before: before, precondition: before.map { .version($0.version) } ?? .mustNotExist, tenant: tenant, actor: actor)
        } catch let error as StorageError where [.preconditionFailed, .duplicate, .notFound].contains(error.code) {
            // Two changes of one stream at once: one wins, the other is told to read it again (never a 500).
            throw APIError(.conflict, "streamChanged", "The stream changed while this request was handled; read it and try again.")
        }
        let target = stream.outboxTarget
        if stream.status == .disabled {
            try await store.dropSignals(target: target)
        } else {
            try await store.rescheduleSignals(target: target, nextAttemptAt: Self.nextAttempt(for: stream, now: clock.now()))
            if stream.pushesNow { outboxSignal.signal() }
        }
        polls.wake(stream.id)
        return saved.document
    }

    func delete(_ stream: Versioned<SharedSignalsStream>, tenant: TenantSnapshot, actor: String) async throws {
        do {
            try await streams.delete(id: stream.document.id, precondition: .version(stream.version), force: false, tenant: tenant, actor: actor)
        } catch let error as APIError where error.status == .preconditionFailed {
            throw APIError(.conflict, "streamChanged", "The stream changed while this request was handled; read it and try again.")
        }
        try await store.dropSignals(target: stream.document.outboxTarget)
        polls.forget(stream.document.id)
    }

    /// What a sealed push `Authorization` value is bound to besides the tenant and the stream (the box's "user" slot).
    static let sealedHeaderOwner = "ssf-stream"

    /// The push `Authorization` value, sealed for storage (bound to the tenant and the stream).
    func seal(authorizationHeader: String, tenantId: String, streamId: String) throws -> Data {
        try box.seal(Array(authorizationHeader.utf8), tenantId: tenantId, userId: Self.sealedHeaderOwner, methodId: streamId)
    }

    func authorizationHeader(of stream: SharedSignalsStream, tenantId: String) -> String? {
        guard let sealed = stream.delivery.sealedAuthorizationHeader,
            let bytes = box.open(sealed, tenantId: tenantId, userId: Self.sealedHeaderOwner, methodId: stream.id)
        else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Where the dispatcher sends a stream's message now (its stream's current endpoint and credentials); `nil` when
    /// the stream is gone or no longer pushes.
    func pushTarget(for message: OutboxMessage) async throws -> (url: String, authorization: String?)? {
        guard let streamId = SharedSignalsStream.streamId(ofOutboxTarget: message.targetUri),
            let tenant = try await tenants.snapshot(tenantSegment: message.tenantId),
            let stream = tenant.contents.sharedSignalsStreams.first(where: { $0.id == streamId }),
            stream.delivery.method == .push, let url = stream.delivery.endpointUrl
        else { return nil }
        return (url, authorizationHeader(of: stream, tenantId: tenant.tenant.id))
    }

    // MARK: Presentation

    /// The stream's configuration as SSF §8.1.1 shows it to its receiver.
    func configuration(_ stream: SharedSignalsStream, tenantId: String) -> JSONValue {
        var delivery: [String: JSONValue] = ["method": .string(stream.delivery.method.uri)]
        switch stream.delivery.method {
        case .push: delivery["endpoint_url"] = stream.delivery.endpointUrl.map(JSONValue.string)
        case .poll: delivery["endpoint_url"] = .string(pollURL(tenantId: tenantId, streamId: stream.id))
        }
        var object: [String: JSONValue] = [
            "stream_id": .string(stream.id), "iss": .string(endpoints.issuer(tenantId: tenantId)), "aud": .string(stream.audience),
            "events_supported": .array(SharedSignalsEventType.requestable.map { .string($0.rawValue) }),
            "events_requested": .array(stream.eventsRequested.map(JSONValue.string)),
            "events_delivered": .array(stream.eventsDelivered.map { .string($0.rawValue) }), "delivery": .object(delivery),
            "min_verification_interval": .number(0),
        ]
        if let description = stream.description { object["description"] = .string(description) }
        return .object(object)
    }

    func pollURL(tenantId: String, streamId: String) -> String { "\(endpoints.baseURL)/\(tenantId)/ssf/poll/\(streamId)" }

    /// How the admin API and the audit log show a stream: everything but the sealed credential.
    static func presentForAdmin(_ stream: SharedSignalsStream) -> JSONValue {
        var shown = stream
        let hasHeader = shown.delivery.sealedAuthorizationHeader != nil
        shown.delivery.sealedAuthorizationHeader = nil
        guard case .object(var object) = JSONValue(encoding: shown) else { return JSONValue(encoding: shown) }
        if hasHeader, case .object(var delivery)? = object["delivery"] {
            delivery["authorizationHeader"] = "(set; never shown)"
            object["delivery"] = .object(delivery)
        }
        return .object(object)
    }
}
