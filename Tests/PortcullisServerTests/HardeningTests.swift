import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import PortcullisAPI
import PortcullisCore
import PortcullisSQLite
import PortcullisServer
import PortcullisStorage
import PortcullisTesting
import PortcullisTokens
import Synchronization
import Testing

/// The weaknesses a security review confirmed on the first release, one test each (issue "Hardening").
@Suite("hardening")
struct HardeningTests {
    // MARK: 1. Metric labels

    @Test("no client value becomes a metric label: /metrics stays the same size whatever grant types and methods clients send")
    func boundedMetrics() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                func noise(_ length: Int) -> String { String((0..<length).map { _ in "abcdefghijklmnopqrstuvwxyz0123456789".randomElement()! }) }
                func hostileRound() async throws {
                    _ = try await client.token([("grant_type", noise(2000)), ("client_id", Fixtures.daemonClientId)])
                    _ = try await client.execute(uri: "/health/live", method: HTTPRequest.Method("X" + noise(20).uppercased())!) { _ in () }
                    _ = try await client.execute(
                        uri: "/\(noise(40))/oauth2/v2.0/token", method: .post, headers: Form.headers, body: Form.encode([("grant_type", noise(50))])
                    ) { _ in () }
                }
                for _ in 0..<20 { try await hostileRound() }
                _ = try await client.execute(uri: "/metrics", method: .get) { _ in () }  // the scrape's own series
                let before = try await client.execute(uri: "/metrics", method: .get) { String(buffer: $0.body) }
                for _ in 0..<200 { try await hostileRound() }
                let after = try await client.execute(uri: "/metrics", method: .get) { String(buffer: $0.body) }
                #expect(before.split(separator: "\n").count == after.split(separator: "\n").count, "new series appeared")
                #expect(after.utf8.count < 64 * 1024, "/metrics is \(after.utf8.count) bytes")
                #expect(after.contains(#"grant_type="other""#) && after.contains(#"method="other""#))
                for line in after.split(separator: "\n") where !line.hasPrefix("#") {
                    #expect(line.count < 300, "a long label value: \(line.prefix(120))")
                }
            }
        }
    }

    // MARK: 2. Password guessing

    @Test("10 wrong passwords lock the account for 60 s (50053, without any bcrypt work), then twice as long; the right password works after")
    func accountLockout() async throws {
        try await withTestEnvironment { env in
            let hasher = env.dependencies.passwords
            try await env.application().test(.router) { client in
                var wrong = Grants.password(scope: "openid", claims: nil)
                wrong[3] = ("password", "not-her-password")
                for attempt in 1...10 {
                    #expect(try await client.token(wrong).errorCode == 50126, "attempt \(attempt)")
                }
                let checks = hasher.checksPerformed
                let locked = try await client.token(Grants.password(scope: "openid", claims: nil))
                #expect(locked.status == .badRequest && locked.string("error") == "invalid_grant" && locked.errorCode == 50053, "\(locked.text)")
                #expect(hasher.checksPerformed == checks, "a locked attempt costs no bcrypt work")
                // Another account is not affected.
                #expect(try await client.token(Grants.password(Fixtures.bob, scope: "openid", claims: nil)).status == .ok)

                env.clock.advance(by: 61)
                #expect(try await client.token(Grants.password(scope: "openid", claims: nil)).status == .ok, "unlocked after 60 s")
                // The success cleared the account's counter: ten more failures lock it again, for 60 s.
                for _ in 1...10 { _ = try await client.token(wrong) }
                #expect(try await client.token(Grants.password(scope: "openid", claims: nil)).errorCode == 50053)
                env.clock.advance(by: 61)
                #expect(try await client.token(Grants.password(scope: "openid", claims: nil)).status == .ok)
            }
        }
    }

    @Test("150 wrong passwords, eight at a time, get at most the threshold's 10 bcrypt checks: each attempt is counted before it is checked (issue 25.5)")
    func concurrentGuesses() async throws {
        try await withTestEnvironment(passwords: try await PasswordHasher(cost: 4, queueLimit: 1000)) { env in
            let hasher = env.dependencies.passwords
            // A connection pool (not one pipelined connection): the attempts really reach the server together.
            try await env.application().test(.ahc(.http)) { client in
                var fields = Grants.password(scope: "openid", claims: nil)
                fields[3] = ("password", "not-her-password")
                let wrong = fields
                let before = hasher.checksPerformed
                let codes = try await concurrently(150) { _ in try await client.token(wrong).errorCode }
                let checked = hasher.checksPerformed - before
                #expect(checked <= 10, "\(checked) bcrypt checks before the lock")
                #expect(codes.filter { $0 == 50126 }.count == checked && codes.filter { $0 == 50053 }.count == 150 - checked, "\(codes)")
                // People who sign in correctly never use up their address's allowance (their attempt is given back).
                for _ in 0..<(env.configuration.lockout.addressThreshold + 5) {
                    #expect(try await client.token(Grants.password(Fixtures.bob, scope: "openid", claims: nil)).status == .ok)
                }
            }
        }
    }

    @Test("locks escalate: each further lock of an account lasts twice as long as the one before")
    func escalation() {
        let policy = LockoutPolicy()
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let subject = LockoutPolicy.Subject.account(tenantId: "t", userId: "u")
        var counter: ThrottleCounter?
        var durations: [TimeInterval] = []
        var clock = now
        for _ in 0..<4 {
            for _ in 0..<10 { counter = policy.afterFailure(counter, subject: subject, now: clock) }
            let until = try! #require(counter?.lockedUntil)
            durations.append(until.timeIntervalSince(clock))
            clock = until.addingTimeInterval(1)
        }
        #expect(durations == [60, 120, 240, 480])
        #expect(policy.lockDuration(locks: 20) == policy.maximumLock)
        // Failures spread wider than the window never lock.
        var spread: ThrottleCounter?
        for step in 0..<30 { spread = policy.afterFailure(spread, subject: subject, now: now.addingTimeInterval(Double(step) * 70)) }
        #expect(spread?.lockedUntil == nil)
        // IPv6 clients are counted by their /64.
        #expect(LockoutPolicy.Subject.address(IPAddress("2001:db8:1:2::5")).key == LockoutPolicy.Subject.address(IPAddress("2001:db8:1:2:ffff::1")).key)
        #expect(LockoutPolicy.Subject.address(IPAddress("2001:db8:1:2::5")).key != LockoutPolicy.Subject.address(IPAddress("2001:db8:1:3::5")).key)
    }

    @Test("guessing at unknown users is throttled per client address: after 100 failures even a right password from that address waits")
    func addressThrottle() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                for index in 0..<100 {
                    let reply = try await client.token([
                        ("grant_type", "password"), ("client_id", Fixtures.mobileClientId),
                        ("username", "nobody\(index)@fabrikam.test"), ("password", "x"), ("scope", "openid"),
                    ])
                    #expect(reply.errorCode == 50034)
                }
                let checks = env.dependencies.passwords.checksPerformed
                let throttled = try await client.token(Grants.password(Fixtures.carol, scope: "openid", claims: nil))
                #expect(throttled.errorCode == 50053 && throttled.string("error_description")?.contains("IP address") == true, "\(throttled.text)")
                #expect(env.dependencies.passwords.checksPerformed == checks)
                // Unknown user names leave no account counters behind: only the address's.
                let counters = try await env.store.throttles(keys: [
                    "ip:unknown", LockoutPolicy.Subject.account(tenantId: Fixtures.tenantId, userId: Fixtures.carol.id).key,
                ])
                #expect(counters.map(\.key) == ["ip:unknown"])
                env.clock.advance(by: 61)
                #expect(try await client.token(Grants.password(Fixtures.carol, scope: "openid", claims: nil)).status == .ok)
                // The sweeper forgets finished counters.
                env.clock.advance(by: 2 * 24 * 3600)
                await env.server.sweeper.sweep()
                #expect(try await env.store.throttles(keys: ["ip:unknown"]).isEmpty)
            }
        }
    }

    @Test("password checks beyond the bounded queue are refused at once with 503 temporarily_unavailable and Retry-After")
    func boundedHashingQueue() async throws {
        // A slow hash and no waiting room: with more concurrent checks than threads, some must be refused. Twelve more than
        // the cores, so that at least six overlap a busy thread even when a loaded machine starts some requests late
        // (with six more, a run on a busy machine saw only four refused).
        let slow = try await PasswordHasher(cost: 12, queueLimit: 0)
        try await withTestEnvironment(passwords: slow) { env in
            try await env.application().test(.router) { client in
                struct Outcome: Sendable {
                    let status: Int
                    let error: String?
                    let code: Int?
                    let retryAfter: String?
                }
                let replies = try await withThrowingTaskGroup(of: Outcome.self) { group in
                    for index in 0..<(System.coreCount + 12) {
                        group.addTask {
                            let reply = try await client.token([
                                ("grant_type", "password"), ("client_id", Fixtures.mobileClientId),
                                ("username", "guess\(index)@fabrikam.test"), ("password", "x"), ("scope", "openid"),
                            ])
                            return Outcome(
                                status: Int(reply.status.code), error: reply.string("error"), code: reply.errorCode, retryAfter: reply.headers[.retryAfter])
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                let busy = replies.filter { $0.status == 503 }
                #expect(busy.count >= 6, "\(replies.map(\.status))")
                #expect(busy.allSatisfy { $0.error == "temporarily_unavailable" && $0.retryAfter == "1" })
                #expect(replies.filter { $0.code == 50034 }.count >= 1)
                #expect(slow.pending == 0)
            }
        }
    }

    // MARK: 3. Bearer tokens are re-checked on every request

    @Test("a revoked admin token, a disabled admin user and a removed role stop opening the admin API at once")
    func bearerRechecks() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let appToken = try await client.adminToken()
                #expect(try await client.admin(.get, "/audit", token: appToken).status == .ok)
                let revoked = try await client.form(
                    "/\(Fixtures.domain)/oauth2/v2.0/revoke",
                    [
                        ("token", appToken), ("client_id", Fixtures.adminClientId), ("client_secret", Fixtures.adminSecret),
                    ])
                #expect(revoked.status == .ok)
                #expect(try await client.admin(.get, "/audit", token: appToken).status == .unauthorized, "revoked by jti")

                // Erin signs in (she holds the role), then is disabled.
                let erin = try await client.token([
                    ("grant_type", "password"), ("client_id", Fixtures.adminClientId), ("client_secret", Fixtures.adminSecret),
                    ("username", Fixtures.admin.upn), ("password", Fixtures.admin.password), ("scope", "api://portcullis-admin/.default"),
                ])
                let erinToken = try #require(erin.string("access_token"), "\(erin.text)")
                #expect(try await client.admin(.get, "/audit", token: erinToken).status == .ok)
                try await Self.editUser(env, Fixtures.admin.id) { $0["accountEnabled"] = .bool(false) }
                #expect(try await client.admin(.get, "/audit", token: erinToken).status == .unauthorized, "disabled user")

                // The app's role assignment is removed: a fresh token signed before the removal stops at once.
                let second = try await client.adminToken()
                #expect(try await client.admin(.get, "/audit", token: second).status == .ok)
                let assignments = try await env.store.documents(tenantId: TenantID(Fixtures.tenantId), kind: .appRoleAssignment)
                let adminApp = try #require(assignments.first { String(decoding: $0.body, as: UTF8.self).contains(Fixtures.adminClientId) })
                let revision = try await env.store.delete(
                    tenantId: TenantID(Fixtures.tenantId), kind: .appRoleAssignment, id: adminApp.id, precondition: .mustExist, audit: nil)
                try await env.server.tenants.documentChanged(
                    tenantId: TenantID(Fixtures.tenantId), kind: .appRoleAssignment, id: adminApp.id, revision: revision)
                #expect(try await client.admin(.get, "/audit", token: second).status == .forbidden, "role no longer assigned")
            }
        }
    }

    static func editUser(_ env: TestEnvironment, _ id: String, _ change: (inout [String: JSONValue]) -> Void) async throws {
        let stored = try #require(try await env.store.document(tenantId: TenantID(Fixtures.tenantId), kind: .user, id: id))
        guard case .object(var object) = try #require(JSONValue.parse(stored.body)) else { throw InteropSetupError(message: "user is not an object") }
        change(&object)
        let written = try await env.store.put(
            tenantId: TenantID(Fixtures.tenantId), kind: .user, id: id, body: try JSONEncoder().encode(JSONValue.object(object)),
            precondition: .version(stored.version), at: env.clock.now(), audit: nil)
        try await env.server.tenants.documentChanged(tenantId: TenantID(Fixtures.tenantId), kind: .user, id: id, revision: written.version)
    }

    // MARK: 4. Callback destinations

    @Test(
        "callback destinations: loopback only when allowed (off by default), private and link-local only when allowed, unroutable never; '127.attacker.example' is not loopback"
    )
    func callbackDestinations() async {
        let strict = CallbackDestinations()
        let lenient = CallbackDestinations(allowPrivateNetworks: true)
        let loopback = CallbackDestinations(allowLoopback: true)
        func refused(_ destinations: CallbackDestinations, _ url: String) async -> Bool {
            do {
                try await destinations.check(url)
                return false
            } catch { return true }
        }
        #expect(await refused(strict, "http://127.0.0.1:9/compliance"), "loopback refused by default")
        #expect(await refused(strict, "https://[::1]:9/compliance"))
        #expect(await refused(lenient, "https://localhost:9/compliance"), "allowing private networks does not allow loopback")
        #expect(await !refused(loopback, "http://127.0.0.1:9/compliance"))
        #expect(await !refused(loopback, "http://[::1]:9/compliance"))
        #expect(await !refused(strict, "https://93.184.216.34/compliance"))
        #expect(await refused(strict, "http://127.attacker.example/compliance"), "http beyond loopback")
        #expect(await refused(strict, "https://10.1.2.3/compliance"))
        #expect(await refused(strict, "https://192.168.1.10/compliance"))
        #expect(await refused(strict, "https://169.254.169.254/latest/meta-data"))
        #expect(await refused(strict, "https://[fe80::1]/compliance"))
        #expect(await refused(strict, "https://[::ffff:10.0.0.1]/compliance"), "IPv4-mapped private")
        #expect(await refused(strict, "https://0.0.0.0/compliance"))
        #expect(await refused(strict, "https://localhost.invalid/compliance"), "does not resolve")
        #expect(await !refused(lenient, "https://10.1.2.3/compliance"))
        #expect(await !refused(lenient, "https://169.254.169.254/x"))
        #expect(await refused(lenient, "https://224.0.0.1/x"))
        #expect(!CallbackURI.isAcceptable("http://127.attacker.example/compliance"))
        #expect(CallbackURI.isAcceptable("http://127.0.0.2:8080/compliance"))
    }

    @Test("delivery does not follow redirects: a 307 is a failed attempt and the redirect target receives nothing")
    func noRedirects() async throws {
        let target = CallbackReceiver()
        try await target.application().test(.live) { targetClient in
            let targetPort = try #require(targetClient.port)
            let redirector = Router()
            redirector.post(RouterPath(Fixtures.callbackPath)) { _, _ -> Response in
                Response(status: .temporaryRedirect, headers: [.location: "http://127.0.0.1:\(targetPort)\(Fixtures.callbackPath)"])
            }
            try await Application(router: redirector).test(.live) { redirectorClient in
                try await withTestEnvironment(directoryJSON: Fixtures.directoryJSON(callbackBase: "http://127.0.0.1:\(redirectorClient.port!)")) { env in
                    try await env.application().test(.router) { client in
                        try await client.createAppProtectionCA()
                        _ = try await client.becomeCompliant()
                    }
                    #expect(try await env.server.dispatcher.deliverDue() == 1)
                    let messages = try await env.store.outboxMessages(tenantId: Fixtures.tenantId, state: .pending, limit: 10)
                    #expect(messages.contains { $0.lastError == "the receiver answered HTTP 307" && $0.attempts == 1 }, "\(messages.map(\.lastError))")
                    #expect(target.tokens.isEmpty, "the redirect was followed")
                }
            }
        }
    }

    // MARK: 7. Files

    @Test("the data directory is 0700, the database and its WAL 0600, keys 0600; a damaged pepper is an error naming the file, never replaced")
    func privateFiles() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                _ = try await client.token(Grants.clientCredentials())
            }
            func mode(_ url: URL) throws -> Int {
                try #require((try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? NSNumber)?.intValue)
            }
            let data = env.root.appendingPathComponent("data")
            #expect(try mode(data) == 0o700)
            for file in ["portcullis.sqlite", "portcullis.sqlite-wal", "portcullis.sqlite-shm"] {
                #expect(try mode(data.appendingPathComponent(file)) == 0o600, "\(file)")
            }
            let keys = env.root.appendingPathComponent("Keys")
            #expect(try mode(keys) == 0o700)
            let pepper = keys.appendingPathComponent("credential-pepper.key")
            #expect(try mode(pepper) == 0o600)
            let original = try Data(contentsOf: pepper)
            #expect(
                try CredentialHasher.loadOrCreate(file: pepper).hashSecret("s")
                    == CredentialHasher(pepper: try #require(Data(base64Encoded: String(decoding: original, as: UTF8.self)))).hashSecret("s"))
            for damaged in ["c2hvcnQ=", "not base64 !!"] {
                try Data(damaged.utf8).write(to: pepper)
                #expect { try CredentialHasher.loadOrCreate(file: pepper) } throws: { error in
                    (error as? KeyFileError)?.file == pepper.path
                }
                #expect(try Data(contentsOf: pepper) == Data(damaged.utf8), "never replaced")
            }
        }
    }

    // MARK: 8. Capabilities

    @Test("more than 16 capabilities, or one longer than 64 characters, is invalid_request 90100; tokens stay small")
    func boundedCapabilities() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let many = #"{"access_token":{"xms_cc":{"values":[\#((0..<17).map { "\"c\($0)\"" }.joined(separator: ","))]}}}"#
                let refused = try await client.token(Grants.password(scope: "openid", claims: many))
                #expect(refused.status == .badRequest && refused.string("error") == "invalid_request" && refused.errorCode == 90100)
                let long = #"{"access_token":{"xms_cc":{"values":["\#(String(repeating: "x", count: 65))"]}}}"#
                #expect(try await client.token(Grants.password(scope: "openid", claims: long)).errorCode == 90100)
            }
        }
    }

    // MARK: 9. Logs

    @Test("the log handler escapes control characters and clips: a line break in a client_id cannot forge a log line")
    func logEscaping() {
        let lines = Mutex<[String]>([])
        var logger = Logger(label: "test") { label in SafeLogHandler(label: label) { line in lines.withLock { $0.append(line) } } }
        logger.logLevel = .info
        logger.info("token refused", metadata: ["portcullis.client_id": .clientControlled("x\n2026-11-23T00:00:00Z notice portcullis: forged\r\u{1B}[31m")])
        logger.info("path /a\nb \(String(repeating: "y", count: 5000))")
        let written = lines.withLock { $0 }
        #expect(written.count == 2)
        #expect(written.allSatisfy { $0.filter { $0 == "\n" }.count == 1 && $0.hasSuffix("\n") && !$0.contains("\r") && !$0.contains("\u{1B}") })
        #expect(written[0].contains(#"x\n2026-11-23T00:00:00Z notice portcullis: forged\r\u{1B}[31m"#))
        #expect(written[1].count < SafeLogHandler.messageLimit + 200)
        // Plain ASCII within the limit is written as it is; a backslash, a long value and other scripts take the slow path.
        #expect(SafeLogHandler.escape("d5bfa097-c3ca-1160 /{tenant}/oauth2", limit: 64) == "d5bfa097-c3ca-1160 /{tenant}/oauth2")
        #expect(SafeLogHandler.escape(#"a\b"#, limit: 64) == #"a\\b"#)
        #expect(SafeLogHandler.escape(String(repeating: "z", count: 300), limit: 256) == String(repeating: "z", count: 256) + "…")
        #expect(SafeLogHandler.escape("zürich\u{2028}", limit: 64) == #"zürich\u{2028}"#)
        #expect(SafeLogHandler.escape("\u{7F}x", limit: 64) == #"\u{7F}x"#)
    }

    // MARK: 10. Unbounded growth

    @Test("an account keeps at most maximumEnrollmentsPerAccount enrollments of one app; the oldest idle go first")
    func enrollmentCap() async throws {
        try await withTestEnvironment(configure: { $0.maximumEnrollmentsPerAccount = 5 }) { env in
            try await env.application().test(.router) { client in
                let token = try await client.complianceToken()
                var ids: [String] = []
                for device in 0..<8 {
                    env.clock.advance(by: 1)
                    let reply = try await client.mam(.post, "/enrollments", token: token, json: Device.body("device-\(device)"))
                    ids.append(try #require(reply.string("enrollmentId"), "\(reply.text)"))
                }
                let kept = try await env.store.enrollments(EnrollmentQuery(tenantId: TenantID(Fixtures.tenantId), userId: ObjectID(Fixtures.alice.id)))
                #expect(Set(kept.map(\.id.rawValue)) == Set(ids.suffix(5)))
                #expect(try await env.store.enrollmentHistory(id: RecordID(ids[0])).isEmpty, "history goes with it")
            }
        }
    }

    @Test("delivered and dead-lettered callbacks are purged after their retention; pending ones stay")
    func outboxRetention() async throws {
        try await withTestEnvironment { env in
            let now = env.clock.now()
            for index in 0..<3 {
                _ = try await env.store.insertEnrollment(
                    Enrollment(
                        id: RecordID("e\(index)"), tenantId: TenantID(Fixtures.tenantId), userId: ObjectID(Fixtures.alice.id),
                        userPrincipalName: Fixtures.alice.upn,
                        clientId: AppID(Fixtures.mobileClientId), deviceId: DeviceID("d\(index)"), platform: .iOS, osVersion: "17", appVersion: "1",
                        sdkVersion: "1",
                        state: .pending, complianceStatus: .policyNotApplied, policyVersion: "v", appliedPolicyVersion: nil, callbackUri: nil,
                        enrolledAt: now, lastCheckInAt: nil, lapsesAt: nil, updatedAt: now),
                    history: EnrollmentHistoryEntry(at: now, event: .enrolled, fromStatus: nil, toStatus: nil),
                    outbox: [
                        OutboxMessage(
                            id: "m\(index)", tenantId: Fixtures.tenantId, enrollmentId: "e\(index)", targetUri: "http://127.0.0.1:9/x",
                            payload: "p", jti: "j\(index)", nextAttemptAt: now, createdAt: now)
                    ],
                    keepingAtMost: 20)
            }
            let claimed = try await env.store.claimOutbox(now: now, leaseUntil: now.addingTimeInterval(30), owner: "o", limit: 10)
            #expect(claimed.count == 3)
            try await env.store.completeOutbox(id: "m0", owner: "o", at: now)
            try await env.store.failOutbox(id: "m1", owner: "o", attempts: 10, nextAttemptAt: nil, error: "HTTP 500")
            try await env.store.failOutbox(id: "m2", owner: "o", attempts: 1, nextAttemptAt: now.addingTimeInterval(1), error: "HTTP 500")
            #expect(try await env.store.purgeOutbox(before: now) == 0, "nothing is older than the retention yet")
            env.clock.advance(by: env.configuration.outboxRetention + 1)
            await env.server.sweeper.sweep()
            let left = try await env.store.outboxMessages(tenantId: Fixtures.tenantId, state: nil, limit: 10)
            #expect(left.map(\.id) == ["m2"])
        }
    }
}

@Suite("input found by schemathesis")
struct SchemathesisFindingsTests {
    @Test("a required member sent as null is refused like a missing one; a blank device ID is refused; bad paging parameters are 400")
    func findings() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let token = try await client.adminToken()
                let nullApps: [String: Any] = [
                    "displayName": "x", "state": "enabled",
                    "conditions": ["users": ["includeUsers": ["All"]], "applications": ["includeApplications": NSNull()]],
                    "grantControls": ["operator": "OR", "builtInControls": ["block"]],
                ]
                let refused = try await client.admin(.post, "/conditional-access/policies", token: token, json: nullApps)
                #expect(refused.status == .badRequest && refused.text.contains("/conditions/applications/includeApplications"), "\(refused.text)")
                let nullGroups: [String: Any] = [
                    "displayName": "x", "targets": ["applications": [Fixtures.mobileClientId], "includeGroups": NSNull()], "settings": [:] as [String: Any],
                ]
                let refusedGroups = try await client.admin(.post, "/app-protection/policies", token: token, json: nullGroups)
                #expect(refusedGroups.status == .badRequest && refusedGroups.text.contains("/targets/includeGroups"), "\(refusedGroups.text)")
                for query in ["/audit?top=abc", "/audit?before=abc", "/audit?before=9223372036854775808", "/enrollments?top=null", "/outbox?top=0"] {
                    #expect(try await client.admin(.get, query, token: token).status == .badRequest, "\(query)")
                }
                let compliance = try await client.complianceToken()
                #expect(
                    try await client.mam(.post, "/enrollments", token: compliance, json: ["deviceId": "\u{0C}\n", "platform": "iOS"]).status == .badRequest)
            }
        }
    }
}
