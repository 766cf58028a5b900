import Foundation
import HTTPTypes
import Logging
public import PortcullisCore
import PortcullisStorage
import PortcullisTokens

/// The Shared Signals transmitter (PROTOCOL §14.2): routes each `CriticalEvent` of a change's effects to every stream of
/// its tenant that asked for it, as unsigned messages the store queues in the durable outbox in the change's own
/// transaction (push: the dispatcher signs and sends them in order, with retries; poll: they wait for the receiver,
/// bounded per stream, and are signed when polled), and keeps the streams receivers configure.
public final class SignalTransmitter: Sendable {
    let store: any PortcullisStore
    let tenants: TenantCache
    let signers: TenantKeyRings
    let endpoints: ServerEndpoints
    let settings: SignalSettings
    let outboxSignal: OutboxSignal
    let polls = PollWaiters()
    /// Wakes the conditional-access replay runner (`PolicyReplayRunner`).
    let replaySignal = OutboxSignal()
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
        // Streams are written by receivers through the Shared Signals API, never through the admin API: no services.
        self.streams = DocumentResource(registration: DocumentRegistration(), services: nil, store: store, tenants: tenants, clock: clock)
    }

    // MARK: Effects and their events

    /// What a change commits besides itself (PROTOCOL §14.1): Core's effects, their events routed to the tenant's streams
    /// as unsigned messages (signed when sent), the bounds, and the audit records.
    func committed(_ effects: ChangeEffects, tenant: TenantSnapshot, audit: [AuditRecord] = []) -> CommittedEffects {
        CommittedEffects(
            effects: effects, signals: route(effects.events, tenant: tenant, now: clock.now()), pendingPerStream: settings.pendingPerStream,
            voidsExpireAt: effects.at.addingTimeInterval(max(accessTokenLifetime, continuousAccessTokenLifetime) + Self.voidLeeway), audit: audit)
    }

    /// How long past the longest token lifetime a "void before" time is kept (the verifiers' clock leeway, and more).
    static let voidLeeway: TimeInterval = 3600

    /// The messages `events` become for the tenant's streams, in order: one per stream and event it asked for (a critical
    /// event's SETs share a `txn`). Unsigned: the payload holds the SET's claims, which the dispatcher (push) or the poll
    /// endpoint signs with the tenant's current key when it hands the message out (`signedPayload`).
    func route(_ events: [CriticalEvent], tenant: TenantSnapshot, now: Date) -> [OutboxMessage] {
        let streams = tenant.contents.sharedSignalsStreams
        guard !streams.isEmpty else { return [] }
        let issuer = endpoints.issuer(tenantId: tenant.tenant.id.rawValue)
        var messages: [OutboxMessage] = []
        for event in events {
            let subject = event.subject(issuer: issuer)
            let signals = event.signals
            let txn = UUID.randomIdentifierText
            for stream in streams {
                for signal in signals where stream.wants(signal.type, subject: subject, userPrincipalName: event.userPrincipalName) {
                    messages.append(
                        message(
                            for: stream, tenantId: tenant.tenant.id.rawValue, events: [signal.type.rawValue: .object(signal.members)], subject: subject,
                            txn: txn,
                            now: now))
                }
            }
        }
        return messages
    }

    /// One unsigned SET for `stream`, as an outbox message routed by the stream.
    func message(
        for stream: SharedSignalsStream, tenantId: String, events: [String: JSONValue], subject: SignalSubject, txn: String?, now: Date
    ) -> OutboxMessage {
        let jti = UUID.randomIdentifierText
        let pending = SharedSignalsSecurityEvent(
            iss: endpoints.issuer(tenantId: tenantId), aud: stream.audience, iat: Int(now.timeIntervalSince1970), jti: jti, subId: subject.json,
            events: events, txn: txn)
        let payload = (try? Self.pendingEncoder.encode(pending)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        return OutboxMessage(
            id: UUID.randomIdentifierText, tenantId: tenantId, enrollmentId: nil, targetUri: stream.outboxTarget, payload: payload, jti: jti,
            nextAttemptAt: Self.nextAttempt(for: stream, now: now), createdAt: now)
    }

    static let pendingEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// The SET a message carries, signed now with its tenant's current key (`iat` the time it is handed out). A message an
    /// earlier build queued signed already is handed out as it is.
    func signedPayload(_ message: OutboxMessage) async throws -> String {
        guard message.payload.hasPrefix("{") else { return message.payload }
        var event = try JSONDecoder().decode(SharedSignalsSecurityEvent.self, from: Data(message.payload.utf8))
        event.iat = Int(clock.now().timeIntervalSince1970)
        return try await signers.signer(tenantId: TenantID(message.tenantId)).sign(sharedSignal: event)
    }

    /// After a change with its effects committed: wake the dispatcher for pushed messages, the long polls of the streams
    /// that have new ones, and the replay runner for a replay (best effort: all of it is stored, and found anyway).
    func didCommit(_ committed: CommittedEffects) {
        if !committed.effects.replays.isEmpty { replaySignal.signal() }
        guard !committed.signals.isEmpty else { return }
        if committed.signals.contains(where: { $0.nextAttemptAt != OutboxMessage.held }) { outboxSignal.signal() }
        for target in Set(committed.signals.map(\.targetUri)) {
            if let streamId = SharedSignalsStream.streamId(ofOutboxTarget: target) { polls.wake(streamId.rawValue) }
        }
    }

    /// When a stream's new messages are due for the dispatcher: now for an enabled push stream; held otherwise.
    static func nextAttempt(for stream: SharedSignalsStream, now: Date) -> Date { stream.pushesNow ? now : OutboxMessage.held }

    func enqueue(_ messages: [OutboxMessage], for stream: SharedSignalsStream) async throws {
        let dropped = try await store.enqueueSignals(messages, target: stream.outboxTarget, keepingAtMost: settings.pendingPerStream)
        if dropped > 0 {
            logger.warning(
                "a stream's undelivered events passed its bound; the oldest were dropped",
                metadata: ["portcullis.stream_id": .string(stream.id.rawValue), "portcullis.dropped": .stringConvertible(dropped)])
        }
        if stream.pushesNow { outboxSignal.signal() }
        polls.wake(stream.id.rawValue)
    }

    /// A sign-in method added or removed (PROTOCOL §14.1): Core's effects from what the user holds after the change.
    func methodChanged(
        _ type: CriticalEvent.CredentialType, added: Bool, tenant: TenantSnapshot, user: User, initiator: CriticalEvent.Initiator, at: Date
    ) async throws -> ChangeEffects {
        let tenantId = tenant.tenant.id
        var passkeys = try await store.passkeys(tenantId: TenantID(tenantId), userId: ObjectID(user.id)).count
        var app = try await store.authenticationMethods(tenantId: TenantID(tenantId), userId: ObjectID(user.id)).contains { $0.kind == .totp }
        // Read before the change commits: what the user holds after it.
        switch (type, added) {
        case (.fido2, true): passkeys += 1
        case (.fido2, false): passkeys = max(0, passkeys - 1)
        case (.app, let added): app = added
        case (.password, _): break
        }
        return ChangeEffects.methodChanged(
            type, added: added, tenantId: tenantId, user: user, initiator: initiator, at: at, passkeysAfter: passkeys, authenticatorAppAfter: app)
    }

    /// A method change's effects routed, with its audit record: what the change commits besides itself.
    func methodChangeEffects(
        _ type: CriticalEvent.CredentialType, added: Bool, tenant: TenantSnapshot, user: User, initiator: CriticalEvent.Initiator, at: Date,
        audit: AuditRecord
    ) async throws -> CommittedEffects {
        committed(try await methodChanged(type, added: added, tenant: tenant, user: user, initiator: initiator, at: at), tenant: tenant, audit: [audit])
    }

    /// SSF §8.1.4: a verification event, sent to this stream alone (requested or not), with the receiver's `state`.
    func verify(_ stream: SharedSignalsStream, tenantId: String, state: String?) async throws {
        // At most one verification per stream per `min_verification_interval`, counted in the store (every node sees it):
        // a receiver cannot make the transmitter send at will (SSF §8.1.4; PROTOCOL §14.2).
        let interval = settings.minimumVerificationInterval
        if interval > 0 {
            let now = clock.now()
            let counted = try await store.updateThrottles(keys: ["ssf-verify:\(stream.id)"]) { key, current in
                // Within the interval of the last one sent (the store keeps times to about a millisecond; another node's clock
                // a little ahead counts as within too).
                if let current, abs(now.timeIntervalSince(current.windowStart)) + 0.001 < interval {
                    var denied = current
                    denied.failures += 1
                    return denied
                }
                return ThrottleCounter(key: key, failures: 0, windowStart: now, locks: 0, lockedUntil: nil, expiresAt: now.addingTimeInterval(interval))
            }
            if let counter = counted.first, counter.failures > 0 {
                // The stored time may trail `now` by a fraction of a millisecond (or lead it, from another node): never more than
                // the interval itself, never less than a second.
                let elapsed = min(max(0, now.timeIntervalSince(counter.windowStart)), interval)
                let wait = max(1, Int((interval - elapsed).rounded(.up)))
                throw APIError(
                    .tooManyRequests, "verificationTooSoon",
                    "A stream is verified at most once every \(Int(interval)) s (min_verification_interval); try again in \(wait) s.",
                    headers: [.retryAfter: String(wait)])
            }
        }
        var members: [String: JSONValue] = [:]
        if let state { members["state"] = .string(state) }
        let message = message(
            for: stream, tenantId: tenantId, events: [SharedSignalsEventType.verification.rawValue: .object(members)], subject: .opaque(stream.id.rawValue),
            txn: nil, now: clock.now())
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
        polls.wake(stream.id.rawValue)
        return saved.document
    }

    func delete(_ stream: Versioned<SharedSignalsStream>, tenant: TenantSnapshot, actor: String) async throws {
        do {
            try await streams.delete(id: stream.document.id.rawValue, precondition: .version(stream.version), force: false, tenant: tenant, actor: actor)
        } catch let error as APIError where error.status == .preconditionFailed {
            throw APIError(.conflict, "streamChanged", "The stream changed while this request was handled; read it and try again.")
        }
        try await store.dropSignals(target: stream.document.outboxTarget)
        polls.forget(stream.document.id.rawValue)
    }

    /// What a sealed push `Authorization` value is bound to besides the tenant and the stream (the box's "user" slot).
    static let sealedHeaderOwner = "ssf-stream"

    /// The push `Authorization` value, sealed for storage (bound to the tenant and the stream).
    func seal(authorizationHeader: String, tenantId: String, streamId: String) throws -> Data {
        try box.seal(Array(authorizationHeader.utf8), tenantId: tenantId, userId: Self.sealedHeaderOwner, methodId: streamId)
    }

    func authorizationHeader(of stream: SharedSignalsStream, tenantId: String) -> String? {
        guard let sealed = stream.delivery.sealedAuthorizationHeader,
            let bytes = box.open(sealed, tenantId: tenantId, userId: Self.sealedHeaderOwner, methodId: stream.id.rawValue)
        else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Where the dispatcher sends a stream's message now (its stream's current endpoint and credentials) and the SET,
    /// signed now; `nil` when the stream is gone or no longer pushes.
    func pushTarget(for message: OutboxMessage) async throws -> OutboxDispatcher.StreamDelivery? {
        guard let streamId = SharedSignalsStream.streamId(ofOutboxTarget: message.targetUri),
            let tenant = try await tenants.snapshot(tenantSegment: message.tenantId),
            let stream = tenant.contents.sharedSignalsStreams.first(where: { $0.id == streamId }),
            stream.delivery.method == .push, let url = stream.delivery.endpointUrl
        else { return nil }
        return OutboxDispatcher.StreamDelivery(
            url: url, authorization: authorizationHeader(of: stream, tenantId: tenant.tenant.id.rawValue), payload: try await signedPayload(message))
    }

    // MARK: Presentation

    /// The stream's configuration as SSF §8.1.1 shows it to its receiver.
    func configuration(_ stream: SharedSignalsStream, tenantId: String) -> JSONValue {
        var delivery: [String: JSONValue] = ["method": .string(stream.delivery.method.uri)]
        switch stream.delivery.method {
        case .push: delivery["endpoint_url"] = stream.delivery.endpointUrl.map(JSONValue.string)
        case .poll: delivery["endpoint_url"] = .string(pollURL(tenantId: tenantId, streamId: stream.id.rawValue))
        }
        var object: [String: JSONValue] = [
            "stream_id": .string(stream.id.rawValue), "iss": .string(endpoints.issuer(tenantId: tenantId)), "aud": .string(stream.audience),
            "events_supported": .array(SharedSignalsEventType.requestable.map { .string($0.rawValue) }),
            "events_requested": .array(stream.eventsRequested.map(JSONValue.string)),
            "events_delivered": .array(stream.eventsDelivered.map { .string($0.rawValue) }), "delivery": .object(delivery),
            "min_verification_interval": .number(Double(Int(settings.minimumVerificationInterval))),
        ]
        if let description = stream.description { object["description"] = .string(description) }
        return .object(object)
    }

    func pollURL(tenantId: String, streamId: String) -> String { "\(endpoints.baseURL)/\(tenantId)/ssf/poll/\(streamId)" }

    /// How the admin API and the audit log show a stream: everything but the sealed credential.
}

extension SignalTransmitter: EffectRouter {}
