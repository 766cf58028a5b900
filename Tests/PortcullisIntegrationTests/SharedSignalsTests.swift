import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOFoundationEssentialsCompat
import NIOHTTP1
import PortcullisClient
import PortcullisCore
import PortcullisResourceServer
import PortcullisServer
import PortcullisTesting
import PortcullisTokens
import ServiceLifecycle
import Synchronization
import Testing

/// Continuous access evaluation across the tenant boundary and through the resource-server library (PROTOCOL §14):
/// each check here fails when the check it names is removed.
@Suite("Shared Signals: the tenant boundary, SET verification, the revocation view")
struct SharedSignalsTests {
    static let receiver = Fixtures.signalReceiver
    static let otherReceiver = Fixtures.otherSignalReceiver

    static func directory() throws -> Data { try Fixtures.directoryJSONWithSignalReceivers() }

    struct HTTP {
        let client: HTTPClient
        let base: String

        func call(
            _ method: HTTPMethod, _ path: String, token: String? = nil, json: Any? = nil, form: [(String, String)]? = nil
        ) async throws -> (
            Int, Any?
        ) {
            var request = HTTPClientRequest(url: base + path)
            request.method = method
            if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
            if let json {
                request.headers.add(name: "Content-Type", value: "application/json")
                request.body = .bytes(ByteBuffer(data: try JSONSerialization.data(withJSONObject: json)))
            }
            if let form {
                request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
                request.body = .bytes(Form.encode(form))
            }
            let response = try await client.execute(request, timeout: .seconds(30))
            let body = try await response.body.collect(upTo: 1 << 20)
            return (Int(response.status.code), try? JSONSerialization.jsonObject(with: Data(buffer: body)))
        }

        func token(_ tenant: String, _ fields: [(String, String)]) async throws -> String {
            let (status, body) = try await call(.POST, "/\(tenant)/oauth2/v2.0/token", form: fields)
            return try #require((body as? [String: Any])?["access_token"] as? String, "HTTP \(status): \(String(describing: body))")
        }

        func clientToken(_ tenant: String, _ client: (String, String), scope: String) async throws -> String {
            try await token(tenant, [("grant_type", "client_credentials"), ("client_id", client.0), ("client_secret", client.1), ("scope", scope)])
        }
    }

    @Test("a receiver sees only its tenant; SETs are verified for typ, signer, issuer and audience; a revocation ends earlier tokens with insufficient_claims")
    func endToEnd() async throws {
        try await withTestEnvironment(baseURL: "http://localhost:0", directoryJSON: try Self.directory()) { env in
            try await withLiveServer(env) { authority in
                let client = HTTPClient(eventLoopGroupProvider: .singleton)
                do {
                    try await Self.run(env, authority: authority, client: client)
                } catch {
                    try? await client.shutdown()
                    throw error
                }
                try await client.shutdown()
            }
        }
    }

    @Test("selective wipe, end to end: the wiped instance's token passes a gateway with a live stream until the wipe, then 401 insufficient_claims")
    func wipeAtGateway() async throws {
        // Long polls answered within a second: the server's shutdown waits for the one in flight.
        try await withTestEnvironment(
            baseURL: "http://localhost:0", directoryJSON: try Self.directory(), configure: { $0.signals.longestPoll = .seconds(1) }
        ) { env in
            try await withLiveServer(env) { authority in
                let client = HTTPClient(eventLoopGroupProvider: .singleton)
                do {
                    try await Self.wipe(authority: authority, client: client)
                } catch {
                    try? await client.shutdown()
                    throw error
                }
                try await client.shutdown()
            }
        }
    }

    static func wipe(authority: URL, client: HTTPClient) async throws {
        let admin = try await Client.admin(authority)
        try await admin.requireAppProtection()
        let app = Client.app(authority)
        let manager = Client.manager(app, delegate: TestDelegate())
        let result = try await app.acquireToken(
            username: Fixtures.alice.upn, password: Fixtures.alice.password, scopes: [Client.mailScope], remediation: .automatic)
        let account = try #require(result.account)
        let enrollment = try #require(await manager.enrollmentId(for: account))
        let logger = Logger(label: "wipe-at-gateway")
        let upstream = try await MisbehavingUpstream.start()
        let validator = AccessTokenValidator(authority: authority.absoluteString, audiences: [Fixtures.mailApiId], client: client, logger: logger)
        let view = RevocationView(capacity: 100)
        let poller = SharedSignalsPoller(
            configuration: .init(authority: authority.absoluteString, clientId: receiver.0, clientSecret: receiver.1, streamDescription: "wipe test gateway"),
            receiver: SharedSignalsReceiver(view: view), validator: validator, client: client, logger: logger)
        let gateway = Gateway(
            configuration: Gateway.Configuration(upstream: "http://127.0.0.1:\(upstream.localAddress?.port ?? 0)", publicBaseURL: "http://127.0.0.1"),
            guardian: ResourceGuard(validator: validator, revocations: view), streamProblem: { poller.problem })
        let listening = Mutex<Int?>(nil)
        let server = try GatewayServer(
            gateway: gateway, host: "127.0.0.1", port: 0, logger: logger, onListening: { address in listening.withLock { $0 = address?.port } })
        let group = ServiceGroup(configuration: .init(services: [server, poller], logger: logger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            defer { tasks.cancelAll() }
            var port: Int?
            for _ in 0..<500 where port == nil || !poller.isConnected {
                port = listening.withLock { $0 }
                try await Task.sleep(for: .milliseconds(20))
            }
            let base = "http://127.0.0.1:\(try #require(port))"
            #expect(poller.isConnected, "the gateway's stream is connected: \(poller.problem ?? "")")
            func call() async throws -> (UInt, String) {
                var request = HTTPClientRequest(url: base + "/messages")
                request.headers.add(name: "Authorization", value: "Bearer \(result.accessToken)")
                let response = try await client.execute(request, timeout: .seconds(10))
                return (response.status.code, response.headers.first(name: "www-authenticate") ?? "")
            }
            #expect(try await call().0 == 200, "the enrolled instance's token passes before the wipe")
            #expect(try await admin.send("POST", "enrollments/\(enrollment)/wipe").0 == 202)
            var answer = try await call()
            let asked = ContinuousClock.now
            while answer.0 != 401 && ContinuousClock.now - asked < .seconds(10) {
                try await Task.sleep(for: .milliseconds(10))
                answer = try await call()
            }
            #expect(answer.0 == 401 && answer.1.contains(#"error="insufficient_claims""#), "the wiped instance's token is refused: \(answer)")
            await group.triggerGracefulShutdown()
        }
        try await upstream.close()
    }

    static func run(_ env: TestEnvironment, authority: URL, client: HTTPClient) async throws {
        let base = "http://localhost:\(authority.port!)"
        let http = HTTP(client: client, base: base)
        let ssf = "api://portcullis-ssf/.default"
        let mine = try await http.clientToken(Fixtures.domain, Self.receiver, scope: ssf)
        let theirs = try await http.clientToken(Fixtures.otherDomain, Self.otherReceiver, scope: ssf)

        // The tenant boundary: the other tenant's receiver, with a valid SSF token of its own, is refused at this
        // tenant's paths, whether it reads, creates or polls.
        #expect(try await http.call(.GET, "/\(Fixtures.domain)/ssf/stream", token: theirs).0 == 403)
        #expect(try await http.call(.GET, "/\(Fixtures.tenantId)/ssf/stream", token: theirs).0 == 403)
        #expect(try await http.call(.POST, "/\(Fixtures.domain)/ssf/stream", token: theirs, json: ["delivery": ["method": "urn:ietf:rfc:8936"]]).0 == 403)
        let (created, stream) = try await http.call(
            .POST, "/\(Fixtures.domain)/ssf/stream", token: mine,
            json: ["events_requested": SharedSignalsReceiver.eventsRequested, "delivery": ["method": "urn:ietf:rfc:8936"]])
        #expect(created == 201)
        let pollURL = try #require(((stream as? [String: Any])?["delivery"] as? [String: Any])?["endpoint_url"] as? String)
        let pollPath = String(pollURL.dropFirst(base.count))
        #expect(try await http.call(.POST, pollPath, token: theirs, json: ["returnImmediately": true]).0 == 403)
        let (ownList, listed) = try await http.call(.GET, "/\(Fixtures.otherDomain)/ssf/stream", token: theirs)
        #expect(ownList == 200 && (listed as? [Any])?.isEmpty == true, "its own tenant has no streams")

        // Carol's token passes the resource guard, until her sessions are revoked.
        let carol = try await http.token(
            Fixtures.domain,
            [
                ("grant_type", "password"), ("client_id", Fixtures.mobileClientId), ("username", Fixtures.carol.upn),
                ("password", Fixtures.carol.password), ("scope", Client.mailScope),
            ])
        let validator = AccessTokenValidator(
            authority: authority.absoluteString, audiences: [Fixtures.mailApiId], client: client, logger: Logger(label: "test"))
        let view = RevocationView(capacity: 100)
        let guardian = ResourceGuard(validator: validator, revocations: view)
        let url = "https://mail.fabrikam.test/messages"
        let before = try await guardian.authorize(authorization: "Bearer \(carol)", proofs: [], method: "GET", url: url, now: Date())
        try await Task.sleep(for: .milliseconds(1100))  // a later second than the token's iat
        let admin = try await http.clientToken(Fixtures.domain, (Fixtures.adminClientId, Fixtures.adminSecret), scope: "api://portcullis-admin/.default")
        #expect(try await http.call(.POST, "/admin/v1/users/\(Fixtures.carol.id)/revokeSignInSessions", token: admin).0 == 200)
        let (polled, answer) = try await http.call(.POST, pollPath, token: mine, json: ["returnImmediately": true])
        let sets = try #require((answer as? [String: Any])?["sets"] as? [String: String], "HTTP \(polled)")
        #expect(sets.count == 1)
        let receiver = SharedSignalsReceiver(view: view)
        for set in sets.values {
            let event = try await validator.validateSecurityEvent(set, audience: Self.receiver.0, now: Date())
            #expect(receiver.apply(event, now: Date()))
            // The audience is checked.
            await #expect(throws: AccessTokenValidator.Rejection.self) {
                _ = try await validator.validateSecurityEvent(set, audience: Self.otherReceiver.0, now: Date())
            }
        }
        do {
            _ = try await guardian.authorize(authorization: "Bearer \(carol)", proofs: [], method: "GET", url: url, now: Date())
            Issue.record("a token issued before the revocation must be refused")
        } catch {
            let challenge = try #require(error.challenges.first)
            #expect(challenge.hasPrefix("Bearer ") && challenge.contains(#"error="insufficient_claims""#), "\(challenge)")
            let encoded = try #require(challenge.split(separator: "claims=\"").last?.split(separator: "\"").first)
            let claims = try #require(Data(base64Encoded: String(encoded)).flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] })
            let nbf = try #require((claims["access_token"] as? [String: Any])?["nbf"] as? [String: Any])
            let value = try #require((nbf["value"] as? String).flatMap(Int.init))
            #expect(nbf["essential"] as? Bool == true && value > before.iat, "the new token must come after the old one: nbf \(value), iat \(before.iat)")
            // A token asked for with that claims request is issued after the revocation, and passes (the token endpoint issues
            // it once its clock reaches the nbf asked for: this test's clock moves when told).
            env.clock.advance(by: 1)
            let renewed = try await http.token(
                Fixtures.domain,
                [
                    ("grant_type", "password"), ("client_id", Fixtures.mobileClientId), ("username", Fixtures.carol.upn),
                    ("password", Fixtures.carol.password), ("scope", Client.mailScope),
                    ("claims", #"{"access_token":{"nbf":{"essential":true,"value":"\#(value)"}}}"#),
                ])
            let fresh = try await guardian.authorize(authorization: "Bearer \(renewed)", proofs: [], method: "GET", url: url, now: Date())
            #expect(fresh.iat >= value && fresh.nbf >= value)
        }

        // SETs the receiver must not believe: another typ, another issuer under this tenant's key, another tenant's key.
        let signer = try await env.server.dependencies.signers.signer(tenantId: TenantID(Fixtures.tenantId))
        // A token dated ahead (PROTOCOL §14.1) would count as issued after revocations that come before it: refused.
        var ahead = before
        ahead.iat += 600
        ahead.xmsIatMs = nil
        let datedAhead = try await signer.sign(accessToken: ahead)
        do {
            _ = try await guardian.authorize(authorization: "Bearer \(datedAhead)", proofs: [], method: "GET", url: url, now: Date())
            Issue.record("a token dated ahead must be refused")
        } catch {
            #expect(error.message.contains("future"), "\(error.message)")
        }
        let issuer = "\(authority.absoluteString.replacingOccurrences(of: "/\(Fixtures.domain)", with: ""))/\(Fixtures.tenantId)/v2.0"
        let good = SharedSignalsSecurityEvent(
            iss: issuer, aud: Self.receiver.0, iat: Int(Date().timeIntervalSince1970), jti: UUID().uuidString, subId: ["format": "opaque", "id": "x"],
            events: [SharedSignalsEventType.sessionRevoked.rawValue: [:]])
        _ = try await validator.validateSecurityEvent(try await signer.sign(sharedSignal: good), audience: Self.receiver.0, now: Date())
        var otherIssuer = good
        otherIssuer.iss = "https://elsewhere.example/\(Fixtures.tenantId)/v2.0"
        let otherSigner = try await env.server.dependencies.signers.signer(tenantId: TenantID(Fixtures.otherTenantId))
        for (forged, why) in [
            (try await signer.sign(good, type: "JWT"), "typ JWT"), (try await signer.sign(sharedSignal: otherIssuer), "another issuer"),
            (try await otherSigner.sign(sharedSignal: good), "another tenant's key"), (carol, "an access token"),
        ] {
            await #expect(throws: AccessTokenValidator.Rejection.self, "\(why)") {
                _ = try await validator.validateSecurityEvent(forged, audience: Self.receiver.0, now: Date())
            }
        }
    }
}

@Suite("RevocationView: who is refused, and its bounds")
struct RevocationViewTests {
    static func claims(user: String = "u", client: String = "app", iat: Int, milliseconds: Int64? = nil) -> AccessTokenClaims {
        var claims = AccessTokenClaims(
            iss: "i", aud: "a", sub: user, oid: user, tid: "t", azp: client, azpacr: "0", iat: iat, nbf: iat, exp: iat + 3600, jti: UUID().uuidString,
            scp: nil, roles: nil, upn: nil, preferredUsername: nil, name: nil, xmsCC: nil, idtyp: "user", xmsMamEnrollment: nil, amr: nil, authTime: nil,
            acrs: nil, cnf: nil)
        claims.xmsIatMs = milliseconds
        return claims
    }

    @Test("tokens issued at or before the revocation are refused, later ones pass; an app's revocation refuses only that app's")
    func refuses() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let view = RevocationView(capacity: 10)
        view.revoke(tenantId: "T", userId: "U", at: 1_800_000_000_000, now: now)
        #expect(view.revocation(of: Self.claims(iat: 1_800_000_000)) == 1_800_000_000_000)
        #expect(view.revocation(of: Self.claims(iat: 1_800_000_001)) == nil)
        #expect(view.revocation(of: Self.claims(user: "v", iat: 1_700_000_000)) == nil)
        view.revoke(tenantId: "t", userId: "v", clientId: "Wiped", at: 1_800_000_000_000, now: now)
        #expect(view.revocation(of: Self.claims(user: "v", client: "wiped", iat: 1_799_999_999)) == 1_800_000_000_000)
        #expect(view.revocation(of: Self.claims(user: "v", client: "other", iat: 1_799_999_999)) == nil)
        view.revoke(tenantId: "T", userId: "U", at: 1_700_000_000_000, now: now)
        #expect(view.revocation(of: Self.claims(iat: 1_800_000_000)) == 1_800_000_000_000, "an older revocation does not replace a newer one")
    }

    @Test(
        "to the millisecond (PROTOCOL §14.1): a token issued after a revocation in the same second passes; one without xms_iat_ms counts from its second's start"
    )
    func sameSecond() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let view = RevocationView(capacity: 10)
        view.revoke(tenantId: "t", userId: "u", at: 1_800_000_000_500, now: now)
        #expect(view.revocation(of: Self.claims(iat: 1_800_000_000, milliseconds: 1_800_000_000_501)) == nil, "after, same second: honoured")
        #expect(view.revocation(of: Self.claims(iat: 1_800_000_000, milliseconds: 1_800_000_000_500)) != nil, "at the millisecond: refused")
        #expect(view.revocation(of: Self.claims(iat: 1_800_000_000, milliseconds: 1_800_000_000_499)) != nil, "before, same second: refused")
        #expect(view.revocation(of: Self.claims(iat: 1_800_000_000)) != nil, "no xms_iat_ms: the second's start, refused")
        #expect(
            view.revocation(of: Self.claims(iat: 1_800_000_000, milliseconds: 1_800_000_999_000)) != nil,
            "an xms_iat_ms that is not the iat's second is not believed")
        #expect(ResourceGuard.notBeforeClaims(revokedAt: 1_800_000_000_500).contains(#""value":"1800000001""#), "asks from the next whole second")
        #expect(ResourceGuard.notBeforeClaims(revokedAt: 1_800_000_000_000).contains(#""value":"1800000000""#), "or the revocation's own")
    }

    @Test("a device in the subject (out of compliance): only the user's tokens naming that device are refused")
    func device() {
        let view = RevocationView(capacity: 10)
        let receiver = SharedSignalsReceiver(view: view)
        let event = SharedSignalsSecurityEvent(
            iss: "i", aud: "a", iat: 1_800_000_001, jti: "j",
            subId: [
                "format": "complex", "user": ["format": "iss_sub", "iss": "i", "sub": "u"], "tenant": ["format": "opaque", "id": "t"],
                "device": ["format": "opaque", "id": "D1"],
            ],
            events: [SharedSignalsEventType.sessionRevoked.rawValue: ["event_timestamp": .number(1_800_000_000)]])
        #expect(receiver.apply(event, now: Date(timeIntervalSince1970: 1_800_000_001)))
        var fromDevice = Self.claims(iat: 1_799_999_999)
        fromDevice.deviceid = "d1"
        #expect(view.revocation(of: fromDevice) == 1_800_000_000_000, "a token from the device")
        var fromAnother = fromDevice
        fromAnother.deviceid = "d2"
        #expect(view.revocation(of: fromAnother) == nil, "from another device")
        #expect(view.revocation(of: Self.claims(iat: 1_799_999_999)) == nil, "from no device")
        var later = fromDevice
        later.iat = 1_800_000_001
        later.nbf = 1_800_000_001
        #expect(view.revocation(of: later) == nil, "issued after")
    }

    @Test("a SET's event_timestamp is read to the millisecond")
    func eventTimestamp() {
        let view = RevocationView(capacity: 10)
        let receiver = SharedSignalsReceiver(view: view)
        let event = SharedSignalsSecurityEvent(
            iss: "i", aud: "a", iat: 1_800_000_001, jti: "j",
            subId: ["format": "complex", "user": ["format": "iss_sub", "iss": "i", "sub": "u"], "tenant": ["format": "opaque", "id": "t"]],
            events: [SharedSignalsEventType.sessionRevoked.rawValue: ["event_timestamp": .number(1_800_000_000.25)]])
        #expect(receiver.apply(event, now: Date(timeIntervalSince1970: 1_800_000_001)))
        #expect(view.revocation(of: Self.claims(iat: 1_800_000_000, milliseconds: 1_800_000_000_251)) == nil)
        #expect(view.revocation(of: Self.claims(iat: 1_800_000_000, milliseconds: 1_800_000_000_250)) == 1_800_000_000_250)
    }

    @Test("at most `capacity` revocations (the oldest go first), each dropped after `retention`")
    func bounded() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let view = RevocationView(capacity: 3, retention: 100)
        for index in 0..<5 { view.revoke(tenantId: "t", userId: "u\(index)", at: 1_800_000_000_000 + Int64(index) * 1000, now: now) }
        #expect(view.counts.held == 3 && view.counts.evicted == 2)
        #expect(view.revocation(of: RevocationViewTests.claims(user: "u0", iat: 1_700_000_000)) == nil, "the oldest was evicted")
        #expect(view.revocation(of: RevocationViewTests.claims(user: "u4", iat: 1_700_000_000)) != nil)
        view.revoke(tenantId: "t", userId: "late", at: 1_800_000_200_000, now: now.addingTimeInterval(200))
        #expect(view.counts.held == 1, "the others passed their retention")
        for index in 0..<10_000 {
            view.revoke(tenantId: "t", userId: "w\(index % 5)", at: 1_800_000_300_000 + Int64(index), now: now.addingTimeInterval(300))
        }
        #expect(view.counts.held <= 3)
    }
}
