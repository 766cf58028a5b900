public import Foundation

/// How the user authenticated for this grant (`amr`, `auth_time`): remembered by a refresh-token family so
/// that later silent grants know it too. `methods` is the recorded list: the `amr` values and what a strength needs
/// besides (see `AuthenticationStrength.swift`); tokens carry `amr`.
public struct AuthenticationContext: Sendable, Equatable {
    public var methods: [String]
    public var time: Date?

    public init(methods: [String], time: Date?) {
        self.methods = methods
        self.time = time
    }

    public static let none = AuthenticationContext(methods: [], time: nil)
    public static func password(at time: Date) -> AuthenticationContext { AuthenticationContext(methods: ["pwd"], time: time) }

    public var includesSecondFactor: Bool { methods.contains("mfa") }
}

/// Everything one grant's decision depends on, gathered before deciding (STYLE §2): who, which client and
/// resource, what the client declared, where from, how the user authenticated, and — when the compiled
/// policies said it matters — what the compliance service knows. What-if describes the same facts instead
/// of gathering them.
public struct GrantFacts: Sendable {
    public var grantType: GrantType
    public var tenant: DirectorySnapshot
    public var client: Application
    /// The client authenticated (a secret, `azpacr` 1; a certificate, 2), not as a public client.
    public var clientAuthenticated: Bool { clientCredential != .none }
    /// How it authenticated (PROTOCOL §21).
    public var clientCredential: ClientCredentialType
    public var user: User?
    public var scope: ScopeRequest
    /// The `scope` text to remember with a refresh token.
    public var scopeText: String
    public var capabilities: ClaimsRequest
    /// The conditional-access facts (the compliance fact included, when gathered).
    public var signIn: SignInFacts
    public var authentication: AuthenticationContext
    /// The refresh token being redeemed (refresh_token grant).
    public var redeeming: RefreshTokenRecord?
    public var clientInfoRequested: Bool
    /// The authorization request's `nonce` (authorization_code grant), for the ID token.
    public var nonce: String?
    /// The authorization request's `acr_values` (authorization_code grant), for the ID token's `acr`.
    public var acrValues: [String] = []
    /// The thumbprint of the request's valid DPoP proof key: the tokens are bound to it (PROTOCOL §15).
    public var proofThumbprint: String?
    /// The device the sign-in proved (PROTOCOL §18), now or before (on the page, by the family's sign-in): a new refresh
    /// family keeps it.
    public var provenDevice: ProvenDevice?
    /// Whether the user took part in this sign-in (the sign-in log's `isInteractive`): a password grant, a device code,
    /// a code from the sign-in page — not a refresh, a client's own token, or a code issued silently from a session.
    public var interactive = true
    public var now: Date

    public init(
        grantType: GrantType, tenant: DirectorySnapshot, client: Application, clientAuthenticated: Bool, user: User?,
        scope: ScopeRequest, scopeText: String, capabilities: ClaimsRequest, signIn: SignInFacts,
        authentication: AuthenticationContext, redeeming: RefreshTokenRecord? = nil, clientInfoRequested: Bool, nonce: String? = nil, now: Date
    ) {
        self.nonce = nonce
        self.grantType = grantType
        self.tenant = tenant
        self.client = client
        self.clientCredential = clientAuthenticated ? .clientSecret : .none
        self.user = user
        self.scope = scope
        self.scopeText = scopeText
        self.capabilities = capabilities
        self.signIn = signIn
        self.authentication = authentication
        self.redeeming = redeeming
        self.clientInfoRequested = clientInfoRequested
        self.now = now
    }
}

/// The settings a decision reads (from the server's configuration).
public struct GrantSettings: Sendable, Equatable {
    /// What `aud` names: the resource's application ID (a GUID, as Entra v2.0 tokens do; the default) or the
    /// identifier URI the scope used.
    public enum AudienceFormat: String, Sendable, CaseIterable {
        case applicationId, identifierUri
    }

    public var accessTokenLifetime: TimeInterval
    public var idTokenLifetime: TimeInterval
    public var refreshTokenLifetime: TimeInterval
    public var audience: AudienceFormat
    /// The lifetime of a CAE-capable client's (`cp1`) access tokens for a resource that enforces CAE (PROTOCOL §14.1).
    public var continuousAccessTokenLifetime: TimeInterval

    public init(
        accessTokenLifetime: TimeInterval = 3600, idTokenLifetime: TimeInterval = 3600, refreshTokenLifetime: TimeInterval = 90 * 24 * 3600,
        audience: AudienceFormat = .applicationId, continuousAccessTokenLifetime: TimeInterval = 24 * 3600
    ) {
        self.continuousAccessTokenLifetime = continuousAccessTokenLifetime
        self.accessTokenLifetime = accessTokenLifetime
        self.idTokenLifetime = idTokenLifetime
        self.refreshTokenLifetime = refreshTokenLifetime
        self.audience = audience
    }
}

/// What to mint for an accepted grant: every claim value and lifetime, and what to do with refresh tokens.
/// The shell adds only what it alone knows (issuer URL, `jti`, the token strings) and signs.
public struct MintPlan: Sendable, Equatable {
    public struct AccessToken: Sendable, Equatable {
        public var audience: String
        public var subject: String
        public var objectId: String?
        public var tenantId: String
        public var clientId: String
        public var clientAuthenticated: Bool
        /// How the client authenticated (`azpacr`: 1 a secret, 2 a certificate or a federated credential).
        public var clientCredential: ClientCredentialType = .clientSecret
        public var issuedAt: Int
        /// `xms_iat_ms`: the issue time in milliseconds, so that a resource tells a token issued after a revocation from
        /// one issued before it within the same second (PROTOCOL §14.1).
        public var issuedAtMilliseconds: Int64 = 0
        public var expiresAt: Int
        public var scopes: [String]
        public var roles: [String]
        public var userPrincipalName: String?
        public var name: String?
        public var capabilities: [String]
        public var delegated: Bool
        public var enrollmentId: String?
        /// `amr` and `auth_time` (delegated tokens whose authentication is known).
        public var methods: [String]
        public var authTime: Int?
        /// `acrs`: the authentication contexts met (PROTOCOL §13).
        public var authenticationContexts: [String] = []
        /// `cnf.jkt`: the DPoP key the token is bound to (PROTOCOL §15).
        public var confirmation: String?
        /// `xms_app_res`: a session control asked the resource to restrict itself (PROTOCOL §17).
        public var applicationEnforcedRestrictions = false
        /// `xms_sle` and `ipaddr`: strict location enforcement (PROTOCOL §17).
        public var strictLocation: [StrictLocation]?
        public var ipAddress: String?
        /// A B2B collaboration user's home tenant (its issuer is the token's `idp`) and `acct` (PROTOCOL §17).
        public var homeTenantId: String?
        public var account: Int?
        /// `deviceid`: the device proven at sign-in (PROTOCOL §18).
        public var deviceId: String?
    }

    /// One entry of `xms_sle`: CIDR ranges where the resource must not accept the token unless also in `exclude`.
    public struct StrictLocation: Sendable, Equatable {
        public var include: [String]
        public var exclude: [String]

        public init(include: [String], exclude: [String]) {
            self.include = include
            self.exclude = exclude
        }
    }

    /// At most this many ranges in a token's `xms_sle`; past it, the token is held to the address it was issued to.
    public static let maximumStrictLocationRanges = 256

    /// `xms_sle` for `constraints`: each policy's ranges, repeats dropped; when they are more than a token should carry,
    /// the one constraint that admits only `address` (every address when it is unknown: none admitted), the strictest
    /// reading of the same policies.
    public static func strictLocation(_ constraints: [Decision.LocationConstraint], address: IPAddress?) -> [StrictLocation] {
        var entries: [StrictLocation] = []
        var total = 0
        for constraint in constraints {
            let entry = StrictLocation(include: unique(constraint.include.map(\.text)), exclude: unique(constraint.exclude.map(\.text)))
            if entries.contains(entry) { continue }
            total += entry.include.count + entry.exclude.count
            entries.append(entry)
        }
        guard total > maximumStrictLocationRanges else { return entries }
        let pinned = address.map { [$0.isIPv4 ? "\($0)/32" : "\($0)/128"] } ?? []
        return [StrictLocation(include: ["::/0"], exclude: pinned)]
    }

    private static func unique(_ ranges: [String]) -> [String] {
        var seen = Set<String>()
        return ranges.filter { seen.insert($0).inserted }
    }

    public struct IDToken: Sendable, Equatable {
        public var audience: String
        public var subject: String
        public var tenantId: String
        public var issuedAt: Int
        public var expiresAt: Int
        public var preferredUsername: String
        public var name: String?
        public var email: String?
        public var nonce: String?
        public var methods: [String]
        public var authTime: Int?
        /// `acr`: the first of the authorization request's `acr_values` that was met (RFC 9470).
        public var acr: String?
        public var homeTenantId: String?
        public var account: Int?
        /// `deviceid`: the device proven at sign-in (PROTOCOL §18).
        public var deviceId: String?
    }

    public enum RefreshToken: Sendable, Equatable {
        case none
        /// A new family (the user signed in), bound to a DPoP key when a public client presented a proof.
        case startFamily(scope: String, expiresAt: Date, dpopThumbprint: String?)
        /// Exchange the presented token for a successor in its family; a public client's family not bound yet is bound
        /// to the key of the proof it presented now (`dpopThumbprint`).
        case rotate(RefreshTokenRecord, scope: String, expiresAt: Date, dpopThumbprint: String?)
    }

    public var accessToken: AccessToken
    public var idToken: IDToken?
    public var refreshToken: RefreshToken
    /// `client_info` (`uid`, `utid`) when the client asked for it.
    public var clientInfo: (uid: String, utid: String)?
    /// The response's `scope`.
    public var grantedScope: String
    public var expiresIn: Int

    public static func == (lhs: MintPlan, rhs: MintPlan) -> Bool {
        lhs.accessToken == rhs.accessToken && lhs.idToken == rhs.idToken && lhs.refreshToken == rhs.refreshToken
            && lhs.clientInfo?.uid == rhs.clientInfo?.uid && lhs.clientInfo?.utid == rhs.clientInfo?.utid
            && lhs.grantedScope == rhs.grantedScope && lhs.expiresIn == rhs.expiresIn
    }
}

/// Why conditional access refused a grant, typed; `tokenError(baseURL:)` is the Microsoft-shaped error
/// (PROTOCOL §2.5).
public struct GrantRefusal: Sendable, Equatable {
    public var refusal: Decision.Refusal
    public var declaresProtApp: Bool
    public var user: User?
    public var tenantId: TenantID

    public init(refusal: Decision.Refusal, declaresProtApp: Bool, user: User?, tenantId: TenantID) {
        self.refusal = refusal
        self.declaresProtApp = declaresProtApp
        self.user = user
        self.tenantId = tenantId
    }

    public func tokenError(baseURL: String) -> TokenError {
        switch refusal {
        case .block: return .blockedByConditionalAccess
        case .mfa, .authenticationStrength: return .mfaRequired
        case .approvedApplication: return .approvedClientAppRequired
        case .tokenProtection: return .tokenProtectionRequired
        case .termsOfUse: return .termsOfUseRequired
        case .passwordChange: return .passwordChangeRequired
        case .riskRemediation: return .riskRemediationRequired
        case .compliantDevice: return .deviceNotCompliant
        case .domainJoinedDevice: return .deviceNotDomainJoined
        case .signInFrequency: return .signInFrequency
        case .compliantApplication(let policyIds):
            guard declaresProtApp, let user else { return .protAppCapabilityRequired }
            return .protectionPolicyRequired(
                RemediationRequirement(
                    objectId: user.id.rawValue, tenantId: tenantId.rawValue, userPrincipalName: user.userPrincipalName, policyIds: policyIds,
                    endpoint: "\(baseURL)/mam/v1/remediations"))
        }
    }
}

/// The one decision of a grant: conditional access, once, over facts gathered beforehand; then either the
/// mint plan or the refusal. Pure: the token endpoint and what-if run exactly this.
public enum GrantDecision {
    public enum Outcome: Sendable, Equatable {
        case issue(MintPlan)
        case refuse(GrantRefusal)
    }

    public struct Result: Sendable, Equatable {
        public var decision: Decision
        public var outcome: Outcome
    }

    public static func decide(_ facts: GrantFacts, policies: CompiledPolicySet, settings: GrantSettings, explain: Bool = false) -> Result {
        var decision = policies.evaluate(facts.signIn, explain: explain)
        // Sign-in frequency (PROTOCOL §13) for every grant that carries a user's authentication — a refresh, a code, a device
        // code: what the policies of the moment ask (contexts first asked for at a code's redemption included) against
        // the older of the primary and the second factor.
        if decision.refusal == nil, facts.user != nil,
            decision.sessionControls.requiresReauthentication(authTime: facts.authentication.reauthenticationTime, now: facts.now)
        {
            decision.refusal = .signInFrequency
            decision.status = .failure
        }
        if let refusal = decision.refusal {
            return Result(
                decision: decision,
                outcome: .refuse(
                    GrantRefusal(
                        refusal: refusal, declaresProtApp: facts.signIn.declaresProtApp, user: facts.user, tenantId: facts.tenant.tenant.id)))
        }
        return Result(decision: decision, outcome: .issue(plan(facts, decision: decision, settings: settings)))
    }

    static func plan(_ facts: GrantFacts, decision: Decision, settings: GrantSettings) -> MintPlan {
        // Issued now, never dated ahead (PROTOCOL §14.1): a claims request's `nbf` is met by the token endpoint waiting until
        // then, not by a future `iat` — a future-dated token would count as issued after revocations that come before it.
        let iat = Int(facts.now.timeIntervalSince1970.rounded(.down))
        let tenant = facts.tenant
        let client = facts.client
        let resource = facts.scope.resource
        let lifetime = accessTokenLifetime(facts, decision: decision, settings: settings)
        let exp = iat + lifetime
        let audience: String
        switch (settings.audience, resource) {
        case (_, nil): audience = client.appId.rawValue
        case (.applicationId, let resource?): audience = resource.appId.rawValue
        case (.identifierUri, let resource?): audience = facts.scope.audience ?? resource.appId.rawValue
        }
        let enrollmentId: String? = if case .compliant(let id) = facts.signIn.appProtection { id } else { nil }
        let authTime = facts.authentication.time.map { Int($0.timeIntervalSince1970.rounded(.down)) }
        var access: MintPlan.AccessToken
        if let user = facts.user {
            var scopes = facts.scope.resourceScopes
            if resource == nil { scopes = OIDCScope.allCases.filter { facts.scope.oidc.contains($0) }.map(\.rawValue) }
            access = MintPlan.AccessToken(
                audience: audience, subject: user.id.rawValue, objectId: user.id.rawValue, tenantId: tenant.tenant.id.rawValue, clientId: client.appId.rawValue,
                clientAuthenticated: facts.clientAuthenticated, issuedAt: iat, expiresAt: exp, scopes: scopes,
                roles: resource.map { tenant.roles(ofPrincipal: PrincipalID(user.id), on: $0) } ?? [], userPrincipalName: user.userPrincipalName,
                name: user.displayName, capabilities: facts.capabilities.capabilities, delegated: true, enrollmentId: enrollmentId,
                methods: facts.authentication.amr, authTime: authTime)
            access.authenticationContexts = decision.acrs(authTime: facts.authentication.time, now: facts.now)
            access.homeTenantId = user.homeAccount?.tenantId.rawValue
            access.account = user.account
            access.deviceId = facts.signIn.device?.deviceId
            access.clientCredential = facts.clientCredential
        } else {
            access = MintPlan.AccessToken(
                audience: audience, subject: client.appId.rawValue, objectId: nil, tenantId: tenant.tenant.id.rawValue, clientId: client.appId.rawValue,
                clientAuthenticated: true, issuedAt: iat, expiresAt: exp, scopes: [],
                roles: resource.map { tenant.roles(ofPrincipal: PrincipalID(client.appId), on: $0) } ?? [], userPrincipalName: nil, name: nil,
                capabilities: facts.capabilities.capabilities, delegated: false, enrollmentId: nil, methods: [], authTime: nil)
            access.clientCredential = facts.clientCredential
        }
        access.confirmation = facts.proofThumbprint
        access.issuedAtMilliseconds = facts.now.epochMilliseconds
        access.applicationEnforcedRestrictions = facts.user != nil && decision.sessionControls.applicationEnforcedRestrictions
        // A user's token says where its sign-in was (`ipaddr`): on-behalf-of judges the downstream resource's conditional
        // access at that address (PROTOCOL §21), strict location enforcement holds the token to it (§17).
        if facts.user != nil { access.ipAddress = facts.signIn.ipAddress?.description }
        if facts.user != nil, decision.sessionControls.strictLocation, !decision.locationConstraints.isEmpty {
            access.strictLocation = MintPlan.strictLocation(decision.locationConstraints, address: facts.signIn.ipAddress)
        }
        var idToken: MintPlan.IDToken?
        var refresh = MintPlan.RefreshToken.none
        // RFC 9449 §5: a public client's refresh tokens are bound to its key; a confidential client's are bound to its
        // authentication already.
        let refreshBinding = facts.clientAuthenticated ? nil : facts.proofThumbprint
        var clientInfo: (String, String)?
        if let user = facts.user {
            let oidc = facts.scope.oidc
            if oidc.contains(.openid) {
                idToken = MintPlan.IDToken(
                    audience: client.appId.rawValue, subject: user.id.rawValue, tenantId: tenant.tenant.id.rawValue, issuedAt: iat,
                    expiresAt: iat + Int(settings.idTokenLifetime),
                    preferredUsername: user.userPrincipalName, name: oidc.contains(.profile) ? user.displayName : nil,
                    email: oidc.contains(.email) ? user.userPrincipalName : nil, nonce: facts.nonce, methods: facts.authentication.amr,
                    authTime: authTime, acr: facts.acrValues.first(where: access.authenticationContexts.contains))
                idToken?.homeTenantId = user.homeAccount?.tenantId.rawValue
                idToken?.account = user.account
                idToken?.deviceId = facts.signIn.device?.deviceId
            }
            let refreshExpiry = Date(timeIntervalSince1970: TimeInterval(iat)).addingTimeInterval(settings.refreshTokenLifetime)
            if let redeeming = facts.redeeming {
                refresh = .rotate(redeeming, scope: facts.scopeText, expiresAt: refreshExpiry, dpopThumbprint: refreshBinding)
            } else if oidc.contains(.offlineAccess) {
                refresh = .startFamily(scope: facts.scopeText, expiresAt: refreshExpiry, dpopThumbprint: refreshBinding)
            }
            if facts.clientInfoRequested {
                let (uid, utid) = user.clientInfo(tenantId: tenant.tenant.id)
                clientInfo = (uid.rawValue, utid.rawValue)
            }
        }
        return MintPlan(
            accessToken: access, idToken: idToken, refreshToken: refresh, clientInfo: clientInfo,
            grantedScope: facts.scope.grantedScopeString, expiresIn: lifetime)
    }

    /// How long the access token lives, in seconds: a CAE-capable client's (`cp1`) token for a resource that enforces
    /// CAE lives `continuousAccessTokenLifetime` (the resource hears of revocations, so it need not expire soon), but
    /// not past what a sign-in frequency control allows since the authentication (and never shorter than the usual
    /// time); every other token the usual time, and so is every token of a sign-in whose policies turned CAE off
    /// (`continuousAccessEvaluation.mode: disabled`, PROTOCOL §17).
    static func accessTokenLifetime(_ facts: GrantFacts, decision: Decision, settings: GrantSettings) -> Int {
        let normal = Int(settings.accessTokenLifetime)
        guard facts.capabilities.declaresCP1, facts.scope.resource?.continuousAccessEvaluation == true,
            !decision.sessionControls.continuousAccessEvaluationDisabled
        else { return normal }
        var lifetime = Int(settings.continuousAccessTokenLifetime)
        if let maximumAge = decision.sessionControls.maximumAuthenticationAge {
            let since = facts.authentication.time.map { facts.now.timeIntervalSince($0) } ?? 0
            lifetime = min(lifetime, Int(maximumAge - since))
        }
        return max(normal, lifetime)
    }

    /// The sign-in log record of a decision, with the grant's final outcome (`errorCode`: the AADSTS code of
    /// the refusal, whether conditional access refused or a later step did).
    public static func signInRecord(
        _ facts: GrantFacts, decision: Decision, errorCode: Int?, id: String, correlationId: String, grantLabel: String? = nil
    ) -> SignInRecord {
        var record = SignInRecord(
            id: id, createdDateTime: facts.now, correlationId: correlationId, tenantId: facts.tenant.tenant.id,
            userId: facts.user?.id, userPrincipalName: facts.user?.userPrincipalName, clientAppId: facts.client.appId,
            resourceAppId: facts.signIn.resourceAppId, resource: facts.scope.audience ?? facts.client.appId.rawValue,
            grantType: grantLabel ?? facts.grantType.rawValue, clientAppType: facts.signIn.clientAppType.rawValue,
            capabilities: facts.signIn.capabilities, ipAddress: facts.signIn.ipAddress?.description,
            platform: facts.signIn.platform?.rawValue, appProtection: facts.signIn.appProtection.label,
            conditionalAccessStatus: decision.status, appliedConditionalAccessPolicies: decision.policies, errorCode: errorCode,
            authenticationMethods: facts.user == nil ? nil : facts.authentication.methods,
            authenticationContexts: facts.signIn.authenticationContexts, met: decision.acrs(authTime: facts.authentication.time, now: facts.now))
        record.countryOrRegion = facts.signIn.country
        record.originalTransferMethod = facts.signIn.transferMethod
        record.deviceDetail = facts.signIn.device.map(SignInRecord.DeviceDetail.init)
        record.record(risk: facts.signIn.risk)
        record.isInteractive = facts.user != nil && facts.interactive && facts.grantType != .refreshToken
        record.clientCredentialType = facts.clientCredential == .none ? nil : facts.clientCredential
        // Kept when it says something (a bound token, or a policy that demanded one): every bearer grant of every tenant
        // would otherwise carry "unbound" into the log, and an absent one replays as unbound anyway.
        if facts.signIn.proofOfPossession || decision.sessionControls.requiresTokenProtection {
            record.tokenProtectionStatusDetails = SignInRecord.TokenProtectionStatus(bound: facts.signIn.proofOfPossession)
        }
        return record
    }
}

extension SignInFacts.AppProtection {
    /// As the sign-in log shows it.
    public var label: String {
        switch self {
        case .compliant: "compliant"
        case .notCompliant: "notCompliant"
        case .none: "none"
        }
    }
}
