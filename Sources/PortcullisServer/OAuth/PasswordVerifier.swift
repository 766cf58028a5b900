import Foundation
import Logging
import PortcullisCore
import PortcullisStorage
import Synchronization

/// Every guessable check — passwords (password grant, sign-in page, device login), temporary access passes,
/// second-factor codes and device user codes — goes through one lockout policy (PROTOCOL §9.6) in the same way: the attempt is counted first, for
/// every counter it concerns, in one atomic step on every node; a locked counter refuses it at once (50053) with no
/// count and no bcrypt work; only then is it checked (bcrypt on the bounded queue, 503 when full). A right answer
/// clears the account's or factor's counter and gives the address its attempt back; a wrong one stays counted. So
/// however many attempts arrive together, at most a threshold's worth are ever checked before the lock.
struct PasswordVerifier: Sendable {
    let store: any ThrottleStore
    let hasher: PasswordHasher
    let policy: LockoutPolicy
    let temporaryAccessPasses: TemporaryAccessPasses
    let logger: Logger

    /// The user whose password matched, or the refusal (the password grant: a temporary access pass is not a password).
    func verify(username: String, password: String, in tenant: DirectorySnapshot, clientIP: IPAddress?, now: Date) async throws -> User {
        try await check(username: username, secret: password, in: tenant, clientIP: clientIP, now: now, passes: nil).user
    }

    /// The sign-in page's password field (PROTOCOL §12.3): the user's temporary access pass, when they have one that is
    /// usable now and this is it, or else their password. One counted attempt either way.
    func verifyOnPage(
        username: String, secret: String, in tenant: DirectorySnapshot, clientIP: IPAddress?, now: Date
    ) async throws -> (user: User, pass: TemporaryAccessPassRecord?) {
        try await check(username: username, secret: secret, in: tenant, clientIP: clientIP, now: now, passes: temporaryAccessPasses)
    }

    private func check(
        username: String, secret: String, in tenant: DirectorySnapshot, clientIP: IPAddress?, now: Date, passes: TemporaryAccessPasses?
    ) async throws -> (user: User, pass: TemporaryAccessPassRecord?) {
        let user = tenant.user(principalName: username)
        var subjects: [LockoutPolicy.Subject] = [.address(clientIP)]
        if let user { subjects.append(.account(tenantId: tenant.tenant.id.rawValue, userId: user.id.rawValue)) }
        try await beginAttempt(subjects, now: now, locked: { $0.isAddress ? .addressLocked : .accountLocked })
        if let passes, let user, let pass = try await passes.matching(secret, tenantId: tenant.tenant.id.rawValue, userId: user.id.rawValue, now: now) {
            // A one-time pass two sign-ins raced for is the loser's wrong answer: it stays counted.
            guard try await passes.store.useTemporaryAccessPass(id: pass.id, at: now) else { throw TokenError.badCredentials }
            try await attemptSucceeded(subjects, now: now)
            return (user, pass)
        }
        let matched: Bool
        do {
            matched = try await hasher.verify(secret, hash: user?.passwordHash)
        } catch let busy as PasswordHasher.Busy {
            // Not checked after all: give the attempt back.
            try await refund(subjects, now: now)
            logger.warning("password check refused: the hashing queue is full")
            throw TokenError.busy(retryAfter: busy.retryAfter)
        }
        guard matched, let user else {
            if let user { await countSpray(tenantId: tenant.tenant.id, address: clientIP, userId: user.id, now: now) }
            throw user == nil ? TokenError.unknownUser : TokenError.badCredentials
        }
        try await attemptSucceeded(subjects, now: now)
        return (user, nil)
    }

    /// A wrong password for an existing account (PROTOCOL §19, password spray): the account is marked under the address for
    /// the window, and the address's count of such accounts goes up the first time. Failures to count are logged, never the
    /// sign-in's answer.
    func countSpray(tenantId: TenantID, address: IPAddress?, userId: ObjectID, now: Date) async {
        let mark = RiskDetector.sprayedAccountKey(tenantId: tenantId, address: address, userId: userId)
        let fresh = Mutex(false)
        do {
            try await store.updateThrottles(keys: [mark]) { key, current in
                let (counter, new) = RiskDetector.markSprayed(current, key: key, now: now)
                if new { fresh.withLock { $0 = true } }
                return counter
            }
            guard fresh.withLock({ $0 }) else { return }
            try await store.updateThrottles(keys: [RiskDetector.sprayKey(tenantId: tenantId, address: address)]) { key, current in
                RiskDetector.countSprayed(current, key: key, now: now)
            }
        } catch {
            logger.warning("a wrong password could not be counted for password spray", metadata: ["portcullis.error": .string("\(type(of: error))")])
        }
    }

    /// Counts one attempt for each subject before it is checked, atomically; throws `locked(subject)` — without
    /// counting — when a counter is locked. Logs the lock this attempt sets.
    func beginAttempt(_ subjects: [LockoutPolicy.Subject], now: Date, locked: (LockoutPolicy.Subject) -> TokenError) async throws {
        let policy = self.policy
        let bySubject = Dictionary(subjects.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
        // Most locked attempts are refused by this read alone, with no write.
        if let lock = policy.lockedUntil(try await store.throttles(keys: subjects.map(\.key)), now: now), let subject = bySubject[lock.key] {
            throw locked(subject)
        }
        let refused = Mutex<LockoutPolicy.Subject?>(nil)
        let counted = try await store.updateThrottles(keys: subjects.map(\.key)) { key, current in
            let subject = bySubject[key] ?? .address(nil)
            let attempt = policy.beginAttempt(current, subject: subject, now: now)
            if attempt.refused { refused.withLock { $0 = $0 ?? subject } }
            return attempt.counter
        }
        if let subject = refused.withLock({ $0 }) {
            // Locked meanwhile by a concurrent attempt: this one is not checked, so it counts nowhere.
            try await refund(subjects.filter { $0.key != subject.key }, now: now)
            throw locked(subject)
        }
        for counter in counted where counter.lockedUntil.map({ $0 > now }) == true && counter.failures == 0 && counter.windowStart == now {
            logger.notice(
                "sign-in locked after repeated failures",
                metadata: [
                    "portcullis.lock": .string(bySubject[counter.key]?.isAddress == true ? "address" : "account"),
                    "portcullis.locked_seconds": .stringConvertible(Int(counter.lockedUntil!.timeIntervalSince(now))),
                ])
        }
    }

    /// A counted attempt was right: accounts' and factors' counters are forgotten, addresses get the attempt back.
    func attemptSucceeded(_ subjects: [LockoutPolicy.Subject], now: Date) async throws {
        for subject in subjects where !subject.isAddress { try await store.clearThrottle(key: subject.key) }
        try await refund(subjects.filter(\.isAddress), now: now)
    }

    /// Gives each subject back one counted attempt (one that was not checked, or an address's right one).
    func refund(_ subjects: [LockoutPolicy.Subject], now: Date) async throws {
        guard !subjects.isEmpty else { return }
        let policy = self.policy
        try await store.updateThrottles(keys: subjects.map(\.key)) { key, current in
            guard let current else { return ThrottleCounter(key: key, failures: 0, windowStart: now, locks: 0, lockedUntil: nil, expiresAt: now) }
            return policy.refund(current, now: now)
        }
    }
}
