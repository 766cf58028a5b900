import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOFoundationEssentialsCompat
import NIOHTTP1
import PortcullisAPI
import PortcullisClient
import PortcullisServer
import PortcullisTesting
import Synchronization

/// Runs a live server (in-process, port 0, temporary SQLite) and hands the body its authority URL.
func withLiveServer<T: Sendable>(
    _ env: TestEnvironment, services: Bool = false, _ body: @Sendable @escaping (URL) async throws -> T
) async throws -> T {
    try await env.application(services: services).test(.live) { client in
        try await body(URL(string: "http://localhost:\(client.port!)/\(Fixtures.domain)")!)
    }
}

/// An app that applies every policy and has (or, interactively, sets) a PIN.
final class TestApplier: PolicyApplier, Sendable {
    let pinSet = Atomic<Bool>(true)
    let applied = Mutex<[String]>([])

    init(pinSet: Bool = true) { self.pinSet.store(pinSet, ordering: .relaxed) }

    func apply(_ policy: PolicyDocument, for account: Account, interactive: Bool) async -> PolicyApplication {
        applied.withLock { $0.append(policy.version) }
        if interactive && policy.settings.pinRequired == true { pinSet.store(true, ordering: .relaxed) }  // the user set a PIN
        return PolicyApplication(applied: true, pinSet: pinSet.load(ordering: .relaxed))
    }
}

/// Records wipes.
final class TestDelegate: ComplianceDelegate, Sendable {
    let wiped = Mutex<[String]>([])
    let restarts = Atomic<Int>(0)
    func wipeData(for account: Account) async -> Bool {
        wiped.withLock { $0.append(account.homeAccountId) }
        return true
    }
    func restartApplication() async { restarts.add(1, ordering: .relaxed) }
    let decodingFailures = Atomic<Int>(0)
    func configurationDecodingFailed(_ error: any Error, for account: Account) async { decodingFailures.add(1, ordering: .relaxed) }
}

enum Client {
    static let mailScope = "\(Fixtures.mailResource)/Mail.Read"

    static func app(
        _ authority: URL, clientId: String = Fixtures.mobileClientId, capabilities: [String] = ["protapp"], cache: any TokenCache = InMemoryTokenCache()
    ) -> PublicClientApplication {
        PublicClientApplication(
            configuration: ClientConfiguration(authority: authority, clientId: clientId, capabilities: capabilities, languages: ["en"]), cache: cache)
    }

    static func manager(
        _ app: PublicClientApplication, device: String = "device-1", applier: TestApplier = TestApplier(), delegate: TestDelegate? = nil,
        store: any ComplianceStateStore = InMemoryComplianceStateStore(), callbackUri: String? = nil, os: String = "17.4",
        keyStore: (any InstanceKeyStore)? = nil
    ) -> ComplianceManager {
        ComplianceManager(
            application: app, device: DeviceInfo(deviceId: device, platform: "iOS", osVersion: os, appVersion: "3.1"),
            applier: applier, delegate: delegate, stateStore: store, callbackUri: callbackUri, keyStore: keyStore)
    }

    static func admin(_ authority: URL) async throws -> AdminClient { try await AdminClient(authority: authority) }

    /// Carol's mail token by the password grant, over AsyncHTTPClient (for resource-side tests).
    static func carolMailToken(_ authority: URL, _ client: HTTPClient) async throws -> String {
        var request = HTTPClientRequest(url: "\(authority.absoluteString)/oauth2/v2.0/token")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.body = .bytes(
            Form.encode([
                ("grant_type", "password"), ("client_id", Fixtures.mobileClientId), ("username", Fixtures.carol.upn),
                ("password", Fixtures.carol.password), ("scope", mailScope),
            ]))
        let answer = try JSONSerialization.jsonObject(with: Data(buffer: try await client.execute(request, timeout: .seconds(30)).body.collect(upTo: 1 << 20)))
        guard let token = (answer as? [String: Any])?["access_token"] as? String else { throw SetupError(message: "no token: \(answer)") }
        return token
    }
}

/// Just enough admin API for the tests, over the SDK's confidential client.
struct AdminClient {
    let base: URL
    let token: String

    init(authority: URL) async throws {
        let app = ConfidentialClientApplication(
            configuration: ClientConfiguration(authority: authority, clientId: Fixtures.adminClientId), clientSecret: Fixtures.adminSecret)
        token = try await app.acquireToken(scopes: ["api://portcullis-admin/.default"]).accessToken
        base = authority.deletingLastPathComponent().appendingPathComponent("admin/v1")
    }

    @discardableResult
    func send(_ method: String, _ path: String, json: Any? = nil, ifMatch: Bool = true) async throws -> (Int, [String: Any]) {
        var request = URLRequest(url: base.appendingPathComponent(path))
        request.httpMethod = method
        // These tests replace what they just read or wrote; "any version" is what they mean.
        if ifMatch && (method == "PUT" || method == "DELETE") { request.setValue("*", forHTTPHeaderField: "If-Match") }
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        if let json {
            request.httpBody = try JSONSerialization.data(withJSONObject: json)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, (try? JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:])
    }

    /// Conditional access requiring app protection on the mail API for everyone.
    func requireAppProtection() async throws {
        let (status, body) = try await send(
            "POST", "conditional-access/policies",
            json: [
                "displayName": "Require app protection for mail", "state": "enabled",
                "conditions": ["users": ["includeUsers": ["All"]], "applications": ["includeApplications": [Fixtures.mailApiId]]],
                "grantControls": ["operator": "OR", "builtInControls": ["compliantApplication"]],
            ])
        guard status == 201 else { throw SetupError(message: "policy: \(status) \(body)") }
    }

    func requireFactor(for user: String) async throws {
        let (status, body) = try await send(
            "POST", "conditional-access/policies",
            json: [
                "displayName": "Require MFA for one user on mail", "state": "enabled",
                "conditions": ["users": ["includeUsers": [user]], "applications": ["includeApplications": [Fixtures.mailApiId]]],
                "grantControls": ["operator": "OR", "builtInControls": ["mfa"]],
            ])
        guard status == 201 else { throw SetupError(message: "policy: \(status) \(body)") }
    }
}

#if canImport(FoundationNetworking)
import FoundationNetworking
import PortcullisCore
#endif

struct SetupError: Error { let message: String }
