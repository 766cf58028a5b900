import AsyncHTTPClient
import Foundation
import HummingbirdTesting
import Logging
import PortcullisAPI
import PortcullisResourceServer
import PortcullisTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Continuous access evaluation on two nodes of one PostgreSQL (PROTOCOL §14, issue 30): a critical event raised on one
/// node is delivered once, not once per node, and a resource whose stream is at the other node enforces it.
@Suite("Shared Signals on two nodes", .serialized, .enabled(if: PostgresTestDatabase.suitesEnabled, "POSTGRES_URL is not set"))
struct MultiNodeSignalTests {
    static let sessionRevoked = "https://schemas.openid.net/secevent/caep/event-type/session-revoked"

    /// A port nobody listens on now (the kernel's choice for port 0, released at once).
    static func unusedPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        guard bound == 0 else { throw InteropSetupError(message: "no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    @Test(
        "revoked through node A: pushed once though both nodes dispatch, and refused by a resource whose poll stream is at node B (insufficient_claims)"
    )
    func eventAcrossNodes() async throws {
        let pushReceiver = CallbackReceiver()
        try await pushReceiver.application().test(.live) { receiverClient in
            try await PostgresTestDatabase.with { _, url in
                let root = FileManager.default.temporaryDirectory.appendingPathComponent("portcullis-signals-\(UUID().uuidString)")
                defer { try? FileManager.default.removeItem(at: root) }
                // Behind a load balancer both nodes answer as one address: here node B's, where the resource polls (the
                // issuer of every token and SET, and the host of the stream's poll URL).
                let port = try Self.unusedPort()
                let base = "http://127.0.0.1:\(port)"
                let environment = ["PORTCULLIS_POSTGRES_URL": url, "PORTCULLIS_BASE_URL": base]
                let directory = try Fixtures.directoryJSONWithSignalReceivers()
                async let startA = ServerProcess(root: root, directoryJSON: directory, data: "data-a", extraEnvironment: environment)
                async let startB = ServerProcess(
                    root: root, directoryJSON: directory, data: "data-b", extraEnvironment: environment, extraArguments: ["--port", String(port)])
                let (a, b) = try await (startA, startB)
                let client = HTTPClient(eventLoopGroupProvider: .singleton)
                do {
                    try await Self.exercise(
                        a, b, authority: "\(base)/\(Fixtures.domain)", pushTo: "http://127.0.0.1:\(receiverClient.port!)\(Fixtures.callbackPath)",
                        pushed: pushReceiver, client: client)
                } catch {
                    try? await client.shutdown()
                    _ = try? await a.stop()
                    _ = try? await b.stop()
                    throw error
                }
                try await client.shutdown()
                #expect(try await a.stop() == 0)
                #expect(try await b.stop() == 0)
            }
        }
    }

    static func exercise(
        _ a: ServerProcess, _ b: ServerProcess, authority: String, pushTo: String, pushed: CallbackReceiver, client: HTTPClient
    ) async throws {
        let (_, issued) = try await a.request(
            TestEnvironment.tokenPath,
            form: [
                ("grant_type", "client_credentials"), ("client_id", Fixtures.signalReceiver.appId), ("client_secret", Fixtures.signalReceiver.secret),
                ("scope", "api://portcullis-ssf/.default"),
            ])
        let ssf = try #require(issued["access_token"] as? String, "\(issued)")
        let (created, stream) = try await a.request(
            "/\(Fixtures.domain)/ssf/stream",
            json: ["events_requested": [sessionRevoked], "delivery": ["method": "urn:ietf:rfc:8935", "endpoint_url": pushTo], "description": "push"],
            bearer: ssf)
        #expect(created == 201, "\(stream)")

        // The resource library, as `portcullis gateway` runs it: a poll stream of its own at node B.
        let logger = Logger(label: "test")
        let view = RevocationView(capacity: 100)
        let validator = AccessTokenValidator(authority: authority, audiences: [Fixtures.mailApiId], client: client, logger: logger)
        let poller = SharedSignalsPoller(
            configuration: .init(authority: authority, clientId: Fixtures.signalReceiver.appId, clientSecret: Fixtures.signalReceiver.secret),
            receiver: SharedSignalsReceiver(view: view), validator: validator, client: client, logger: logger)
        let polling = Task { try await poller.run() }
        defer { polling.cancel() }
        let connected = ContinuousClock.now + .seconds(15)
        while !poller.isConnected && ContinuousClock.now < connected { try await Task.sleep(for: .milliseconds(20)) }
        #expect(poller.isConnected, "the poller holds a stream at node B")

        let (_, carolTokens) = try await b.request(TestEnvironment.tokenPath, form: Grants.password(Fixtures.carol, claims: nil))
        let carol = try #require(carolTokens["access_token"] as? String, "\(carolTokens)")
        let guardian = ResourceGuard(validator: validator, revocations: view)
        let url = "https://mail.fabrikam.test/messages"
        _ = try await guardian.authorize(authorization: "Bearer \(carol)", proofs: [], method: "GET", url: url, now: Date())

        let admin = try await MultiNodeTests.adminToken(a)
        let (revoked, _) = try await a.request("/admin/v1/users/\(Fixtures.carol.id)/revokeSignInSessions", method: "POST", bearer: admin)
        #expect(revoked == 200)
        let answered = ContinuousClock.now
        var challenge: String?
        while challenge == nil && ContinuousClock.now - answered < .seconds(10) {
            do {
                _ = try await guardian.authorize(authorization: "Bearer \(carol)", proofs: [], method: "GET", url: url, now: Date())
            } catch {
                challenge = error.challenges.first
                break
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(challenge?.contains(#"error="insufficient_claims""#) == true, "the revocation through node A reached the resource polling node B")

        // Both nodes run an outbox dispatcher: the stream still receives the event once.
        func revocationsPushed() -> Int {
            pushed.tokens.filter { set in
                let claims = jwtClaims(set)
                return (claims["events"] as? [String: Any])?[sessionRevoked] != nil
            }.count
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while revocationsPushed() == 0 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(revocationsPushed() == 1)
        try await Task.sleep(for: .seconds(2))  // past both dispatchers' next wake-ups
        #expect(revocationsPushed() == 1, "delivered once, not once per node")
    }
}
