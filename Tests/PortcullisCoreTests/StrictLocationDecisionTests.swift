import Foundation
import PortcullisCore
import Testing

/// PROTOCOL §17: `sessionControls.continuousAccessEvaluation` — strict location enforcement in the decision and the
/// token's plan, and `disabled`.
@Suite("strict location enforcement and CAE disabled (continuousAccessEvaluation)")
struct StrictLocationDecisionTests {
    /// A policy for everyone on everything that only sets the CAE session control.
    static func evaluationPolicy(_ n: Int, mode: String, state: String = "enabled") -> JSONValue {
        CA.json([
            "id": CA.id(n), "displayName": "CAE \(n)", "state": state,
            "conditions": ["users": ["includeUsers": ["All"]], "applications": ["includeApplications": ["All"]]],
            "grantControls": NSNull(),
            "sessionControls": [
                "continuousAccessEvaluation": [
                    "@odata.type": "#microsoft.graph.continuousAccessEvaluationSessionControl", "mode": mode,
                ]
            ],
        ])
    }

    static func outsideTrusted(_ n: Int, _ controls: [String], _ state: String) -> JSONValue {
        CA.policy(n, state: state, locations: ["All"], excludeLocations: ["AllTrusted"], controls: controls)
    }

    @Test("a policy escaped only by location, that the sign-in would not pass, is a constraint; one it would pass, or report-only, is not")
    func constraints() throws {
        let set = try CA.compile([
            Self.outsideTrusted(1, ["block"], "enabled"), Self.outsideTrusted(2, ["mfa"], "enabled"),
            Self.outsideTrusted(3, ["block"], "enabledForReportingButNotEnforced"),
            CA.policy(4, users: [CA.u2], locations: ["All"], excludeLocations: ["AllTrusted"], controls: ["block"]),
            Self.evaluationPolicy(5, mode: "strictLocation"),
        ])
        let office = set.evaluate(CA.facts(ip: "203.0.113.5"))
        #expect(office.refusal == nil && office.sessionControls.strictLocation)
        let hq = [IPRange("203.0.113.0/24")!]
        #expect(
            office.locationConstraints == [
                Decision.LocationConstraint(policyId: CA.id(1), include: [IPRange("::/0")!], exclude: hq),
                Decision.LocationConstraint(policyId: CA.id(2), include: [IPRange("::/0")!], exclude: hq),
            ])
        // With a second factor, the MFA policy would pass anywhere: no constraint from it.
        #expect(set.evaluate(CA.facts(ip: "203.0.113.5", mfa: true)).locationConstraints.map(\.policyId) == [CA.id(1)])
        // Outside the office the block applies: no token.
        #expect(set.evaluate(CA.facts(ip: "192.0.2.10")).refusal == .block(policyIds: [CA.id(1)]))
        // An included location: the resource refuses inside it (a country is not carried).
        let branch = try CA.compile([CA.policy(1, locations: [CA.branch], controls: ["block"])])
        #expect(
            branch.evaluate(CA.facts(ip: "192.0.2.10")).locationConstraints == [
                Decision.LocationConstraint(policyId: CA.id(1), include: [IPRange("198.51.100.0/24")!, IPRange("2001:db8:b::/48")!], exclude: [])
            ])
    }

    @Test("the token carries xms_sle only when a strict policy applied (ipaddr always, for a user); too many ranges hold it to its address")
    func plan() throws {
        func token(_ documents: [JSONValue], ip: String = "203.0.113.5", capabilities: [String] = [], cae: Bool = false) throws -> MintPlan {
            var resource = try #require(CA.directory.application(appId: AppID(CA.r1)))
            resource.continuousAccessEvaluation = cae
            let signIn = CA.facts(ip: ip)
            let facts = GrantFacts(
                grantType: .authorizationCode, tenant: CA.directory, client: try #require(CA.directory.application(appId: AppID(CA.approvedClient))),
                clientAuthenticated: false, user: CA.directory.user(id: ObjectID(CA.u1)),
                scope: ScopeRequest(resource: resource, audience: nil, resourceScopes: ["Read"], isDefault: false, oidc: []),
                scopeText: "Read", capabilities: ClaimsRequest(capabilities: capabilities), signIn: signIn, authentication: signIn.authentication,
                clientInfoRequested: false, now: Date(timeIntervalSince1970: 1_800_000_000))
            guard case .issue(let plan) = GrantDecision.decide(facts, policies: try CA.compile(documents), settings: GrantSettings()).outcome else {
                throw ExpectationFailure()
            }
            return plan
        }
        let block = Self.outsideTrusted(1, ["block"], "enabled")
        let strict = try token([block, Self.evaluationPolicy(2, mode: "strictLocation")])
        #expect(strict.accessToken.strictLocation == [MintPlan.StrictLocation(include: ["::/0"], exclude: ["203.0.113.0/24"])])
        #expect(strict.accessToken.ipAddress == "203.0.113.5")
        // Its older name does the same; without the control, or with a report-only one, nothing is carried.
        #expect(try token([block, Self.evaluationPolicy(2, mode: "strictEnforcement")]).accessToken.strictLocation != nil)
        for documents in [[block], [block, Self.evaluationPolicy(2, mode: "strictLocation", state: "enabledForReportingButNotEnforced")]] {
            let plain = try token(documents)
            #expect(plain.accessToken.strictLocation == nil && plain.accessToken.ipAddress == "203.0.113.5")
        }
        // A strict policy and no location policy: nothing to hold the token to.
        #expect(try token([Self.evaluationPolicy(2, mode: "strictLocation")]).accessToken.strictLocation == nil)
        // Past the bound, the strictest reading: this address alone.
        let many = (0..<300).map {
            Decision.LocationConstraint(policyId: CA.id(1), include: [IPRange("::/0")!], exclude: [IPRange("10.0.\($0 / 256).\($0 % 256)/32")!])
        }
        #expect(MintPlan.strictLocation(many, address: IPAddress("203.0.113.5")) == [MintPlan.StrictLocation(include: ["::/0"], exclude: ["203.0.113.5/32"])])
        #expect(MintPlan.strictLocation(many, address: nil) == [MintPlan.StrictLocation(include: ["::/0"], exclude: [])])
        #expect(MintPlan.strictLocation(Array(many.prefix(3)), address: nil).count == 3)
        // CAE disabled: a cp1 client's token for a CAE resource keeps the usual lifetime.
        let long = try token([], capabilities: ["cp1"], cae: true)
        let normal = try token([Self.evaluationPolicy(2, mode: "disabled")], capabilities: ["cp1"], cae: true)
        #expect(long.expiresIn > normal.expiresIn && normal.expiresIn == Int(GrantSettings().accessTokenLifetime), "\(long.expiresIn) \(normal.expiresIn)")
    }

    @Test("validated with pointers: an unknown mode, an unknown member")
    func validation() throws {
        for (control, pointer) in [
            (["mode": "sometimes"] as Any, "/sessionControls/continuousAccessEvaluation/mode"),
            (["mode": "disabled", "strict": true], "/sessionControls/continuousAccessEvaluation/strict"),
        ] {
            let document = CA.json([
                "id": CA.id(1), "displayName": "CAE", "state": "enabled",
                "conditions": ["users": ["includeUsers": ["All"]], "applications": ["includeApplications": ["All"]]],
                "grantControls": NSNull(), "sessionControls": ["continuousAccessEvaluation": control],
            ])
            do {
                _ = try CA.compile([document])
                Issue.record("accepted \(control)")
            } catch let error as ValidationError {
                #expect(error.problems.contains { $0.pointer == pointer }, "\(error.problems)")
            }
        }
    }
}

struct ExpectationFailure: Error {}
