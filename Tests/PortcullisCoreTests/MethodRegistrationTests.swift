import PortcullisCore
import Testing

@Suite("Registering a sign-in method (PROTOCOL §12.3)")
struct MethodRegistrationTests {
    static let office = NamedLocation(id: "a1000000-0000-4000-8000-00000000000a", displayName: "Office", ipRanges: ["203.0.113.0/24"], isTrusted: true)

    static func facts(ip: String?, methods: [String] = ["pwd"]) -> SignInFacts {
        SignInFacts(
            userId: "u-1", groupIds: [], clientAppId: "c-1", resourceAppId: "c-1", ipAddress: ip.flatMap(IPAddress.init),
            authentication: AuthenticationContext(methods: methods, time: nil))
    }

    @Test(
        "a first method with a password alone: from a trusted location by default, anywhere, or never; mfa (a pass) always; a method already there: verify first"
    )
    func rule() {
        let policies = CompiledPolicySet(policies: [], namedLocations: [Self.office])
        func refusal(_ facts: SignInFacts, hasMethod: Bool = false, _ setting: Tenant.PasswordOnlyRegistration?) -> MethodRegistration.Refusal? {
            MethodRegistration.refusal(facts, policies: policies, hasMethod: hasMethod, passwordOnly: setting)
        }
        #expect(refusal(Self.facts(ip: "203.0.113.9"), nil) == nil, "the default allows the office")
        #expect(refusal(Self.facts(ip: "198.51.100.1"), nil) == .firstMethodOutsideTrustedLocations)
        #expect(refusal(Self.facts(ip: nil), .trustedLocations) == .firstMethodOutsideTrustedLocations, "an unknown address is not trusted")
        #expect(refusal(Self.facts(ip: "198.51.100.1"), .anywhere) == nil)
        #expect(refusal(Self.facts(ip: "203.0.113.9"), .never) == .firstMethodNeedsPass)
        #expect(refusal(Self.facts(ip: "198.51.100.1", methods: ["tap", "mfa", "tap=once"]), .never) == nil, "a pass is mfa")
        #expect(refusal(Self.facts(ip: "203.0.113.9"), hasMethod: true, .anywhere) == .verifyFirst)
        #expect(refusal(Self.facts(ip: "203.0.113.9", methods: ["pwd", "mfa"]), hasMethod: true, nil) == nil)
        #expect(policies.isTrusted(IPAddress("203.0.113.200")) && !policies.isTrusted(IPAddress("203.0.114.1")) && !policies.isTrusted(nil))
    }
}
