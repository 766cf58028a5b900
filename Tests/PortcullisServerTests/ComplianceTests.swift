import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOFoundationEssentialsCompat
import PortcullisAPI
import PortcullisCore
import PortcullisSQLite
import PortcullisServer
import PortcullisStorage
import PortcullisTesting
import PortcullisTokens
import Testing

extension TestClientProtocol {
    /// A compliance-service token for an account on a client (exempt from app-protection controls).
    func complianceToken(_ account: Fixtures.Account = Fixtures.alice, client: String = Fixtures.mobileClientId) async throws -> String {
        let reply = try await token(Grants.password(account, client: client, scope: "api://portcullis-compliance/.default"))
        guard let token = reply.string("access_token") else { throw InteropSetupError(message: "no compliance token: \(reply.text)") }
        return token
    }

    func mam(_ method: HTTPRequest.Method, _ path: String, token: String, json: Any? = nil) async throws -> JSONReply {
        let body = try json.map { ByteBuffer(data: try JSONSerialization.data(withJSONObject: $0)) }
        return try await execute(
            uri: "/mam/v1\(path)", method: method, headers: [.authorization: "Bearer \(token)", .contentType: "application/json"], body: body
        ) { JSONReply($0) }
    }

    /// Remediation, policy applied, acknowledging check-in: the whole client-side dance. Returns the enrollment ID.
    @discardableResult
    func becomeCompliant(_ account: Fixtures.Account = Fixtures.alice, device: String = "device-1") async throws -> String {
        let token = try await complianceToken(account)
        let remediation = try await mam(.post, "/remediations", token: token, json: Device.body(device))
        guard let id = remediation.string("enrollmentId"), let policy = remediation["policy"] as? [String: Any], let version = policy["version"] as? String
        else {
            throw InteropSetupError(message: "remediation did not enroll: \(remediation.text)")
        }
        let checkIn = try await mam(.post, "/enrollments/\(id)/checkin", token: token, json: Device.checkIn(version))
        guard (checkIn["complianceStatus"] as? [String: Any])?["status"] as? String == "compliant" else {
            throw InteropSetupError(message: "check-in did not end compliant: \(checkIn.text)")
        }
        return id
    }

    func createAppProtectionCA() async throws {
        let token = try await adminToken()
        let reply = try await admin(.post, "/conditional-access/policies", token: token, json: Policies.document())
        guard reply.status == .created else { throw InteropSetupError(message: "CA policy: \(reply.text)") }
    }
}

enum Device {
    static func body(_ id: String = "device-1", os: String = "17.4", silent: Bool = false) -> [String: Any] {
        ["deviceId": id, "platform": "iOS", "osVersion": os, "appVersion": "3.1", "sdkVersion": "1.0", "silent": silent, "futureField": ["ignored": true]]
    }
    static func checkIn(_ version: String?, os: String = "17.4", jailbroken: Bool = false, pin: Bool = true, silent: Bool = false) -> [String: Any] {
        var body: [String: Any] = ["osVersion": os, "appVersion": "3.1", "jailbroken": jailbroken, "pinSet": pin, "silent": silent]
        if let version { body["appliedPolicyVersion"] = version }
        return body
    }
}

func status(_ reply: JSONReply) -> String? { (reply["complianceStatus"] as? [String: Any])?["status"] as? String }

@Suite("compliance service and app-protection conditional access")
struct ComplianceTests {
    @Test("seed 004 — app protection CA applied before the user enrolls: refusal, remediation, token (bound to the enrollment)")
    func alwaysApplied() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                try await client.createAppProtectionCA()
                let refused = try await client.token(Grants.password())
                #expect(refused.errorCode == 53005 && refused.string("suberror") == "protection_policy_required")

                let token = try await client.complianceToken()
                let remediation = try await client.mam(.post, "/remediations", token: token, json: Device.body())
                #expect(remediation.status == .ok, "\(remediation.text)")
                #expect(remediation["statusCode"] as? Int == 100)
                #expect(status(remediation) == "notCompliant")
                let missing = try #require(remediation["missing"] as? [String])
                #expect(missing.contains("policyAcknowledgement") && missing.contains("pin"))
                let policy = try #require(remediation["policy"] as? [String: Any])
                let version = try #require(policy["version"] as? String)
                #expect((policy["settings"] as? [String: Any])?["pinRequired"] as? Bool == true)
                #expect(remediation.string("accountId") == Fixtures.alice.id)
                let id = try #require(remediation.string("enrollmentId"))
                // Still refused until the acknowledging check-in.
                #expect(try await client.token(Grants.password()).errorCode == 53005)

                let checkIn = try await client.mam(.post, "/enrollments/\(id)/checkin", token: token, json: Device.checkIn(version))
                #expect(checkIn.status == .ok)
                #expect(status(checkIn) == "compliant")
                #expect(checkIn["statusCode"] as? Int == 101)

                let granted = try await client.token(Grants.password())
                #expect(granted.status == .ok, "\(granted.text)")
                #expect(jwtClaims(granted.string("access_token") ?? "")["xms_mam_enrollment"] as? String == id)
                // With microsoft_enrollment_id: the right one works, someone else's (or a made-up one) does not (issue 25.10).
                #expect(try await client.token(Grants.password() + [("microsoft_enrollment_id", id)]).status == .ok)
                #expect(try await client.token(Grants.password() + [("microsoft_enrollment_id", "00000000-dead-4000-8000-000000000000")]).errorCode == 53005)
                // Bob, under the same policy and with no enrollment of his own, presents Alice's compliant one: refused as if none.
                let bobWithAlices = try await client.token(Grants.password(Fixtures.bob) + [("microsoft_enrollment_id", id)])
                #expect(bobWithAlices.errorCode == 53005 && bobWithAlices["access_token"] == nil, "another account's enrollment: \(bobWithAlices.text)")
                // Alice through another client app (the Notes app, which the policy also covers) presents the mail app's enrollment: refused too.
                let otherClient = try await client.token(Grants.password(client: Fixtures.secondMobileClientId) + [("microsoft_enrollment_id", id)])
                #expect(otherClient.errorCode == 53005 && otherClient["access_token"] == nil, "another client's enrollment: \(otherClient.text)")
                // Another client app of the same account is not covered by this enrollment.
                #expect(try await client.token(Grants.password(client: Fixtures.secondMobileClientId)).status == .badRequest)
                // GET shows the same state.
                let read = try await client.mam(.get, "/enrollments/\(id)", token: token)
                #expect(status(read) == "compliant")
            }
        }
    }

    @Test("seed 004 — app protection CA applied after the user has tokens: the next refresh is refused, remediation, token again")
    func appliedAfterEnrollment() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let first = try await client.token(Grants.password())
                let refresh = try #require(first.string("refresh_token"))
                try await client.createAppProtectionCA()
                #expect(try await client.token(Grants.refresh(refresh)).errorCode == 53005)
                try await client.becomeCompliant()
                let again = try await client.token(Grants.refresh(refresh))
                #expect(again.status == .ok, "\(again.text)")
            }
        }
    }

    @Test("seed 004 — CA requires app protection but no app protection policy targets the user: no token, ever, and a clear status")
    func noncompliance() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                try await client.createAppProtectionCA()
                #expect(try await client.token(Grants.password(Fixtures.carol)).errorCode == 53005)
                let token = try await client.complianceToken(Fixtures.carol)
                let remediation = try await client.mam(.post, "/remediations", token: token, json: Device.body())
                #expect(remediation["statusCode"] as? Int == 225)
                #expect(remediation["enrollmentId"] == nil)
                let statusObject = try #require(remediation["complianceStatus"] as? [String: Any])
                #expect(statusObject["status"] as? String == "notCompliant")
                #expect((statusObject["errorTitle"] as? String)?.isEmpty == false && (statusObject["errorMessage"] as? String)?.isEmpty == false)
                #expect(remediation["missing"] as? [String] == ["policyAssignment"])
                let enroll = try await client.mam(.post, "/enrollments", token: token, json: Device.body())
                #expect(enroll["statusCode"] as? Int == 225)
                #expect(try await client.token(Grants.password(Fixtures.carol)).errorCode == 53005)
            }
        }
    }

    @Test("seed 002 — log-in/log-out matrix on one app instance: managed/unmanaged in both orders, second managed refused, log-outs")
    func multiIdentity() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                try await client.createAppProtectionCA()
                // Unmanaged first, then managed.
                let carol = try await client.complianceToken(Fixtures.carol)
                #expect(try await client.mam(.post, "/remediations", token: carol, json: Device.body("shared"))["statusCode"] as? Int == 225)
                let aliceId = try await client.becomeCompliant(Fixtures.alice, device: "shared")
                // Managed first, then unmanaged: the managed account is untouched.
                #expect(try await client.mam(.post, "/remediations", token: carol, json: Device.body("shared"))["statusCode"] as? Int == 225)
                #expect(try await client.token(Grants.password(Fixtures.alice)).status == .ok)
                #expect(
                    try await client.token(Grants.password(Fixtures.carol, scope: "openid profile")).status == .ok,
                    "unmanaged accounts are not protected where CA does not ask")
                // A second managed account on the same app instance is refused (227)…
                let bob = try await client.complianceToken(Fixtures.bob)
                let second = try await client.mam(.post, "/enrollments", token: bob, json: Device.body("shared"))
                #expect(second.status == .conflict)
                #expect(second["statusCode"] as? Int == 227)
                let secondRemediation = try await client.mam(.post, "/remediations", token: bob, json: Device.body("shared"))
                #expect(secondRemediation["statusCode"] as? Int == 227 && secondRemediation["missing"] as? [String] == ["singleManagedAccount"])
                // …but Bob may be managed on another device.
                try await client.becomeCompliant(Fixtures.bob, device: "bobs-phone")
                // Log out the unmanaged account: the managed one keeps its enrollment and its tokens.
                #expect(try await client.token(Grants.password(Fixtures.alice)).status == .ok)
                // Log out the managed account: it is removed; the slot is free for Bob; Alice's tokens need protection again.
                let alice = try await client.complianceToken(Fixtures.alice)
                let logout = try await client.mam(.delete, "/enrollments/\(aliceId)", token: alice)
                #expect(logout["statusCode"] as? Int == 104)
                #expect(try await client.token(Grants.password(Fixtures.alice)).errorCode == 53005)
                #expect(try await client.token(Grants.password(Fixtures.carol, scope: "openid")).status == .ok)
                let bobEnroll = try await client.mam(.post, "/enrollments", token: bob, json: Device.body("shared"))
                #expect(bobEnroll.status == .created && bobEnroll["statusCode"] as? Int == 100)
                // Identities are case-insensitive: the same device ID in another case is the same app instance.
                let upper = try await client.mam(.post, "/enrollments", token: alice, json: Device.body("SHARED"))
                #expect(upper["statusCode"] as? Int == 227)
            }
        }
    }

    @Test("selective wipe: compliance and refresh tokens revoked at once, the wipe command at the next check-in, re-enrollment works")
    func selectiveWipe() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                try await client.createAppProtectionCA()
                let id = try await client.becomeCompliant()
                let granted = try await client.token(Grants.password())
                let refresh = try #require(granted.string("refresh_token"))
                let admin = try await client.adminToken()
                let wipe = try await client.admin(.post, "/enrollments/\(id)/wipe", token: admin)
                #expect(wipe.status == .accepted, "\(wipe.text)")
                #expect(try await client.admin(.post, "/enrollments/\(id)/wipe", token: admin).status == .conflict)
                #expect(try await client.token(Grants.refresh(refresh)).errorCode == 70008, "refresh tokens are revoked")
                #expect(try await client.token(Grants.password()).errorCode == 53005, "compliance is revoked")
                let token = try await client.complianceToken()
                let checkIn = try await client.mam(.post, "/enrollments/\(id)/checkin", token: token, json: Device.checkIn(nil))
                #expect(checkIn["commands"] as? [String] == ["wipe"] && checkIn["statusCode"] as? Int == 102)
                let acknowledged = try await client.mam(.delete, "/enrollments/\(id)", token: token)
                #expect(acknowledged["statusCode"] as? Int == 104)
                #expect(try await client.mam(.post, "/enrollments/\(id)/checkin", token: token, json: Device.checkIn(nil)).status == .gone)
                let newId = try await client.becomeCompliant()
                #expect(newId != id)
                #expect(try await client.token(Grants.password()).status == .ok)
                let detail = try await client.admin(.get, "/enrollments/\(id)", token: admin)
                let events = ((detail["history"] as? [[String: Any]]) ?? []).compactMap { $0["event"] as? String }
                #expect(events == ["enrolled", "checkIn", "wipeRequested", "checkIn", "wipeAcknowledged"])
                let audit = try await client.admin(.get, "/audit", token: admin)
                #expect((audit["value"] as? [[String: Any]])?.contains { $0["action"] as? String == "wipe" } == true)
            }
        }
    }

    @Test("grace period: a compliant app that stops checking in lapses (tokens refused), the sweeper records it, a good check-in recovers")
    func graceLapse() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                try await client.createAppProtectionCA()
                let id = try await client.becomeCompliant()
                #expect(try await client.token(Grants.password()).status == .ok)
                env.clock.advance(by: 61 * 60)
                #expect(try await client.token(Grants.password()).errorCode == 53005, "lapsed at token time, before any sweep")
                await env.server.sweeper.sweep()
                #expect(try await env.store.enrollment(id: RecordID(id))?.state == .lapsed)
                let token = try await client.complianceToken()
                let enrollment = try #require(try await env.store.enrollment(id: RecordID(id)))
                let checkIn = try await client.mam(.post, "/enrollments/\(id)/checkin", token: token, json: Device.checkIn(enrollment.policyVersion))
                #expect(status(checkIn) == "compliant")
                #expect(try await client.token(Grants.password()).status == .ok)
            }
        }
    }

    @Test("launch conditions: old OS, jailbreak, missing PIN (interactionRequired when silent) keep the app non-compliant with a message")
    func launchConditions() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                try await client.createAppProtectionCA()
                let token = try await client.complianceToken()
                let remediation = try await client.mam(.post, "/remediations", token: token, json: Device.body(os: "15.0"))
                #expect((remediation["missing"] as? [String])?.contains("osVersion") == true)
                let id = try #require(remediation.string("enrollmentId"))
                let version = try #require((remediation["policy"] as? [String: Any])?["version"] as? String)
                for (body, expected, title) in [
                    (Device.checkIn(version, os: "15.0"), "notCompliant", "Update your device"),
                    (Device.checkIn(version, jailbroken: true), "notCompliant", "Device not supported"),
                    (Device.checkIn(version, pin: false), "notCompliant", "PIN required"),
                    (Device.checkIn(version, pin: false, silent: true), "interactionRequired", "PIN required"),
                ] {
                    let reply = try await client.mam(.post, "/enrollments/\(id)/checkin", token: token, json: body)
                    let statusObject = reply["complianceStatus"] as? [String: Any]
                    #expect(statusObject?["status"] as? String == expected)
                    #expect(statusObject?["errorTitle"] as? String == title)
                    #expect(try await client.token(Grants.password()).errorCode == 53005)
                }
                #expect(status(try await client.mam(.post, "/enrollments/\(id)/checkin", token: token, json: Device.checkIn(version))) == "compliant")
            }
        }
    }

    @Test("allowed accounts: only listed accounts (UPN or object ID, any case) may enroll")
    func allowedAccounts() async throws {
        try await withTestEnvironment(directoryJSON: Fixtures.directoryJSON(allowedAccounts: ["BOB@Fabrikam.test"])) { env in
            try await env.application().test(.router) { client in
                let alice = try await client.complianceToken(Fixtures.alice)
                let refused = try await client.mam(.post, "/enrollments", token: alice, json: Device.body())
                #expect(refused.status == .forbidden && refused["statusCode"] as? Int == 230)
                #expect((refused["complianceStatus"] as? [String: Any])?["errorTitle"] as? String == "Account not allowed")
                let remediation = try await client.mam(.post, "/remediations", token: alice, json: Device.body())
                #expect(remediation["missing"] as? [String] == ["allowedAccount"])
                let bob = try await client.complianceToken(Fixtures.bob)
                #expect(try await client.mam(.post, "/enrollments", token: bob, json: Device.body()).status == .created)
            }
        }
    }

    @Test("50 concurrent enrollments of two accounts on one app instance leave exactly one managed account")
    func concurrentEnrollments() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.live) { client in
                let alice = try await client.complianceToken(Fixtures.alice)
                let bob = try await client.complianceToken(Fixtures.bob)
                let codes = try await withThrowingTaskGroup(of: (String, Int).self) { group in
                    for index in 0..<50 {
                        let (name, token) = index % 2 == 0 ? ("alice", alice) : ("bob", bob)
                        group.addTask {
                            (name, try await client.mam(.post, "/enrollments", token: token, json: Device.body("contended"))["statusCode"] as? Int ?? 0)
                        }
                    }
                    var codes: [(String, Int)] = []
                    for try await code in group { codes.append(code) }
                    return codes
                }
                let active = try await env.store.enrollments(EnrollmentQuery(tenantId: TenantID(Fixtures.tenantId), deviceId: "contended")).filter(\.isActive)
                #expect(active.count == 1)
                let winner = active.first?.userId == ObjectID(Fixtures.alice.id) ? "alice" : "bob"
                #expect(codes.filter { $0.0 == winner }.allSatisfy { [100, 208].contains($0.1) })
                #expect(codes.filter { $0.0 != winner }.allSatisfy { $0.1 == 227 })
                #expect(codes.filter { $0.1 == 100 }.count == 1)
            }
        }
    }

    @Test("the compliance API: 401 without a token, 403 for app-only tokens, 404 for someone else's enrollment, 400 for bad bodies")
    func apiErrors() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                #expect(try await client.mam(.post, "/enrollments", token: "nope", json: Device.body()).status == .unauthorized)
                let mailToken = try await client.token(Grants.password()).string("access_token") ?? ""
                #expect(
                    try await client.mam(.post, "/enrollments", token: mailToken, json: Device.body()).status == .unauthorized, "a token for another resource")
                // No client holds an app role of the compliance resource, so the token endpoint mints no app-only token for it
                // (650057); one signed by the tenant's own key anyway (as a future role might allow) is still refused here.
                let refusedAppOnly = try await client.token([
                    ("grant_type", "client_credentials"), ("client_id", Fixtures.daemonClientId), ("client_secret", Fixtures.daemonSecret),
                    ("scope", "api://portcullis-compliance/.default"),
                ])
                #expect(refusedAppOnly.errorCode == 650057 && refusedAppOnly.string("error") == "unauthorized_client", "\(refusedAppOnly.text)")
                let now = Int(env.clock.now().timeIntervalSince1970)
                let appOnly = try await env.signer.sign(
                    accessToken: AccessTokenClaims(
                        iss: "http://portcullis.test/\(Fixtures.tenantId)/v2.0", aud: BuiltInResources.complianceAppId.rawValue, sub: Fixtures.daemonClientId,
                        oid: nil,
                        tid: Fixtures.tenantId, azp: Fixtures.daemonClientId, azpacr: "1", iat: now, nbf: now, exp: now + 600, jti: UUID().uuidString, scp: nil,
                        roles: nil, upn: nil, preferredUsername: nil, name: nil, xmsCC: nil, idtyp: "app"))
                #expect(try await client.mam(.post, "/enrollments", token: appOnly, json: Device.body()).status == .forbidden)
                let alice = try await client.complianceToken(Fixtures.alice)
                let id = try #require(try await client.mam(.post, "/enrollments", token: alice, json: Device.body()).string("enrollmentId"))
                let bob = try await client.complianceToken(Fixtures.bob)
                #expect(try await client.mam(.get, "/enrollments/\(id)", token: bob).status == .notFound)
                #expect(try await client.mam(.delete, "/enrollments/\(id)", token: bob).status == .notFound)
                let malformed = try await client.execute(
                    uri: "/mam/v1/enrollments", method: .post, headers: [.authorization: "Bearer \(alice)"], body: ByteBuffer(string: "{not json")
                ) { JSONReply($0) }
                #expect(malformed.status == .badRequest)
                let wrongType = try await client.mam(.post, "/enrollments", token: alice, json: ["deviceId": 42])
                #expect(wrongType.status == .badRequest && wrongType.text.contains("/deviceId"))
                let missing = try await client.mam(.post, "/remediations", token: alice, json: ["platform": "iOS"])
                #expect(missing.status == .badRequest && missing.text.contains("/deviceId"))
                let badPlatform = try await client.mam(.post, "/enrollments", token: alice, json: ["deviceId": "d", "platform": "symbian"])
                #expect(badPlatform.status == .badRequest && badPlatform.text.contains("/platform"))
                let checkInTypes = try await client.mam(.post, "/enrollments/\(id)/checkin", token: alice, json: ["pinSet": "yes"])
                #expect(checkInTypes.status == .badRequest && checkInTypes.text.contains("/pinSet"))
                let unregistered = try await client.mam(
                    .post, "/remediations", token: alice, json: ["deviceId": "d", "callbackUri": "https://attacker.example/cb"])
                #expect(unregistered.status == .badRequest && unregistered.text.contains("/callbackUri"))
            }
        }
    }

    @Test("admin: app protection policy CRUD changes what the app receives; enrollments list and filter")
    func adminPolicies() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let id = try await client.becomeCompliant()
                let before = try #require(try await env.store.enrollment(id: RecordID(id))?.policyVersion)
                var policy = try #require(try JSONSerialization.jsonObject(with: Fixtures.salesMailPolicy) as? [String: Any])
                var settings = try #require(policy["settings"] as? [String: Any])
                settings["printingBlocked"] = true
                policy["settings"] = settings
                let replaced = try await client.admin(
                    .put, "/app-protection/policies/\(Fixtures.salesMailPolicyId)", token: admin, json: policy, headers: [.ifMatch: "*"])
                #expect(replaced.status == .ok, "\(replaced.text)")
                let token = try await client.complianceToken()
                let checkIn = try await client.mam(.post, "/enrollments/\(id)/checkin", token: token, json: Device.checkIn(before))
                #expect(checkIn["statusCode"] as? Int == 100)
                let newVersion = try #require((checkIn["policy"] as? [String: Any])?["version"] as? String)
                #expect(newVersion != before)
                #expect(((checkIn["policy"] as? [String: Any])?["settings"] as? [String: Any])?["printingBlocked"] as? Bool == true)
                #expect(status(checkIn) == "compliant", "a compliant app stays compliant while it applies the new version")
                var invalid = policy
                invalid["targets"] = ["applications": ["nope"], "includeGroups": ["All"]]
                let refused = try await client.admin(
                    .put, "/app-protection/policies/\(Fixtures.salesMailPolicyId)", token: admin, json: invalid, headers: [.ifMatch: "*"])
                #expect(refused.status == .badRequest && refused.text.contains("/targets/applications/0"))
                let listed = try await client.admin(.get, "/enrollments?account=ALICE@fabrikam.test&status=compliant", token: admin)
                #expect((listed["value"] as? [[String: Any]])?.map { $0["id"] as? String } == [id])
                #expect(try await client.admin(.get, "/enrollments?status=nonsense", token: admin).status == .badRequest)
                #expect((try await client.admin(.get, "/enrollments?device=elsewhere", token: admin)["value"] as? [[String: Any]])?.isEmpty == true)
            }
        }
    }
}
