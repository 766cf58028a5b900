import Foundation
import PortcullisCore
import Testing

/// On-behalf-of (PROTOCOL §21) in Core: who may exchange a user's token, what a refusal tells the calling API, and the
/// claims challenge (`polids`) that makes a sign-in meet a downstream API's policy.
@Suite("On-behalf-of: the exchange's rules and its claims challenge")
struct OnBehalfOfTests {
    static func assertion(_ edit: (inout OnBehalfOf.Assertion) -> Void = { _ in }) -> OnBehalfOf.Assertion {
        var assertion = OnBehalfOf.Assertion(
            tokenId: "t-1", audience: CA.r1, delegated: true, objectId: CA.u1, methods: ["pwd", "mfa"], authTime: nil,
            issuedAt: Date(timeIntervalSince1970: 1_800_000_000), deviceId: nil, ipAddress: "198.51.100.7", authenticationContexts: [])
        edit(&assertion)
        return assertion
    }

    static func code(_ assertion: OnBehalfOf.Assertion, caller: String = CA.r1, directory: DirectorySnapshot = CA.directory) -> Int? {
        do {
            _ = try OnBehalfOf.user(of: assertion, caller: try #require(directory.application(appId: AppID(caller))), in: directory)
            return nil
        } catch let error as TokenError {
            return error.aadsts
        } catch {
            return -1
        }
    }

    @Test("the calling API exchanges a user's token whose audience it is (by app ID or identifier URI), of an enabled user")
    func whoMayExchange() throws {
        let caller = try #require(CA.directory.application(appId: AppID(CA.r1)))
        #expect(try OnBehalfOf.user(of: Self.assertion(), caller: caller, in: CA.directory).id == ObjectID(CA.u1))
        #expect(Self.code(Self.assertion { $0.audience = "api://r1" }) == nil)
        #expect(Self.code(Self.assertion { $0.audience = CA.r2 }) == 50013)
        #expect(Self.code(Self.assertion { $0.audience = "api://r2" }) == 50013)
        #expect(Self.code(Self.assertion(), caller: CA.r2) == 50013)
        #expect(Self.code(Self.assertion { $0.delegated = false }) == 50013)
        #expect(Self.code(Self.assertion { $0.objectId = nil }) == 50013)
        #expect(Self.code(Self.assertion { $0.objectId = "a0000000-0000-4000-8000-0000000000ff" }) == 50034)
        var users = CA.directory.users
        users[0].accountEnabled = false
        let disabled = DirectorySnapshot(
            tenant: CA.directory.tenant, revision: 2, users: users, groups: CA.directory.groups, applications: CA.directory.applications,
            appRoleAssignments: [], namedLocations: CA.directory.namedLocations)
        #expect(Self.code(Self.assertion(), directory: disabled) == 50057)
        // The original sign-in's authentication: its amr and time (the token's issue time when it names none).
        #expect(Self.assertion().authentication == AuthenticationContext(methods: ["pwd", "mfa"], time: Date(timeIntervalSince1970: 1_800_000_000)))
        #expect(Self.assertion { $0.methods = [] }.authentication.methods == ["pwd"])
    }

    @Test("a control the user can meet becomes interaction_required with claims naming the policies; a block stays")
    func challenge() throws {
        let mfa = OnBehalfOf.challenge(.mfaRequired, refusal: .mfa(policyIds: [CA.id(1)]), failedPolicies: [CA.id(1), CA.id(2)])
        #expect(mfa.code == .interactionRequired && mfa.aadsts == TokenError.mfaRequired.aadsts)
        let claims = try #require(mfa.claims.flatMap { JSONValue.parse(Data($0.utf8)) })
        #expect(claims == ["access_token": ["polids": ["essential": true, "values": [.string(CA.id(1)), .string(CA.id(2))]]]])
        // The claims read back as a claims request naming the policies.
        #expect(try ClaimsRequest.parse(try #require(mfa.claims)).policyIds == [CA.id(1), CA.id(2)])
        let block = OnBehalfOf.challenge(.blockedByConditionalAccess, refusal: .block(policyIds: [CA.id(3)]), failedPolicies: [CA.id(3)])
        #expect(block == .blockedByConditionalAccess && block.claims == nil)
    }

    @Test("a policy a claims challenge names applies to a sign-in for another application, for users only")
    func challengedPolicies() throws {
        let policies = try CA.compile([CA.policy(1, apps: [CA.r2], controls: ["mfa"])])
        // A sign-in for r1: the r2 policy does not apply, unless a claims challenge names it.
        #expect(policies.evaluate(CA.facts(resource: CA.r1)).refusal == nil)
        var challenged = CA.facts(resource: CA.r1)
        challenged.challengedPolicies = [CA.id(1)]
        #expect(kind(policies.evaluate(challenged).refusal) == "mfa")
        var met = CA.facts(resource: CA.r1, mfa: true)
        met.challengedPolicies = [CA.id(1)]
        #expect(policies.evaluate(met).status == .success)
        // Another policy named, or the policy's user conditions not met: nothing applies.
        var other = CA.facts(resource: CA.r1)
        other.challengedPolicies = [CA.id(9)]
        #expect(policies.evaluate(other).refusal == nil)
        let forU2 = try CA.compile([CA.policy(1, users: [CA.u2], apps: [CA.r2], controls: ["mfa"])])
        #expect(forU2.evaluate(challenged).refusal == nil)
        // An app-only sign-in is never challenged into a user's policy.
        var appOnly = CA.facts(user: nil, client: CA.daemon, resource: CA.r1)
        appOnly.challengedPolicies = [CA.id(1)]
        #expect(policies.evaluate(appOnly).refusal == nil)
        // The claims parameter carries them.
        let request = try ClaimsRequest.parse(#"{"access_token":{"polids":{"essential":true,"values":["\#(CA.id(1).uppercased())"]}}}"#)
        #expect(request.policyIds == [CA.id(1)])
        #expect(try ClaimsRequest.parse(request.text) == request)
    }
}
