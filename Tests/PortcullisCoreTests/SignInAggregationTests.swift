import Foundation
import PortcullisCore
import Testing

/// The sign-in log a busy tenant can keep (issue 32): which records are counted together, the compact form, and the
/// property that impact analysis over aggregates says what it says over the sign-ins they replaced.
@Suite("sign-in aggregation (issue 32)")
struct SignInAggregationTests {
    static let at = Date(timeIntervalSince1970: 1_800_000_000)

    static func record(
        _ n: Int, grant: GrantType = .refreshToken, user: String? = CA.u1, offset: TimeInterval = 0, status: Decision.Status = .success,
        errorCode: Int? = nil, policies: [Decision.AppliedPolicy] = [], interactive: Bool? = nil
    ) -> SignInRecord {
        var record = SignInRecord(
            id: "s\(n)", createdDateTime: at.addingTimeInterval(offset), correlationId: "c\(n)", tenantId: CA.directory.tenant.id,
            userId: user.map { ObjectID($0) },
            userPrincipalName: user.map { "\($0)@ca.test" }, clientAppId: AppID(CA.approvedClient), resourceAppId: AppID(CA.r1), resource: "api://r1",
            grantType: grant.rawValue, clientAppType: "mobileAppsAndDesktopClients", capabilities: [], ipAddress: "192.0.2.10", platform: "iOS",
            appProtection: "none", conditionalAccessStatus: status, appliedConditionalAccessPolicies: policies, errorCode: errorCode,
            authenticationMethods: ["pwd"])
        record.isInteractive = interactive ?? (grant == .password || grant == .authorizationCode || grant == .deviceCode)
        return record
    }

    static func policy(_ id: String, _ result: Decision.PolicyResult) -> Decision.AppliedPolicy {
        Decision.AppliedPolicy(
            id: id, displayName: "Policy \(id)", result: result, enforcedGrantControls: result == .notApplied ? [] : ["mfa"],
            conditionsNotSatisfied: result == .notApplied ? [.users] : [])
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        encoder.dateEncodingStrategy = .secondsSince1970
        return encoder
    }()

    static func key(_ record: SignInRecord) -> String { String(decoding: try! encoder.encode(SignInAggregation.facts(of: record)), as: UTF8.self) }

    @Test("kept one by one: interactive sign-ins, refusals, report-only refusals; counted: non-interactive successes")
    func classification() {
        #expect(SignInAggregation.isAggregatable(Self.record(1)))
        #expect(SignInAggregation.isAggregatable(Self.record(1, grant: .clientCredentials, user: nil)))
        #expect(SignInAggregation.isAggregatable(Self.record(1, grant: .authorizationCode, interactive: false)), "a silent SSO code")
        #expect(SignInAggregation.isAggregatable(Self.record(1, status: .notApplied)))
        #expect(!SignInAggregation.isAggregatable(Self.record(1, grant: .password)))
        #expect(!SignInAggregation.isAggregatable(Self.record(1, grant: .authorizationCode)))
        #expect(!SignInAggregation.isAggregatable(Self.record(1, status: .failure, errorCode: 53003)))
        #expect(!SignInAggregation.isAggregatable(Self.record(1, errorCode: 70043)), "a refresh refused for another reason")
        #expect(!SignInAggregation.isAggregatable(Self.record(1, policies: [Self.policy("p", .reportOnlyFailure)])))
        var old = Self.record(1)
        old.isInteractive = nil  // written before the member existed: the grant type says
        #expect(!old.interactive && Self.record(1, grant: .deviceCode).interactive)
    }

    @Test("a batch: one aggregate per facts and window, with the first record, the count and the last one; the rest one by one")
    func batches() throws {
        let records = [
            Self.record(1, offset: 10), Self.record(2, offset: 5), Self.record(3, offset: 3599),  // one window, out of order
            Self.record(4, offset: 3600),  // the next window
            Self.record(5, user: CA.u2, offset: 20),  // other facts
            Self.record(6, grant: .password, offset: 30), Self.record(7, offset: 40, status: .failure, errorCode: 53003),
        ]
        let entries = SignInAggregation.aggregate(records, window: 3600, key: Self.key)
        let (individual, aggregates) = (entries.records, entries.aggregates)
        #expect(individual.map(\.id) == ["s6", "s7"])
        // In the batch's order, an aggregate where its first sign-in came.
        #expect(entries.map { if case .record(let record) = $0 { record.id } else { "aggregate" } } == ["aggregate", "aggregate", "aggregate", "s6", "s7"])
        #expect(aggregates.map(\.count) == [3, 1, 1])
        let first = try #require(aggregates.first)
        #expect(first.first.id == "s2" && first.lastCorrelationId == "c3" && first.lastDateTime == Self.at.addingTimeInterval(3599))
        #expect(first.windowStart == Self.at && aggregates[1].windowStart == Self.at.addingTimeInterval(3600))
        #expect(first.record.aggregate == SignInRecord.Aggregate(count: 3, lastDateTime: Self.at.addingTimeInterval(3599), lastCorrelationId: "c3"))
        #expect(first.record.count == 3 && first.record.lastDateTime == Self.at.addingTimeInterval(3599))
        // A window of 0 counts nothing together.
        #expect(SignInAggregation.aggregate(records, window: 0, key: Self.key).records.count == records.count)
    }

    @Test("compact: results only for the policies that applied or would have, without names or unmet conditions")
    func compact() {
        let record = Self.record(
            1,
            policies: [
                Self.policy("a", .success), Self.policy("b", .notApplied), Self.policy("c", .notEnabled), Self.policy("d", .reportOnlySuccess),
                Self.policy("e", .reportOnlyNotApplied), Self.policy("f", .failure), Self.policy("g", .reportOnlyFailure),
            ])
        let compact = SignInAggregation.compacted(record)
        #expect(compact.appliedConditionalAccessPolicies.map(\.id) == ["a", "d", "f", "g"])
        #expect(compact.appliedConditionalAccessPolicies.allSatisfy { $0.displayName.isEmpty && $0.conditionsNotSatisfied.isEmpty })
        #expect(compact.appliedConditionalAccessPolicies.allSatisfy { $0.enforcedGrantControls == ["mfa"] })
        // Facts: the same for two sign-ins that differ only in identity and time.
        #expect(Self.key(Self.record(1, offset: 1)) == Self.key(Self.record(2, offset: 99)))
        #expect(Self.key(Self.record(1)) != Self.key(Self.record(1, user: CA.u2)))
    }

    // MARK: Impact replay over aggregates

    /// A small deterministic generator (SplitMix64).
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static let current = [
        CA.policy(1, users: [], groups: [CA.gB], apps: [CA.r2], controls: ["block"]),
        CA.policy(2, apps: [CA.r1], controls: ["mfa"]),
    ]
    static let draftPool = [
        CA.policy(10, users: [], groups: [CA.gA], apps: [CA.r1], controls: ["block"]),
        CA.policy(11, apps: ["All"], locations: [CA.branch], controls: ["block"]),
        CA.policy(12, apps: [CA.r2], controls: ["approvedApplication"]),
        CA.policy(13, apps: ["All"], platforms: ["android"], controls: ["block"]),
        CA.policy(2, apps: [CA.r1, CA.r2], controls: ["mfa"]),  // replaces a current one
        CA.policy(14, state: "enabledForReportingButNotEnforced", apps: ["All"], controls: ["block"]),
    ]

    /// Generated traffic: sign-ins with random facts from a small domain (so that many share them), each recorded as the
    /// current policies decided it.
    static func traffic(_ generator: inout Generator, count: Int, policies: CompiledPolicySet) -> [SignInRecord] {
        let users: [String?] = [CA.u1, CA.u2, CA.u3, nil]
        let clients = [CA.approvedClient, CA.plainClient]
        let resources = [CA.r1, CA.r2]
        let platforms: [DevicePlatform?] = [.iOS, .android, nil]
        let addresses = ["203.0.113.5", "198.51.100.7", "192.0.2.10"]
        let grants: [GrantType] = [.refreshToken, .refreshToken, .refreshToken, .clientCredentials, .password, .authorizationCode]
        return (0..<count).map { n in
            let user = users.randomElement(using: &generator)!
            let grant = user == nil ? GrantType.clientCredentials : grants.randomElement(using: &generator)!
            let mfa = Bool.random(using: &generator)
            let facts = CA.facts(
                user: user, client: clients.randomElement(using: &generator)!, resource: resources.randomElement(using: &generator)!,
                platform: platforms.randomElement(using: &generator)!, ip: addresses.randomElement(using: &generator)!, mfa: user != nil && mfa)
            let decision = policies.evaluate(facts)
            var record = SignInRecord(
                id: "s\(n)", createdDateTime: at.addingTimeInterval(Double(Int.random(in: 0..<(3 * 3600), using: &generator))), correlationId: "c\(n)",
                tenantId: CA.directory.tenant.id, userId: user.map { ObjectID($0) }, userPrincipalName: nil, clientAppId: facts.clientAppId,
                resourceAppId: facts.resourceAppId, resource: nil, grantType: grant.rawValue, clientAppType: facts.clientAppType.rawValue,
                capabilities: [], ipAddress: facts.ipAddress?.description, platform: facts.platform?.rawValue, appProtection: "none",
                conditionalAccessStatus: decision.status, appliedConditionalAccessPolicies: decision.policies,
                errorCode: decision.refusal == nil ? nil : 53003, authenticationMethods: user == nil ? nil : facts.authentication.methods)
            record.isInteractive = user != nil && (grant == .password || grant == .authorizationCode)
            return record
        }
    }

    @Test("impact over aggregated windows = impact over the sign-ins they replaced (generated traffic, 40 seeds)", arguments: 0..<40)
    func impactProperty(seed: Int) throws {
        var generator = Generator(state: UInt64(seed) &* 7919 &+ 1)
        let current = try CA.compile(Self.current)
        let records = Self.traffic(&generator, count: 400, policies: current)
        let drafts = Array(Self.draftPool.shuffled(using: &generator).prefix(Int.random(in: 1...4, using: &generator)))
        let parsed = try drafts.map { try ConditionalAccessPolicy.parse($0, directory: CA.directory, generatedId: "x", force: true) }
        let drafted = CompiledPolicySet(
            policies: ImpactAnalysis.applying(parsed, to: current.policies), namedLocations: CA.directory.namedLocations)
        let entries = SignInAggregation.aggregate(records, window: 3600, key: Self.key)
        let stored = entries.records + entries.aggregates.map(\.record)
        #expect(stored.count < records.count, "the traffic has sign-ins to count together")
        let whole = ImpactAnalysis.replay(records, directory: CA.directory, current: current, drafted: drafted)
        let summarized = ImpactAnalysis.replay(stored, directory: CA.directory, current: current, drafted: drafted)
        #expect(summarized.summary == whole.summary, "seed \(seed): \(summarized.summary) vs \(whole.summary)")
        #expect(summarized.evaluated == whole.evaluated && whole.evaluated == records.count)
    }
}
