import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import JWTKit
import NIOFoundationEssentialsCompat
import PortcullisAPI
import PortcullisCore
import PortcullisSQLite
import PortcullisTesting
import PortcullisTokens
import Testing

/// Two tenants on one installation, one of them hostile (issue 25.1, PROTOCOL §11): the other tenant's
/// administrator cannot take Fabrikam's application IDs, object IDs or UPN domain, and a token of one tenant
/// never verifies against another tenant's JWKS — checked over real sockets, as a resource server would.
@Suite("tenant isolation (two tenants, one hostile)")
struct TenantIsolationTests {
    static let otherAdminId = "50000000-0000-4000-8000-0000000000aa"
    static let otherAdminSecret = "other-admin-secret"

    /// The fixtures, with an administrator application in the other tenant.
    static func directory() throws -> Data {
        var root = try #require(try JSONSerialization.jsonObject(with: Fixtures.directoryJSON()) as? [String: Any])
        var tenants = try #require(root["tenants"] as? [[String: Any]])
        var other = tenants[1]
        other["applications"] =
            (other["applications"] as? [[String: Any]] ?? []) + [
                [
                    "appId": otherAdminId, "displayName": "Other admin tool", "secrets": [["secret": otherAdminSecret]],
                    "allowedGrantTypes": ["client_credentials"],
                ]
            ]
        other["appRoleAssignments"] = [["principalId": otherAdminId, "resource": "api://portcullis-admin", "role": "Portcullis.Admin"]]
        tenants[1] = other
        root["tenants"] = tenants
        return try JSONSerialization.data(withJSONObject: root)
    }

    static func clientCredentials(_ client: String, _ secret: String, scope: String) -> [(String, String)] {
        [("grant_type", "client_credentials"), ("client_id", client), ("client_secret", secret), ("scope", scope)]
    }

    /// Verifies `token` the way a resource server that trusts a JWKS does: any key of the set, no other check.
    static func verifies(_ token: String, againstJWKS jwks: String) async -> Bool {
        let keys = JWTKeyCollection()
        guard (try? await keys.add(jwksJSON: jwks)) != nil else { return false }
        return (try? await keys.verify(token, as: AccessTokenClaims.self)) != nil
    }

    @Test("the other tenant's admin cannot take Fabrikam's appId, object IDs or UPN domain, and its tokens never verify with Fabrikam's JWKS")
    func hostileTenant() async throws {
        try await withTestEnvironment(directoryJSON: try Self.directory()) { env in
            try await env.application().test(.live) { client in
                let otherToken = try #require(
                    try await client.form(
                        "/\(Fixtures.otherDomain)/oauth2/v2.0/token",
                        Self.clientCredentials(Self.otherAdminId, Self.otherAdminSecret, scope: "api://portcullis-admin/.default"))["access_token"] as? String)
                func post(_ path: String, _ body: [String: Any]) async throws -> (HTTPResponse.Status, [String]) {
                    try await client.execute(
                        uri: "/admin/v1/\(path)", method: .post, headers: [.authorization: "Bearer \(otherToken)", .contentType: "application/json"],
                        body: ByteBuffer(data: try JSONSerialization.data(withJSONObject: body))
                    ) { response in
                        let json = (try? JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any]) ?? [:]
                        let details = ((json["error"] as? [String: Any])?["details"] as? [[String: Any]]) ?? []
                        return (response.status, details.compactMap { $0["pointer"] as? String })
                    }
                }
                // Fabrikam's mail API, copied: its appId is taken.
                let copy: [String: Any] = [
                    "appId": Fixtures.mailApiId, "displayName": "Mail API", "identifierUris": [Fixtures.mailResource], "appRoles": ["Mail.ReadAll"],
                ]
                #expect(try await post("applications", copy) == (.badRequest, ["/appId"]))
                #expect(try await post("applications?dryRun=true", copy) == (.badRequest, ["/appId"]), "a dry run says so too")
                // Alice, copied: her UPN's domain is Fabrikam's, and her object ID is hers (a group cannot take it either).
                #expect(
                    try await post("users", ["id": Fixtures.alice.id, "userPrincipalName": Fixtures.alice.upn, "displayName": "Alice"]) == (
                        .badRequest, ["/userPrincipalName"]
                    ))
                #expect(
                    try await post("users", ["id": Fixtures.alice.id, "userPrincipalName": "alice@\(Fixtures.otherDomain)", "displayName": "Alice"]) == (
                        .badRequest, ["/id"]
                    ))
                #expect(try await post("groups", ["id": Fixtures.alice.id, "displayName": "Alice"]) == (.badRequest, ["/id"]))
                #expect(try await env.store.document(tenantId: TenantID(Fixtures.otherTenantId), kind: .user, id: Fixtures.alice.id) == nil)

                // What the other tenant may do — an API of its own under the same identifier URI, with a role it assigns
                // itself — gives tokens that Fabrikam's JWKS does not verify (their own tenant's JWKS does).
                let ownApi = "50000000-0000-4000-8000-0000000000bb"
                #expect(
                    try await post(
                        "applications", ["appId": ownApi, "displayName": "Look-alike", "identifierUris": [Fixtures.mailResource], "appRoles": ["Mail.ReadAll"]]
                    ).0 == .created)
                #expect(try await post("app-role-assignments", ["principalId": Self.otherAdminId, "resource": ownApi, "role": "Mail.ReadAll"]).0 == .created)
                let lookAlike = try #require(
                    try await client.form(
                        "/\(Fixtures.otherDomain)/oauth2/v2.0/token",
                        Self.clientCredentials(Self.otherAdminId, Self.otherAdminSecret, scope: "\(Fixtures.mailResource)/.default"))["access_token"] as? String
                )
                #expect(jwtClaims(lookAlike)["roles"] as? [String] == ["Mail.ReadAll"])
                #expect(jwtClaims(lookAlike)["aud"] as? String == ownApi, "the audience is the look-alike's own app ID, never Fabrikam's")
                let genuine = try #require(try await client.token(Grants.clientCredentials())["access_token"] as? String)
                let fabrikamJWKS = try await client.execute(uri: "/\(Fixtures.domain)/discovery/v2.0/keys", method: .get) { String(buffer: $0.body) }
                let otherJWKS = try await client.execute(uri: "/\(Fixtures.otherDomain)/discovery/v2.0/keys", method: .get) { String(buffer: $0.body) }
                #expect(await Self.verifies(genuine, againstJWKS: fabrikamJWKS))
                #expect(await Self.verifies(lookAlike, againstJWKS: otherJWKS))
                #expect(!(await Self.verifies(lookAlike, againstJWKS: fabrikamJWKS)), "another tenant's token must not verify with Fabrikam's keys")
                #expect(!(await Self.verifies(genuine, againstJWKS: otherJWKS)))
                let kids = { (jwks: String) -> Set<String> in
                    let object = (try? JSONSerialization.jsonObject(with: Data(jwks.utf8)) as? [String: [[String: Any]]]) ?? [:]
                    return Set((object["keys"] ?? []).compactMap { $0["kid"] as? String })
                }
                #expect(kids(fabrikamJWKS).isDisjoint(with: kids(otherJWKS)), "no key is shared")
                // And Fabrikam's own APIs refuse it: the admin API of Fabrikam takes a Fabrikam token only.
                let refused = try await client.get("/admin/v1/users", headers: [.authorization: "Bearer \(lookAlike)"])
                #expect(refused.status == .unauthorized)
            }
        }
    }
}
