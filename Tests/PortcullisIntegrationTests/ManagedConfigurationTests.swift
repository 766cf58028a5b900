import Foundation
import PortcullisAPI
import PortcullisClient
import PortcullisClientKeys
import PortcullisCore
import PortcullisTesting
import Synchronization
import Testing

/// The configuration provider of the client SDK against a live server (PROTOCOL §8.2).
@Suite("managed app configuration through the SDK")
struct ManagedConfigurationTests {
    struct MailSettings: Decodable, Sendable, Equatable {
        let serverUrl: String
        let syncDays: Int?
    }

    static let policyId = "c0000000-0000-4000-8000-0000000000d1"

    static func policy(_ configuration: [String: Any]) -> [String: Any] {
        [
            "id": policyId, "displayName": "Mail settings", "priority": 10, "configuration": configuration,
            "targets": ["applications": [Fixtures.mobileClientId], "includeGroups": ["All"], "excludeGroups": []],
        ]
    }

    @Test(
        "the stream yields the current configuration, then each change; nil when decoding fails (reported) or nothing applies; it ends on wipe; unmanaged yields nil"
    )
    func stream() async throws {
        try await withTestEnvironment(baseURL: "http://localhost:0") { env in
            try await withLiveServer(env) { authority in
                let admin = try await Client.admin(authority)
                let (created, createdBody) = try await admin.send(
                    "POST", "app-configuration/policies",
                    json: Self.policy(["serverUrl": "https://one.fabrikam.test", "syncDays": 7, "newKey": ["ignored": true]]))
                #expect(created == 201, "\(createdBody)")
                let app = Client.app(authority)
                let delegate = TestDelegate()
                let manager = Client.manager(app, delegate: delegate)
                let account = try #require(
                    try await app.acquireToken(username: Fixtures.alice.upn, password: Fixtures.alice.password, scopes: [Client.mailScope]).account)

                // Not enrolled yet: unmanaged, nil.
                do {
                    // (Scoped: released, the stream stops its long polls.)
                    var unmanaged = ManagedAppConfigurationProvider(manager: manager, wait: 5).configurations(of: MailSettings.self, for: account)
                        .makeAsyncIterator()
                    #expect(await unmanaged.next() == .some(nil))
                }

                #expect(await manager.remediate(account: account, silent: true).status == .compliant)
                var values = ManagedAppConfigurationProvider(manager: manager, wait: 20).configurations(of: MailSettings.self, for: account).makeAsyncIterator()
                #expect(await values.next() == .some(MailSettings(serverUrl: "https://one.fabrikam.test", syncDays: 7)), "unknown keys are ignored")

                let written = ContinuousClock.now
                try await admin.send("PUT", "app-configuration/policies/\(Self.policyId)", json: Self.policy(["serverUrl": "https://two.fabrikam.test"]))
                #expect(await values.next() == .some(MailSettings(serverUrl: "https://two.fabrikam.test", syncDays: nil)))
                #expect(ContinuousClock.now - written < .seconds(5), "a long poll, woken by the change")

                try await admin.send("PUT", "app-configuration/policies/\(Self.policyId)", json: Self.policy(["serverUrl": 42]))
                #expect(await values.next() == .some(nil), "a configuration the app cannot decode is nil")
                #expect(delegate.decodingFailures.load(ordering: .relaxed) == 1, "and the failure is reported")

                try await admin.send("DELETE", "app-configuration/policies/\(Self.policyId)")
                #expect(await values.next() == .some(nil), "nothing applies: nil")

                let enrollment = try #require(await manager.enrollmentId(for: account))
                let (wiped, _) = try await admin.send("POST", "enrollments/\(enrollment)/wipe")
                #expect(wiped == 202)
                try await admin.send("POST", "app-configuration/policies", json: Self.policy(["serverUrl": "https://three.fabrikam.test"]))
                var rest: [MailSettings?] = []
                while let value = await values.next() { rest.append(value) }
                #expect(rest.allSatisfy { $0 == nil }, "after a wipe the stream delivers nothing more and ends: \(rest)")
                #expect(delegate.wiped.withLock { $0 } == [account.homeAccountId], "the wipe itself was carried out")
            }
        }
    }

    @Test("secrets through the SDK: identifiers per kind, a password opened with the instance key, a device identity for it; a wipe destroys the key")
    func secrets() async throws {
        try await withTestEnvironment(baseURL: "http://localhost:0") { env in
            let keys = env.root.appendingPathComponent("instance-keys")
            try await withLiveServer(env) { authority in
                let admin = try await Client.admin(authority)
                var policy = Self.policy(["serverUrl": "https://one.fabrikam.test"])
                policy["secrets"] = [
                    ["identifier": "com.fabrikam.mail.smtp", "kind": "password"],
                    ["identifier": "com.fabrikam.mail.license", "kind": "identity", "issuance": "device", "validityDays": 7],
                ]
                let (created, createdBody) = try await admin.send("POST", "app-configuration/policies", json: policy)
                #expect(created == 201, "\(createdBody)")
                let (written, writtenBody) = try await admin.send(
                    "PUT", "app-configuration/policies/\(Self.policyId)/secrets/com.fabrikam.mail.smtp", json: ["password": "smtp-pass-1"], ifMatch: false)
                #expect(written == 201, "\(writtenBody)")

                let app = Client.app(authority)
                let delegate = TestDelegate()
                let keyStore = FileInstanceKeyStore(directory: keys)
                let manager = Client.manager(app, delegate: delegate, keyStore: keyStore)
                let account = try #require(
                    try await app.acquireToken(username: Fixtures.alice.upn, password: Fixtures.alice.password, scopes: [Client.mailScope]).account)
                #expect(await manager.remediate(account: account, silent: true).status == .compliant)
                let provider = ManagedAppConfigurationProvider(manager: manager, wait: 20)
                var passwords = provider.identifiers(of: .password, for: account).makeAsyncIterator()
                #expect(await passwords.next() == ["com.fabrikam.mail.smtp"])
                var identities = provider.identifiers(of: .identity, for: account).makeAsyncIterator()
                #expect(await identities.next() == ["com.fabrikam.mail.license"])
                #expect(try await provider.password("com.fabrikam.mail.smtp", for: account) == "smtp-pass-1")
                try await admin.send("PUT", "app-configuration/policies/\(Self.policyId)/secrets/com.fabrikam.mail.smtp", json: ["password": "smtp-pass-2"])
                #expect(try await provider.password("com.fabrikam.mail.smtp", for: account) == "smtp-pass-2", "looked up each time: never cached")

                let identity = try await provider.identity("com.fabrikam.mail.license", for: account)
                #expect(
                    identity.privateKeyPem == nil && identity.certificatesPem.components(separatedBy: "BEGIN CERTIFICATE").count == 3,
                    "leaf + CA, the key stays in the store")
                #expect(abs((identity.notAfter ?? .distantPast).timeIntervalSinceNow - 7 * 86400) < 600)

                await #expect(throws: PortcullisClientError.self) { try await provider.password("com.fabrikam.mail.absent", for: account) }
                do {
                    _ = try await provider.password("com.fabrikam.mail.absent", for: account)
                } catch let error as PortcullisClientError {
                    #expect(error.kind == .notProvisioned)
                }
                // A manager without a key store takes no secrets.
                let keyless = Client.manager(app, device: "device-1")
                do {
                    _ = try await ManagedAppConfigurationProvider(manager: keyless).password("com.fabrikam.mail.smtp", for: account)
                    Issue.record("a manager without a key store opened a secret")
                } catch let error as PortcullisClientError {
                    #expect(error.kind == .instanceKeyRequired)
                }

                let files = try FileManager.default.contentsOfDirectory(atPath: keys.path)
                #expect(files.count == 1, "one key for the account: \(files)")
                let mode = try FileManager.default.attributesOfItem(atPath: keys.appendingPathComponent(files[0]).path)[.posixPermissions] as? Int
                #expect(mode == 0o600)
                let enrollment = try #require(await manager.enrollmentId(for: account))
                #expect(try await admin.send("POST", "enrollments/\(enrollment)/wipe").0 == 202)
                do {
                    _ = try await provider.password("com.fabrikam.mail.smtp", for: account)
                    Issue.record("a wiped instance opened a secret")
                } catch let error as PortcullisClientError {
                    #expect(error.kind == .complianceRequired, "\(error)")
                }
                #expect(delegate.wiped.withLock { $0 } == [account.homeAccountId], "the wipe was carried out")
                #expect(try FileManager.default.contentsOfDirectory(atPath: keys.path).isEmpty, "and the instance key destroyed")
            }
        }
    }
}
