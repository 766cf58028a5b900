public import Foundation
public import Logging
public import PortcullisCore
public import PortcullisStorage
import PortcullisTokens
public import ServiceLifecycle
import Synchronization

/// Buffers sign-in records and writes them in batches, so that the token path never waits for the log.
/// Runs as a `Service`: flushes every `interval` and once more on graceful shutdown. Readers of the log
/// call `flush()` first, so a node always reads its own records. A crash loses at most one interval of
/// records (they are a log of decisions, never something a client was promised). Non-interactive successes are
/// counted into aggregates (`SignInAggregation`, issue 32): a batch's become one write per distinct facts and window.
public final class SignInRecorder: Service, Sendable {
    private let store: any SignInStore
    private let pending = Mutex<[SignInRecord]>([])
    private let interval: Duration
    private let capacity: Int
    private let aggregationWindow: TimeInterval
    private let logger: Logger

    public init(
        store: any SignInStore, interval: Duration = .milliseconds(250), capacity: Int = 100_000, aggregationWindow: TimeInterval = 3600,
        logger: Logger
    ) {
        self.store = store
        self.aggregationWindow = aggregationWindow
        self.interval = interval
        self.capacity = capacity
        self.logger = logger
    }

    public func record(_ record: SignInRecord) {
        let dropped = pending.withLock { records -> Bool in
            if records.count >= capacity {
                records.removeFirst(records.count - capacity + 1)
                records.append(record)
                return true
            }
            records.append(record)
            return false
        }
        if dropped { logger.warning("sign-in log buffer full; the oldest unwritten record was dropped") }
    }

    /// Writes everything buffered. On failure the records go back to the buffer for the next attempt.
    public func flush() async {
        let batch = pending.withLock { records -> [SignInRecord] in
            let batch = records
            records.removeAll(keepingCapacity: true)
            return batch
        }
        guard !batch.isEmpty else { return }
        do {
            try await store.appendSignIns(SignInAggregation.aggregate(batch, window: aggregationWindow) { Self.key(of: $0) })
        } catch {
            logger.error("cannot write the sign-in log; will retry", metadata: [LogKeys.error: .string("\(type(of: error))")])
            pending.withLock { records in records.insert(contentsOf: batch.suffix(capacity - min(capacity, records.count)), at: 0) }
        }
    }

    /// An aggregate's key: a digest of the record's facts (everything but its identity), the first 128 bits of their
    /// SHA-256 in hex.
    static func key(of record: SignInRecord) -> String {
        String(CredentialHasher.hashToken((try? StoredJSON.text(of: SignInAggregation.facts(of: record))) ?? record.id).prefix(32))
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await Task.sleep(for: self.interval)
                } catch {
                    break
                }
                await self.flush()
            }
        }
        await flush()
    }
}
