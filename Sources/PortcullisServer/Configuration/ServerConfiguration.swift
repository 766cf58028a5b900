public import Foundation
public import PortcullisCore
import PortcullisStorage
public import PortcullisTokens

/// What the server needs to know, with development defaults: a plain value (copies share nothing). The CLI fills it from `Config/portcullis.json`,
/// then `PORTCULLIS_…` environment variables, then flags.
public struct ServerConfiguration: Sendable {
    /// The public base URL clients reach the server by (issuer and endpoint URLs are built from it). One
    /// that ends in `:0` (a listener on port 0) is completed by `ServerEndpoints` once the port is bound.
    public var baseURL: String
    public var accessTokenLifetime: TimeInterval
    public var idTokenLifetime: TimeInterval
    public var refreshTokenLifetime: TimeInterval
    /// The largest request body a route accepts (`maximumBodyBytes` in portcullis.json); larger ones are answered 413.
    /// App configuration policies have their own, larger limit (they carry up to 64 KiB of configuration).
    public var maximumBodyBytes: Int
    /// Proxies whose `X-Forwarded-For` is believed (CIDR). Anyone else's is ignored.
    public var trustedProxies: [IPRange]
    /// How long sign-in records are kept.
    public var signInRetention: TimeInterval
    /// Non-interactive successes with the same facts are counted into one record per window this long (issue 32;
    /// `signIns.aggregationWindowSeconds`, 0: one record each).
    public var signInAggregationWindow: TimeInterval = 3600
    /// The sign-in log's size bound: past it the oldest records go (`signIns.maximumMegabytes`; 0: no bound but age).
    public var signInMaximumBytes: Int64 = 4096 * 1_048_576
    /// Callback delivery: back-off, attempts, timeouts.
    public var outbox: OutboxDispatcher.Configuration
    /// How often the sweeper lapses overdue enrollments and trims logs.
    public var sweepInterval: Duration
    /// App instances (enrollments) idle this long are pruned.
    public var idleEnrollmentRetention: TimeInterval
    /// How the tenant cache notices changes (`.everyRequest` when several nodes share the store).
    public var tenantCacheValidation: TenantCache.Validation
    /// Delivered and dead-lettered callbacks are deleted this long after they were written.
    public var outboxRetention: TimeInterval
    /// An account keeps at most this many enrollments of one client application (the oldest idle go first).
    public var maximumEnrollmentsPerAccount: Int
    /// Password guessing: per-account lockout and per-IP limiting (PROTOCOL §9.6).
    public var lockout: LockoutPolicy
    /// On SIGTERM, readiness answers 503 this long before the listener closes (`Drain`).
    public var shutdownDrain: Duration
    /// What access tokens' `aud` names (PROTOCOL §2.3): the resource's application ID by default.
    public var audienceFormat: GrantSettings.AudienceFormat
    /// Interactive sign-in (PROTOCOL §9): sessions, codes, device codes.
    public var signIn: SignInSettings
    /// DPoP proofs must carry a server nonce (PROTOCOL §15; `tokens.dpopNonce`).
    public var dpopNonceRequired = true
    /// Whether Portcullis computes risk detections itself (PROTOCOL §19, `risk.detections`): off, users' risk comes only
    /// from admins' reports and confirmations; the sign-ins' own detections, the learning and the offline ones stop.
    public var riskDetections = true
    /// CAE-capable clients' access tokens for resources that enforce CAE live this long (PROTOCOL §14.1;
    /// `tokens.continuousAccessTokenLifetimeSeconds`).
    public var continuousAccessTokenLifetime: TimeInterval = 24 * 3600
    /// The Shared Signals transmitter (PROTOCOL §14.2).
    public var signals = SignalSettings()
    /// The authenticators of the FIDO metadata BLOB the operator provides (`passkeys.metadataBlob`, PROTOCOL §12.1),
    /// verified when the server starts.
    public var passkeyMetadata = FidoMetadata.empty

    /// The longest an access token issued now can live.
    public var longestAccessTokenLifetime: TimeInterval { max(accessTokenLifetime, continuousAccessTokenLifetime) }

    /// What the grant decision reads.
    public var grant: GrantSettings {
        GrantSettings(
            accessTokenLifetime: accessTokenLifetime, idTokenLifetime: idTokenLifetime, refreshTokenLifetime: refreshTokenLifetime,
            audience: audienceFormat, continuousAccessTokenLifetime: continuousAccessTokenLifetime)
    }

    public init(
        baseURL: String = "http://127.0.0.1:8080",
        accessTokenLifetime: TimeInterval = 3600,
        idTokenLifetime: TimeInterval = 3600,
        refreshTokenLifetime: TimeInterval = 90 * 24 * 3600,
        maximumBodyBytes: Int = 64 * 1024,
        trustedProxies: [IPRange] = [],
        signInRetention: TimeInterval = 30 * 24 * 3600,
        outbox: OutboxDispatcher.Configuration = .init(),
        sweepInterval: Duration = .seconds(30),
        idleEnrollmentRetention: TimeInterval = 90 * 24 * 3600,
        tenantCacheValidation: TenantCache.Validation = .onWrite,
        outboxRetention: TimeInterval = 7 * 24 * 3600,
        maximumEnrollmentsPerAccount: Int = 20,
        lockout: LockoutPolicy = LockoutPolicy(),
        shutdownDrain: Duration = .seconds(1),
        audienceFormat: GrantSettings.AudienceFormat = .applicationId,
        signIn: SignInSettings = SignInSettings()
    ) {
        self.signIn = signIn
        self.audienceFormat = audienceFormat
        self.shutdownDrain = shutdownDrain
        self.outboxRetention = outboxRetention
        self.maximumEnrollmentsPerAccount = maximumEnrollmentsPerAccount
        self.lockout = lockout
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.accessTokenLifetime = accessTokenLifetime
        self.idTokenLifetime = idTokenLifetime
        self.refreshTokenLifetime = refreshTokenLifetime
        self.maximumBodyBytes = maximumBodyBytes
        self.trustedProxies = trustedProxies
        self.signInRetention = signInRetention
        self.outbox = outbox
        self.sweepInterval = sweepInterval
        self.idleEnrollmentRetention = idleEnrollmentRetention
        self.tenantCacheValidation = tenantCacheValidation
    }
}

/// The Shared Signals transmitter's bounds (PROTOCOL §14.2).
public struct SignalSettings: Sendable {
    /// A stream holds at most this many undelivered events (a paused or poll stream, a receiver that is down); past it
    /// the oldest are dropped.
    public var pendingPerStream: Int
    /// The longest a poll request waits for events (RFC 8936 long polling).
    public var longestPoll: Duration
    /// With a store other nodes write too: how often a waiting poll looks for events raised elsewhere.
    public var sharedStorePollInterval: Duration?
    /// A stream is verified at most once per this many seconds (SSF `min_verification_interval`; 429 sooner).
    public var minimumVerificationInterval: TimeInterval
    /// Receiving (PROTOCOL §19): how often polled transmitters are polled (the roots trusted for their https are the
    /// callback destinations').
    public var receiverPollInterval: Duration = .seconds(5)

    public init(
        pendingPerStream: Int = 10_000, longestPoll: Duration = .seconds(30), minimumVerificationInterval: TimeInterval = 10,
        sharedStorePollInterval: Duration? = nil
    ) {
        self.pendingPerStream = pendingPerStream
        self.longestPoll = longestPoll
        self.minimumVerificationInterval = minimumVerificationInterval
        self.sharedStorePollInterval = sharedStorePollInterval
    }
}

/// Interactive sign-in settings (PROTOCOL §9.3–9.5).
public struct SignInSettings: Sendable {
    /// A session ends this long after the sign-in, whatever happens.
    public var sessionLifetime: TimeInterval
    /// A session unused this long ends.
    public var sessionIdleTimeout: TimeInterval
    /// A user keeps at most this many sessions (the least recently used go first).
    public var sessionsPerUser: Int
    /// Authorization codes live this long (at most 60 s by PROTOCOL §9.4).
    public var codeLifetime: TimeInterval
    public var deviceCodeLifetime: TimeInterval
    public var deviceCodeInterval: Int
    /// A tenant has at most this many device codes pending at once (anyone may ask for one).
    public var pendingDeviceCodesPerTenant: Int
    /// One client application of a tenant has at most this many pending, so that one client cannot fill the tenant's.
    public var pendingDeviceCodesPerClient: Int
    /// One client address (an IPv6 client by its /64) has at most this many pending, in all tenants together.
    public var pendingDeviceCodesPerAddress: Int
    /// A sign-in form is good for this long after the authorization request.
    public var formLifetime: TimeInterval

    public init(
        sessionLifetime: TimeInterval = 24 * 3600, sessionIdleTimeout: TimeInterval = 3600, sessionsPerUser: Int = 20,
        codeLifetime: TimeInterval = 60, deviceCodeLifetime: TimeInterval = 900, deviceCodeInterval: Int = 5,
        pendingDeviceCodesPerTenant: Int = 1000, pendingDeviceCodesPerClient: Int = 200, pendingDeviceCodesPerAddress: Int = 20,
        formLifetime: TimeInterval = 1800
    ) {
        self.pendingDeviceCodesPerClient = pendingDeviceCodesPerClient
        self.pendingDeviceCodesPerAddress = pendingDeviceCodesPerAddress
        self.sessionLifetime = sessionLifetime
        self.sessionIdleTimeout = sessionIdleTimeout
        self.sessionsPerUser = sessionsPerUser
        self.codeLifetime = min(codeLifetime, 60)
        self.deviceCodeLifetime = deviceCodeLifetime
        self.deviceCodeInterval = deviceCodeInterval
        self.pendingDeviceCodesPerTenant = pendingDeviceCodesPerTenant
        self.formLifetime = formLifetime
    }
}

extension SignInSettings {
    /// The device-code quotas the store enforces (PROTOCOL §9.5).
    public var deviceCodeLimits: DeviceCodeLimits {
        DeviceCodeLimits(perTenant: pendingDeviceCodesPerTenant, perClient: pendingDeviceCodesPerClient, perAddress: pendingDeviceCodesPerAddress)
    }
}
