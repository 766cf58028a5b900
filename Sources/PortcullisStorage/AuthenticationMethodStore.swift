public import Foundation
public import PortcullisCore

/// A user's registered second factor (PROTOCOL §10): today a TOTP authenticator. The secret is stored sealed
/// (`FactorSecretBox`), never in clear.
public struct AuthenticationMethodRecord: Sendable, Equatable {
    public enum Kind: String, Sendable, Codable {
        case totp
    }

    public var id: RecordID
    public var tenantId: TenantID
    public var userId: ObjectID
    public var kind: Kind
    public var sealedSecret: Data
    public var createdAt: Date
    /// The last TOTP step accepted: a code of this step or an earlier one is a replay.
    public var lastUsedStep: Int64?
    public var lastUsedAt: Date?

    public init(
        id: RecordID, tenantId: TenantID, userId: ObjectID, kind: Kind, sealedSecret: Data, createdAt: Date, lastUsedStep: Int64? = nil,
        lastUsedAt: Date? = nil
    ) {
        self.id = id
        self.tenantId = tenantId
        self.userId = userId
        self.kind = kind
        self.sealedSecret = sealedSecret
        self.createdAt = createdAt
        self.lastUsedStep = lastUsedStep
        self.lastUsedAt = lastUsedAt
    }
}

/// Second factors, shared by every node.
public protocol AuthenticationMethodStore: Sendable {
    /// Stores a method; `false` (nothing stored) when the user already has one of its kind — a second
    /// registration never replaces the first (only an admin's reset does).
    /// `effects` (the registration's events, its audit record) commit with it, and only if it was stored.
    func insertAuthenticationMethod(_ method: AuthenticationMethodRecord, effects: CommittedEffects?) async throws -> Bool
    func authenticationMethods(tenantId: TenantID, userId: ObjectID) async throws -> [AuthenticationMethodRecord]
    /// Deletes one method; `false` when it does not exist. `effects` (what the removal voids, its events and audit record,
    /// PROTOCOL §14.1) commit with it, and only if it was deleted.
    func deleteAuthenticationMethod(tenantId: TenantID, userId: ObjectID, id: RecordID, effects: CommittedEffects?) async throws -> Bool
    /// Records that the code of `step` was accepted, atomically and only when `step` is later than every step
    /// accepted before (`false`: a replay, or a concurrent use of the same code).
    func useAuthenticationMethod(id: RecordID, step: Int64, at: Date) async throws -> Bool
    /// The users of a tenant who have at least one method, TOTP or passkey (for the lock-out guard of policy validation).
    func usersWithAuthenticationMethods(tenantId: TenantID) async throws -> Set<ObjectID>
}

extension AuthenticationMethodStore {
    public func insertAuthenticationMethod(_ method: AuthenticationMethodRecord) async throws -> Bool {
        try await insertAuthenticationMethod(method, effects: nil)
    }

    public func deleteAuthenticationMethod(tenantId: TenantID, userId: ObjectID, id: RecordID) async throws -> Bool {
        try await deleteAuthenticationMethod(tenantId: tenantId, userId: userId, id: id, effects: nil)
    }
}
