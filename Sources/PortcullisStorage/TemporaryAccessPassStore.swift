public import Foundation
public import PortcullisCore

/// A user's temporary access pass (PROTOCOL §12.3): issued by an admin, stored as a keyed hash (the pass itself is
/// shown once, in the answer that created it), usable from `startAt` for `lifetimeMinutes`, once or many times.
public struct TemporaryAccessPassRecord: Sendable, Equatable {
    /// The method ID the admin API names (a lower-case UUID).
    public var id: RecordID
    public var tenantId: TenantID
    public var userId: ObjectID
    /// `CredentialHasher.hashSecret` of the pass as the user types it (upper-cased).
    public var passHash: String
    public var createdAt: Date
    public var startAt: Date
    public var lifetimeMinutes: Int
    public var usableOnce: Bool
    /// The last sign-in with it (for a one-time pass: the one that used it up).
    public var usedAt: Date?

    public init(
        id: RecordID, tenantId: TenantID, userId: ObjectID, passHash: String, createdAt: Date, startAt: Date, lifetimeMinutes: Int, usableOnce: Bool,
        usedAt: Date? = nil
    ) {
        self.id = id
        self.tenantId = tenantId
        self.userId = userId
        self.passHash = passHash
        self.createdAt = createdAt
        self.startAt = startAt
        self.lifetimeMinutes = lifetimeMinutes
        self.usableOnce = usableOnce
        self.usedAt = usedAt
    }

    public var endAt: Date { startAt.addingTimeInterval(TimeInterval(lifetimeMinutes) * 60) }

    /// Why a pass can or cannot sign in at `now`, in the words of Graph's `methodUsabilityReason`.
    public enum Usability: String, Sendable {
        case enabledByPolicy = "EnabledByPolicy"
        case notYetValid = "NotYetValid"
        case expired = "Expired"
        case oneTimePassUsed = "OneTimePassUsed"
    }

    public func usability(at now: Date) -> Usability {
        if usableOnce && usedAt != nil { return .oneTimePassUsed }
        if now < startAt { return .notYetValid }
        if now >= endAt { return .expired }
        return .enabledByPolicy
    }
}

/// Temporary access passes, shared by every node. A user holds at most one: a new one replaces the old.
public protocol TemporaryAccessPassStore: Sendable {
    /// Stores `pass` as the user's only pass; returns the one it replaced, if any.
    func replaceTemporaryAccessPass(_ pass: TemporaryAccessPassRecord) async throws -> TemporaryAccessPassRecord?
    func temporaryAccessPass(tenantId: TenantID, userId: ObjectID) async throws -> TemporaryAccessPassRecord?
    /// Records a sign-in with the pass in one statement: `false` — nothing recorded — when it is gone, or is one-time
    /// and was used already (two sign-ins racing with a one-time pass: one wins).
    func useTemporaryAccessPass(id: RecordID, at: Date) async throws -> Bool
    func deleteTemporaryAccessPass(tenantId: TenantID, userId: ObjectID, id: RecordID) async throws -> Bool
}
