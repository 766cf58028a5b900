import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PortcullisCore
import PortcullisSQLite
import PortcullisServer
import PortcullisStorage
import PortcullisTesting
import PortcullisTokens
import Testing

/// B2B collaboration between tenants of one installation (PROTOCOL §17): Olga of the other tenant invited to Fabrikam,
/// signing in at Fabrikam's endpoints with her home tenant's credentials, Fabrikam's tokens for her (`idp`, `acct`, her
/// home account in `client_info`), the guest conditions, and trust in the home tenant's MFA.
@Suite("B2B collaboration: invitations, the home tenant's sign-in, guest conditions, inbound trust")
struct B2BCollaborationTests {
    static var invitation: [String: Any] { ["invitedUserEmailAddress": Fixtures.olga.upn, "inviteRedirectUrl": "https://app.fabrikam.test/"] }
    static let otherIssuer = "http://portcullis.test/\(Fixtures.otherTenantId)/v2.0"

    /// Invites Olga; returns her B2B collaboration user's object ID here.
    static func invite(_ client: some TestClientProtocol, admin: String) async throws -> String {
        let created = try await client.admin(.post, "/invitations", token: admin, json: invitation)
        #expect(created.status == .created, "\(created.text)")
        return try #require((created["invitedUser"] as? [String: Any])?["id"] as? String, "\(created.text)")
    }

    /// Authorize at Fabrikam → Olga's name → home → her password → back: the page Fabrikam shows then (a redirect with
    /// the code when nothing more is asked).
    static func signInAsGuest(_ client: some TestClientProtocol, _ browser: Browser, password: String = Fixtures.olga.password) async throws -> Page {
        let sent = try await browser.signIn(client, account: Fixtures.olga)
        #expect(sent.status == .found, "\(sent.status) \(sent.html.prefix(300))")
        let home = try #require(sent.headers[.location], "sent home")
        #expect(home.hasPrefix("/\(Fixtures.otherTenantId)/oauth2/v2.0/authorize/home?ticket="), "\(home)")
        let homePage = try await browser.get(client, home)
        if homePage.status == .found { return try await browser.get(client, try #require(homePage.headers[.location])) }
        #expect(
            homePage.status == .ok && homePage.html.contains("as a guest") && homePage.input("username") == Fixtures.olga.upn, "\(homePage.html.prefix(800))")
        let back = try await browser.submit(client, homePage, [("username", Fixtures.olga.upn), ("password", password)])
        guard back.status == .found, let location = back.headers[.location] else { return back }
        #expect(location.hasPrefix("/\(Fixtures.tenantId)/oauth2/v2.0/authorize/guest?ticket="), "\(location)")
        return try await browser.get(client, location)
    }

    @Test("an invitation makes a B2B collaboration user through the users' write path; bad invitations are refused at their pointers")
    func invitations() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                for (body, pointer) in [
                    (["invitedUserEmailAddress": Fixtures.bob.upn, "inviteRedirectUrl": "https://app.fabrikam.test/"], "/invitedUserEmailAddress"),
                    (["invitedUserEmailAddress": "zed@nowhere.test", "inviteRedirectUrl": "https://app.fabrikam.test/"], "/invitedUserEmailAddress"),
                    (["invitedUserEmailAddress": "nobody@other.test", "inviteRedirectUrl": "https://app.fabrikam.test/"], "/invitedUserEmailAddress"),
                    (["invitedUserEmailAddress": Fixtures.olga.upn, "inviteRedirectUrl": "app.fabrikam.test"], "/inviteRedirectUrl"),
                    (["invitedUserEmailAddress": Fixtures.olga.upn], "/inviteRedirectUrl"),
                    (Self.invitation.merging(["sendInvitationMessage": true]) { $1 }, "/sendInvitationMessage"),
                    (Self.invitation.merging(["invitedUserType": "Owner"]) { $1 }, "/invitedUserType"),
                    (Self.invitation.merging(["invitedUserMessageInfo": [:]]) { $1 }, "/invitedUserMessageInfo"),
                ] as [([String: Any], String)] {
                    let refused = try await client.admin(.post, "/invitations", token: admin, json: body)
                    #expect(refused.status == .badRequest && refused.text.contains("\"\(pointer)\""), "\(pointer): \(refused.text)")
                }
                let badId = try await client.admin(
                    .put, "/invitations/not-a-guid", token: admin, json: Self.invitation, headers: [HTTPField.Name.ifNoneMatch: "*"])
                #expect(badId.status == .badRequest && badId.text.contains("\"/id\""), "\(badId.text)")
                let created = try await client.admin(.post, "/invitations", token: admin, json: Self.invitation)
                #expect(created.status == .created && created.string("status") == "Completed", "\(created.text)")
                let guestId = try #require((created["invitedUser"] as? [String: Any])?["id"] as? String)
                let guest = try await client.admin(.get, "/users/\(guestId)", token: admin)
                #expect(guest.status == .ok && guest.string("userType") == "Guest", "\(guest.text)")
                #expect(guest.string("userPrincipalName") == "olga_other.test#EXT#@fabrikam.test", "\(guest.text)")
                let home = guest["homeAccount"] as? [String: Any]
                #expect(home?["tenantId"] as? String == Fixtures.otherTenantId && home?["userId"] as? String == Fixtures.olga.id, "\(guest.text)")
                #expect(guest["passwordHash"] == nil && guest["password"] == nil)
                // Invited again: the same user, a second invitation on record.
                let again = try await client.admin(.post, "/invitations", token: admin, json: Self.invitation)
                #expect((again["invitedUser"] as? [String: Any])?["id"] as? String == guestId, "\(again.text)")
                let listed = try await client.admin(.get, "/invitations", token: admin)
                #expect((listed["value"] as? [Any])?.count == 2, "\(listed.text)")
                // A B2B user has no password here: the home tenant's credentials sign it in.
                var withPassword = guest.json
                withPassword["password"] = "Guest-pass-1"
                let refused = try await client.admin(.put, "/users/\(guestId)", token: admin, json: withPassword, headers: [ExportedPolicyTests.ifMatch: "*"])
                #expect(refused.status == .badRequest && refused.text.contains("\"/password\""), "\(refused.text)")
                // The audit log has the user made by the invitation.
                let audit = try await client.admin(.get, "/audit", token: admin)
                #expect(audit.text.contains("\"invitation\"") && audit.text.contains(guestId), "\(audit.text.prefix(600))")
            }
        }
    }

    @Test("the guest signs in at Fabrikam through her home tenant; Fabrikam's tokens carry idp, acct and her home account")
    func signIn() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                // Not invited yet: her home tenant signs her in, Fabrikam does not know her (AADSTS50020).
                let early = try await Self.signInAsGuest(client, Browser())
                #expect(early.status == .forbidden && early.shownCode == 50020, "\(early.status) \(early.html.prefix(400))")

                let guestId = try await Self.invite(client, admin: admin)
                // Her home tenant checks her password (a wrong one is refused there, on its page).
                let wrong = try await Self.signInAsGuest(client, Browser(), password: "not-her-password")
                #expect(wrong.status == .badRequest && wrong.html.contains("as a guest"), "\(wrong.status) \(wrong.html.prefix(400))")
                // The home leg is bound to the browser that began it.
                let begun = Browser()
                let sent = try await begun.signIn(client, account: Fixtures.olga)
                let homeLeg = try #require(sent.headers[.location])
                let stranger = try await Browser().get(client, homeLeg)
                #expect(stranger.status == .badRequest && stranger.shownCode == 900144, "\(stranger.html.prefix(300))")
                // A ticket serves its own leg at its own tenant: the home leg's is no return ticket, and the return ticket
                // opens nowhere but at the tenant that sent the user home.
                let asReturn = homeLeg.replacingOccurrences(
                    of: "/\(Fixtures.otherTenantId)/oauth2/v2.0/authorize/home", with: "/\(Fixtures.tenantId)/oauth2/v2.0/authorize/guest")
                let misused = try await begun.get(client, asReturn)
                #expect(misused.status == .badRequest && misused.shownCode == 900144, "\(misused.html.prefix(300))")
                let homePage = try await begun.get(client, homeLeg)
                let back = try await begun.submit(client, homePage, [("username", Fixtures.olga.upn), ("password", Fixtures.olga.password)])
                let returnLeg = try #require(back.headers[.location])
                let elsewhere = try await begun.get(
                    client, returnLeg.replacingOccurrences(of: "/\(Fixtures.tenantId)/", with: "/\(Fixtures.otherTenantId)/"))
                #expect(elsewhere.status == .badRequest && elsewhere.shownCode == 900144, "\(elsewhere.html.prefix(300))")

                let browser = Browser()
                let done = try await Self.signInAsGuest(client, browser)
                let code = try #require(done.delivered["code"], "\(done.status) \(done.html.prefix(500))")
                let info = try #require(done.delivered["client_info"])
                let decoded = try JSONSerialization.jsonObject(with: try #require(Base64URL.decode(info))) as? [String: Any]
                #expect(decoded?["uid"] as? String == Fixtures.olga.id && decoded?["utid"] as? String == Fixtures.otherTenantId, "\(decoded ?? [:])")

                let token = try await client.form(TestEnvironment.tokenPath, Authorize.redeem(code))
                #expect(token.status == .ok, "\(token.text)")
                let access = jwtClaims(try #require(token.string("access_token")))
                #expect(access["tid"] as? String == Fixtures.tenantId && access["oid"] as? String == guestId, "\(access)")
                #expect(access["idp"] as? String == Self.otherIssuer && access["acct"] as? Int == 1, "\(access)")
                let id = jwtClaims(try #require(token.string("id_token")))
                #expect(id["idp"] as? String == Self.otherIssuer && id["acct"] as? Int == 1 && id["oid"] as? String == guestId, "\(id)")
                let tokenInfoText = try #require(token.string("client_info"))
                let tokenInfo = try JSONSerialization.jsonObject(with: try #require(Base64URL.decode(tokenInfoText))) as? [String: Any]
                #expect(tokenInfo?["uid"] as? String == Fixtures.olga.id && tokenInfo?["utid"] as? String == Fixtures.otherTenantId)
                // A member's tokens carry neither.
                let member = try await client.token(Grants.password(claims: nil))
                let memberClaims = jwtClaims(try #require(member.string("access_token")))
                #expect(memberClaims["idp"] == nil && memberClaims["acct"] == nil, "\(memberClaims)")

                // Single sign-on at Fabrikam, and refresh, while her home account stands.
                let sso = try await browser.get(client, Authorize.query())
                #expect(sso.delivered["code"] != nil, "\(sso.status) \(sso.html.prefix(300))")
                let refresh = try #require(token.string("refresh_token"))
                let refreshed = try await client.token(Grants.refresh(refresh, claims: nil))
                #expect(refreshed.status == .ok, "\(refreshed.text)")

                // Her home tenant disables her: Fabrikam's session and refresh tokens no longer serve her.
                var disabled = User(id: ObjectID(Fixtures.olga.id), userPrincipalName: Fixtures.olga.upn, displayName: "Olga")
                disabled.accountEnabled = false
                let stored = try await env.store.put(
                    tenantId: TenantID(Fixtures.otherTenantId), kind: .user, id: Fixtures.olga.id, body: try TenantDocuments.encoder.encode(disabled),
                    precondition: .mustExist, at: env.clock.now(), audit: nil)
                try await env.server.tenants.documentChanged(
                    tenantId: TenantID(Fixtures.otherTenantId), kind: .user, id: Fixtures.olga.id, revision: stored.version)
                let afterRefresh = try await client.token(Grants.refresh(try #require(refreshed.string("refresh_token")), claims: nil))
                #expect(afterRefresh.status == .badRequest && afterRefresh.errorCode == TokenError.userDisabled.aadsts, "\(afterRefresh.text)")
                let afterSSO = try await browser.get(client, Authorize.query())
                #expect(afterSSO.status == .ok && afterSSO.input("ticket") != nil && afterSSO.delivered["code"] == nil, "the sign-in page again")
            }
        }
    }

    @Test("a policy for guests applies to the guest and not to members; her home MFA counts only when Fabrikam trusts the other tenant's")
    func guestConditionsAndTrust() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                _ = try await Self.invite(client, admin: admin)
                let policy: [String: Any] = [
                    "displayName": "MFA for guests", "state": "enabled",
                    "conditions": [
                        "users": [
                            "includeUsers": [],
                            "includeGuestsOrExternalUsers": [
                                "guestOrExternalUserTypes": "b2bCollaborationGuest,b2bCollaborationMember",
                                "externalTenants": ["membershipKind": "enumerated", "members": [Fixtures.otherTenantId]],
                            ],
                        ],
                        "applications": ["includeApplications": ["All"]],
                    ],
                    "grantControls": ["operator": "OR", "builtInControls": ["mfa"]],
                ]
                let created = try await client.admin(.post, "/conditional-access/policies", token: admin, json: policy)
                #expect(created.status == .created, "\(created.text)")
                // Alice, a member, is not asked.
                let alice = try await Browser().signIn(client)
                #expect(alice.delivered["code"] != nil, "\(alice.status) \(alice.html.prefix(300))")
                // Olga, a guest from that tenant, is asked for Fabrikam's own second factor (a password at home is a first factor).
                let asked = try await Self.signInAsGuest(client, Browser())
                #expect(asked.status == .ok && asked.html.contains("authenticator app"), "\(asked.status) \(asked.html.prefix(500))")

                // Her home session did MFA: still asked while Fabrikam does not trust the other tenant's MFA…
                func homeSessionWithMFA() async throws -> Browser {
                    let browser = Browser()
                    let token = CredentialHasher.randomToken()
                    let now = env.clock.now()
                    try await env.store.insertSession(
                        SessionRecord(
                            idHash: CredentialHasher.hashToken(token), tenantId: TenantID(Fixtures.otherTenantId), userId: ObjectID(Fixtures.olga.id),
                            methods: ["pwd", "mfa"],
                            authTime: now, createdAt: now, lastSeenAt: now, expiresAt: now.addingTimeInterval(3600)), keepingAtMost: 10)
                    browser.cookies.append(Browser.Cookie(name: "portcullis_session", value: token, path: "/\(Fixtures.otherTenantId)"))
                    return browser
                }
                let untrusted = try await Self.signInAsGuest(client, try await homeSessionWithMFA())
                #expect(untrusted.status == .ok && untrusted.html.contains("authenticator app"), "\(untrusted.status) \(untrusted.html.prefix(500))")
                // …and counted once it does: the code, with mfa in the token.
                let bad = try await client.admin(
                    .post, "/cross-tenant-access/partners", token: admin,
                    json: ["tenantId": Fixtures.otherTenantId, "inboundTrust": ["isMfaAccepted": true, "isCompliantDeviceAccepted": true]])
                #expect(bad.status == .badRequest && bad.text.contains("\"/inboundTrust/isCompliantDeviceAccepted\""), "\(bad.text)")
                let own = try await client.admin(.post, "/cross-tenant-access/partners", token: admin, json: ["tenantId": Fixtures.tenantId])
                #expect(own.status == .badRequest && own.text.contains("\"/tenantId\""), "\(own.text)")
                let trust = try await client.admin(
                    .post, "/cross-tenant-access/partners", token: admin, json: ["tenantId": Fixtures.otherTenantId, "inboundTrust": ["isMfaAccepted": true]])
                #expect(trust.status == .created, "\(trust.text)")
                let trusted = try await Self.signInAsGuest(client, try await homeSessionWithMFA())
                let code = try #require(trusted.delivered["code"], "\(trusted.status) \(trusted.html.prefix(500))")
                let token = try await client.form(TestEnvironment.tokenPath, Authorize.redeem(code))
                #expect((jwtClaims(try #require(token.string("access_token")))["amr"] as? [String])?.contains("mfa") == true, "\(token.text)")
                // A home password alone still is no second factor, trusted or not.
                let passwordOnly = try await Self.signInAsGuest(client, Browser())
                #expect(passwordOnly.status == .ok && passwordOnly.html.contains("authenticator app"), "\(passwordOnly.status)")
            }
        }
    }
}
