import PortcullisStorage
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A transaction waiting for the writer: its work and how its caller is answered. Touched by the writer's thread only,
/// once submitted.
final class WriteJob: @unchecked Sendable {
    /// Whether the caller was answered already (its deadline passed): work not started does not start, work not
    /// committed does not commit.
    let isAnswered: @Sendable () -> Bool
    let perform: (WriterStatements) throws -> Void
    /// The outcome: the group's commit, or this transaction's own failure.
    let complete: (Result<Void, any Error>) -> Void

    init(
        isAnswered: @escaping @Sendable () -> Bool, perform: @escaping (WriterStatements) throws -> Void,
        complete: @escaping (Result<Void, any Error>) -> Void
    ) {
        self.isAnswered = isAnswered
        self.perform = perform
        self.complete = complete
    }
}

/// The one writer connection on a thread of its own, running transactions one after another, each to its end without
/// leaving the thread (so nothing interleaves with it and it costs its caller one wait, not one per statement).
///
/// Group commit: transactions that arrive while others run join their SQLite transaction (each in a savepoint of its
/// own) and all commit together, so that concurrent writers share one fsync. A transaction that fails rolls back its
/// savepoint alone. Under load (the last group had more than one member, or this one began within `commitWindow` of the
/// last commit) an open group waits up to `commitWindow` from its start for more members before it commits: a
/// transaction runs in tens of microseconds, much less than the time between two requests' writes, so without the wait
/// nearly every write paid a commit of its own (measured at 32 connections of refreshes: 0.82 fsyncs per refresh without
/// it, 0.45 with a 1.5 ms window, 0.28 with 4 ms). A write with none other in the window before it never waits.
final class SQLiteWriter: Sendable {
    private struct Queue {
        var jobs: [WriteJob] = []
        var head = 0
        /// Whether the thread is draining the queue (then a new job only joins it).
        var draining = false
        /// Whether the thread waits for more members of an open group (then a new job wakes it).
        var waiting = false
    }

    private let thread: SQLiteThreads
    private let queue = Mutex(Queue())
    /// Signalled when a job arrives while the thread waits.
    private let arrivals = MonotonicSignal()
    static let maximumGroup = 64
    /// Commits made (groups), for tests and diagnostics.
    let commits = Atomic<Int>(0)
    /// How long an open group waits for more members at most (from its first member).
    static let commitWindow: Duration = .milliseconds(4)

    init(_ connection: SQLiteHandle) {
        thread = SQLiteThreads([connection])
    }

    func submit(_ job: WriteJob) {
        let (start, wake) = queue.withLock { queue -> (Bool, Bool) in
            queue.jobs.append(job)
            let start = !queue.draining
            let wake = queue.waiting
            queue.draining = true
            queue.waiting = false
            return (start, wake)
        }
        if wake { arrivals.signal() }
        if start { thread.submit { connection in self.drain(connection) } }
    }

    /// Stops the thread once the transactions queued have run (a write under way is never cut short).
    func close() async throws { try await thread.close(interrupting: false) }

    /// The next job, waiting for one until `until` if given; `nil` when none came (and, unless a group is open to commit
    /// first, the thread stops draining).
    private func next(groupOpen: Bool, until: ContinuousClock.Instant? = nil) -> WriteJob? {
        while true {
            let (job, wait) = queue.withLock { queue -> (WriteJob?, Bool) in
                if queue.head < queue.jobs.count {
                    let job = queue.jobs[queue.head]
                    queue.head += 1
                    if queue.head == queue.jobs.count {
                        queue.jobs.removeAll(keepingCapacity: queue.jobs.count <= 1024)
                        queue.head = 0
                    }
                    return (job, false)
                }
                if let until, ContinuousClock.now < until {
                    queue.waiting = true
                    return (nil, true)
                }
                if !groupOpen { queue.draining = false }
                return (nil, false)
            }
            guard wait, let until else { return job }
            // A signal that raced a timeout only makes a later wait return early: the loop looks at the queue again.
            arrivals.wait(for: until - ContinuousClock.now)
            queue.withLock { $0.waiting = false }
        }
    }

    private func drain(_ connection: SQLiteHandle?) {
        guard let connection else {
            while let job = next(groupOpen: false) { job.complete(.failure(StorageError(.unavailable, "the store is closed"))) }
            return
        }
        let db = WriterStatements(connection: connection)
        var members: [WriteJob] = []
        var open = false
        var concurrent = false
        var groupEnds = ContinuousClock.now
        var lastCommit: ContinuousClock.Instant?
        while true {
            guard let job = next(groupOpen: open) ?? (open && concurrent ? next(groupOpen: open, until: groupEnds) : nil) else {
                guard open else { return }
                let size = members.count
                commit(db, &members)
                lastCommit = .now
                concurrent = size > 1
                open = false
                continue
            }
            // The deadline passed while it waited: it never starts.
            if job.isAnswered() {
                job.complete(.failure(StorageError(.unavailable, "the deadline passed while waiting for the writer")))
                continue
            }
            if !open {
                do {
                    _ = try db.query("BEGIN IMMEDIATE")
                } catch {
                    job.complete(.failure(SQLiteStore.translate(error)))
                    continue
                }
                open = true
                groupEnds = .now + Self.commitWindow
                // Writes arriving back to back (this one within a window of the last commit) are load too.
                if let lastCommit, ContinuousClock.now - lastCommit < Self.commitWindow { concurrent = true }
            }
            do {
                _ = try db.query("SAVEPOINT portcullis")
                try job.perform(db)
                // Past its deadline the caller has been told "unavailable": its work must not commit.
                if job.isAnswered() { throw StorageError(.unavailable, "the deadline passed before the commit") }
                _ = try db.query("RELEASE portcullis")
                members.append(job)
            } catch {
                _ = try? db.query("ROLLBACK TO portcullis")
                _ = try? db.query("RELEASE portcullis")
                job.complete(.failure(SQLiteStore.translate(error)))
            }
            if members.count >= Self.maximumGroup {
                concurrent = true
                commit(db, &members)
                lastCommit = .now
                open = false
            }
        }
    }

    /// Commits the open group and answers its members: `COMMIT`, or on failure `ROLLBACK` and the error for everyone.
    private func commit(_ db: WriterStatements, _ members: inout [WriteJob]) {
        let group = members
        members.removeAll(keepingCapacity: true)
        commits.add(1, ordering: .relaxed)
        do {
            _ = try db.query("COMMIT")
        } catch {
            _ = try? db.query("ROLLBACK")
            let translated = SQLiteStore.translate(error)
            for member in group { member.complete(.failure(translated)) }
            return
        }
        for member in group { member.complete(.success(())) }
    }
}

/// A wake-up signal whose timed wait runs on the monotonic clock. Foundation's `NSCondition.wait(until:)` and Dispatch's
/// timed waits end at a wall-clock instant: moved by hours (an administrator, NTP stepping, a test's clock shim), a 4 ms
/// wait became hours and every write timed out behind it (seen in the terms-of-use browser test, whose shim moves the
/// server's clock a day ahead).
final class MonotonicSignal: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// Guarded by `mutex`.
    private var signalled = false

    init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    func signal() {
        pthread_mutex_lock(mutex)
        signalled = true
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
    }

    /// Waits until signalled (consuming the signal) or until `duration` has passed on the monotonic clock.
    func wait(for duration: Duration) {
        guard duration > .zero else { return }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let total = Int64(now.tv_nsec) + duration.nanoseconds
        var deadline = timespec(tv_sec: now.tv_sec + Int(total / 1_000_000_000), tv_nsec: Int(total % 1_000_000_000))
        pthread_mutex_lock(mutex)
        while !signalled {
            if pthread_cond_timedwait(condition, mutex, &deadline) != 0 { break }
        }
        signalled = false
        pthread_mutex_unlock(mutex)
    }
}
