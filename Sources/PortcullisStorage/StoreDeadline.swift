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

/// Refresh-token rotations whose outcome this node does not know yet: the deadline passed while the
/// rotation was in flight, so the client was told "unavailable", yet the rotation may still commit. Until
/// the store has settled it (undoing a late commit, so that the client's token works again), a request
/// presenting the token is answered "unavailable" too, instead of being taken for a replay that would
/// revoke the whole family. Bounded: beyond `capacity` entries nothing more is remembered.
public final class RotationsInDoubt: Sendable {
    private let hashes = Mutex<Set<String>>([])
    public let capacity: Int

    public init(capacity: Int = 100_000) {
        self.capacity = capacity
    }

    public func insert(_ hash: String) { hashes.withLock { if $0.count < capacity { $0.insert(hash) } } }
    public func remove(_ hash: String) { _ = hashes.withLock { $0.remove(hash) } }
    public func contains(_ hash: String) -> Bool { hashes.withLock { $0.contains(hash) } }
    public var count: Int { hashes.withLock { $0.count } }
}

/// Settling a rotation that committed after its deadline: the undo is retried (the store may be the reason
/// the deadline passed) for about a minute, then given up (the token then reads as used).
public enum RotationUndo {
    public static func settle(_ undo: @Sendable () async throws -> Void) async {
        var delay: Duration = .milliseconds(100)
        let giveUp = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < giveUp {
            do {
                try await undo()
                return
            } catch {
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(2))
            }
        }
    }
}
