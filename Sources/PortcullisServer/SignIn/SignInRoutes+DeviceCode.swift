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

/// The device authorization grant (RFC 8628, PROTOCOL §9.5): the device code endpoint and the pages where a user
/// enters the code and signs in.
extension SignInRoutes {
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
        let client = try await clients.authenticate(form: form, authorization: request.headers[.authorization], in: tenant.directory)
        guard client.application.allowedGrantTypes.contains(GrantType.deviceCode.rawValue) else {
            throw TokenError.grantNotAllowed(GrantType.deviceCode.rawValue)
        }
        let scope = try form.required("scope")
        _ = try ResourceAccess.authorize(try ScopeRequest.parse(scope, in: tenant.directory), client: client.application, delegated: true, in: tenant.directory)
        let claims = try form["claims"].map { (text: String) throws(TokenError) in try ClaimsRequest.parse(text) }
        try tenant.conditionalAccess.checkRequested(contexts: claims?.authenticationContexts ?? [], appOnly: false)
        let now = clock.now()
        let deviceCode = CredentialHasher.randomToken()
        var userCode = Self.newUserCode()
        for _ in 0..<5 where try await store.deviceCode(userCode: userCode) != nil { userCode = Self.newUserCode() }
        let lifetime = configuration.signIn.deviceCodeLifetime
        // Anyone may ask: the tenant's, the client's and the address's pending codes are bounded, counted with the insert.
        let address = LockoutPolicy.Subject.address(clientIP(request, context)).key
        if let quota = try await store.insertDeviceCode(
            DeviceCodeRecord(
                deviceCodeHash: CredentialHasher.hashToken(deviceCode), userCode: userCode, tenantId: tenant.tenant.id,
                clientId: client.application.appId,
                scope: scope, claims: claims, interval: configuration.signIn.deviceCodeInterval, expiresAt: now.addingTimeInterval(lifetime),
                clientAddress: address), limits: configuration.signIn.deviceCodeLimits, now: now)
        {
            logger.notice("device code refused: quota reached", metadata: ["portcullis.quota": .string(quota.rawValue)])
            throw TokenError.deviceCodeQuota(quota)
        }
        let uri = "\(endpoints.baseURL)/devicelogin"
        let shown = Self.displayUserCode(userCode)
        return JSONResponse.make(
            status: .ok,
            DeviceAuthorizationResponse(
                deviceCode: deviceCode, userCode: shown, verificationUri: uri, expiresIn: Int(lifetime), interval: configuration.signIn.deviceCodeInterval,
                message: "To sign in, use a web browser to open the page \(uri) and enter the code \(shown) to authenticate."))
    }

    func deviceLoginPage(
        _ request: Request, _ context: PortcullisRequestContext, error: TokenError? = nil, userCode: String? = nil,
        status: HTTPResponse.Status = .ok
    ) -> Response {
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
        do { form = try await OAuthRoutes.form(request, context) } catch let error as TokenError {
            return deviceLoginPage(request, context, error: error, status: .badRequest)
        }
        guard checkCSRF(request, token: form["csrf"], purpose: "device") else {
            return deviceLoginPage(
                request, context,
                error: TokenError(
                    .invalidRequest, aadsts: 90014, "The form could not be verified (its cookie is missing or stale). Try again; cookies must be allowed."),
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
            let tenant = try await tenants.snapshot(tenantSegment: record.tenantId.rawValue)
        else {
            return deviceLoginPage(
                request, context, error: TokenError(.invalidRequest, aadsts: 70000, "That code is not valid or has expired. Check the code on your device."),
                userCode: typed, status: .badRequest)
        }
        try await passwords.attemptSucceeded(guess, now: now)
        return deviceSignInPage(record, tenant: tenant, error: nil, username: nil, request: request, context)
    }

    func deviceSignInPage(
        _ record: DeviceCodeRecord, tenant: TenantSnapshot, error: TokenError?, username: String?, request: Request,
        _ context: PortcullisRequestContext, status: HTTPResponse.Status = .ok
    ) -> Response {
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
        do { form = try await OAuthRoutes.form(request, context) } catch let error as TokenError {
            return deviceLoginPage(request, context, error: error, status: .badRequest)
        }
        guard let sealed = form["ticket"], let payload = sealer.open(sealed), let ticket = try? Self.ticketCoder.1.decode(DeviceTicket.self, from: payload),
            clock.now().timeIntervalSince(ticket.issued) < configuration.signIn.formLifetime,
            let record = try await store.deviceCode(userCode: ticket.userCode),
            let tenant = try await tenants.snapshot(tenantSegment: record.tenantId.rawValue)
        else {
            return deviceLoginPage(
                request, context, error: TokenError(.invalidRequest, aadsts: 70000, "The sign-in form is not valid or has expired. Enter the code again."),
                status: .badRequest)
        }
        guard checkCSRF(request, token: form["csrf"], purpose: "device-signin") else {
            return errorPage(
                TokenError(
                    .invalidRequest, aadsts: 90014,
                    "The form could not be verified (its cookie is missing or stale). Enter the code again; cookies must be allowed."),
                tenant: tenant, context)
        }
        let now = clock.now()
        guard record.state == .pending, record.expiresAt > now else {
            return errorPage(
                TokenError(.expiredToken, aadsts: 70019, "This code has expired or was already used. Start again on your device."), tenant: tenant, context)
        }
        if form["decision"] == "deny" {
            _ = try await store.decideDeviceCode(userCode: record.userCode, approve: false, userId: nil, methods: [], authTime: nil, now: now)
            return pages.render(
                "message", frame: frame("Sign-in declined", tenant: tenant, context),
                values: ["text": "You declined the sign-in. Nothing was shared with the device.", "detail": "You can close this window."])
        }
        let username = form["username"] ?? ""
        let user: User
        let authentication: AuthenticationContext
        do {
            guard !username.isEmpty, let password = form["password"] else {
                throw TokenError(.invalidRequest, aadsts: 900144, "Enter your user name and password.")
            }
            (user, authentication) = try await firstFactor(username: username, secret: password, tenant: tenant, request: request, context, now: now)
        } catch let error as TokenError {
            return deviceSignInPage(record, tenant: tenant, error: error, username: username, request: request, context, status: .badRequest)
        }
        return try await continueDeviceSignIn(record, user: user, authentication: authentication, tenant: tenant, request: request, context, username: username)
    }

    /// The device sign-in's one decision (`InteractiveDecision`), carried out: blocked (the code declined), the factor, terms
    /// of use, or the code approved. Also where the terms page comes back to once the user accepted.
    func continueDeviceSignIn(
        _ record: DeviceCodeRecord, user: User, authentication: AuthenticationContext, tenant: TenantSnapshot, request: Request,
        _ context: PortcullisRequestContext, username: String? = nil
    ) async throws -> Response {
        let now = clock.now()
        if let client = tenant.directory.application(appId: record.clientId) {
            let resource: PortcullisCore.Application
            do {
                resource = try ScopeRequest.parse(record.scope, in: tenant.directory).resource ?? client
            } catch {
                return errorPage(error, tenant: tenant, context)
            }
            let facts = try await interactiveFacts(
                .deviceCode, user: user, client: client, resource: resource, claims: record.claims, platform: nil, authentication: authentication,
                tenant: tenant, request: request, context)
            let result = InteractiveDecision.decide(facts, policies: tenant.conditionalAccess)
            switch result.step {
            case .blocked:
                recordRefusal(facts, result.decision, user: user, tenant: tenant, error: .blockedByConditionalAccess, context)
                // A policy blocks this sign-in (Microsoft's "block device code flow" among them, PROTOCOL §13): the code is
                // declined, so the device's poll ends at once, and the page says why.
                _ = try await store.decideDeviceCode(userCode: record.userCode, approve: false, userId: nil, methods: [], authTime: nil, now: now)
                return errorPage(.blockedByConditionalAccess, tenant: tenant, context, title: "Sign-in blocked", status: .forbidden)
            case .enterCode, .registerAuthenticatorApp:
                var ticket = FactorTicket(
                    continuation: .device(userCode: record.userCode), tenantId: tenant.tenant.id.rawValue, userId: user.id.rawValue, sessionHash: nil,
                    newSecret: nil, issued: now, primaryTime: authentication.time ?? now)
                if facts.methods.hasAuthenticatorApp == false { ticket.newSecret = Base32.encode(TOTP.newSecret()) }
                return try await factorPage(ticket, user: user, tenant: tenant, error: nil, request: request, context)
            case .acceptTerms(let agreementIds):
                return termsPage(
                    .device(userCode: record.userCode), agreementIds: agreementIds.map(\.rawValue), user: user, methods: authentication.methods,
                    authTime: authentication.time ?? now, sessionHash: nil, tenant: tenant, request: request, context)
            case .registrationRefused(let refusal):
                return errorPage(
                    Self.registrationRefused(refusal.message), tenant: tenant, context, title: "You can't add a sign-in method here", status: .forbidden)
            case .changePassword:
                // A password change belongs to a browser sign-in of the user's own (the device may be anyone's screen).
                recordRefusal(facts, result.decision, user: user, tenant: tenant, error: .passwordChangeRequired, context)
                return errorPage(.passwordChangeRequired, tenant: tenant, context, title: "Change your password first", status: .forbidden)
            case .signInAgain, .loginRequired, .interactionRequired, .usePasskey, .registerPasskey:
                // Not for a password given just now on this page (no prompt, no passkey ceremony here): signed in again.
                return deviceSignInPage(record, tenant: tenant, error: nil, username: username ?? user.userPrincipalName, request: request, context)
            case .issue, .deviceRefused:
                // The device is the one that redeems the code (never settled here, where the browser may be another):
                // its proof, or its absence, is decided at redemption.
                break
            }
        }
        guard
            try await store.decideDeviceCode(
                userCode: record.userCode, approve: true, userId: ObjectID(user.id), methods: authentication.methods, authTime: authentication.time ?? now,
                now: now)
        else {
            return errorPage(
                TokenError(.expiredToken, aadsts: 70019, "This code has expired or was already used. Start again on your device."), tenant: tenant, context)
        }
        return deviceApproved(record, tenant: tenant, context)
    }

    func deviceApproved(_ record: DeviceCodeRecord, tenant: TenantSnapshot, _ context: PortcullisRequestContext) -> Response {
        let app = tenant.directory.application(appId: record.clientId)?.displayName ?? record.clientId.rawValue
        return pages.render(
            "message", frame: frame("You're signed in", tenant: tenant, context),
            values: ["text": "You have signed in to \(app) on your device.", "detail": "You can close this window and return to the device."])
    }
}
