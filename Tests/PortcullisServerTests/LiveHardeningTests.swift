import Foundation
import PortcullisAPI
import PortcullisCore
import PortcullisTesting
import PortcullisTokens
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The hardening items that only the real binary can show: the TLS listener, the start-up rules, what the
/// log file receives, the shipped demo policies, and the reference callback receiver.
@Suite("hardening, live binary", .serialized)
struct LiveHardeningTests {
    static func temporaryRoot() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("portcullis-hardening-\(UUID().uuidString)")
    }

    // MARK: 6. TLS

    @Test("the TLS listener refuses TLS 1.0/1.1 and non-AEAD suites, accepts TLS 1.2 (ECDHE + GCM) and 1.3, and sends HSTS")
    func tlsMinimum() async throws {
        let root = Self.temporaryRoot()
        defer { try? FileManager.default.removeItem(at: root) }
        let keys = root.appendingPathComponent("Keys")
        let made = try await run(try portcullisExecutable(), ["dev-cert", "--keys", keys.path, "--config", root.appendingPathComponent("none").path])
        #expect(made.status == 0, "\(made.stdout)\(made.stderr)")
        try await withServerProcess(
            root: root,
            extraArguments: [
                "--tls-cert", keys.appendingPathComponent("dev-cert.pem").path, "--tls-key", keys.appendingPathComponent("dev-key.pem").path,
            ]
        ) { server in
            func handshake(_ options: [String]) async throws -> (ok: Bool, output: String) {
                let result = try await run("/usr/bin/openssl", ["s_client", "-connect", "127.0.0.1:\(server.port)", "-servername", "localhost"] + options)
                let output = result.stdout + result.stderr
                // A completed handshake prints the negotiated cipher; a refused one prints "(NONE)" or an alert.
                let ok = result.status == 0 && output.contains("Cipher is ") && !output.contains("Cipher is (NONE)")
                return (ok, output)
            }
            for version in ["-tls1", "-tls1_1"] {
                let attempt = try await handshake([version, "-cipher", "DEFAULT@SECLEVEL=0"])
                #expect(!attempt.ok, "\(version) was accepted:\n\(attempt.output.suffix(600))")
            }
            let cbc = try await handshake(["-tls1_2", "-cipher", "AES128-SHA:ECDHE-RSA-AES128-SHA:ECDHE-ECDSA-AES128-SHA"])
            #expect(!cbc.ok, "a CBC suite was accepted:\n\(cbc.output.suffix(600))")
            let tls12 = try await handshake(["-tls1_2"])
            #expect(tls12.ok && tls12.output.contains("ECDHE-ECDSA-AES"), "\(tls12.output.suffix(600))")
            #expect(try await handshake(["-tls1_3"]).ok)
            let curl = try await run(
                "/usr/bin/curl",
                [
                    "-sS", "-o", "/dev/null", "-D", "-", "--cacert", keys.appendingPathComponent("dev-cert.pem").path,
                    "https://localhost:\(server.port)/health/live",
                ])
            #expect(curl.stdout.lowercased().contains("strict-transport-security: max-age="), "\(curl.stdout)\(curl.stderr)")
        }
    }

    // MARK: 11. Demo credentials

    @Test("plaintext demo credentials are seeded beyond loopback only with PORTCULLIS_DEMO=1, and the refusal says so")
    func demoCredentials() async throws {
        let root = Self.temporaryRoot()
        defer { try? FileManager.default.removeItem(at: root) }
        let config = packageRoot.appendingPathComponent("Config")
        do {
            let server = try await ServerProcess(root: root, configDirectory: config, extraArguments: ["--host", "0.0.0.0"])
            _ = try? await server.stop()
            Issue.record("the server seeded the demo credentials on 0.0.0.0 without PORTCULLIS_DEMO=1")
        } catch let error as InteropSetupError {
            #expect(error.message.contains("PORTCULLIS_DEMO=1") && error.message.contains("plaintext"), "\(error.message.suffix(800))")
        }
        let demo = try await ServerProcess(
            root: root, extraEnvironment: ["PORTCULLIS_DEMO": "1"], configDirectory: config, extraArguments: ["--host", "0.0.0.0"])
        #expect(demo.output.value.contains("PORTCULLIS_DEMO=1"), "the demo mode is announced")
        #expect(try await demo.request("/contoso.example/v2.0/.well-known/openid-configuration").0 == 200)
        _ = try await demo.stop()
    }

    // MARK: The FIDO metadata BLOB (PROTOCOL §12.1)

    @Test("passkeys.metadataBlob: a BLOB that does not verify to the metadata root stops the start, saying why; one that does is read")
    func metadataBlob() async throws {
        let root = Self.temporaryRoot()
        defer { try? FileManager.default.removeItem(at: root) }
        let fido = try AttestationCA(name: "Test metadata root")
        let blob = try fido.metadataBLOB(entries: [
            AttestationCA.metadataEntry(aaguid: "adce0002-35bc-c60a-648b-0b25f1f05503", description: "Test Key 5", root: try AttestationCA())
        ])
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let blobFile = root.appendingPathComponent("blob.jwt")
        let rootFile = root.appendingPathComponent("metadata-root.pem")
        try Data(blob.utf8).write(to: blobFile)
        try Data(fido.pem.utf8).write(to: rootFile)
        do {
            // Without a root named, FIDO's own: this BLOB does not verify to it.
            let server = try await ServerProcess(root: root, extraEnvironment: ["PORTCULLIS_PASSKEY_METADATA_BLOB": blobFile.path])
            _ = try? await server.stop()
            Issue.record("the server started with a BLOB that does not verify")
        } catch let error as InteropSetupError {
            #expect(error.message.contains("passkeys.metadataBlob") && error.message.contains("does not verify"), "\(error.message.suffix(800))")
        }
        let server = try await ServerProcess(
            root: root, extraEnvironment: ["PORTCULLIS_PASSKEY_METADATA_BLOB": blobFile.path, "PORTCULLIS_PASSKEY_METADATA_ROOT": rootFile.path])
        #expect(
            server.output.value.contains("FIDO metadata BLOB read") && server.output.value.contains("portcullis.authenticators=1"),
            "\(server.output.value.suffix(2000))")
        _ = try await server.stop()
    }

    // MARK: 9. Log forging, end to end

    @Test("a client_id with a line break does not forge a line in the server's log")
    func logForging() async throws {
        let root = Self.temporaryRoot()
        defer { try? FileManager.default.removeItem(at: root) }
        let server = try await ServerProcess(root: root)
        let forged = "x\n2026-11-23T00:00:00Z notice portcullis: [PortcullisServer] FORGED admin signed in"
        let (status, _) = try await server.request(
            TestEnvironment.tokenPath,
            form: [
                ("grant_type", "client_credentials"), ("client_id", forged), ("client_secret", "s"), ("scope", "api://fabrikam-mail/.default"),
            ])
        #expect(status == 400)
        _ = try await server.stop()
        let lines = server.output.value.split(separator: "\n")
        #expect(!lines.contains { $0.hasPrefix("2026-11-23T00:00:00Z") }, "a forged line:\n\(server.output.value.suffix(1500))")
        #expect(lines.contains { $0.contains(#"x\n2026-11-23T00:00:00Z notice"#) }, "the value is logged, escaped:\n\(server.output.value.suffix(1500))")
    }

    // MARK: 14. The shipped demo policies

    @Test("the shipped app-protection policy applies when a client sends no platform headers (no bypass by omission)")
    func demoPolicyWithoutHeaders() async throws {
        let root = Self.temporaryRoot()
        defer { try? FileManager.default.removeItem(at: root) }
        try await withServerProcess(root: root, configDirectory: packageRoot.appendingPathComponent("Config")) { server in
            let grant = [
                ("grant_type", "password"), ("client_id", "c0ffee00-1111-4a2b-8c3d-4e5f6a7b8c01"), ("username", "alice@contoso.example"),
                ("password", "Alice-dev-pass1"), ("scope", "api://contoso-mail/Mail.Read"), ("claims", Grants.protAppClaims),
            ]
            let (status, body) = try await server.request("/contoso.example/oauth2/v2.0/token", form: grant)
            #expect(status == 400 && (body["error_codes"] as? [Int]) == [53005], "no headers must not bypass app protection: \(body)")
            let (iOS, iOSBody) = try await server.request(
                "/contoso.example/oauth2/v2.0/token", form: grant, headers: ["x-client-OS": "iOS 17.4", "x-client-SKU": "MSAL.iOS"])
            #expect(iOS == 400 && (iOSBody["error_codes"] as? [Int]) == [53005])
        }
    }

    // MARK: 13. The reference callback receiver

    @Test("callbacks listen: flushes each event to a pipe at once; refuses a wrong audience and an old iat; acknowledges a repeat without printing it twice")
    func callbackReceiver() async throws {
        let root = Self.temporaryRoot()
        defer { try? FileManager.default.removeItem(at: root) }
        try await withServerProcess(root: root) { server in
            let port = Int.random(in: 20000...29999)
            let listener = Process()
            listener.executableURL = URL(fileURLWithPath: try portcullisExecutable())
            listener.arguments = [
                "callbacks", "listen", "--port", String(port), "--authority", "\(server.baseURL)/\(Fixtures.domain)",
                "--audience", Fixtures.mobileClientId, "--max-age", "600",
            ]
            let output = OutputBuffer()
            let pipe = Pipe()
            listener.standardOutput = pipe
            listener.standardError = pipe
            try await ChildProcess.launch(listener)
            _ = PipeReader(pipe) { output.append(String(decoding: $0, as: UTF8.self)) }
            defer {
                kill(listener.processIdentifier, SIGKILL)
                _ = ChildProcess.waitForExit(of: listener)
            }
            func waitFor(_ text: String, count: Int = 1) async -> Bool {
                for _ in 0..<200 {
                    if output.value.components(separatedBy: text).count - 1 >= count { return true }
                    try? await Task.sleep(for: .milliseconds(50))
                }
                return false
            }
            #expect(await waitFor("listening for compliance callbacks"), "\(output.value)")

            let clock = SystemWallClock()
            // The live server created the tenant's ring under the shared Keys/ at start-up: the test signs with it.
            let signer = try await TenantKeyRings(keysDirectory: root.appendingPathComponent("Keys"), algorithm: .es256, retiringWindow: 3600, clock: clock)
                .signer(tenantId: TenantID(Fixtures.tenantId))
            let issuer = "\(server.baseURL)/\(Fixtures.tenantId)/v2.0"
            func event(aud: String = Fixtures.mobileClientId, iat: Date = Date(), jti: String = UUID().uuidString) async throws -> String {
                try await signer.sign(
                    securityEvent: ComplianceSecurityEvent(
                        iss: issuer, aud: aud, iat: Int(iat.timeIntervalSince1970), jti: jti,
                        events: .init(
                            deviceComplianceChange: nil,
                            complianceStatus: ComplianceStatusEvent(
                                enrollmentId: "e1", accountId: Fixtures.alice.id, tenantId: Fixtures.tenantId, upn: Fixtures.alice.upn,
                                status: .compliant, errorTitle: nil, errorMessage: nil))))
            }
            func post(_ token: String) async throws -> Int {
                var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/compliance")!)
                request.httpMethod = "POST"
                request.setValue("application/secevent+jwt", forHTTPHeaderField: "Content-Type")
                request.httpBody = Data(token.utf8)
                let (_, response) = try await URLSession.shared.data(for: request)
                return (response as? HTTPURLResponse)?.statusCode ?? 0
            }
            let good = try await event(jti: "jti-good")
            #expect(try await post(good) == 202)
            #expect(await waitFor("verified SET jti-good"), "the event must appear while the receiver runs:\n\(output.value)")
            #expect(try await post(good) == 202, "a repeat is acknowledged")
            #expect(await waitFor("duplicate SET jti-good"), "\(output.value)")
            #expect(output.value.components(separatedBy: "verified SET jti-good").count == 2, "printed once")
            #expect(try await post(try await event(aud: Fixtures.secondMobileClientId)) == 400)
            #expect(await waitFor("refused: audience"), "\(output.value)")
            #expect(try await post(try await event(iat: Date().addingTimeInterval(-3600))) == 400)
            #expect(await waitFor("refused: iat is older"), "\(output.value)")
        }
    }
}
