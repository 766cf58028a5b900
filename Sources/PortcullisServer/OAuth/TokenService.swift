import Foundation
import Logging
import PortcullisAPI
import PortcullisCore
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
    var correlationId: String
}

/// The token endpoint's logic (PROTOCOL §2): authenticates the client, runs the grant, and mints tokens.
/// Refusals are thrown as `TokenError`; the route turns them into the Microsoft-shaped error body.
struct TokenService: Sendable {
    let configuration: ServerConfiguration
    let tenants: TenantCache
    let store: any PortcullisStore
    let signer: TokenSigner
    let clients: ClientAuthenticator
    let conditionalAccess: ConditionalAccessGate
    let passwords: PasswordVerifier
    let clock: any WallClock
    let metrics: ServerMetrics
    let logger: Logger

    /// The subject and client of a grant, once established.
    struct Grant {
        var grantType: GrantType
        var client: AuthenticatedClient
        var user: User?
        var scope: ScopeRequest
        var scopeString: String
        var capabilities: ClaimsRequest
        /// The refresh token being redeemed (refresh_token grant).
        var redeeming: RefreshTokenRecord?
    }

    func handle(_ inputs: TokenRequestInputs) async throws -> TokenResponse {
        guard let snapshot = try await tenants.snapshot(tenantSegment: inputs.tenantSegment) else {
            throw TokenError.unknownTenant(inputs.tenantSegment)
        }
        let tenant = snapshot.directory
        let form = inputs.form
        let grantName = try form.required("grant_type")
        guard let grantType = GrantType(rawValue: grantName) else { throw TokenError.unsupportedGrantType(grantName) }
        let client = try clients.authenticate(form: form, authorization: inputs.authorization, in: tenant)
        guard client.application.allowedGrantTypes.contains(grantType.rawValue) else { throw TokenError.grantNotAllowed(grantName) }
        let capabilities = try form["claims"].map { (text: String) throws(TokenError) in try ClaimsRequest.parse(text) } ?? ClaimsRequest()
        let now = clock.now()

        let grant: Grant
        switch grantType {
        case .clientCredentials:
            let scopeString = try form.required("scope")
            let scope = try ScopeRequest.parse(scopeString, in: tenant)
            guard scope.resource != nil, scope.isDefault else { throw TokenError.clientCredentialsNeedDefault }
            grant = Grant(grantType: grantType, client: client, user: nil, scope: scope, scopeString: scopeString, capabilities: capabilities)
        case .password:
            let username = try form.required("username")
            let password = try form.required("password")
            let scopeString = try form.required("scope")
            let scope = try ScopeRequest.parse(scopeString, in: tenant)
            let user = try await passwords.verify(username: username, password: password, in: tenant, clientIP: inputs.clientIP, now: now)
            guard user.accountEnabled else { throw TokenError.userDisabled }
            grant = Grant(grantType: grantType, client: client, user: user, scope: scope, scopeString: scopeString, capabilities: capabilities)
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
                logger.warning("refresh token replayed; family revoked", metadata: [LogKeys.clientId: .string(client.application.appId)])
                throw error
            case .redeem:
                break
            }
            guard let record else { throw TokenError.refreshTokenInvalid }
            guard let user = tenant.user(id: record.userId) else { throw TokenError.unknownUser }
            guard user.accountEnabled else { throw TokenError.userDisabled }
            let scopeString = form["scope"] ?? record.scope
            let scope = try ScopeRequest.parse(scopeString, in: tenant)
            grant = Grant(grantType: grantType, client: client, user: user, scope: scope, scopeString: scopeString,
                          capabilities: capabilities, redeeming: record)
        }
        let resource = grant.scope.resource ?? client.application
        let enrollmentId = try await conditionalAccess.check(ConditionalAccessGate.Inputs(
            grantType: grantType, client: client.application, user: grant.user,
            groupIds: grant.user.map { tenant.groupIds(ofUser: $0.id) } ?? [], resource: resource,
            audience: grant.scope.audience ?? client.application.appId, capabilities: capabilities, clientIP: inputs.clientIP,
            platform: DevicePlatform.detect(sku: inputs.clientSKU, os: inputs.clientOS), enrollmentId: form["microsoft_enrollment_id"],
            correlationId: inputs.correlationId
        ), snapshot: snapshot, now: now)
        return try await issue(grant, tenant: tenant, now: now, clientInfoRequested: form["client_info"] == "1", enrollmentId: enrollmentId)
    }

    /// Mints the tokens of an accepted grant and, for refresh, rotates the presented refresh token.
    func issue(_ grant: Grant, tenant: DirectorySnapshot, now: Date, clientInfoRequested: Bool, enrollmentId: String?) async throws -> TokenResponse {
        let issuedAt = now.wholeSeconds
        let iat = Int(issuedAt.timeIntervalSince1970)
        let exp = iat + Int(configuration.accessTokenLifetime)
        let issuer = configuration.issuer(tenantId: tenant.tenant.id)
        let app = grant.client.application
        let resource = grant.scope.resource
        let audience = grant.scope.audience ?? app.appId

        var claims: AccessTokenClaims
        if let user = grant.user {
            let roles = resource.map { tenant.roles(ofPrincipal: user.id, on: $0) } ?? []
            var scp = grant.scope.resourceScopes
            if resource == nil { scp = OIDCScope.allCases.filter { grant.scope.oidc.contains($0) }.map(\.rawValue) }
            claims = AccessTokenClaims(
                iss: issuer, aud: audience, sub: user.id, oid: user.id, tid: tenant.tenant.id, azp: app.appId,
                azpacr: grant.client.usedSecret ? "1" : "0", iat: iat, nbf: iat, exp: exp,
                jti: UUID().uuidString.lowercased(), scp: scp.isEmpty ? nil : scp.joined(separator: " "),
                roles: roles.isEmpty ? nil : roles, upn: user.userPrincipalName, preferredUsername: user.userPrincipalName,
                name: user.displayName, xmsCC: grant.capabilities.capabilities.isEmpty ? nil : grant.capabilities.capabilities,
                idtyp: "user", xmsMamEnrollment: enrollmentId)
        } else {
            let roles = resource.map { tenant.roles(ofPrincipal: app.appId, on: $0) } ?? []
            claims = AccessTokenClaims(
                iss: issuer, aud: audience, sub: app.appId, oid: nil, tid: tenant.tenant.id, azp: app.appId,
                azpacr: "1", iat: iat, nbf: iat, exp: exp, jti: UUID().uuidString.lowercased(), scp: nil,
                roles: roles.isEmpty ? nil : roles, upn: nil, preferredUsername: nil, name: nil,
                xmsCC: grant.capabilities.capabilities.isEmpty ? nil : grant.capabilities.capabilities, idtyp: "app")
        }
        let accessToken = try await signer.sign(accessToken: claims)

        var response = TokenResponse(
            scope: grant.scope.grantedScopeString, expiresIn: Int(configuration.accessTokenLifetime),
            extExpiresIn: Int(configuration.accessTokenLifetime), accessToken: accessToken)

        if let user = grant.user {
            if grant.scope.oidc.contains(.openid) {
                let idClaims = IDTokenClaims(
                    iss: issuer, aud: app.appId, sub: user.id, oid: user.id, tid: tenant.tenant.id, iat: iat, nbf: iat,
                    exp: iat + Int(configuration.idTokenLifetime), preferredUsername: user.userPrincipalName,
                    name: grant.scope.oidc.contains(.profile) ? user.displayName : nil,
                    email: grant.scope.oidc.contains(.email) ? user.userPrincipalName : nil)
                response.idToken = try await signer.sign(idToken: idClaims)
            }
            if clientInfoRequested {
                response.clientInfo = ClientInfo(uid: user.id, utid: tenant.tenant.id).encoded
            }
            if let redeeming = grant.redeeming {
                let token = CredentialHasher.randomToken()
                let successor = RefreshTokenRecord(
                    tokenHash: CredentialHasher.hashToken(token), familyId: redeeming.familyId, tenantId: tenant.tenant.id,
                    userId: user.id, clientId: app.appId, scope: grant.scopeString, issuedAt: issuedAt,
                    expiresAt: issuedAt.addingTimeInterval(configuration.refreshTokenLifetime))
                guard try await store.rotate(oldHash: redeeming.tokenHash, usedAt: now, successor: successor) else {
                    // Someone redeemed it between our read and our write: a replay.
                    try await store.revokeFamily(familyId: redeeming.familyId, at: now)
                    throw TokenError.refreshTokenReused
                }
                response.refreshToken = token
            } else if grant.scope.oidc.contains(.offlineAccess) {
                let token = CredentialHasher.randomToken()
                try await store.insert(RefreshTokenRecord(
                    tokenHash: CredentialHasher.hashToken(token), familyId: UUID().uuidString.lowercased(),
                    tenantId: tenant.tenant.id, userId: user.id, clientId: app.appId, scope: grant.scopeString,
                    issuedAt: issuedAt, expiresAt: issuedAt.addingTimeInterval(configuration.refreshTokenLifetime)))
                response.refreshToken = token
            }
        }
        metrics.tokenIssued(grantType: grant.grantType)
        return response
    }
}
