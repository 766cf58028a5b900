import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PortcullisCore
import PortcullisServer
import PortcullisTesting
import Testing

/// On-behalf-of through the server (PROTOCOL §21): a middle-tier API exchanges a user's token for the mail API's; who may,
/// what is refused, and conditional access for the mail API judged on the original sign-in (its address).
@Suite("On-behalf-of (PROTOCOL §21), through the server")
struct OnBehalfOfServerTests {
    static let tier = "c1000000-0000-4000-8000-0000000000c1"
    static let tierSecret = "tier-secret-value"
    static let tierScope = "api://fabrikam-tier/access_as_user"
    static let jwtBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"

    static func from(_ address: String) -> HTTPFields { [HTTPField.Name("X-Forwarded-For")!: address] }

    /// `account`'s token for the middle tier, from the mobile app, as if from `address`.
    static func incoming(_ client: some TestClientProtocol, _ account: Fixtures.Account, from address: String = "192.0.2.1") async throws -> String {
        let reply = try await client.token(
            [
                ("grant_type", "password"), ("client_id", Fixtures.mobileClientId), ("username", account.upn), ("password", account.password),
                ("scope", tierScope),
            ], headers: from(address))
        return try #require(reply.string("access_token"), "\(reply.text)")
    }

    static func exchange(
        _ client: some TestClientProtocol, _ assertion: String, clientId: String = tier, secret: String? = tierSecret, use: String = "on_behalf_of"
    ) async throws -> JSONReply {
        var fields = [
            ("grant_type", jwtBearer), ("requested_token_use", use), ("assertion", assertion), ("client_id", clientId),
            ("scope", "\(Fixtures.mailResource)/Mail.Read"),
        ]
        if let secret { fields.append(("client_secret", secret)) }
        return try await client.token(fields)
    }

    @Test(
        "the tier exchanges a user's token for the mail API's (its azp, the user, Mail.Read); another audience, a public client, a revoked or disabled user are refused; a policy's refusal names it in a claims challenge; the original sign-in's address is where it happened"
    )
    func exchange() async throws {
        try await withTestEnvironment(configure: { $0.trustedProxies = [IPRange("127.0.0.0/8")!, IPRange("::1/128")!] }) { env in
            try await env.application().test(.live) { client in
                let admin = try await client.adminToken()
                let made = try await client.admin(
                    .post, "/applications", token: admin,
                    json: [
                        "appId": Self.tier, "displayName": "Mail middle tier", "secrets": [["secret": Self.tierSecret]],
                        "allowedGrantTypes": [Self.jwtBearer, "refresh_token"], "identifierUris": ["api://fabrikam-tier"], "scopes": ["access_as_user"],
                        "preAuthorizedApplications": [Fixtures.mobileClientId],
                        "requiredResourceAccess": [["resourceAppId": Fixtures.mailResource, "scopes": ["Mail.Read"]]],
                    ])
                #expect(made.status == .created, "\(made.text)")
                let bob = try await Self.incoming(client, Fixtures.bob)
                let exchanged = try await Self.exchange(client, bob)
                let claims = jwtClaims(exchanged.string("access_token") ?? "")
                #expect(exchanged.status == .ok, "\(exchanged.text)")
                #expect(claims["oid"] as? String == Fixtures.bob.id && claims["azp"] as? String == Self.tier)
                #expect(claims["aud"] as? String == Fixtures.mailApiId && claims["scp"] as? String == "Mail.Read" && claims["ipaddr"] as? String == "192.0.2.1")

                // Refused: a token for another audience, a public client, no requested_token_use.
                let direct = try await client.token([
                    ("grant_type", "password"), ("client_id", Fixtures.mobileClientId), ("username", Fixtures.bob.upn),
                    ("password", Fixtures.bob.password), ("scope", "\(Fixtures.mailResource)/Mail.Read"),
                ])
                let other = try await Self.exchange(client, try #require(direct.string("access_token")))
                #expect(other.string("error") == "invalid_grant" && other.errorCode == 50013, "\(other.text)")
                let forged = try await Self.exchange(client, bob.dropLast(4) + "AAAA")
                #expect(forged.string("error") == "invalid_grant" && forged.errorCode == 50013, "\(forged.text)")
                let publicClient = try await Self.exchange(client, bob, clientId: Fixtures.mobileClientId, secret: nil)
                #expect(publicClient.status == .unauthorized && publicClient.errorCode == 7000218, "\(publicClient.text)")
                let wrongUse = try await Self.exchange(client, bob, use: "bearer")
                #expect(wrongUse.errorCode == 900144, "\(wrongUse.text)")
                let wrongSecret = try await Self.exchange(client, bob, secret: "not-the-secret")
                #expect(wrongSecret.string("error") == "invalid_client", "\(wrongSecret.text)")

                // A policy that requires MFA of Carol on the mail API: interaction_required, its claims naming the policy; a
                // block stays a block.
                let mfa = Policies.document(id: "a1000000-0000-4000-8000-0000000000c2", name: "MFA for Carol", users: [Fixtures.carol.id], controls: ["mfa"])
                #expect(try await client.admin(.post, "/conditional-access/policies", token: admin, json: mfa).status == .created)
                let carol = try await Self.incoming(client, Fixtures.carol)
                let challenged = try await Self.exchange(client, carol)
                #expect(challenged.string("error") == "interaction_required" && challenged.errorCode == 50076, "\(challenged.text)")
                let named = try ClaimsRequest.parse(try #require(challenged.string("claims"))).policyIds
                #expect(named == ["a1000000-0000-4000-8000-0000000000c2"])

                // A policy that blocks the mail API outside HQ (203.0.113.0/24) for Alice: judged where she signed in to the tier,
                // not where the tier calls from (loopback here).
                let hqOnly = Policies.document(
                    id: "a1000000-0000-4000-8000-0000000000c3", name: "Mail from HQ only", users: [Fixtures.alice.id], locations: ["All"],
                    excludeLocations: ["AllTrusted"], controls: ["block"])
                #expect(try await client.admin(.post, "/conditional-access/policies", token: admin, json: hqOnly).status == .created)
                let inOffice = try await Self.exchange(client, try await Self.incoming(client, Fixtures.alice, from: "203.0.113.9"))
                #expect(inOffice.status == .ok, "\(inOffice.text)")
                let outside = try await Self.exchange(client, try await Self.incoming(client, Fixtures.alice, from: "198.51.100.9"))
                #expect(outside.string("error") == "invalid_grant" && outside.errorCode == 53003 && outside.string("claims") == nil, "\(outside.text)")

                // Bob's sessions revoked: the token he had exchanges for nothing; a new one does.
                let revoked = try await client.admin(.post, "/users/\(Fixtures.bob.id)/revokeSignInSessions", token: admin)
                #expect(revoked.status.code < 300, "\(revoked.text)")
                let afterRevocation = try await Self.exchange(client, bob)
                #expect(afterRevocation.string("error") == "invalid_grant" && afterRevocation.errorCode == 50173, "\(afterRevocation.text)")
                env.clock.advance(by: 1)
                let fresh = try await Self.incoming(client, Fixtures.bob)
                #expect(try await Self.exchange(client, fresh).status == .ok)
                // Disabled: refused.
                let current = try await client.admin(.get, "/users/\(Fixtures.bob.id)", token: admin)
                var user = current.json
                user["accountEnabled"] = false
                let disabled = try await client.admin(
                    .put, "/users/\(Fixtures.bob.id)", token: admin, json: user, headers: [HTTPField.Name("If-Match")!: current.headers[.eTag] ?? "*"])
                #expect(disabled.status == .ok, "\(disabled.text)")
                let refusedDisabled = try await Self.exchange(client, fresh)
                #expect(refusedDisabled.string("error") == "invalid_grant", "\(refusedDisabled.text)")
            }
        }
    }
}
