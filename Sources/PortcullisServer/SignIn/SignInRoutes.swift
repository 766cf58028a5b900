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

/// Interactive sign-in (PROTOCOL §9): the authorization endpoint and its sign-in page, the session (SSO)
/// and sign-out, and the device code flow's endpoint and pages. Codes and device codes are redeemed at the
/// token endpoint (`TokenService`).
struct SignInRoutes: Sendable {
    let configuration: ServerConfiguration
    let endpoints: ServerEndpoints
    let tenants: TenantCache
    let store: any PortcullisStore
    let signers: TenantKeyRings
    let clients: ClientAuthenticator
    let passwords: PasswordVerifier
    let sealer: PageSealer
    let factorBox: FactorSecretBox
    let pages: Pages
    let clock: any WallClock
    let logger: Logger

    static let sessionCookie = "portcullis_session"
    static let csrfCookie = "portcullis_csrf"

    func register(on router: Router<PortcullisRequestContext>) {
        router.get("/:tenant/oauth2/v2.0/authorize") { request, context in try await authorize(request, context, parameters: Self.query(request)) }
        router.post("/:tenant/oauth2/v2.0/authorize") { request, context in
            try await authorize(request, context, parameters: try await Self.formParameters(request, context))
        }
        router.post("/:tenant/oauth2/v2.0/authorize/signin") { request, context in try await signIn(request, context) }
        router.post("/:tenant/oauth2/v2.0/authorize/mfa") { request, context in try await factorSubmitted(request, context) }
        router.get("/:tenant/oauth2/v2.0/logout") { request, context in try await logout(request, context) }
        router.post("/:tenant/oauth2/v2.0/devicecode") { request, context in try await deviceAuthorization(request, context) }
        router.get("/devicelogin") { request, context in try await deviceLoginPage(request, context) }
        router.post("/devicelogin") { request, context in try await deviceCodeEntered(request, context) }
        router.post("/devicelogin/signin") { request, context in try await deviceSignIn(request, context) }
        router.get("/static/portcullis.css") { _, _ in Pages.stylesheet }
    }

    // MARK: Parameters and cookies

    /// Query parameters, decoded as a form (`+` is a space: MSAL for Python encodes scopes so); a repeated
    /// one is reported, not silently resolved.
    static func query(_ request: Request) -> Result<[String: String], TokenError> {
        do {
            return .success(try FormBody(Array((request.uri.query ?? "").utf8)).fields)
        } catch {
            return .failure(error)
        }
    }

    /// One query parameter (for pages that tolerate a malformed query: it is then absent).
    static func queryValue(_ request: Request, _ name: String) -> String? {
        (try? FormBody(Array((request.uri.query ?? "").utf8)))?[name]
    }

    static func formParameters(_ request: Request, _ context: PortcullisRequestContext) async throws -> Result<[String: String], TokenError> {
        do {
            return .success(try await OAuthRoutes.form(request, context).fields)
        } catch let error as TokenError {
            return .failure(error)
        }
    }

    static func cookies(_ request: Request) -> [String: String] {
        var found: [String: String] = [:]
        for header in request.headers[values: .cookie] {
            for pair in header.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2 else { continue }
                let name = parts[0].trimmingCharacters(in: .whitespaces)
                if found[name] == nil { found[name] = parts[1].trimmingCharacters(in: .whitespaces) }
            }
        }
        return found
    }

    var secureCookies: Bool { endpoints.baseURL.hasPrefix("https://") }

    func cookie(_ name: String, _ value: String, path: String, maxAge: Int?, sameSite: String = "Lax") -> String {
        var text = "\(name)=\(value); Path=\(path); HttpOnly; SameSite=\(sameSite)"
        if secureCookies { text += "; Secure" }
        if let maxAge { text += "; Max-Age=\(maxAge)" }
        return text
    }

    /// The CSRF cookie of this browser, made when it has none; and the form token bound to it.
    func csrf(_ request: Request, purpose: String, headers: inout HTTPFields) -> String {
        var value = Self.cookies(request)[Self.csrfCookie] ?? ""
        if value.count < 20 {
            value = CredentialHasher.randomToken(bytes: 16)
            headers.append(HTTPField(name: .setCookie, value: cookie(Self.csrfCookie, value, path: "/", maxAge: nil, sameSite: "Strict")))
        }
        return sealer.csrfToken(cookie: value, purpose: purpose)
    }

    func checkCSRF(_ request: Request, token: String?, purpose: String) -> Bool {
        guard let token, let value = Self.cookies(request)[Self.csrfCookie] else { return false }
        return sealer.checkCSRF(token, cookie: value, purpose: purpose)
    }

    var basePath: String { URL(string: endpoints.baseURL)?.path ?? "" }

    func frame(_ title: String, tenant: TenantSnapshot?, _ context: PortcullisRequestContext) -> Pages.Frame {
        Pages.Frame(title: title, tenantName: tenant?.tenant.displayName, correlationId: context.correlationId, basePath: basePath)
    }

    func errorPage(_ error: TokenError, tenant: TenantSnapshot?, _ context: PortcullisRequestContext, title: String = "Sign-in failed",
                   status: HTTPResponse.Status = .badRequest) -> Response {
        var headers: HTTPFields = [:]
        if error.code == .temporarilyUnavailable { headers[.retryAfter] = String(error.retryAfter ?? 1) }
        return pages.render("message", frame: frame(title, tenant: tenant, context),
                            values: ["alert": ["text": error.message, "code": String(error.aadsts)],
                                     "detail": "Go back to the app and start again. If it keeps happening, give your administrator the correlation ID below."],
                            status: error.code == .temporarilyUnavailable ? .serviceUnavailable : status, headers: headers)
    }

    // MARK: Authorization endpoint

    func authorize(_ request: Request, _ context: PortcullisRequestContext, parameters received: Result<[String: String], TokenError>) async throws -> Response {
        let segment = context.parameters.get("tenant") ?? ""
        guard let tenant = try await tenants.snapshot(tenantSegment: segment) else { return errorPage(.unknownTenant(segment), tenant: nil, context) }
        let parameters: [String: String]
        switch received {
        case .success(let found): parameters = found
        case .failure(let error): return errorPage(error, tenant: tenant, context)
        }
        let authorization: AuthorizationRequest
        switch AuthorizationRequest.parse(parameters, tenant: tenant.directory, consoleRedirectUri: endpoints.baseURL + BuiltInResources.consoleRedirectPath) {
        case .success(let parsed): authorization = parsed
        case .failure(.page(let error)): return errorPage(error, tenant: tenant, context)
        case .failure(.redirect(let error, let uri, let state, let mode)):
            return deliver(uri, mode: mode, fields: errorFields(error, state: state, context), tenant: tenant, context)
        }
        if !authorization.forcesLogin, let session = try await currentSession(request, tenant: tenant) {
            if authorization.prompt == .selectAccount { return accountPage(authorization, user: session.user, tenant: tenant, request: request, context) }
            try await store.touchSession(idHash: session.record.idHash, at: clock.now())
            return try await complete(authorization, user: session.user, methods: session.record.methods, authTime: session.record.authTime,
                                      sessionHash: session.record.idHash, tenant: tenant, request: request, context, headers: [:])
        }
        if authorization.prompt == .silent {
            return deliver(authorization.redirectUri, mode: authorization.responseMode,
                           fields: errorFields(.loginRequired, state: authorization.state, context), tenant: tenant, context)
        }
        return signInPage(authorization, tenant: tenant, error: nil, username: authorization.loginHint, request: request, context)
    }

    /// The signed form of a pending authorization request: it travels through the page in a hidden field.
    struct Ticket: Codable {
        var request: AuthorizationRequest
        var issued: Date
    }

    static let ticketCoder: (JSONEncoder, JSONDecoder) = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return (encoder, decoder)
    }()

    func signInPage(_ authorization: AuthorizationRequest, tenant: TenantSnapshot, error: TokenError?, username: String?, request: Request,
                    _ context: PortcullisRequestContext, status: HTTPResponse.Status = .ok) -> Response {
        var headers: HTTPFields = [:]
        let csrf = csrf(request, purpose: "signin", headers: &headers)
        let ticket = sealTicket(authorization)
        let app = tenant.directory.application(appId: authorization.clientId)?.displayName ?? authorization.clientId
        var values: [String: Any] = [
            "action": "\(basePath)/\(tenant.tenant.id)/oauth2/v2.0/authorize/signin", "ticket": ticket, "csrf": csrf, "appName": app,
            "loginHint": username ?? "", "focusUsername": (username ?? "").isEmpty, "submitLabel": "Sign in",
        ]
        if let error {
            values["error"] = ["message": error.message, "code": String(error.aadsts)]
            if error.code == .temporarilyUnavailable { headers[.retryAfter] = String(error.retryAfter ?? 1) }
        }
        return pages.render("signin", frame: frame("Sign in", tenant: tenant, context), values: values,
                            status: error?.code == .temporarilyUnavailable ? .serviceUnavailable : status, headers: headers)
    }

    /// `prompt=select_account` with a live session: continue as the session's user, or sign in as another.
    func accountPage(_ authorization: AuthorizationRequest, user: User, tenant: TenantSnapshot, request: Request, _ context: PortcullisRequestContext) -> Response {
        var headers: HTTPFields = [:]
        let csrf = csrf(request, purpose: "signin", headers: &headers)
        let values: [String: Any] = [
            "action": "\(basePath)/\(tenant.tenant.id)/oauth2/v2.0/authorize/signin", "ticket": sealTicket(authorization), "csrf": csrf,
            "appName": tenant.directory.application(appId: authorization.clientId)?.displayName ?? authorization.clientId,
            "userName": user.displayName, "upn": user.userPrincipalName,
        ]
        return pages.render("account", frame: frame("Pick an account", tenant: tenant, context), values: values, headers: headers)
    }

    func sealTicket(_ authorization: AuthorizationRequest) -> String {
        sealer.seal((try? Self.ticketCoder.0.encode(Ticket(request: authorization, issued: clock.now()))) ?? Data())
    }

    /// The sign-in form's submission (and the account picker's).
    func signIn(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let segment = context.parameters.get("tenant") ?? ""
        guard let tenant = try await tenants.snapshot(tenantSegment: segment) else { return errorPage(.unknownTenant(segment), tenant: nil, context) }
        let form: FormBody
        do { form = try await OAuthRoutes.form(request, context) } catch let error as TokenError { return errorPage(error, tenant: tenant, context) }
        guard let sealed = form["ticket"], let payload = sealer.open(sealed), let ticket = try? Self.ticketCoder.1.decode(Ticket.self, from: payload),
              ticket.request.tenantId == tenant.tenant.id
        else { return errorPage(TokenError(.invalidRequest, aadsts: 900144, "The sign-in form is not valid. Start the sign-in again from the app."), tenant: tenant, context) }
        let authorization = ticket.request
        guard clock.now().timeIntervalSince(ticket.issued) < configuration.signIn.formLifetime else {
            return errorPage(TokenError(.invalidRequest, aadsts: 50132, "The sign-in form has expired. Start the sign-in again from the app."), tenant: tenant, context)
        }
        guard checkCSRF(request, token: form["csrf"], purpose: "signin") else {
            return errorPage(TokenError(.invalidRequest, aadsts: 90014, "The sign-in form could not be verified (its cookie is missing or stale). Start the sign-in again; cookies must be allowed."),
                             tenant: tenant, context)
        }
        switch form["account"] {
        case "session":
            guard let session = try await currentSession(request, tenant: tenant) else { break }
            try await store.touchSession(idHash: session.record.idHash, at: clock.now())
            return try await complete(authorization, user: session.user, methods: session.record.methods, authTime: session.record.authTime,
                                      sessionHash: session.record.idHash, tenant: tenant, request: request, context, headers: [:])
        case "other":
            return signInPage(authorization, tenant: tenant, error: nil, username: nil, request: request, context)
        default:
            break
        }
        let username = form["username"] ?? ""
        guard !username.isEmpty, let password = form["password"] else {
            return signInPage(authorization, tenant: tenant, error: TokenError(.invalidRequest, aadsts: 900144, "Enter your user name and password."),
                              username: username, request: request, context, status: .badRequest)
        }
        let now = clock.now()
        let user: User
        do {
            user = try await passwords.verify(username: username, password: password, in: tenant.directory, clientIP: clientIP(request, context), now: now)
            guard user.accountEnabled else { throw TokenError.userDisabled }
        } catch let error as TokenError {
            return signInPage(authorization, tenant: tenant, error: error, username: username, request: request, context, status: .badRequest)
        }
        // A session for this browser (SSO): the cookie holds a random token, the store its hash.
        let token = CredentialHasher.randomToken()
        let sessionHash = CredentialHasher.hashToken(token)
        let methods = ["pwd"]
        try await store.insertSession(SessionRecord(
            idHash: sessionHash, tenantId: tenant.tenant.id, userId: user.id, methods: methods, authTime: now, createdAt: now,
            lastSeenAt: now, expiresAt: now.addingTimeInterval(configuration.signIn.sessionLifetime)), keepingAtMost: configuration.signIn.sessionsPerUser)
        var headers: HTTPFields = [:]
        for path in sessionPaths(tenant) {
            headers.append(HTTPField(name: .setCookie, value: cookie(Self.sessionCookie, token, path: path, maxAge: Int(configuration.signIn.sessionLifetime))))
        }
        return try await complete(authorization, user: user, methods: methods, authTime: now, sessionHash: sessionHash, tenant: tenant, request: request,
                                  context, headers: headers)
    }

    /// The session cookie is scoped to the tenant: under its ID and its domain (authorities name either).
    func sessionPaths(_ tenant: TenantSnapshot) -> [String] {
        ["\(basePath)/\(tenant.tenant.id)", "\(basePath)/\(tenant.tenant.domain)"]
    }

    /// The browser's live session for this tenant, if any (expired, idle or disabled ones do not count).
    func currentSession(_ request: Request, tenant: TenantSnapshot) async throws -> (record: SessionRecord, user: User)? {
        guard let token = Self.cookies(request)[Self.sessionCookie], token.count >= 20,
              let record = try await store.session(idHash: CredentialHasher.hashToken(token)), record.tenantId == tenant.tenant.id
        else { return nil }
        let now = clock.now()
        guard record.expiresAt > now, now.timeIntervalSince(record.lastSeenAt) < configuration.signIn.sessionIdleTimeout,
              let user = tenant.directory.user(id: record.userId), user.accountEnabled
        else { return nil }
        return (record, user)
    }

    func clientIP(_ request: Request, _ context: PortcullisRequestContext) -> IPAddress? {
        ClientAddress.resolve(peer: context.clientIP, forwardedFor: request.headers[.xForwardedFor], trustedProxies: configuration.trustedProxies)
    }

    /// Conditional access at sign-in (PROTOCOL §9.1): a `block` stops here with the error page; an unmet `mfa`
    /// asks for the factor (§10; `prompt=none` gets `interaction_required`); every other control is enforced
    /// when the code is redeemed (that is where MSAL looks for 53005). Then the code.
    func complete(_ authorization: AuthorizationRequest, user: User, methods: [String], authTime: Date, sessionHash: String?, tenant: TenantSnapshot,
                  request: Request, _ context: PortcullisRequestContext, headers: HTTPFields) async throws -> Response {
        let directory = tenant.directory
        guard let client = directory.application(appId: authorization.clientId) else { return errorPage(.unknownApplication(authorization.clientId), tenant: tenant, context) }
        let facts = pageFacts(user: user, client: client, scope: authorization.scope, claims: authorization.claims, platform: authorization.platform,
                              methods: methods, tenant: tenant, request: request, context)
        let refusal = tenant.conditionalAccess.evaluate(facts).refusal  // once: the block, then the factor
        if case .block = refusal {
            var response = errorPage(.blockedByConditionalAccess, tenant: tenant, context, title: "Access blocked", status: .forbidden)
            for field in headers { response.headers.append(field) }
            return response
        }
        if factorMissing(facts, refusal: refusal) {
            if authorization.prompt == .silent {
                var response = deliver(authorization.redirectUri, mode: authorization.responseMode,
                                       fields: errorFields(.factorRequiredSilently, state: authorization.state, context), tenant: tenant, context)
                for field in headers { response.headers.append(field) }
                return response
            }
            let ticket = FactorTicket(continuation: .authorize(authorization), tenantId: tenant.tenant.id, userId: user.id, sessionHash: sessionHash,
                                      newSecret: nil, issued: clock.now())
            return try await factorPage(ticket, user: user, tenant: tenant, error: nil, request: request, context, headers: headers)
        }
        let code = CredentialHasher.randomToken()
        let now = clock.now()
        try await store.insertAuthorizationCode(AuthorizationCodeRecord(
            codeHash: CredentialHasher.hashToken(code), request: authorization, userId: user.id, methods: methods, authTime: authTime,
            expiresAt: now.addingTimeInterval(configuration.signIn.codeLifetime)))
        var fields = [("code", code)]
        if let state = authorization.state { fields.append(("state", state)) }
        fields.append(("client_info", ClientInfo(uid: user.id, utid: tenant.tenant.id).encoded))
        var response = deliver(authorization.redirectUri, mode: authorization.responseMode, fields: fields, tenant: tenant, context)
        for field in headers { response.headers.append(field) }
        return response
    }

    /// The conditional-access facts of a sign-in on a page: who, which client and resource, from where, how
    /// authenticated so far. App protection is not known here (it is decided at redemption).
    func pageFacts(user: User, client: PortcullisCore.Application, scope: String, claims: String?, platform: DevicePlatform?, methods: [String], tenant: TenantSnapshot,
                   request: Request, _ context: PortcullisRequestContext) -> SignInFacts {
        let directory = tenant.directory
        let resource = (try? ScopeRequest.parse(scope, in: directory))?.resource ?? client
        return SignInFacts(
            userId: user.id, groupIds: directory.groupIds(ofUser: user.id), clientAppId: client.appId, resourceAppId: resource.appId,
            clientAppType: .mobileAppsAndDesktopClients, platform: platform, ipAddress: clientIP(request, context),
            capabilities: claims.flatMap { try? ClaimsRequest.parse($0) }?.capabilities ?? [], appProtection: .none,
            approvedClientApp: client.approvedClientApp, multiFactorAuthenticated: methods.contains("mfa"))
    }

    func errorFields(_ error: TokenError, state: String?, _ context: PortcullisRequestContext) -> [(String, String)] {
        var fields = [("error", error.code.description), ("error_description", "AADSTS\(error.aadsts): \(error.message)"),
                      ("error_codes", String(error.aadsts)), ("correlation_id", context.correlationId)]
        if let state { fields.append(("state", state)) }
        return fields
    }

    /// Sends the answer to the client's redirect URI the way it asked (PROTOCOL §9.1).
    func deliver(_ redirectUri: String, mode: AuthorizationRequest.ResponseMode, fields: [(String, String)], tenant: TenantSnapshot,
                 _ context: PortcullisRequestContext) -> Response {
        switch mode {
        case .formPost:
            return pages.render("formPost", frame: frame("Continue", tenant: tenant, context),
                                values: ["redirectUri": redirectUri, "fields": fields.map { ["name": $0.0, "value": $0.1] }])
        case .query, .fragment:
            // Our fields are form-encoded (`+` as %2B: the app's decoder may read a literal `+` as a space); a
            // query the registered URI already has is kept as registered.
            var components = URLComponents(string: redirectUri) ?? URLComponents()
            let encoded = FormEncoding.encode(fields)
            if mode == .query {
                components.percentEncodedQuery = [components.percentEncodedQuery, encoded].compactMap { $0?.isEmpty == false ? $0 : nil }.joined(separator: "&")
            } else {
                components.percentEncodedFragment = encoded
            }
            var headers: HTTPFields = [.location: components.string ?? redirectUri]
            Pages.secure(&headers)
            return Response(status: .found, headers: headers)
        }
    }

    // MARK: Sign-out

    func logout(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let segment = context.parameters.get("tenant") ?? ""
        guard let tenant = try await tenants.snapshot(tenantSegment: segment) else { return errorPage(.unknownTenant(segment), tenant: nil, context) }
        if let token = Self.cookies(request)[Self.sessionCookie] { try await store.deleteSession(idHash: CredentialHasher.hashToken(token)) }
        var headers: HTTPFields = [:]
        for path in sessionPaths(tenant) { headers.append(HTTPField(name: .setCookie, value: cookie(Self.sessionCookie, "", path: path, maxAge: 0))) }
        func query(_ name: String) -> String? { Self.queryValue(request, name) }
        // Only to a URI registered for the client named by client_id or by the ID token hint (whose signature is checked).
        var clientId = query("client_id")
        if clientId == nil, let hint = query("id_token_hint") {
            clientId = await (try? signers.signer(tenantId: tenant.tenant.id))?.idTokenAudience(hint, issuer: endpoints.issuer(tenantId: tenant.tenant.id))
        }
        if let target = query("post_logout_redirect_uri"), let clientId, let client = tenant.directory.application(appId: clientId),
           client.redirectUris.contains(target), var components = URLComponents(string: target) {
            if let state = query("state") {
                components.percentEncodedQuery = [components.percentEncodedQuery, FormEncoding.encode([("state", state)])]
                    .compactMap { $0?.isEmpty == false ? $0 : nil }.joined(separator: "&")
            }
            headers[.location] = components.string ?? target
            Pages.secure(&headers)
            return Response(status: .found, headers: headers)
        }
        return pages.render("message", frame: frame("Signed out", tenant: tenant, context),
                            values: ["text": "You have signed out.", "detail": "You can close this window."], headers: headers)
    }

    // MARK: Device code (RFC 8628)

    static let userCodeAlphabet = Array("BCDFGHJKLMNPQRSTVWXZ")

    /// `XXXX-XXXX` without vowels (no words) or look-alikes: 20^8 ≈ 2.6 × 10^10 codes.
    static func newUserCode() -> String {
        String((0..<8).map { _ in userCodeAlphabet.randomElement()! })
    }

    static func normalizeUserCode(_ text: String) -> String {
        String(text.uppercased().filter { $0.isLetter || $0.isNumber }.prefix(16))
    }

    static func displayUserCode(_ code: String) -> String { code.count == 8 ? "\(code.prefix(4))-\(code.suffix(4))" : code }

    func deviceAuthorization(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let segment = context.parameters.get("tenant") ?? ""
        guard let tenant = try await tenants.snapshot(tenantSegment: segment) else { throw TokenError.unknownTenant(segment) }
        let form = try await OAuthRoutes.form(request, context)
        let client = try clients.authenticate(form: form, authorization: request.headers[.authorization], in: tenant.directory)
        guard client.application.allowedGrantTypes.contains(GrantType.deviceCode.rawValue) else { throw TokenError.grantNotAllowed(GrantType.deviceCode.rawValue) }
        let scope = try form.required("scope")
        _ = try ResourceAccess.authorize(try ScopeRequest.parse(scope, in: tenant.directory), client: client.application, delegated: true, in: tenant.directory)
        if let claims = form["claims"] { _ = try ClaimsRequest.parse(claims) }
        let now = clock.now()
        let deviceCode = CredentialHasher.randomToken()
        var userCode = Self.newUserCode()
        for _ in 0..<5 where try await store.deviceCode(userCode: userCode) != nil { userCode = Self.newUserCode() }
        let lifetime = configuration.signIn.deviceCodeLifetime
        // Anyone may ask: the tenant's, the client's and the address's pending codes are bounded, counted with the insert.
        let address = LockoutPolicy.Subject.address(clientIP(request, context)).key
        if let quota = try await store.insertDeviceCode(DeviceCodeRecord(
            deviceCodeHash: CredentialHasher.hashToken(deviceCode), userCode: userCode, tenantId: tenant.tenant.id, clientId: client.application.appId,
            scope: scope, claims: form["claims"], interval: configuration.signIn.deviceCodeInterval, expiresAt: now.addingTimeInterval(lifetime),
            clientAddress: address), limits: configuration.signIn.deviceCodeLimits, now: now) {
            logger.notice("device code refused: quota reached", metadata: ["portcullis.quota": .string(quota.rawValue)])
            throw TokenError.deviceCodeQuota(quota)
        }
        let uri = "\(endpoints.baseURL)/devicelogin"
        let shown = Self.displayUserCode(userCode)
        return JSONResponse.make(status: .ok, DeviceAuthorizationResponse(
            deviceCode: deviceCode, userCode: shown, verificationUri: uri, expiresIn: Int(lifetime), interval: configuration.signIn.deviceCodeInterval,
            message: "To sign in, use a web browser to open the page \(uri) and enter the code \(shown) to authenticate."))
    }

    func deviceLoginPage(_ request: Request, _ context: PortcullisRequestContext, error: TokenError? = nil, userCode: String? = nil,
                         status: HTTPResponse.Status = .ok) -> Response {
        var headers: HTTPFields = [:]
        let csrf = csrf(request, purpose: "device", headers: &headers)
        var values: [String: Any] = ["action": "\(basePath)/devicelogin", "csrf": csrf, "userCode": userCode ?? Self.queryValue(request, "code") ?? ""]
        if let error { values["error"] = ["message": error.message, "code": String(error.aadsts)] }
        return pages.render("deviceCode", frame: frame("Enter code", tenant: nil, context), values: values, status: status, headers: headers)
    }

    struct DeviceTicket: Codable {
        var userCode: String
        var issued: Date
    }

    func deviceCodeEntered(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let form: FormBody
        do { form = try await OAuthRoutes.form(request, context) } catch let error as TokenError { return deviceLoginPage(request, context, error: error, status: .badRequest) }
        guard checkCSRF(request, token: form["csrf"], purpose: "device") else {
            return deviceLoginPage(request, context, error: TokenError(.invalidRequest, aadsts: 90014, "The form could not be verified (its cookie is missing or stale). Try again; cookies must be allowed."),
                                   status: .badRequest)
        }
        let now = clock.now()
        let ip = clientIP(request, context)
        let typed = Self.normalizeUserCode(form["user_code"] ?? "")
        // Guessing user codes is guessing credentials: counted first, per address, on a counter of its own (wrong codes
        // never lock the address out of password sign-in, PROTOCOL §9.6).
        let guess: [LockoutPolicy.Subject] = [.deviceCode(ip)]
        do {
            try await passwords.beginAttempt(guess, now: now, locked: { _ in .deviceCodeGuessesLocked })
        } catch let error as TokenError {
            return deviceLoginPage(request, context, error: error, userCode: typed, status: .badRequest)
        }
        guard let record = try await store.deviceCode(userCode: typed), record.state == .pending, record.expiresAt > now,
              let tenant = try await tenants.snapshot(tenantSegment: record.tenantId)
        else {
            return deviceLoginPage(request, context, error: TokenError(.invalidRequest, aadsts: 70000, "That code is not valid or has expired. Check the code on your device."),
                                   userCode: typed, status: .badRequest)
        }
        try await passwords.attemptSucceeded(guess, now: now)
        return deviceSignInPage(record, tenant: tenant, error: nil, username: nil, request: request, context)
    }

    func deviceSignInPage(_ record: DeviceCodeRecord, tenant: TenantSnapshot, error: TokenError?, username: String?, request: Request,
                          _ context: PortcullisRequestContext, status: HTTPResponse.Status = .ok) -> Response {
        var headers: HTTPFields = [:]
        let csrf = csrf(request, purpose: "device-signin", headers: &headers)
        let ticket = sealer.seal((try? Self.ticketCoder.0.encode(DeviceTicket(userCode: record.userCode, issued: clock.now()))) ?? Data())
        var values: [String: Any] = [
            "action": "\(basePath)/devicelogin/signin", "ticket": ticket, "csrf": csrf,
            "appName": tenant.directory.application(appId: record.clientId)?.displayName ?? record.clientId, "loginHint": username ?? "",
            "focusUsername": (username ?? "").isEmpty, "submitLabel": "Sign in and allow", "canDeny": true,
            "note": "Only continue if you started this sign-in on your own device (code \(Self.displayUserCode(record.userCode))).",
        ]
        if let error { values["error"] = ["message": error.message, "code": String(error.aadsts)] }
        return pages.render("signin", frame: frame("Sign in on another device", tenant: tenant, context), values: values, status: status, headers: headers)
    }

    func deviceSignIn(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let form: FormBody
        do { form = try await OAuthRoutes.form(request, context) } catch let error as TokenError { return deviceLoginPage(request, context, error: error, status: .badRequest) }
        guard let sealed = form["ticket"], let payload = sealer.open(sealed), let ticket = try? Self.ticketCoder.1.decode(DeviceTicket.self, from: payload),
              clock.now().timeIntervalSince(ticket.issued) < configuration.signIn.formLifetime,
              let record = try await store.deviceCode(userCode: ticket.userCode),
              let tenant = try await tenants.snapshot(tenantSegment: record.tenantId)
        else { return deviceLoginPage(request, context, error: TokenError(.invalidRequest, aadsts: 70000, "The sign-in form is not valid or has expired. Enter the code again."), status: .badRequest) }
        guard checkCSRF(request, token: form["csrf"], purpose: "device-signin") else {
            return errorPage(TokenError(.invalidRequest, aadsts: 90014, "The form could not be verified (its cookie is missing or stale). Enter the code again; cookies must be allowed."),
                             tenant: tenant, context)
        }
        let now = clock.now()
        guard record.state == .pending, record.expiresAt > now else {
            return errorPage(TokenError(.expiredToken, aadsts: 70019, "This code has expired or was already used. Start again on your device."), tenant: tenant, context)
        }
        if form["decision"] == "deny" {
            _ = try await store.decideDeviceCode(userCode: record.userCode, approve: false, userId: nil, methods: [], authTime: nil, now: now)
            return pages.render("message", frame: frame("Sign-in declined", tenant: tenant, context),
                                values: ["text": "You declined the sign-in. Nothing was shared with the device.", "detail": "You can close this window."])
        }
        let username = form["username"] ?? ""
        let user: User
        do {
            guard !username.isEmpty, let password = form["password"] else { throw TokenError(.invalidRequest, aadsts: 900144, "Enter your user name and password.") }
            user = try await passwords.verify(username: username, password: password, in: tenant.directory, clientIP: clientIP(request, context), now: now)
            guard user.accountEnabled else { throw TokenError.userDisabled }
        } catch let error as TokenError {
            return deviceSignInPage(record, tenant: tenant, error: error, username: username, request: request, context, status: .badRequest)
        }
        if let client = tenant.directory.application(appId: record.clientId) {
            let facts = pageFacts(user: user, client: client, scope: record.scope, claims: record.claims, platform: nil, methods: ["pwd"], tenant: tenant,
                                  request: request, context)
            if factorMissing(facts, refusal: tenant.conditionalAccess.evaluate(facts).refusal) {
                let ticket = FactorTicket(continuation: .device(userCode: record.userCode), tenantId: tenant.tenant.id, userId: user.id, sessionHash: nil,
                                          newSecret: nil, issued: now)
                return try await factorPage(ticket, user: user, tenant: tenant, error: nil, request: request, context)
            }
        }
        guard try await store.decideDeviceCode(userCode: record.userCode, approve: true, userId: user.id, methods: ["pwd"], authTime: now, now: now) else {
            return errorPage(TokenError(.expiredToken, aadsts: 70019, "This code has expired or was already used. Start again on your device."), tenant: tenant, context)
        }
        return deviceApproved(record, tenant: tenant, context)
    }

    func deviceApproved(_ record: DeviceCodeRecord, tenant: TenantSnapshot, _ context: PortcullisRequestContext) -> Response {
        let app = tenant.directory.application(appId: record.clientId)?.displayName ?? record.clientId
        return pages.render("message", frame: frame("You're signed in", tenant: tenant, context),
                            values: ["text": "You have signed in to \(app) on your device.", "detail": "You can close this window and return to the device."])
    }
}
