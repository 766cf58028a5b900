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
        /// When the primary authentication (the password) was given: the factor keeps it, never refreshes it (PROTOCOL
        /// §13). Absent in tickets an earlier build sealed: the session's time then, or `issued`.
        var primaryTime: Date?
    }

    /// A factor step must be finished within this time.
    static let factorStepLifetime: TimeInterval = 600

    /// The page that asks for the factor, as the sign-in's decision chose it: the code, or — `ticket.newSecret` set — a
    /// first authenticator app's registration (PROTOCOL §10, §12.3). It reads nothing: what the user holds and may do was
    /// decided before (`InteractiveDecision`, or Security info's registration rule).
    func factorPage(
        _ ticket: FactorTicket, user: User, tenant: TenantSnapshot, error: TokenError?, request: Request,
        _ context: PortcullisRequestContext, status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        var headers: HTTPFields = [:]
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
            ticket.tenantId == tenant.tenant.id.rawValue, now.timeIntervalSince(ticket.issued) < Self.factorStepLifetime,
            let user = tenant.directory.user(id: ObjectID(ticket.userId)), user.accountEnabled
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
            var ticket = ticket
            if error == .factorAlreadyRegistered {
                // The user's app changed meanwhile (registered elsewhere, or reset by an admin): the step follows what they hold now.
                let registered = try await store.authenticationMethods(tenantId: TenantID(tenant.tenant.id), userId: ObjectID(user.id)).contains {
                    $0.kind == .totp
                }
                ticket.newSecret = registered ? nil : Base32.encode(TOTP.newSecret())
            }
            return try await factorPage(ticket, user: user, tenant: tenant, error: error, request: request, context, status: .badRequest)
        }
        // The code is recorded with its own time; the password's stays what it was: a second factor never makes the password
        // recent, so it never restores single sign-on past a sign-in frequency (PROTOCOL §13).
        let primary =
            session.map { AuthenticationContext(methods: $0.methods, time: $0.authTime) }
            ?? .password(at: ticket.primaryTime ?? ticket.issued)
        let authentication = primary.addingCode(at: now)
        let methods = authentication.methods
        let primaryTime = primary.time ?? ticket.issued
        switch ticket.continuation {
        case .securityInfo:
            guard let session else { return redirect(securityInfoURL(tenant)) }
            // A session that had satisfied mfa (a temporary access pass) keeps how it did; one that had not now has.
            if !AuthenticationContext(methods: session.methods, time: session.authTime).includesSecondFactor {
                try await store.upgradeSession(idHash: session.idHash, methods: methods, authTime: primaryTime, at: now)
            }
            return redirect(securityInfoURL(tenant))
        case .authorize(let authorization):
            if let session { try await store.upgradeSession(idHash: session.idHash, methods: methods, authTime: primaryTime, at: now) }
            return try await complete(
                authorization, user: user, methods: methods, authTime: primaryTime, sessionHash: session?.idHash, tenant: tenant,
                request: request, context)
        case .device(let userCode):
            guard let record = try await store.deviceCode(userCode: userCode), record.state == .pending, record.expiresAt > now,
                try await store.decideDeviceCode(
                    userCode: userCode, approve: true, userId: ObjectID(user.id), methods: methods, authTime: primaryTime, now: now)
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
        let subjects: [LockoutPolicy.Subject] = [.factor(tenantId: tenant.tenant.id.rawValue, userId: user.id.rawValue), .address(clientIP)]
        try await passwords.beginAttempt(subjects, now: now, locked: { $0.isAddress ? .addressLocked : .factorLocked })
        func fail(_ error: TokenError) async throws -> Never {
            // The attempt that reached the threshold already says so (the user learns why the next one fails).
            if let lock = passwords.policy.lockedUntil(try await store.throttles(keys: subjects.map(\.key)), now: now) {
                logger.notice("second factor locked after repeated wrong codes", metadata: [LogKeys.userId: .string(user.id.rawValue)])
                throw lock.key == subjects[0].key ? TokenError.factorLocked : TokenError.addressLocked
            }
            throw error
        }
        if let newSecret = ticket.newSecret {
            guard let secret = Base32.decode(newSecret), let step = TOTP.matchingStep(typed, secret: secret, at: now) else {
                try await fail(.factorCodeInvalid)
            }
            let id = UUID.randomIdentifierText
            let method = AuthenticationMethodRecord(
                id: RecordID(id), tenantId: TenantID(tenant.tenant.id), userId: ObjectID(user.id), kind: .totp,
                sealedSecret: try factorBox.seal(secret, tenantId: tenant.tenant.id.rawValue, userId: user.id.rawValue, methodId: id), createdAt: now,
                lastUsedStep: step,
                lastUsedAt: now)
            // Its events and audit record commit with it (PROTOCOL §14.1).
            let committed = try await transmitter.methodChangeEffects(
                .app, added: true, tenant: tenant, user: user, initiator: .user, at: now,
                audit: AuditRecord(
                    tenantId: tenant.tenant.id, at: now, actor: "user:\(user.id)", action: .create, kind: .authenticationMethod,
                    documentId: "\(user.id)/\(id)", before: nil, after: JSONValue(encoding: SoftwareOathMethod(method))))
            guard try await store.insertAuthenticationMethod(method, effects: committed) else { throw TokenError.factorAlreadyRegistered }
            transmitter.didCommit(committed)
            logger.notice("second factor registered", metadata: [LogKeys.userId: .string(user.id.rawValue)])
        } else {
            guard
                let method = try await store.authenticationMethods(tenantId: TenantID(tenant.tenant.id), userId: ObjectID(user.id)).first(where: {
                    $0.kind == .totp
                })
            else {
                throw TokenError.factorAlreadyRegistered  // reset meanwhile: the page registers one again
            }
            guard let secret = factorBox.open(method.sealedSecret, tenantId: tenant.tenant.id.rawValue, userId: user.id.rawValue, methodId: method.id.rawValue)
            else {
                logger.error("a second-factor secret does not open (another pepper, or a damaged row)", metadata: [LogKeys.userId: .string(user.id.rawValue)])
                throw TokenError.factorUnusable
            }
            guard let step = TOTP.matchingStep(typed, secret: secret, at: now) else { try await fail(.factorCodeInvalid) }
            guard try await store.useAuthenticationMethod(id: method.id, step: step, at: now) else { try await fail(.factorCodeReplayed) }
        }
        try await passwords.attemptSucceeded(subjects, now: now)
    }
}
