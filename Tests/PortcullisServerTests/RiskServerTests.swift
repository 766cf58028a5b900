import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import PortcullisCore
import PortcullisServer
import PortcullisTesting
import Testing

/// Risk through the server (PROTOCOL §19): detections from crafted sign-ins behind a trusted proxy (the address from
/// `X-Forwarded-For`, its country from the operator's table), users' risk in the admin API, risk in conditional access.
@Suite("Risk (PROTOCOL §19), through the server")
struct RiskServerTests {
    static func from(_ address: String) -> HTTPFields { [HTTPField.Name("X-Forwarded-For")!: address] }
    static let france = "198.51.100.7"
    static let unitedStates = "203.0.113.7"
    static let anonymizer = "192.0.2.66"
    static let sprayer = "203.0.113.99"

    /// A country table (FR, US, DE) and an anonymizer list, in files as an operator keeps them.
    static func sources() throws -> (CountryTableSource, RiskListSource, URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("portcullis-risk-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let countries = directory.appendingPathComponent("countries.csv")
        try "cidr,country\n198.51.100.0/24,FR\n203.0.113.0/24,US\n192.0.2.0/24,DE\n".write(to: countries, atomically: true, encoding: .utf8)
        let anonymizers = directory.appendingPathComponent("anonymizers.txt")
        try "# exit nodes\n\(anonymizer)\n".write(to: anonymizers, atomically: true, encoding: .utf8)
        let logger = Logger(label: "test")
        return (
            try CountryTableSource(path: countries.path, logger: logger),
            try RiskListSource(anonymizerPath: anonymizers.path, maliciousPath: nil, logger: logger),
            directory
        )
    }

    static func riskyUser(_ client: some TestClientProtocol, _ admin: String, _ id: String) async throws -> [String: Any] {
        try await client.admin(.get, "/identityProtection/riskyUsers/\(id)", token: admin).json
    }

    static func detections(_ client: some TestClientProtocol, _ admin: String, of id: String) async throws -> [String] {
        let all = try await client.admin(.get, "/identityProtection/riskDetections", token: admin).json["value"] as? [[String: Any]] ?? []
        return all.filter { $0["userId"] as? String == id }.compactMap { $0["riskEventType"] as? String }
    }

    @Test(
        "detections from crafted sign-ins: a listed anonymizer steps up (MFA) in real time; France then the US an hour later, and a spray over 30 accounts, raise the user's risk, which a policy then refuses; an admin dismisses it"
    )
    func detections() async throws {
        let (countries, lists, directory) = try Self.sources()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withTestEnvironment(
            countries: countries, riskLists: lists, configure: { $0.trustedProxies = [IPRange("127.0.0.0/8")!, IPRange("::1/128")!] }
        ) { env in
            try await env.application().test(.live) { client in
                let admin = try await client.adminToken()
                // MFA for medium and high sign-in risk, for Alice (Microsoft's template, scoped).
                var signInRisk = Policies.document(
                    id: "a1000000-0000-4000-8000-00000000f001", name: "MFA for risky sign-ins", users: [Fixtures.alice.id], apps: ["All"], controls: ["mfa"])
                var conditions = signInRisk["conditions"] as? [String: Any] ?? [:]
                conditions["signInRiskLevels"] = ["high", "medium"]
                signInRisk["conditions"] = conditions
                let created = try await client.admin(.post, "/conditional-access/policies", token: admin, json: signInRisk)
                #expect(created.status == .created, "\(created.text)")

                // A listed anonymizer: real time, the sign-in's own risk; from elsewhere the policy does not apply.
                #expect(try await client.token(Grants.password(), headers: Self.from(Self.anonymizer)).errorCode == 50076)
                #expect(try await client.token(Grants.password(), headers: Self.from(Self.france)).status == .ok)
                await env.server.signIns.flush()
                let log = try await client.admin(.get, "/sign-ins?user=\(Fixtures.alice.id)", token: admin).json["value"] as? [[String: Any]] ?? []
                let refused = try #require(log.first { $0["errorCode"] as? Int == 50076 })
                #expect(refused["riskLevelDuringSignIn"] as? String == "medium" && refused["riskEventTypes_v2"] as? [String] == ["anonymizedIPAddress"])
                await env.server.risk.drain()
                #expect(
                    try await Self.riskyUser(client, admin, Fixtures.alice.id)["riskLevel"] as? String == "medium", "the refused sign-in's risk is the user's")
                #expect(try await Self.detections(client, admin, of: Fixtures.alice.id) == ["anonymizedIPAddress"])

                // Atypical travel (offline): Bob in France, then in the United States an hour later.
                let first = try await client.token(Grants.password(Fixtures.bob), headers: Self.from(Self.france))
                let refresh = try #require(first.string("refresh_token"), "\(first.text)")
                await env.server.risk.drain()
                env.clock.advance(by: 3600)
                let second = try await client.token(Grants.refresh(refresh), headers: Self.from(Self.unitedStates))
                #expect(second.status == .ok, "offline: the sign-in that shows the travel goes through")
                await env.server.risk.drain()
                let bob = try await Self.riskyUser(client, admin, Fixtures.bob.id)
                #expect(bob["riskLevel"] as? String == "medium" && bob["riskState"] as? String == "atRisk", "\(bob)")
                #expect(try await Self.detections(client, admin, of: Fixtures.bob.id) == ["unlikelyTravel"])
                // The user's risk is what the next refresh sees: a policy blocking medium user risk refuses it.
                var userRisk = Policies.document(
                    id: "a1000000-0000-4000-8000-00000000f002", name: "Block risky users", users: [Fixtures.bob.id], apps: ["All"], controls: ["block"])
                conditions = userRisk["conditions"] as? [String: Any] ?? [:]
                conditions["userRiskLevels"] = ["high", "medium"]
                userRisk["conditions"] = conditions
                #expect(try await client.admin(.post, "/conditional-access/policies", token: admin, json: userRisk).status == .created)
                let next = try #require(second.string("refresh_token"))
                #expect(try await client.token(Grants.refresh(next), headers: Self.from(Self.unitedStates)).errorCode == 53003)
                // An admin dismisses it; the refresh goes through (the refused one consumed nothing).
                let dismissed = try await client.admin(.post, "/identityProtection/riskyUsers/dismiss", token: admin, json: ["userIds": [Fixtures.bob.id]])
                #expect(dismissed.status == .noContent, "\(dismissed.text)")
                #expect(try await client.token(Grants.refresh(next), headers: Self.from(Self.unitedStates)).status == .ok)
                let history = try await client.admin(.get, "/identityProtection/riskyUsers/\(Fixtures.bob.id)/history", token: admin).json["value"]
                #expect((history as? [[String: Any]])?.compactMap { $0["riskState"] as? String } == ["dismissed", "atRisk"])
                // Nobody else is a risky user.
                let users = try await client.admin(.get, "/identityProtection/riskyUsers", token: admin).json["value"] as? [[String: Any]] ?? []
                #expect(Set(users.compactMap { $0["id"] as? String }) == [Fixtures.alice.id, Fixtures.bob.id])

                // Password spray: wrong passwords for 30 accounts from one address, then Carol signs in from it.
                for index in 0..<30 {
                    let user: [String: Any] = [
                        "userPrincipalName": "sprayed\(index)@\(Fixtures.domain)", "displayName": "Sprayed \(index)", "password": "right-password-\(index)",
                        "accountEnabled": true,
                    ]
                    let made = try await client.admin(.post, "/users", token: admin, json: user)
                    #expect(made.status == .created, "\(made.text)")
                    var wrong = Grants.password()
                    wrong = wrong.map { $0.0 == "username" ? ($0.0, "sprayed\(index)@\(Fixtures.domain)") : $0.0 == "password" ? ($0.0, "Winter2026!") : $0 }
                    #expect(try await client.token(wrong, headers: Self.from(Self.sprayer)).errorCode == 50126)
                }
                #expect(try await client.token(Grants.password(Fixtures.carol), headers: Self.from(Self.sprayer)).status == .ok)
                await env.server.signIns.flush()
                await env.server.risk.drain()
                #expect(try await Self.detections(client, admin, of: Fixtures.carol.id) == ["passwordSpray"])
                #expect(try await Self.riskyUser(client, admin, Fixtures.carol.id)["riskLevel"] as? String == "high")
                // Another address, the same night: no spray there.
                #expect(try await client.token(Grants.password(Fixtures.alice), headers: Self.from(Self.unitedStates)).status == .ok)
                await env.server.risk.drain()
                #expect(!(try await Self.detections(client, admin, of: Fixtures.alice.id)).contains("passwordSpray"))
            }
        }
    }

    @Test(
        "reported leaked credentials raise the risk and revoke nothing; a password-change policy answers 50142 after MFA (what-if); confirmCompromised voids everything; refused input is a validation error"
    )
    func adminDecisions() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let signedIn = try await client.token(Grants.password())
                let refresh = try #require(signedIn.string("refresh_token"))
                let reported = try await client.admin(
                    .post, "/identityProtection/riskDetections", token: admin,
                    json: ["userId": Fixtures.alice.upn, "riskEventType": "leakedCredentials", "additionalInfo": "found in a paste site"])
                #expect(reported.status == .created && reported.string("riskLevel") == "high", "\(reported.text)")
                let again = try await client.token(Grants.refresh(refresh))
                #expect(again.status == .ok, "leaked credentials revoke nothing by themselves: \(again.text)")
                // Microsoft's template, enforced: MFA, then a password change.
                var template = Policies.document(
                    id: "a1000000-0000-4000-8000-00000000f003", name: "Password change for high-risk users", users: ["All"],
                    excludeUsers: [Fixtures.admin.id], apps: ["All"], controls: ["mfa", "passwordChange"], op: "AND")
                var conditions = template["conditions"] as? [String: Any] ?? [:]
                conditions["userRiskLevels"] = ["high"]
                template["conditions"] = conditions
                let created = try await client.admin(.post, "/conditional-access/policies", token: admin, json: template)
                #expect(created.status == .created, "\(created.text)")
                let next = try #require(again.string("refresh_token"))
                #expect(try await client.token(Grants.refresh(next)).errorCode == 50076, "MFA first")
                for mfa in [false, true] {
                    let whatIf = try await client.admin(
                        .post, "/conditional-access/evaluate", token: admin,
                        json: [
                            "signIn": [
                                "userId": Fixtures.alice.id, "clientAppId": Fixtures.mobileClientId, "resourceAppId": Fixtures.mailApiId, "mfa": mfa,
                            ]
                        ])
                    let code = (whatIf.json["signIn"] as? [String: Any])?["errorCode"] as? Int
                    #expect(code == (mfa ? 50142 : 50076) && whatIf.string("error") == (mfa ? "interaction_required" : "invalid_grant"), "\(whatIf.text)")
                }
                // What-if of another level: the policy does not apply.
                let low = try await client.admin(
                    .post, "/conditional-access/evaluate", token: admin,
                    json: [
                        "signIn": [
                            "userId": Fixtures.alice.id, "clientAppId": Fixtures.mobileClientId, "resourceAppId": Fixtures.mailApiId, "userRiskLevel": "low",
                        ]
                    ])
                #expect((low.json["signIn"] as? [String: Any])?["errorCode"] == nil && low.string("error") == nil, "\(low.text)")

                // confirmCompromised through identityProtection: everything void; the user is confirmed compromised.
                let bob = try await client.token(Grants.password(Fixtures.bob))
                let bobRefresh = try #require(bob.string("refresh_token"))
                env.clock.advance(by: 0.2)
                let confirmed = try await client.admin(
                    .post, "/identityProtection/riskyUsers/confirmCompromised", token: admin, json: ["userIds": [Fixtures.bob.id]])
                #expect(confirmed.status == .noContent, "\(confirmed.text)")
                let refusedRefresh = try await client.token(Grants.refresh(bobRefresh))
                #expect(refusedRefresh.status == .badRequest && refusedRefresh.string("error") == "invalid_grant", "\(refusedRefresh.text)")
                let state = try await client.admin(.get, "/identityProtection/riskyUsers/\(Fixtures.bob.id)", token: admin)
                #expect(state.string("riskState") == "confirmedCompromised" && state.string("riskDetail") == "adminConfirmedUserCompromised")

                // Bad input: pointers, nothing done.
                let unknown = try await client.admin(
                    .post, "/identityProtection/riskyUsers/dismiss", token: admin, json: ["userIds": [Fixtures.carol.id, "nobody@nowhere.test"]])
                #expect(unknown.status == .badRequest && unknown.text.contains("/userIds/1"), "\(unknown.text)")
                let notReportable = try await client.admin(
                    .post, "/identityProtection/riskDetections", token: admin, json: ["userId": Fixtures.carol.id, "riskEventType": "unlikelyTravel"])
                #expect(notReportable.status == .badRequest && notReportable.text.contains("/riskEventType"), "\(notReportable.text)")
                #expect(try await client.admin(.get, "/identityProtection/riskyUsers/\(Fixtures.carol.id)", token: admin).status == .notFound)
                let insider = try await client.admin(
                    .put, "/identityProtection/riskyUsers/\(Fixtures.carol.id)/insiderRiskLevel", token: admin, json: ["level": "severe"])
                #expect(insider.status == .badRequest && insider.text.contains("/level"), "\(insider.text)")
                #expect(
                    try await client.admin(
                        .put, "/identityProtection/riskyUsers/\(Fixtures.carol.id)/insiderRiskLevel", token: admin, json: ["level": "elevated"]
                    ).status == .noContent)
                #expect(
                    try await client.admin(.get, "/identityProtection/riskyUsers/\(Fixtures.carol.id)", token: admin).string("insiderRiskLevel") == "elevated")
            }
        }
    }

    @Test(
        "a workload identity: a leaked secret reported raises its risk and a servicePrincipalRiskLevels policy refuses its grant; after learning, a network it has not used is suspicious; dismissed, it is allowed"
    )
    func workloadIdentity() async throws {
        try await withTestEnvironment(configure: { $0.trustedProxies = [IPRange("127.0.0.0/8")!, IPRange("::1/128")!] }) { env in
            try await env.application().test(.live) { client in
                var admin = try await client.adminToken()
                let daemon = Fixtures.daemonClientId
                let grant = Grants.clientCredentials()
                func token(from address: String) async throws -> JSONReply { try await client.token(grant, headers: Self.from(address)) }
                let policy: [String: Any] = [
                    "id": "a1000000-0000-4000-8000-00000000f004", "displayName": "Block risky workload identities", "state": "enabled",
                    "conditions": [
                        "clientApplications": ["includeServicePrincipals": [daemon]], "applications": ["includeApplications": ["All"]],
                        "servicePrincipalRiskLevels": ["high", "medium"],
                    ],
                    "grantControls": ["operator": "OR", "builtInControls": ["block"]],
                ]
                let created = try await client.admin(.post, "/conditional-access/policies", token: admin, json: policy)
                #expect(created.status == .created, "\(created.text)")
                // Learning: ten grants over five days from one /24.
                for day in 0..<10 {
                    #expect(try await token(from: "198.51.100.\(day + 1)").status == .ok)
                    await env.server.signIns.flush()
                    await env.server.risk.drain()
                    env.clock.advance(by: 15 * 3600)
                }
                admin = try await client.adminToken()  // the first one expired while the clock moved
                let quiet = try await client.admin(.get, "/identityProtection/riskyServicePrincipals", token: admin).json["value"] as? [Any]
                #expect(quiet?.isEmpty == true, "learning from one network: nothing unusual")
                // A network it has not used: this grant goes through (offline), the next is refused.
                #expect(try await token(from: "203.0.113.50").status == .ok)
                await env.server.risk.drain()
                let detections =
                    try await client.admin(.get, "/identityProtection/servicePrincipalRiskDetections", token: admin).json["value"] as? [[String: Any]]
                #expect(detections?.compactMap { $0["riskEventType"] as? String } == ["suspiciousSignins"], "\(String(describing: detections))")
                #expect(try await token(from: "198.51.100.1").errorCode == 53003)
                // Dismissed: allowed again. Then its secret is reported leaked: high, refused.
                let dismissed = try await client.admin(
                    .post, "/identityProtection/riskyServicePrincipals/dismiss", token: admin, json: ["servicePrincipalIds": [daemon]])
                #expect(dismissed.status == .noContent, "\(dismissed.text)")
                #expect(try await token(from: "198.51.100.1").status == .ok)
                let reported = try await client.admin(
                    .post, "/identityProtection/servicePrincipalRiskDetections", token: admin, json: ["appId": daemon, "riskEventType": "leakedCredentials"])
                #expect(reported.status == .created && reported.string("riskLevel") == "high", "\(reported.text)")
                #expect(try await token(from: "198.51.100.1").errorCode == 53003)
                let state = try await client.admin(.get, "/identityProtection/riskyServicePrincipals/\(daemon)", token: admin)
                #expect(state.string("riskLevel") == "high" && state.string("riskState") == "atRisk", "\(state.text)")
                let unknown = try await client.admin(
                    .post, "/identityProtection/riskyServicePrincipals/confirmCompromised", token: admin, json: ["servicePrincipalIds": ["nope"]])
                #expect(unknown.status == .badRequest && unknown.text.contains("/servicePrincipalIds/0"), "\(unknown.text)")
            }
        }
    }
}
