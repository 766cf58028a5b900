import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PortcullisCore
import PortcullisTesting
import Testing

/// API permissions (issue 25.2, PROTOCOL §11), over real sockets: a client gets delegated tokens only for the
/// resources and scopes its registration lists (or that pre-authorize it), and app-only tokens only with an app role.
@Suite("API permissions (requiredResourceAccess, preAuthorizedApplications)")
struct APIPermissionTests {
    /// The review's case: a refresh token of the mail app, for a user who holds the admin role, redeemed for the admin API.
    @Test(
        "a mail-app refresh token of an administrator does not redeem for the admin API (65001) until the app lists it; /authorize and /devicecode refuse too")
    func refreshTokenForAnotherResource() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.live) { client in
                let signedIn = try await client.token(Grants.password(Fixtures.admin, claims: nil))
                let refresh = try #require(signedIn.string("refresh_token"), "\(signedIn.text)")
                let refused = try await client.token(Grants.refresh(refresh, claims: nil) + [("scope", "api://portcullis-admin/.default")])
                #expect(refused.status == .badRequest && refused.string("error") == "invalid_grant" && refused.errorCode == 65001, "\(refused.text)")
                #expect(refused.string("suberror") == "consent_required")
                #expect(refused["access_token"] == nil)
                // A scope of its own resource that the app does not list is refused the same way.
                let unlisted = try await client.token(
                    Grants.password(Fixtures.alice, client: Fixtures.secondMobileClientId, scope: "\(Fixtures.mailResource)/Mail.Send", claims: nil))
                #expect(unlisted.errorCode == 65001, "\(unlisted.text)")
                // The interactive entry points refuse before anyone signs in.
                let authorize = try await client.execute(
                    uri: Authorize.query(scope: "api://portcullis-admin/.default openid"), method: .get
                ) { ($0.status, $0.headers[.location] ?? "") }
                #expect(authorize.0 == .found && authorize.1.hasPrefix(Fixtures.mobileRedirectUri) && authorize.1.contains("65001"), "\(authorize)")
                let device = try await client.form(
                    "/\(Fixtures.domain)/oauth2/v2.0/devicecode", [("client_id", Fixtures.mobileClientId), ("scope", "api://portcullis-admin/.default")])
                #expect(device.errorCode == 65001, "\(device.text)")

                // Listing it is the administrator's consent: the same refresh token (never rotated by the refusal) now redeems.
                let admin = try await client.adminToken()
                let listed = try await client.listAdminAPI(for: Fixtures.mobileClientId, admin: admin)
                #expect(listed.status == .ok, "\(listed.text)")
                let granted = try await client.token(Grants.refresh(refresh, claims: nil) + [("scope", "api://portcullis-admin/.default")])
                let token = try #require(granted.string("access_token"), "\(granted.text)")
                #expect(jwtClaims(token)["scp"] as? String == "Admin.ReadWrite")
                #expect(try await client.admin(.get, "/users", token: token).status == .ok)
            }
        }
    }

    @Test("a resource's pre-authorized clients get any of its scopes; .default grants only what a client lists; app-only tokens need an app role (650057)")
    func preAuthorizationAndAppOnly() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.live) { client in
                let notes = Grants.password(Fixtures.alice, client: Fixtures.secondMobileClientId, scope: "\(Fixtures.mailResource)/.default", claims: nil)
                #expect(
                    jwtClaims(try #require(try await client.token(notes).string("access_token")))["scp"] as? String == "Mail.Read",
                    ".default = the listed scopes")
                let admin = try await client.adminToken()
                let api = try await client.admin(.get, "/applications/\(Fixtures.mailApiId)", token: admin)
                var document = api.json
                document["preAuthorizedApplications"] = [Fixtures.secondMobileClientId]
                #expect(
                    try await client.admin(.put, "/applications/\(Fixtures.mailApiId)", token: admin, json: document, headers: [.ifMatch: "*"]).status == .ok)
                let send = try await client.token(
                    Grants.password(Fixtures.alice, client: Fixtures.secondMobileClientId, scope: "\(Fixtures.mailResource)/Mail.Send", claims: nil))
                #expect(jwtClaims(try #require(send.string("access_token"), "\(send.text)"))["scp"] as? String == "Mail.Send")

                // App-only: the daemon holds Mail.ReadAll; the admin tool holds no role of the mail API.
                #expect(try await client.token(Grants.clientCredentials()).status == .ok)
                let noRole = try await client.token([
                    ("grant_type", "client_credentials"), ("client_id", Fixtures.adminClientId), ("client_secret", Fixtures.adminSecret),
                    ("scope", "\(Fixtures.mailResource)/.default"),
                ])
                #expect(noRole.status == .badRequest && noRole.string("error") == "unauthorized_client" && noRole.errorCode == 650057, "\(noRole.text)")
            }
        }
    }

    @Test("the admin API validates API permissions with pointers")
    func validation() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let reply = try await client.admin(
                    .post, "/applications", token: admin,
                    json: [
                        "displayName": "Bad permissions",
                        "requiredResourceAccess": [
                            ["resourceAppId": "api://nowhere"], ["resourceAppId": Fixtures.mailResource, "scopes": ["Mail.Delete"], "appRoles": ["Nope"]],
                            ["resourceAppId": Fixtures.mailApiId], ["scopes": ["Mail.Read"]], ["resourceAppId": "api://portcullis-admin", "color": "red"],
                        ],
                        "preAuthorizedApplications": ["not-a-guid", "a0000000-0000-4000-8000-000000000999"],
                    ])
                let pointers = Set(((reply["error"] as? [String: Any])?["details"] as? [[String: Any]] ?? []).compactMap { $0["pointer"] as? String })
                #expect(reply.status == .badRequest)
                #expect(
                    pointers == [
                        "/requiredResourceAccess/0/resourceAppId", "/requiredResourceAccess/1/scopes/0", "/requiredResourceAccess/1/appRoles/0",
                        "/requiredResourceAccess/2/resourceAppId", "/requiredResourceAccess/3/resourceAppId", "/requiredResourceAccess/4/color",
                        "/preAuthorizedApplications/0", "/preAuthorizedApplications/1",
                    ], "\(reply.text)")
            }
        }
    }
}
