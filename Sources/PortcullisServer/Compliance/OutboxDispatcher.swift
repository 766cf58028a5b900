import AsyncHTTPClient
import Foundation
public import Logging
import NIOCore
import NIOHTTP1
import PortcullisAPI
public import PortcullisCore
public import PortcullisStorage
public import ServiceLifecycle
import Synchronization

/// Delivers compliance callbacks from the outbox (RFC 8935 push: `POST`, `application/secevent+jwt`,
/// receiver answers 202). At least once: a message is leased, sent, and only then marked delivered; a
/// node that dies mid-send leaves the lease to expire and another attempt follows. Failures back off
/// exponentially with full jitter up to `maxAttempts`, then the message is a dead letter (admin API:
/// redeliver). Runs as a `Service`; stops on graceful shutdown.
public final class OutboxDispatcher: Service, Sendable {
    public struct Configuration: Sendable {
        public var baseDelay: Duration
        public var maxDelay: Duration
        public var maxAttempts: Int
        public var requestTimeout: Duration
        public var lease: Duration
        /// With a store other nodes write too: how often to look for messages nobody signalled (`nil`: never).
        public var pollInterval: Duration?
        public var batch: Int
        /// Which destinations delivery may connect to.
        public var destinations: CallbackDestinations

        public init(
            baseDelay: Duration = .seconds(1), maxDelay: Duration = .seconds(300), maxAttempts: Int = 10,
            requestTimeout: Duration = .seconds(5), lease: Duration = .seconds(30), pollInterval: Duration? = nil, batch: Int = 32,
            destinations: CallbackDestinations = .init()
        ) {
            self.destinations = destinations
            self.baseDelay = baseDelay
            self.maxDelay = maxDelay
            self.maxAttempts = maxAttempts
            self.requestTimeout = requestTimeout
            self.lease = lease
            self.pollInterval = pollInterval
            self.batch = batch
        }
    }

    private let store: any OutboxStore
    private let signal: OutboxSignal
    private let clock: any WallClock
    private let configuration: Configuration
    private let logger: Logger
    private let owner = UUID.randomIdentifierText
    private let client: HTTPClient

    private let destinations: CallbackDestinations
    /// Where a Shared Signals stream's message goes now and what it carries.
    public struct StreamDelivery: Sendable {
        public var url: String
        public var authorization: String?
        /// The SET, signed for this attempt.
        public var payload: String

        public init(url: String, authorization: String?, payload: String) {
            self.url = url
            self.authorization = authorization
            self.payload = payload
        }
    }

    /// Where a Shared Signals stream's message goes now (its stream's endpoint and `Authorization`) with its SET signed, or
    /// `nil` when the stream no longer pushes (PROTOCOL §14.2).
    private let streamTarget: (@Sendable (OutboxMessage) async throws -> StreamDelivery?)?

    public init(
        store: any OutboxStore, signal: OutboxSignal, clock: any WallClock, configuration: Configuration, logger: Logger,
        streamTarget: (@Sendable (OutboxMessage) async throws -> StreamDelivery?)? = nil
    ) {
        self.streamTarget = streamTarget
        self.store = store
        self.signal = signal
        self.clock = clock
        self.configuration = configuration
        self.destinations = configuration.destinations
        self.logger = logger
        self.client = callbackHTTPClient
    }

    /// How many times the loop woke up (tests: an idle dispatcher does not wake).
    public var wakeUps: Int { wakes.load(ordering: .relaxed) }
    private let wakes = Atomic<Int>(0)
    private let inFlight = Atomic<Int>(0)

    /// Wakes when a message is written on this node (`OutboxSignal`), when a delivery finishes, when the next
    /// message falls due (its attempt time or its lease's end), and — only with a shared store, for messages
    /// another node wrote and could not send — every `pollInterval`. Never otherwise. Deliveries run
    /// concurrently (at most `batch`), so one slow receiver delays no other; per (enrollment, receiver) the
    /// store hands out only the oldest pending message, so callbacks still arrive in order.
    public func run() async throws {
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { deliveries in
                while !Task.isCancelled {
                    self.wakes.wrappingAdd(1, ordering: .relaxed)
                    var wait: Duration? = self.configuration.pollInterval
                    do {
                        let room = self.configuration.batch - self.inFlight.load(ordering: .relaxed)
                        var claimed = 0
                        if room > 0 {
                            let now = self.clock.now()
                            let batch = try await self.store.claimOutbox(
                                now: now, leaseUntil: now.addingTimeInterval(self.configuration.lease.seconds), owner: self.owner, limit: room)
                            claimed = batch.count
                            for message in batch {
                                self.inFlight.wrappingAdd(1, ordering: .relaxed)
                                deliveries.addTask {
                                    await self.deliver(message)
                                    self.inFlight.wrappingSubtract(1, ordering: .relaxed)
                                    self.signal.signal()
                                }
                            }
                        }
                        if claimed > 0 && claimed == room { continue }  // more may be due
                        if let next = try await self.store.nextOutboxAttempt(now: self.clock.now()) {
                            // At least 10 ms: a message due now that could not be claimed must not make this spin.
                            let due = Duration.milliseconds(max(10, Int64(next.timeIntervalSince(self.clock.now()) * 1000)))
                            wait = wait.map { min($0, due) } ?? due
                        }
                    } catch {
                        self.logger.error("outbox poll failed", metadata: [LogKeys.error: .string("\(type(of: error))")])
                        wait = .seconds(1)
                    }
                    await self.signal.wait(for: wait)
                }
            }
        }
    }

    /// Claims and sends one batch, waiting for every delivery; returns how many it handled (tests drive the
    /// outbox with this and a manual clock).
    @discardableResult
    public func deliverDue() async throws -> Int {
        let now = clock.now()
        let batch = try await store.claimOutbox(
            now: now, leaseUntil: now.addingTimeInterval(configuration.lease.seconds), owner: owner, limit: configuration.batch)
        await withTaskGroup(of: Void.self) { group in
            for message in batch { group.addTask { await self.deliver(message) } }
        }
        return batch.count
    }

    func deliver(_ message: OutboxMessage) async {
        var url = message.targetUri
        var authorization: String?
        var payload = message.payload
        let isStream = SharedSignalsStream.streamId(ofOutboxTarget: message.targetUri) != nil
        if isStream {
            let found: StreamDelivery?
            do {
                found = try await streamTarget?(message)
            } catch {
                // The tenant's key or the store could not be read: an attempt that failed, tried again later.
                await failed(message, error: "the SET could not be signed (\(type(of: error)))")
                return
            }
            guard let found else {
                // The stream was deleted, or polls now: the message waits where a poll (or nothing) finds it.
                try? await store.failOutbox(
                    id: message.id, owner: owner, attempts: message.attempts, nextAttemptAt: OutboxMessage.held, error: "the stream does not push")
                return
            }
            url = found.url
            authorization = found.authorization
            payload = found.payload
        }
        var request = HTTPClientRequest(url: url)
        if let authorization { request.headers.add(name: "Authorization", value: authorization) }
        request.method = .POST
        request.headers.add(name: "Content-Type", value: SecurityEventTypes.mediaType)
        request.headers.add(name: "Accept", value: "application/json")
        request.body = .bytes(ByteBuffer(string: payload))
        let failure: String
        do {
            try await destinations.check(url)
            let response = try await client.execute(
                request,
                timeout: .nanoseconds(
                    Int64(configuration.requestTimeout.components.seconds * 1_000_000_000 + configuration.requestTimeout.components.attoseconds / 1_000_000_000)
                ))
            let body = try? await response.body.collect(upTo: 64 * 1024)
            if (200..<300).contains(Int(response.status.code)) {
                try? await store.completeOutbox(id: message.id, owner: owner, at: clock.now())
                return
            }
            failure = "the receiver answered HTTP \(response.status.code)"
            // RFC 8935 §2.4: a 400 with an `err` is the receiver refusing this SET; sending it again cannot help.
            if isStream, response.status == .badRequest, let body, let error = Self.pushError(body) {
                logger.warning("a receiver refused a SET", metadata: ["portcullis.outbox_id": .string(message.id), LogKeys.error: .string(error)])
                try? await store.failOutbox(id: message.id, owner: owner, attempts: message.attempts + 1, nextAttemptAt: nil, error: "\(failure) \(error)")
                return
            }
        } catch let refusal as CallbackDestinations.Refusal {
            // What tenants read (the admin API, the console) is coarse, so that delivery is no probe of networks or ports
            // (PROTOCOL §14.2); the operator's log has the detail.
            logger.notice(
                "a delivery's destination was refused", metadata: ["portcullis.outbox_id": .string(message.id), LogKeys.error: .string(refusal.description)])
            failure = Self.refusedDestination
        } catch {
            logger.notice("a delivery failed", metadata: ["portcullis.outbox_id": .string(message.id), LogKeys.error: .string("\(error)")])
            failure = Self.unreachable
        }
        await failed(message, error: failure)
    }

    /// Records a failed attempt: tried again after a back-off, or — past `maxAttempts` — moved to the dead letters.
    func failed(_ message: OutboxMessage, error failure: String) async {
        let attempts = message.attempts + 1
        let next: Date? = attempts >= configuration.maxAttempts ? nil : clock.now().addingTimeInterval(backoff(attempt: attempts))
        if next == nil {
            logger.warning("callback moved to the dead letters", metadata: ["portcullis.outbox_id": .string(message.id), LogKeys.error: .string(failure)])
        }
        try? await store.failOutbox(id: message.id, owner: owner, attempts: attempts, nextAttemptAt: next, error: failure)
    }

    /// The words tenants see for a delivery that never reached an HTTP answer: one for every cause (a refused connection, a
    /// timeout, TLS, a non-HTTP service alike), and one for a destination the operator does not allow.
    static let unreachable = "the receiver could not be reached (no HTTP answer)"
    static let refusedDestination = "the destination is not allowed (it must be https to a public address) or does not resolve"

    /// A push receiver's refusal (RFC 8935 §2.4: `{"err": …, "description": …}`), as one line.
    static func pushError(_ body: ByteBuffer) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any], let err = object["err"] as? String
        else { return nil }
        let description = (object["description"] as? String).map { ": " + $0 } ?? ""
        return String((err + description).prefix(300))
    }

    /// Exponential back-off with full jitter: uniform in [base·2^(n−1) / 2, base·2^(n−1)], capped.
    func backoff(attempt: Int) -> TimeInterval {
        let ceiling = min(configuration.baseDelay.seconds * pow(2, Double(attempt - 1)), configuration.maxDelay.seconds)
        return Double.random(in: (ceiling / 2)...ceiling)
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
