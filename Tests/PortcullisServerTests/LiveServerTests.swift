import Foundation
import NIOCore
import PortcullisAPI
import PortcullisCore
import PortcullisTesting
import PortcullisTokens
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The built `portcullis` executable, next to the test bundle.
func portcullisExecutable() throws -> String {
    let candidates = [
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("portcullis").path,
        packageRoot.appendingPathComponent(".build/debug/portcullis").path,
    ]
    guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
        throw InteropSetupError(message: "no portcullis executable in \(candidates)")
    }
    return found
}

/// Text collected from a pipe while a process runs.
final class OutputBuffer: Sendable {
    private let text = Mutex("")
    func append(_ more: String) { text.withLock { $0 += more } }
    var value: String { text.withLock { $0 } }
}

/// A real `portcullis serve` process on port 0 over temporary directories.
/// A server process for the body's duration, stopped (and awaited) when the body returns or throws.
func withServerProcess<T>(
    root: URL, directoryJSON: Data = Fixtures.directoryJSON(), data: String = "data", extraEnvironment: [String: String] = [:],
    configDirectory: URL? = nil, extraArguments: [String] = [], _ body: (ServerProcess) async throws -> T
) async throws -> T {
    let server = try await ServerProcess(
        root: root, directoryJSON: directoryJSON, data: data, extraEnvironment: extraEnvironment, configDirectory: configDirectory,
        extraArguments: extraArguments)
    do {
        let result = try await body(server)
        _ = try? await server.stop()
        return result
    } catch {
        _ = try? await server.stop()
        throw error
    }
}

final class ServerProcess: Sendable {
    let process: Process
    let output = OutputBuffer()
    /// Whether the process has exited and been reaped (by us).
    private let exited = Atomic<Bool>(false)
    let root: URL
    let port: Int
    /// Reads the server's output until it exits.
    let reader: PipeReader

    init(
        root: URL, directoryJSON: Data = Fixtures.directoryJSON(), data: String = "data", extraEnvironment: [String: String] = [:],
        configDirectory: URL? = nil, extraArguments: [String] = []
    ) async throws {
        self.root = root
        let config = configDirectory ?? root.appendingPathComponent("Config")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        if configDirectory == nil && !FileManager.default.fileExists(atPath: config.appendingPathComponent("directory.json").path) {
            try directoryJSON.write(to: config.appendingPathComponent("directory.json"))
            for (path, contents) in Fixtures.configFiles {
                let file = config.appendingPathComponent(path)
                try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
                try contents.write(to: file)
            }
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try portcullisExecutable())
        process.arguments =
            [
                "serve", "--config", config.path, "--data", root.appendingPathComponent(data).path,
                "--keys", root.appendingPathComponent("Keys").path, "--port", "0",
            ] + extraArguments
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PORTCULLIS_") }
        environment["PORTCULLIS_BCRYPT_COST"] = "4"
        environment["PORTCULLIS_SHUTDOWN_DRAIN_MS"] = "100"
        environment["PORTCULLIS_CALLBACKS_ALLOW_LOOPBACK"] = "1"  // the tests' receivers listen on loopback
        environment.merge(extraEnvironment) { $1 }
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        self.process = process
        let output = self.output
        try await ChildProcess.launch(process)
        reader = PipeReader(pipe) { output.append(String(decoding: $0, as: UTF8.self)) }
        var port: Int?
        for _ in 0..<200 {
            if let line = output.value.split(separator: "\n").first(where: { $0.contains("Portcullis is listening on") }),
                let portText = line.split(separator: ":").last, let value = Int(portText.trimmingCharacters(in: .whitespaces))
            {
                port = value
                break
            }
            if ChildProcess.poll(process.processIdentifier) != .running {
                exited.store(true, ordering: .relaxed)
                break
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        guard let port else {
            if !exited.load(ordering: .relaxed) {
                process.terminate()
                _ = await ChildProcess.exitStatus(of: process, timeout: .seconds(10))
                exited.store(true, ordering: .relaxed)
            }
            throw InteropSetupError(message: "the server did not start:\n\(output.value)")
        }
        self.port = port
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    deinit {
        // Never signal a process we reaped: its PID may belong to another one by now.
        if process.processIdentifier > 0 && !exited.load(ordering: .relaxed) { kill(process.processIdentifier, SIGKILL) }
    }

    /// Sends SIGTERM and waits (up to 60 s: the whole suite shares two cores with debug builds); returns the
    /// exit status. A server that does not drain in time is killed and reported with its log.
    func stop() async throws -> Int32 {
        guard !exited.load(ordering: .relaxed) else { throw InteropSetupError(message: "the server was already stopped") }
        kill(process.processIdentifier, SIGTERM)
        if let status = await ChildProcess.exitStatus(of: process, timeout: .seconds(60)) {
            exited.store(true, ordering: .relaxed)
            return status
        }
        kill(process.processIdentifier, SIGKILL)
        _ = await ChildProcess.exitStatus(of: process, timeout: .seconds(10))
        exited.store(true, ordering: .relaxed)
        throw InteropSetupError(message: "the server did not stop within 60 s of SIGTERM; its log:\n\(output.value.suffix(4000))")
    }

    func request(
        _ path: String, form: [(String, String)]? = nil, method: String? = nil, json: Any? = nil, bearer: String? = nil,
        headers: [String: String] = [:]
    ) async throws -> (Int, [String: Any]) {
        var request = URLRequest(url: URL(string: baseURL + path)!)
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if let form {
            request.httpMethod = "POST"
            request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(String(buffer: Form.encode(form)).utf8)
        }
        if let json {
            request.httpMethod = "POST"
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try JSONSerialization.data(withJSONObject: json)
        }
        if let method { request.httpMethod = method }
        if let bearer { request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization") }
        let (data, response) = try await URLSession.shared.data(for: request)
        let json = (try? JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, json)
    }
}

@Suite("live server process", .serialized)
struct LiveServerTests {
    @Test("upgrading from an installation-wide key: it stops signing, its tokens keep verifying until they expire, every tenant gets its own ring (issue 25.1)")
    func keyRingMigration() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("portcullis-live-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        // The keys directory as a release before per-tenant rings left it: one installation-wide key.
        let legacyKeys = try SigningKeyStore(directory: root.appendingPathComponent("Keys")).load(algorithm: .es256, now: Date().addingTimeInterval(-86400))
        let legacy = try await TokenSigner(loaded: legacyKeys)
        try await withServerProcess(root: root) { server in
            #expect(server.output.value.contains("no longer sign"), "the start-up log says what happens to the old key")
            let (_, jwks) = try await server.request("/\(Fixtures.domain)/discovery/v2.0/keys")
            let kids = Set((jwks["keys"] as? [[String: Any]] ?? []).compactMap { $0["kid"] as? String })
            #expect(kids.contains(legacy.active.kid) && kids.count == 2, "the old key is still published, beside the tenant's own: \(kids)")
            // A token the old release issued (just before the upgrade) still works until it expires...
            let now = Int(Date().timeIntervalSince1970)
            let old = try await legacy.sign(
                accessToken: AccessTokenClaims(
                    iss: "\(server.baseURL)/\(Fixtures.tenantId)/v2.0", aud: BuiltInResources.adminAppId.rawValue, sub: Fixtures.adminClientId, oid: nil,
                    tid: Fixtures.tenantId,
                    azp: Fixtures.adminClientId, azpacr: "1", iat: now - 60, nbf: now - 60, exp: now + 3000, jti: UUID().uuidString, scp: nil,
                    roles: [BuiltInResources.adminRole], upn: nil, preferredUsername: nil, name: nil, xmsCC: nil, idtyp: "app"))
            #expect(try await server.request("/admin/v1/users", bearer: old).0 == 200)
            // ...while everything new is signed with the tenant's own ring.
            let (_, issued) = try await server.request(
                TestEnvironment.tokenPath,
                form: [
                    ("grant_type", "client_credentials"), ("client_id", Fixtures.adminClientId), ("client_secret", Fixtures.adminSecret),
                    ("scope", "api://portcullis-admin/.default"),
                ])
            let token = try #require(issued["access_token"] as? String)
            let header = try #require(Base64URL.decode(String(token.split(separator: ".")[0])))
            let kid = try #require(try JSONSerialization.jsonObject(with: header) as? [String: Any])["kid"] as? String
            #expect(kid != legacy.active.kid && kids.contains(kid ?? ""))
            #expect(FileManager.default.fileExists(atPath: root.appendingPathComponent("Keys/tenants/.rings-since").path))
        }
    }

    @Test("serve generates keys and a database, answers, drains on SIGTERM, and a restart loses nothing")
    func lifecycle() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("portcullis-live-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }

        let first = try await ServerProcess(root: root, directoryJSON: try Fixtures.directoryJSONWithSignalReceivers())
        let (ready, _) = try await first.request("/health/ready")
        #expect(ready == 200)
        let (status, issued) = try await first.request(TestEnvironment.tokenPath, form: Grants.password())
        #expect(status == 200)
        let refresh = try #require(issued["refresh_token"] as? String)
        let (_, jwks1) = try await first.request("/\(Fixtures.domain)/discovery/v2.0/keys")
        #expect(try await first.stop() == 0, "SIGTERM must end the server cleanly")
        #expect(first.output.value.contains("Portcullis stopped"))

        // Each tenant has its own ring (PROTOCOL §11), created at the first start; no installation-wide key.
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("Keys").path).allSatisfy { !$0.hasPrefix("signing-") })
        for tenant in [Fixtures.tenantId, Fixtures.otherTenantId] {
            let ring = root.appendingPathComponent("Keys/tenants/\(tenant)")
            let signingKey = try #require(try FileManager.default.contentsOfDirectory(atPath: ring.path).first { $0.hasPrefix("signing-") })
            let mode = try FileManager.default.attributesOfItem(atPath: ring.appendingPathComponent(signingKey).path)[.posixPermissions] as? Int
            #expect(mode == 0o600)
        }
        #expect(FileManager.default.fileExists(atPath: root.appendingPathComponent("data/portcullis.sqlite").path))

        let second = try await ServerProcess(root: root)
        let (_, jwks2) = try await second.request("/\(Fixtures.domain)/discovery/v2.0/keys")
        #expect((jwks1["keys"] as? [[String: String]])?.first?["kid"] == (jwks2["keys"] as? [[String: String]])?.first?["kid"])
        let (refreshed, _) = try await second.request(TestEnvironment.tokenPath, form: Grants.refresh(refresh))
        #expect(refreshed == 200, "a refresh token issued before the restart still works")
        #expect(!second.output.value.contains("seeded the store"), "a restart must not seed again")

        // A configuration long poll in flight answers at once when shutdown begins: it does not hold the drain
        // (nor the grace period) for its minute; the app polls again, on another node.
        let (_, compliance) = try await second.request(TestEnvironment.tokenPath, form: Grants.password(scope: "api://portcullis-compliance/.default"))
        let mam = try #require(compliance["access_token"] as? String)
        let (_, remediation) = try await second.request("/mam/v1/remediations", json: Device.body(), bearer: mam)
        let enrollment = try #require(remediation["enrollmentId"] as? String)
        let policyVersion = try #require((remediation["policy"] as? [String: Any])?["version"] as? String)
        _ = try await second.request("/mam/v1/enrollments/\(enrollment)/checkin", json: Device.checkIn(policyVersion), bearer: mam)
        let (_, configuration) = try await second.request("/mam/v1/enrollments/\(enrollment)/configuration", bearer: mam)
        let current = try #require(configuration["version"] as? String)
        async let poll = second.request("/mam/v1/enrollments/\(enrollment)/configuration?wait=60", bearer: mam, headers: ["If-None-Match": "\"\(current)\""])
        // So does a Shared Signals long poll (RFC 8936, up to 30 s): a receiver's poll must not hold a node's shutdown.
        let (_, receiver) = try await second.request(
            TestEnvironment.tokenPath,
            form: [
                ("grant_type", "client_credentials"), ("client_id", Fixtures.signalReceiver.appId), ("client_secret", Fixtures.signalReceiver.secret),
                ("scope", "api://portcullis-ssf/.default"),
            ])
        let ssf = try #require(receiver["access_token"] as? String)
        let (created, stream) = try await second.request(
            "/\(Fixtures.domain)/ssf/stream", json: ["delivery": ["method": "urn:ietf:rfc:8936"]], bearer: ssf)
        let pollURL = try #require(created == 201 ? (stream["delivery"] as? [String: Any])?["endpoint_url"] as? String : nil, "\(created) \(stream)")
        let pollPath = try #require(URL(string: pollURL)?.path)
        async let signals = second.request(pollPath, json: ["maxEvents": 10], bearer: ssf)
        try await Task.sleep(for: .milliseconds(500))
        let stopping = ContinuousClock.now
        #expect(try await second.stop() == 0)
        let (polled, _) = try await poll
        #expect(
            polled == 304 && ContinuousClock.now - stopping < .seconds(5),
            "the poll answered when shutdown began (\(polled), \(ContinuousClock.now - stopping))")
        let (signalled, answer) = try await signals
        #expect(
            signalled == 200 && (answer["sets"] as? [String: Any])?.isEmpty == true && ContinuousClock.now - stopping < .seconds(5),
            "the signals poll answered when shutdown began (\(signalled), \(ContinuousClock.now - stopping))")
    }

    @Test("bad configuration is a clear start-up error, not a crash")
    func badConfiguration() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("portcullis-live-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let config = root.appendingPathComponent("Config")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        try Data(#"{"port": 8080, "prot": 1}"#.utf8).write(to: config.appendingPathComponent("portcullis.json"))
        let result = try await run(
            try portcullisExecutable(),
            ["serve", "--config", config.path, "--data", root.appendingPathComponent("data").path, "--keys", root.appendingPathComponent("Keys").path])
        #expect(result.status != 0)
        #expect((result.stdout + result.stderr).contains("/prot"))
    }
}

@Suite("policy as code (CLI)", .serialized)
struct PolicyCommandTests {
    @Test("policy validate: ok for the shipped policies; file:pointer: message lines and exit 1 for a bad one")
    func validate() async throws {
        let executable = try portcullisExecutable()
        let config = packageRoot.appendingPathComponent("Config")
        // The demo's tenant's files, in the folder named by it (the folder says which tenant they are for).
        let shipped = try ["conditional-access", "app-protection", "app-configuration"].flatMap { folder in
            try FileManager.default.contentsOfDirectory(atPath: config.appendingPathComponent("\(folder)/contoso.example").path).map {
                config.appendingPathComponent("\(folder)/contoso.example/\($0)").path
            }
        }
        let good = try await run(executable, ["policy", "validate", "--config", config.path] + shipped)
        #expect(good.status == 0, "\(good.stdout)\(good.stderr)")
        #expect(
            good.stdout.contains("ok (app protection:") && good.stdout.contains("ok (app configuration: Contoso Mail for Sales, priority 10)"), "\(good.stdout)"
        )
        let bad = FileManager.default.temporaryDirectory.appendingPathComponent("bad-\(UUID().uuidString).json")
        try Data(
            #"{"displayName":"x","state":"enabled","conditions":{"users":{"includeUsers":["All"]},"applications":{"includeApplications":["All"]}},"grantControls":{"operator":"OR","builtInControls":["approve"]}}"#
                .utf8
        ).write(to: bad)
        defer { try? FileManager.default.removeItem(at: bad) }
        let result = try await run(executable, ["policy", "validate", "--config", config.path, "--tenant", "contoso.example", bad.path])
        #expect(result.status == 1)
        #expect(result.stdout.contains("\(bad.path):/grantControls/builtInControls/0: 'approve' is not one of"), "\(result.stdout)")
    }

    @Test("policy apply --map: a Graph list exported from another tenant, its group IDs mapped; what stays unknown is refused with its pointer")
    func applyMapped() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("portcullis-apply-map-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let corpus = try #require(ConditionalAccessCorpusLocation.root)
        try await withServerProcess(root: root) { server in
            let policies = root.appendingPathComponent("policies")
            try FileManager.default.createDirectory(at: policies, withIntermediateDirectories: true)
            var exported: [Any] = []
            for name in [
                "CA002-Global-IdentityProtection-AnyApp-AnyPlatform-Block-LegacyAuthentication.json",
                "CA200-Internals-IdentityProtection-AnyApp-AnyPlatform-MFA.json",
            ] {
                exported.append(try JSONSerialization.jsonObject(with: Data(contentsOf: corpus.appendingPathComponent("j0eyv-baseline/\(name)"))))
            }
            exported.append([
                "displayName": "Names an unmapped group", "state": "enabled",
                "conditions": [
                    "users": ["includeGroups": ["0f000000-0000-4000-8000-00000000dead"]], "applications": ["includeApplications": ["All"]],
                ],
                "grantControls": ["operator": "OR", "builtInControls": ["mfa"]],
            ])
            try JSONSerialization.data(withJSONObject: ["@odata.context": "https://graph.microsoft.com/beta/$metadata", "value": exported])
                .write(to: policies.appendingPathComponent("export.json"))
            let map = root.appendingPathComponent("map.json")
            try JSONSerialization.data(withJSONObject: [
                "2802B872-CCFB-4B29-A9A9-459808DFB11B": Fixtures.engineeringGroupId, "8861a932-f1d1-4d1d-a5e6-cdce20fada27": Fixtures.engineeringGroupId,
                "cfa1f128-ec48-4ee1-9ea9-1c28fdb57722": Fixtures.engineeringGroupId, "ceeac9b8-ddf5-48cb-afcb-e2ab8bfd1a57": Fixtures.salesGroupId,
            ]).write(to: map)
            let applied = try await run(
                try portcullisExecutable(),
                [
                    "policy", "apply", "--authority", "\(server.baseURL)/\(Fixtures.domain)", "--client-id", Fixtures.adminClientId,
                    "--client-secret", Fixtures.adminSecret, "--map", map.path, policies.path,
                ])
            #expect(applied.stdout.contains("created 2, changed 0, left alone 0, failed 1"), "\(applied.stdout)\(applied.stderr)")
            #expect(applied.stdout.contains("export.json#/value/2:/conditions/users/includeGroups/0"), "\(applied.stdout)")
            let (status, body) = try await server.request(TestEnvironment.tokenPath, form: Grants.password(Fixtures.alice, claims: nil))
            #expect(status == 400 && body["error_codes"] as? [Int] == [50076], "CA200 through the map: Alice is in Sales: \(body)")
        }
    }

    @Test("policy templates and policy from-template: Microsoft's catalogue, and a policy made of a template with the administrator excluded")
    func fromTemplate() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("portcullis-template-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try await withServerProcess(root: root) { server in
            let connection = [
                "--authority", "\(server.baseURL)/\(Fixtures.domain)", "--client-id", Fixtures.adminClientId, "--client-secret", Fixtures.adminSecret,
            ]
            let listed = try await run(try portcullisExecutable(), ["policy", "templates"] + connection)
            #expect(listed.stdout.contains("c7503427-338e-4c5e-902d-abe252abfb43  Require multifactor authentication for admins"), "\(listed.stdout)")
            let refused = try await run(try portcullisExecutable(), ["policy", "from-template", "c7503427-338e-4c5e-902d-abe252abfb43"] + connection)
            #expect(refused.status == 1 && refused.stdout.contains("/currentAdministrator"), "\(refused.stdout)\(refused.stderr)")
            let created = try await run(
                try portcullisExecutable(),
                ["policy", "from-template", "c7503427-338e-4c5e-902d-abe252abfb43", "--administrator", Fixtures.bob.upn, "--state", "enabled"] + connection)
            #expect(created.status == 0 && created.stdout.contains(Fixtures.bob.id) && created.stdout.contains("\"state\" : \"enabled\""), "\(created.stdout)")
        }
    }

    @Test("policy apply --unenforceable report-only: a policy with cloudAppSecurity is refused without it, imported report-only with it, and said so")
    func applyUnenforceable() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("portcullis-unenforceable-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try await withServerProcess(root: root) { server in
            let policies = root.appendingPathComponent("policies")
            try FileManager.default.createDirectory(at: policies, withIntermediateDirectories: true)
            try JSONSerialization.data(withJSONObject: [
                "displayName": "Block downloads in unmanaged browsers", "state": "enabled",
                "conditions": ["users": ["includeUsers": ["All"]], "applications": ["includeApplications": ["All"]], "clientAppTypes": ["browser"]],
                "grantControls": NSNull(),
                "sessionControls": ["cloudAppSecurity": ["isEnabled": true, "cloudAppSecurityType": "blockDownloads"]],
            ]).write(to: policies.appendingPathComponent("mcas.json"))
            let connection = [
                "--authority", "\(server.baseURL)/\(Fixtures.domain)", "--client-id", Fixtures.adminClientId, "--client-secret", Fixtures.adminSecret,
            ]
            let refused = try await run(try portcullisExecutable(), ["policy", "apply"] + connection + [policies.path])
            #expect(refused.status == 1 && refused.stdout.contains("mcas.json:/sessionControls/cloudAppSecurity"), "\(refused.stdout)")
            let bad = try await run(try portcullisExecutable(), ["policy", "apply", "--unenforceable", "sometimes"] + connection + [policies.path])
            #expect(bad.status != 0 && bad.stderr.contains("--unenforceable"), "\(bad.stderr)")
            let kept = try await run(try portcullisExecutable(), ["policy", "apply", "--unenforceable", "report-only"] + connection + [policies.path])
            #expect(kept.status == 0 && kept.stdout.contains("created 1") && kept.stdout.contains("imported report-only"), "\(kept.stdout)")
            let again = try await run(try portcullisExecutable(), ["policy", "apply", "--unenforceable", "report-only"] + connection + [policies.path])
            #expect(again.stdout.contains("left alone 1"), "\(again.stdout)")
        }
    }

    @Test("policy apply: creates, then leaves alone, then changes only what changed")
    func apply() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("portcullis-apply-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try await withServerProcess(root: root) { server in
            let policies = root.appendingPathComponent("policies")
            try FileManager.default.createDirectory(at: policies, withIntermediateDirectories: true)
            func write(_ name: String, _ document: [String: Any]) throws {
                try JSONSerialization.data(withJSONObject: document, options: [.sortedKeys]).write(to: policies.appendingPathComponent(name))
            }
            try write("a.json", Policies.document())
            try write("b.json", Policies.document(id: "a1000000-0000-4000-8000-0000000000b0", name: "Block Bob", users: [Fixtures.bob.id], controls: ["block"]))
            let arguments = [
                "policy", "apply", "--authority", "\(server.baseURL)/\(Fixtures.domain)", "--client-id", Fixtures.adminClientId,
                "--client-secret", Fixtures.adminSecret, policies.path,
            ]
            let first = try await run(try portcullisExecutable(), arguments)
            #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
            #expect(first.stdout.contains("created 2, changed 0, left alone 0, failed 0"), "\(first.stdout)")
            let second = try await run(try portcullisExecutable(), arguments)
            #expect(second.stdout.contains("created 0, changed 0, left alone 2, failed 0"), "\(second.stdout)")
            try write(
                "b.json",
                Policies.document(
                    id: "a1000000-0000-4000-8000-0000000000b0", name: "Block Bob", users: [Fixtures.bob.id, Fixtures.carol.id], controls: ["block"]))
            let third = try await run(try portcullisExecutable(), arguments)
            #expect(third.stdout.contains("created 0, changed 1, left alone 1, failed 0"), "\(third.stdout)")
            let (status, _) = try await server.request(TestEnvironment.tokenPath, form: Grants.password(Fixtures.carol))
            #expect(status == 400, "the applied policy is enforced at once")
        }
    }

    @Test(
        "apply DIR with authentication contexts and custom strengths: created before the policies that name them, re-apply changes nothing, built-in strengths never pruned; the same folder seeds a new server"
    )
    func applyContextsAndStrengths() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("portcullis-apply-ctx-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let folder = root.appendingPathComponent("Config")
        try await withServerProcess(root: root) { server in
            func write(_ path: String, _ json: [String: Any]) throws {
                let file = folder.appendingPathComponent(path)
                try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
                try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys]).write(to: file)
            }
            let strengthId = "5e000000-0000-4000-8000-0000000000a1"
            try write("authentication-contexts/\(Fixtures.domain)/c1.json", ["id": "c1", "displayName": "Sensitive actions", "isAvailable": true])
            try write(
                "authentication-strengths/\(Fixtures.domain)/passkeys.json",
                ["id": strengthId, "displayName": "Passkeys only", "allowedCombinations": ["fido2"]])
            try write(
                "conditional-access/\(Fixtures.domain)/step-up.json",
                [
                    "id": "a1000000-0000-4000-8000-0000000000d1", "displayName": "Step-up for c1", "state": "enabled",
                    "conditions": [
                        "users": ["includeUsers": [Fixtures.bob.id]],
                        "applications": ["includeApplications": [], "includeAuthenticationContextClassReferences": ["c1"]],
                    ],
                    "grantControls": ["operator": "OR", "builtInControls": [], "authenticationStrength": ["id": strengthId]],
                ])
            let arguments = [
                "apply", "--authority", "\(server.baseURL)/\(Fixtures.domain)", "--client-id", Fixtures.adminClientId,
                "--client-secret", Fixtures.adminSecret, folder.path,
            ]
            let applied = try await run(try portcullisExecutable(), arguments + ["--prune"])
            #expect(applied.status == 0, "\(applied.stdout)\(applied.stderr)")
            for line in [
                "+ create  authentication context Sensitive actions (c1)", "+ create  authentication strength Passkeys only",
                "+ create  conditional-access policy Step-up for c1", "Applied: created 3, changed 0, deleted 0",
            ] {
                #expect(applied.stdout.contains(line), "\(line) in:\n\(applied.stdout)")
            }
            let again = try await run(try portcullisExecutable(), arguments + ["--prune", "--plan"])
            #expect(again.stdout.contains("Plan: 0 to create, 0 to change, 0 to delete"), "the built-in strengths are not the folder's: \(again.stdout)")
            let (refused, body) = try await server.request(
                TestEnvironment.tokenPath, form: Grants.password(Fixtures.bob, claims: #"{"access_token":{"acrs":{"value":"c1"}}}"#))
            #expect(refused == 400 && body["error_codes"] as? [Int] == [50076], "the applied step-up policy is enforced: \(body)")
        }
        // The same folder seeds a fresh server: contexts and strengths before the policies that name them (this directory
        // has two tenants, so the files are in the tenant's folder).
        let second = FileManager.default.temporaryDirectory.appendingPathComponent("portcullis-apply-ctx2-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: second) }
        try await withServerProcess(root: second, configDirectory: folder) { server in
            let admin = try await MultiNodeTests.adminToken(server)
            let (context, _) = try await server.request("/admin/v1/authentication-context-class-references/c1", bearer: admin)
            let (policy, _) = try await server.request("/admin/v1/conditional-access/policies/a1000000-0000-4000-8000-0000000000d1", bearer: admin)
            #expect(context == 200 && policy == 200)
        }
    }

    @Test(
        "apply DIR with devices and device compliance: the joined device gets its certificate, re-apply changes nothing (the same key keeps it), --prune leaves users' registered devices; compliance policies seed a new server"
    )
    func applyDevices() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("portcullis-apply-dev-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let folder = root.appendingPathComponent("Config")
        let kioskId = "de000000-0000-4000-8000-0000000000d7"
        try await withServerProcess(root: root) { server in
            func write(_ path: String, _ json: [String: Any]) throws {
                let file = folder.appendingPathComponent(path)
                try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
                try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys]).write(to: file)
            }
            try write(
                "device-compliance/\(Fixtures.domain)/windows.json",
                [
                    "@odata.type": "#microsoft.graph.windows10CompliancePolicy", "id": "dc000000-0000-4000-8000-0000000000c1",
                    "displayName": "Windows baseline", "osMinimumVersion": "10.0.19045", "storageRequireEncryption": true,
                ])
            try write(
                "devices/\(Fixtures.domain)/kiosk.json",
                [
                    "id": kioskId, "displayName": "Kiosk 7", "trustType": "AzureAd", "operatingSystem": "Windows", "registeredOwners": [],
                    "csr": try DeviceTests.Key.p256().csr(),
                ])
            let admin = try await MultiNodeTests.adminToken(server)
            // A device a user registered (Workplace): the users', not the folder's.
            let (registered, usersDevice) = try await server.request(
                "/admin/v1/devices", json: ["displayName": "Bob's phone", "registeredOwners": [Fixtures.bob.upn]], bearer: admin)
            #expect(registered == 201 && usersDevice["trustType"] as? String == "Workplace", "\(usersDevice)")
            let arguments = [
                "apply", "--authority", "\(server.baseURL)/\(Fixtures.domain)", "--client-id", Fixtures.adminClientId,
                "--client-secret", Fixtures.adminSecret, folder.path,
            ]
            let applied = try await run(try portcullisExecutable(), arguments + ["--prune"])
            #expect(applied.status == 0, "\(applied.stdout)\(applied.stderr)")
            for line in ["+ create  device compliance policy Windows baseline", "+ create  device Kiosk 7", "deleted 0"] {
                #expect(applied.stdout.contains(line), "\(line) in:\n\(applied.stdout)")
            }
            #expect(!applied.stdout.contains("Bob's phone"), "a registered device is not the folder's to prune: \(applied.stdout)")
            let (_, kiosk) = try await server.request("/admin/v1/devices/\(kioskId)", bearer: admin)
            let pem = (kiosk["certificate"] as? [String: Any])?["pem"] as? String
            #expect(pem?.contains("BEGIN CERTIFICATE") == true, "the joined device holds a certificate from the tenant's CA: \(kiosk)")
            let again = try await run(try portcullisExecutable(), arguments + ["--prune", "--plan"])
            #expect(again.stdout.contains("Plan: 0 to create, 0 to change, 0 to delete"), "the same key's request keeps the certificate: \(again.stdout)")
            let (_, still) = try await server.request("/admin/v1/devices/\(kioskId)", bearer: admin)
            #expect((still["certificate"] as? [String: Any])?["pem"] as? String == pem)
        }
        // The same folder seeds a fresh server: the compliance policy (devices need the running server's CA: apply).
        let second = FileManager.default.temporaryDirectory.appendingPathComponent("portcullis-apply-dev2-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: second) }
        try await withServerProcess(root: second, configDirectory: folder) { server in
            let admin = try await MultiNodeTests.adminToken(server)
            let (policy, _) = try await server.request("/admin/v1/device-compliance/policies/dc000000-0000-4000-8000-0000000000c1", bearer: admin)
            #expect(policy == 200)
        }
    }

    @Test("apply DIR: plan (nothing stored), apply in dependency order, re-apply changes nothing, --prune deletes what the folder dropped")
    func applyFolder() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("portcullis-apply-dir-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try await withServerProcess(root: root) { server in
            let folder = root.appendingPathComponent("Config")
            let arguments = [
                "apply", "--authority", "\(server.baseURL)/\(Fixtures.domain)", "--client-id", Fixtures.adminClientId,
                "--client-secret", Fixtures.adminSecret, folder.path,
            ]
            let fresh = try await run(try portcullisExecutable(), arguments + ["--plan"])
            #expect(
                fresh.status == 0 && fresh.stdout.contains("Plan: 0 to create, 0 to change, 0 to delete"),
                "the seeded folder is the store: \(fresh.stdout)\(fresh.stderr)")

            // A new user in a new group, a policy naming the group, a changed display name, and a dropped named location.
            let file = folder.appendingPathComponent("directory.json")
            var document = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
            var tenants = try #require(document["tenants"] as? [[String: Any]])
            let frank = Fixtures.Account(id: "f0000000-0000-4000-8000-0000000000f1", upn: "frank@fabrikam.test", password: "frank-pass-1")
            tenants[0]["users"] =
                (tenants[0]["users"] as? [[String: Any]] ?? []) + [
                    ["id": frank.id, "userPrincipalName": frank.upn, "displayName": "Frank", "password": frank.password]
                ]
            tenants[0]["groups"] =
                (tenants[0]["groups"] as? [[String: Any]] ?? []) + [
                    ["id": "0c000000-0000-4000-8000-0000000000c3", "displayName": "Pilot", "members": [frank.id]]
                ]
            tenants[0]["displayName"] = "Fabrikam (applied)"
            tenants[0]["namedLocations"] = []
            // Frank administers conditional access (a directory role, PROTOCOL §17).
            tenants[0]["roleAssignments"] = [
                ["principalId": frank.id, "roleDefinitionId": DirectoryRoleDefinition.conditionalAccessAdministrator.rawValue, "directoryScopeId": "/"]
            ]
            document["tenants"] = tenants
            try JSONSerialization.data(withJSONObject: document).write(to: file)
            let policies = folder.appendingPathComponent("conditional-access")
            try FileManager.default.createDirectory(at: policies, withIntermediateDirectories: true)
            var pilot = Policies.document(id: "a1000000-0000-4000-8000-0000000000f1", name: "Block the pilot", users: [], controls: ["block"])
            var conditions = try #require(pilot["conditions"] as? [String: Any])
            conditions["users"] = ["includeUsers": [], "excludeUsers": [], "includeGroups": ["0c000000-0000-4000-8000-0000000000c3"], "excludeGroups": []]
            pilot["conditions"] = conditions
            try JSONSerialization.data(withJSONObject: pilot).write(to: policies.appendingPathComponent("block-pilot.json"))

            let plan = try await run(try portcullisExecutable(), arguments + ["--plan"])
            #expect(plan.status == 0, "\(plan.stdout)\(plan.stderr)")
            for line in [
                "+ create  user frank@fabrikam.test", "+ create  group Pilot", "~ change  tenant", "~ /displayName: \"Fabrikam\" → \"Fabrikam (applied)\"",
                "+ create  conditional-access policy Block the pilot", "- delete  named location HQ", "[only with --prune]",
                "+ create  directory role assignment \(frank.id) holds Conditional Access Administrator",
                "Plan: 4 to create, 1 to change, 1 to delete (with --prune)",
            ] {
                #expect(plan.stdout.contains(line), "\(line) in:\n\(plan.stdout)")
            }
            #expect(!plan.stdout.contains(frank.password), "the plan never prints a password")
            #expect(
                try await server.request(TestEnvironment.tokenPath, form: Grants.password(frank, scope: "openid", claims: nil)).0 == 400,
                "--plan changed nothing")

            let applied = try await run(try portcullisExecutable(), arguments)
            #expect(applied.status == 0 && applied.stdout.contains("Applied: created 4, changed 1, deleted 0"), "\(applied.stdout)\(applied.stderr)")
            let (frankStatus, frankBody) = try await server.request(TestEnvironment.tokenPath, form: Grants.password(frank, claims: nil))
            #expect(frankStatus == 400 && frankBody["error_codes"] as? [Int] == [53003], "Frank exists, and the policy naming his new group blocks him")
            let (aliceStatus, _) = try await server.request(TestEnvironment.tokenPath, form: Grants.password(Fixtures.alice, scope: "openid", claims: nil))
            #expect(aliceStatus == 200)

            let again = try await run(try portcullisExecutable(), arguments)
            #expect(
                again.stdout.contains("Plan: 0 to create, 0 to change, 1 to delete (with --prune)")
                    && again.stdout.contains("Applied: created 0, changed 0, deleted 0"),
                "a second run changes nothing: \(again.stdout)")
            // A new password is a change the plan names without showing it.
            var users = try #require(
                (try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any]).flatMap {
                    ($0["tenants"] as? [[String: Any]])?.first?["users"] as? [[String: Any]]
                })
            let frankIndex = try #require(users.firstIndex { $0["id"] as? String == frank.id })
            users[frankIndex]["password"] = "frank-pass-2"
            tenants[0]["users"] = users
            document["tenants"] = tenants
            try JSONSerialization.data(withJSONObject: document).write(to: file)
            let rekeyed = try await run(try portcullisExecutable(), arguments)
            #expect(
                rekeyed.stdout.contains("~ change  user frank@fabrikam.test") && rekeyed.stdout.contains("a password or secret changes")
                    && !rekeyed.stdout.contains("frank-pass-2"), "\(rekeyed.stdout)")
            let pruned = try await run(try portcullisExecutable(), arguments + ["--prune"])
            #expect(
                pruned.status == 0 && pruned.stdout.contains("deleted named location HQ") && pruned.stdout.contains("deleted 1"),
                "\(pruned.stdout)\(pruned.stderr)"
            )
            let admin = try await MultiNodeTests.adminToken(server)
            let (gone, _) = try await server.request("/admin/v1/named-locations/\(Fixtures.hqLocationId)", bearer: admin)
            #expect(gone == 404)
            let last = try await run(try portcullisExecutable(), arguments + ["--prune", "--plan"])
            #expect(last.stdout.contains("Plan: 0 to create, 0 to change, 0 to delete"), "\(last.stdout)")

            // A folder that contradicts itself is refused before anything is sent.
            try Data("{\"tenants\": [{\"id\": \"\(Fixtures.tenantId)\", \"domain\": \"fabrikam.test\", \"users\": [{\"userPrincipalName\": \"x\"}]}]}".utf8)
                .write(
                    to: file)
            let invalid = try await run(try portcullisExecutable(), arguments)
            #expect(
                invalid.status == 1 && invalid.stdout.contains("directory.json:/tenants/0/users/0") && invalid.stdout.contains("nothing was applied"),
                "\(invalid.stdout)")
        }
    }
}
