import Foundation
import PortcullisCore
import PortcullisTesting

/// Release-mode micro-benchmarks. `portcullis-bench ca` measures conditional-access evaluation latency at
/// several policy counts over a realistic tenant; prints a table (p50, p99 in µs).
@main
struct PortcullisBench {
    static func main() async throws {
        let arguments = Array(CommandLine.arguments.dropFirst())
        switch arguments.first {
        case "ca": try conditionalAccess(counts: arguments.dropFirst().compactMap(Int.init).nilIfEmpty ?? [10, 100, 1_000, 10_000])
        case "dataset":
            guard arguments.count >= 2 else {
                print("usage: portcullis-bench dataset DIR [users apps policies enrollments refreshTokens]")
                exit(2)
            }
            var options = Dataset.Options()
            let numbers = arguments.dropFirst(2).compactMap(Int.init)
            if numbers.count == 5 {
                options = Dataset.Options(users: numbers[0], applications: numbers[1], policies: numbers[2], enrollments: numbers[3], refreshTokens: numbers[4])
            }
            let start = ContinuousClock.now
            try await Dataset.build(at: URL(fileURLWithPath: arguments[1]), options: options)
            print(
                "dataset: \(options.users) users, \(options.applications) applications, \(options.policies) CA policies, \(options.enrollments) enrollments in \(ContinuousClock.now - start)"
            )
        case "scale-dataset":
            guard arguments.count >= 2 else {
                print("usage: portcullis-bench scale-dataset DIR [tenants usersPerTenant policiesPerTenant]")
                exit(2)
            }
            let numbers = arguments.dropFirst(2).compactMap(Int.init)
            let (tenants, users, policies) = numbers.count == 3 ? (numbers[0], numbers[1], numbers[2]) : (1_000, 1_000, 20)
            let start = ContinuousClock.now
            try await ScaleDataset.build(at: URL(fileURLWithPath: arguments[1]), tenants: tenants, users: users, policies: policies)
            print("scale dataset: \(tenants) tenants × \(users) users × \(policies) CA policies in \(ContinuousClock.now - start)")
        case "sign":
            try await Micro.signing()
        case "webauthn":
            try Micro.webAuthn()
        case "countries":
            try Micro.countryLookup()
        case "dpop-proofs":
            guard arguments.count == 4, let count = Int(arguments[2]) else {
                print("usage: portcullis-bench dpop-proofs TOKEN-URL COUNT OUTPUT")
                exit(2)
            }
            try await DPoPBench.proofs(url: arguments[1], count: count, output: arguments[3])
        case "dpop-verify":
            try DPoPBench.verification()
        case "dpop-replay":
            try await DPoPBench.replayBounds()
        case "enrollment-lookup":
            try await Micro.enrollmentLookup(count: arguments.count > 1 ? Int(arguments[1]) ?? 1_000_000 : 1_000_000)
        case "remediation":
            guard arguments.count >= 2, let authority = URL(string: arguments[1]) else {
                print("usage: portcullis-bench remediation AUTHORITY [iterations]")
                exit(2)
            }
            try await RemediationBench.run(authority: authority, iterations: arguments.count > 2 ? Int(arguments[2]) ?? 50 : 50)
        default:
            print("usage: portcullis-bench ca [policy counts…] | remediation AUTHORITY [iterations]")
            exit(2)
        }
    }

    static func percentile(_ sorted: [Double], _ p: Double) -> Double {
        sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
    }

    static func guid(_ prefix: UInt32, _ n: Int) -> String { String(format: "%08x-0000-4000-8000-%012x", prefix, n) }

    /// 10,000 users in 200 groups, 100 applications, 20 named locations; `count` policies of realistic shapes.
    static func tenant(policies count: Int) throws -> (CompiledPolicySet, [SignInFacts]) {
        var rng = SeededGenerator(seed: 42)
        let users = (0..<10_000).map { User(id: ObjectID(guid(0xA, $0)), userPrincipalName: "u\($0)@bench.test", displayName: "U\($0)") }
        var members = Array(repeating: [ObjectID](), count: 200)
        var userGroups: [[ObjectID]] = []
        for (index, user) in users.enumerated() {
            var groups: [ObjectID] = []
            for _ in 0..<Int.random(in: 1...3, using: &rng) {
                let g = Int.random(in: 0..<200, using: &rng)
                members[g].append(user.id)
                groups.append(ObjectID(guid(0xB, g)))
            }
            userGroups.append(groups)
            _ = index
        }
        let groups = (0..<200).map { Group(id: ObjectID(guid(0xB, $0)), displayName: "G\($0)", members: members[$0]) }
        let apps = (0..<100).map { Application(appId: AppID(guid(0xC, $0)), displayName: "App\($0)", identifierUris: ["api://app\($0)"], scopes: ["Read"]) }
        let locations = (0..<20).map {
            NamedLocation(id: PolicyID(guid(0xE, $0)), displayName: "L\($0)", ipRanges: ["10.\($0).0.0/16", "2001:db8:\($0)::/48"], isTrusted: $0 < 5)
        }
        let directory = DirectorySnapshot(
            tenant: Tenant(id: TenantID(guid(0xF, 0)), domain: "bench.test", displayName: "Bench"), revision: 1, users: users, groups: groups,
            applications: apps, appRoleAssignments: [], namedLocations: locations)

        var policies: [ConditionalAccessPolicy] = []
        for n in 0..<count {
            let shape = Int.random(in: 0..<10, using: &rng)
            var users: [String: Any] = ["includeUsers": [String](), "excludeUsers": [String](), "includeGroups": [String](), "excludeGroups": [String]()]
            switch shape {
            case 0...1:
                users["includeUsers"] = ["All"]
                users["excludeGroups"] = [guid(0xB, Int.random(in: 0..<200, using: &rng))]
            case 2...5: users["includeGroups"] = (0..<Int.random(in: 1...3, using: &rng)).map { _ in guid(0xB, Int.random(in: 0..<200, using: &rng)) }
            default: users["includeUsers"] = (0..<Int.random(in: 1...10, using: &rng)).map { _ in guid(0xA, Int.random(in: 0..<10_000, using: &rng)) }
            }
            let apps: [String] = shape == 9 ? ["All"] : (0..<Int.random(in: 1...3, using: &rng)).map { _ in guid(0xC, Int.random(in: 0..<100, using: &rng)) }
            var conditions: [String: Any] = ["users": users, "applications": ["includeApplications": apps, "excludeApplications": [String]()]]
            if Int.random(in: 0..<3, using: &rng) == 0 { conditions["platforms"] = ["includePlatforms": ["iOS", "android"], "excludePlatforms": [String]()] }
            if Int.random(in: 0..<4, using: &rng) == 0 { conditions["locations"] = ["includeLocations": ["All"], "excludeLocations": ["AllTrusted"]] }
            // A fifth filter devices (PROTOCOL §18), with rules of the shapes admins publish.
            if Int.random(in: 0..<5, using: &rng) == 0 {
                let rules = [
                    #"device.isCompliant -eq True -and device.deviceOwnership -eq "Company""#,
                    #"device.trustType -ne "ServerAD" -or device.isCompliant -ne True"#,
                    #"device.extensionAttribute1 -eq "SAW""#,
                    #"device.model -startsWith "Surface" -and (device.operatingSystemVersion -in ["10.0.19045", "10.0.22631"] -or device.systemLabels -contains "M365Managed")"#,
                ]
                conditions["devices"] = [
                    "deviceFilter": ["mode": Bool.random(using: &rng) ? "include" : "exclude", "rule": rules[Int.random(in: 0..<rules.count, using: &rng)]]
                ]
            }
            let controls = [
                ["compliantApplication"], ["mfa"], ["approvedApplication", "compliantApplication"], ["block"], ["compliantDevice", "domainJoinedDevice"],
            ][
                Int.random(in: 0..<5, using: &rng)]
            let state = ["enabled", "enabled", "enabled", "enabledForReportingButNotEnforced", "disabled"][Int.random(in: 0..<5, using: &rng)]
            let document: [String: Any] = [
                "id": guid(0xD, n), "displayName": "P\(n)", "state": state, "conditions": conditions,
                "grantControls": ["operator": "OR", "builtInControls": controls],
            ]
            let value = JSONValue.parse(try JSONSerialization.data(withJSONObject: document))!
            policies.append(try ConditionalAccessPolicy.parse(value, directory: directory, generatedId: "x", force: true))
        }
        let set = CompiledPolicySet(policies: policies, namedLocations: locations)
        var facts: [SignInFacts] = []
        let devices: [DeviceFacts?] = [
            nil,
            DeviceFacts(deviceId: guid(0x9, 1), trustType: .azureAd, isCompliant: true, isManaged: true, deviceOwnership: "Company"),
            DeviceFacts(
                deviceId: guid(0x9, 2), trustType: .workplace, isCompliant: false, isManaged: false, operatingSystemVersion: "10.0.22631",
                model: "Surface Pro 9",
                deviceOwnership: "Personal"),
            DeviceFacts(deviceId: guid(0x9, 3), trustType: .serverAd, isCompliant: false, isManaged: true, extensionAttributes: [1: "SAW"]),
        ]
        for _ in 0..<4096 {
            let u = Int.random(in: 0..<10_000, using: &rng)
            let device = devices[Int.random(in: 0..<devices.count, using: &rng)]
            var signIn = SignInFacts(
                userId: users[u].id, groupIds: userGroups[u], clientAppId: AppID(guid(0xC, 99)),
                resourceAppId: AppID(guid(0xC, Int.random(in: 0..<100, using: &rng))),
                platform: [.iOS, .android, .windows][Int.random(in: 0..<3, using: &rng)],
                ipAddress: IPAddress("10.\(Int.random(in: 0..<30, using: &rng)).1.2"), capabilities: ["protapp"],
                appProtection: Bool.random(using: &rng) ? .compliant(enrollmentId: "e") : .none, approvedClientApp: true)
            signIn.device = device
            facts.append(signIn)
        }
        return (set, facts)
    }

    static func conditionalAccess(counts: [Int]) throws {
        print(
            "conditional-access evaluation (release), 10,000 users / 200 groups / 100 apps, a fifth of the policies filtering devices, sign-ins from four kinds of device (unregistered among them); 200,000 timed evaluations per row"
        )
        print("policies | candidates (mean) | p50 µs | p99 µs | mean µs | build ms")
        print("---------|-------------------|--------|--------|---------|---------")
        for count in counts {
            let buildStart = ContinuousClock.now
            let (set, facts) = try tenant(policies: count)
            let built = ContinuousClock.now - buildStart
            var sink = 0
            for i in 0..<20_000 { sink &+= set.evaluate(facts[i & 4095]).policies.count }  // warm-up
            let iterations = 200_000
            var samples = [Double](repeating: 0, count: iterations)
            var candidates = 0
            let clock = ContinuousClock()
            for i in 0..<iterations {
                let start = clock.now
                let decision = set.evaluate(facts[i & 4095])
                let elapsed = clock.now - start
                candidates &+= decision.policies.count
                samples[i] = Double(elapsed.components.attoseconds) / 1e12 + Double(elapsed.components.seconds) * 1e6
            }
            samples.sort()
            let mean = samples.reduce(0, +) / Double(samples.count)
            let buildMs = Double(built.components.attoseconds) / 1e15 + Double(built.components.seconds) * 1e3
            print(
                String(
                    format: "%8d | %17.1f | %6.2f | %6.2f | %7.2f | %8.0f", count, Double(candidates) / Double(iterations),
                    percentile(samples, 0.50), percentile(samples, 0.99), mean, buildMs))
            if sink == -1 { print(sink) }
        }
    }
}

extension Array {
    var nilIfEmpty: Self? { isEmpty ? nil : self }
}
