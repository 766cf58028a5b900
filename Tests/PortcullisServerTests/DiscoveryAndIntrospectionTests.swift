import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PortcullisAPI
import PortcullisCore
import PortcullisSQLite
import PortcullisTesting
import PortcullisTokens
import Testing

@Suite("discovery, JWKS, user realm, operations")
struct DiscoveryTests {
    @Test("OIDC discovery and RFC 8414 metadata by tenant ID and by domain; issuer names the tenant ID")
    func discovery() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                for path in [
                    "/\(Fixtures.domain)/v2.0/.well-known/openid-configuration", "/\(Fixtures.tenantId)/v2.0/.well-known/openid-configuration",
                    "/.well-known/oauth-authorization-server/\(Fixtures.domain)",
                ] {
                    let reply = try await client.get(path)
                    #expect(reply.status == .ok, "\(path)")
                    #expect(reply.string("issuer") == "http://portcullis.test/\(Fixtures.tenantId)/v2.0")
                    #expect(reply.string("token_endpoint") == "http://portcullis.test/\(Fixtures.tenantId)/oauth2/v2.0/token")
                    #expect(reply.string("jwks_uri") == "http://portcullis.test/\(Fixtures.tenantId)/discovery/v2.0/keys")
                    #expect(reply.string("authorization_endpoint") != nil)
                    #expect((reply["token_endpoint_auth_methods_supported"] as? [String])?.contains("client_secret_basic") == true)
                }
                let unknown = try await client.get("/nowhere.test/v2.0/.well-known/openid-configuration")
                #expect(unknown.status == .badRequest)
                #expect(unknown.errorCode == 90002)
            }
        }
    }

    @Test("JWKS lists the signing key with kid, alg and use")
    func jwks() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let reply = try await client.get("/\(Fixtures.domain)/discovery/v2.0/keys")
                let keys = try #require(reply["keys"] as? [[String: String]])
                #expect(keys.count == 1)
                #expect(keys[0]["kid"] == env.signer.active.kid)
                #expect(keys[0]["alg"] == "ES256" && keys[0]["use"] == "sig" && keys[0]["kty"] == "EC")
            }
        }
    }

    @Test("user realm: Managed for a tenant domain, Unknown otherwise")
    func userRealm() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let known = try await client.get("/common/userrealm/alice@fabrikam.test?api-version=1.0")
                #expect(known.string("account_type") == "Managed")
                #expect(known.string("domain_name") == Fixtures.domain)
                #expect(known.string("ver") == "1.0")
                #expect(known.string("cloud_instance_name") == "portcullis.test")
                #expect(known.string("cloud_audience_urn") == "urn:federation:MicrosoftOnline")
                let unknown = try await client.get("/common/userrealm/someone@elsewhere.example?api-version=1.0")
                #expect(unknown.string("account_type") == "Unknown")
            }
        }
    }

    @Test("health and Prometheus metrics")
    func operations() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                #expect(try await client.get("/health/live").status == .ok)
                let ready = try await client.get("/health/ready")
                #expect(ready.status == .ok && ready.string("store") == "ok")
                _ = try await client.token(Grants.clientCredentials())
                _ = try await client.token([("grant_type", "nope")])
                let metrics = try await client.execute(uri: "/metrics", method: .get) { String(buffer: $0.body) }
                #expect(metrics.contains(#"portcullis_tokens_issued_total{grant_type="client_credentials"} 1"#))
                #expect(metrics.contains("portcullis_http_requests_total"))
                #expect(metrics.contains("portcullis_http_request_duration_seconds_bucket"))
                // A client's value never becomes a label: an unknown grant type is counted as "other".
                #expect(metrics.contains(#"portcullis_token_refusals_total{grant_type="other",error="unsupported_grant_type",code="70003"} 1"#))
                #expect(!metrics.contains("nope"))
            }
        }
    }

    @Test("readiness fails when the store is gone")
    func notReady() async throws {
        try await withTestEnvironment { env in
            try await env.store.close()
            try await env.application().test(.router) { client in
                let ready = try await client.get("/health/ready")
                let live = try await client.get("/health/live")
                #expect(ready.status == .serviceUnavailable)
                #expect(live.status == .ok)
            }
        }
    }
}

@Suite("introspection and revocation")
struct IntrospectionTests {
    static let introspect = "/\(Fixtures.domain)/oauth2/v2.0/introspect"
    static let revoke = "/\(Fixtures.domain)/oauth2/v2.0/revoke"
    static let asMailAPI = [("client_id", Fixtures.mailApiId), ("client_secret", Fixtures.mailApiSecret)]
    static let asAdminTool = [("client_id", Fixtures.adminClientId), ("client_secret", Fixtures.adminSecret)]

    @Test("a valid access token is active for its resource; tampering, alg none, expiry, unknown kid and strangers are not")
    func accessTokens() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let issued = try await client.token(Grants.password())
                let token = try #require(issued.string("access_token"))
                let active = try await client.form(Self.introspect, Self.asMailAPI + [("token", token)])
                #expect(active.status == .ok)
                #expect(active["active"] as? Bool == true)
                #expect(active.string("client_id") == Fixtures.mobileClientId)
                #expect(active.string("username") == Fixtures.alice.upn)
                #expect(active.string("aud") == Fixtures.mailApiId)

                func isActive(_ token: String, as caller: [(String, String)] = Self.asMailAPI) async throws -> Bool {
                    let reply = try await client.form(Self.introspect, caller + [("token", token)])
                    #expect(reply.status == .ok)
                    if reply["active"] as? Bool == false { #expect(reply.json.count == 1, "an inactive answer says nothing more") }
                    return reply["active"] as? Bool ?? false
                }
                let parts = token.split(separator: ".").map(String.init)
                var payload = jwtClaims(token)
                payload["scp"] = "Mail.Read Mail.Send"
                let tampered = "\(parts[0]).\(Base64URL.encode(try JSONSerialization.data(withJSONObject: payload))).\(parts[2])"
                #expect(try await !isActive(tampered))
                let none = Base64URL.encode(Data(#"{"alg":"none","typ":"JWT"}"#.utf8))
                #expect(try await !isActive("\(none).\(parts[1])."))
                // A client that is neither the audience nor the token's client learns nothing.
                #expect(try await !isActive(token, as: Self.asAdminTool))
                // Unknown kid: a token from another deployment.
                let stranger = try await TestEnvironment.make()
                let foreign = try await stranger.application().test(.router) { other in
                    try await other.token(Grants.password()).string("access_token") ?? ""
                }
                await stranger.close()
                #expect(try await !isActive(foreign))
                // Expired.
                env.clock.advance(by: 3601)
                #expect(try await !isActive(token))
            }
        }
    }

    @Test("revocation: 200 for anything; a revoked refresh token family and access token stop working")
    func revocation() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let issued = try await client.token(Grants.password())
                let first = try #require(issued.string("refresh_token"))
                let access = try #require(issued.string("access_token"))
                #expect(try await client.form(Self.revoke, [("client_id", Fixtures.mobileClientId), ("token", "garbage")]).status == .ok)
                // Another client cannot revoke them (issue 25.12): it is answered 200 like anyone (RFC 7009), and the refresh
                // token itself — not only the access token — still works afterwards.
                #expect(try await client.form(Self.revoke, [("client_id", Fixtures.secondMobileClientId), ("token", first)]).status == .ok)
                #expect(try await client.form(Self.revoke, [("client_id", Fixtures.secondMobileClientId), ("token", access)]).status == .ok)
                #expect(try await env.store.find(tokenHash: CredentialHasher.hashToken(first))?.familyRevokedAt == nil, "another client revoked the family")
                let rotated = try await client.token(Grants.refresh(first))
                let refresh = try #require(rotated.string("refresh_token"), "the refresh token must survive another client's revocation: \(rotated.text)")
                let stillActive = try await client.form(
                    Self.introspect, [("client_id", Fixtures.mailApiId), ("client_secret", Fixtures.mailApiSecret), ("token", access)])
                #expect(stillActive["active"] as? Bool == true)
                #expect(try await client.form(Self.revoke, [("client_id", Fixtures.mobileClientId), ("token", refresh)]).status == .ok)
                #expect(try await client.token(Grants.refresh(refresh)).errorCode == 70008)
                #expect(try await client.form(Self.revoke, [("client_id", Fixtures.mobileClientId), ("token", access)]).status == .ok)
                let revoked = try await client.form(Self.introspect, Self.asMailAPI + [("token", access)])
                #expect(revoked["active"] as? Bool == false)
            }
        }
    }

    @Test("refresh tokens introspect for their own client only")
    func refreshIntrospection() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let issued = try await client.token(
                    Grants.password(Fixtures.admin, client: Fixtures.adminClientId, claims: nil) + [("client_secret", Fixtures.adminSecret)])
                let refresh = try #require(issued.string("refresh_token"))
                let own = try await client.form(Self.introspect, Self.asAdminTool + [("token", refresh), ("token_type_hint", "refresh_token")])
                #expect(own["active"] as? Bool == true)
                #expect(own.string("token_type") == "refresh_token")
                let other = try await client.form(Self.introspect, Self.asMailAPI + [("token", refresh)])
                #expect(other["active"] as? Bool == false)
            }
        }
    }
}
