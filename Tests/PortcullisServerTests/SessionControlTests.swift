import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PortcullisCore
import PortcullisServer
import PortcullisTesting
import Testing

/// Session controls (PROTOCOL §13): sign-in frequency on refresh grants and on the page, persistent browser sessions.
enum Sessions {
    static let policyId = "a1000000-0000-4000-8000-0000000000fe"

    /// A CIS 5.2.2.4 policy ("sign-in frequency 4 hours, never persistent browser") as Graph exports it, for Bob (CIS
    /// targets admin roles; directory roles are not evaluated here, so the user stands in for them).
    static func cisPolicy(
        frequency: String =
            #"{"value": 4, "type": "hours", "authenticationType": "primaryAndSecondaryAuthentication", "frequencyInterval": "timeBased", "isEnabled": true}"#
    )
        -> [String: Any]
    {
        let text = """
            {
              "id": "\(policyId)", "displayName": "CIS 5.2.2.4: sign-in frequency and no persistent browser for admins", "state": "enabled",
              "conditions": {
                "users": {"includeUsers": ["\(Fixtures.bob.id)"], "excludeUsers": [], "includeGroups": [], "excludeGroups": [], "includeRoles": [], "excludeRoles": []},
                "applications": {"includeApplications": ["All"], "excludeApplications": [], "includeUserActions": []},
                "clientAppTypes": ["all"], "platforms": null, "locations": null, "signInRiskLevels": [], "userRiskLevels": []
              },
              "grantControls": null,
              "sessionControls": {
                "applicationEnforcedRestrictions": null, "cloudAppSecurity": null, "disableResilienceDefaults": null,
                "continuousAccessEvaluation": null, "secureSignInSession": null,
                "signInFrequency": \(frequency),
                "persistentBrowser": {"mode": "never", "isEnabled": true}
              }
            }
            """
        return (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
    }

    static func sessionCookie(_ page: Page) -> String? {
        page.headers[values: .setCookie].first { $0.hasPrefix("portcullis_session=") }
    }
}

@Suite("Session controls: sign-in frequency and persistent browser (PROTOCOL §13)")
struct SessionControlTests {
    @Test(
        "CIS 5.2.2.4 validates unchanged (grantControls null); refresh after 4 h refused with 70043 bad_token; the page asks again; the cookie is not persistent"
    )
    func signInFrequency() async throws {
        // Sessions idle up to a day here, so that only the frequency ends single sign-on.
        try await withTestEnvironment(configure: { $0.signIn.sessionIdleTimeout = 86400 }) { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let created = try await client.admin(.post, "/conditional-access/policies", token: admin, json: Sessions.cisPolicy())
                #expect(created.status == .created, "\(created.text)")

                // A page sign-in: the session cookie has no Max-Age (persistentBrowser never); Alice's (no policy) has one.
                let browser = Browser()
                let done = try await browser.signIn(client, account: Fixtures.bob)
                #expect(done.status == .found, "\(done.html)")
                let cookie = try #require(Sessions.sessionCookie(done))
                #expect(!cookie.contains("Max-Age") && !cookie.contains("Expires"), "\(cookie)")
                let alice = try #require(Sessions.sessionCookie(try await Browser().signIn(client, account: Fixtures.alice)))
                #expect(alice.contains("Max-Age="), "\(alice)")
                let tokens = try await client.token(Authorize.redeem(try #require(done.delivered["code"])))
                let refresh = try #require(tokens.string("refresh_token"))

                // Within 4 hours: refresh and single sign-on.
                env.clock.advance(by: 3 * 3600)
                let fresh = try await client.token(Grants.refresh(refresh))
                #expect(fresh.status == .ok, "\(fresh.text)")
                let sso = try await browser.get(client, Authorize.query())
                #expect(sso.status == .found && sso.delivered["code"] != nil, "SSO within the window: \(sso.status)")

                // After 4 hours: the refresh is refused, the page asks again (the name filled in), prompt=none gets login_required.
                env.clock.advance(by: 3600 + 1)
                let stale = try await client.token(Grants.refresh(try #require(fresh.string("refresh_token"))))
                #expect(stale.status == .badRequest && stale.errorCode == 70043 && stale.string("suberror") == "bad_token", "\(stale.text)")
                let again = try await browser.get(client, Authorize.query())
                #expect(again.status == .ok && again.input("password") != nil && again.html.contains(Fixtures.bob.upn), "\(again.status)")
                let silent = try await browser.get(client, Authorize.query(extra: [("prompt", "none")]))
                #expect(silent.delivered["error"] == "login_required", "\(silent.headers)")
                // Signing in again opens a new window.
                let renewed = try await browser.submit(client, again, [("username", Fixtures.bob.upn), ("password", Fixtures.bob.password)])
                #expect(renewed.status == .found, "\(renewed.html)")

                // The sign-in log and what-if name the session controls.
                let log = try await client.admin(.get, "/sign-ins", token: try await client.adminToken())
                #expect(log.text.contains("SignInFrequency") && log.text.contains("70043"), "\(log.text.prefix(3000))")
                // Other users are not concerned.
                let aliceTokens = try await client.token(Grants.password(Fixtures.alice, claims: nil))
                env.clock.advance(by: 30 * 86400)
                #expect(try await client.token(Grants.refresh(try #require(aliceTokens.string("refresh_token")))).status == .ok)
            }
        }
    }

    @Test("everyTime: a refresh more than 5 minutes after the sign-in is refused; within them it is not")
    func everyTime() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let policy = Sessions.cisPolicy(frequency: #"{"isEnabled": true, "frequencyInterval": "everyTime", "type": null, "value": null}"#)
                #expect(try await client.admin(.post, "/conditional-access/policies", token: admin, json: policy).status == .created)
                let tokens = try await client.token(Grants.password(Fixtures.bob, claims: nil))
                env.clock.advance(by: 240)
                let within = try await client.token(Grants.refresh(try #require(tokens.string("refresh_token"))))
                #expect(within.status == .ok, "\(within.text)")
                env.clock.advance(by: 120)
                let after = try await client.token(Grants.refresh(try #require(within.string("refresh_token"))))
                #expect(after.errorCode == 70043, "\(after.text)")
            }
        }
    }

    @Test("validation: ranges, unenforced session controls, persistentBrowser only for All applications, grantControls null only with session controls")
    func validation() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                func refused(_ edit: (inout [String: Any]) -> Void, _ pointer: String) async throws {
                    var policy = Sessions.cisPolicy()
                    edit(&policy)
                    let answer = try await client.admin(.post, "/conditional-access/policies", token: admin, json: policy)
                    #expect(answer.status == .badRequest && answer.text.contains("\"\(pointer)\""), "\(pointer): \(answer.text)")
                }
                func session(_ key: String, _ value: Any) -> (inout [String: Any]) -> Void {
                    { policy in
                        var controls = policy["sessionControls"] as? [String: Any] ?? [:]
                        controls[key] = value
                        policy["sessionControls"] = controls
                    }
                }
                try await refused(
                    session("signInFrequency", ["isEnabled": true, "type": "hours", "value": 25, "frequencyInterval": "timeBased"]),
                    "/sessionControls/signInFrequency/value")
                try await refused(
                    session("signInFrequency", ["isEnabled": true, "type": "weeks", "value": 1, "frequencyInterval": "timeBased"]),
                    "/sessionControls/signInFrequency/type")
                try await refused(session("cloudAppSecurity", ["cloudAppSecurityType": "monitorOnly", "isEnabled": true]), "/sessionControls/cloudAppSecurity")
                // Accepted without effect (no backup authentication service to disable, PROTOCOL §17); its type is still checked.
                try await refused(session("disableResilienceDefaults", "yes"), "/sessionControls/disableResilienceDefaults")
                try await refused(session("blockSensitiveActions", ["isEnabled": true]), "/sessionControls/blockSensitiveActions")
                var resilient = Sessions.cisPolicy()
                session("disableResilienceDefaults", true)(&resilient)
                let accepted = try await client.admin(.post, "/conditional-access/policies", token: admin, json: resilient)
                #expect(accepted.status == .created, "\(accepted.text)")
                try await refused(
                    { policy in
                        var conditions = policy["conditions"] as? [String: Any] ?? [:]
                        conditions["applications"] = ["includeApplications": [Fixtures.mailApiId]]
                        policy["conditions"] = conditions
                    }, "/sessionControls/persistentBrowser")
                try await refused({ $0["sessionControls"] = NSNull() }, "/grantControls")
            }
        }
    }
}
