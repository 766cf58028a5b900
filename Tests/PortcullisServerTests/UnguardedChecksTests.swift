import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PortcullisAPI
import PortcullisCore
import PortcullisSQLite
import PortcullisServer
import PortcullisStorage
import PortcullisTesting
import Testing

/// Checks the security review found no test guarding (issue 43): each test here fails when its check is deleted.
@Suite("Checks that no test guarded: a strength on refresh, the SSF role, a pass's start time (issue 43)")
struct UnguardedChecksTests {
    @Test("password + TOTP does not meet a phishing-resistant strength on the refresh path either: the family's refresh is refused (50076)")
    func strengthOnRefresh() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                try await Factor.requireForBob(client)
                let (_, done) = try await Factor.register(client, Browser(), env.clock)
                let tokens = try await client.token(Authorize.redeem(try #require(done.delivered["code"], "\(done.html)")))
                #expect(jwtClaims(tokens.string("access_token") ?? "")["amr"] as? [String] == ["pwd", "mfa"], "\(tokens.text)")
                let first = try await client.token(Grants.refresh(try #require(tokens.string("refresh_token"))))
                #expect(first.status == .ok, "the family refreshes before the strength: \(first.text)")
                let refresh = try #require(first.string("refresh_token"))

                let admin = try await client.adminToken()
                #expect(
                    try await Passkeys.requireStrength(client, admin, strengthId: AuthenticationStrengthPolicy.phishingResistant.id.rawValue).status == .created
                )
                let refused = try await client.token(Grants.refresh(refresh))
                #expect(refused.status == .badRequest && refused.errorCode == 50076, "password + TOTP under a passkey strength: \(refused.text)")
            }
        }
    }

    @Test("the SSF stream routes need the SSF.Receiver role: a token without it is refused (403), and one whose role was unassigned since")
    func receiverRole() async throws {
        try await withTestEnvironment(directoryJSON: try Fixtures.directoryJSONWithSignalReceivers()) { env in
            try await env.application().test(.router) { client in
                func stream(_ token: String) async throws -> HTTPResponse.Status {
                    try await client.execute(uri: "/\(Fixtures.domain)/ssf/stream", method: .get, headers: [.authorization: "Bearer \(token)"]) { $0.status }
                }
                let receiver = try await client.token([
                    ("grant_type", "client_credentials"), ("client_id", Fixtures.signalReceiver.appId), ("client_secret", Fixtures.signalReceiver.secret),
                    ("scope", "api://portcullis-ssf/.default"),
                ])
                let token = try #require(receiver.string("access_token"), "\(receiver.text)")
                #expect(try await stream(token) == .ok)

                // The daemon holds no role on the SSF resource: a token for it carries none.
                let daemon = try await client.token(Grants.clientCredentials(scope: "api://portcullis-ssf/.default"))
                if let roleless = daemon.string("access_token") {
                    #expect((jwtClaims(roleless)["roles"] as? [String] ?? []).isEmpty)
                    #expect(try await stream(roleless) == .forbidden, "a token without SSF.Receiver")
                } else {
                    #expect(daemon.status == .badRequest, "no token without a role: \(daemon.text)")
                }

                // The role unassigned after the token was issued: refused at once.
                let admin = try await client.adminToken()
                let assignments = try await client.admin(.get, "/app-role-assignments", token: admin)
                let assignment = try #require(
                    (assignments.json["value"] as? [[String: Any]])?.first { ($0["principalId"] as? String) == Fixtures.signalReceiver.appId }?["id"]
                        as? String,
                    "\(assignments.text)")
                let removed = try await client.admin(.delete, "/app-role-assignments/\(assignment)", token: admin, headers: [.ifMatch: "*"])
                #expect(removed.status == .noContent, "\(removed.text)")
                #expect(try await stream(token) == .forbidden, "the role is no longer assigned")
            }
        }
    }

    @Test("a temporary access pass is refused before its startDateTime and accepted from it")
    func passStartTime() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let start = env.clock.now().addingTimeInterval(3600)
                let issued = try await Passes.issue(client, admin, body: ["startDateTime": ISO8601.string(start), "lifetimeInMinutes": 60])
                let pass = try #require(issued.string("temporaryAccessPass"), "\(issued.text)")
                let early = try await Browser().signIn(client, account: Fixtures.bob, password: pass)
                #expect(early.status == .badRequest && early.shownCode == 50126, "before its start: \(early.html)")
                env.clock.advance(by: 3601)
                let started = try await Browser().signIn(client, account: Fixtures.bob, password: pass)
                #expect(started.status == .found && started.delivered["code"] != nil, "from its start: \(started.status) \(started.html)")
            }
        }
    }
}
