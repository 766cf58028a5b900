import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import PortcullisAPI
import PortcullisCore
import PortcullisStorage
import ServiceLifecycle

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
        public var tick: Duration
        public var batch: Int
        /// Which destinations delivery may connect to.
        public var destinations: CallbackDestinations

        public init(baseDelay: Duration = .seconds(1), maxDelay: Duration = .seconds(300), maxAttempts: Int = 10,
                    requestTimeout: Duration = .seconds(5), lease: Duration = .seconds(30), tick: Duration = .milliseconds(20), batch: Int = 32,
                    destinations: CallbackDestinations = .init()) {
            self.destinations = destinations
            self.baseDelay = baseDelay
            self.maxDelay = maxDelay
            self.maxAttempts = maxAttempts
            self.requestTimeout = requestTimeout
            self.lease = lease
            self.tick = tick
            self.batch = batch
        }
    }

    private let store: any OutboxStore
    private let signal: OutboxSignal
    private let clock: any WallClock
    private let configuration: Configuration
    private let logger: Logger
    private let owner = UUID().uuidString.lowercased()
    private let client: HTTPClient

    private let destinations: CallbackDestinations

    public init(store: any OutboxStore, signal: OutboxSignal, clock: any WallClock, configuration: Configuration, logger: Logger) {
        self.store = store
        self.signal = signal
        self.clock = clock
        self.configuration = configuration
        self.destinations = configuration.destinations
        self.logger = logger
        self.client = callbackHTTPClient
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            var nextDue: Date? = Date.distantPast
            var lastPoll = ContinuousClock.now
            while !Task.isCancelled {
                let now = self.clock.now()
                // Poll the database when told to, when something is due, and once a second regardless (other nodes' messages).
                if self.signal.consume() || (nextDue.map { $0 <= now } ?? false) || ContinuousClock.now - lastPoll > .seconds(1) {
                    lastPoll = ContinuousClock.now
                    do {
                        let delivered = try await self.deliverDue()
                        nextDue = delivered > 0 ? now : try await self.store.nextOutboxAttempt()
                    } catch {
                        self.logger.error("outbox poll failed", metadata: [LogKeys.error: .string("\(type(of: error))")])
                        nextDue = now.addingTimeInterval(1)
                    }
                    if nextDue.map({ $0 <= now }) == true { continue }
                }
                do { try await Task.sleep(for: self.configuration.tick) } catch { break }
            }
        }
    }

    /// Claims and sends one batch; returns how many it handled.
    @discardableResult
    public func deliverDue() async throws -> Int {
        let now = clock.now()
        let batch = try await store.claimOutbox(now: now, leaseUntil: now.addingTimeInterval(configuration.lease.seconds), owner: owner, limit: configuration.batch)
        await withTaskGroup(of: Void.self) { group in
            for message in batch { group.addTask { await self.deliver(message) } }
        }
        return batch.count
    }

    func deliver(_ message: OutboxMessage) async {
        var request = HTTPClientRequest(url: message.targetUri)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: SecurityEventTypes.mediaType)
        request.headers.add(name: "Accept", value: "application/json")
        request.body = .bytes(ByteBuffer(string: message.payload))
        let failure: String
        do {
            try await destinations.check(message.targetUri)
            let response = try await client.execute(request, timeout: .nanoseconds(Int64(configuration.requestTimeout.components.seconds * 1_000_000_000 + configuration.requestTimeout.components.attoseconds / 1_000_000_000)))
            _ = try? await response.body.collect(upTo: 64 * 1024)
            if (200..<300).contains(Int(response.status.code)) {
                try? await store.completeOutbox(id: message.id, owner: owner, at: clock.now())
                return
            }
            failure = "HTTP \(response.status.code)"
        } catch let refusal as CallbackDestinations.Refusal {
            failure = "destination refused: \(refusal)"
        } catch {
            failure = "\(type(of: error))"
        }
        let attempts = message.attempts + 1
        let next: Date? = attempts >= configuration.maxAttempts ? nil : clock.now().addingTimeInterval(backoff(attempt: attempts))
        if next == nil {
            logger.warning("callback moved to the dead letters", metadata: ["portcullis.outbox_id": .string(message.id), LogKeys.error: .string(failure)])
        }
        try? await store.failOutbox(id: message.id, owner: owner, attempts: attempts, nextAttemptAt: next, error: failure)
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
