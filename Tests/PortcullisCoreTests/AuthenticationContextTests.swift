import Foundation
import PortcullisCore
import Testing

/// PROTOCOL §13: authentication contexts as documents, in policies, in the claims request, in the decision.
@Suite("authentication contexts")
struct AuthenticationContextTests {
    static let contexts = [
        AuthenticationContextClassReference(id: "c1", displayName: "Sensitive", isAvailable: true),
        AuthenticationContextClassReference(id: "c2", displayName: "Payroll", isAvailable: true),
        AuthenticationContextClassReference(id: "c3", displayName: "Draft", isAvailable: false),
        AuthenticationContextClassReference(id: "c10", displayName: "Admin", isAvailable: true),
    ]

    /// A policy for contexts: everyone, `controls`, optional session controls.
    static func contextPolicy(
        _ n: Int, contexts: [String], users: [String] = ["All"], controls: [String] = ["mfa"], state: String = "enabled", session: [String: Any]? = nil
    ) -> JSONValue {
        var document: [String: Any] = [
            "id": CA.id(n), "displayName": "Context \(n)", "state": state,
            "conditions": [
                "users": ["includeUsers": users], "applications": ["includeApplications": [], "includeAuthenticationContextClassReferences": contexts],
            ],
            "grantControls": ["operator": "OR", "builtInControls": controls],
        ]
        if let session { document["sessionControls"] = session }
        return CA.json(document)
    }

    static func compile(_ documents: [JSONValue]) throws -> CompiledPolicySet {
        let policies = try documents.map {
            try ConditionalAccessPolicy.parse($0, directory: CA.directory, contexts: contexts, generatedId: "x", force: true)
        }
        return CompiledPolicySet(policies: policies, namedLocations: CA.directory.namedLocations, contexts: contexts)
    }

    static func facts(contexts: [String] = [], mfa: Bool = false, user: String = CA.u1) -> SignInFacts {
        var facts = CA.facts(user: user, mfa: mfa)
        facts.authenticationContexts = contexts
        return facts
    }

    @Test("a context's policy applies only when the sign-in asks for the context, on top of the resource's policies")
    func appliesWhenAsked() throws {
        let set = try Self.compile([Self.contextPolicy(1, contexts: ["c1"]), CA.policy(2, apps: [CA.r1], controls: ["approvedApplication"])])
        let plain = set.evaluate(Self.facts())
        #expect(plain.refusal == nil)
        #expect(plain.authenticationContexts.isEmpty)
        #expect(plain.policies.map(\.id) == [CA.id(2)])  // the index never looked at the context's policy

        let asked = set.evaluate(Self.facts(contexts: ["c1"]))
        #expect(asked.refusal == .mfa(policyIds: [CA.id(1)]))
        #expect(asked.authenticationContexts.isEmpty)  // refused: nothing met
        #expect(Set(asked.policies.map(\.id)) == [CA.id(1), CA.id(2)])

        let stepped = set.evaluate(Self.facts(contexts: ["c1"], mfa: true))
        #expect(stepped.refusal == nil)
        #expect(stepped.acrs(authTime: nil, now: Date()) == ["c1"])
        #expect(stepped.authenticationContexts.first?.requested == true)
    }

    @Test("a context no policy targets is met when asked for (as in Entra); another context's policy does not apply")
    func untargetedContext() throws {
        let set = try Self.compile([Self.contextPolicy(1, contexts: ["c1"])])
        let decision = set.evaluate(Self.facts(contexts: ["c2"]))
        #expect(decision.refusal == nil)
        #expect(decision.acrs(authTime: nil, now: Date()) == ["c2"])
    }

    @Test("contexts this authentication already meets are added unasked; only where a policy applies and every applying one grants")
    func addedUnasked() throws {
        let set = try Self.compile([
            Self.contextPolicy(1, contexts: ["c1", "c10"]),
            Self.contextPolicy(2, contexts: ["c10"], users: [CA.u1], controls: ["block"]),
            Self.contextPolicy(3, contexts: ["c2"], state: "enabledForReportingButNotEnforced"),
        ])
        // u1 with mfa: c1 met; c10 blocked for u1; c2 only report-only (no enforced policy) → not added; c3 unavailable.
        #expect(set.evaluate(Self.facts(mfa: true)).acrs(authTime: nil, now: Date()) == ["c1"])
        // u2 with mfa: c1 and c10 (the block is u1's), in natural order (c10 after c1, not before c2).
        #expect(set.evaluate(Self.facts(mfa: true, user: CA.u2)).acrs(authTime: nil, now: Date()) == ["c1", "c10"])
        // Password only: none.
        #expect(set.evaluate(Self.facts(user: CA.u2)).acrs(authTime: nil, now: Date()).isEmpty)
        // Asked for c2 with mfa: c2 (asked) and c1, c10 (unasked).
        let decision = set.evaluate(Self.facts(contexts: ["c2"], mfa: true, user: CA.u2))
        #expect(decision.authenticationContexts.map(\.id) == ["c2", "c1", "c10"])
        #expect(decision.acrs(authTime: nil, now: Date()) == ["c1", "c2", "c10"])
    }

    @Test("a context added unasked keeps its sign-in frequency: an authentication older than it does not meet it")
    func unaskedFrequency() throws {
        let session: [String: Any] = ["signInFrequency": ["isEnabled": true, "frequencyInterval": "everyTime"]]
        let set = try Self.compile([Self.contextPolicy(1, contexts: ["c1"], session: session)])
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        var facts = Self.facts(mfa: true)
        facts.authentication.time = now.addingTimeInterval(-3600)
        let decision = set.evaluate(facts)
        #expect(decision.acrs(authTime: now.addingTimeInterval(-3600), now: now).isEmpty)
        #expect(decision.acrs(authTime: now.addingTimeInterval(-60), now: now) == ["c1"])  // within everyTime's 5-minute skew
        // Asked for, the frequency is the decision's: the caller refuses the grant (70043) or asks again on the page.
        facts.authenticationContexts = ["c1"]
        #expect(set.evaluate(facts).sessionControls.requiresReauthentication(authTime: now.addingTimeInterval(-3600), now: now))
    }

    @Test("requests for contexts the tenant does not offer, or from an application alone, are refused")
    func requests() throws {
        let set = try Self.compile([])
        #expect(throws: Never.self) { try set.checkRequested(contexts: ["c1", "c10"], appOnly: false) }
        #expect(throws: TokenError.self) { try set.checkRequested(contexts: ["c3"], appOnly: false) }  // not available
        #expect(throws: TokenError.self) { try set.checkRequested(contexts: ["c4"], appOnly: false) }  // not defined
        #expect(throws: TokenError.self) { try set.checkRequested(contexts: ["c1"], appOnly: true) }
        #expect(throws: Never.self) { try set.checkRequested(contexts: [], appOnly: true) }
    }

    @Test("acr_values asks for the offered contexts only (voluntary); the claims' own contexts are essential")
    func authorizationRequests() throws {
        let set = try Self.compile([])
        var request = AuthorizationRequest(
            tenantId: "t", clientId: "c", redirectUri: "r", scope: "s", state: nil, nonce: nil, codeChallenge: nil, responseMode: .query, prompt: nil,
            loginHint: nil, domainHint: nil, claims: ClaimsRequest(capabilities: ["cp1"]), platform: nil)
        request.acrValues = ["c10", "c3", "c4", "c1"]  // c3 unavailable, c4 undefined: ignored
        try set.resolveContexts(&request)
        #expect(request.acrValues == ["c10", "c1"] && request.claims?.authenticationContexts == ["c1", "c10"])
        #expect(request.claims?.capabilities == ["cp1"])
        var nothingOffered = request
        nothingOffered.acrValues = ["c3"]
        nothingOffered.claims = nil
        try set.resolveContexts(&nothingOffered)
        #expect(nothingOffered.acrValues == nil && nothingOffered.claims == nil)
        var essential = request
        essential.claims = ClaimsRequest(authenticationContexts: ["c3"])
        #expect(throws: TokenError.self) { try set.resolveContexts(&essential) }
    }

    @Test(
        "the acrs claims request: value, values, both; read back from its text",
        arguments: [
            (#"{"access_token":{"acrs":{"essential":true,"value":"c1"}}}"#, ["c1"]),
            (#"{"access_token":{"acrs":{"essential":true,"values":["c10","C2"]}}}"#, ["c2", "c10"]),
            (#"{"access_token":{"acrs":{"value":"c3","values":["c1","c3"]},"xms_cc":{"values":["cp1"]}}}"#, ["c1", "c3"]),
            (#"{"access_token":{"acrs":{"essential":true}}}"#, []),
        ])
    func claims(_ text: String, _ expected: [String]) throws {
        let parsed = try ClaimsRequest.parse(text)
        #expect(parsed.authenticationContexts == expected)
        #expect(try ClaimsRequest.parse(parsed.text) == parsed)
    }

    @Test(
        "malformed acrs requests are invalid_request",
        arguments: [
            #"{"access_token":{"acrs":"c1"}}"#, #"{"access_token":{"acrs":{"value":1}}}"#, #"{"access_token":{"acrs":{"values":"c1"}}}"#,
            #"{"access_token":{"acrs":{"value":"c0"}}}"#, #"{"access_token":{"acrs":{"value":"c100"}}}"#, #"{"access_token":{"acrs":{"value":"c01"}}}"#,
            #"{"access_token":{"acrs":{"value":"urn:x"}}}"#,
            #"{"access_token":{"acrs":{"values":[\#((1...17).map { "\"c\($0)\"" }.joined(separator: ","))]}}}"#,
        ])
    func malformedClaims(_ text: String) {
        #expect(throws: TokenError.self) { try ClaimsRequest.parse(text) }
    }

    @Test("documents: c1…c99, the lowest free number when none is given, pointers on every bad member")
    func documents() throws {
        let made = try AuthenticationContextClassReference.parse(CA.json(["displayName": "New", "isAvailable": true]), others: Self.contexts)
        #expect(made.id == "c4")
        #expect(made.isAvailable)
        let upper = try AuthenticationContextClassReference.parse(CA.json(["id": "C7", "displayName": "Seven"]), others: [])
        #expect(upper.id == "c7" && !upper.isAvailable)
        let error = try #require(
            throws: ValidationError.self,
            performing: {
                try AuthenticationContextClassReference.parse(
                    CA.json(["id": "c100", "isAvailable": "yes", "displayName": String(repeating: "x", count: 257), "extra": 1]), others: [])
            })
        #expect(Set(error.problems.map(\.pointer)) == ["/id", "/isAvailable", "/displayName", "/extra"])
        let full = (1...99).map { AuthenticationContextClassReference(id: "c\($0)", displayName: "\($0)", isAvailable: true) }
        #expect(throws: ValidationError.self) { try AuthenticationContextClassReference.parse(CA.json(["displayName": "100th"]), others: full) }
    }

    @Test("policies for contexts: only defined contexts, no applications, no app controls, no workload identities, not with user actions")
    func validation() throws {
        func problems(_ document: [String: Any]) -> [String] {
            do {
                _ = try ConditionalAccessPolicy.parse(CA.json(document), directory: CA.directory, contexts: Self.contexts, generatedId: "x", force: true)
                return []
            } catch { return error.problems.map(\.pointer) }
        }
        func base(_ applications: [String: Any], controls: [String] = ["mfa"]) -> [String: Any] {
            [
                "displayName": "x", "state": "enabled",
                "conditions": ["users": ["includeUsers": ["All"]], "applications": applications],
                "grantControls": ["operator": "OR", "builtInControls": controls],
            ]
        }
        #expect(problems(base(["includeAuthenticationContextClassReferences": ["c1", "C2"]])).isEmpty)
        #expect(problems(base(["includeAuthenticationContextClassReferences": ["c3"]])).isEmpty)  // unavailable: policies may target it
        #expect(
            problems(base(["includeAuthenticationContextClassReferences": ["c9"]])) == [
                "/conditions/applications/includeAuthenticationContextClassReferences/0"
            ])
        #expect(
            problems(base(["includeApplications": [CA.r1], "includeAuthenticationContextClassReferences": ["c1"]]))
                == ["/conditions/applications/includeApplications"])
        #expect(problems(base(["includeAuthenticationContextClassReferences": ["c1"]], controls: ["compliantApplication"])) == ["/grantControls"])
        #expect(
            problems(base(["includeUserActions": ["urn:user:registersecurityinfo"], "includeAuthenticationContextClassReferences": ["c1"]]))
                == ["/conditions/applications/includeAuthenticationContextClassReferences"])
        let policy = try ConditionalAccessPolicy.parse(
            CA.json(base(["includeAuthenticationContextClassReferences": ["C1"]])), directory: CA.directory, contexts: Self.contexts, generatedId: "x")
        #expect(policy.refers(toContext: "c1") && !policy.refers(toContext: "c2"))
        // The lock-out guard leaves context policies alone: only sign-ins that ask for the context meet them (on the page).
        let none = ConditionalAccessPolicy.RegisteredMethods(anyFactor: [], passkey: [])
        #expect(policy.factorLockoutWarning(directory: CA.directory, registered: none) == nil)
        let everyone = try ConditionalAccessPolicy.parse(
            CA.json(base(["includeApplications": ["All"]])), directory: CA.directory, generatedId: "x")
        #expect(everyone.factorLockoutWarning(directory: CA.directory, registered: none) != nil, "the same controls for applications do warn")
        // Stored and read back unchanged.
        #expect(try JSONDecoder().decode(ConditionalAccessPolicy.self, from: JSONEncoder().encode(policy)) == policy)
    }

    @Test("what a sign-in record keeps: asked-for contexts as required, the others as previously satisfied; impact replays the ask")
    func record() throws {
        let record = SignInRecord(
            id: "r", createdDateTime: Date(), correlationId: "c", tenantId: CA.directory.tenant.id, userId: ObjectID(CA.u1), userPrincipalName: nil,
            clientAppId: AppID(CA.approvedClient), resourceAppId: AppID(CA.r1), resource: nil, grantType: "refresh_token",
            clientAppType: "mobileAppsAndDesktopClients",
            capabilities: [], ipAddress: nil, platform: nil, appProtection: "none", conditionalAccessStatus: .success, appliedConditionalAccessPolicies: [],
            errorCode: nil, authenticationMethods: ["pwd", "mfa"], authenticationContexts: ["c2"], met: ["c1", "c2"])
        #expect(
            record.authenticationContextClassReferences == [.init(id: "c2", detail: .required), .init(id: "c1", detail: .previouslySatisfied)])
        #expect(ImpactAnalysis.facts(of: record, directory: CA.directory).authenticationContexts == ["c2"])
    }
}
