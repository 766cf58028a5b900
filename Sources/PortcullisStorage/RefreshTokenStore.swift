public import Foundation
public import PortcullisCore

/// Refresh tokens, stored by hash, in rotation families.
public protocol RefreshTokenStore: Sendable {
    func insert(_ record: RefreshTokenRecord) async throws
    func find(tokenHash: String) async throws -> RefreshTokenRecord?
    /// Marks `oldHash` used and inserts `successor`, atomically. Returns `false` (and writes nothing) when
    /// `oldHash` was already used or its family revoked: the caller then treats it as a replay. When the
    /// store's deadline passes while the rotation is in flight, it throws `unavailable`, and the rotation
    /// must then change nothing (a family binding `successor.dpopThumbprint` added to an unbound family may stay): a late commit is undone, and until that is settled
    /// `isRotationInDoubt(tokenHash:)` is true for `oldHash` on this node.
    func rotate(oldHash: String, usedAt: Date, successor: RefreshTokenRecord) async throws -> Bool
    /// Whether a rotation of this token timed out on this node and is not settled yet (see `rotate`).
    func isRotationInDoubt(tokenHash: String) -> Bool
    /// Whether a token that reads as used may be the victim of a rotation in doubt on *another* node rather
    /// than a replay: the store failed on this node within the last 30 s, and nobody has redeemed the token's
    /// successor. Then the answer is "try again" while the other node settles it, not a family revocation.
    func rotationMayBeInDoubt(_ record: RefreshTokenRecord) async throws -> Bool
    func revokeFamily(familyId: String, at: Date) async throws
    /// Revokes every family of an account at a client (selective wipe). Returns how many were revoked.
    @discardableResult
    func revokeFamilies(tenantId: TenantID, userId: ObjectID, clientId: AppID, at: Date) async throws -> Int
    /// Revokes every family of a user, of every client (the user was disabled or deleted); returns how many.
    @discardableResult
    func revokeAllFamilies(tenantId: TenantID, userId: ObjectID, at: Date) async throws -> Int
    /// Removes tokens expired before `before` (and revoked access tokens and DPoP proofs past their time). Returns how many
    /// refresh tokens.
    @discardableResult
    func purgeExpired(before: Date) async throws -> Int
}

/// Access tokens revoked before they expire (RFC 7009), by `jti`.
public protocol RevokedAccessTokenStore: Sendable {
    func revokeAccessToken(jti: String, expiresAt: Date) async throws
    func isAccessTokenRevoked(jti: String) async throws -> Bool
}

/// The DPoP replay cache (RFC 9449 §11.1), shared by every node: a proof's key (`DPoPProof.replayKey`) is accepted
/// once until it expires (its `iat` window), then forgotten by `purgeExpired`.
public protocol ProofReplayStore: Sendable {
    /// Records the proof's key at `now`; `false` when it was already recorded (a replay). A store whose bound is reached
    /// throws `unavailable` (try again shortly) rather than forget a live key.
    func claimProof(key: String, expiresAt: Date, now: Date) async throws -> Bool
    /// Whether `key` was claimed and is still live at `now` (claims nothing): one client assertion used again, as MSAL
    /// does, is told from another assertion with the same `jti` by this (PROTOCOL §21).
    func isProofClaimed(key: String, now: Date) async throws -> Bool
}
