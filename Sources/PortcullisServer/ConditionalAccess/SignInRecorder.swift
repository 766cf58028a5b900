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
/// A batch is written in transactions of at most `writeChunk` entries, so that a write that waits for the store's one
/// writer (an admin's change) waits for one of them, not for the whole batch (issue 42: a batch of a thousand tenants'
/// aggregates held the writer past the 2 s deadline of every admin write behind it).
public final class SignInRecorder: Service, Sendable {
    private let store: any SignInStore
    private let pending = Mutex<[SignInRecord]>([])
    /// Entries a failed write left, written first next time (bounded by `capacity`).
    private let unwritten = Mutex<[SignInAggregation.Entry]>([])
    /// At most this many log entries per transaction.
    static let writeChunk = 256
    /// Aggregate keys already computed, by facts: a busy installation's batches repeat the same few thousand facts, and
    /// a key costs an encoding and a hash (bounded: cleared when full).
    private let keys = Mutex(KeyCache())

    struct KeyCache {
        var buckets: [Int: [(facts: SignInRecord, key: String)]] = [:]
        var count = 0
        static let capacity = 20_000

        mutating func key(_ facts: SignInRecord, digest: Int) -> String {
            if let found = buckets[digest]?.first(where: { $0.facts == facts }) { return found.key }
            let key = SignInRecorder.key(of: facts)
            if count >= Self.capacity {
                buckets.removeAll(keepingCapacity: true)
                count = 0
            }
            buckets[digest, default: []].append((facts, key))
            count += 1
            return key
        }
    }
    private let interval: Duration
    private let capacity: Int
    private let aggregationWindow: TimeInterval
    private let logger: Logger
    /// Told of every record as it is made (the risk engine learns from sign-ins, PROTOCOL §19); must not block.
    private let observer: (@Sendable (SignInRecord) -> Void)?

    public init(
        store: any SignInStore, interval: Duration = .milliseconds(250), capacity: Int = 100_000, aggregationWindow: TimeInterval = 3600,
        logger: Logger, observer: (@Sendable (SignInRecord) -> Void)? = nil
    ) {
        self.observer = observer
        self.store = store
        self.aggregationWindow = aggregationWindow
        self.interval = interval
        self.capacity = capacity
        self.logger = logger
    }

    public func record(_ record: SignInRecord) {
        observer?(record)
        let dropped = pending.withLock { records -> Int in
            var dropped = 0
            if records.count >= capacity {
                // A hundredth at once, not one per record: a full buffer (a store away) costs no copy per grant.
                dropped = max(1, capacity / 100)
                records.removeFirst(min(dropped, records.count))
            }
            records.append(record)
            return dropped
        }
        if dropped > 0 {
            logger.warning("sign-in log buffer full; the oldest unwritten records were dropped", metadata: ["portcullis.dropped": "\(dropped)"])
        }
    }

    /// Writes everything buffered, in transactions of at most `writeChunk` entries. On failure what was not written is
    /// kept (as entries: it is not counted again) for the next attempt.
    public func flush() async {
        let batch = pending.withLock { records -> [SignInRecord] in
            let batch = records
            records.removeAll(keepingCapacity: true)
            return batch
        }
        let left = unwritten.withLock { entries -> [SignInAggregation.Entry] in
            let left = entries
            entries.removeAll()
            return left
        }
        guard !batch.isEmpty || !left.isEmpty else { return }
        let entries =
            left
            + keys.withLock { cache in SignInAggregation.aggregate(batch, window: aggregationWindow) { facts, digest in cache.key(facts, digest: digest) } }
        var written = 0
        do {
            while written < entries.count {
                let chunk = Array(entries[written..<min(written + Self.writeChunk, entries.count)])
                try await store.appendSignIns(chunk)
                written += chunk.count
            }
        } catch {
            logger.error("cannot write the sign-in log; will retry", metadata: [LogKeys.error: .string("\(type(of: error))")])
            let rest = entries[written...]
            let dropped = max(0, rest.count - capacity)
            unwritten.withLock { $0 = Array(rest.suffix(capacity)) }
            if dropped > 0 {
                logger.warning("sign-in log buffer full; the oldest unwritten records were dropped", metadata: ["portcullis.dropped": "\(dropped)"])
            }
        }
    }

    /// An aggregate's key: a digest of the record's facts (everything but its identity), the first 128 bits of their
    /// SHA-256 in hex.
    static func key(of record: SignInRecord) -> String {
        String(CredentialHasher.hashToken((try? StoredJSON.text(of: SignInAggregation.facts(of: record))) ?? record.id).prefix(32))
    }

    public func run() async throws { await repeatUntilShutdown(every: interval) { await self.flush() } }
}

/// Runs `work` every `interval` until the server shuts down gracefully, and once more after that (what was buffered
/// when the shutdown came): the loop of the services that write behind (the sign-in log, the risk engine).
func repeatUntilShutdown(every interval: Duration, _ work: @escaping @Sendable () async -> Void) async {
    await cancelWhenGracefulShutdown {
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: interval)
            } catch {
                break
            }
            await work()
        }
    }
    await work()
}
