import Foundation
import HTTPTypes
import Hummingbird
import Logging
import PortcullisAPI
import PortcullisCore
import PortcullisStorage
import PortcullisTokens
import PortcullisWebAuthnFormat

/// The "Security info" page (PROTOCOL §12.1): a signed-in user lists, renames and removes their passkeys and
/// authenticator app, and adds a passkey. Adding is a protected action (§12.3, `registrationAllowed`): the session
/// must already have satisfied `mfa` (the page offers the authenticator-app step when it has not); a user with no
/// factor at all adds a first one where the tenant allows it, or after signing in with a temporary access pass.
extension SignInRoutes {
    var securityInfoPurpose: String { "securityinfo" }

    func securityInfoURL(_ tenant: TenantSnapshot) -> String { basePath + BuiltInResources.securityInfoPath(tenantId: tenant.tenant.id.rawValue) }

    /// `GET /{tenant}/securityinfo`: the page for the browser's session; without one, a sign-in through the
    /// authorization endpoint (the built-in Security info client) that comes back here.
    func securityInfo(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let segment = context.parameters.get("tenant") ?? ""
        guard let tenant = try await tenants.snapshot(tenantSegment: segment) else { return errorPage(.unknownTenant(segment), tenant: nil, context) }
        guard let session = try await currentSession(request, tenant: tenant) else {
            let verifier = CredentialHasher.randomToken()
            let query = FormEncoding.encode([
                ("client_id", BuiltInResources.securityInfoAppId.rawValue), ("response_type", "code"), ("scope", "openid profile"),
                ("redirect_uri", endpoints.baseURL + BuiltInResources.securityInfoPath(tenantId: tenant.tenant.id.rawValue)),
                ("code_challenge", PKCE.challenge(of: verifier)), ("code_challenge_method", "S256"),
            ])
            return redirect("\(basePath)/\(tenant.tenant.id)/oauth2/v2.0/authorize?\(query)")
        }
        // Back from the sign-in: the code is not needed (the session is what counts); drop it from the address bar.
        if request.uri.query?.isEmpty == false { return redirect(securityInfoURL(tenant)) }
        return try await securityInfoPage(session.record, user: session.user, tenant: tenant, notice: nil, error: nil, request: request, context)
    }

    /// A registration the rule or a policy refuses (AADSTS53003, as Entra's conditional access refusal).
    static func registrationRefused(_ reason: String?) -> TokenError {
        TokenError(.accessDenied, aadsts: 53003, reason ?? "Adding a sign-in method is not allowed now.")
    }

    func redirect(_ location: String) -> Response {
        var headers: HTTPFields = [.location: location]
        Pages.secure(&headers)
        return Response(status: .found, headers: headers)
    }

    /// Whether this authentication may register a sign-in method now, and if not, why in words for the page (the rule
    /// and the user-action policies are Core's, `MethodRegistration`).
    func registrationAllowed(
        _ authentication: AuthenticationContext, user: User, tenant: TenantSnapshot, hasFactor: Bool, request: Request, context: PortcullisRequestContext
    ) -> (allowed: Bool, reason: String?) {
        let facts = pageFacts(
            user: user, client: BuiltInResources.securityInfo, resource: BuiltInResources.securityInfo, claims: nil, platform: nil,
            authentication: authentication, tenant: tenant, request: request, context)
        let refusal = MethodRegistration.refusal(
            facts, policies: tenant.conditionalAccess, hasMethod: hasFactor, passwordOnly: tenant.tenant.passwordOnlyRegistration)
        return (refusal == nil, refusal?.message)
    }

    func securityInfoPage(
        _ session: SessionRecord, user: User, tenant: TenantSnapshot, notice: String?, error: TokenError?, request: Request,
        _ context: PortcullisRequestContext, status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        var headers: HTTPFields = [:]
        let csrf = csrf(request, purpose: securityInfoPurpose, headers: &headers)
        let passkeys = try await store.passkeys(tenantId: TenantID(tenant.tenant.id), userId: ObjectID(user.id))
        let totp = try await store.authenticationMethods(tenantId: TenantID(tenant.tenant.id), userId: ObjectID(user.id)).filter { $0.kind == .totp }
        let base = securityInfoURL(tenant)
        let day = Date.ISO8601FormatStyle().year().month().day()
        var methods: [[String: Any]] = passkeys.map { passkey in
            [
                "id": passkey.id, "name": passkey.displayName, "kind": "Passkey", "passkey": true,
                "detail": "Added \(passkey.createdAt.formatted(day))" + (passkey.lastUsedAt.map { ", last used \($0.formatted(day))" } ?? "")
                    + (passkey.backedUp ? ", synced" : ""),
                "suspect": passkey.suspectSince != nil,
            ]
        }
        methods += totp.map { method in
            [
                "id": method.id, "name": "Authenticator app", "kind": "Authenticator app (TOTP)", "passkey": false,
                "detail": "Added \(method.createdAt.formatted(day))" + (method.lastUsedAt.map { ", last used \($0.formatted(day))" } ?? ""),
                "suspect": false,
            ]
        }
        var values: [String: Any] = [
            "upn": user.userPrincipalName, "methods": methods, "hasMethods": !methods.isEmpty, "csrf": csrf, "methodAction": "\(base)/methods",
            "signOut": "\(basePath)/\(tenant.tenant.id)/oauth2/v2.0/logout",
            // Removing needs a session that satisfied mfa, as adding does.
            "canRemove": AuthenticationContext(methods: session.methods, time: session.authTime).includesSecondFactor,
        ]
        let permission = registrationAllowed(
            AuthenticationContext(methods: session.methods, time: session.authTime), user: user, tenant: tenant, hasFactor: !methods.isEmpty,
            request: request, context: context)
        if permission.allowed && totp.isEmpty { values["addAuthenticator"] = "\(base)/verify" }
        if permission.allowed, let relyingParty, passkeys.count < Self.passkeysPerUser {
            let issued = issuePasskeyChallenge(.register, binding: session.idHash, userId: user.id.rawValue)
            values["registration"] = [
                "action": "\(base)/passkeys", "challenge": issued.challenge, "sealedChallenge": issued.sealed, "rpId": relyingParty.id,
                "rpName": tenant.tenant.displayName, "userId": Base64URL.encode(Array(user.id.rawValue.utf8)), "userName": user.userPrincipalName,
                "userDisplayName": user.displayName, "exclude": passkeys.map { Base64URL.encode(Array($0.credentialId)) }.joined(separator: ","),
                "csrf": csrf,
            ]
        } else if let reason = permission.reason {
            values["blocked"] = reason
            if !totp.isEmpty { values["verifyAction"] = "\(base)/verify" }
        }
        if let notice { values["notice"] = notice }
        if let error { values["error"] = ["message": error.message, "code": String(error.aadsts)] }
        return pages.render("securityInfo", frame: frame("Security info", tenant: tenant, context), values: values, status: status, headers: headers)
    }

    /// Runs `body` with a posted security info form's session and fields, its CSRF token checked; without a live
    /// session (or with a bad form) the answer is the page's.
    func securityInfoPost(
        _ request: Request, _ context: PortcullisRequestContext,
        _ body: (TenantSnapshot, SessionRecord, User, FormBody) async throws -> Response
    ) async throws -> Response {
        let segment = context.parameters.get("tenant") ?? ""
        guard let tenant = try await tenants.snapshot(tenantSegment: segment) else { return errorPage(.unknownTenant(segment), tenant: nil, context) }
        let form: FormBody
        do { form = try await OAuthRoutes.form(request, context) } catch let error as TokenError { return errorPage(error, tenant: tenant, context) }
        guard let session = try await currentSession(request, tenant: tenant) else { return redirect(securityInfoURL(tenant)) }
        guard checkCSRF(request, token: form["csrf"], purpose: securityInfoPurpose) else {
            return
                (errorPage(
                    TokenError(.invalidRequest, aadsts: 90014, "The form could not be verified (its cookie is missing or stale). Open Security info again."),
                    tenant: tenant, context))
        }
        return try await body(tenant, session.record, session.user, form)
    }

    /// `POST /{tenant}/securityinfo/passkeys`: a registration ceremony's result (WebAuthn §7.1).
    func registerPasskey(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        try await securityInfoPost(request, context) { tenant, session, user, form in
            let now = clock.now()
            func page(_ error: TokenError) async throws -> Response {
                try await securityInfoPage(session, user: user, tenant: tenant, notice: nil, error: error, request: request, context, status: .badRequest)
            }
            let existing = try await store.passkeys(tenantId: TenantID(tenant.tenant.id), userId: ObjectID(user.id))
            let totp = try await store.authenticationMethods(tenantId: TenantID(tenant.tenant.id), userId: ObjectID(user.id)).contains { $0.kind == .totp }
            let permission = registrationAllowed(
                AuthenticationContext(methods: session.methods, time: session.authTime), user: user, tenant: tenant, hasFactor: totp || !existing.isEmpty,
                request: request, context: context)
            guard permission.allowed else { return try await page(Self.registrationRefused(permission.reason)) }
            do {
                _ = try await storeRegisteredPasskey(form, binding: session.idHash, user: user, tenant: tenant, now: now)
                return try await securityInfoPage(
                    session, user: user, tenant: tenant, notice: "Passkey added. You can now sign in with it.", error: nil, request: request, context)
            } catch let error as TokenError {
                return try await page(error)
            }
        }
    }

    /// `POST /{tenant}/securityinfo/methods`: rename a passkey, or remove a passkey or the authenticator app.
    func changeMethod(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        try await securityInfoPost(request, context) { tenant, session, user, form in
            let id = (form["id"] ?? "").lowercased()
            let now = clock.now()
            var notice: String
            switch form["action"] {
            case "rename":
                // Renaming is guarded like removing (PROTOCOL §12.1): someone holding only the password must not relabel
                // the owner's passkeys (to pass theirs off as the owner's, say).
                guard AuthenticationContext(methods: session.methods, time: session.authTime).includesSecondFactor else {
                    return try await securityInfoPage(
                        session, user: user, tenant: tenant, notice: nil,
                        error: Self.registrationRefused("To rename a sign-in method, first verify with one you have."), request: request, context,
                        status: .forbidden)
                }
                let name = (form["displayName"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
                guard !name.isEmpty, name.count <= 64 else {
                    return try await securityInfoPage(
                        session, user: user, tenant: tenant, notice: nil,
                        error: TokenError(.invalidRequest, aadsts: 900144, "A passkey's name must have 1 to 64 characters."), request: request, context,
                        status: .badRequest)
                }
                guard try await store.renamePasskey(tenantId: TenantID(tenant.tenant.id), userId: ObjectID(user.id), id: RecordID(id), displayName: name) else {
                    return redirect(securityInfoURL(tenant))
                }
                notice = "Passkey renamed."
            case "delete":
                // Removing a method is protected like adding one: someone holding only the password must not be able to
                // take the owner's factor away (and then register their own where a first registration is allowed).
                guard AuthenticationContext(methods: session.methods, time: session.authTime).includesSecondFactor else {
                    return try await securityInfoPage(
                        session, user: user, tenant: tenant, notice: nil,
                        error: Self.registrationRefused("To remove a sign-in method, first verify with one you have."), request: request, context,
                        status: .forbidden)
                }
                // What the removal voids (the families and sessions that used the method, this one included when it did),
                // its events and audit record commit with it (PROTOCOL §14.1).
                func effects(_ type: CriticalEvent.CredentialType, _ kind: AuditSubject, _ before: JSONValue) async throws -> CommittedEffects {
                    try await transmitter.methodChangeEffects(
                        type, added: false, tenant: tenant, user: user, initiator: .user, at: now,
                        audit: AuditRecord(
                            tenantId: tenant.tenant.id, at: now, actor: "user:\(user.id)", action: .delete, kind: kind, documentId: "\(user.id)/\(id)",
                            before: before, after: nil))
                }
                if let passkey = try await store.passkeys(tenantId: TenantID(tenant.tenant.id), userId: ObjectID(user.id)).first(where: {
                    $0.id == RecordID(id)
                }) {
                    let committed = try await effects(.fido2, .passkey, JSONValue(encoding: PasskeyMethod(passkey)))
                    guard try await store.deletePasskey(tenantId: TenantID(tenant.tenant.id), userId: ObjectID(user.id), id: RecordID(id), effects: committed)
                    else {
                        return redirect(securityInfoURL(tenant))
                    }
                    transmitter.didCommit(committed)
                    notice = "Passkey removed."
                } else if let method = try await store.authenticationMethods(tenantId: TenantID(tenant.tenant.id), userId: ObjectID(user.id)).first(where: {
                    $0.id == RecordID(id)
                }) {
                    let committed = try await effects(.app, .authenticationMethod, JSONValue(encoding: SoftwareOathMethod(method)))
                    guard
                        try await store.deleteAuthenticationMethod(
                            tenantId: TenantID(tenant.tenant.id), userId: ObjectID(user.id), id: RecordID(id), effects: committed)
                    else {
                        return redirect(securityInfoURL(tenant))
                    }
                    transmitter.didCommit(committed)
                    notice = "Authenticator app removed."
                } else {
                    return redirect(securityInfoURL(tenant))
                }
            default:
                return redirect(securityInfoURL(tenant))
            }
            return try await securityInfoPage(session, user: user, tenant: tenant, notice: notice, error: nil, request: request, context)
        }
    }

    /// `POST /{tenant}/securityinfo/verify`: the authenticator-app step — its code, for a session that has not satisfied
    /// `mfa`; or, for a user without an app, adding one where registering is allowed (`registrationAllowed`).
    func securityInfoVerify(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        try await securityInfoPost(request, context) { tenant, session, user, _ in
            var ticket = FactorTicket(
                continuation: .securityInfo, tenantId: tenant.tenant.id.rawValue, userId: user.id.rawValue, sessionHash: session.idHash, newSecret: nil,
                issued: clock.now())
            if !(try await store.authenticationMethods(tenantId: TenantID(tenant.tenant.id), userId: ObjectID(user.id)).contains { $0.kind == .totp }) {
                let hasPasskey = !(try await store.passkeys(tenantId: TenantID(tenant.tenant.id), userId: ObjectID(user.id)).isEmpty)
                let permission = registrationAllowed(
                    AuthenticationContext(methods: session.methods, time: session.authTime), user: user, tenant: tenant, hasFactor: hasPasskey,
                    request: request, context: context)
                guard permission.allowed else {
                    return try await securityInfoPage(
                        session, user: user, tenant: tenant, notice: nil, error: Self.registrationRefused(permission.reason), request: request, context,
                        status: .forbidden)
                }
                ticket.newSecret = Base32.encode(TOTP.newSecret())
            }
            return try await factorPage(ticket, user: user, tenant: tenant, error: nil, request: request, context)
        }
    }
}
