import Foundation
import Logging
import NIOCore
import PortcullisStorage
import PostgresNIO
import Synchronization

/// How every statement reaches PostgreSQL (PROTOCOL §2.4; docs/operations.md, "When the store is away").
///
/// postgres-nio 1.33 can keep a request waiting with no end after the database restarts, and keeps every
/// request waiting while it is down (its pool queues them until a 60 s circuit breaker trips; a query
/// written to a connection that is closing can be lost without its promise ever being completed —
/// vapor/postgres-nio#487, #501, #657, #489). So, around the pool:
/// - every operation runs under the store deadline (`StoreDeadline`);
/// - it holds one leased connection for all its statements; each statement waits for its answer *or* the
///   connection's close, whichever comes first; when the deadline cancels the operation, its connection is
///   closed (the server rolls back whatever was open) rather than returned to the pool mid-transaction;
/// - a breaker fails requests at once while the database is known to be away: after a connection-class
///   failure or a timeout, one request every `probeInterval` is let through to probe; the first that
///   succeeds closes the breaker, so service resumes as soon as the pool has a connection again.
extension PostgresStore {
    /// Fail-fast state while the database is away.
    final class Breaker: Sendable {
        struct State {
            var open = false
            var lastProbe: ContinuousClock.Instant = .now
        }
        let state = Mutex(State())
        static let probeInterval: Duration = .milliseconds(250)

        /// Whether this request may try the database now.
        func admit() -> Bool {
            state.withLock { state in
                guard state.open else { return true }
                let now = ContinuousClock.now
                guard now - state.lastProbe >= Self.probeInterval else { return false }
                state.lastProbe = now
                return true
            }
        }

        func succeeded() { state.withLock { if $0.open { $0.open = false } } }

        func failed() {
            state.withLock { state in
                if !state.open {
                    state.open = true
                    state.lastProbe = .now
                }
            }
        }

        var isOpen: Bool { state.withLock { $0.open } }
    }

    /// Runs `work` on a leased connection under the deadline and the breaker.
    func execute<T: Sendable>(
        _ what: String,
        onTimeout: (@Sendable () -> Void)? = nil,
        onAbandoned: (@Sendable (Result<T, any Error>) async -> Void)? = nil,
        _ work: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        guard breaker.admit() else {
            rotationsInDoubt.storeFailed()
            throw StorageError(.unavailable, "PostgreSQL is unavailable (failing fast until it answers again)")
        }
        let breaker = self.breaker
        do {
            let value = try await deadline.run(
                what,
                onTimeout: {
                    breaker.failed()
                    onTimeout?()
                }, onAbandoned: onAbandoned
            ) {
                do {
                    return try await self.client.withConnection { connection in
                        try await withTaskCancellationHandler {
                            try await work(connection)
                        } onCancel: {
                            // Past the deadline: never hand this connection back mid-statement or mid-transaction.
                            let closing: EventLoopFuture<Void> = connection.close()
                            _ = closing
                        }
                    }
                } catch {
                    throw Self.translate(error)
                }
            }
            breaker.succeeded()
            return value
        } catch let error as StorageError where error.code == .unavailable && Self.isConnectionFailure(error) {
            breaker.failed()
            rotationsInDoubt.storeFailed()
            throw error
        }
    }

    /// Errors that say the database (not the statement) is the problem: no SQLSTATE at all (connection
    /// refused, closed, timed out), connection exceptions (08), operator intervention (57: shutdown,
    /// cannot connect now), insufficient resources (53), or our own deadline.
    static func isConnectionFailure(_ error: StorageError) -> Bool {
        guard let underlying = error.underlying else { return true }
        guard let state = underlying.postgresSQLState else { return true }
        return state.hasPrefix("08") || state.hasPrefix("57") || state.hasPrefix("53")
    }

    /// Waits for `work` or for `connection` to close, whichever comes first. A closed connection fails the
    /// operation at once, even when postgres-nio lost the query and would never complete it.
    static func guarded<T: Sendable>(_ connection: PostgresConnection, _ work: @escaping @Sendable () async throws -> T) async throws -> T {
        if connection.isClosed { throw StorageError(.unavailable, "the PostgreSQL connection is closed") }
        let once = Once<T>()
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            once.set(continuation)
            connection.closeFuture.whenComplete { _ in
                // A statement whose answer arrived just before the close completes its promise on this event loop
                // first, but its task resumes later, on the global executor: give it that hop before declaring
                // the statement lost (a lost one never completes; 50 ms is far above a scheduler hop).
                connection.eventLoop.scheduleTask(in: .milliseconds(50)) {
                    once.resume(with: .failure(StorageError(.unavailable, "the PostgreSQL connection closed")))
                }
            }
            // The statement runs in a task of its own so that a closed connection can answer the caller even
            // if the statement never completes (postgres-nio#487): it is then abandoned.
            Task {
                do { once.resume(with: .success(try await work())) } catch { once.resume(with: .failure(error)) }
            }
        }
    }

    /// A continuation resumed once, by whichever comes first.
    final class Once<T: Sendable>: Sendable {
        private let continuation = Mutex<CheckedContinuation<T, any Error>?>(nil)
        func set(_ value: CheckedContinuation<T, any Error>) { continuation.withLock { $0 = value } }
        func resume(with result: Result<T, any Error>) {
            let taken = continuation.withLock { value -> CheckedContinuation<T, any Error>? in
                defer { value = nil }
                return value
            }
            taken?.resume(with: result)
        }
    }
}
