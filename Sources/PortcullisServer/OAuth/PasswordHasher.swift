import HummingbirdBcrypt
import NIOPosix

/// bcrypt for user passwords, always off the event loop (on the NIO thread pool).
public struct PasswordHasher: Sendable {
    public let cost: UInt8
    private let pool: NIOThreadPool
    /// A hash of nothing anybody knows, verified against when the user does not exist so that an unknown
    /// user costs the same time as a wrong password.
    private let decoy: String

    public init(cost: UInt8, pool: NIOThreadPool = .singleton) async throws {
        self.cost = cost
        self.pool = pool
        self.decoy = try await pool.runIfActive { Bcrypt.hash("portcullis-decoy-\(UInt64.random(in: 0...UInt64.max))", cost: cost) }
    }

    public func hash(_ password: String) async throws -> String {
        let cost = self.cost
        return try await pool.runIfActive { Bcrypt.hash(password, cost: cost) }
    }

    /// Verifies `password` against `hash`, or against the decoy when `hash` is `nil` (always `false` then).
    public func verify(_ password: String, hash: String?) async throws -> Bool {
        let target = hash ?? decoy
        let matched = try await pool.runIfActive { Bcrypt.verify(password, hash: target) }
        return matched && hash != nil
    }
}
