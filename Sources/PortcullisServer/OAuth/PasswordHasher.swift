import HummingbirdBcrypt
import NIOCore
import NIOPosix
import Synchronization

/// bcrypt for user passwords, always off the event loop, on threads of its own (one per core); checks run
/// behind a bounded queue: at most `threads + queueLimit` checks are running or waiting; one more is refused at
/// once with `Busy` (the token endpoint answers 503 `temporarily_unavailable` with `Retry-After`) rather
/// than queued without limit, so that a flood of guesses cannot make a legitimate sign-in wait for minutes.
/// Checks for user names that do not exist (the decoy hash) may fill only half of the waiting room, so
/// that a flood of guesses at unknown names still leaves room for the real accounts' sign-ins.
public struct PasswordHasher: Sendable {
    public let cost: UInt8
    /// Checks that may wait for a thread beyond those running.
    public let queueLimit: Int
    private let pool: NIOThreadPool
    private let inFlight: InFlight
    /// A hash of nothing anybody knows, verified against when the user does not exist so that an unknown
    /// user costs the same time as a wrong password.
    private let decoy: String

    /// The hashing threads, shared by every hasher of the process.
    static let sharedPool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: max(1, System.coreCount))
        pool.start()
        return pool
    }()

    /// The queue is full: try again after `retryAfter` seconds.
    public struct Busy: Error, Sendable {
        public let retryAfter: Int
    }

    final class InFlight: Sendable {
        let count = Atomic<Int>(0)
        let checks = Atomic<Int>(0)
    }

    public init(cost: UInt8, queueLimit: Int = 64) async throws {
        self.cost = cost
        self.queueLimit = max(0, queueLimit)
        self.pool = Self.sharedPool
        self.inFlight = InFlight()
        self.decoy = try await Self.sharedPool.runIfActive { Bcrypt.hash("portcullis-decoy-\(UInt64.random(in: 0...UInt64.max))", cost: cost) }
    }

    /// Hashes a password an operator or admin set (seeding, the admin API): not bounded, as no anonymous
    /// client can cause it.
    public func hash(_ password: String) async throws -> String {
        let cost = self.cost
        return try await pool.runIfActive { Bcrypt.hash(password, cost: cost) }
    }

    /// Verifies `password` against `hash`, or against the decoy when `hash` is `nil` (always `false` then).
    public func verify(_ password: String, hash: String?) async throws -> Bool {
        let target = hash ?? decoy
        let matched = try await bounded(waitingRoom: hash == nil ? queueLimit / 2 : queueLimit) { Bcrypt.verify(password, hash: target) }
        return matched && hash != nil
    }

    /// How many checks are running or waiting now.
    public var pending: Int { inFlight.count.load(ordering: .relaxed) }
    /// How many bcrypt verifications this hasher has run (tests: a locked attempt must cost none).
    public var checksPerformed: Int { inFlight.checks.load(ordering: .relaxed) }

    private func bounded<T: Sendable>(waitingRoom: Int, _ work: @escaping @Sendable () throws -> T) async throws -> T {
        let limit = System.coreCount + waitingRoom
        let before = inFlight.count.wrappingAdd(1, ordering: .acquiringAndReleasing).oldValue
        defer { inFlight.count.wrappingSubtract(1, ordering: .acquiringAndReleasing) }
        guard before < limit else { throw Busy(retryAfter: 1) }
        inFlight.checks.wrappingAdd(1, ordering: .relaxed)
        return try await pool.runIfActive(work)
    }
}
