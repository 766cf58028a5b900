import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// The deadline of every store operation (PROTOCOL §2.4: no request waits on the store past it, whatever
/// happens to the connection underneath). The caller is answered when the operation finishes or when the
/// deadline passes, whichever comes first; an operation that is still running then is cancelled and left
/// to finish on its own in the background (a statement already submitted to SQLite runs to its end, a
/// PostgreSQL connection is closed), and the caller gets `StorageError.unavailable`.
public struct StoreDeadline: Sendable {
    public var duration: Duration

    public init(_ duration: Duration = .seconds(2)) {
        self.duration = duration
    }

    /// A longer deadline for work no request waits on (migrations, seeding, housekeeping), for the duration of
    /// `body` in this task and the tasks it starts.
    @TaskLocal public static var maintenance: Duration?

    public static func forMaintenance<T>(_ duration: Duration = .seconds(600), _ body: () async throws -> T) async rethrows -> T {
        try await $maintenance.withValue(duration) { try await body() }
    }

    /// One resumption of the caller: by the operation or by the timer, never both.
    private final class Race<T: Sendable>: Sendable {
        let resumed = Atomic<Bool>(false)
        let continuation: Mutex<CheckedContinuation<T, any Error>?>
        let scheduled = Mutex<Scheduled<Void>?>(nil)

        init(_ continuation: CheckedContinuation<T, any Error>) {
            self.continuation = Mutex(continuation)
        }

        func finish(_ result: Result<T, any Error>) -> Bool {
            guard resumed.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return false }
            let continuation = self.continuation.withLock { value -> CheckedContinuation<T, any Error>? in
                defer { value = nil }
                return value
            }
            continuation?.resume(with: result)
            return true
        }
    }

    /// Runs `operation` under the deadline. When the deadline passes first, `onTimeout` runs at once (before
    /// the caller is answered) and `onAbandoned` runs later, in the background, with the operation's eventual
    /// result: a write that committed after its caller was told "unavailable" can be undone there.
    public func run<T: Sendable>(
        _ what: @autoclosure () -> String,
        onTimeout: (@Sendable () -> Void)? = nil,
        onAbandoned: (@Sendable (Result<T, any Error>) async -> Void)? = nil,
        _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let duration = Self.maintenance ?? self.duration
        let description = what()
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let race = Race(continuation)
            // The operation runs in a task of its own so that the caller can be answered at the deadline while
            // the operation winds down (a structured child would make the caller wait for it). This is the one
            // place the server creates an unstructured task for store work.
            let task = Task {
                let result: Result<T, any Error>
                do { result = .success(try await operation()) } catch { result = .failure(error) }
                race.scheduled.withLock { $0?.cancel() }
                if !race.finish(result), let onAbandoned { await onAbandoned(result) }
            }
            let timer = MultiThreadedEventLoopGroup.singleton.any().scheduleTask(in: .nanoseconds(duration.nanoseconds)) {
                guard !race.resumed.load(ordering: .acquiring) else { return }
                onTimeout?()
                if race.finish(.failure(StorageError(.unavailable, "the store did not answer within \(duration) (\(description))"))) {
                    task.cancel()
                }
            }
            race.scheduled.withLock { $0 = timer }
        }
    }
}

extension Duration {
    /// Whole nanoseconds (saturating).
    public var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : scaled + attoseconds / 1_000_000_000
    }
}

/// Writes whose outcome this node does not know: the deadline passed while a refresh-token rotation was in
/// flight, or its connection died after `COMMIT` was sent. The client was told "unavailable", yet the
/// rotation may have committed. Until the store has settled it — undoing a late commit, so that the
/// client's token works again — a request presenting the token is answered "unavailable" too, instead of
/// being taken for a replay that would revoke the whole family. The tracker also remembers when the store
/// last failed, which other nodes' in-doubt rotations are judged by (`RefreshTokenStore.rotationMayBeInDoubt`).
/// Bounded: beyond `capacity` entries nothing more is remembered.
public final class RotationsInDoubt: Sendable {
    private struct State {
        var hashes: Set<String> = []
        var lastFailure: ContinuousClock.Instant?
    }
    private let state = Mutex(State())
    public let capacity: Int
    /// How long after a store failure a replay whose successor nobody used is answered "try again".
    public static let outageWindow: Duration = .seconds(30)

    public init(capacity: Int = 100_000) {
        self.capacity = capacity
    }

    public func insert(_ hash: String) { state.withLock { if $0.hashes.count < capacity { $0.hashes.insert(hash) } } }
    public func remove(_ hash: String) { _ = state.withLock { $0.hashes.remove(hash) } }
    public func contains(_ hash: String) -> Bool { state.withLock { $0.hashes.contains(hash) } }
    public var count: Int { state.withLock { $0.hashes.count } }

    /// The store failed (unavailable, deadline) just now.
    public func storeFailed() { state.withLock { $0.lastFailure = .now } }

    /// Whether the store failed within `outageWindow`.
    public var recentOutage: Bool {
        state.withLock { $0.lastFailure.map { ContinuousClock.now - $0 < Self.outageWindow } ?? false }
    }

    /// Settles a rotation in doubt in the background: `undo` is retried until it succeeds (the store may be
    /// the reason for the doubt) for up to ten minutes, then the token is released either way.
    public func settle(_ hash: String, undo: @escaping @Sendable () async throws -> Void) {
        insert(hash)
        // A task of its own: the request that hit the doubt has been answered already.
        Task {
            var delay: Duration = .milliseconds(50)
            let giveUp = ContinuousClock.now + .seconds(600)
            while ContinuousClock.now < giveUp {
                do {
                    try await undo()
                    break
                } catch {
                    try? await Task.sleep(for: delay)
                    delay = min(delay * 2, .milliseconds(250))
                }
            }
            self.remove(hash)
        }
    }
}

/// Whether a statement that failed might nonetheless have committed: set just before `COMMIT` is sent.
public final class CommitSent: Sendable {
    private let flag = Atomic<Bool>(false)
    public init() {}
    public func mark() { flag.store(true, ordering: .releasing) }
    public var value: Bool { flag.load(ordering: .acquiring) }
}
