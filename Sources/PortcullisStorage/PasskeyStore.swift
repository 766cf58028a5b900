public import Foundation
public import PortcullisCore

/// A user's passkey (PROTOCOL §12.1): what registration verified, and what each sign-in updates.
public struct PasskeyRecord: Sendable, Equatable {
    /// The method ID the admin API and the security info page name (a lower-case UUID).
    public var id: RecordID
    public var tenantId: TenantID
    public var userId: ObjectID
    /// The credential ID, unique across the installation.
    public var credentialId: Data
    /// The COSE public key exactly as the authenticator encoded it.
    public var publicKey: Data
    /// The COSE algorithm (−7, −8, −257).
    public var algorithm: Int
    public var signCount: Int64
    /// The authenticator model's AAGUID.
    public var aaguid: UUID
    public var backupEligible: Bool
    public var backedUp: Bool
    public var attestation: AttestationType
    /// The authenticator model a strength may rely on: the AAGUID only when the attestation verified to a trusted root.
    public var attestedModel: UUID? { attestation == .attested ? aaguid : nil }
    public var transports: [String]
    public var displayName: String
    public var createdAt: Date
    public var lastUsedAt: Date?
    /// When a sign count stopped moving forward (a cloned authenticator): refused until an admin clears it.
    public var suspectSince: Date?

    public init(
        id: RecordID, tenantId: TenantID, userId: ObjectID, credentialId: Data, publicKey: Data, algorithm: Int, signCount: Int64, aaguid: UUID,
        backupEligible: Bool, backedUp: Bool, attestation: AttestationType, transports: [String], displayName: String, createdAt: Date, lastUsedAt: Date? = nil,
        suspectSince: Date? = nil
    ) {
        self.id = id
        self.tenantId = tenantId
        self.userId = userId
        self.credentialId = credentialId
        self.publicKey = publicKey
        self.algorithm = algorithm
        self.signCount = signCount
        self.aaguid = aaguid
        self.backupEligible = backupEligible
        self.backedUp = backedUp
        self.attestation = attestation
        self.transports = transports
        self.displayName = displayName
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
        self.suspectSince = suspectSince
    }
}

/// What recording a sign-in's counter did.
public enum PasskeyUse: Sendable, Equatable {
    /// The counter moved forward (or the authenticator never counts): recorded with the time and backup state.
    case recorded
    /// The counter did not move forward, or the passkey is already suspect: refused, and the passkey marked suspect.
    case refused
    /// No such passkey (deleted meanwhile).
    case unknown
}

/// Passkeys, shared by every node.
public protocol PasskeyStore: Sendable {
    /// Stores a passkey; `false` (nothing stored) when its credential ID is registered already — to anyone — or the
    /// user has `limit` passkeys already.
    /// `effects` (the registration's events, its audit record) commit with it, and only if it was stored.
    func insertPasskey(_ passkey: PasskeyRecord, limit: Int, effects: CommittedEffects?) async throws -> Bool
    func passkeys(tenantId: TenantID, userId: ObjectID) async throws -> [PasskeyRecord]
    /// The passkey with this credential ID, in whichever tenant (discoverable sign-in: the caller checks the tenant).
    func passkey(credentialId: Data) async throws -> PasskeyRecord?
    /// Records a verified assertion's counter in one statement: recorded only when the passkey is not suspect and the
    /// counter moved forward (or both counters are zero); otherwise the passkey is marked suspect (PROTOCOL §12.1).
    func usePasskey(id: RecordID, signCount: Int64, backedUp: Bool, at: Date) async throws -> PasskeyUse
    func renamePasskey(tenantId: TenantID, userId: ObjectID, id: RecordID, displayName: String) async throws -> Bool
    /// An admin's decision that a suspect passkey may sign in again.
    func clearPasskeySuspicion(tenantId: TenantID, userId: ObjectID, id: RecordID) async throws -> Bool
    /// Deletes one passkey; `effects` (what the removal voids, its events and audit record) commit with it, and only if
    /// it was deleted.
    func deletePasskey(tenantId: TenantID, userId: ObjectID, id: RecordID, effects: CommittedEffects?) async throws -> Bool
    /// The IDs of the tenant's users with at least one passkey (the lock-out guard of passkey-only strengths).
    func usersWithPasskeys(tenantId: TenantID) async throws -> Set<ObjectID>
}

extension PasskeyStore {
    public func insertPasskey(_ passkey: PasskeyRecord, limit: Int) async throws -> Bool {
        try await insertPasskey(passkey, limit: limit, effects: nil)
    }

    public func deletePasskey(tenantId: TenantID, userId: ObjectID, id: RecordID) async throws -> Bool {
        try await deletePasskey(tenantId: tenantId, userId: userId, id: id, effects: nil)
    }
}
