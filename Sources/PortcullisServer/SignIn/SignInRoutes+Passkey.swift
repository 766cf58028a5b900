import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import PortcullisAPI
import PortcullisCore
import PortcullisStorage
import PortcullisTokens

/// Passkeys on the sign-in page (PROTOCOL §12.1): the challenge a page issues, and the sign-in ceremony (discoverable,
/// or after the user name). The page's one script (`/static/passkey.js`) runs `navigator.credentials` and posts the
/// result as an ordinary form; without JavaScript the passkey buttons stay hidden and the password form works.
extension SignInRoutes {
    /// A challenge the page issued, sealed into the page: its bytes, what for, the browser it is bound to, when.
    /// Single use: the first post of it consumes it (a store counter shared by every node, forgotten after its lifetime).
    struct PasskeyChallenge: Codable {
        enum Purpose: String, Codable {
            case signIn, register
        }

        var challenge: Data
        var purpose: Purpose
        /// SHA-256 of the browser's CSRF cookie (sign-in) or the session's hash (registration).
        var binding: String
        /// The user the ceremony is for (user-name-first sign-in, registration); `nil` for a discoverable sign-in.
        var userId: String?
        var issued: Date
    }

    static let passkeyChallengeLifetime: TimeInterval = 300
    /// A user holds at most this many passkeys.
    static let passkeysPerUser = 20

    var relyingParty: RelyingParty? { RelyingParty(baseURL: endpoints.baseURL) }

    /// The binding of a browser that has no session yet: its CSRF cookie, hashed.
    static func browserBinding(_ cookie: String) -> String { CredentialHasher.hashToken("browser:" + cookie) }

    /// A fresh challenge for the page: its bytes (base64url, for the script) and its sealed form (for the post).
    func issuePasskeyChallenge(_ purpose: PasskeyChallenge.Purpose, binding: String, userId: String?) -> (challenge: String, sealed: String) {
        var bytes = [UInt8](repeating: 0, count: 32)
        var generator = SystemRandomNumberGenerator()
        for index in bytes.indices { bytes[index] = generator.next() }
        let challenge = PasskeyChallenge(challenge: Data(bytes), purpose: purpose, binding: binding, userId: userId, issued: clock.now())
        return (Base64URL.encode(bytes), sealer.seal((try? Self.ticketCoder.0.encode(challenge)) ?? Data()))
    }

    static let challengeInvalid = TokenError(
        .invalidRequest, aadsts: 50132, "This passkey request is not valid, has expired or was already used. Try again.")

    /// Opens a posted challenge and consumes it: it must be intact, for `purpose`, bound to `binding`, within its
    /// lifetime, and never posted before.
    func consumePasskeyChallenge(_ sealed: String?, purpose: PasskeyChallenge.Purpose, binding: String) async throws -> PasskeyChallenge {
        let now = clock.now()
        guard let sealed, let payload = sealer.open(sealed), let challenge = try? Self.ticketCoder.1.decode(PasskeyChallenge.self, from: payload),
            challenge.purpose == purpose, challenge.binding == binding, challenge.challenge.count == 32,
            now.timeIntervalSince(challenge.issued) < Self.passkeyChallengeLifetime, now >= challenge.issued.addingTimeInterval(-5)
        else { throw Self.challengeInvalid }
        let key = "webauthn-challenge:" + CredentialHasher.hashToken(Base64URL.encode(Array(challenge.challenge)))
        let expires = challenge.issued.addingTimeInterval(Self.passkeyChallengeLifetime)
        let counted = try await store.updateThrottles(keys: [key]) { key, current in
            var counter = current ?? ThrottleCounter(key: key, failures: 0, windowStart: now, locks: 0, lockedUntil: nil, expiresAt: expires)
            counter.failures += 1
            return counter
        }
        guard counted.first?.failures == 1 else { throw Self.challengeInvalid }
        return challenge
    }

    /// A refused passkey, with the step that failed in words.
    static func passkeyRefused(_ reason: String) -> TokenError {
        TokenError(.invalidGrant, aadsts: 50012, "The passkey could not be verified: \(reason). Try again, or sign in another way.")
    }

    static let passkeyUnknown = TokenError(
        .invalidGrant, aadsts: 50012, "This passkey is not registered for an account of this organization. Sign in another way.")
    static let passkeySuspect = TokenError(
        .invalidGrant, aadsts: 50053,
        "This passkey is blocked: its signature counter went backwards, so it may have been copied. Ask your administrator to check it.")

    /// The values a page needs to offer "Sign in with a passkey": a fresh challenge bound to the browser (and, after a user
    /// name, to that name's account). Always a discoverable-credential request (no `allowCredentials`, PROTOCOL §12.1):
    /// the page is the same for every user name, so it tells nobody which accounts exist or which passkeys they hold.
    func passkeySignInValues(
        _ authorization: AuthorizationRequest, tenant: TenantSnapshot, browserKey: String, csrf: String, boundTo userId: String?
    ) -> [String: Any]? {
        guard let relyingParty else { return nil }
        let issued = issuePasskeyChallenge(.signIn, binding: Self.browserBinding(browserKey), userId: userId)
        return [
            "action": "\(basePath)/\(tenant.tenant.id)/oauth2/v2.0/authorize/passkey", "ticket": sealTicket(authorization), "csrf": csrf,
            "challenge": issued.challenge, "sealedChallenge": issued.sealed, "rpId": relyingParty.id, "allow": "",
        ]
    }

    /// The account a user-name-first challenge is bound to: the named user's, or — for a name that is nobody's — one no
    /// passkey belongs to, so that the page and the answer are the same as for a user without passkeys.
    func passkeyBinding(username: String, tenant: TenantSnapshot) -> String {
        tenant.directory.user(principalName: username)?.id.rawValue ?? "nobody:" + CredentialHasher.hashToken(username.lowercased())
    }

    /// User-name-first: the page that asks for a passkey of this user's, the same for every user name. `knownUser`: the
    /// user has signed in already (a strength asks for more), so the page may say they have no passkey.
    func passkeyPage(
        _ authorization: AuthorizationRequest, tenant: TenantSnapshot, username: String, error: TokenError?, request: Request,
        _ context: PortcullisRequestContext, status: HTTPResponse.Status = .ok, notice: String? = nil, knownUser: Bool = false
    ) async throws -> Response {
        var headers: HTTPFields = [:]
        let key = browserKey(request, headers: &headers)
        let csrf = sealer.csrfToken(cookie: key, purpose: "signin")
        var values: [String: Any] = [
            "upn": username, "appName": tenant.directory.application(appId: AppID(authorization.clientId))?.displayName ?? authorization.clientId,
            "back": "\(basePath)/\(tenant.tenant.id)/oauth2/v2.0/authorize/signin", "ticket": sealTicket(authorization), "csrf": csrf,
        ]
        values["passkey"] = passkeySignInValues(
            authorization, tenant: tenant, browserKey: key, csrf: csrf, boundTo: passkeyBinding(username: username, tenant: tenant))
        if let error { values["error"] = ["message": error.message, "code": String(error.aadsts)] }
        if let notice { values["notice"] = notice }
        var held: [PasskeyRecord] = []
        if knownUser, let user = tenant.directory.user(principalName: username) {
            held = try await store.passkeys(tenantId: TenantID(tenant.tenant.id), userId: ObjectID(user.id)).filter { $0.suspectSince == nil }
        }
        if knownUser && held.isEmpty {
            values["notice"] = (notice.map { $0 + " " } ?? "") + "No passkey is registered for your account yet."
            values["securityInfo"] = securityInfoURL(tenant)
        }
        return pages.render("passkey", frame: frame("Sign in with a passkey", tenant: tenant, context), values: values, status: status, headers: headers)
    }

    /// The posted assertion: the challenge consumed, the credential found in this tenant (and the named user's, after a
    /// user name), every §7.2 check, the counter recorded (a regression marks the passkey suspect and is audited),
    /// then a session that remembers the passkey (`amr` fido, mfa) and conditional access as after a password.
    func passkeySignIn(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        try await signInPost(request, context) { tenant, form, authorization in
            let cookie = Self.cookies(request)[Self.csrfCookie] ?? ""
            let now = clock.now()
            let ip = clientIP(request, context)
            do {
                // Counted before anything is looked at: a locked address consumes nothing, not even a challenge row.
                let subjects: [LockoutPolicy.Subject] = [.address(ip)]
                try await passwords.beginAttempt(subjects, now: now, locked: { _ in .addressLocked })
                let challenge = try await consumePasskeyChallenge(form["challenge"], purpose: .signIn, binding: Self.browserBinding(cookie))
                let (user, passkey) = try await verifyPasskeyAssertion(form, challenge: challenge, tenant: tenant, now: now)
                try await passwords.attemptSucceeded(subjects, now: now)
                let authentication = AuthenticationContext.passkey(model: passkey.attestedModel, at: now)
                logger.info("passkey sign-in", metadata: [LogKeys.userId: .string(user.id.rawValue)])
                return try await startSession(authorization, user: user, authentication: authentication, tenant: tenant, request: request, context)
            } catch let error as TokenError {
                if let named = form["username"], !named.isEmpty {
                    return try await passkeyPage(authorization, tenant: tenant, username: named, error: error, request: request, context, status: .badRequest)
                }
                return signInPage(authorization, tenant: tenant, error: error, username: nil, request: request, context, status: .badRequest)
            }
        }
    }

    /// The credential of an assertion, verified: found, in this tenant, the named user's (when one was named), the
    /// user handle the user's, not suspect; then §7.2 and the counter.
    func verifyPasskeyAssertion(
        _ form: FormBody, challenge: PasskeyChallenge, tenant: TenantSnapshot, now: Date
    ) async throws -> (User, PasskeyRecord) {
        guard let relyingParty else { throw Self.passkeyRefused("this server's base URL has no host") }
        func bytes(_ name: String) throws -> [UInt8] {
            guard let text = form[name], let value = Base64URL.decode(text), !value.isEmpty else {
                throw Self.passkeyRefused("the browser's answer lacks \(name)")
            }
            return Array(value)
        }
        let credentialId = try bytes("credentialId")
        guard credentialId.count <= 1023, let passkey = try await store.passkey(credentialId: Data(credentialId)),
            passkey.tenantId == TenantID(tenant.tenant.id),
            let user = tenant.directory.user(id: passkey.userId), user.accountEnabled
        else { throw Self.passkeyUnknown }
        if let named = challenge.userId, named != user.id.rawValue { throw Self.passkeyUnknown }
        if let handle = form["userHandle"], !handle.isEmpty {
            guard Base64URL.decode(handle) == Data(user.id.rawValue.utf8) else {
                throw Self.passkeyRefused("the passkey's user handle is not its account's")
            }
        }
        if passkey.suspectSince != nil { throw Self.passkeySuspect }
        let verified: VerifiedAssertion
        do {
            verified = try WebAuthnVerifier(relyingParty: relyingParty).verifyAssertion(
                clientDataJSON: try bytes("clientDataJSON"), authenticatorData: try bytes("authenticatorData"), signature: try bytes("signature"),
                challenge: Array(challenge.challenge), publicKey: Array(passkey.publicKey), storedSignCount: UInt32(clamping: passkey.signCount),
                backupEligible: passkey.backupEligible)
        } catch let error as WebAuthnError {
            if error.step == .signCount {
                _ = try await store.usePasskey(id: passkey.id, signCount: 0, backedUp: passkey.backedUp, at: now)
                try await auditPasskeySuspect(passkey, tenant: tenant, detail: error.description, now: now)
                throw Self.passkeySuspect
            }
            throw Self.passkeyRefused(error.description)
        }
        switch try await store.usePasskey(id: passkey.id, signCount: Int64(verified.signCount), backedUp: verified.backedUp, at: now) {
        case .recorded: return (user, passkey)
        case .unknown: throw Self.passkeyUnknown
        case .refused:
            // Another sign-in moved the counter past this one meanwhile (or marked it suspect): a copy is in use.
            try await auditPasskeySuspect(passkey, tenant: tenant, detail: "the signature counter did not move forward", now: now)
            throw Self.passkeySuspect
        }
    }

    func auditPasskeySuspect(_ passkey: PasskeyRecord, tenant: TenantSnapshot, detail: String, now: Date) async throws {
        logger.warning("passkey marked suspect: its signature counter went backwards", metadata: [LogKeys.userId: .string(passkey.userId.rawValue)])
        try await store.appendAudit(
            AuditRecord(
                tenantId: tenant.tenant.id, at: now, actor: "user:\(passkey.userId)", action: .passkeySuspect, kind: .passkey,
                documentId: passkey.id.rawValue,
                before: nil,
                after: .object([
                    "userId": .string(passkey.userId.rawValue), "aaGuid": .string(passkey.aaguid.identifierText), "reason": .string(detail),
                ])))
    }
}
