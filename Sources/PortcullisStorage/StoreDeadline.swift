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

    /// One resumption of the caller: by the operation or by the deadline, never both.
    fileprivate final class Race<T: Sendable>: Sendable {
        let resumed = Atomic<Bool>(false)
        let continuation: Mutex<CheckedContinuation<T, any Error>?>

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
                if !race.finish(result), let onAbandoned { await onAbandoned(result) }
            }
            DeadlineWatch.shared.add(after: duration, done: { race.resumed.load(ordering: .relaxed) }) {
                onTimeout?()
                if race.finish(.failure(StorageError(.unavailable, "the store did not answer within \(duration) (\(description))"))) {
                    task.cancel()
                }
            }
        }
    }

    /// The same for an operation handed to a thread of its own (SQLite's): `start` hands the ticket over and returns at
    /// once; the thread answers through the ticket, or the deadline answers first (then `onTimeout` runs, and the ticket
    /// says so: work that has not started should not, and work not yet committed must not commit).
    public func run<T: Sendable>(
        _ what: @autoclosure () -> String, onTimeout: (@Sendable () -> Void)? = nil, start: (DeadlineTicket<T>) -> Void
    ) async throws -> T {
        let duration = Self.maintenance ?? self.duration
        let description = what()
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let ticket = DeadlineTicket(Race(continuation))
            start(ticket)
            DeadlineWatch.shared.add(after: duration, done: { ticket.isAnswered }) {
                guard !ticket.isAnswered else { return }
                onTimeout?()
                _ = ticket.race.finish(.failure(StorageError(.unavailable, "the store did not answer within \(duration) (\(description))")))
            }
        }
    }
}

extension StoreDeadline {
    /// The deadline for an operation the caller runs itself (a read on its own thread): `expire` is called once it passes,
    /// unless `done` says the operation ended first. The duration in force is returned (for the caller's error message).
    @discardableResult
    public func watch(done: @escaping @Sendable () -> Bool, expire: @escaping @Sendable () -> Void) -> Duration {
        let duration = Self.maintenance ?? self.duration
        DeadlineWatch.shared.add(after: duration, done: done, expire: expire)
        return duration
    }
}

/// The caller's side of an operation run on another thread (`StoreDeadline.run(_:onTimeout:start:)`): it is answered
/// once, by the operation's result or by the deadline.
public final class DeadlineTicket<T: Sendable>: Sendable {
    fileprivate let race: StoreDeadline.Race<T>

    fileprivate init(_ race: StoreDeadline.Race<T>) {
        self.race = race
    }

    /// Whether the caller has been answered: before the operation finishes, only the deadline answers.
    public var isAnswered: Bool { race.resumed.load(ordering: .acquiring) }

    /// Answers the caller with the operation's result; `false` when the deadline answered first (the result is then the
    /// operation's own to deal with: a write that committed late is undone by its `onAbandoned`).
    @discardableResult
    public func finish(_ result: Result<T, any Error>) -> Bool { race.finish(result) }
}

/// Watches every pending store operation's deadline with one timer for the whole process: an operation
/// joins a queue ordered by deadline (nearly always at its end, all sharing one duration), and the timer is
/// armed only when the earliest deadline changes. So an operation costs no timer of its own — scheduling and
/// cancelling one per operation woke an event-loop thread twice per statement, which profiling showed. When
/// the timer fires it expires what is due and not done, forgets what is done, and re-arms for the next.
final class DeadlineWatch: Sendable {
    static let shared = DeadlineWatch()

    private struct Entry {
        let deadline: NIODeadline
        let done: @Sendable () -> Bool
        let expire: @Sendable () -> Void
    }

    private struct State {
        var entries: [Entry] = []
        var head = 0
        var armedFor: NIODeadline?
        var timer: Scheduled<Void>?
    }

    private let state = Mutex(State())
    private let loop = MultiThreadedEventLoopGroup.singleton.next()

    func add(after duration: Duration, done: @escaping @Sendable () -> Bool, expire: @escaping @Sendable () -> Void) {
        let deadline = NIODeadline.now() + .nanoseconds(duration.nanoseconds)
        state.withLock { state in
            let entry = Entry(deadline: deadline, done: done, expire: expire)
            if let last = state.entries.last, state.entries.count > state.head, last.deadline > deadline {
                // A shorter deadline than the last one (a different duration): keep the queue ordered.
                let index = state.entries[state.head...].firstIndex { $0.deadline > deadline } ?? state.entries.count
                state.entries.insert(entry, at: index)
            } else {
                state.entries.append(entry)
            }
            arm(&state)
        }
    }

    /// Arms the timer for the earliest pending deadline, unless it already is.
    private func arm(_ state: inout State) {
        guard state.head < state.entries.count else { return }
        let earliest = state.entries[state.head].deadline
        if let armed = state.armedFor, armed <= earliest { return }
        state.timer?.cancel()
        state.armedFor = earliest
        state.timer = loop.scheduleTask(deadline: earliest) { self.fire() }
    }

    private func fire() {
        let due = state.withLock { state -> [Entry] in
            state.armedFor = nil
            state.timer = nil
            let now = NIODeadline.now()
            var due: [Entry] = []
            while state.head < state.entries.count {
                let entry = state.entries[state.head]
                if entry.done() {
                    state.head += 1
                } else if entry.deadline <= now {
                    due.append(entry)
                    state.head += 1
                } else {
                    break
                }
            }
            if state.head > 1024 && state.head * 2 > state.entries.count {
                state.entries.removeFirst(state.head)
                state.head = 0
            } else if state.head == state.entries.count {
                state.entries.removeAll(keepingCapacity: true)
                state.head = 0
            }
            arm(&state)
            return due
        }
        for entry in due { entry.expire() }
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
                    // Background work, not a request: the longer deadline (the store may just be slow).
                    try await StoreDeadline.forMaintenance(.seconds(30)) { try await undo() }
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
