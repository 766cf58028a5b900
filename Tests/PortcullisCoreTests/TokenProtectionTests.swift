import Foundation
import PortcullisCore
import Testing

/// PROTOCOL §15: `sessionControls.secureSignInSession` (token protection) in the decision.
@Suite("token protection (secureSignInSession)")
struct TokenProtectionTests {
    static func policy(_ n: Int, state: String = "enabled", controls: [String]? = nil, secure: Any = ["isEnabled": true]) -> JSONValue {
        var document: [String: Any] = [
            "id": CA.id(n), "displayName": "Token protection \(n)", "state": state,
            "conditions": ["users": ["includeUsers": ["All"]], "applications": ["includeApplications": ["All"]]],
            "sessionControls": ["secureSignInSession": secure],
        ]
        document["grantControls"] = controls.map { ["operator": "OR", "builtInControls": $0] } ?? NSNull()
        return CA.json(document)
    }

    static func facts(bound: Bool, mfa: Bool = false) -> SignInFacts {
        var facts = CA.facts(mfa: mfa)
        facts.proofOfPossession = bound
        return facts
    }

    @Test("an unbound request fails the policy and is refused tokenProtection; a bound one succeeds; the control's result is explained")
    func enforced() throws {
        let set = try CA.compile([Self.policy(1)])
        let unbound = set.evaluate(Self.facts(bound: false), explain: true)
        #expect(unbound.refusal == .tokenProtection(policyIds: [CA.id(1)]) && unbound.status == .failure)
        #expect(unbound.policies.first?.grantControlResults?.first { $0.control == "secureSignInSession" }?.satisfied == false)
        let bound = set.evaluate(Self.facts(bound: true), explain: true)
        #expect(bound.refusal == nil && bound.status == .success && bound.sessionControls.requiresTokenProtection)
        #expect(bound.policies.first?.enforcedSessionControls == ["SecureSignInSession"])
    }

    @Test("grant controls are asked for first; block wins; report-only only reports; isEnabled false enforces nothing")
    func ordering() throws {
        let withMFA = try CA.compile([Self.policy(1, controls: ["mfa"])])
        #expect(withMFA.evaluate(Self.facts(bound: false)).refusal == .mfa(policyIds: [CA.id(1)]))
        #expect(withMFA.evaluate(Self.facts(bound: false, mfa: true)).refusal == .tokenProtection(policyIds: [CA.id(1)]))
        #expect(withMFA.evaluate(Self.facts(bound: true, mfa: true)).refusal == nil)
        let blocked = try CA.compile([Self.policy(1), CA.policy(2, controls: ["block"])])
        #expect(blocked.evaluate(Self.facts(bound: false)).refusal == .block(policyIds: [CA.id(2)]))
        let reportOnly = try CA.compile([Self.policy(1, state: "enabledForReportingButNotEnforced")])
        let reported = reportOnly.evaluate(Self.facts(bound: false))
        #expect(reported.refusal == nil && reported.policies.first?.result == .reportOnlyFailure)
        let disabled = try CA.compile([Self.policy(1, controls: ["mfa"], secure: ["isEnabled": false])])
        #expect(disabled.evaluate(Self.facts(bound: false, mfa: true)).refusal == nil)
    }

    @Test("validated with pointers: unknown members, a non-boolean isEnabled")
    func validation() throws {
        for (secure, pointer) in [
            (["on": true] as Any, "/sessionControls/secureSignInSession/on"), (["isEnabled": "yes"], "/sessionControls/secureSignInSession/isEnabled"),
        ] {
            #expect(throws: ValidationError.self) { try CA.compile([Self.policy(1, secure: secure)]) }
            do {
                _ = try CA.compile([Self.policy(1, secure: secure)])
            } catch let error as ValidationError {
                #expect(error.problems.contains { $0.pointer == pointer }, "\(error.problems)")
            }
        }
    }

    @Test("the lock-out guard warns about an enabled policy for All users and All applications, not a targeted or report-only one")
    func lockoutGuard() throws {
        func warnings(_ document: JSONValue) throws -> [ValidationProblem] {
            try ConditionalAccessPolicy.parse(document, directory: CA.directory, generatedId: "x", force: true).lockoutWarnings(
                directory: CA.directory, registered: .init(anyFactor: [], passkey: []), protectedApps: [])
        }
        #expect(try warnings(Self.policy(1)).contains { $0.pointer == "/sessionControls/secureSignInSession" })
        #expect(try warnings(Self.policy(1, state: "enabledForReportingButNotEnforced")).isEmpty)
        var targeted = Self.policy(1)
        if case .object(var document) = targeted, case .object(var conditions)? = document["conditions"] {
            conditions["applications"] = .object(["includeApplications": .array([.string(CA.r1)])])
            document["conditions"] = .object(conditions)
            targeted = .object(document)
        }
        #expect(try warnings(targeted).isEmpty)
    }

    @Test("impact replays whether a recorded sign-in was bound")
    func impactReplay() throws {
        let record = SignInRecord(
            id: "s1", createdDateTime: Date(timeIntervalSince1970: 0), correlationId: "c", tenantId: CA.directory.tenant.id, userId: ObjectID(CA.u1),
            userPrincipalName: nil, clientAppId: AppID(CA.approvedClient), resourceAppId: AppID(CA.r1), resource: nil, grantType: "password",
            clientAppType: "mobileAppsAndDesktopClients", capabilities: [], ipAddress: nil, platform: nil, appProtection: "none",
            conditionalAccessStatus: .notApplied, appliedConditionalAccessPolicies: [], errorCode: nil)
        var bound = record
        bound.tokenProtectionStatusDetails = SignInRecord.TokenProtectionStatus(bound: true)
        #expect(ImpactAnalysis.facts(of: bound, directory: CA.directory).proofOfPossession)
        #expect(!ImpactAnalysis.facts(of: record, directory: CA.directory).proofOfPossession)
    }
}
