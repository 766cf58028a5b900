import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PortcullisCore
import PortcullisServer
import PortcullisStorage
import PortcullisTesting
import Testing

/// The sign-in log a busy tenant can keep (issue 32), through the token endpoint, the admin API, impact analysis and the
/// console.
@Suite("sign-in log: aggregates of non-interactive sign-ins, compact records")
struct SignInLogTests {
    static func records(_ reply: JSONReply) -> [[String: Any]] { reply["value"] as? [[String: Any]] ?? [] }
    static func count(_ record: [String: Any]) -> Int { (record["aggregate"] as? [String: Any])?["count"] as? Int ?? 1 }

    @Test(
        "refreshes and an app's own tokens are counted into one record each; the password sign-in and a refusal stay single; impact weighs the counts; the console shows them"
    )
    func aggregates() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let password = try await client.token(Grants.password(), headers: [HTTPField.Name("client-request-id")!: "alice-password"])
                var refresh = try #require(password.string("refresh_token"), "\(password.text)")
                for n in 0..<4 {
                    let refreshed = try await client.token(Grants.refresh(refresh), headers: [HTTPField.Name("client-request-id")!: "alice-refresh-\(n)"])
                    refresh = try #require(refreshed.string("refresh_token"), "\(refreshed.text)")
                }
                for n in 0..<3 {
                    #expect(
                        try await client.token(Grants.clientCredentials(), headers: [HTTPField.Name("client-request-id")!: "daemon-\(n)"]).status == .ok)
                }
                let block = Policies.document(id: "a1000000-0000-4000-8000-0000000000b1", name: "Block Bob", users: [Fixtures.bob.id], controls: ["block"])
                #expect(try await client.admin(.post, "/conditional-access/policies", token: admin, json: block).status == .created)
                for n in 0..<2 {
                    let refused = try await client.token(Grants.password(Fixtures.bob), headers: [HTTPField.Name("client-request-id")!: "bob-\(n)"])
                    #expect(refused.errorCode == 53003, "\(refused.text)")
                }

                let alice = Self.records(try await client.admin(.get, "/sign-ins?user=\(Fixtures.alice.upn)", token: admin))
                #expect(alice.count == 2, "one aggregate for four refreshes, one record for the password: \(alice)")
                let counted = try #require(alice.first)
                #expect(Self.count(counted) == 4 && counted["isInteractive"] as? Bool == false && counted["grantType"] as? String == "refresh_token")
                let aggregate = try #require(counted["aggregate"] as? [String: Any])
                #expect(counted["correlationId"] as? String == "alice-refresh-0" && aggregate["lastCorrelationId"] as? String == "alice-refresh-3")
                #expect(alice.last?["correlationId"] as? String == "alice-password" && alice.last?["isInteractive"] as? Bool == true)
                #expect(alice.last?["aggregate"] == nil)
                // Found by its last sign-in's correlation ID too.
                let byLast = Self.records(try await client.admin(.get, "/sign-ins?correlationId=alice-refresh-3", token: admin))
                #expect(byLast.count == 1 && Self.count(byLast[0]) == 4)

                let daemon = Self.records(try await client.admin(.get, "/sign-ins?app=\(Fixtures.daemonClientId)", token: admin))
                #expect(daemon.map(Self.count) == [3] && daemon.first?["userId"] == nil, "\(daemon)")

                let bob = Self.records(try await client.admin(.get, "/sign-ins?user=\(Fixtures.bob.upn)", token: admin))
                #expect(bob.map { $0["correlationId"] as? String } == ["bob-1", "bob-0"], "refusals stay one by one")
                let applied = try #require((bob.first?["appliedConditionalAccessPolicies"] as? [[String: Any]])?.first)
                #expect(applied["displayName"] as? String == "Block Bob" && applied["result"] as? String == "failure", "names come from the tenant")

                // Impact analysis counts each sign-in an aggregate stands for.
                let all = Self.records(try await client.admin(.get, "/sign-ins?top=500", token: admin))
                let signIns = all.map(Self.count).reduce(0, +)
                #expect(all.count < signIns)
                let draft = Policies.document(id: "a1000000-0000-4000-8000-0000000000b2", name: "Block Alice", users: [Fixtures.alice.id], controls: ["block"])
                let impact = try await client.admin(.post, "/conditional-access/impact", token: admin, json: ["policies": [draft]])
                #expect(impact["evaluated"] as? Int == signIns, "\(impact.text)")
                let summary = try #require(impact["summary"] as? [String: Any])
                #expect(summary["newlyRefused"] as? Int == 5, "Alice's five sign-ins: \(summary)")
                let change = (impact["changes"] as? [[String: Any]])?.first { $0["count"] as? Int == 4 }
                #expect(change != nil, "the aggregate's change carries its count: \(impact.text)")

                // The console lists the aggregate with its count.
                try await ConsoleTests.grantAdmin(client, Fixtures.carol)
                let (browser, _) = try await ConsoleTests.signIn(client, Fixtures.carol, base: env.dependencies.configuration.baseURL)
                let page = try await browser.get(client, "/admin/sign-ins?user=\(Fixtures.alice.upn)")
                #expect(page.status == .ok && page.html.contains("× 4") && page.html.contains("non-interactive, 4 sign-ins"), "\(page.html)")
            }
        }
    }

    @Test("a code issued from the session without the user (single sign-on) is a non-interactive sign-in; the page's code is interactive")
    func silentCode() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let browser = Browser()
                let page = try await browser.signIn(client, account: Fixtures.alice)
                let first = try await client.token(Authorize.redeem(try #require(page.delivered["code"], "\(page.html)")))
                #expect(first.status == .ok, "\(first.text)")
                let again = try await browser.get(client, Authorize.query())
                #expect(again.status == .found, "single sign-on: no page")
                let second = try await client.token(Authorize.redeem(try #require(again.delivered["code"])))
                #expect(second.status == .ok, "\(second.text)")
                let records = Self.records(try await client.admin(.get, "/sign-ins?user=\(Fixtures.alice.upn)", token: admin))
                #expect(records.map { $0["isInteractive"] as? Bool } == [false, true], "\(records)")
                #expect(records.map { $0["grantType"] as? String } == ["authorization_code", "authorization_code"])
                #expect(records.first.map(Self.count) == 1 && records.first?["aggregate"] != nil, "the silent one is counted")
            }
        }
    }
}
