import Foundation
import HTTPTypes
import Hummingbird
import Logging
import PortcullisCore
import PortcullisStorage
import PortcullisTokens

/// The second factor on the sign-in page (PROTOCOL §10): when conditional access requires `mfa` and the
/// authentication so far lacks it, the page asks for a TOTP code — or, for a user without a factor, registers
/// one first. The pending step travels through the page sealed and encrypted (it may hold the new secret),
/// bound to the browser's session (code flow) or to the device code (device flow).
extension SignInRoutes {
    /// What happens once the factor is verified.
    struct FactorTicket: Codable {
        enum Continuation: Codable {
            case authorize(AuthorizationRequest)
            case device(userCode: String)
            /// The security info page's step before adding a method: back to the page.
            case securityInfo
        }

        var continuation: Continuation
        var tenantId: String
        var userId: String
        /// The browser's session (code flow): the step must be finished by the browser that began it.
        var sessionHash: String?
        /// A factor being registered: its secret, in base32 (shown on the page anyway).
        var newSecret: String?
        var issued: Date
    }

    /// A factor step must be finished within this time.
    static let factorStepLifetime: TimeInterval = 600

    /// Whether conditional access asks this sign-in for an authenticator-app code it has not given (Core decides).
    func factorMissing(_ facts: SignInFacts, refusal: Decision.Refusal?, tenant: TenantSnapshot) -> Bool {
        tenant.conditionalAccess.codeMissing(facts, refusal: refusal)
    }

    /// The page that asks for the factor: the code, or — for a user without an authenticator app — its registration
    /// where registering is allowed (PROTOCOL §12.3; this step is reached with a password alone). A user with a passkey
    /// but no app is asked for the passkey instead; one who may not register learns why.
    func factorPage(
        _ ticket: FactorTicket, user: User, tenant: TenantSnapshot, error: TokenError?, request: Request,
        _ context: PortcullisRequestContext, headers extra: HTTPFields = [:], status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        var ticket = ticket
        let registered = try await store.authenticationMethods(tenantId: tenant.tenant.id, userId: user.id).contains { $0.kind == .totp }
        if !registered && ticket.newSecret == nil {
            let hasPasskey = !(try await store.passkeys(tenantId: tenant.tenant.id, userId: user.id).isEmpty)
            if hasPasskey, case .authorize(let authorization) = ticket.continuation {
                return try await passkeyPage(
                    authorization, tenant: tenant, username: user.userPrincipalName, error: nil, request: request, context, knownUser: true)
            }
            let permission = registrationAllowed(
                .password(at: ticket.issued), user: user, tenant: tenant, hasFactor: hasPasskey, request: request, context: context)
            guard permission.allowed else {
                return errorPage(
                    Self.registrationRefused(permission.reason), tenant: tenant, context, title: "You can't add a sign-in method here", status: .forbidden)
            }
            ticket.newSecret = Base32.encode(TOTP.newSecret())
        }
        if registered { ticket.newSecret = nil }
        var headers = extra
        let csrf = csrf(request, purpose: "factor", headers: &headers)
        let sealed = sealer.sealPrivately((try? Self.ticketCoder.0.encode(ticket)) ?? Data())
        var values: [String: Any] = [
            "action": "\(basePath)/\(tenant.tenant.id)/oauth2/v2.0/authorize/mfa", "ticket": sealed, "csrf": csrf, "upn": user.userPrincipalName,
        ]
        if let secret = ticket.newSecret, let bytes = Base32.decode(secret) {
            values["register"] = [
                "secretGroups": stride(from: 0, to: secret.count, by: 4).map { offset -> String in
                    let start = secret.index(secret.startIndex, offsetBy: offset)
                    return String(secret[start..<(secret.index(start, offsetBy: 4, limitedBy: secret.endIndex) ?? secret.endIndex)])
                }.joined(separator: " "),
                "uri": TOTP.provisioningURI(secret: bytes, account: user.userPrincipalName),
            ]
        }
        if let error {
            values["error"] = ["message": error.message, "code": String(error.aadsts)]
            if error.code == .temporarilyUnavailable { headers[.retryAfter] = String(error.retryAfter ?? 1) }
        }
        let title = ticket.newSecret == nil ? "Enter your code" : "Set up your authenticator app"
        return pages.render(
            "factor", frame: frame(title, tenant: tenant, context), values: values,
            status: error?.code == .temporarilyUnavailable ? .serviceUnavailable : status, headers: headers)
    }

    /// The factor form's submission.
    func factorSubmitted(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let segment = context.parameters.get("tenant") ?? ""
        guard let tenant = try await tenants.snapshot(tenantSegment: segment) else { return errorPage(.unknownTenant(segment), tenant: nil, context) }
        let form: FormBody
        do { form = try await OAuthRoutes.form(request, context) } catch let error as TokenError { return errorPage(error, tenant: tenant, context) }
        let now = clock.now()
        guard let sealed = form["ticket"], let payload = sealer.openPrivately(sealed),
            let ticket = try? Self.ticketCoder.1.decode(FactorTicket.self, from: payload),
            ticket.tenantId == tenant.tenant.id, now.timeIntervalSince(ticket.issued) < Self.factorStepLifetime,
            let user = tenant.directory.user(id: ticket.userId), user.accountEnabled
        else {
            return errorPage(
                TokenError(.invalidRequest, aadsts: 50132, "The verification form is not valid or has expired. Start the sign-in again from the app."),
                tenant: tenant, context)
        }
        guard checkCSRF(request, token: form["csrf"], purpose: "factor") else {
            return errorPage(
                TokenError(
                    .invalidRequest, aadsts: 90014,
                    "The verification form could not be verified (its cookie is missing or stale). Start the sign-in again; cookies must be allowed."),
                tenant: tenant, context)
        }
        var session: SessionRecord?
        if let hash = ticket.sessionHash {
            session = try await currentSession(request, tenant: tenant)?.record
            guard session?.idHash == hash, session?.userId == user.id else {
                return errorPage(
                    TokenError(
                        .invalidRequest, aadsts: 50132, "This sign-in was started in another browser or has ended. Start the sign-in again from the app."),
                    tenant: tenant, context)
            }
        }
        do {
            try await verifyFactor(form["otp"] ?? "", ticket: ticket, user: user, tenant: tenant, clientIP: clientIP(request, context), now: now)
        } catch let error as TokenError {
            return try await factorPage(ticket, user: user, tenant: tenant, error: error, request: request, context, status: .badRequest)
        }
        let methods = ["pwd", "mfa"]
        switch ticket.continuation {
        case .securityInfo:
            guard let session else { return redirect(securityInfoURL(tenant)) }
            // A session that had satisfied mfa (a temporary access pass) keeps how it did; one that had not now has.
            if !AuthenticationContext(methods: session.methods, time: session.authTime).includesSecondFactor {
                try await store.upgradeSession(idHash: session.idHash, methods: methods, authTime: now, at: now)
            }
            return redirect(securityInfoURL(tenant))
        case .authorize(let authorization):
            if let session { try await store.upgradeSession(idHash: session.idHash, methods: methods, authTime: now, at: now) }
            return try await complete(
                authorization, user: user, methods: methods, authTime: now, sessionHash: session?.idHash, tenant: tenant,
                request: request, context, headers: [:])
        case .device(let userCode):
            guard let record = try await store.deviceCode(userCode: userCode), record.state == .pending, record.expiresAt > now,
                try await store.decideDeviceCode(userCode: userCode, approve: true, userId: user.id, methods: methods, authTime: now, now: now)
            else {
                return errorPage(
                    TokenError(.expiredToken, aadsts: 70019, "This code has expired or was already used. Start again on your device."), tenant: tenant, context)
            }
            return deviceApproved(record, tenant: tenant, context)
        }
    }

    /// Checks the code: counted first against the factor and the address (five wrong codes lock like passwords, §9.6;
    /// a locked factor is refused without a look at the code), then the code against the secret being registered or
    /// the registered one, then its single use.
    func verifyFactor(_ typed: String, ticket: FactorTicket, user: User, tenant: TenantSnapshot, clientIP: IPAddress?, now: Date) async throws {
        let subjects: [LockoutPolicy.Subject] = [.factor(tenantId: tenant.tenant.id, userId: user.id), .address(clientIP)]
        try await passwords.beginAttempt(subjects, now: now, locked: { $0.isAddress ? .addressLocked : .factorLocked })
        func fail(_ error: TokenError) async throws -> Never {
            // The attempt that reached the threshold already says so (the user learns why the next one fails).
            if let lock = passwords.policy.lockedUntil(try await store.throttles(keys: subjects.map(\.key)), now: now) {
                logger.notice("second factor locked after repeated wrong codes", metadata: [LogKeys.userId: .string(user.id)])
                throw lock.key == subjects[0].key ? TokenError.factorLocked : TokenError.addressLocked
            }
            throw error
        }
        if let newSecret = ticket.newSecret {
            guard let secret = Base32.decode(newSecret), let step = TOTP.matchingStep(typed, secret: secret, at: now) else {
                try await fail(.factorCodeInvalid)
            }
            let id = UUID().uuidString.lowercased()
            let method = AuthenticationMethodRecord(
                id: id, tenantId: tenant.tenant.id, userId: user.id, kind: .totp,
                sealedSecret: try factorBox.seal(secret, tenantId: tenant.tenant.id, userId: user.id, methodId: id), createdAt: now, lastUsedStep: step,
                lastUsedAt: now)
            // Its events and audit record commit with it (PROTOCOL §14.1).
            let committed = try await transmitter.methodChangeEffects(
                .app, added: true, tenant: tenant, user: user, initiator: .user, at: now,
                audit: AuditRecord(
                    tenantId: tenant.tenant.id, at: now, actor: "user:\(user.id)", action: .create, kind: .authenticationMethod,
                    documentId: "\(user.id)/\(id)", before: nil, after: JSONValue(encoding: SoftwareOathMethod(method))))
            guard try await store.insertAuthenticationMethod(method, effects: committed) else { throw TokenError.factorAlreadyRegistered }
            transmitter.didCommit(committed)
            logger.notice("second factor registered", metadata: [LogKeys.userId: .string(user.id)])
        } else {
            guard let method = try await store.authenticationMethods(tenantId: tenant.tenant.id, userId: user.id).first(where: { $0.kind == .totp }) else {
                throw TokenError.factorAlreadyRegistered  // reset meanwhile: the page registers one again
            }
            guard let secret = factorBox.open(method.sealedSecret, tenantId: tenant.tenant.id, userId: user.id, methodId: method.id) else {
                logger.error("a second-factor secret does not open (another pepper, or a damaged row)", metadata: [LogKeys.userId: .string(user.id)])
                throw TokenError.factorUnusable
            }
            guard let step = TOTP.matchingStep(typed, secret: secret, at: now) else { try await fail(.factorCodeInvalid) }
            guard try await store.useAuthenticationMethod(id: method.id, step: step, at: now) else { try await fail(.factorCodeReplayed) }
        }
        try await passwords.attemptSucceeded(subjects, now: now)
    }
}
