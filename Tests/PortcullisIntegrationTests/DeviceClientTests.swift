import Foundation
import PortcullisAPI
import PortcullisClient
import PortcullisClientKeys
import PortcullisTesting
import Testing

/// The SDK as a device (PROTOCOL §18) against a live server: registration with the instance key store's device key, a
/// signed check-in, and token requests that answer the server's PKeyAuth challenge.
@Suite("devices: the SDK registers, checks in and proves the device")
struct DeviceClientTests {
    @Test(
        "refused 53000 before; registered, checked in against an iOS policy, the same request gets a token naming the device; a failing check-in refuses it again"
    )
    func registerCheckInAndProve() async throws {
        try await withTestEnvironment(baseURL: "http://localhost:0") { env in
            try await withLiveServer(env) { authority in
                let admin = try await Client.admin(authority)
                // The mobile app lists the registration service; mail needs a compliant device; iOS devices need a passcode.
                var (_, app) = try await admin.send("GET", "applications/\(Fixtures.mobileClientId)")
                app["requiredResourceAccess"] =
                    (app["requiredResourceAccess"] as? [[String: Any]] ?? []) + [["resourceAppId": "api://portcullis-devices", "scopes": ["Device.Register"]]]
                #expect(try await admin.send("PUT", "applications/\(Fixtures.mobileClientId)", json: app).0 == 200)
                let (policyStatus, _) = try await admin.send(
                    "POST", "conditional-access/policies",
                    json: [
                        "displayName": "Compliant device for mail", "state": "enabled",
                        "conditions": ["users": ["includeUsers": [Fixtures.carol.id]], "applications": ["includeApplications": [Fixtures.mailApiId]]],
                        "grantControls": ["operator": "OR", "builtInControls": ["compliantDevice"]],
                    ])
                #expect(policyStatus == 201)
                let (complianceStatus, _) = try await admin.send(
                    "POST", "device-compliance/policies",
                    json: ["@odata.type": "#microsoft.graph.iosCompliancePolicy", "displayName": "iOS", "passcodeRequired": true, "osMinimumVersion": "17.0"])
                #expect(complianceStatus == 201)

                let directory = FileManager.default.temporaryDirectory.appendingPathComponent("device-sdk-\(UUID().uuidString)")
                defer { try? FileManager.default.removeItem(at: directory) }
                let keys = FileInstanceKeyStore(directory: directory)
                var configuration = ClientConfiguration(authority: authority, clientId: Fixtures.mobileClientId, sku: "PortcullisClient.iOS", languages: ["en"])
                configuration.device = keys
                let client = PublicClientApplication(configuration: configuration, cache: InMemoryTokenCache())

                do {
                    _ = try await client.acquireToken(username: Fixtures.carol.upn, password: Fixtures.carol.password, scopes: [Client.mailScope])
                    Issue.record("a token without a registered device")
                } catch let error as PortcullisClientError {
                    #expect(error.errorCode == 53000, "an unregistered device: \(error)")
                }
                let signedIn = try await client.acquireToken(
                    username: Fixtures.carol.upn, password: Fixtures.carol.password, scopes: [PublicClientApplication.deviceRegistrationScope])
                let account = try #require(signedIn.account)
                let registration = try await client.registerDevice(
                    account: account, displayName: "Carol's iPhone", operatingSystem: "iOS", operatingSystemVersion: "17.4")
                #expect(try await keys.deviceRegistration() == registration, "kept by the key store")
                do {
                    _ = try await client.acquireTokenSilent(account: account, scopes: [Client.mailScope], forceRefresh: true)
                    Issue.record("a token for a device that never checked in")
                } catch let error as PortcullisClientError {
                    #expect(error.errorCode == 53000, "registered, not yet compliant: \(error)")
                }
                let passed = try await client.checkInDevice(
                    DeviceCheckInReport(operatingSystem: "iOS", operatingSystemVersion: "17.4", passcodeSet: true, storageEncrypted: true, jailbroken: false))
                #expect(passed.isCompliant && passed.isManaged)
                let granted = try await client.acquireTokenSilent(account: account, scopes: [Client.mailScope], forceRefresh: true)
                #expect(granted.claims["deviceid"] as? String == registration.deviceId, "\(granted.claims)")

                env.clock.advance(by: 61)
                let failed = try await client.checkInDevice(
                    DeviceCheckInReport(operatingSystem: "iOS", operatingSystemVersion: "17.4", passcodeSet: false, storageEncrypted: true, jailbroken: false))
                #expect(!failed.isCompliant && failed.complianceFailures?.first?.contains("passcodeRequired") == true)
                do {
                    _ = try await client.acquireTokenSilent(account: account, scopes: [Client.mailScope], forceRefresh: true)
                    Issue.record("a token after a failed check-in")
                } catch let error as PortcullisClientError {
                    #expect(error.errorCode == 53000, "after a failed check-in: \(error)")
                }
            }
        }
    }
}
