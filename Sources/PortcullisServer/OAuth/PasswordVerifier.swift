import Foundation
import Logging
import PortcullisCore
import PortcullisStorage

/// Every password check — the password grant today, the sign-in page and device login next — goes through
/// here (PROTOCOL §9.6): the account's and the client address's counters are read first, and a locked
/// attempt is refused (50053) without any bcrypt work; then bcrypt on the bounded queue (503 when full);
/// then a failure is counted for the address and, when the user exists, the account, or a success clears
/// the account's counter. Counters live in the store, so every node sees the same lock.
struct PasswordVerifier: Sendable {
    let store: any ThrottleStore
    let hasher: PasswordHasher
    let policy: LockoutPolicy
    let logger: Logger

    /// The user whose password matched, or the refusal.
    func verify(username: String, password: String, in tenant: DirectorySnapshot, clientIP: IPAddress?, now: Date) async throws -> User {
        let user = tenant.user(principalName: username)
        var subjects: [LockoutPolicy.Subject] = [.address(clientIP)]
        if let user { subjects.append(.account(tenantId: tenant.tenant.id, userId: user.id)) }
        let counters = try await store.throttles(keys: subjects.map(\.key))
        if let lock = policy.lockedUntil(counters, now: now) {
            throw lock.key.hasPrefix("ip:") ? TokenError.addressLocked : TokenError.accountLocked
        }
        let matched: Bool
        do {
            matched = try await hasher.verify(password, hash: user?.passwordHash)
        } catch let busy as PasswordHasher.Busy {
            logger.warning("password check refused: the hashing queue is full")
            throw TokenError.busy(retryAfter: busy.retryAfter)
        }
        guard matched, let user else {
            let updated = try await countFailures(subjects, now: now)
            for counter in updated where counter.lockedUntil.map({ $0 > now }) == true && counter.failures == 0 {
                logger.notice("sign-in locked after repeated failures", metadata: [
                    "portcullis.lock": .string(counter.key.hasPrefix("ip:") ? "address" : "account"),
                    "portcullis.locked_seconds": .stringConvertible(Int(counter.lockedUntil!.timeIntervalSince(now))),
                ])
            }
            throw user == nil ? TokenError.unknownUser : TokenError.badCredentials
        }
        let accountKey = LockoutPolicy.Subject.account(tenantId: tenant.tenant.id, userId: user.id).key
        if counters.contains(where: { $0.key == accountKey }) { try await store.clearThrottle(key: accountKey) }
        return user
    }

    /// A wrong device code counts against the client address, like a wrong password (guessing codes is
    /// guessing credentials); a locked address is refused before any lookup.
    func checkAddress(_ clientIP: IPAddress?, now: Date) async throws {
        let counters = try await store.throttles(keys: [LockoutPolicy.Subject.address(clientIP).key])
        if policy.lockedUntil(counters, now: now) != nil { throw TokenError.addressLocked }
    }

    func countAddressFailure(_ clientIP: IPAddress?, now: Date) async throws {
        try await countFailures([.address(clientIP)], now: now)
    }

    /// One more failure for each subject (a wrong second-factor code counts for the factor and the address).
    @discardableResult
    func countFailures(_ subjects: [LockoutPolicy.Subject], now: Date) async throws -> [ThrottleCounter] {
        let policy = self.policy
        let byKey = Dictionary(subjects.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
        return try await store.updateThrottles(keys: subjects.map(\.key)) { key, current in
            policy.afterFailure(current, subject: byKey[key] ?? .address(nil), now: now)
        }
    }
}
