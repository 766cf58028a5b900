import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PortcullisCore
import PortcullisSQLite
import PortcullisServer
import PortcullisTesting
import Testing

/// Device-code flooding (issue 25.3, PROTOCOL §9.5): anyone may ask for a device code, so the codes pending per
/// address, per client and per tenant are bounded, and the bounds are exact under concurrency.
@Suite("device code quotas")
struct DeviceCodeQuotaTests {
    static let path = "/\(Fixtures.domain)/oauth2/v2.0/devicecode"
    static let forwardedFor = HTTPField.Name("X-Forwarded-For")!

    /// Device-code requests, overlapping (eight at a time), from the given addresses (through a trusted proxy): the HTTP statuses,
    /// the AADSTS codes of the refusals and their `Retry-After`.
    static func ask(_ client: some TestClientProtocol, addresses: [String], clientId: String = Fixtures.mobileClientId) async throws -> [(Int, Int?, String?)] {
        try await concurrently(addresses.count) { index in
            let reply = try await client.form(
                Self.path, [("client_id", clientId), ("scope", "\(Fixtures.mailResource)/Mail.Read")],
                headers: [Self.forwardedFor: addresses[index]])
            return (Int(reply.status.code), reply.errorCode, reply.headers[.retryAfter])
        }
    }

    @Test("one address asking 200 times at once gets its 20 codes and slow_down after; other addresses still get theirs")
    func perAddress() async throws {
        try await withTestEnvironment(configure: { $0.trustedProxies = [IPRange("127.0.0.0/8")!] }) { env in
            try await env.application().test(.ahc(.http)) { client in
                let flood = try await Self.ask(client, addresses: Array(repeating: "203.0.113.77", count: 200))
                #expect(flood.filter { $0.0 == 200 }.count == 20, "\(flood.filter { $0.0 == 200 }.count) granted")
                #expect(flood.filter { $0.0 == 400 }.allSatisfy { $0.1 == 90033 && $0.2 == "60" })
                let neighbour = try await Self.ask(client, addresses: ["198.51.100.1"])
                #expect(neighbour.first?.0 == 200, "the tenant's other users are not locked out")
                #expect(try await env.store.pendingDeviceCodes(tenantId: Fixtures.tenantId, now: env.clock.now()) == 21)
            }
        }
    }

    @Test("the tenant's cap is exact when many addresses ask at once (it used to be checked before the insert, and raced past)")
    func exactTenantCap() async throws {
        try await withTestEnvironment(configure: {
            $0.trustedProxies = [IPRange("127.0.0.0/8")!]
            $0.signIn.pendingDeviceCodesPerTenant = 30
            $0.signIn.pendingDeviceCodesPerClient = 1000
        }) { env in
            try await env.application().test(.ahc(.http)) { client in
                let burst = try await Self.ask(client, addresses: (0..<120).map { "192.0.2.\($0)" })
                #expect(burst.filter { $0.0 == 200 }.count == 30, "\(burst.filter { $0.0 == 200 }.count) granted")
                #expect(try await env.store.pendingDeviceCodes(tenantId: Fixtures.tenantId, now: env.clock.now()) == 30)
            }
        }
    }

    @Test("one client cannot fill the tenant's places: its quota leaves room for the tenant's other clients")
    func perClient() async throws {
        try await withTestEnvironment(configure: {
            $0.trustedProxies = [IPRange("127.0.0.0/8")!]
            $0.signIn.pendingDeviceCodesPerClient = 10
        }) { env in
            try await env.application().test(.ahc(.http)) { client in
                let burst = try await Self.ask(client, addresses: (0..<40).map { "192.0.2.\($0)" })
                #expect(burst.filter { $0.0 == 200 }.count == 10)
                // Another client of the tenant (the Notes app, given the grant) still gets a code.
                let admin = try await client.adminToken()
                let notes = try await client.admin(.get, "/applications/\(Fixtures.secondMobileClientId)", token: admin)
                var document = notes.json
                document["allowedGrantTypes"] = ["password", "refresh_token", GrantType.deviceCode.rawValue]
                #expect(
                    try await client.admin(.put, "/applications/\(Fixtures.secondMobileClientId)", token: admin, json: document, headers: [.ifMatch: "*"])
                        .status == .ok)
                let other = try await Self.ask(client, addresses: ["192.0.2.200"], clientId: Fixtures.secondMobileClientId)
                #expect(other.first?.0 == 200, "\(other)")
            }
        }
    }
}
