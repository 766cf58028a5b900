import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOFoundationEssentialsCompat
import NIOHTTP1
import PortcullisResourceServer
import PortcullisServer
import PortcullisTesting
import Testing

/// Strict location enforcement (PROTOCOL §17): a token issued at an address the location policies allow is held to them
/// at the resource, by the gateway, on the address the gateway sees.
@Suite("strict location enforcement, end to end")
struct StrictLocationTests {
    @Test("a token issued in the office is forwarded from an office address and challenged from elsewhere; without the control, it is not")
    func gatewayHoldsTheTokenToTheLocations() async throws {
        try await GatewayServerTests.withUpstream(configure: { $0.trustedProxies = [IPRange("127.0.0.1/32")!, IPRange("::1/128")!] }) {
            authority, upstreamPort, client in try await Self.run(authority: authority, upstreamPort: upstreamPort, client: client)
        }
    }

    /// Carol's mail token, asked for as if from `address` (the server believes loopback's `X-Forwarded-For`): the token,
    /// or the error code.
    static func token(_ authority: URL, _ client: HTTPClient, from address: String) async throws -> (token: String?, error: String?) {
        var request = HTTPClientRequest(url: "\(authority.absoluteString)/oauth2/v2.0/token")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "X-Forwarded-For", value: address)
        request.body = .bytes(
            Form.encode([
                ("grant_type", "password"), ("client_id", Fixtures.mobileClientId), ("username", Fixtures.carol.upn),
                ("password", Fixtures.carol.password), ("scope", Client.mailScope),
            ]))
        let data = Data(buffer: try await client.execute(request, timeout: .seconds(30)).body.collect(upTo: 1 << 20))
        let answer = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        return (answer["access_token"] as? String, (answer["error"] as? String).map { "\($0): \(answer["error_description"] ?? "")" })
    }

    static func payload(_ token: String) throws -> [String: Any] {
        var part = String(token.split(separator: ".")[1]).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while part.count % 4 != 0 { part += "=" }
        let data = try #require(Data(base64Encoded: part))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    static func run(authority: URL, upstreamPort: Int, client: HTTPClient) async throws {
        let admin = try await Client.admin(authority)
        let (created, location) = try await admin.send(
            "POST", "named-locations", json: ["displayName": "Office", "ipRanges": ["127.0.0.5/32"], "isTrusted": true])
        #expect(created == 201, "\(location)")
        let locationId = try #require(location["id"] as? String)
        let (blocked, block) = try await admin.send(
            "POST", "conditional-access/policies",
            json: [
                "displayName": "Block mail outside the office", "state": "enabled",
                "conditions": [
                    "users": ["includeUsers": ["All"]], "applications": ["includeApplications": [Fixtures.mailApiId]],
                    "locations": ["includeLocations": ["All"], "excludeLocations": ["AllTrusted"]],
                ],
                "grantControls": ["operator": "OR", "builtInControls": ["block"]],
            ])
        #expect(blocked == 201, "\(block)")
        // As exported from Entra (PROTOCOL §17): Graph's annotations beside the mode.
        let (strict, strictPolicy) = try await admin.send(
            "POST", "conditional-access/policies",
            json: [
                "displayName": "Strictly enforce location policies", "state": "enabled",
                "conditions": ["users": ["includeUsers": ["All"]], "applications": ["includeApplications": ["All"]]],
                "grantControls": NSNull(),
                "sessionControls": [
                    "continuousAccessEvaluation": [
                        "@odata.type": "#microsoft.graph.continuousAccessEvaluationSessionControl",
                        "mode@odata.type": "#microsoft.graph.continuousAccessEvaluationMode", "mode": "strictLocation",
                    ]
                ],
            ])
        #expect(strict == 201, "\(strictPolicy)")
        let strictId = try #require(strictPolicy["id"] as? String)

        // From outside the office, the token endpoint blocks; from the office, it issues a token held to the office.
        #expect(try await token(authority, client, from: "198.51.100.7").error?.hasPrefix("invalid_grant") == true)
        let office = try await token(authority, client, from: "127.0.0.5")
        let officeToken = try #require(office.token, "\(office)")
        let claims = try payload(officeToken)
        #expect(claims["ipaddr"] as? String == "127.0.0.5")
        let constraints = try #require(claims["xms_sle"] as? [[String: [String]]], "\(claims)")
        // The policy's exclusion is every trusted location of the tenant (the fixtures' and the office).
        #expect(constraints.count == 1 && constraints.first?["in"] == ["::/0"] && constraints.first?["ex"]?.contains("127.0.0.5/32") == true)
        #expect(constraints.first?["ex"]?.contains(where: { $0.hasPrefix("127.0.0.1") || $0 == "127.0.0.0/8" }) == false)

        let logger = Logger(label: "strict-location-test")
        let validator = AccessTokenValidator(
            authority: authority.absoluteString, audiences: [Fixtures.mailApiId, Fixtures.mailResource], client: client, logger: logger)
        let gateway = Gateway(
            configuration: Gateway.Configuration(upstream: "http://127.0.0.1:\(upstreamPort)", publicBaseURL: "http://127.0.0.1"),
            guardian: ResourceGuard(validator: validator))
        try await GatewayServerTests.serving(gateway, logger: logger) { port, _ in
            func call(_ token: String) async throws -> (UInt, HTTPHeaders) {
                var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/ok")
                request.headers.add(name: "Authorization", value: "Bearer \(token)")
                let response = try await client.execute(request, timeout: .seconds(10))
                _ = try await response.body.collect(upTo: 1 << 20)
                return (response.status.code, response.headers)
            }
            // The gateway sees 127.0.0.1, outside the office: the claims challenge, twice (the second from memory).
            for _ in 0..<2 {
                let (status, headers) = try await call(officeToken)
                let challenge = headers["www-authenticate"].first ?? ""
                #expect(status == 401 && challenge.contains(#"error="insufficient_claims""#), "\(status) \(challenge)")
                let encoded = try #require(challenge.split(separator: "claims=\"").last?.split(separator: "\"").first)
                let decoded = try #require(Data(base64Encoded: String(encoded)))
                let asked = String(decoding: decoded, as: UTF8.self)
                #expect(asked.contains(#""nbf":{"essential":true,"value":"\#((claims["iat"] as? Int ?? 0) + 1)"}"#), "\(asked)")
            }
            // The whole loopback is the office now: a token issued there is forwarded from 127.0.0.1.
            let (updated, _) = try await admin.send(
                "PUT", "named-locations/\(locationId)", json: ["displayName": "Office", "ipRanges": ["127.0.0.0/8"], "isTrusted": true])
            #expect(updated == 200)
            let wideToken = try #require(try await token(authority, client, from: "127.0.0.5").token)
            #expect(try await call(wideToken).0 == 200)
            // Back to one address and no strict enforcement: the token carries no locations, and the gateway forwards it.
            _ = try await admin.send(
                "PUT", "named-locations/\(locationId)", json: ["displayName": "Office", "ipRanges": ["127.0.0.5/32"], "isTrusted": true])
            let (deleted, _) = try await admin.send("DELETE", "conditional-access/policies/\(strictId)")
            #expect(deleted == 204)
            let plainToken = try #require(try await token(authority, client, from: "127.0.0.5").token)
            #expect(try payload(plainToken)["xms_sle"] == nil)
            #expect(try await call(plainToken).0 == 200)
        }
    }
}
