import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import PortcullisAPI
import PortcullisCore
import PortcullisStorage
import PortcullisTokens

/// The OAuth 2.0 / OIDC surface: discovery, JWKS, token, revocation, introspection, user realm.
struct OAuthRoutes: Sendable {
    let configuration: ServerConfiguration
    let endpoints: ServerEndpoints
    let tenants: TenantCache
    let store: any PortcullisStore
    let signers: TenantKeyRings
    let tokens: TokenService
    let clients: ClientAuthenticator
    let clock: any WallClock
    let metrics: ServerMetrics

    func register(on router: Router<PortcullisRequestContext>) {
        router.get("/:tenant/v2.0/.well-known/openid-configuration") { _, context in try await discovery(context) }
        router.get("/.well-known/oauth-authorization-server/:tenant") { _, context in try await discovery(context) }
        router.get("/:tenant/discovery/v2.0/keys") { _, context in try await jwks(context) }
        router.post("/:tenant/oauth2/v2.0/token") { request, context in try await token(request, context) }
        router.post("/:tenant/oauth2/v2.0/revoke") { request, context in try await revoke(request, context) }
        router.post("/:tenant/oauth2/v2.0/introspect") { request, context in try await introspect(request, context) }
        router.get("/common/userrealm/:username") { _, context in try await userRealm(context) }
    }

    private func tenant(_ context: PortcullisRequestContext) async throws -> DirectorySnapshot {
        let segment = context.parameters.get("tenant") ?? ""
        guard let snapshot = try await tenants.snapshot(tenantSegment: segment) else { throw TokenError.unknownTenant(segment) }
        return snapshot.directory
    }

    func discovery(_ context: PortcullisRequestContext) async throws -> Response {
        let tenant = try await tenant(context)
        let base = endpoints.baseURL
        let path = "\(base)/\(tenant.tenant.id)"
        var document = DiscoveryDocument(
            issuer: endpoints.issuer(tenantId: tenant.tenant.id.rawValue),
            tokenEndpoint: "\(path)/oauth2/v2.0/token",
            jwksUri: "\(path)/discovery/v2.0/keys",
            revocationEndpoint: "\(path)/oauth2/v2.0/revoke",
            introspectionEndpoint: "\(path)/oauth2/v2.0/introspect",
            authorizationEndpoint: "\(path)/oauth2/v2.0/authorize",
            responseTypesSupported: ["code"],
            subjectTypesSupported: ["public"],
            idTokenSigningAlgValuesSupported: [try await signers.signer(tenantId: tenant.tenant.id).active.algorithm.rawValue],
            tokenEndpointAuthMethodsSupported: ["client_secret_basic", "client_secret_post", "private_key_jwt", "none"],
            grantTypesSupported: GrantType.allCases.map(\.rawValue),
            scopesSupported: OIDCScope.allCases.map(\.rawValue),
            claimsSupported: [
                "iss", "aud", "sub", "oid", "tid", "iat", "nbf", "exp", "preferred_username", "name", "email", "upn", "xms_cc", "nonce", "auth_time", "amr",
            ],
            claimsParameterSupported: true, tenantRegionScope: nil,
            cloudInstanceName: URL(string: base)?.host, complianceEndpoint: "\(base)/mam/v1",
            deviceAuthorizationEndpoint: "\(path)/oauth2/v2.0/devicecode", endSessionEndpoint: "\(path)/oauth2/v2.0/logout",
            codeChallengeMethodsSupported: ["S256"], responseModesSupported: AuthorizationRequest.ResponseMode.allCases.map(\.rawValue))
        document.dpopSigningAlgValuesSupported = DPoPVerifier.algorithms
        return JSONResponse.make(status: .ok, document, headers: [.cacheControl: "public, max-age=300"], noStore: false)
    }

    func jwks(_ context: PortcullisRequestContext) async throws -> Response {
        let tenant = try await tenant(context)
        // The tenant's own ring only: another tenant's tokens never verify against this JWKS (PROTOCOL §11).
        return JSONResponse.make(
            status: .ok, data: try await signers.signer(tenantId: tenant.tenant.id).jwksJSON, headers: [.cacheControl: "public, max-age=300"], noStore: false)
    }

    /// Reads a form body: the right content type, at most the body limit (413 beyond), parsed strictly.
    static func form(_ request: Request, _ context: PortcullisRequestContext) async throws -> FormBody {
        guard let type = request.headers[.contentType],
            type[..<(type.utf8.firstIndex(of: UInt8(ascii: ";")) ?? type.endIndex)].trimmingSpaces()
                .equalsIgnoringCase("application/x-www-form-urlencoded")
        else { throw TokenError.wrongContentType }
        var request = request
        let buffer = try await request.collectBody(upTo: context.maxUploadSize)
        return try FormBody(Array(buffer.readableBytesView))
    }

    func token(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let form = try await Self.form(request, context)
        let pkeyAuth = DeviceAuthentication.Presented(supportHeader: request.headers[.xMsPKeyAuth], authorization: request.headers[.authorization])
        var inputs = TokenRequestInputs(
            tenantSegment: context.parameters.get("tenant") ?? "", form: form,
            // A PKeyAuth answer takes the Authorization field: the client then authenticates in the body.
            authorization: pkeyAuth.answer == nil ? request.headers[.authorization] : nil,
            clientIP: ClientAddress.resolve(
                peer: context.clientIP, forwardedFor: request.headers[.xForwardedFor], trustedProxies: configuration.trustedProxies),
            clientOS: request.headers[.xClientOS], clientSKU: request.headers[.xClientSKU], userAgent: request.headers[.userAgent],
            correlationId: context.correlationId,
            dpopProofs: request.headers[values: .dpop])
        inputs.pkeyAuth = pkeyAuth
        let response = try await issue(inputs, logger: context.logger)
        // RFC 9449 §8.2: a DPoP client gets the nonce for its next proof with every answer.
        var headers: HTTPFields = [:]
        if !inputs.dpopProofs.isEmpty, let nonce = tokens.dpop.nonceHeader(now: clock.now()) { headers[.dpopNonce] = nonce }
        return JSONResponse.make(status: .ok, data: response.jsonBody, headers: headers)
    }

    /// A token request answered and counted (the console redeems its codes through this too); refusals are thrown as
    /// `TokenError`, logged and counted.
    func issue(_ inputs: TokenRequestInputs, logger: Logger) async throws -> TokenResponse {
        let form = inputs.form
        do {
            let (response, grantType) = try await tokens.handle(inputs)
            metrics.tokenIssued(grantType: grantType)
            return response
        } catch let error as TokenError {
            metrics.tokenRefused(grantType: form["grant_type"], error: error)
            logger.info(
                "token refused",
                metadata: [
                    LogKeys.grantType: .string(MetricLabels.grantType(form["grant_type"])),
                    LogKeys.error: .string("AADSTS\(error.aadsts)"),
                    LogKeys.clientId: .clientControlled(form["client_id"] ?? ""),
                ])
            throw error
        }
    }

    func revoke(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let tenant = try await tenant(context)
        let form = try await Self.form(request, context)
        let client = try await clients.authenticate(form: form, authorization: request.headers[.authorization], in: tenant)
        let token = try form.required("token")
        let now = clock.now()
        // RFC 7009 §2.2: the answer is 200 whether or not the token was known, valid or ours to revoke.
        if let record = try await store.find(tokenHash: CredentialHasher.hashToken(token)) {
            if record.clientId == client.application.appId && record.tenantId == tenant.tenant.id {
                try await store.revokeFamily(familyId: record.familyId, at: now)
            }
        } else if case .success(let claims) = try await signers.signer(tenantId: tenant.tenant.id).verifyAccessToken(
            token, issuer: endpoints.issuer(tenantId: tenant.tenant.id.rawValue), audiences: nil, now: now),
            claims.azp == client.application.appId.rawValue
        {
            try await store.revokeAccessToken(jti: claims.jti, expiresAt: Date(timeIntervalSince1970: TimeInterval(claims.exp)))
        }
        return Response(status: .ok, headers: [.cacheControl: "no-store", .pragma: "no-cache"])
    }

    func introspect(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let tenant = try await tenant(context)
        let form = try await Self.form(request, context)
        let client = try await clients.authenticate(form: form, authorization: request.headers[.authorization], in: tenant)
        guard client.isConfidential else {
            throw TokenError(.invalidClient, aadsts: 7000218, "Introspection requires client authentication; public clients cannot introspect.")
        }
        let token = try form.required("token")
        let now = clock.now()
        // Made only when the answer is "inactive".
        var inactive: Response { JSONResponse.make(status: .ok, data: IntrospectionResponse.inactiveBody) }
        let caller = client.application

        if form["token_type_hint"] != "refresh_token", token.utf8.count(where: { $0 == UInt8(ascii: ".") }) == 2 {
            guard
                case .success(let claims) = try await signers.signer(tenantId: tenant.tenant.id).verifyAccessToken(
                    token, issuer: endpoints.issuer(tenantId: tenant.tenant.id.rawValue), audiences: nil, now: now)
            else { return inactive }
            // Only the token's audience (the resource) or the client it was issued to may learn about it.
            guard let resource = tenant.resource(identifier: claims.aud) ?? tenant.application(appId: AppID(claims.aud)) else { return inactive }
            guard resource.appId == caller.appId || claims.azp == caller.appId.rawValue else { return inactive }
            // A user's token issued at or before their "void before" time (disabled, sessions revoked, a new password…,
            // PROTOCOL §14.1) is inactive, as Portcullis's own APIs judge it.
            if try await store.isAccessTokenVoid(
                jti: claims.jti, tenantId: TenantID(tenant.tenant.id), userId: claims.isDelegated ? claims.oid.map { ObjectID($0) } : nil,
                issuedAt: Date(epochMilliseconds: claims.issuedAtMilliseconds))
            {
                return inactive
            }
            return JSONResponse.make(
                status: .ok,
                data: IntrospectionResponse(
                    active: true, scope: claims.scp, clientId: claims.azp, username: claims.upn,
                    tokenType: claims.cnf == nil ? TokenResponse.bearer : TokenResponse.dpop,
                    exp: claims.exp, iat: claims.iat, nbf: claims.nbf, sub: claims.sub, aud: claims.aud, iss: claims.iss,
                    jti: claims.jti, tid: claims.tid, oid: claims.oid, roles: claims.roles, cnf: claims.cnf
                ).jsonBody)
        }
        guard let record = try await store.find(tokenHash: CredentialHasher.hashToken(token)),
            RefreshTokenDecision.decide(record: record, tenantId: tenant.tenant.id, clientId: caller.appId, now: now) == .redeem
        else { return inactive }
        return JSONResponse.make(
            status: .ok,
            data: IntrospectionResponse(
                active: true, scope: record.scope, clientId: record.clientId.rawValue,
                username: tenant.user(id: record.userId)?.userPrincipalName, tokenType: "refresh_token",
                exp: Int(record.expiresAt.timeIntervalSince1970), iat: Int(record.issuedAt.timeIntervalSince1970), nbf: nil,
                sub: record.userId.rawValue, aud: nil, iss: endpoints.issuer(tenantId: tenant.tenant.id.rawValue), jti: nil,
                tid: record.tenantId.rawValue, oid: record.userId.rawValue, roles: nil
            ).jsonBody)
    }

    func userRealm(_ context: PortcullisRequestContext) async throws -> Response {
        let username = context.parameters.get("username") ?? ""
        let domain = username.split(separator: "@").last.map { String($0).lowercased() } ?? ""
        let known = try await tenants.snapshot(tenantSegment: domain).map { $0.tenant.domain == domain } ?? false
        let host = URL(string: endpoints.baseURL)?.host ?? "localhost"
        let body = UserRealm(
            ver: "1.0", accountType: known ? "Managed" : "Unknown", domainName: known ? domain : nil,
            cloudInstanceName: host, cloudAudienceUrn: "urn:federation:MicrosoftOnline")
        return JSONResponse.make(status: .ok, body, noStore: false)
    }
}

/// RFC 7662 introspection response.
struct IntrospectionResponse: Codable, Sendable {
    var active: Bool
    var scope: String?
    var clientId: String?
    var username: String?
    var tokenType: String?
    var exp: Int?
    var iat: Int?
    var nbf: Int?
    var sub: String?
    var aud: String?
    var iss: String?
    var jti: String?
    var tid: String?
    var oid: String?
    var roles: [String]?
    /// RFC 9449 §6.2: the key a DPoP-bound token is bound to.
    var cnf: AccessTokenClaims.Confirmation?

    static let inactive = IntrospectionResponse(active: false)
    static let inactiveBody = inactive.jsonBody

    /// Written directly in `JSONEncoder`'s sorted-key form (introspection's `JSONEncoder` measured 8 % of it).
    var jsonBody: Data {
        var writer = JSONObjectWriter(capacity: 512)
        writer.bool("active", active)
        writer.string("aud", aud)
        writer.string("client_id", clientId)
        if let cnf { writer.object("cnf", strings: [("jkt", cnf.jkt)]) }
        writer.integer("exp", exp)
        writer.integer("iat", iat)
        writer.string("iss", iss)
        writer.string("jti", jti)
        writer.integer("nbf", nbf)
        writer.string("oid", oid)
        writer.strings("roles", roles)
        writer.string("scope", scope)
        writer.string("sub", sub)
        writer.string("tid", tid)
        writer.string("token_type", tokenType)
        writer.string("username", username)
        return writer.finish()
    }

    init(
        active: Bool, scope: String? = nil, clientId: String? = nil, username: String? = nil, tokenType: String? = nil,
        exp: Int? = nil, iat: Int? = nil, nbf: Int? = nil, sub: String? = nil, aud: String? = nil, iss: String? = nil,
        jti: String? = nil, tid: String? = nil, oid: String? = nil, roles: [String]? = nil, cnf: AccessTokenClaims.Confirmation? = nil
    ) {
        self.cnf = cnf
        self.active = active
        self.scope = scope
        self.clientId = clientId
        self.username = username
        self.tokenType = tokenType
        self.exp = exp
        self.iat = iat
        self.nbf = nbf
        self.sub = sub
        self.aud = aud
        self.iss = iss
        self.jti = jti
        self.tid = tid
        self.oid = oid
        self.roles = roles
    }

    enum CodingKeys: String, CodingKey {
        case active, scope, username, exp, iat, nbf, sub, aud, iss, jti, tid, oid, roles, cnf
        case clientId = "client_id"
        case tokenType = "token_type"
    }
}

/// The user-realm discovery answer MSAL's password grant asks for first.
struct UserRealm: Codable, Sendable {
    var ver: String
    var accountType: String
    var domainName: String?
    var cloudInstanceName: String
    var cloudAudienceUrn: String

    enum CodingKeys: String, CodingKey {
        case ver
        case accountType = "account_type"
        case domainName = "domain_name"
        case cloudInstanceName = "cloud_instance_name"
        case cloudAudienceUrn = "cloud_audience_urn"
    }
}

extension PortcullisRequestContext {
    /// The socket peer's IP address.
    var clientIP: IPAddress? {
        remoteAddress.flatMap(IPAddress.init)
    }
}

extension IPAddress {
    /// A socket's address as its bits (not written as text to be parsed back, as `SocketAddress.ipAddress` would have it).
    init?(_ address: SocketAddress) {
        switch address {
        case .v4(let v4):
            self.init(ipv4: UInt32(bigEndian: v4.address.sin_addr.s_addr))
        case .v6(let v6):
            var bits = v6.address.sin6_addr
            let (high, low) = withUnsafeBytes(of: &bits) { bytes in
                (bytes.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }, bytes.suffix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
            }
            self.init(ipv6: high, low)
        default:
            return nil
        }
    }
}

/// The client's address for conditional access: the socket peer, unless the peer is a trusted proxy, in
/// which case the right-most `X-Forwarded-For` entry that is not itself a trusted proxy.
enum ClientAddress {
    static func resolve(peer: IPAddress?, forwardedFor: String?, trustedProxies: [IPRange]) -> IPAddress? {
        guard let peer, trustedProxies.contains(where: { $0.contains(peer) }), let forwardedFor else { return peer }
        let hops = forwardedFor.split(separator: ",").map { String($0.trimmingSpaces()) }
        for hop in hops.reversed() {
            guard let address = IPAddress(hop) else { return peer }
            if !trustedProxies.contains(where: { $0.contains(address) }) { return address }
        }
        return peer
    }
}
