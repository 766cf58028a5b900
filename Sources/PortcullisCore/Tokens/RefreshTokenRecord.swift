public import Foundation

/// A stored refresh token. The token itself is never stored, only its hash.
public struct RefreshTokenRecord: Sendable, Equatable {
    public var tokenHash: String
    public var familyId: String
    public var tenantId: TenantID
    public var userId: ObjectID
    public var clientId: AppID
    /// The OIDC scopes of the original sign-in (`openid profile offline_access`), space-separated.
    public var scope: String
    public var issuedAt: Date
    public var expiresAt: Date
    /// When the token was exchanged for a new one; a used token presented again is a replay.
    public var usedAt: Date?
    /// When the whole family was revoked (replay, wipe, revocation).
    public var familyRevokedAt: Date?
    /// How the user authenticated when the family began (`amr`, `auth_time`): later silent grants know it.
    public var methods: [String]
    public var authTime: Date?
    /// The family's DPoP key (`jkt`), when it was issued to a public client with a proof: redeeming any of its tokens
    /// needs a proof with that key (PROTOCOL §15).
    public var dpopThumbprint: String?
    /// How the family began, when it began with an authentication flow conditional access tracks (a device code): every
    /// refresh of the family is that flow's sign-in too (PROTOCOL §13, Entra's protocol tracking).
    public var transferMethod: TransferMethod?
    /// The device the family's sign-in proved (PROTOCOL §18): a refresh that proves none itself is from that device, as
    /// the directory has it then.
    public var device: ProvenDevice?

    public init(
        tokenHash: String, familyId: String, tenantId: TenantID, userId: ObjectID, clientId: AppID, scope: String,
        issuedAt: Date, expiresAt: Date, usedAt: Date? = nil, familyRevokedAt: Date? = nil, methods: [String] = [], authTime: Date? = nil,
        dpopThumbprint: String? = nil, transferMethod: TransferMethod? = nil, device: ProvenDevice? = nil
    ) {
        self.device = device
        self.transferMethod = transferMethod
        self.dpopThumbprint = dpopThumbprint
        self.methods = methods
        self.authTime = authTime
        self.tokenHash = tokenHash
        self.familyId = familyId
        self.tenantId = tenantId
        self.userId = userId
        self.clientId = clientId
        self.scope = scope
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.usedAt = usedAt
        self.familyRevokedAt = familyRevokedAt
    }
}

/// What to do with a presented refresh token. A pure decision; the server executes it.
public enum RefreshTokenDecision: Sendable, Equatable {
    /// Valid: exchange it (mark it used, issue a successor in the same family).
    case redeem
    /// Refuse without side effects.
    case reject(TokenError)
    /// A replay of a used token: revoke the whole family, then refuse.
    case revokeFamilyAndReject(TokenError)

    public static func decide(record: RefreshTokenRecord?, tenantId: TenantID, clientId: AppID, now: Date) -> RefreshTokenDecision {
        guard let record, record.tenantId == tenantId else { return .reject(.refreshTokenInvalid) }
        guard record.clientId == clientId else { return .reject(.refreshTokenWrongClient) }
        if record.familyRevokedAt != nil { return .reject(.refreshTokenRevoked) }
        if record.usedAt != nil { return .revokeFamilyAndReject(.refreshTokenReused) }
        if record.expiresAt <= now { return .reject(.refreshTokenExpired) }
        return .redeem
    }
}
