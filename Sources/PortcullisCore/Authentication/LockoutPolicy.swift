public import Foundation

/// A failure counter for one account or one client address (PROTOCOL §9.6), as the store keeps it.
public struct ThrottleCounter: Sendable, Equatable {
    /// `account:{tenantId}:{userId}` or `ip:{address}` (IPv6 by its /64).
    public var key: String
    /// Failures in the current window.
    public var failures: Int
    public var windowStart: Date
    /// How many times the key was locked (each lock lasts twice the one before).
    public var locks: Int
    public var lockedUntil: Date?
    /// When the store may forget the counter.
    public var expiresAt: Date

    public init(key: String, failures: Int, windowStart: Date, locks: Int, lockedUntil: Date?, expiresAt: Date) {
        self.key = key
        self.failures = failures
        self.windowStart = windowStart
        self.locks = locks
        self.lockedUntil = lockedUntil
        self.expiresAt = expiresAt
    }
}

/// Password guessing (PROTOCOL §9.6), as pure decisions over counters: after `accountThreshold` failures for
/// an account within `window` the account is locked for `firstLock`, each further lock twice as long (up to
/// `maximumLock`); failures from one client address are limited the same way with the looser
/// `addressThreshold`, so that guessing at unknown user names is throttled too. A successful sign-in clears
/// the account's counter (not the address's). A counter that saw a lock is remembered for
/// `escalationMemory` after its lock ends, so that a patient attacker keeps doubling.
public struct LockoutPolicy: Sendable, Equatable {
    public var accountThreshold: Int
    public var addressThreshold: Int
    /// Wrong second-factor codes of one user (PROTOCOL §10: five lock like passwords).
    public var factorThreshold: Int
    /// Wrong device user codes from one client address: counted apart from password failures, so that one guesser
    /// behind an office's NAT does not lock the office out of password sign-in.
    public var deviceCodeThreshold: Int
    public var window: TimeInterval
    public var firstLock: TimeInterval
    public var maximumLock: TimeInterval
    public var escalationMemory: TimeInterval

    public init(
        accountThreshold: Int = 10, addressThreshold: Int = 100, factorThreshold: Int = 5, deviceCodeThreshold: Int = 20, window: TimeInterval = 600,
        firstLock: TimeInterval = 60, maximumLock: TimeInterval = 3600, escalationMemory: TimeInterval = 24 * 3600
    ) {
        self.deviceCodeThreshold = deviceCodeThreshold
        self.accountThreshold = accountThreshold
        self.addressThreshold = addressThreshold
        self.factorThreshold = factorThreshold
        self.window = window
        self.firstLock = firstLock
        self.maximumLock = maximumLock
        self.escalationMemory = escalationMemory
    }

    /// Which counter a key is, and so which threshold applies.
    public enum Subject: Sendable, Equatable {
        case account(tenantId: String, userId: String)
        case address(IPAddress?)
        /// A user's second factor: wrong codes lock the factor step, not the password.
        case factor(tenantId: String, userId: String)
        /// Device user codes typed from one client address (`/devicelogin`).
        case deviceCode(IPAddress?)

        public var key: String {
            switch self {
            case .account(let tenantId, let userId): return "account:\(tenantId.lowercased()):\(userId.lowercased())"
            case .factor(let tenantId, let userId): return "factor:\(tenantId.lowercased()):\(userId.lowercased())"
            case .address(let address?) where address.isIPv4: return "ip:\(address)"
            case .address(let address?): return "ip:\(String(address.high, radix: 16))::/64"  // one IPv6 client holds a /64
            case .address(nil): return "ip:unknown"
            case .deviceCode(let address): return "devicecode:" + Subject.address(address).key
            }
        }

        /// Whether a lock of this counter is the client address's (not the account's or the factor's).
        public var isAddress: Bool {
            switch self {
            case .address, .deviceCode: true
            case .account, .factor: false
            }
        }
    }

    public func threshold(for subject: Subject) -> Int {
        switch subject {
        case .account: return accountThreshold
        case .factor: return factorThreshold
        case .address: return addressThreshold
        case .deviceCode: return deviceCodeThreshold
        }
    }

    /// One attempt, counted before it is checked (so that concurrent attempts cannot all pass a lock that only a
    /// later count would set): the counter with this attempt counted, or — when the counter is locked — the counter
    /// unchanged and `refused`. The attempt that reaches the threshold is itself still checked; those after it are not.
    public func beginAttempt(_ counter: ThrottleCounter?, subject: Subject, now: Date) -> (counter: ThrottleCounter, refused: Bool) {
        if let counter, let until = counter.lockedUntil, until > now { return (counter, true) }
        return (afterFailure(counter, subject: subject, now: now), false)
    }

    /// The counter after a counted attempt turned out right: `nil` (forgotten) for an account or a factor, whose owner
    /// proved it; for an address, the attempt given back, so that people signing in correctly never lock their address.
    public func afterSuccess(_ counter: ThrottleCounter, subject: Subject, now: Date) -> ThrottleCounter? {
        subject.isAddress ? refund(counter, now: now) : nil
    }

    /// The counter with one counted attempt given back (an attempt that was not checked after all, or an address's
    /// right one). A lock already set stays.
    public func refund(_ counter: ThrottleCounter, now: Date) -> ThrottleCounter {
        var next = counter
        if now.timeIntervalSince(counter.windowStart) < window, next.failures > 0 { next.failures -= 1 }
        return next
    }

    /// The lock in force, if any: the later end of any locked counter among `counters`.
    public func lockedUntil(_ counters: [ThrottleCounter], now: Date) -> (until: Date, key: String)? {
        counters.compactMap { counter in counter.lockedUntil.flatMap { $0 > now ? ($0, counter.key) : nil } }.max { $0.0 < $1.0 }
    }

    /// The counter after one more failure.
    public func afterFailure(_ counter: ThrottleCounter?, subject: Subject, now: Date) -> ThrottleCounter {
        var next: ThrottleCounter
        if let counter, now.timeIntervalSince(counter.windowStart) < window {
            next = counter
            next.failures += 1
        } else {
            let remembered = counter.map { $0.expiresAt > now ? $0.locks : 0 } ?? 0
            next = ThrottleCounter(key: subject.key, failures: 1, windowStart: now, locks: remembered, lockedUntil: counter?.lockedUntil, expiresAt: now)
        }
        if next.failures >= threshold(for: subject) {
            next.locks += 1
            next.lockedUntil = now.addingTimeInterval(lockDuration(locks: next.locks))
            next.failures = 0
            next.windowStart = now
        }
        let lockEnd = next.lockedUntil.map { max($0, now) } ?? now
        next.expiresAt = max(next.windowStart.addingTimeInterval(window), next.locks > 0 ? lockEnd.addingTimeInterval(escalationMemory) : lockEnd)
        return next
    }

    /// `firstLock`, doubled for each lock before, capped at `maximumLock`.
    public func lockDuration(locks: Int) -> TimeInterval {
        min(firstLock * pow(2, Double(max(0, locks - 1))), maximumLock)
    }
}
