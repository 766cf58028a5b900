public import Foundation
import Logging
import PortcullisAPI
public import PortcullisCore
import PortcullisStorage
import PortcullisTokens

/// What a token request carries besides its form: where it came from and what the client says it is.
struct TokenRequestInputs: Sendable {
    var tenantSegment: String
    var form: FormBody
    var authorization: String?
    var clientIP: IPAddress?
    var clientOS: String?
    var clientSKU: String?
    /// The `User-Agent`: the platform when neither MSAL's telemetry nor the authorization said one (PROTOCOL §17).
    var userAgent: String? = nil
    var correlationId: String
    /// The `DPoP` header values (PROTOCOL §15): none, or one proof.
    var dpopProofs: [String] = []
    /// What the client says of PKeyAuth (PROTOCOL §18): whether it can answer a challenge, and its answer.
    var pkeyAuth = DeviceAuthentication.Presented(supportHeader: nil, authorization: nil)
}

/// What the compliance service knows about an account's use of a client application.
public protocol AppProtectionStatusProvider: Sendable {
    /// The app-protection fact for (tenant, user, client), restricted to `enrollmentId` when the client named
    /// one (`microsoft_enrollment_id`), and the platform that enrollment recorded.
    func appProtection(
        tenantId: TenantID, userId: ObjectID, clientId: AppID, enrollmentId: String?, now: Date
    ) async throws
        -> (fact: SignInFacts.AppProtection, platform: DevicePlatform?)
}

/// The token endpoint (PROTOCOL §2) as one straight pipeline: gather every fact (tenant, client, subject,
/// scopes, capabilities, platform, location, how the user authenticated and — only when a candidate policy
/// needs it — the compliance state), let Core decide once (`GrantDecision`), then act in this order:
/// consume or rotate the refresh token, sign, record the sign-in with its final outcome, respond (the route
/// counts). Refusals are thrown as `TokenError`; nothing is recorded as a success or signed before the last
/// refusal is known.
struct TokenService: Sendable {
    let configuration: ServerConfiguration
    let endpoints: ServerEndpoints
    let tenants: TenantCache
    let store: any PortcullisStore
    let signers: TenantKeyRings
    let clients: ClientAuthenticator
    let compliance: any AppProtectionStatusProvider
    let recorder: SignInRecorder
    let passwords: PasswordVerifier
    let countries: CountryTableSource
    let risk: RiskEngine
    let dpop: DPoPGate
    let devices: DeviceAuthentication
    let clock: any WallClock
    let logger: Logger

    /// The token endpoint's URL for a tenant path segment, as a DPoP proof's `htu` names it.
    func tokenEndpoint(tenantSegment: String) -> String { "\(endpoints.baseURL)/\(tenantSegment)/oauth2/v2.0/token" }

    func handle(_ inputs: TokenRequestInputs) async throws -> (response: TokenResponse, grantType: GrantType) {
        guard let snapshot = try await tenants.snapshot(tenantSegment: inputs.tenantSegment) else {
            throw TokenError.unknownTenant(inputs.tenantSegment)
        }
        let proof = try await dpop.check(
            inputs.dpopProofs, method: "POST", url: tokenEndpoint(tenantSegment: inputs.tenantSegment), now: clock.now())
        let submitURL = tokenEndpoint(tenantSegment: inputs.tenantSegment)
        // A grant that consumes what it redeems (a code, a device code) is challenged before it consumes it — the answer comes
        // on the same request again, which would otherwise be a replay — when the client can prove a device and the tenant's
        // policies look at devices at all. Other grants are challenged only when the device would change their refusal.
        let consuming = inputs.form["grant_type"] == GrantType.authorizationCode.rawValue || inputs.form["grant_type"] == GrantType.deviceCode.rawValue
        if consuming, inputs.pkeyAuth.supported, inputs.pkeyAuth.answer == nil, snapshot.conditionalAccess.usesDevices {
            throw TokenError.deviceAuthenticationRequired(
                challenge: try devices.challenge(tenant: snapshot.tenant, submitURL: submitURL, now: clock.now()).header)
        }
        var device: Device?
        if let answer = inputs.pkeyAuth.answer { device = try await devices.verify(answer, snapshot: snapshot, submitURL: submitURL, now: clock.now()) }
        let (facts, prepared) = try await gather(inputs, snapshot: snapshot, proof: proof, device: device)
        let result = GrantDecision.decide(facts, policies: snapshot.conditionalAccess, settings: configuration.grant)
        switch result.outcome {
        case .refuse where inputs.pkeyAuth.supported && inputs.pkeyAuth.answer == nil && snapshot.conditionalAccess.deviceMatters(result.decision):
            // The device could change the answer, and the client can prove one: it answers on the same request.
            throw TokenError.deviceAuthenticationRequired(
                challenge: try devices.challenge(tenant: snapshot.tenant, submitURL: submitURL, now: clock.now()).header)
        case .refuse(let refusal):
            var error = refusal.tokenError(baseURL: endpoints.baseURL)
            if facts.grantType == .onBehalfOf {
                error = OnBehalfOf.challenge(
                    error, refusal: refusal.refusal, failedPolicies: result.decision.policies.filter { $0.result == .failure }.map(\.id))
            }
            record(facts, result.decision, errorCode: error.aadsts, correlationId: inputs.correlationId)
            logger.info(
                "conditional access refused the grant",
                metadata: [
                    LogKeys.decision: .string("AADSTS\(error.aadsts)"), LogKeys.clientId: .string(facts.client.appId.rawValue),
                    LogKeys.policyId: .string(result.decision.policies.filter { $0.result == .failure }.map(\.id).joined(separator: ",")),
                ])
            throw error
        case .issue(let plan):
            let response = try await act(plan, facts: facts, decision: result.decision, correlationId: inputs.correlationId, prepared: prepared)
            return (response, facts.grantType)
        }
    }

    // MARK: Gather

    /// The time of the grant, at or after a claims request's `nbf` (PROTOCOL §14.1): a claims challenge's `nbf` names a
    /// revocation that happened on some node, now or a moment ago. A time up to `notBeforeLeeway` ahead (nodes' clocks
    /// differ) is waited for; one further ahead is refused. No token is ever dated ahead of its issue.
    func notBefore(_ requested: Int?) async throws -> Date {
        let now = clock.now()
        guard let requested, TimeInterval(requested) > now.timeIntervalSince1970 else { return now }
        let ahead = TimeInterval(requested) - now.timeIntervalSince1970
        guard ahead <= ClaimsRequest.notBeforeLeeway else {
            throw TokenError.malformedClaims(
                "'access_token.nbf.value' is more than \(Int(ClaimsRequest.notBeforeLeeway)) seconds ahead of the server's clock.")
        }
        try await Task.sleep(for: .milliseconds(Int64((ahead * 1000).rounded(.up))))
        let later = clock.now()
        // A clock that did not move with the wait (a test's) cannot issue at the time asked for: refuse rather than date ahead.
        guard later.timeIntervalSince1970 >= TimeInterval(requested) else {
            throw TokenError.malformedClaims("'access_token.nbf.value' is ahead of the server's clock.")
        }
        return later
    }

    /// Identifiers fixed before the decision (an authorization code records what its redemption issues, so
    /// that a replay can revoke it). A family's ID is made only for a grant that may start one.
    struct Prepared {
        var tokenId = UUID.randomIdentifierText
        var familyId: String?

        init(_ grantType: GrantType) {
            familyId = grantType == .clientCredentials || grantType == .refreshToken ? nil : UUID.randomIdentifierText
        }
    }

    /// `device`: the device this request proved (PKeyAuth), if it did.
    func gather(_ inputs: TokenRequestInputs, snapshot: TenantSnapshot, proof: DPoPProof?, device: Device? = nil) async throws -> (GrantFacts, Prepared) {
        let tenant = snapshot.directory
        let form = inputs.form
        let grantName = try form.required("grant_type")
        guard let grantType = GrantType(rawValue: grantName) else { throw TokenError.unsupportedGrantType(grantName) }
        let client = try await clients.authenticate(form: form, authorization: inputs.authorization, in: tenant)
        if grantType == .onBehalfOf && !client.isConfidential { throw TokenError.onBehalfOfPublicClient }
        guard client.application.allowedGrantTypes.contains(grantType.rawValue) else { throw TokenError.grantNotAllowed(grantName) }
        if client.application.requireDPoP && proof == nil { throw TokenError.dpopRequired }
        // MSAL sends `claims` on every token request; a code or device grant without one keeps what was authorized.
        let capabilities = try form["claims"].map { (text: String) throws(TokenError) in try ClaimsRequest.parse(text) } ?? ClaimsRequest()
        let now = try await notBefore(capabilities.notBefore)

        let prepared = Prepared(grantType)
        var user: User?
        var redeeming: RefreshTokenRecord?
        var authentication = AuthenticationContext.none
        var nonce: String?
        var acrValues: [String] = []
        var authorizedClaims: ClaimsRequest?
        // The platform MSAL named on /authorize, when the token request names none.
        var authorizedPlatform: DevicePlatform?
        var interactive = true
        // The flow the family began with (PROTOCOL §13): a device code's refreshes are device code sign-ins too.
        var transferMethod: TransferMethod?
        // A device proven before this request (PROTOCOL §18): on the page, for a code; by the family's sign-in, for a refresh.
        var provenEarlier: ProvenDevice?
        // Where the user signed in from: this request's address, or — on behalf of — the original sign-in's.
        var address = inputs.clientIP
        // Authentication contexts the original sign-in met (on behalf of): asked for again for the downstream resource.
        var carriedContexts: [String] = []
        let scopeText: String
        switch grantType {
        case .clientCredentials:
            scopeText = try form.required("scope")
        case .password:
            let username = try form.required("username")
            let password = try form.required("password")
            scopeText = try form.required("scope")
            let found = try await passwords.verify(username: username, password: password, in: tenant, clientIP: inputs.clientIP, now: now)
            guard found.accountEnabled else { throw TokenError.userDisabled }
            user = found
            authentication = .password(at: now)
        case .refreshToken:
            let presented = try form.required("refresh_token")
            let presentedHash = CredentialHasher.hashToken(presented)
            // A rotation of this token timed out here and may still commit: until the store has settled it,
            // the answer is "try again", never a replay that would revoke the family (PROTOCOL §2.4).
            if store.isRotationInDoubt(tokenHash: presentedHash) { throw TokenError.temporarilyUnavailable }
            let record = try await store.find(tokenHash: presentedHash)
            switch RefreshTokenDecision.decide(record: record, tenantId: tenant.tenant.id, clientId: client.application.appId, now: now) {
            case .reject(let error):
                throw error
            case .revokeFamilyAndReject(let error):
                // Shortly after a store outage, a "replay" may be a client retrying a rotation that was in doubt on
                // another node: "try again" while that node settles it, rather than revoking the family.
                if let record, try await store.rotationMayBeInDoubt(record) { throw TokenError.temporarilyUnavailable }
                if let record { try await store.revokeFamily(familyId: record.familyId, at: now) }
                logger.warning("refresh token replayed; family revoked", metadata: [LogKeys.clientId: .string(client.application.appId.rawValue)])
                throw error
            case .redeem:
                break
            }
            guard let record, let found = tenant.user(id: record.userId) else { throw TokenError.unknownUser }
            // A family bound to a key is redeemed only with a proof by that key (RFC 9449 §5); nothing is consumed otherwise.
            if let bound = record.dpopThumbprint, bound != proof?.thumbprint { throw TokenError.dpopKeyMismatch }
            guard found.accountEnabled else { throw TokenError.userDisabled }
            user = found
            redeeming = record
            scopeText = form["scope"] ?? record.scope
            authentication = AuthenticationContext(methods: record.methods.isEmpty ? ["pwd"] : record.methods, time: record.authTime)
            transferMethod = record.transferMethod
            provenEarlier = record.device
        case .authorizationCode:
            let code = try await redeemCode(form: form, client: client, tenant: tenant, now: now, prepared: prepared, proof: proof)
            guard let found = tenant.user(id: code.userId), found.accountEnabled else { throw TokenError.userDisabled }
            user = found
            scopeText = code.request.scope
            authentication = AuthenticationContext(methods: code.methods, time: code.authTime)
            nonce = code.request.nonce
            acrValues = code.request.acrValues ?? []
            authorizedClaims = code.request.claims
            authorizedPlatform = code.request.platform
            interactive = !code.silent
            provenEarlier = DeviceAuthentication.proven(code.request.device)
        case .deviceCode:
            let device = try await redeemDeviceCode(form: form, client: client, tenant: tenant, now: now)
            guard let userId = device.userId, let found = tenant.user(id: ObjectID(userId)), found.accountEnabled else { throw TokenError.userDisabled }
            user = found
            scopeText = device.scope
            authentication = AuthenticationContext(methods: device.methods, time: device.authTime)
            authorizedClaims = device.claims
            transferMethod = .deviceCodeFlow
        case .onBehalfOf:
            guard form["requested_token_use"] == OnBehalfOf.requestedTokenUse else { throw TokenError.onBehalfOfTokenUse }
            let original = try await onBehalfOf(try form.required("assertion"), snapshot: snapshot, now: now)
            scopeText = try form.required("scope")
            let found = try OnBehalfOf.user(of: original, caller: client.application, in: tenant)
            // A token voided since (sessions revoked, disabled, a new password…, PROTOCOL §14.1) exchanges for nothing.
            if try await store.isAccessTokenVoid(jti: original.tokenId, tenantId: tenant.tenant.id, userId: found.id, issuedAt: original.issuedAt) {
                throw TokenError.onBehalfOfRevoked
            }
            user = found
            authentication = original.authentication
            interactive = false
            if let ip = original.ipAddress.flatMap(IPAddress.init) { address = ip }
            carriedContexts = original.authenticationContexts
            provenEarlier = original.deviceId.flatMap { snapshot.device(deviceId: DeviceID($0)) }.flatMap(ProvenDevice.init)
        }
        // A B2B collaboration user whose home account is gone or disabled gets no more tokens here (PROTOCOL §17).
        if let user, user.homeAccount != nil, !(try await tenants.homeAccountUsable(user)) { throw TokenError.userDisabled }
        // API permissions (PROTOCOL §11): what this client may ask for, on the user's behalf or as itself.
        let scope = try ResourceAccess.authorize(try ScopeRequest.parse(scopeText, in: tenant), client: client.application, delegated: user != nil, in: tenant)
        var capabilitiesInForce = capabilities
        if form["claims"] == nil, let authorizedClaims { capabilitiesInForce = authorizedClaims }
        // `acr_values` of the authorization request are contexts asked for too (PROTOCOL §13, RFC 9470).
        if !acrValues.isEmpty { capabilitiesInForce = capabilitiesInForce.adding(authenticationContexts: acrValues) }
        if !carriedContexts.isEmpty { capabilitiesInForce = capabilitiesInForce.adding(authenticationContexts: carriedContexts) }
        try snapshot.conditionalAccess.checkRequested(contexts: capabilitiesInForce.authenticationContexts, appOnly: user == nil)
        if grantType == .clientCredentials {
            guard scope.resource != nil, scope.isDefault else { throw TokenError.clientCredentialsNeedDefault }
        }
        let resource = scope.resource ?? client.application
        var input = SignInFacts.Input(
            user: user, client: client.application, resource: resource, authentication: authentication,
            platform: DevicePlatform.detect(sku: inputs.clientSKU, os: inputs.clientOS) ?? authorizedPlatform
                ?? DevicePlatform.detect(userAgent: inputs.userAgent), ipAddress: address,
            capabilities: capabilitiesInForce)
        input.transferMethod = transferMethod
        input.clientAppType = .of(client: client.application, grant: grantType)
        input.proofOfPossession = proof != nil
        // A device proven earlier holds for the code and the family unless this request proves one itself — as the directory
        // has it now (a device disabled or re-keyed since: 50097), its compliance as of now.
        let provenDevice = user == nil ? nil : device.flatMap(ProvenDevice.init) ?? provenEarlier
        input.device = try devices.current(provenDevice, snapshot: snapshot, now: now)
        input.country = countries.country(of: address)
        input.risk = risk.facts(
            userId: user?.id,
            signIn: RiskDetector.SignIn(
                at: now, ipAddress: address, country: input.country, platform: input.platform, clientAppId: client.application.appId),
            snapshot: snapshot)
        var signIn = SignInFacts(input, directory: tenant)
        // Terms of use (PROTOCOL §17): nothing is read for tenants whose policies require none.
        signIn.acceptedAgreements = snapshot.acceptedAgreements(userId: user?.id, now: now)
        // The compliance service is asked only when a candidate policy needs its answer (most grants never pay).
        if let user, snapshot.conditionalAccess.needsAppProtection(signIn) {
            let status = try await compliance.appProtection(
                tenantId: tenant.tenant.id, userId: user.id, clientId: client.application.appId, enrollmentId: form["microsoft_enrollment_id"], now: now)
            signIn.appProtection = status.fact
            if signIn.platform == nil { signIn.platform = status.platform }
        }
        var facts = GrantFacts(
            grantType: grantType, tenant: tenant, client: client.application, clientAuthenticated: client.isConfidential, user: user, scope: scope,
            scopeText: scopeText, capabilities: capabilitiesInForce, signIn: signIn, authentication: authentication, redeeming: redeeming,
            clientInfoRequested: form["client_info"] == "1", nonce: nonce, now: now)
        facts.acrValues = acrValues
        facts.clientCredential = client.credential
        facts.proofThumbprint = proof?.thumbprint
        facts.provenDevice = provenDevice
        facts.interactive = interactive
        return (facts, prepared)
    }

    /// The calling API's incoming access token (on behalf of, PROTOCOL §21): signed by this tenant, its issuer, within its
    /// lifetime; what it says for Core to judge.
    func onBehalfOf(_ token: String, snapshot: TenantSnapshot, now: Date) async throws -> OnBehalfOf.Assertion {
        let tenantId = snapshot.directory.tenant.id
        guard
            case .success(let claims) = try await signers.signer(tenantId: tenantId).verifyAccessToken(
                token, issuer: endpoints.issuer(tenantId: tenantId.rawValue), audiences: nil, now: now)
        else { throw TokenError.onBehalfOfInvalidAssertion }
        return OnBehalfOf.Assertion(
            tokenId: claims.jti, audience: claims.aud, delegated: claims.isDelegated, objectId: claims.oid, methods: claims.amr ?? [],
            authTime: claims.authTime.map { Date(timeIntervalSince1970: TimeInterval($0)) },
            issuedAt: Date(epochMilliseconds: claims.issuedAtMilliseconds), deviceId: claims.deviceid, ipAddress: claims.ipaddr,
            authenticationContexts: claims.acrs ?? [])
    }

    /// PROTOCOL §9.4: a code is single use (a second redemption revokes what the first issued), lives 60 s,
    /// and is redeemed only by its client, with its redirect URI and its PKCE verifier. Those are checked on the
    /// stored code first, and the code is consumed only by a redemption that passes them: whoever merely
    /// intercepted a code can neither spoil its owner's redemption nor trigger the replay revocation.
    func redeemCode(
        form: FormBody, client: AuthenticatedClient, tenant: DirectorySnapshot, now: Date, prepared: Prepared, proof: DPoPProof?
    ) async throws -> AuthorizationCodeRecord {
        let code = try form.required("code")
        let redirectUri = try form.required("redirect_uri")
        let hash = CredentialHasher.hashToken(code)
        guard let found = try await store.authorizationCode(codeHash: hash),
            found.request.tenantId == tenant.tenant.id.rawValue, found.request.clientId == client.application.appId.rawValue
        else { throw TokenError.authorizationCodeInvalid }
        guard redirectUri == found.request.redirectUri else { throw TokenError.authorizationCodeRedirectMismatch }
        if let challenge = found.request.codeChallenge {
            guard let verifier = form["code_verifier"] else { throw TokenError.pkceVerifierMissing }
            guard PKCE.matches(verifier: verifier, challenge: challenge) else { throw TokenError.pkceVerifierMismatch }
        }
        // `dpop_jkt` on /authorize (RFC 9449 §10): only the key named there redeems the code.
        if let bound = found.request.dpopJkt, bound != proof?.thumbprint { throw TokenError.dpopKeyMismatch }
        if found.usedAt == nil {
            guard found.expiresAt > now else { throw TokenError.authorizationCodeExpired }
            // Marked used in one step: of two redemptions that both passed the checks, one wins and the other is a replay.
            guard
                let record = try await store.redeemAuthorizationCode(
                    codeHash: hash, at: now, familyId: prepared.familyId, accessTokenId: prepared.tokenId,
                    accessTokenExpiresAt: now.addingTimeInterval(configuration.longestAccessTokenLifetime))
            else { throw TokenError.authorizationCodeInvalid }
            if record.usedAt == nil { return record }
            try await revokeReplayed(record, client: client, now: now)
        }
        try await revokeReplayed(found, client: client, now: now)
    }

    /// RFC 6749 §4.1.2: a code presented again (by its own client, with its verifier) revokes the tokens first issued from it.
    func revokeReplayed(_ record: AuthorizationCodeRecord, client: AuthenticatedClient, now: Date) async throws -> Never {
        if let family = record.familyId { try await store.revokeFamily(familyId: family, at: now) }
        if let jti = record.accessTokenId, let expiry = record.accessTokenExpiresAt { try await store.revokeAccessToken(jti: jti, expiresAt: expiry) }
        logger.warning("authorization code replayed; its tokens were revoked", metadata: [LogKeys.clientId: .string(client.application.appId.rawValue)])
        throw TokenError.authorizationCodeRedeemed
    }

    /// PROTOCOL §9.5 (RFC 8628 §3.5): pending, slow down, expired, denied, then the tokens, once.
    func redeemDeviceCode(form: FormBody, client: AuthenticatedClient, tenant: DirectorySnapshot, now: Date) async throws -> DeviceCodeRecord {
        let code = try form.required("device_code")
        let hash = CredentialHasher.hashToken(code)
        guard let poll = try await store.pollDeviceCode(deviceCodeHash: hash, at: now),
            poll.record.tenantId == tenant.tenant.id, poll.record.clientId == client.application.appId
        else { throw TokenError.deviceCodeInvalid }
        let record = poll.record
        guard record.expiresAt > now else { throw TokenError.deviceCodeExpired }
        switch record.state {
        case .pending: throw poll.tooFast ? TokenError.slowDown : TokenError.authorizationPending
        case .denied: throw TokenError.deviceCodeDenied
        case .consumed: throw TokenError.deviceCodeInvalid
        case .approved:
            guard try await store.consumeDeviceCode(deviceCodeHash: hash) else { throw TokenError.deviceCodeInvalid }
            return record
        }
    }

    // MARK: Act

    /// Consumes or rotates the refresh token, signs, records the sign-in with its final outcome.
    func act(_ plan: MintPlan, facts: GrantFacts, decision: Decision, correlationId: String, prepared: Prepared) async throws -> TokenResponse {
        var refreshToken: String?
        switch plan.refreshToken {
        case .none:
            break
        case .startFamily(let scope, let expiresAt, let thumbprint):
            let token = CredentialHasher.randomToken()
            try await store.insert(
                RefreshTokenRecord(
                    tokenHash: CredentialHasher.hashToken(token), familyId: prepared.familyId ?? UUID.randomIdentifierText,
                    tenantId: TenantID(plan.accessToken.tenantId),
                    userId: ObjectID(plan.accessToken.subject), clientId: AppID(plan.accessToken.clientId), scope: scope, issuedAt: facts.now.wholeSeconds,
                    expiresAt: expiresAt, methods: facts.authentication.methods, authTime: facts.authentication.time, dpopThumbprint: thumbprint,
                    transferMethod: facts.signIn.transferMethod, device: facts.provenDevice))
            refreshToken = token
        case .rotate(let redeeming, let scope, let expiresAt, let thumbprint):
            let token = CredentialHasher.randomToken()
            let successor = RefreshTokenRecord(
                tokenHash: CredentialHasher.hashToken(token), familyId: redeeming.familyId, tenantId: redeeming.tenantId,
                userId: redeeming.userId, clientId: redeeming.clientId, scope: scope, issuedAt: facts.now.wholeSeconds, expiresAt: expiresAt,
                dpopThumbprint: redeeming.dpopThumbprint ?? thumbprint)
            guard try await store.rotate(oldHash: redeeming.tokenHash, usedAt: facts.now, successor: successor) else {
                // Someone redeemed it between our read and our write: a replay. Nothing was signed.
                try await store.revokeFamily(familyId: redeeming.familyId, at: facts.now)
                record(facts, decision, errorCode: TokenError.refreshTokenReused.aadsts, correlationId: correlationId)
                throw TokenError.refreshTokenReused
            }
            refreshToken = token
        }
        let issuer = endpoints.issuer(tenantId: plan.accessToken.tenantId)
        let signer = try await signers.signer(tenantId: TenantID(plan.accessToken.tenantId))
        let home = plan.accessToken.homeTenantId.map(endpoints.issuer(tenantId:))
        let claims = AccessTokenClaims(plan.accessToken, issuer: issuer, tokenId: prepared.tokenId, identityProvider: home)
        var response = TokenResponse(
            tokenType: plan.accessToken.confirmation == nil ? TokenResponse.bearer : TokenResponse.dpop, scope: plan.grantedScope, expiresIn: plan.expiresIn,
            extExpiresIn: plan.expiresIn, accessToken: try await signer.sign(accessToken: claims))
        if let id = plan.idToken { response.idToken = try await signer.sign(idToken: IDTokenClaims(id, issuer: issuer, identityProvider: home)) }
        if let info = plan.clientInfo { response.clientInfo = ClientInfo(uid: info.uid, utid: info.utid).encoded }
        response.refreshToken = refreshToken
        record(facts, decision, errorCode: nil, correlationId: correlationId)
        return response
    }

    func record(_ facts: GrantFacts, _ decision: Decision, errorCode: Int?, correlationId: String) {
        recorder.record(GrantDecision.signInRecord(facts, decision: decision, errorCode: errorCode, id: RequestID.next(), correlationId: correlationId))
    }
}
