import Foundation
import PortcullisCore
import Testing

/// A small tenant for policy tests.
enum CA {
    static let u1 = "a0000000-0000-4000-8000-000000000001"  // in group A
    static let u2 = "a0000000-0000-4000-8000-000000000002"  // in group B
    static let u3 = "a0000000-0000-4000-8000-000000000003"  // in no group
    static let gA = "b0000000-0000-4000-8000-00000000000a"
    static let gB = "b0000000-0000-4000-8000-00000000000b"
    static let approvedClient = "c0000000-0000-4000-8000-000000000001"
    static let plainClient = "c0000000-0000-4000-8000-000000000002"
    static let daemon = "c0000000-0000-4000-8000-000000000003"
    static let r1 = "d0000000-0000-4000-8000-000000000001"
    static let r2 = "d0000000-0000-4000-8000-000000000002"
    static let hq = "e0000000-0000-4000-8000-000000000001"  // trusted 203.0.113.0/24
    static let branch = "e0000000-0000-4000-8000-000000000002"  // untrusted 198.51.100.0/24, 2001:db8:b::/48

    static let directory = DirectorySnapshot(
        tenant: Tenant(id: "f0000000-0000-4000-8000-000000000000", domain: "ca.test", displayName: "CA"), revision: 1,
        users: [
            User(id: ObjectID(u1), userPrincipalName: "u1@ca.test", displayName: "U1"),
            User(id: ObjectID(u2), userPrincipalName: "u2@ca.test", displayName: "U2"),
            User(id: ObjectID(u3), userPrincipalName: "u3@ca.test", displayName: "U3"),
        ],
        groups: [Group(id: ObjectID(gA), displayName: "A", members: [ObjectID(u1)]), Group(id: ObjectID(gB), displayName: "B", members: [ObjectID(u2)])],
        applications: [
            Application(appId: AppID(approvedClient), displayName: "approved", publicClient: true, approvedClientApp: true),
            Application(appId: AppID(plainClient), displayName: "plain", publicClient: true),
            Application(appId: AppID(daemon), displayName: "daemon"),
            Application(appId: AppID(r1), displayName: "r1", identifierUris: ["api://r1"], scopes: ["Read"]),
            Application(appId: AppID(r2), displayName: "r2", identifierUris: ["api://r2"], scopes: ["Read"]),
        ],
        appRoleAssignments: [],
        namedLocations: [
            NamedLocation(id: PolicyID(hq), displayName: "HQ", ipRanges: ["203.0.113.0/24"], isTrusted: true),
            NamedLocation(id: PolicyID(branch), displayName: "Branch", ipRanges: ["198.51.100.0/24", "2001:db8:b::/48"], isTrusted: false),
        ])

    static func json(_ value: Any) -> JSONValue { JSONValue.parse(try! JSONSerialization.data(withJSONObject: value))! }

    /// A policy document with defaults that make it apply to everyone on everything.
    static func policy(
        _ n: Int, state: String = "enabled", users: [String]? = ["All"], excludeUsers: [String] = [], groups: [String] = [],
        excludeGroups: [String] = [], apps: [String] = ["All"], excludeApps: [String] = [], servicePrincipals: [String]? = nil,
        excludeServicePrincipals: [String] = [], clientAppTypes: [String]? = nil, platforms: [String]? = nil, excludePlatforms: [String] = [],
        locations: [String]? = nil, excludeLocations: [String] = [], op: String = "OR", controls: [String]
    ) -> JSONValue {
        var conditions: [String: Any] = ["applications": ["includeApplications": apps, "excludeApplications": excludeApps]]
        if let users { conditions["users"] = ["includeUsers": users, "excludeUsers": excludeUsers, "includeGroups": groups, "excludeGroups": excludeGroups] }
        if let servicePrincipals {
            conditions["clientApplications"] = ["includeServicePrincipals": servicePrincipals, "excludeServicePrincipals": excludeServicePrincipals]
        }
        if let clientAppTypes { conditions["clientAppTypes"] = clientAppTypes }
        if let platforms { conditions["platforms"] = ["includePlatforms": platforms, "excludePlatforms": excludePlatforms] }
        if let locations { conditions["locations"] = ["includeLocations": locations, "excludeLocations": excludeLocations] }
        return json([
            "id": String(format: "90000000-0000-4000-8000-%012d", n), "displayName": "P\(n)", "state": state,
            "conditions": conditions, "grantControls": ["operator": op, "builtInControls": controls],
        ])
    }

    static func id(_ n: Int) -> String { String(format: "90000000-0000-4000-8000-%012d", n) }

    static func compile(_ documents: [JSONValue]) throws -> CompiledPolicySet {
        let policies = try documents.map { try ConditionalAccessPolicy.parse($0, directory: directory, generatedId: "x", force: true) }
        return CompiledPolicySet(policies: policies, namedLocations: directory.namedLocations)
    }

    static func facts(
        user: String? = u1, client: String = approvedClient, resource: String = r1, type: SignInFacts.ClientAppType = .mobileAppsAndDesktopClients,
        platform: DevicePlatform? = .iOS, ip: String? = "192.0.2.10", capabilities: [String] = [], protection: SignInFacts.AppProtection = .none,
        mfa: Bool = false
    ) -> SignInFacts {
        let groups = user.map { directory.groupIds(ofUser: ObjectID($0)) } ?? []
        return SignInFacts(
            userId: user.map { ObjectID($0) }, groupIds: groups, clientAppId: AppID(client), resourceAppId: AppID(resource), clientAppType: type,
            platform: platform,
            ipAddress: ip.flatMap(IPAddress.init), capabilities: capabilities, appProtection: protection,
            approvedClientApp: directory.application(appId: AppID(client))?.approvedClientApp ?? false,
            authentication: AuthenticationContext(methods: mfa ? ["pwd", "mfa"] : ["pwd"], time: nil))
    }
}

/// Expected outcome: overall status and the refusal kind ("block", "mfa", "approved", "compliant" or nil).
struct SemanticsCase: Sendable, CustomStringConvertible {
    let name: String
    let policies: [JSONValue]
    let facts: SignInFacts
    let status: Decision.Status
    let refusal: String?
    var results: [Decision.PolicyResult]? = nil
    var description: String { name }
}

func kind(_ refusal: Decision.Refusal?) -> String? {
    switch refusal {
    case .block: "block"
    case .mfa: "mfa"
    case .authenticationStrength: "strength"
    case .approvedApplication: "approved"
    case .compliantApplication: "compliant"
    case .tokenProtection: "tokenProtection"
    case .signInFrequency: "signInFrequency"
    case .termsOfUse: "termsOfUse"
    case .compliantDevice: "compliantDevice"
    case .domainJoinedDevice: "domainJoinedDevice"
    case .passwordChange: "passwordChange"
    case .riskRemediation: "riskRemediation"
    case nil: nil
    }
}

let semanticsCases: [SemanticsCase] = [
    // Users: All / None / IDs / groups, exclusion wins.
    SemanticsCase(name: "no policies: notApplied", policies: [], facts: CA.facts(), status: .notApplied, refusal: nil),
    SemanticsCase(name: "All users, block", policies: [CA.policy(1, controls: ["block"])], facts: CA.facts(), status: .failure, refusal: "block"),
    SemanticsCase(
        name: "includeUsers None never applies", policies: [CA.policy(1, users: ["None"], controls: ["block"])], facts: CA.facts(), status: .notApplied,
        refusal: nil),
    SemanticsCase(
        name: "included by user ID", policies: [CA.policy(1, users: [CA.u2], controls: ["block"])], facts: CA.facts(user: CA.u2), status: .failure,
        refusal: "block"),
    SemanticsCase(
        name: "other user ID does not apply", policies: [CA.policy(1, users: [CA.u2], controls: ["block"])], facts: CA.facts(user: CA.u1), status: .notApplied,
        refusal: nil),
    SemanticsCase(
        name: "included by group", policies: [CA.policy(1, users: [], groups: [CA.gA], controls: ["block"])], facts: CA.facts(user: CA.u1), status: .failure,
        refusal: "block"),
    SemanticsCase(
        name: "not in the group", policies: [CA.policy(1, users: [], groups: [CA.gA], controls: ["block"])], facts: CA.facts(user: CA.u3), status: .notApplied,
        refusal: nil),
    SemanticsCase(
        name: "excluded user beats All", policies: [CA.policy(1, excludeUsers: [CA.u1], controls: ["block"])], facts: CA.facts(user: CA.u1),
        status: .notApplied, refusal: nil),
    SemanticsCase(
        name: "excluded group beats included user", policies: [CA.policy(1, users: [CA.u1], excludeGroups: [CA.gA], controls: ["block"])],
        facts: CA.facts(user: CA.u1), status: .notApplied, refusal: nil),
    SemanticsCase(
        name: "excluded group does not exclude others", policies: [CA.policy(1, excludeGroups: [CA.gA], controls: ["block"])], facts: CA.facts(user: CA.u2),
        status: .failure, refusal: "block"),
    // Applications.
    SemanticsCase(
        name: "included resource", policies: [CA.policy(1, apps: [CA.r1], controls: ["block"])], facts: CA.facts(resource: CA.r1), status: .failure,
        refusal: "block"),
    SemanticsCase(
        name: "other resource", policies: [CA.policy(1, apps: [CA.r1], controls: ["block"])], facts: CA.facts(resource: CA.r2), status: .notApplied,
        refusal: nil),
    SemanticsCase(
        name: "excluded resource beats All", policies: [CA.policy(1, excludeApps: [CA.r2], controls: ["block"])], facts: CA.facts(resource: CA.r2),
        status: .notApplied, refusal: nil),
    SemanticsCase(
        name: "includeApplications None never applies", policies: [CA.policy(1, apps: ["None"], controls: ["block"])], facts: CA.facts(), status: .notApplied,
        refusal: nil),
    // Client app types.
    SemanticsCase(
        name: "browser-only policy, mobile sign-in", policies: [CA.policy(1, clientAppTypes: ["browser"], controls: ["block"])], facts: CA.facts(),
        status: .notApplied, refusal: nil),
    SemanticsCase(
        name: "browser-only policy, browser sign-in", policies: [CA.policy(1, clientAppTypes: ["browser"], controls: ["block"])],
        facts: CA.facts(type: .browser), status: .failure, refusal: "block"),
    SemanticsCase(
        name: "clientAppTypes all", policies: [CA.policy(1, clientAppTypes: ["all"], controls: ["block"])], facts: CA.facts(type: .browser), status: .failure,
        refusal: "block"),
    // Legacy clients (PROTOCOL §17): named, accepted, and matching no sign-in here.
    SemanticsCase(
        name: "legacy-only policy, browser sign-in", policies: [CA.policy(1, clientAppTypes: ["exchangeActiveSync", "other"], controls: ["block"])],
        facts: CA.facts(type: .browser), status: .notApplied, refusal: nil),
    SemanticsCase(
        name: "legacy-only policy, app sign-in", policies: [CA.policy(1, clientAppTypes: ["exchangeActiveSync", "other"], controls: ["block"])],
        facts: CA.facts(), status: .notApplied, refusal: nil),
    SemanticsCase(
        name: "legacy and browser, browser sign-in", policies: [CA.policy(1, clientAppTypes: ["other", "browser"], controls: ["block"])],
        facts: CA.facts(type: .browser), status: .failure, refusal: "block"),
    SemanticsCase(
        name: "windowsPhone excluded, iOS device", policies: [CA.policy(1, platforms: ["all"], excludePlatforms: ["windowsPhone"], controls: ["block"])],
        facts: CA.facts(platform: .iOS), status: .failure, refusal: "block"),
    SemanticsCase(
        name: "windowsPhone only, Windows device", policies: [CA.policy(1, platforms: ["windowsPhone"], controls: ["block"])],
        facts: CA.facts(platform: .windows), status: .notApplied, refusal: nil),
    // Platforms.
    SemanticsCase(
        name: "iOS policy, iOS device", policies: [CA.policy(1, platforms: ["iOS", "android"], controls: ["block"])], facts: CA.facts(platform: .iOS),
        status: .failure, refusal: "block"),
    SemanticsCase(
        name: "iOS policy, Windows device", policies: [CA.policy(1, platforms: ["iOS"], controls: ["block"])], facts: CA.facts(platform: .windows),
        status: .notApplied, refusal: nil),
    SemanticsCase(
        name: "iOS policy, unknown platform", policies: [CA.policy(1, platforms: ["iOS"], controls: ["block"])], facts: CA.facts(platform: nil),
        status: .notApplied, refusal: nil),
    SemanticsCase(
        name: "all platforms but excluded one", policies: [CA.policy(1, platforms: ["all"], excludePlatforms: ["android"], controls: ["block"])],
        facts: CA.facts(platform: .android), status: .notApplied, refusal: nil),
    SemanticsCase(
        name: "all platforms includes unknown", policies: [CA.policy(1, platforms: ["all"], controls: ["block"])], facts: CA.facts(platform: nil),
        status: .failure, refusal: "block"),
    // Locations (IPv4 and IPv6, AllTrusted).
    SemanticsCase(
        name: "named location by IPv4", policies: [CA.policy(1, locations: [CA.branch], controls: ["block"])], facts: CA.facts(ip: "198.51.100.7"),
        status: .failure, refusal: "block"),
    SemanticsCase(
        name: "named location by IPv6", policies: [CA.policy(1, locations: [CA.branch], controls: ["block"])], facts: CA.facts(ip: "2001:db8:b::99"),
        status: .failure, refusal: "block"),
    SemanticsCase(
        name: "outside the named location", policies: [CA.policy(1, locations: [CA.branch], controls: ["block"])], facts: CA.facts(ip: "192.0.2.1"),
        status: .notApplied, refusal: nil),
    SemanticsCase(
        name: "All but AllTrusted, from HQ", policies: [CA.policy(1, locations: ["All"], excludeLocations: ["AllTrusted"], controls: ["block"])],
        facts: CA.facts(ip: "203.0.113.5"), status: .notApplied, refusal: nil),
    SemanticsCase(
        name: "All but AllTrusted, from elsewhere", policies: [CA.policy(1, locations: ["All"], excludeLocations: ["AllTrusted"], controls: ["block"])],
        facts: CA.facts(ip: "192.0.2.5"), status: .failure, refusal: "block"),
    SemanticsCase(
        name: "AllTrusted include", policies: [CA.policy(1, locations: ["AllTrusted"], controls: ["block"])], facts: CA.facts(ip: "203.0.113.5"),
        status: .failure, refusal: "block"),
    SemanticsCase(
        name: "unknown IP matches only All", policies: [CA.policy(1, locations: ["AllTrusted"], controls: ["block"])], facts: CA.facts(ip: nil),
        status: .notApplied, refusal: nil),
    // Grant controls, AND / OR.
    SemanticsCase(name: "mfa required, no mfa", policies: [CA.policy(1, controls: ["mfa"])], facts: CA.facts(), status: .failure, refusal: "mfa"),
    SemanticsCase(name: "mfa required, mfa done", policies: [CA.policy(1, controls: ["mfa"])], facts: CA.facts(mfa: true), status: .success, refusal: nil),
    SemanticsCase(
        name: "approved app, approved client", policies: [CA.policy(1, controls: ["approvedApplication"])], facts: CA.facts(client: CA.approvedClient),
        status: .success, refusal: nil),
    SemanticsCase(
        name: "approved app, plain client", policies: [CA.policy(1, controls: ["approvedApplication"])], facts: CA.facts(client: CA.plainClient),
        status: .failure, refusal: "approved"),
    SemanticsCase(
        name: "app protection, none", policies: [CA.policy(1, controls: ["compliantApplication"])], facts: CA.facts(), status: .failure, refusal: "compliant"),
    SemanticsCase(
        name: "app protection, not compliant", policies: [CA.policy(1, controls: ["compliantApplication"])], facts: CA.facts(protection: .notCompliant),
        status: .failure, refusal: "compliant"),
    SemanticsCase(
        name: "app protection, compliant", policies: [CA.policy(1, controls: ["compliantApplication"])],
        facts: CA.facts(protection: .compliant(enrollmentId: "e")), status: .success, refusal: nil),
    SemanticsCase(
        name: "OR: one control met is enough", policies: [CA.policy(1, op: "OR", controls: ["approvedApplication", "compliantApplication"])],
        facts: CA.facts(client: CA.plainClient, protection: .compliant(enrollmentId: "e")), status: .success, refusal: nil),
    SemanticsCase(
        name: "OR: none met reports the first in order", policies: [CA.policy(1, op: "OR", controls: ["compliantApplication", "approvedApplication"])],
        facts: CA.facts(client: CA.plainClient), status: .failure, refusal: "approved"),
    SemanticsCase(
        name: "AND: one unmet fails", policies: [CA.policy(1, op: "AND", controls: ["approvedApplication", "compliantApplication"])],
        facts: CA.facts(client: CA.approvedClient), status: .failure, refusal: "compliant"),
    SemanticsCase(
        name: "AND: all met", policies: [CA.policy(1, op: "AND", controls: ["approvedApplication", "compliantApplication"])],
        facts: CA.facts(client: CA.approvedClient, protection: .compliant(enrollmentId: "e")), status: .success, refusal: nil),
    SemanticsCase(
        name: "every applying policy must be satisfied; mfa reported before app protection",
        policies: [CA.policy(1, controls: ["compliantApplication"]), CA.policy(2, controls: ["mfa"])], facts: CA.facts(), status: .failure, refusal: "mfa"),
    SemanticsCase(
        name: "one satisfied, one not: failure", policies: [CA.policy(1, controls: ["approvedApplication"]), CA.policy(2, controls: ["compliantApplication"])],
        facts: CA.facts(), status: .failure, refusal: "compliant", results: [.success, .failure]),
    SemanticsCase(
        name: "block beats everything", policies: [CA.policy(1, controls: ["mfa"]), CA.policy(2, apps: [CA.r1], controls: ["block"])], facts: CA.facts(),
        status: .failure, refusal: "block"),
    // Report-only and disabled.
    SemanticsCase(
        name: "report-only block is not enforced", policies: [CA.policy(1, state: "enabledForReportingButNotEnforced", controls: ["block"])],
        facts: CA.facts(), status: .notApplied, refusal: nil, results: [.reportOnlyFailure]),
    SemanticsCase(
        name: "report-only success", policies: [CA.policy(1, state: "enabledForReportingButNotEnforced", controls: ["approvedApplication"])],
        facts: CA.facts(), status: .notApplied, refusal: nil, results: [.reportOnlySuccess]),
    SemanticsCase(
        name: "report-only not applied", policies: [CA.policy(1, state: "enabledForReportingButNotEnforced", users: [CA.u2], controls: ["block"])],
        facts: CA.facts(user: CA.u1), status: .notApplied, refusal: nil, results: [.reportOnlyNotApplied]),
    SemanticsCase(
        name: "disabled policy", policies: [CA.policy(1, state: "disabled", controls: ["block"])], facts: CA.facts(), status: .notApplied, refusal: nil,
        results: [.notEnabled]),
    SemanticsCase(
        name: "report-only beside an enforced success",
        policies: [CA.policy(1, state: "enabledForReportingButNotEnforced", controls: ["mfa"]), CA.policy(2, controls: ["approvedApplication"])],
        facts: CA.facts(), status: .success, refusal: nil, results: [.reportOnlyFailure, .success]),
    // The compliance resource is exempt from app controls, not from block or mfa.
    SemanticsCase(
        name: "compliance resource exempt from compliantApplication", policies: [CA.policy(1, controls: ["compliantApplication"])],
        facts: CA.facts(resource: BuiltInResources.complianceAppId.rawValue), status: .success, refusal: nil),
    SemanticsCase(
        name: "compliance resource exempt from approvedApplication", policies: [CA.policy(1, controls: ["approvedApplication"])],
        facts: CA.facts(client: CA.plainClient, resource: BuiltInResources.complianceAppId.rawValue), status: .success, refusal: nil),
    SemanticsCase(
        name: "compliance resource still blocked", policies: [CA.policy(1, controls: ["block"])],
        facts: CA.facts(resource: BuiltInResources.complianceAppId.rawValue), status: .failure, refusal: "block"),
    SemanticsCase(
        name: "admin resource is not exempt", policies: [CA.policy(1, controls: ["compliantApplication"])],
        facts: CA.facts(resource: BuiltInResources.adminAppId.rawValue), status: .failure, refusal: "compliant"),
    // Workload identities (service principals).
    SemanticsCase(
        name: "user policies do not apply to app-only sign-ins", policies: [CA.policy(1, controls: ["block"])],
        facts: CA.facts(user: nil, client: CA.daemon), status: .notApplied, refusal: nil),
    SemanticsCase(
        name: "workload policy blocks the named client", policies: [CA.policy(1, users: nil, servicePrincipals: [CA.daemon], controls: ["block"])],
        facts: CA.facts(user: nil, client: CA.daemon), status: .failure, refusal: "block"),
    SemanticsCase(
        name: "workload policy for every service principal, one excluded",
        policies: [CA.policy(1, users: nil, servicePrincipals: ["ServicePrincipalsInMyTenant"], excludeServicePrincipals: [CA.daemon], controls: ["block"])],
        facts: CA.facts(user: nil, client: CA.daemon), status: .notApplied, refusal: nil),
    SemanticsCase(
        name: "workload policy with location",
        policies: [CA.policy(1, users: nil, servicePrincipals: [CA.daemon], locations: ["All"], excludeLocations: [CA.hq], controls: ["block"])],
        facts: CA.facts(user: nil, client: CA.daemon, ip: "203.0.113.9"), status: .notApplied, refusal: nil),
    SemanticsCase(
        name: "workload policies do not apply to users",
        policies: [CA.policy(1, users: nil, servicePrincipals: ["ServicePrincipalsInMyTenant"], controls: ["block"])],
        facts: CA.facts(), status: .notApplied, refusal: nil),
]

@Suite("conditional-access semantics")
struct ConditionalAccessSemanticsTests {
    @Test("the table", arguments: semanticsCases)
    func table(_ c: SemanticsCase) throws {
        let set = try CA.compile(c.policies)
        for explain in [false, true] {
            let decision = set.evaluate(c.facts, explain: explain)
            #expect(decision.status == c.status, "\(c.name) explain=\(explain)")
            #expect(kind(decision.refusal) == c.refusal, "\(c.name) explain=\(explain)")
            if let results = c.results, explain {
                #expect(decision.policies.map(\.result) == results, "\(c.name) explain=\(explain)")
            }
        }
    }

    @Test("the table is large enough")
    func size() { #expect(semanticsCases.count >= 40) }

    @Test("conditionsNotSatisfied names every failed condition; refusals name the failing policies")
    func explanations() throws {
        let set = try CA.compile([
            CA.policy(1, users: [CA.u2], apps: [CA.r2], platforms: ["android"], locations: [CA.branch], controls: ["block"]),
            CA.policy(2, controls: ["compliantApplication"]),
            CA.policy(3, controls: ["compliantApplication"]),
        ])
        let decision = set.evaluate(CA.facts(), explain: true)
        let first = try #require(decision.policies.first { $0.id == CA.id(1) })
        #expect(first.result == .notApplied)
        #expect(first.conditionsNotSatisfied == [.users, .application, .devicePlatform, .location])
        #expect(first.enforcedGrantControls.isEmpty)
        #expect(decision.refusal == .compliantApplication(policyIds: [CA.id(2), CA.id(3)]))
        #expect(decision.policies.first { $0.id == CA.id(2) }?.enforcedGrantControls == ["compliantApplication"])
        #expect(decision.requiresAppProtection)
    }

    @Test("the index finds the same applying policies as a full scan, across many policies")
    func indexAgreesWithScan() throws {
        var policies: [JSONValue] = []
        for n in 0..<200 {
            let users: [String] = n % 5 == 0 ? ["All"] : [[CA.u1, CA.u2, CA.u3][n % 3]]
            let groups: [String] = n % 7 == 0 ? [[CA.gA, CA.gB][n % 2]] : []
            let apps: [String] = n % 4 == 0 ? ["All"] : [[CA.r1, CA.r2][n % 2]]
            let state = ["enabled", "enabledForReportingButNotEnforced", "disabled"][n % 3]
            let controls = [["block"], ["mfa"], ["approvedApplication"], ["compliantApplication"]][n % 4]
            policies.append(CA.policy(n, state: state, users: users, groups: groups, apps: apps, controls: controls))
        }
        let set = try CA.compile(policies)
        for user in [CA.u1, CA.u2, CA.u3] {
            for resource in [CA.r1, CA.r2] {
                let facts = CA.facts(user: user, resource: resource)
                let indexed = set.evaluate(facts)
                let scanned = set.evaluate(facts, explain: true)
                let applying: (Decision) -> [String] = {
                    $0.policies.filter { ![.notApplied, .reportOnlyNotApplied, .notEnabled].contains($0.result) }.map(\.id)
                }
                #expect(applying(indexed) == applying(scanned))
                #expect(indexed.status == scanned.status)
                #expect(indexed.refusal == scanned.refusal)
                #expect(indexed.policies.count < scanned.policies.count)
            }
        }
    }

    @Test(
        "platform detection from MSAL telemetry headers",
        arguments: [
            ("MSAL.iOS", "17.4", DevicePlatform.iOS), ("MSAL.Android", "33", .android), ("MSAL.Python", "linux", .linux),
            ("MSAL.Python", "win32", .windows), ("MSAL.Python", "darwin", .macOS), ("MSAL.NetCore", "Microsoft Windows 10.0.19045", .windows),
            ("MSAL.OSX", "14.1", .macOS), ("PortcullisClient.Linux", "Linux 6.1", .linux), ("msal.ios", "", .iOS), ("", "iPadOS 17.2", .iOS),
            ("MSAL.Java", "Mac OS X", .macOS), ("", "ANDROID 14", .android), ("MSAL.Python", "WIN32", .windows),
        ])
    func platforms(_ sku: String, _ os: String, _ expected: DevicePlatform) {
        #expect(DevicePlatform.detect(sku: sku, os: os) == expected)
    }

    @Test("no telemetry, no platform")
    func noPlatform() {
        #expect(DevicePlatform.detect(sku: nil, os: nil) == nil)
        #expect(DevicePlatform.detect(sku: "MSAL.Python", os: "FreeBSD") == nil)
        #expect(DevicePlatform.detect(sku: "", os: "Ïos") == nil, "only ASCII letters compare in any case")
    }

    @Test(
        "platform from a browser's User-Agent, as Entra reads it (PROTOCOL §17)",
        arguments: [
            ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36", DevicePlatform?.some(.windows)),
            ("Mozilla/5.0 (Macintosh; Intel Mac OS X 14_1) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Safari/605.1.15", .macOS),
            ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148", .iOS),
            ("Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148", .iOS),
            ("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Mobile Safari/537.36", .android),
            ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0 Safari/537.36", .linux),
            ("Mozilla/5.0 (Windows Phone 10.0; Android 6.0.1; Microsoft; Lumia 950) AppleWebKit/537.36 (KHTML, like Gecko) Edge/15.15063", .windowsPhone),
            ("Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36", nil),
            ("python-requests/2.32.3", nil), ("", nil),
        ])
    func userAgents(_ agent: String, _ expected: DevicePlatform?) {
        #expect(DevicePlatform.detect(userAgent: agent) == expected)
    }
}
