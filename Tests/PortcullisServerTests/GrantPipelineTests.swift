import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PortcullisCore
import PortcullisServer
import PortcullisTesting
import Synchronization
import Testing

@Suite("grant pipeline: gather, decide once, act")
struct GrantPipelineTests {
    @Test("concurrent redemptions of one refresh token: one success in the sign-in log, never a success for a refused rotation")
    func refusedRotationIsNotASuccess() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let first = try await client.token(Grants.password(scope: "openid offline_access", claims: nil))
                let refresh = try #require(first.string("refresh_token"))
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<12 {
                        group.addTask { Int(try await client.token(Grants.refresh(refresh, claims: nil)).status.code) }
                    }
                    return try await group.reduce(into: [Int]()) { $0.append($1) }
                }
                #expect(statuses.filter { $0 == 200 }.count == 1, "\(statuses)")
                let token = try await client.adminToken()
                let log = try await client.admin(.get, "/sign-ins?app=\(Fixtures.mobileClientId)&top=100", token: token)
                let records = try #require(log["value"] as? [[String: Any]])
                let refreshes = records.filter { $0["grantType"] as? String == "refresh_token" }
                #expect(
                    refreshes.filter { $0["errorCode"] == nil || $0["errorCode"] is NSNull }.count == 1,
                    "exactly one refresh recorded as a success: \(refreshes.map { $0["errorCode"] ?? "-" })")
                #expect(refreshes.allSatisfy { ($0["errorCode"] as? Int).map { $0 == 70008 } ?? true })
            }
        }
    }

    /// A random but valid policy over the fixture directory.
    static func randomPolicy(_ index: Int, using generator: inout some RandomNumberGenerator) -> [String: Any] {
        func pick<T>(_ options: [T]) -> T { options.randomElement(using: &generator)! }
        var users: [String: Any] = ["includeUsers": pick([["All"], [Fixtures.alice.id], [Fixtures.bob.id, Fixtures.carol.id], []])]
        if (users["includeUsers"] as? [String])?.isEmpty == true { users["includeGroups"] = [pick([Fixtures.salesGroupId, Fixtures.engineeringGroupId])] }
        if Bool.random(using: &generator) { users["excludeUsers"] = [pick([Fixtures.alice.id, Fixtures.bob.id, Fixtures.carol.id])] }
        var conditions: [String: Any] = [
            "users": users,
            "applications": ["includeApplications": pick([["All"], [Fixtures.mailApiId]])],
            "clientAppTypes": pick([["all"], ["mobileAppsAndDesktopClients"], ["browser"]]),
        ]
        if Bool.random(using: &generator) {
            conditions["platforms"] = pick(
                [
                    ["includePlatforms": ["all"], "excludePlatforms": ["windows", "linux"]], ["includePlatforms": ["iOS", "android"]],
                    ["includePlatforms": ["windows"]],
                ] as [[String: Any]])
        }
        if Bool.random(using: &generator) {
            conditions["locations"] = pick(
                [["includeLocations": ["All"], "excludeLocations": ["AllTrusted"]], ["includeLocations": [Fixtures.hqLocationId]]] as [[String: Any]])
        }
        let controls: [[String]] = [["block"], ["mfa"], ["approvedApplication"], ["compliantApplication"], ["approvedApplication", "compliantApplication"]]
        return [
            "id": String(format: "a2000000-0000-4000-8000-%012d", index), "displayName": "Generated \(index)",
            "state": pick(["enabled", "enabled", "enabledForReportingButNotEnforced", "disabled"]),
            "conditions": conditions,
            "grantControls": ["operator": pick(["AND", "OR"]), "builtInControls": pick(controls)],
        ]
    }

    @Test("what-if gives the token endpoint's decision for the same facts (generated policies and sign-ins)")
    func whatIfMatchesTheTokenEndpoint() async throws {
        try await withTestEnvironment(configure: { configuration in
            configuration.trustedProxies = [IPRange("127.0.0.0/8")!, IPRange("::1/128")!]
        }) { env in
            // Live: the client address is the socket's (loopback, a trusted proxy), so X-Forwarded-For names it.
            try await env.application().test(.live) { client in
                var generator = SeededGenerator(seed: 20261123)
                let admin = try await client.adminToken()
                var compared = 0
                var refused = 0
                for round in 0..<6 {
                    // A fresh set of policies each round.
                    let existing = try await client.admin(.get, "/conditional-access/policies", token: admin)
                    for policy in (existing["value"] as? [[String: Any]]) ?? [] {
                        #expect(
                            try await client.admin(
                                .delete, "/conditional-access/policies/\(policy["id"] as? String ?? "")", token: admin, headers: [.ifMatch: "*"]
                            ).status == .noContent)
                    }
                    for index in 0..<Int.random(in: 2...6, using: &generator) {
                        let created = try await client.admin(
                            .post, "/conditional-access/policies?force=true", token: admin,
                            json: Self.randomPolicy(round * 10 + index, using: &generator))
                        #expect(created.status == .created, "\(created.text)")
                    }
                    for sample in 0..<8 {
                        let account = [Fixtures.alice, Fixtures.bob, Fixtures.carol].randomElement(using: &generator)!
                        let platform = [
                            ("iOS 17.4", "MSAL.iOS", "iOS"), ("Windows 10", "MSAL.Desktop", "windows"), ("Linux", "MSAL.Python", "linux"), (nil, nil, nil),
                        ]
                        .randomElement(using: &generator)!
                        let ip = ["203.0.113.7", "198.51.100.9"].randomElement(using: &generator)!
                        let protApp = Bool.random(using: &generator)
                        let correlation = "pipeline-\(round)-\(sample)"
                        var headers: HTTPFields = [HTTPField.Name("client-request-id")!: correlation, HTTPField.Name("X-Forwarded-For")!: ip]
                        if let os = platform.0 { headers[HTTPField.Name("x-client-OS")!] = os }
                        if let sku = platform.1 { headers[HTTPField.Name("x-client-SKU")!] = sku }
                        let reply = try await client.token(
                            Grants.password(account, scope: "\(Fixtures.mailResource)/Mail.Read", claims: protApp ? Grants.protAppClaims : nil),
                            headers: headers)
                        let log = try await client.admin(.get, "/sign-ins?correlationId=\(correlation)", token: admin)
                        let record = try #require((log["value"] as? [[String: Any]])?.first, "no sign-in for \(correlation)")
                        var signIn: [String: Any] = [
                            "userId": account.id, "clientAppId": Fixtures.mobileClientId, "resourceAppId": Fixtures.mailApiId,
                            "ipAddress": ip, "capabilities": protApp ? ["protapp"] : [String](), "appProtection": "none",
                        ]
                        if let name = platform.2 { signIn["platform"] = name }
                        let whatIf = try await client.admin(.post, "/conditional-access/evaluate", token: admin, json: ["signIn": signIn])
                        let predicted = try #require(whatIf["signIn"] as? [String: Any], "\(whatIf.text)")
                        #expect(predicted["conditionalAccessStatus"] as? String == record["conditionalAccessStatus"] as? String, "\(correlation)")
                        #expect(
                            predicted["errorCode"] as? Int == record["errorCode"] as? Int,
                            "\(correlation): what-if \(predicted["errorCode"] ?? "-") vs token \(record["errorCode"] ?? "-")")
                        #expect((reply.status == .ok) == (record["errorCode"] as? Int == nil), "\(correlation)")
                        // Every policy the token path evaluated has the same result in what-if's full explanation.
                        let explained = Dictionary(
                            uniqueKeysWithValues: ((predicted["appliedConditionalAccessPolicies"] as? [[String: Any]]) ?? []).map {
                                ($0["id"] as? String ?? "", $0["result"] as? String ?? "")
                            })
                        for policy in (record["appliedConditionalAccessPolicies"] as? [[String: Any]]) ?? [] {
                            #expect(explained[policy["id"] as? String ?? ""] == policy["result"] as? String, "\(correlation) \(policy["id"] ?? "")")
                        }
                        compared += 1
                        if reply.status != .ok { refused += 1 }
                    }
                }
                #expect(compared == 48 && refused > 0 && refused < compared, "a meaningful mix: \(refused) of \(compared) refused")
            }
        }
    }
}
