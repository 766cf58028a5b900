public import Foundation
public import PortcullisCore

/// A signed-in browser (PROTOCOL §9.3): stored by the hash of its cookie, so every node sees it.
public struct SessionRecord: Sendable, Equatable {
    public var idHash: String
    public var tenantId: TenantID
    public var userId: ObjectID
    /// How the user authenticated (`amr`): `pwd`, later `mfa`.
    public var methods: [String]
    public var authTime: Date
    public var createdAt: Date
    public var lastSeenAt: Date
    /// The absolute end of the session.
    public var expiresAt: Date

    public init(
        idHash: String, tenantId: TenantID, userId: ObjectID, methods: [String], authTime: Date, createdAt: Date, lastSeenAt: Date, expiresAt: Date
    ) {
        self.idHash = idHash
        self.tenantId = tenantId
        self.userId = userId
        self.methods = methods
        self.authTime = authTime
        self.createdAt = createdAt
        self.lastSeenAt = lastSeenAt
        self.expiresAt = expiresAt
    }
}

/// An authorization code (PROTOCOL §9.4): single use, short-lived, stored by hash.
public struct AuthorizationCodeRecord: Sendable, Equatable {
    public var codeHash: String
    public var request: AuthorizationRequest
    public var userId: ObjectID
    public var methods: [String]
    public var authTime: Date
    public var expiresAt: Date
    public var usedAt: Date?
    /// What the first redemption issued, so that a replay can revoke it.
    public var familyId: String?
    public var accessTokenId: String?
    public var accessTokenExpiresAt: Date?
    /// Issued from a session without the user taking part (single sign-on): its redemption is a non-interactive sign-in.
    public var silent: Bool

    public init(
        codeHash: String, request: AuthorizationRequest, userId: ObjectID, methods: [String], authTime: Date, expiresAt: Date,
        usedAt: Date? = nil, familyId: String? = nil, accessTokenId: String? = nil, accessTokenExpiresAt: Date? = nil, silent: Bool = false
    ) {
        self.silent = silent
        self.codeHash = codeHash
        self.request = request
        self.userId = userId
        self.methods = methods
        self.authTime = authTime
        self.expiresAt = expiresAt
        self.usedAt = usedAt
        self.familyId = familyId
        self.accessTokenId = accessTokenId
        self.accessTokenExpiresAt = accessTokenExpiresAt
    }
}

/// A device authorization (PROTOCOL §9.5, RFC 8628).
public struct DeviceCodeRecord: Sendable, Equatable {
    public enum State: String, Sendable, Codable {
        case pending, approved, denied, consumed
    }

    public var deviceCodeHash: String
    /// Normalised: upper case, no dash.
    public var userCode: String
    public var tenantId: TenantID
    public var clientId: AppID
    public var scope: String
    public var claims: ClaimsRequest?
    public var interval: Int
    public var expiresAt: Date
    public var lastPolledAt: Date?
    public var state: State
    public var userId: ObjectID?
    public var methods: [String]
    public var authTime: Date?
    /// Who asked for it (`LockoutPolicy.Subject.address(…).key`: an IPv6 client by its /64), for per-address quotas.
    public var clientAddress: String?

    public init(
        deviceCodeHash: String, userCode: String, tenantId: TenantID, clientId: AppID, scope: String, claims: ClaimsRequest?, interval: Int,
        expiresAt: Date, lastPolledAt: Date? = nil, state: State = .pending, userId: ObjectID? = nil, methods: [String] = [], authTime: Date? = nil,
        clientAddress: String? = nil
    ) {
        self.clientAddress = clientAddress
        self.deviceCodeHash = deviceCodeHash
        self.userCode = userCode
        self.tenantId = tenantId
        self.clientId = clientId
        self.scope = scope
        self.claims = claims
        self.interval = interval
        self.expiresAt = expiresAt
        self.lastPolledAt = lastPolledAt
        self.state = state
        self.userId = userId
        self.methods = methods
        self.authTime = authTime
    }
}

/// What one poll of a device code found (the poll's time is recorded atomically with the read).
public struct DevicePoll: Sendable, Equatable {
    public var record: DeviceCodeRecord
    /// The previous poll was less than `interval` seconds before this one.
    public var tooFast: Bool

    public init(record: DeviceCodeRecord, tooFast: Bool) {
        self.record = record
        self.tooFast = tooFast
    }
}

/// Sessions, authorization codes and device codes: the interactive sign-in's state, shared by every node.
public protocol InteractiveStore: Sendable {
    /// Stores a session; the user's sessions beyond `keepingAtMost` (the least recently seen) are deleted.
    func insertSession(_ session: SessionRecord, keepingAtMost: Int) async throws
    func session(idHash: String) async throws -> SessionRecord?
    func touchSession(idHash: String, at: Date) async throws
    /// Records a stronger authentication on a session (a second factor added: step-up).
    func upgradeSession(idHash: String, methods: [String], authTime: Date, at: Date) async throws
    func deleteSession(idHash: String) async throws
    /// Ends every session of a user (disabled, deleted); returns how many.
    @discardableResult
    func deleteSessions(tenantId: TenantID, userId: ObjectID) async throws -> Int

    func insertAuthorizationCode(_ code: AuthorizationCodeRecord) async throws
    /// The code as stored, without changing it (checked before it is redeemed).
    func authorizationCode(codeHash: String) async throws -> AuthorizationCodeRecord?
    /// Marks the code used at `at`, recording what the redemption issues, in one statement. Returns the
    /// record as it was before (`usedAt` set when it had been redeemed already: a replay), or `nil` when
    /// no such code exists.
    func redeemAuthorizationCode(
        codeHash: String, at: Date, familyId: String?, accessTokenId: String, accessTokenExpiresAt: Date
    ) async throws -> AuthorizationCodeRecord?

    /// Inserts a pending code unless its tenant, its client (in that tenant) or its address already has `limits`
    /// codes pending and unexpired at `now` — counted and inserted as one step on every node. Returns the quota it ran
    /// into, or `nil` when it was inserted.
    func insertDeviceCode(_ code: DeviceCodeRecord, limits: DeviceCodeLimits, now: Date) async throws -> DeviceCodeQuota?
    func deviceCode(userCode: String) async throws -> DeviceCodeRecord?
    /// Records a poll (its time) and returns the code with whether the poll came too early.
    func pollDeviceCode(deviceCodeHash: String, at: Date) async throws -> DevicePoll?
    /// Approves or denies a pending code; `false` when it is not pending (or expired) any more.
    func decideDeviceCode(userCode: String, approve: Bool, userId: ObjectID?, methods: [String], authTime: Date?, now: Date) async throws -> Bool
    /// Moves an approved code to consumed; `false` when another poll consumed it first.
    func consumeDeviceCode(deviceCodeHash: String) async throws -> Bool
    /// How many device codes of a tenant are pending and not expired.
    func pendingDeviceCodes(tenantId: String, now: Date) async throws -> Int

    /// Deletes expired sessions, codes and device codes; returns how many rows.
    @discardableResult
    func purgeInteractive(before: Date) async throws -> Int
}
