import Foundation
import PortcullisAPI
import PortcullisClient
import PortcullisCore

/// One full remediation loop through the client SDK against a running server (demo configuration:
/// app protection required for the mail API on iOS): refused refresh → enroll → apply → check-in → token.
enum RemediationBench {
    struct Applier: PolicyApplier {
        func apply(_ policy: PolicyDocument, for account: Account, interactive: Bool) async -> PolicyApplication {
            PolicyApplication(applied: true, pinSet: true)
        }
    }

    static func run(authority: URL, iterations: Int) async throws {
        let configuration = ClientConfiguration(
            authority: authority, clientId: "c0ffee00-1111-4a2b-8c3d-4e5f6a7b8c01", capabilities: ["protapp"], sku: "PortcullisClient.iOS",
            osDescription: "17.4")
        let app = PublicClientApplication(configuration: configuration)
        let scope = ["api://contoso-mail/Mail.Read"]
        // Sign in once (bcrypt is paid here, not in the loop).
        _ = try? await app.acquireToken(username: "alice@contoso.example", password: "Alice-dev-pass1", scopes: scope)
        guard let account = try await app.accounts().first else { throw CancellationError() }
        var samples: [Double] = []
        for index in 0..<(iterations + 5) {
            let manager = ComplianceManager(
                application: app, device: DeviceInfo(deviceId: "bench-\(index)", platform: "iOS", osVersion: "17.4", appVersion: "3.1"), applier: Applier())
            let clock = ContinuousClock()
            let start = clock.now
            do {
                _ = try await app.acquireTokenSilent(account: account, scopes: scope, forceRefresh: true)
                print("warning: the token was not refused; is app protection required for the mail API on iOS?")
            } catch let error as PortcullisClientError where error.kind == .protectionPolicyRequired {}
            let status = await manager.remediate(account: account, silent: true)
            guard status.status == .compliant else {
                print("remediation ended \(status.status)")
                return
            }
            _ = try await app.acquireTokenSilent(account: account, scopes: scope, forceRefresh: true)
            let elapsed = clock.now - start
            if index >= 5 { samples.append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1e3) }
            try await manager.unenroll(account: account)  // free the account for the next loop (not timed)
        }
        samples.sort()
        func percentile(_ p: Double) -> Double { samples[min(samples.count - 1, Int(Double(samples.count) * p))] }
        print(
            String(
                format: "remediation loop (refusal → enroll → apply → check-in → token), %d loops: p50 %.1f ms, p90 %.1f ms, max %.1f ms",
                samples.count, percentile(0.5), percentile(0.9), samples.last ?? 0))
    }
}
