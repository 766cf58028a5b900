public import Foundation

/// The one decision of an interactive sign-in (PROTOCOL §9, §10, §12, §13), the mirror of `GrantDecision`: a pure
/// function from the page's facts — who signed in and how, what the user holds, what the request asks — to the next step:
/// sign in again, stop (a block), a code, a passkey, a method to register, or the code (or device approval) itself. The
/// authorize page, the device page, the factor page and Security info gather their facts, ask this, and carry out the
/// answer; no page decides conditional access itself.
public enum InteractiveDecision {
    /// Which page asks.
    public enum Flow: Sendable, Equatable {
        /// `/authorize` (and the pages that continue it: the factor, the passkey).
        case authorize
        /// `/devicelogin`: approving a device code (no passkey ceremony there; a strength only a passkey meets is enforced
        /// when the device redeems its code).
        case deviceCode
    }

    /// What the user holds.
    public struct Methods: Sendable, Equatable {
        public var hasAuthenticatorApp: Bool
        /// Passkeys that may sign in (not suspect).
        public var passkeys: Int

        public init(hasAuthenticatorApp: Bool, passkeys: Int) {
            self.hasAuthenticatorApp = hasAuthenticatorApp
            self.passkeys = passkeys
        }
    }

    public struct Facts: Sendable {
        public var flow: Flow
        /// The conditional-access facts (`SignInFacts.Input`), the authentication so far in them.
        public var signIn: SignInFacts
        public var now: Date
        /// `prompt=none`: no page may be shown; a step the user must take is `login_required` or `interaction_required`.
        public var silent: Bool
        /// The request's `max_age` (OIDC Core §3.1.2.1), in seconds.
        public var maximumAge: Int?
        public var methods: Methods
        /// The tenant's rule for a first method with a password alone (PROTOCOL §12.3).
        public var passwordOnlyRegistration: Tenant.PasswordOnlyRegistration?
        /// Whether the page knows the device for good (PROTOCOL §18): the browser answered the page's PKeyAuth challenge
        /// (a device, or none), or the client is a web app, whose code is redeemed by its server and not by the device.
        /// Otherwise an app on the device may still prove it when it redeems the code, so a refusal for the device waits
        /// for that, as app protection does.
        public var deviceSettled = false

        /// Whether the page knows the device for good (`deviceSettled`): the browser answered the page's PKeyAuth challenge,
        /// or `client` is a web app (a confidential client: its server redeems the code, no device can prove itself later).
        public static func deviceSettled(answered: AuthorizationRequest.DeviceProof?, client: Application) -> Bool {
            answered != nil || !client.publicClient
        }

        public init(
            flow: Flow, signIn: SignInFacts, now: Date, silent: Bool = false, maximumAge: Int? = nil, methods: Methods,
            passwordOnlyRegistration: Tenant.PasswordOnlyRegistration? = nil
        ) {
            self.flow = flow
            self.signIn = signIn
            self.now = now
            self.silent = silent
            self.maximumAge = maximumAge
            self.methods = methods
            self.passwordOnlyRegistration = passwordOnlyRegistration
        }
    }

    /// The next step.
    public enum Step: Sendable, Equatable {
        /// Sign in again (a sign-in frequency or `max_age` the authentication no longer meets): the sign-in page, the
        /// user's name filled in.
        case signInAgain
        /// `prompt=none` and the user must sign in: `login_required`.
        case loginRequired
        /// `prompt=none` and the user must add a factor: `interaction_required`.
        case interactionRequired
        /// A policy blocks the sign-in (53003).
        case blocked(policyIds: [String])
        /// The authenticator-app code.
        case enterCode
        /// A first authenticator app, registered here (the user may register one now).
        case registerAuthenticatorApp
        /// One of the user's passkeys; `strengths` name what asks for it (the page says so).
        case usePasskey(strengths: [String])
        /// A passkey registered here and used at once: the user has none, a strength asks for one, and they may register
        /// now (a temporary access pass, a sign-in allowed to register) — Entra's onboarding, then on to the app.
        case registerPasskey(strengths: [String])
        /// Terms of use to accept (PROTOCOL §17): the agreements, in the policies' order, not yet accepted or expired.
        case acceptTerms(agreementIds: [PolicyID])
        /// A secure password change (PROTOCOL §19): every other control is met, and the user's risk asks for a new password.
        case changePassword
        /// What is asked needs a method the user does not have and may not register here: why.
        case registrationRefused(MethodRegistration.Refusal)
        /// The device does not meet a device control (53000 compliant, 53001 hybrid joined) and nothing later can prove
        /// another: the page says so (`prompt=none`: the error goes to the app).
        case deviceRefused
        /// Issue the code (or approve the device code). Controls decided at redemption (app protection, approved apps, token
        /// protection, a device the app proves then) are enforced there.
        case issue
    }

    public struct Result: Sendable, Equatable {
        public var decision: Decision
        public var step: Step
    }

    public static func decide(_ facts: Facts, policies: CompiledPolicySet) -> Result {
        var decision = policies.evaluate(facts.signIn)
        let authentication = facts.signIn.authentication
        let tooOld: Bool = {
            if let maximumAge = facts.maximumAge, let time = authentication.time, facts.now.timeIntervalSince(time) > TimeInterval(maximumAge) {
                return true
            }
            return decision.sessionControls.requiresReauthentication(authTime: authentication.reauthenticationTime, now: facts.now)
        }()
        if tooOld {
            if decision.refusal == nil {
                decision.refusal = .signInFrequency
                decision.status = .failure
            }
            return Result(decision: decision, step: facts.silent ? .loginRequired : .signInAgain)
        }
        switch decision.refusal {
        case nil:
            return Result(decision: decision, step: .issue)
        case .block(let policyIds):
            return Result(decision: decision, step: .blocked(policyIds: policyIds))
        case let refusal? where policies.codeMissing(facts.signIn, refusal: refusal):
            if facts.silent { return Result(decision: decision, step: .interactionRequired) }
            if facts.methods.hasAuthenticatorApp { return Result(decision: decision, step: .enterCode) }
            // A passkey holder without an app signs in with the passkey (it meets what a code would).
            if facts.methods.passkeys > 0, facts.flow == .authorize { return Result(decision: decision, step: .usePasskey(strengths: [])) }
            if let refused = registrationRefusal(facts, policies: policies, hasMethod: facts.methods.passkeys > 0) {
                return Result(decision: decision, step: .registrationRefused(refused))
            }
            return Result(decision: decision, step: .registerAuthenticatorApp)
        case .authenticationStrength(let policyIds):
            // A strength that only a passkey meets.
            guard facts.flow == .authorize else { return Result(decision: decision, step: .issue) }
            if facts.silent { return Result(decision: decision, step: .interactionRequired) }
            let names = policies.strengths(ofPolicies: policyIds).map(\.displayName)
            if facts.methods.passkeys > 0 { return Result(decision: decision, step: .usePasskey(strengths: names)) }
            let hasMethod = facts.methods.hasAuthenticatorApp
            if registrationRefusal(facts, policies: policies, hasMethod: hasMethod) == nil {
                return Result(decision: decision, step: .registerPasskey(strengths: names))
            }
            return Result(decision: decision, step: .usePasskey(strengths: names))
        case .termsOfUse(let policyIds):
            if facts.silent { return Result(decision: decision, step: .interactionRequired) }
            let missing = policies.agreements(ofPolicies: policyIds.map { PolicyID($0) }).filter { !facts.signIn.acceptedAgreements.contains($0) }
            return Result(decision: decision, step: missing.isEmpty ? .issue : .acceptTerms(agreementIds: missing))
        case .compliantDevice, .domainJoinedDevice:
            return Result(decision: decision, step: facts.deviceSettled ? .deviceRefused : .issue)
        case .riskRemediation:
            // Multi-factor already, but from before the risk was raised (a session's): a new sign-in remediates.
            return Result(decision: decision, step: facts.silent ? .loginRequired : .signInAgain)
        case .passwordChange:
            return Result(decision: decision, step: facts.silent ? .interactionRequired : .changePassword)
        case .some:
            return Result(decision: decision, step: .issue)
        }
    }

    /// The sign-in log's record of a sign-in the page ended (a block): recorded once, by the page — one that gets its code is
    /// recorded when the code is redeemed (`GrantDecision.signInRecord`).
    public static func signInRecord(
        _ facts: Facts, decision: Decision, user: User, tenantId: String, errorCode: Int, id: String, correlationId: String
    ) -> SignInRecord {
        let signIn = facts.signIn
        var record = SignInRecord(
            id: id, createdDateTime: facts.now, correlationId: correlationId, tenantId: TenantID(tenantId), userId: user.id,
            userPrincipalName: user.userPrincipalName, clientAppId: signIn.clientAppId, resourceAppId: signIn.resourceAppId,
            resource: signIn.resourceAppId.rawValue,
            grantType: facts.flow == .deviceCode ? GrantType.deviceCode.rawValue : GrantType.authorizationCode.rawValue,
            clientAppType: signIn.clientAppType.rawValue, capabilities: signIn.capabilities, ipAddress: signIn.ipAddress?.description,
            platform: signIn.platform?.rawValue, appProtection: signIn.appProtection.label, conditionalAccessStatus: decision.status,
            appliedConditionalAccessPolicies: decision.policies, errorCode: errorCode, authenticationMethods: signIn.authentication.methods,
            authenticationContexts: signIn.authenticationContexts)
        record.countryOrRegion = signIn.country
        record.isInteractive = true
        record.originalTransferMethod = signIn.transferMethod
        record.deviceDetail = signIn.device.map(SignInRecord.DeviceDetail.init)
        record.record(risk: signIn.risk)
        return record
    }

    /// Whether the user may register a method now (`MethodRegistration`), as the page's sign-in stands.
    static func registrationRefusal(_ facts: Facts, policies: CompiledPolicySet, hasMethod: Bool) -> MethodRegistration.Refusal? {
        MethodRegistration.refusal(facts.signIn, policies: policies, hasMethod: hasMethod, passwordOnly: facts.passwordOnlyRegistration)
    }
}
