import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PortcullisAPI
import PortcullisCore
import PortcullisServer
import PortcullisTesting
import Testing

@Suite("token endpoint")
struct TokenEndpointTests {
    @Test("client_credentials with client_secret_post and client_secret_basic")
    func clientCredentials() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let post = try await client.token(Grants.clientCredentials())
                #expect(post.status == .ok)
                #expect(post.headers[.cacheControl] == "no-store")
                #expect(post.headers[HTTPField.Name("Pragma")!] == "no-cache")
                #expect(post.string("token_type") == "Bearer")
                #expect(post.string("scope") == "\(Fixtures.mailResource)/.default")
                #expect(post["expires_in"] as? Int == 3600)
                #expect(post["ext_expires_in"] as? Int == 3600)
                #expect(post["refresh_token"] == nil)
                let claims = jwtClaims(try #require(post.string("access_token")))
                #expect(claims["aud"] as? String == Fixtures.mailApiId, "aud is the resource's application ID (Entra v2.0), whatever form the scope used")
                #expect(claims["roles"] as? [String] == ["Mail.ReadAll"])
                #expect(claims["azp"] as? String == Fixtures.daemonClientId)
                #expect(claims["client_id"] as? String == Fixtures.daemonClientId)
                #expect(claims["sub"] as? String == Fixtures.daemonClientId)
                #expect(claims["tid"] as? String == Fixtures.tenantId)
                #expect(claims["iss"] as? String == "http://portcullis.test/\(Fixtures.tenantId)/v2.0")
                #expect(claims["scp"] == nil)
                for key in ["iat", "nbf", "exp"] { #expect(claims[key] is Int, "\(key) must be an integer") }
                #expect(claims["jti"] is String)

                let basic = try await client.form(
                    "/\(Fixtures.tenantId)/oauth2/v2.0/token",
                    [("grant_type", "client_credentials"), ("scope", "\(Fixtures.mailApiId)/.default")],
                    headers: [.authorization: Grants.basic(Fixtures.daemonClientId, Fixtures.daemonSecret)])
                #expect(basic.status == .ok)
                #expect(jwtClaims(try #require(basic.string("access_token")))["aud"] as? String == Fixtures.mailApiId)
            }
        }
    }

    @Test("aud: the resource's application ID by default, whichever form the scope used; the identifier URI with the setting")
    func audience() async throws {
        for (format, expected) in [(GrantSettings.AudienceFormat.applicationId, Fixtures.mailApiId), (.identifierUri, Fixtures.mailResource)] {
            try await withTestEnvironment(configure: { $0.audienceFormat = format }) { env in
                try await env.application().test(.router) { client in
                    for scope in ["\(Fixtures.mailResource)/.default", "\(Fixtures.mailApiId)/.default"] {
                        let reply = try await client.token(Grants.clientCredentials(scope: scope))
                        let aud = jwtClaims(try #require(reply.string("access_token"))).first { $0.key == "aud" }?.value as? String
                        #expect(
                            aud == (format == .applicationId ? expected : (scope.hasPrefix("api://") ? Fixtures.mailResource : Fixtures.mailApiId)),
                            "\(format) \(scope)")
                    }
                }
            }
        }
    }

    @Test("password grant: capabilities in xms_cc, id token, refresh token, client_info, correlation ID echoed")
    func password() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let reply = try await client.token(Grants.password(), headers: [HTTPField.Name("client-request-id")!: "corr-1234"])
                #expect(reply.status == .ok)
                #expect(reply.headers[HTTPField.Name("client-request-id")!] == "corr-1234")
                #expect(reply.string("scope") == "\(Fixtures.mailResource)/Mail.Read openid profile offline_access")
                let access = jwtClaims(try #require(reply.string("access_token")))
                #expect(access["xms_cc"] as? [String] == ["protapp"])
                #expect(access["scp"] as? String == "Mail.Read")
                #expect(access["oid"] as? String == Fixtures.alice.id)
                #expect(access["upn"] as? String == Fixtures.alice.upn)
                #expect(access["preferred_username"] as? String == Fixtures.alice.upn)
                #expect(access["azpacr"] as? String == "0")
                let id = jwtClaims(try #require(reply.string("id_token")))
                #expect(id["aud"] as? String == Fixtures.mobileClientId)
                #expect(id["oid"] as? String == Fixtures.alice.id)
                #expect(id["name"] as? String == "Alice")
                let encodedInfo = try #require(reply.string("client_info"))
                let info = try #require(ClientInfo(encoded: encodedInfo))
                #expect(info.uid == Fixtures.alice.id && info.utid == Fixtures.tenantId)
                #expect((reply.string("refresh_token") ?? "").count >= 43)

                // Without offline_access and openid: no refresh token, no id token; UPN is case-insensitive.
                var upper = Grants.password(scope: "\(Fixtures.mailResource)/Mail.Send", claims: nil)
                upper[2] = ("username", Fixtures.alice.upn.uppercased())
                let plain = try await client.token(upper)
                #expect(plain.status == .ok)
                #expect(plain["refresh_token"] == nil && plain["id_token"] == nil)
                #expect(jwtClaims(plain.string("access_token") ?? "")["xms_cc"] == nil)
            }
        }
    }

    @Test("refresh tokens rotate on every use; replaying a rotated one revokes the family")
    func rotation() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let first = try await client.token(Grants.password())
                let rt1 = try #require(first.string("refresh_token"))
                let second = try await client.token(Grants.refresh(rt1))
                #expect(second.status == .ok)
                let rt2 = try #require(second.string("refresh_token"))
                #expect(rt2 != rt1)
                #expect(second.string("id_token") != nil)
                #expect(jwtClaims(second.string("access_token") ?? "")["xms_cc"] as? [String] == ["protapp"])
                // Capabilities are re-read on every grant.
                let third = try await client.token(Grants.refresh(rt2, claims: nil))
                #expect(third.status == .ok)
                #expect(jwtClaims(third.string("access_token") ?? "")["xms_cc"] == nil)
                let rt3 = try #require(third.string("refresh_token"))

                // Replay of rt1 (already rotated): refused and the whole family revoked.
                let replay = try await client.token(Grants.refresh(rt1))
                #expect(replay.status == .badRequest)
                #expect(replay.string("error") == "invalid_grant")
                #expect(replay.errorCode == 70008)
                let afterReplay = try await client.token(Grants.refresh(rt3))
                #expect(afterReplay.status == .badRequest)
                #expect(afterReplay.errorCode == 70008)

                // Another sign-in starts a new, independent family.
                let fresh = try await client.token(Grants.password())
                #expect(try await client.token(Grants.refresh(try #require(fresh.string("refresh_token")))).status == .ok)
            }
        }
    }

    @Test("a refresh token is bound to its client and expires")
    func refreshBinding() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let first = try await client.token(Grants.password())
                let rt = try #require(first.string("refresh_token"))
                let stolen = try await client.token(Grants.refresh(rt, client: Fixtures.secondMobileClientId))
                #expect(stolen.status == .badRequest)
                #expect(stolen.errorCode == 70000)
                env.clock.advance(by: 91 * 24 * 3600)
                let late = try await client.token(Grants.refresh(rt))
                #expect(late.errorCode == 70008)
            }
        }
    }

    @Test("error bodies have the Microsoft shape")
    func errorShape() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                var fields = Grants.password()
                fields[3] = ("password", "wrong")
                let reply = try await client.token(fields, headers: [HTTPField.Name("client-request-id")!: "abc-123"])
                #expect(reply.status == .badRequest)
                #expect(reply.headers[.cacheControl] == "no-store")
                #expect(reply.string("error") == "invalid_grant")
                #expect(reply["error_codes"] as? [Int] == [50126])
                #expect(reply.string("correlation_id") == "abc-123")
                let trace = try #require(reply.string("trace_id"))
                #expect(reply.headers[HTTPField.Name("x-ms-request-id")!] == trace)
                let timestamp = try #require(reply.string("timestamp"))
                #expect(timestamp.range(of: #"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}Z$"#, options: .regularExpression) != nil)
                #expect(
                    reply.string("error_description")
                        == "AADSTS50126: Error validating credentials due to invalid username or password.\r\nTrace ID: \(trace)\r\nCorrelation ID: abc-123\r\nTimestamp: \(timestamp)"
                )
                #expect(!reply.text.contains("wrong"), "the password must never be echoed")
            }
        }
    }

    @Test("invalid_client is 401 with WWW-Authenticate")
    func invalidClient() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let reply = try await client.form(
                    TestEnvironment.tokenPath, [("grant_type", "client_credentials"), ("scope", "\(Fixtures.mailResource)/.default")],
                    headers: [.authorization: Grants.basic(Fixtures.daemonClientId, "wrong")])
                #expect(reply.status == .unauthorized)
                #expect(reply.headers[.wwwAuthenticate]?.hasPrefix("Basic") == true)
                #expect(reply.errorCode == 7000215)
            }
        }
    }
}
