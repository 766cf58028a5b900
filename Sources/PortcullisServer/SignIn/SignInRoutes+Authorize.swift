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

/// The authorization endpoint and the sign-in page (PROTOCOL §9.1, §9.2): the request checked, the page, the password, conditional access
/// at sign-in, and the code delivered the way the client asked.
extension SignInRoutes {
    // MARK: Authorization endpoint

    func authorize(_ request: Request, _ context: PortcullisRequestContext, parameters received: Result<[String: String], TokenError>) async throws -> Response
    {
        let segment = context.parameters.get("tenant") ?? ""
        guard let tenant = try await tenants.snapshot(tenantSegment: segment) else { return errorPage(.unknownTenant(segment), tenant: nil, context) }
        let parameters: [String: String]
        switch received {
        case .success(let found): parameters = found
        case .failure(let error): return errorPage(error, tenant: tenant, context)
        }
        var authorization: AuthorizationRequest
        switch AuthorizationRequest.parse(parameters, tenant: tenant.directory, baseURL: endpoints.baseURL) {
        case .success(let parsed): authorization = parsed
        case .failure(.page(let error)): return errorPage(error, tenant: tenant, context)
        case .failure(.redirect(let error, let uri, let state, let mode)):
            return deliver(uri, mode: mode, fields: errorFields(error, state: state, context), tenant: tenant, context)
        }
        // No MSAL telemetry: the browser's User-Agent says the platform, as Entra reads it (PROTOCOL §17).
        if authorization.platform == nil { authorization.platform = DevicePlatform.detect(userAgent: request.headers[.userAgent]) }
        do {
            try tenant.conditionalAccess.resolveContexts(&authorization)
        } catch {
            return deliver(
                authorization.redirectUri, mode: authorization.responseMode, fields: errorFields(error, state: authorization.state, context), tenant: tenant,
                context)
        }
        // PKeyAuth on the page (PROTOCOL §18): a web view that offers it (`x-ms-PKeyAuth: 1.0`, as MSAL's do) is asked for
        // its device first, when the tenant's policies look at devices; the answer comes back to `pkeyAuthAnswered`.
        if request.headers[.xMsPKeyAuth] == PKeyAuth.version, tenant.conditionalAccess.usesDevices {
            let challenge = try devices.challenge(
                tenant: tenant.tenant, submitURL: pkeyAuthSubmitURL(tenant), context: sealTicket(authorization), now: clock.now())
            var headers: HTTPFields = [.location: challenge.redirect]
            Pages.secure(&headers)
            return Response(status: .found, headers: headers)
        }
        return try await proceed(authorization, tenant: tenant, request: request, context)
    }

    /// Where a web view answers the page's PKeyAuth challenge.
    func pkeyAuthSubmitURL(_ tenant: TenantSnapshot) -> String { "\(endpoints.baseURL)/\(tenant.tenant.id)/oauth2/v2.0/authorize/pkeyauth" }

    /// The answer to the page's PKeyAuth challenge (PROTOCOL §18): the web view loads the challenge's `SubmitUrl` with
    /// `Authorization: PKeyAuth AuthToken="…", Context="…", Version="…"` (no `AuthToken`: it has no device certificate).
    /// The Context is the sealed authorization request; the sign-in goes on with the device proven, or as unregistered.
    /// An answer that proves nothing is the 50097 page, naming the check that failed.
    func pkeyAuthAnswered(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let segment = context.parameters.get("tenant") ?? ""
        guard let tenant = try await tenants.snapshot(tenantSegment: segment) else { return errorPage(.unknownTenant(segment), tenant: nil, context) }
        guard let answer = request.headers[.authorization].flatMap(PKeyAuth.parameters), let sealed = answer["Context"] else {
            return errorPage(.deviceAuthenticationFailed("the request carries no PKeyAuth answer"), tenant: tenant, context)
        }
        var authorization: AuthorizationRequest
        switch openTicket(sealed, tenant: tenant) {
        case .success(let found): authorization = found
        case .failure(let error): return errorPage(error, tenant: tenant, context)
        }
        do {
            let device = try await devices.verify(answer, snapshot: tenant, submitURL: pkeyAuthSubmitURL(tenant), now: clock.now())
            authorization.device = device.flatMap(ProvenDevice.init).map { .proven($0) } ?? .unregistered
        } catch let error as TokenError {
            return errorPage(error, tenant: tenant, context, title: "This device could not be verified", status: .forbidden)
        }
        return try await proceed(authorization, tenant: tenant, request: request, context)
    }

    /// The authorization request, checked (and its device asked for, if it was): single sign-on with a live session, or
    /// the sign-in page.
    func proceed(
        _ authorization: AuthorizationRequest, tenant: TenantSnapshot, request: Request, _ context: PortcullisRequestContext
    ) async throws -> Response {
        if !authorization.forcesLogin, let session = try await currentSession(request, tenant: tenant) {
            if authorization.prompt == .selectAccount { return accountPage(authorization, user: session.user, tenant: tenant, request: request, context) }
            try await store.touchSession(idHash: session.record.idHash, at: clock.now())
            // Single sign-on, as Core decides it (a `max_age` or a sign-in frequency the session no longer meets signs in again).
            return try await complete(
                authorization, user: session.user, methods: session.record.methods, authTime: session.record.authTime,
                sessionHash: session.record.idHash, tenant: tenant, request: request, context, silent: true)
        }
        if authorization.prompt == .silent {
            return deliver(
                authorization.redirectUri, mode: authorization.responseMode,
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

    func signInPage(
        _ authorization: AuthorizationRequest, tenant: TenantSnapshot, error: TokenError?, username: String?, request: Request,
        _ context: PortcullisRequestContext, status: HTTPResponse.Status = .ok
    ) -> Response {
        var headers: HTTPFields = [:]
        let key = browserKey(request, headers: &headers)
        let csrf = sealer.csrfToken(cookie: key, purpose: "signin")
        let ticket = sealTicket(authorization)
        let app = tenant.directory.application(appId: AppID(authorization.clientId))?.displayName ?? authorization.clientId
        var values: [String: Any] = [
            "action": "\(basePath)/\(tenant.tenant.id)/oauth2/v2.0/authorize/signin", "ticket": ticket, "csrf": csrf, "appName": app,
            "loginHint": username ?? "", "focusUsername": (username ?? "").isEmpty, "submitLabel": "Sign in", "basePath": basePath,
        ]
        if let passkey = passkeySignInValues(authorization, tenant: tenant, browserKey: key, csrf: csrf, boundTo: nil) {
            values["passkey"] = passkey
        }
        if let error {
            values["error"] = ["message": error.message, "code": String(error.aadsts)]
            if error.code == .temporarilyUnavailable { headers[.retryAfter] = String(error.retryAfter ?? 1) }
        }
        return pages.render(
            "signin", frame: frame("Sign in", tenant: tenant, context), values: values,
            status: error?.code == .temporarilyUnavailable ? .serviceUnavailable : status, headers: headers)
    }

    /// `prompt=select_account` with a live session: continue as the session's user, or sign in as another.
    func accountPage(
        _ authorization: AuthorizationRequest, user: User, tenant: TenantSnapshot, request: Request, _ context: PortcullisRequestContext
    ) -> Response {
        var headers: HTTPFields = [:]
        let csrf = csrf(request, purpose: "signin", headers: &headers)
        let values: [String: Any] = [
            "action": "\(basePath)/\(tenant.tenant.id)/oauth2/v2.0/authorize/signin", "ticket": sealTicket(authorization), "csrf": csrf,
            "appName": tenant.directory.application(appId: AppID(authorization.clientId))?.displayName ?? authorization.clientId,
            "userName": user.displayName, "upn": user.userPrincipalName,
        ]
        return pages.render("account", frame: frame("Pick an account", tenant: tenant, context), values: values, headers: headers)
    }

    func sealTicket(_ authorization: AuthorizationRequest) -> String {
        sealer.seal((try? Self.ticketCoder.0.encode(Ticket(request: authorization, issued: clock.now()))) ?? Data())
    }

    /// A sealed pending authorization request (a form's ticket, a PKeyAuth Context): intact, for this tenant, within the
    /// form's lifetime.
    func openTicket(_ sealed: String?, tenant: TenantSnapshot) -> Result<AuthorizationRequest, TokenError> {
        guard let sealed, let payload = sealer.open(sealed), let ticket = try? Self.ticketCoder.1.decode(Ticket.self, from: payload),
            ticket.request.tenantId == tenant.tenant.id.rawValue
        else {
            return .failure(TokenError(.invalidRequest, aadsts: 900144, "The sign-in form is not valid. Start the sign-in again from the app."))
        }
        guard clock.now().timeIntervalSince(ticket.issued) < configuration.signIn.formLifetime else {
            return .failure(TokenError(.invalidRequest, aadsts: 50132, "The sign-in form has expired. Start the sign-in again from the app."))
        }
        return .success(ticket.request)
    }

    /// The pending authorization request of a posted sign-in form (password or passkey): its ticket intact, for this
    /// tenant, within the form's lifetime, and the form's CSRF token this browser's.
    func openSignInForm(_ form: FormBody, request: Request, tenant: TenantSnapshot) -> Result<AuthorizationRequest, TokenError> {
        let opened = openTicket(form["ticket"], tenant: tenant)
        guard case .success = opened else { return opened }
        guard checkCSRF(request, token: form["csrf"], purpose: "signin") else {
            return .failure(
                TokenError(
                    .invalidRequest, aadsts: 90014,
                    "The sign-in form could not be verified (its cookie is missing or stale). Start the sign-in again; cookies must be allowed."))
        }
        return opened
    }

    /// Runs `body` with a posted sign-in form (password or passkey) opened: its tenant, fields and pending
    /// authorization request; a bad form gets the error page instead.
    func signInPost(
        _ request: Request, _ context: PortcullisRequestContext,
        _ body: (TenantSnapshot, FormBody, AuthorizationRequest) async throws -> Response
    ) async throws -> Response {
        let segment = context.parameters.get("tenant") ?? ""
        guard let tenant = try await tenants.snapshot(tenantSegment: segment) else { return errorPage(.unknownTenant(segment), tenant: nil, context) }
        let form: FormBody
        do { form = try await OAuthRoutes.form(request, context) } catch let error as TokenError { return errorPage(error, tenant: tenant, context) }
        let authorization: AuthorizationRequest
        switch openSignInForm(form, request: request, tenant: tenant) {
        case .success(let found): authorization = found
        case .failure(let error): return errorPage(error, tenant: tenant, context)
        }
        return try await body(tenant, form, authorization)
    }

    /// The sign-in form's submission (and the account picker's).
    func signIn(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        try await signInPost(request, context) { tenant, form, authorization in
            if form["method"] == "passkey" {
                // User-name-first passkey sign-in (the page's script asks for it when a user name was typed): counted against
                // the address like a guess (PROTOCOL §9.6), and answered the same for every user name.
                let username = (form["username"] ?? "").trimmingCharacters(in: .whitespaces)
                if !username.isEmpty {
                    do {
                        try await passwords.beginAttempt([.address(clientIP(request, context))], now: clock.now(), locked: { _ in .addressLocked })
                    } catch let error as TokenError {
                        return signInPage(authorization, tenant: tenant, error: error, username: username, request: request, context, status: .badRequest)
                    }
                    return try await passkeyPage(authorization, tenant: tenant, username: username, error: nil, request: request, context)
                }
            }
            switch form["account"] {
            case "session":
                guard let session = try await currentSession(request, tenant: tenant) else { break }
                try await store.touchSession(idHash: session.record.idHash, at: clock.now())
                return try await complete(
                    authorization, user: session.user, methods: session.record.methods, authTime: session.record.authTime,
                    sessionHash: session.record.idHash, tenant: tenant, request: request, context)
            case "other":
                return signInPage(authorization, tenant: tenant, error: nil, username: nil, request: request, context)
            default:
                break
            }
            let username = form["username"] ?? ""
            // A user of another tenant of this installation: home to sign in there, and back (B2B collaboration, PROTOCOL
            // §17). Decided by the name's domain alone, whoever is invited: the page says no more than the tenants' domains.
            if let home = try await homeTenant(ofUsername: username.trimmingCharacters(in: .whitespaces), at: tenant) {
                return sendHome(authorization, username: username.trimmingCharacters(in: .whitespaces), home: home, tenant: tenant, request: request)
            }
            guard !username.isEmpty, let password = form["password"] else {
                return signInPage(
                    authorization, tenant: tenant, error: TokenError(.invalidRequest, aadsts: 900144, "Enter your user name and password."),
                    username: username, request: request, context, status: .badRequest)
            }
            let signedIn: (user: User, authentication: AuthenticationContext)
            do {
                signedIn = try await firstFactor(username: username, secret: password, tenant: tenant, request: request, context, now: clock.now())
            } catch let error as TokenError {
                return signInPage(authorization, tenant: tenant, error: error, username: username, request: request, context, status: .badRequest)
            }
            return try await startSession(
                authorization, user: signedIn.user, authentication: signedIn.authentication, tenant: tenant, request: request, context)
        }
    }

    /// A new session for this browser (SSO) after a first step that succeeded (password or passkey): the cookie holds a
    /// random token, the store its hash and how the user authenticated. Then the sign-in's one decision (`complete`),
    /// which also says whether the cookie outlives the browser.
    func startSession(
        _ authorization: AuthorizationRequest, user: User, authentication: AuthenticationContext, tenant: TenantSnapshot, request: Request,
        _ context: PortcullisRequestContext
    ) async throws -> Response {
        let now = authentication.time ?? clock.now()
        let token = CredentialHasher.randomToken()
        let sessionHash = CredentialHasher.hashToken(token)
        try await store.insertSession(
            SessionRecord(
                idHash: sessionHash, tenantId: tenant.tenant.id, userId: user.id, methods: authentication.methods, authTime: now,
                createdAt: now,
                lastSeenAt: now, expiresAt: now.addingTimeInterval(configuration.signIn.sessionLifetime)), keepingAtMost: configuration.signIn.sessionsPerUser)
        return try await complete(
            authorization, user: user, methods: authentication.methods, authTime: now, sessionHash: sessionHash, tenant: tenant, request: request,
            context, newSession: token)
    }

    /// The session cookie for a new session: `persistentBrowser: never` (PROTOCOL §13) makes it a browser-session cookie.
    func sessionCookies(_ token: String, decision: Decision, tenant: TenantSnapshot) -> HTTPFields {
        let maxAge = decision.sessionControls.persistentBrowser == .never ? nil : Int(configuration.signIn.sessionLifetime)
        var headers: HTTPFields = [:]
        for path in sessionPaths(tenant) {
            headers.append(HTTPField(name: .setCookie, value: cookie(Self.sessionCookie, token, path: path, maxAge: maxAge)))
        }
        return headers
    }

    func clientIP(_ request: Request, _ context: PortcullisRequestContext) -> IPAddress? {
        ClientAddress.resolve(peer: context.clientIP, forwardedFor: request.headers[.xForwardedFor], trustedProxies: configuration.trustedProxies)
    }

    /// The sign-in's one decision (`InteractiveDecision`, PROTOCOL §9.1, §10, §12, §13), carried out: sign in again (a
    /// sign-in frequency or `max_age`; `prompt=none` gets `login_required`), the block page, the factor (`prompt=none`:
    /// `interaction_required`), a passkey — used, or registered here first —, or the code; every other control is
    /// enforced when the code is redeemed (that is where MSAL looks for 53005). `newSession`: the token of a session this
    /// sign-in started (its cookie goes with whatever page comes next).
    func complete(
        _ authorization: AuthorizationRequest, user: User, methods: [String], authTime: Date, sessionHash: String?, tenant: TenantSnapshot,
        request: Request, _ context: PortcullisRequestContext, newSession: String? = nil, silent: Bool = false
    ) async throws -> Response {
        guard let client = tenant.directory.application(appId: AppID(authorization.clientId)) else {
            return errorPage(.unknownApplication(authorization.clientId), tenant: tenant, context)
        }
        let authentication = AuthenticationContext(methods: methods, time: authTime)
        // The scope was checked when the request arrived; against the directory of the moment it may name a resource gone
        // since: then the client hears so (the redemption re-checks it too).
        let resource: PortcullisCore.Application
        do {
            resource = try ScopeRequest.parse(authorization.scope, in: tenant.directory).resource ?? client
        } catch {
            return deliver(
                authorization.redirectUri, mode: authorization.responseMode, fields: errorFields(error, state: authorization.state, context), tenant: tenant,
                context)
        }
        let device: PageDevice
        do {
            device = try pageDevice(authorization, client: client, tenant: tenant)
        } catch let error as TokenError {
            return errorPage(error, tenant: tenant, context, title: "This device could not be verified", status: .forbidden)
        }
        let facts = try await interactiveFacts(
            .authorize, user: user, client: client, resource: resource, claims: authorization.claims, platform: authorization.platform,
            authentication: authentication, tenant: tenant, request: request, context, silent: authorization.prompt == .silent,
            maximumAge: authorization.maxAge, device: device)
        let result = InteractiveDecision.decide(facts, policies: tenant.conditionalAccess)
        let headers = newSession.map { sessionCookies($0, decision: result.decision, tenant: tenant) } ?? [:]
        func with(_ response: Response) -> Response {
            var response = response
            for field in headers { response.headers.append(field) }
            return response
        }
        func redirectError(_ error: TokenError) -> Response {
            with(
                deliver(
                    authorization.redirectUri, mode: authorization.responseMode, fields: errorFields(error, state: authorization.state, context),
                    tenant: tenant, context))
        }
        switch result.step {
        case .signInAgain:
            return with(signInPage(authorization, tenant: tenant, error: nil, username: user.signInName, request: request, context))
        case .loginRequired:
            return redirectError(.loginRequired)
        case .interactionRequired:
            return redirectError(.factorRequiredSilently)
        case .deviceRefused:
            let refusal = result.decision.refusal ?? .compliantDevice(policyIds: [])
            let error = GrantRefusal(refusal: refusal, declaresProtApp: false, user: user, tenantId: tenant.tenant.id).tokenError(baseURL: endpoints.baseURL)
            recordRefusal(facts, result.decision, user: user, tenant: tenant, error: error, context)
            if authorization.prompt == .silent { return redirectError(error) }
            return with(
                errorPage(
                    error, tenant: tenant, context, title: "This device can't be used here", status: .forbidden,
                    detail: facts.signIn.device == nil
                        ? "This app is open only to devices your organization knows. Sign in from a registered device that meets your organization's requirements, or ask your administrator how to register this one."
                        : "Your organization's requirements for this device are not met yet. Let your organization's device management check the device in again, or ask your administrator, then try again."
                ))
        case .blocked:
            recordRefusal(facts, result.decision, user: user, tenant: tenant, error: .blockedByConditionalAccess, context)
            return with(errorPage(.blockedByConditionalAccess, tenant: tenant, context, title: "Access blocked", status: .forbidden))
        case .enterCode, .registerAuthenticatorApp:
            var ticket = FactorTicket(
                continuation: .authorize(authorization), tenantId: tenant.tenant.id.rawValue, userId: user.id.rawValue, sessionHash: sessionHash,
                newSecret: nil, issued: clock.now(), primaryTime: authTime)
            if result.step == .registerAuthenticatorApp { ticket.newSecret = Base32.encode(TOTP.newSecret()) }
            return with(try await factorPage(ticket, user: user, tenant: tenant, error: nil, request: request, context))
        case .changePassword:
            return with(
                passwordChangePage(authorization, user: user, methods: methods, sessionHash: sessionHash, tenant: tenant, request: request, context))
        case .acceptTerms(let agreementIds):
            return with(
                termsPage(
                    .authorize(authorization), agreementIds: agreementIds.map(\.rawValue), user: user, methods: methods, authTime: authTime,
                    sessionHash: sessionHash,
                    tenant: tenant, request: request, context))
        case .registrationRefused(let refusal):
            return with(
                errorPage(Self.registrationRefused(refusal.message), tenant: tenant, context, title: "You can't add a sign-in method here", status: .forbidden))
        case .registerPasskey(let strengths):
            // Entra's onboarding: the required method registered right here, then on to the app.
            guard let sessionHash else { return with(errorPage(Self.registrationRefused(nil), tenant: tenant, context, status: .forbidden)) }
            return with(
                try await passkeyRegistrationPage(
                    authorization, user: user, sessionHash: sessionHash, strengths: strengths, tenant: tenant, error: nil, request: request, context))
        case .usePasskey(let strengths):
            // A strength only a passkey meets: the page asks for one of the user's passkeys (or says how to get one).
            let notice = strengths.isEmpty ? nil : "\(strengths.joined(separator: ", ")) requires a passkey to sign in to this app."
            return with(
                try await passkeyPage(
                    authorization, tenant: tenant, username: user.userPrincipalName, error: nil, request: request, context, notice: notice, knownUser: true))
        case .issue:
            let code = CredentialHasher.randomToken()
            let now = clock.now()
            try await store.insertAuthorizationCode(
                AuthorizationCodeRecord(
                    codeHash: CredentialHasher.hashToken(code), request: authorization, userId: user.id, methods: methods, authTime: authTime,
                    expiresAt: now.addingTimeInterval(configuration.signIn.codeLifetime), silent: silent))
            var fields = [("code", code)]
            if let state = authorization.state { fields.append(("state", state)) }
            let info = user.clientInfo(tenantId: tenant.tenant.id)
            fields.append(("client_info", ClientInfo(uid: info.uid.rawValue, utid: info.utid.rawValue).encoded))
            return with(deliver(authorization.redirectUri, mode: authorization.responseMode, fields: fields, tenant: tenant, context))
        }
    }

    /// Records a sign-in the page ended (once: one that gets its code is recorded at redemption).
    func recordRefusal(
        _ facts: InteractiveDecision.Facts, _ decision: Decision, user: User, tenant: TenantSnapshot, error: TokenError, _ context: PortcullisRequestContext
    ) {
        recorder.record(
            InteractiveDecision.signInRecord(
                facts, decision: decision, user: user, tenantId: tenant.tenant.id.rawValue, errorCode: error.aadsts, id: RequestID.next(),
                correlationId: context.correlationId))
    }

    /// An interactive sign-in's facts (`InteractiveDecision.Facts`): the conditional-access facts of the page (who, which
    /// client and resource, from where, how authenticated so far — app protection is decided at redemption), what the
    /// user holds, what the request asks. The scope was checked when the request arrived; it is resolved again against
    /// the directory of the moment (the redemption re-checks it too).
    func interactiveFacts(
        _ flow: InteractiveDecision.Flow, user: User, client: PortcullisCore.Application, resource: PortcullisCore.Application, claims: ClaimsRequest?,
        platform: DevicePlatform?, authentication: AuthenticationContext, tenant: TenantSnapshot, request: Request, _ context: PortcullisRequestContext,
        silent: Bool = false, maximumAge: Int? = nil, device: PageDevice = PageDevice()
    ) async throws -> InteractiveDecision.Facts {
        var signIn = pageFacts(
            user: user, client: client, resource: resource, claims: claims, platform: platform, authentication: authentication, tenant: tenant,
            request: request, context)
        signIn.device = device.facts
        if flow == .deviceCode {
            signIn.transferMethod = .deviceCodeFlow
            signIn.clientAppType = .of(client: client, grant: .deviceCode)
        }
        let methods = InteractiveDecision.Methods(
            hasAuthenticatorApp: try await store.authenticationMethods(tenantId: TenantID(tenant.tenant.id), userId: ObjectID(user.id)).contains {
                $0.kind == .totp
            },
            passkeys: try await store.passkeys(tenantId: TenantID(tenant.tenant.id), userId: ObjectID(user.id)).filter { $0.suspectSince == nil }.count)
        var facts = InteractiveDecision.Facts(
            flow: flow, signIn: signIn, now: clock.now(), silent: silent, maximumAge: maximumAge, methods: methods,
            passwordOnlyRegistration: tenant.tenant.passwordOnlyRegistration)
        facts.deviceSettled = device.settled
        return facts
    }

    /// The device of a sign-in on the page (PROTOCOL §18): the one the browser proved (as the directory has it now), or
    /// none; `settled` when no later proof can change that — the browser answered the page's challenge, or the client is
    /// a web app, whose code its server redeems.
    struct PageDevice {
        var facts: DeviceFacts?
        var settled = false
    }

    func pageDevice(_ authorization: AuthorizationRequest, client: PortcullisCore.Application, tenant: TenantSnapshot) throws -> PageDevice {
        PageDevice(
            facts: try devices.current(DeviceAuthentication.proven(authorization.device), snapshot: tenant, now: clock.now()),
            settled: InteractiveDecision.Facts.deviceSettled(answered: authorization.device, client: client))
    }

    /// The conditional-access facts of a sign-in on a page (`SignInFacts.Input`).
    func pageFacts(
        user: User, client: PortcullisCore.Application, resource: PortcullisCore.Application, claims: ClaimsRequest?, platform: DevicePlatform?,
        authentication: AuthenticationContext, tenant: TenantSnapshot, request: Request, _ context: PortcullisRequestContext
    ) -> SignInFacts {
        let address = clientIP(request, context)
        var input = SignInFacts.Input(
            user: user, client: client, resource: resource, authentication: authentication, platform: platform, ipAddress: address,
            capabilities: claims ?? ClaimsRequest())
        input.country = countries.country(of: address)
        input.clientAppType = .of(client: client, grant: nil)
        input.risk = risk.facts(
            userId: user.id,
            signIn: RiskDetector.SignIn(at: clock.now(), ipAddress: address, country: input.country, platform: platform, clientAppId: client.appId),
            snapshot: tenant)
        var facts = SignInFacts(input, directory: tenant.directory)
        facts.acceptedAgreements = tenant.acceptedAgreements(userId: user.id, now: clock.now())
        return facts
    }

    func errorFields(_ error: TokenError, state: String?, _ context: PortcullisRequestContext) -> [(String, String)] {
        var fields = [
            ("error", error.code.description), ("error_description", "AADSTS\(error.aadsts): \(error.message)"),
            ("error_codes", String(error.aadsts)), ("correlation_id", context.correlationId),
        ]
        if let state { fields.append(("state", state)) }
        return fields
    }

    /// Sends the answer to the client's redirect URI the way it asked (PROTOCOL §9.1).
    func deliver(
        _ redirectUri: String, mode: AuthorizationRequest.ResponseMode, fields: [(String, String)], tenant: TenantSnapshot,
        _ context: PortcullisRequestContext
    ) -> Response {
        switch mode {
        case .formPost:
            return pages.render(
                "formPost", frame: frame("Continue", tenant: tenant, context),
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
}
