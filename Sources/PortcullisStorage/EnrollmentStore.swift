public import Foundation
public import PortcullisCore

/// One line of an enrollment's history.
public struct EnrollmentHistoryEntry: Codable, Sendable, Equatable {
    public var at: Date
    public var event: EnrollmentEvent
    public var fromStatus: String?
    public var toStatus: String?
    public var detail: String?

    public init(at: Date, event: EnrollmentEvent, fromStatus: String?, toStatus: String?, detail: String? = nil) {
        self.at = at
        self.event = event
        self.fromStatus = fromStatus
        self.toStatus = toStatus
        self.detail = detail
    }
}

/// A callback delivery waiting in (or passed through) the outbox.
public struct OutboxMessage: Codable, Sendable, Equatable {
    public enum State: String, Codable, Sendable {
        case pending, delivered, deadLetter
    }

    public var id: String
    public var tenantId: String
    public var enrollmentId: String?
    public var targetUri: String
    /// The signed SET.
    public var payload: String
    public var jti: String
    public var state: State
    public var attempts: Int
    public var nextAttemptAt: Date
    public var lastError: String?
    public var createdAt: Date
    public var deliveredAt: Date?

    public init(
        id: String, tenantId: String, enrollmentId: String?, targetUri: String, payload: String, jti: String, state: State = .pending,
        attempts: Int = 0, nextAttemptAt: Date, lastError: String? = nil, createdAt: Date, deliveredAt: Date? = nil
    ) {
        self.id = id
        self.tenantId = tenantId
        self.enrollmentId = enrollmentId
        self.targetUri = targetUri
        self.payload = payload
        self.jti = jti
        self.state = state
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.lastError = lastError
        self.createdAt = createdAt
        self.deliveredAt = deliveredAt
    }
}

extension EnrollmentStore {
    /// An update with no effects beyond its history and callbacks.
    public func updateEnrollment(
        _ enrollment: Enrollment, expectedRevision: Int64, history: EnrollmentHistoryEntry, outbox: [OutboxMessage]
    ) async throws -> Enrollment? {
        try await updateEnrollment(enrollment, expectedRevision: expectedRevision, history: history, outbox: outbox, effects: nil)
    }
}

/// Filters of the enrollment listing.
public struct EnrollmentQuery: Sendable, Equatable {
    public var tenantId: TenantID
    public var userId: ObjectID?
    public var clientId: AppID?
    public var deviceId: DeviceID?
    public var state: Enrollment.State?
    public var limit: Int
    /// How many of the matching enrollments (newest change first) to skip: the admin API's pages.
    public var offset: Int

    public init(
        tenantId: TenantID, userId: ObjectID? = nil, clientId: AppID? = nil, deviceId: DeviceID? = nil, state: Enrollment.State? = nil, limit: Int = 100,
        offset: Int = 0
    ) {
        self.tenantId = tenantId
        self.userId = userId
        self.clientId = clientId
        self.deviceId = deviceId
        self.state = state
        self.limit = limit
        self.offset = offset
    }
}

/// Enrollments, with the single-managed-account rule enforced by the store itself: at most one active
/// (not unenrolled) enrollment per (tenant, client application, device). Every state change is written
/// together with its history line and its outbox messages, in one transaction.
public protocol EnrollmentStore: Sendable {
    /// Inserts a new enrollment; `StorageError.duplicate` when the app instance already has an active one. In
    /// the same transaction, the account's enrollments of the client application beyond `keepingAtMost`
    /// (counting the new one) are deleted with their history: unenrolled ones first, then the least
    /// recently updated, so that no client can make the table grow without bound.
    func insertEnrollment(_ enrollment: Enrollment, history: EnrollmentHistoryEntry, outbox: [OutboxMessage], keepingAtMost: Int) async throws -> Enrollment
    /// Replaces an enrollment if its revision is still `expectedRevision`; `nil` when someone else changed it
    /// first (and then nothing is written). In the same transaction: its history line, its callbacks, and the
    /// change's other effects — the account's refresh-token families at the client revoked (a wipe), its Shared Signals
    /// events queued, the audit record — so that one state change is one transaction.
    func updateEnrollment(
        _ enrollment: Enrollment, expectedRevision: Int64, history: EnrollmentHistoryEntry, outbox: [OutboxMessage],
        effects: CommittedEffects?
    ) async throws -> Enrollment?
    func enrollment(id: RecordID) async throws -> Enrollment?
    /// The active enrollment holding an app instance's managed-account slot.
    func activeEnrollment(tenantId: TenantID, clientId: AppID, deviceId: DeviceID) async throws -> Enrollment?
    /// The most recently updated enrollment of an account in a client application that is compliant at `now` (the token
    /// path's question): its ID and platform only, read from the stored document by the database, the document itself not
    /// decoded (that decoding measured 5 % of a refresh).
    func compliantEnrollment(tenantId: TenantID, userId: ObjectID, clientId: AppID, now: Date) async throws -> CompliantEnrollment?
    /// Whether the account has any active enrollment of the client application.
    func hasActiveEnrollment(tenantId: TenantID, userId: ObjectID, clientId: AppID) async throws -> Bool
    /// An account's active enrollments of one client application (on every device).
    func activeEnrollments(tenantId: TenantID, userId: ObjectID, clientId: AppID) async throws -> [Enrollment]
    func enrollments(_ query: EnrollmentQuery) async throws -> [Enrollment]
    func enrollmentHistory(id: RecordID) async throws -> [EnrollmentHistoryEntry]
    /// Compliant enrollments whose grace period ended before `now`.
    func lapsingEnrollments(now: Date, limit: Int) async throws -> [Enrollment]
    /// Deletes enrollments (with their history) not updated since `idleSince`; returns how many.
    @discardableResult
    func deleteIdleEnrollments(idleSince: Date) async throws -> Int
}

/// The callback outbox: at-least-once delivery with leases, so that several nodes never send the same
/// message in the same attempt.
public protocol OutboxStore: Sendable {
    /// Leases up to `limit` due pending messages to `owner` until `leaseUntil`: for each (enrollment, receiver)
    /// only the oldest pending message, so that callbacks arrive in the order they were written.
    func claimOutbox(now: Date, leaseUntil: Date, owner: String, limit: Int) async throws -> [OutboxMessage]
    func completeOutbox(id: String, owner: String, at: Date) async throws
    /// Records a failed attempt; `nextAttemptAt == nil` moves the message to the dead letters.
    func failOutbox(id: String, owner: String, attempts: Int, nextAttemptAt: Date?, error: String) async throws
    /// A tenant's callbacks, newest first, `offset` of them skipped (the admin API's pages).
    func outboxMessages(tenantId: String, state: OutboxMessage.State?, limit: Int, offset: Int) async throws -> [OutboxMessage]
    /// Puts a message (dead or delivered) back in the queue; `false` when it does not exist in the tenant.
    func redeliverOutbox(id: String, tenantId: String, now: Date) async throws -> Bool
    /// When the next message can be claimed: the earliest, over the pending messages that head their
    /// (enrollment, receiver) queue, of the later of its attempt time and its lease's end (a dispatcher sleeps
    /// until then). `nil` when nothing is pending.
    func nextOutboxAttempt(now: Date) async throws -> Date?
    /// Deletes delivered and dead-lettered messages created before `before`; returns how many.
    @discardableResult
    func purgeOutbox(before: Date) async throws -> Int
}

extension OutboxStore {
    /// The newest callbacks of a tenant (the first page).
    public func outboxMessages(tenantId: String, state: OutboxMessage.State?, limit: Int) async throws -> [OutboxMessage] {
        try await outboxMessages(tenantId: tenantId, state: state, limit: limit, offset: 0)
    }
}

/// What the token path needs of a compliant enrollment.
public struct CompliantEnrollment: Sendable, Equatable {
    public var id: RecordID
    public var platform: DevicePlatform?

    public init(id: RecordID, platform: DevicePlatform?) {
        self.id = id
        self.platform = platform
    }
}
