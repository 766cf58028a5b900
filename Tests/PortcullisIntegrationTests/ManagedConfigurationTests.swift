import Foundation
import PortcullisAPI
import PortcullisClient
import PortcullisCore
import PortcullisTesting
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
        ["id": policyId, "displayName": "Mail settings", "priority": 10, "configuration": configuration,
         "targets": ["applications": [Fixtures.mobileClientId], "includeGroups": ["All"], "excludeGroups": []]]
    }

    @Test("the stream yields the current configuration, then each change; nil when decoding fails (reported) or nothing applies; it ends on wipe; unmanaged yields nil")
    func stream() async throws {
        let env = try await TestEnvironment.make(baseURL: "http://localhost:0")
        defer { Task { await env.close() } }
        try await withLiveServer(env) { authority in
            let admin = try await Client.admin(authority)
            let (created, createdBody) = try await admin.send("POST", "app-configuration/policies", json: Self.policy(["serverUrl": "https://one.fabrikam.test", "syncDays": 7, "newKey": ["ignored": true]]))
            #expect(created == 201, "\(createdBody)")
            let app = Client.app(authority)
            let delegate = TestDelegate()
            let manager = Client.manager(app, delegate: delegate)
            let account = try #require(try await app.acquireToken(username: Fixtures.alice.upn, password: Fixtures.alice.password, scopes: [Client.mailScope]).account)

            // Not enrolled yet: unmanaged, nil.
            do {
                // (Scoped: released, the stream stops its long polls.)
                var unmanaged = ManagedAppConfigurationProvider(manager: manager, wait: 5).configurations(of: MailSettings.self, for: account).makeAsyncIterator()
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
