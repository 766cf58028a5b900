import Foundation
import PortcullisCore
import Testing

/// `InteractiveDecision` as a table, as `GrantDecision` is tested: facts in, the next step out.
@Suite("InteractiveDecision: the next step of an interactive sign-in (PROTOCOL §9, §10, §12, §13)")
struct InteractiveDecisionTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func strengthPolicy(_ n: Int, strength: String) -> JSONValue {
        var document = CA.policy(n, controls: [])
        if case .object(var object) = document, case .object(var grant)? = object["grantControls"] {
            grant["authenticationStrength"] = ["id": .string(strength)]
            object["grantControls"] = .object(grant)
            document = .object(object)
        }
        return document
    }

    static func frequencyPolicy(_ n: Int, hours: Int) -> JSONValue {
        CA.json([
            "id": CA.id(n), "displayName": "F\(n)", "state": "enabled",
            "conditions": ["users": ["includeUsers": ["All"]], "applications": ["includeApplications": ["All"]]],
            "sessionControls": ["signInFrequency": ["isEnabled": true, "type": "hours", "value": hours, "frequencyInterval": "timeBased"]],
        ])
    }

    struct Case: Sendable, CustomStringConvertible {
        let name: String
        var policies: [JSONValue] = []
        var methods: [String] = ["pwd"]
        /// Seconds before now the primary authentication was given.
        var age: TimeInterval = 0
        var flow: InteractiveDecision.Flow = .authorize
        var silent = false
        var maximumAge: Int?
        var hasApp = false
        var passkeys = 0
        var passwordOnly: Tenant.PasswordOnlyRegistration? = .anywhere
        var ip = "192.0.2.10"
        let step: InteractiveDecision.Step
        var description: String { name }
    }

    static let cases: [Case] = [
        Case(name: "nothing asked: the code", step: .issue),
        Case(name: "a block", policies: [CA.policy(1, controls: ["block"])], step: .blocked(policyIds: [CA.id(1)])),
        Case(name: "mfa, the user has an app: the code", policies: [CA.policy(1, controls: ["mfa"])], hasApp: true, step: .enterCode),
        Case(name: "mfa, silently: interaction_required", policies: [CA.policy(1, controls: ["mfa"])], silent: true, hasApp: true, step: .interactionRequired),
        Case(name: "mfa already met", policies: [CA.policy(1, controls: ["mfa"])], methods: ["pwd", "mfa"], hasApp: true, step: .issue),
        Case(name: "mfa, no method, registration allowed: register an app", policies: [CA.policy(1, controls: ["mfa"])], step: .registerAuthenticatorApp),
        Case(
            name: "mfa, no method, a first method only from trusted places: refused with why", policies: [CA.policy(1, controls: ["mfa"])],
            passwordOnly: .trustedLocations, step: .registrationRefused(.firstMethodOutsideTrustedLocations)),
        Case(
            name: "mfa, from a trusted place: register", policies: [CA.policy(1, controls: ["mfa"])], passwordOnly: .trustedLocations, ip: "203.0.113.5",
            step: .registerAuthenticatorApp),
        Case(name: "mfa, a passkey but no app: the passkey", policies: [CA.policy(1, controls: ["mfa"])], passkeys: 1, step: .usePasskey(strengths: [])),
        Case(
            name: "mfa on the device page, a passkey but no app: no passkey there, and no second method with a password alone",
            policies: [CA.policy(1, controls: ["mfa"])], flow: .deviceCode, passkeys: 1, step: .registrationRefused(.verifyFirst)),
        Case(
            name: "a passkey strength, the user has one: the passkey",
            policies: [strengthPolicy(1, strength: AuthenticationStrengthPolicy.phishingResistant.id.rawValue)],
            passkeys: 2, step: .usePasskey(strengths: ["Phishing-resistant MFA"])),
        Case(
            name: "a passkey strength, a temporary access pass and no passkey: register one here",
            policies: [strengthPolicy(1, strength: AuthenticationStrengthPolicy.phishingResistant.id.rawValue)], methods: ["tap", "mfa", "tap=once"],
            step: .registerPasskey(strengths: ["Phishing-resistant MFA"])),
        Case(
            name: "a passkey strength, a password only and no passkey (password-only registration allowed): register one here",
            policies: [strengthPolicy(1, strength: AuthenticationStrengthPolicy.phishingResistant.id.rawValue)],
            step: .registerPasskey(strengths: ["Phishing-resistant MFA"])),
        Case(
            name: "a passkey strength, password and app code, no passkey, may not add a second method: asked for a passkey, told how",
            policies: [strengthPolicy(1, strength: AuthenticationStrengthPolicy.phishingResistant.id.rawValue)], methods: ["pwd"], hasApp: true,
            passwordOnly: .never, step: .usePasskey(strengths: ["Phishing-resistant MFA"])),
        Case(
            name: "a passkey strength on the device page: enforced at redemption",
            policies: [strengthPolicy(1, strength: AuthenticationStrengthPolicy.phishingResistant.id.rawValue)], flow: .deviceCode, step: .issue),
        Case(
            name: "a passkey strength, silently: interaction_required",
            policies: [strengthPolicy(1, strength: AuthenticationStrengthPolicy.phishingResistant.id.rawValue)], silent: true, passkeys: 1,
            step: .interactionRequired),
        Case(name: "a control for redemption (compliant app): the code", policies: [CA.policy(1, controls: ["compliantApplication"])], step: .issue),
        Case(name: "sign-in frequency met", policies: [frequencyPolicy(1, hours: 1)], age: 1800, step: .issue),
        Case(name: "sign-in frequency lapsed: sign in again", policies: [frequencyPolicy(1, hours: 1)], age: 7200, step: .signInAgain),
        Case(
            name: "sign-in frequency lapsed, silently: login_required", policies: [frequencyPolicy(1, hours: 1)], age: 7200, silent: true, step: .loginRequired),
        Case(
            name: "a recent code does not make an old password recent",
            policies: [frequencyPolicy(1, hours: 1)], methods: ["pwd", "mfa", "mfaat=\(Int(now.timeIntervalSince1970) - 60)"], age: 7200, step: .signInAgain),
        Case(
            name: "an old code makes a recent password count from the code",
            policies: [frequencyPolicy(1, hours: 1)], methods: ["pwd", "mfa", "mfaat=\(Int(now.timeIntervalSince1970) - 7200)"], age: 60, step: .signInAgain),
        Case(name: "max_age exceeded: sign in again", age: 600, maximumAge: 300, step: .signInAgain),
        Case(name: "max_age met", age: 100, maximumAge: 300, step: .issue),
    ]

    @Test(arguments: cases)
    func decide(_ row: Case) throws {
        var facts = CA.facts(user: CA.u1, ip: row.ip)
        facts.authentication = AuthenticationContext(methods: row.methods, time: Self.now.addingTimeInterval(-row.age))
        let result = InteractiveDecision.decide(
            InteractiveDecision.Facts(
                flow: row.flow, signIn: facts, now: Self.now, silent: row.silent, maximumAge: row.maximumAge,
                methods: .init(hasAuthenticatorApp: row.hasApp, passkeys: row.passkeys), passwordOnlyRegistration: row.passwordOnly),
            policies: try CA.compile(row.policies))
        #expect(result.step == row.step)
    }

    @Test("sign-in frequency refuses every grant that carries a user's authentication (70043), and what a code adds keeps the password's time")
    func grantFrequency() throws {
        let policies = try CA.compile([Self.frequencyPolicy(1, hours: 1)])
        let old = AuthenticationContext.password(at: Self.now.addingTimeInterval(-7200))
        #expect(old.addingCode(at: Self.now).time == old.time, "the factor keeps the primary's time")
        #expect(old.addingCode(at: Self.now).factorTime == Self.now, "and records its own")
        #expect(old.addingCode(at: Self.now).amr == ["pwd", "mfa"], "the marker never reaches a token")
        #expect(old.addingCode(at: Self.now).reauthenticationTime == old.time)
        for (authentication, refused) in [(old, true), (old.addingCode(at: Self.now), true), (AuthenticationContext.password(at: Self.now), false)] {
            var signIn = CA.facts(user: CA.u1)
            signIn.authentication = authentication
            let facts = GrantFacts(
                grantType: .authorizationCode, tenant: CA.directory, client: CA.directory.application(appId: AppID(CA.approvedClient))!,
                clientAuthenticated: false,
                user: CA.directory.user(id: ObjectID(CA.u1)),
                scope: ScopeRequest(resource: nil, audience: nil, resourceScopes: [], isDefault: false, oidc: [.openid]),
                scopeText: "openid", capabilities: ClaimsRequest(), signIn: signIn, authentication: authentication, clientInfoRequested: false, now: Self.now)
            let result = GrantDecision.decide(facts, policies: policies, settings: GrantSettings())
            if refused {
                guard case .refuse(let refusal) = result.outcome else {
                    Issue.record("expected a refusal")
                    continue
                }
                #expect(refusal.tokenError(baseURL: "x") == .signInFrequency)
            } else {
                guard case .issue = result.outcome else {
                    Issue.record("expected a token")
                    continue
                }
            }
        }
    }
}
