public import Foundation
public import PortcullisTokenVerification
import Synchronization

/// What a resource server knows of revocations (PROTOCOL §14.3): for each user, the time (to the millisecond) up to which
/// their tokens no longer count — and, for an app's enrollment wiped or out of compliance, the same for the tokens that
/// app holds for the user; for a device out of compliance (PROTOCOL §18), the same for the user's tokens that name that
/// device (`deviceid`). Fed by the Shared Signals receiver; asked on every request. Whether it is current — its
/// stream connected — is said by the receiver (`isCurrent`): while it is not, revocations may be missing, and a resource
/// limits how old a token it accepts (`ResourceGuard.maximumTokenAge`).
///
/// Bounded: an entry is dropped once every token it could refuse has expired (`retention`, the longest token
/// lifetime), and at most `capacity` are kept — past it the oldest goes first (a revocation that old is the least
/// likely to still matter; the bound is logged by the caller as a risk, not silently absorbed).
public final class RevocationView: Sendable {
    public let capacity: Int
    public let retention: TimeInterval

    private struct State {
        /// Key → the revocation time (milliseconds since 1970): tokens issued at or before it are refused.
        var revokedAt: [String: Int64] = [:]
        /// Keys by when they were recorded, oldest first, for eviction (amortised: consumed from `head`).
        var order: [(key: String, at: Int64)] = []
        var head = 0
        var evicted = 0
    }
    private let state = Mutex(State())
    private let current = Atomic<Bool>(false)

    /// Whether the view is current: its stream is connected and polled (set by `SharedSignalsPoller`).
    public var isCurrent: Bool {
        get { current.load(ordering: .relaxed) }
        set { current.store(newValue, ordering: .relaxed) }
    }

    public init(capacity: Int = 200_000, retention: TimeInterval = 25 * 3600) {
        self.capacity = max(1, capacity)
        self.retention = retention
    }

    /// A revocation's key: its kind, then its identifiers in any case (GUIDs arrive in either).
    static func key(_ kind: Character, _ identifiers: String...) -> String {
        identifiers.reduce(String(kind)) { $0 + "|" + $1.lowercased() }
    }
    static func userKey(tenantId: String, userId: String) -> String { key("u", tenantId, userId) }
    static func appKey(tenantId: String, userId: String, clientId: String) -> String { key("a", tenantId, userId, clientId) }
    static func deviceKey(tenantId: String, userId: String, deviceId: String) -> String { key("d", tenantId, userId, deviceId) }

    /// Records that the user's tokens (only those `clientId` holds, or only those naming `deviceId`, when given) issued at
    /// or before `at` (milliseconds since 1970) no longer count.
    public func revoke(tenantId: String, userId: String, clientId: String? = nil, deviceId: String? = nil, at: Int64, now: Date) {
        let key =
            if let clientId {
                Self.appKey(tenantId: tenantId, userId: userId, clientId: clientId)
            } else if let deviceId {
                Self.deviceKey(tenantId: tenantId, userId: userId, deviceId: deviceId)
            } else {
                Self.userKey(tenantId: tenantId, userId: userId)
            }
        state.withLock { state in
            prune(&state, now: now)
            if let existing = state.revokedAt[key], existing >= at { return }
            if state.revokedAt[key] == nil, state.revokedAt.count >= capacity { evictOldest(&state) }
            state.revokedAt[key] = at
            state.order.append((key, at))
        }
    }

    /// The revocation that refuses this token, if any (milliseconds since 1970): the time the client's new token must come
    /// after. A token's issue time is `xms_iat_ms` (or the start of its `iat` second, the safe side).
    public func revocation(of claims: AccessTokenClaims) -> Int64? {
        // Asked on every request; most of the time nothing is revoked.
        if state.withLock({ $0.revokedAt.isEmpty }) { return nil }
        let subject = claims.oid ?? claims.sub
        var keys = [
            Self.userKey(tenantId: claims.tid, userId: subject), Self.appKey(tenantId: claims.tid, userId: subject, clientId: claims.azp),
        ]
        if let device = claims.deviceid { keys.append(Self.deviceKey(tenantId: claims.tid, userId: subject, deviceId: device)) }
        let issued = claims.issuedAtMilliseconds
        return state.withLock { state in
            keys.compactMap { state.revokedAt[$0] }.filter { issued <= $0 }.max()
        }
    }

    /// How many revocations are held, and how many were evicted by the capacity bound.
    public var counts: (held: Int, evicted: Int) { state.withLock { ($0.revokedAt.count, $0.evicted) } }

    private func prune(_ state: inout State, now: Date) {
        let horizon = Int64((now.timeIntervalSince1970 - retention) * 1000)
        while state.head < state.order.count, state.order[state.head].at < horizon {
            let (key, at) = state.order[state.head]
            if state.revokedAt[key] == at { state.revokedAt[key] = nil }
            state.head += 1
        }
        compact(&state)
    }

    private func evictOldest(_ state: inout State) {
        while state.head < state.order.count {
            let (key, at) = state.order[state.head]
            state.head += 1
            if state.revokedAt[key] == at {
                state.revokedAt[key] = nil
                state.evicted += 1
                break
            }
        }
        compact(&state)
    }

    /// Drops the consumed prefix of `order` once it is half the array, so it stays within twice the entries held.
    private func compact(_ state: inout State) {
        if state.head > 1024, state.head * 2 > state.order.count {
            state.order.removeFirst(state.head)
            state.head = 0
        }
        // Superseded entries (a key revoked again later) stay in `order` until reached; bound them too.
        if state.order.count - state.head > 2 * capacity + 1024 {
            state.order = state.order[state.head...].filter { state.revokedAt[$0.key] == $0.at }
            state.head = 0
        }
    }
}
