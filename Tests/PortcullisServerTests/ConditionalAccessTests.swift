import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOFoundationEssentialsCompat
import PortcullisAPI
import PortcullisCore
import PortcullisServer
import PortcullisTesting
import Testing

extension TestClientProtocol {
    /// An administrator's consent: `client` lists the admin API (`Admin.ReadWrite`) in its `requiredResourceAccess`.
    func listAdminAPI(for clientId: String, admin: String) async throws -> JSONReply {
        let current = try await self.admin(.get, "/applications/\(clientId)", token: admin)
        var document = current.json
        document["requiredResourceAccess"] =
            (document["requiredResourceAccess"] as? [[String: Any]] ?? []) + [["resourceAppId": "api://portcullis-admin", "scopes": ["Admin.ReadWrite"]]]
        return try await self.admin(
            .put, "/applications/\(clientId)", token: admin, json: document, headers: [HTTPField.Name("If-Match")!: current.headers[.eTag] ?? "*"])
    }

    func adminToken() async throws -> String {
        let reply = try await form(
            TestEnvironment.tokenPath,
            [
                ("grant_type", "client_credentials"), ("client_id", Fixtures.adminClientId), ("client_secret", Fixtures.adminSecret),
                ("scope", "api://portcullis-admin/.default"),
            ])
        return reply.string("access_token") ?? ""
    }

    func admin(_ method: HTTPRequest.Method, _ path: String, token: String, json: Any? = nil, headers: HTTPFields = [:]) async throws -> JSONReply {
        var all: HTTPFields = [.authorization: "Bearer \(token)", .contentType: "application/json"]
        for field in headers { all[field.name] = field.value }
        let body = try json.map { ByteBuffer(data: try JSONSerialization.data(withJSONObject: $0)) }
        return try await execute(uri: "/admin/v1\(path)", method: method, headers: all, body: body) { JSONReply($0) }
    }
}

enum Policies {
    static let requireAppProtection = "a1000000-0000-4000-8000-000000000001"

    static func document(
        id: String = requireAppProtection, name: String = "Require app protection for mail", state: String = "enabled",
        users: [String] = ["All"], excludeUsers: [String] = [], apps: [String] = [Fixtures.mailApiId],
        platforms: [String]? = nil, locations: [String]? = nil, excludeLocations: [String] = [],
        controls: [String] = ["compliantApplication"], op: String = "OR"
    ) -> [String: Any] {
        var conditions: [String: Any] = [
            "users": ["includeUsers": users, "excludeUsers": excludeUsers, "includeGroups": [], "excludeGroups": []],
            "applications": ["includeApplications": apps, "excludeApplications": []],
            "clientAppTypes": ["all"],
        ]
        if let platforms { conditions["platforms"] = ["includePlatforms": platforms, "excludePlatforms": []] }
        if let locations { conditions["locations"] = ["includeLocations": locations, "excludeLocations": excludeLocations] }
        return [
            "id": id, "displayName": name, "state": state, "conditions": conditions,
            "grantControls": ["operator": op, "builtInControls": controls],
        ]
    }
}

@Suite("admin API: authentication, CRUD, ETags, audit")
struct AdminAPITests {
    @Test("401 without or with a bad token, 403 without the role")
    func authentication() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let none = try await client.execute(uri: "/admin/v1/conditional-access/policies", method: .get) { JSONReply($0) }
                #expect(none.status == .unauthorized)
                #expect(none.headers[.wwwAuthenticate]?.hasPrefix("Bearer") == true)
                #expect(try await client.admin(.get, "/conditional-access/policies", token: "garbage").status == .unauthorized)
                // A valid token for another resource.
                let mailToken = try await client.token(Grants.clientCredentials()).string("access_token") ?? ""
                #expect(try await client.admin(.get, "/conditional-access/policies", token: mailToken).status == .unauthorized)
                // A valid admin-API token without the role (Alice).
                let alice = try await client.token(Grants.adminPassword(Fixtures.alice)).string("access_token") ?? ""
                let forbidden = try await client.admin(.get, "/conditional-access/policies", token: alice)
                #expect(forbidden.status == .forbidden)
                // Erin (user) and the admin client (app) both hold the role.
                let erin = try await client.token(Grants.adminPassword(Fixtures.admin)).string("access_token") ?? ""
                #expect(try await client.admin(.get, "/conditional-access/policies", token: erin).status == .ok)
                #expect(try await client.admin(.get, "/conditional-access/policies", token: try await client.adminToken()).status == .ok)
                // Expired.
                let admin = try await client.adminToken()
                env.clock.advance(by: 3600 + 120)
                #expect(try await client.admin(.get, "/conditional-access/policies", token: admin).status == .unauthorized)
            }
        }
    }

    @Test("\"no change\" is decided on values: the same policy spelled otherwise is answered with its stored ETag and not audited; a real change is")
    func noChangeOnValues() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let token = try await client.adminToken()
                let path = "/conditional-access/policies/\(Policies.requireAppProtection)"
                let created = try await client.admin(
                    .post, "/conditional-access/policies", token: token, json: Policies.document(platforms: ["android", "iOS"]))
                let etag = try #require(created.headers[.eTag])
                // Enum values in another case, an ID in upper case, a set in another order, a read-only member, null session controls.
                var spelled = Policies.document(
                    state: "ENABLED", apps: [Fixtures.mailApiId.uppercased()], platforms: ["IOS", "Android"], controls: ["CompliantApplication"])
                spelled["createdDateTime"] = "2026-01-01T00:00:00Z"
                spelled["sessionControls"] = NSNull()
                let same = try await client.admin(.put, path, token: token, json: spelled, headers: [.ifMatch: etag])
                #expect(same.status == .ok && same.headers[.eTag] == etag, "\(same.status) \(same.text)")
                let audited = { try await client.admin(.get, "/audit", token: token)["value"] as? [[String: Any]] ?? [] }
                #expect(try await audited().count == 1, "only the create is audited")
                // A stale ETag is still refused for a write that would change nothing.
                #expect(try await client.admin(.put, path, token: token, json: spelled, headers: [.ifMatch: #""999999""#]).status == .preconditionFailed)
                let renamed = try await client.admin(
                    .put, path, token: token, json: Policies.document(name: "Renamed", platforms: ["iOS", "android"]), headers: [.ifMatch: etag])
                #expect(renamed.status == .ok && renamed.headers[.eTag] != etag)
                #expect(try await audited().map { $0["action"] as? String } == ["replace", "create"])
            }
        }
    }

    @Test("create, read, replace with If-Match (412 when stale), delete; every write audited with before and after")
    func crud() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let token = try await client.adminToken()
                let created = try await client.admin(.post, "/conditional-access/policies", token: token, json: Policies.document())
                #expect(created.status == .created, "\(created.text)")
                let etag = try #require(created.headers[.eTag])
                #expect(created.headers[.location] == "/admin/v1/conditional-access/policies/\(Policies.requireAppProtection)")
                #expect(try await client.admin(.post, "/conditional-access/policies", token: token, json: Policies.document()).status == .conflict)

                let read = try await client.admin(.get, "/conditional-access/policies/\(Policies.requireAppProtection)", token: token)
                #expect(read.headers[.eTag] == etag)
                #expect(read.string("displayName") == "Require app protection for mail")

                var changed = Policies.document()
                changed["displayName"] = "Renamed"
                let replaced = try await client.admin(
                    .put, "/conditional-access/policies/\(Policies.requireAppProtection)", token: token, json: changed, headers: [.ifMatch: etag])
                #expect(replaced.status == .ok)
                let newTag = try #require(replaced.headers[.eTag])
                #expect(newTag != etag)
                let stale = try await client.admin(
                    .put, "/conditional-access/policies/\(Policies.requireAppProtection)", token: token, json: Policies.document(), headers: [.ifMatch: etag])
                #expect(stale.status == .preconditionFailed)
                // Re-applying the same document changes nothing (no new version).
                let same = try await client.admin(
                    .put, "/conditional-access/policies/\(Policies.requireAppProtection)", token: token, json: changed, headers: [.ifMatch: newTag])
                #expect(same.status == .ok && same.headers[.eTag] == newTag)
                // The ID in the body must match the path.
                var mismatched = changed
                mismatched["id"] = "a1000000-0000-4000-8000-0000000000ff"
                #expect(
                    try await client.admin(
                        .put, "/conditional-access/policies/\(Policies.requireAppProtection)", token: token, json: mismatched, headers: [.ifMatch: newTag]
                    ).status == .badRequest)
                // RFC 9110 §13.1.1 (issue 25.8): a well-formed ETag that was never issued, or a weak one (If-Match compares
                // strongly), can never match — 412, nothing changed; a list matches if any of its ETags does; only a header
                // that is not an ETag list is 400.
                let path = "/conditional-access/policies/\(Policies.requireAppProtection)"
                for tag in [#""stale""#, "W/\(newTag)", #""1", "2""#, #""""#] {
                    let refused = try await client.admin(.put, path, token: token, json: Policies.document(), headers: [.ifMatch: tag])
                    #expect(refused.status == .preconditionFailed, "If-Match: \(tag) → \(refused.status)")
                }
                for tag in ["stale", #""a b""#, "W/", #""unterminated"#, "42"] {
                    #expect(
                        try await client.admin(.put, path, token: token, json: Policies.document(), headers: [.ifMatch: tag]).status == .badRequest,
                        "If-Match: \(tag)")
                }
                #expect(try await client.admin(.get, path, token: token).string("displayName") == "Renamed", "none of them changed anything")
                #expect(
                    try await client.admin(.put, path, token: token, json: changed, headers: [.ifMatch: #""1", \#(newTag)"#]).status == .ok,
                    "one ETag of the list matches")
                // Replacing or deleting without If-Match is refused (428), so two admins never overwrite each other unnoticed.
                let blind = try await client.admin(
                    .put, "/conditional-access/policies/\(Policies.requireAppProtection)", token: token, json: Policies.document())
                #expect(
                    blind.status == .preconditionRequired && (blind["error"] as? [String: Any])?["code"] as? String == "preconditionRequired", "\(blind.text)")
                #expect(
                    try await client.admin(.delete, "/conditional-access/policies/\(Policies.requireAppProtection)", token: token).status
                        == .preconditionRequired)
                #expect(
                    try await client.admin(.get, "/conditional-access/policies/\(Policies.requireAppProtection)", token: token).string("displayName")
                        == "Renamed")
                // PUT under a new ID creates only with If-None-Match: *.
                var other = Policies.document()
                other["id"] = "a1000000-0000-4000-8000-0000000000aa"
                #expect(
                    try await client.admin(.put, "/conditional-access/policies/a1000000-0000-4000-8000-0000000000aa", token: token, json: other).status
                        == .preconditionRequired)
                #expect(
                    try await client.admin(
                        .put, "/conditional-access/policies/a1000000-0000-4000-8000-0000000000aa", token: token, json: other, headers: [.ifNoneMatch: "*"]
                    ).status == .created)
                #expect(
                    try await client.admin(
                        .put, "/conditional-access/policies/a1000000-0000-4000-8000-0000000000aa", token: token, json: other, headers: [.ifNoneMatch: "*"]
                    ).status == .preconditionFailed)
                #expect(
                    try await client.admin(.delete, "/conditional-access/policies/a1000000-0000-4000-8000-0000000000aa", token: token, headers: [.ifMatch: "*"])
                        .status == .noContent)

                let list = try await client.admin(.get, "/conditional-access/policies", token: token)
                #expect((list["value"] as? [[String: Any]])?.count == 1)
                #expect(
                    try await client.admin(.delete, "/conditional-access/policies/\(Policies.requireAppProtection)", token: token, headers: [.ifMatch: etag])
                        .status == .preconditionFailed)
                #expect(
                    try await client.admin(.delete, "/conditional-access/policies/\(Policies.requireAppProtection)", token: token, headers: [.ifMatch: newTag])
                        .status == .noContent)
                #expect(try await client.admin(.get, "/conditional-access/policies/\(Policies.requireAppProtection)", token: token).status == .notFound)

                let audit = try await client.admin(.get, "/audit", token: token)
                let records = try #require(audit["value"] as? [[String: Any]])
                // Newest first: the delete, the other policy's create and delete (If-None-Match), the replace, the create.
                #expect(records.map { $0["action"] as? String } == ["delete", "delete", "create", "replace", "create"])
                #expect(records.allSatisfy { ($0["actor"] as? String)?.contains(Fixtures.adminClientId) == true })
                // The documents themselves, as JSON values (not JSON inside strings).
                #expect(records[0]["after"] == nil && (records[0]["before"] as? [String: Any])?["displayName"] as? String == "Renamed")
                #expect((records[3]["before"] as? [String: Any])?["displayName"] as? String == "Require app protection for mail")
                #expect((records[3]["after"] as? [String: Any])?["displayName"] as? String == "Renamed")
                #expect(
                    ((records[3]["after"] as? [String: Any])?["grantControls"] as? [String: Any])?["builtInControls"] as? [String] == ["compliantApplication"])
            }
        }
    }

    @Test("validation is identical to the files: every problem with its pointer; lock-out guard needs force")
    func validation() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let token = try await client.adminToken()
                var bad = Policies.document(controls: ["passwordChanges"])
                bad["state"] = "sometimes"
                let reply = try await client.admin(.post, "/conditional-access/policies", token: token, json: bad)
                #expect(reply.status == .badRequest)
                let details = try #require((reply["error"] as? [String: Any])?["details"] as? [[String: String]])
                #expect(Set(details.compactMap { $0["pointer"] }) == ["/state", "/grantControls/builtInControls/0"])
                let malformed = try await client.execute(
                    uri: "/admin/v1/conditional-access/policies", method: .post,
                    headers: [.authorization: "Bearer \(token)"], body: ByteBuffer(string: "{nope")
                ) { JSONReply($0) }
                #expect(malformed.status == .badRequest)

                let lockOut = Policies.document(id: "a1000000-0000-4000-8000-000000000009", apps: ["All"], controls: ["block"])
                let refused = try await client.admin(.post, "/conditional-access/policies", token: token, json: lockOut)
                #expect(refused.status == .badRequest)
                #expect(refused.text.contains("/conditions/users/excludeUsers"))
                #expect(try await client.admin(.post, "/conditional-access/policies?force=true", token: token, json: lockOut).status == .created)
            }
        }
    }

    @Test("named locations: CRUD, and a location in use cannot be deleted")
    func namedLocations() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let token = try await client.adminToken()
                let created = try await client.admin(
                    .post, "/named-locations", token: token, json: ["displayName": "Branch", "ipRanges": ["198.51.100.0/24"], "isTrusted": false])
                #expect(created.status == .created)
                let id = try #require(created.string("id"))
                let bad = try await client.admin(.post, "/named-locations", token: token, json: ["displayName": "Bad", "ipRanges": ["198.51.100.0/33"]])
                #expect(bad.status == .badRequest && bad.text.contains("/ipRanges/0"))
                let policy = Policies.document(locations: [id], controls: ["block"])
                #expect(try await client.admin(.post, "/conditional-access/policies", token: token, json: policy).status == .created)
                let inUse = try await client.admin(.delete, "/named-locations/\(id)", token: token, headers: [.ifMatch: "*"])
                #expect(inUse.status == .conflict)
                #expect(
                    try await client.admin(.delete, "/conditional-access/policies/\(Policies.requireAppProtection)", token: token, headers: [.ifMatch: "*"])
                        .status == .noContent)
                #expect(try await client.admin(.delete, "/named-locations/\(id)", token: token, headers: [.ifMatch: "*"]).status == .noContent)
                // A policy naming an unknown location is refused.
                let dangling = try await client.admin(
                    .post, "/conditional-access/policies", token: token, json: Policies.document(locations: [id], controls: ["block"]))
                #expect(dangling.status == .badRequest)
            }
        }
    }
}

@Suite("conditional access on the token endpoint")
struct TokenConditionalAccessTests {
    @Test("the 53005 refusal matches PROTOCOL §2.5 field for field; without protapp it is 53009")
    func protectionPolicyRequired() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let token = try await client.adminToken()
                #expect(try await client.admin(.post, "/conditional-access/policies", token: token, json: Policies.document()).status == .created)

                let refused = try await client.token(Grants.password(), headers: [HTTPField.Name("client-request-id")!: "corr-53005"])
                #expect(refused.status == .badRequest)
                #expect(
                    Set(refused.json.keys) == [
                        "error", "suberror", "error_description", "error_codes", "timestamp", "trace_id", "correlation_id", "adi", "client_info", "remediation",
                    ])
                #expect(refused.string("error") == "unauthorized_client")
                #expect(refused.string("suberror") == "protection_policy_required")
                #expect(refused["error_codes"] as? [Int] == [53005])
                let trace = try #require(refused.string("trace_id"))
                let timestamp = try #require(refused.string("timestamp"))
                #expect(
                    refused.string("error_description")
                        == "AADSTS53005: Application needs to enforce Intune protection policies.\r\nTrace ID: \(trace)\r\nCorrelation ID: corr-53005\r\nTimestamp: \(timestamp)"
                )
                #expect(refused.string("correlation_id") == "corr-53005")
                #expect(refused.string("adi") == Fixtures.alice.upn)
                let encodedInfo = try #require(refused.string("client_info"))
                let info = try #require(ClientInfo(encoded: encodedInfo))
                #expect(info.homeAccountId == "\(Fixtures.alice.id).\(Fixtures.tenantId)")
                let remediation = try #require(refused["remediation"] as? [String: Any])
                #expect(Set(remediation.keys) == ["home_account_id", "account_id", "tenant_id", "upn", "endpoint", "scope", "policy_ids"])
                #expect(remediation["home_account_id"] as? String == "\(Fixtures.alice.id).\(Fixtures.tenantId)")
                #expect(remediation["account_id"] as? String == Fixtures.alice.id)
                #expect(remediation["tenant_id"] as? String == Fixtures.tenantId)
                #expect(remediation["upn"] as? String == Fixtures.alice.upn)
                #expect(remediation["endpoint"] as? String == "http://portcullis.test/mam/v1/remediations")
                #expect(remediation["scope"] as? String == "api://portcullis-compliance/.default")
                #expect(remediation["policy_ids"] as? [String] == [Policies.requireAppProtection])

                let noProtApp = try await client.token(Grants.password(claims: nil))
                #expect(noProtApp.string("error") == "unauthorized_client")
                #expect(noProtApp.errorCode == 53009)
                #expect(noProtApp["suberror"] == nil)
                #expect(noProtApp.string("error_description")?.contains("protapp") == true)

                // The compliance resource itself is exempt (remediation must be able to start), even for a policy on All apps
                // (forced past the lock-out guard: other clients of the tenant could never meet it).
                #expect(
                    try await client.admin(
                        .put, "/conditional-access/policies/\(Policies.requireAppProtection)?force=true", token: token, json: Policies.document(apps: ["All"]),
                        headers: [.ifMatch: "*"]
                    ).status == .ok)
                let compliance = try await client.token(Grants.password(scope: "api://portcullis-compliance/.default"))
                #expect(compliance.status == .ok, "\(compliance.text)")
            }
        }
    }

    @Test("block (53003), approved client app (53002), MFA (50076 basic_action), per-user scoping")
    func otherRefusals() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let token = try await client.adminToken()
                #expect(
                    try await client.admin(
                        .post, "/conditional-access/policies", token: token,
                        json: Policies.document(
                            id: "a1000000-0000-4000-8000-000000000002", users: [Fixtures.bob.id], controls: ["block"])
                    ).status == .created)
                #expect(
                    try await client.admin(
                        .post, "/conditional-access/policies", token: token,
                        json: Policies.document(
                            id: "a1000000-0000-4000-8000-000000000003", users: [Fixtures.carol.id], controls: ["mfa"])
                    ).status == .created)
                #expect(
                    try await client.admin(
                        .post, "/conditional-access/policies", token: token,
                        json: Policies.document(
                            id: "a1000000-0000-4000-8000-000000000004", users: [Fixtures.alice.id], controls: ["approvedApplication"])
                    ).status == .created)

                let blocked = try await client.token(Grants.password(Fixtures.bob))
                #expect(blocked.string("error") == "invalid_grant" && blocked.errorCode == 53003)
                let mfa = try await client.token(Grants.password(Fixtures.carol))
                #expect(mfa.errorCode == 50076 && mfa.string("suberror") == "basic_action")
                #expect(try await client.token(Grants.password(Fixtures.alice)).status == .ok)
                let unapproved = try await client.token(Grants.password(Fixtures.alice, client: Fixtures.secondMobileClientId))
                #expect(unapproved.string("error") == "invalid_grant" && unapproved.errorCode == 53002)
                // Other resources are untouched.
                #expect(try await client.token(Grants.password(Fixtures.bob, scope: "openid profile")).status == .ok)
            }
        }
    }

    @Test("a refresh grant re-evaluates; a refused refresh does not consume the token")
    func refreshReevaluates() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let first = try await client.token(Grants.password())
                let refresh = try #require(first.string("refresh_token"))
                let token = try await client.adminToken()
                #expect(try await client.admin(.post, "/conditional-access/policies", token: token, json: Policies.document()).status == .created)
                let refused = try await client.token(Grants.refresh(refresh))
                #expect(refused.errorCode == 53005)
                #expect(
                    try await client.admin(.delete, "/conditional-access/policies/\(Policies.requireAppProtection)", token: token, headers: [.ifMatch: "*"])
                        .status == .noContent)
                let after = try await client.token(Grants.refresh(refresh))
                #expect(after.status == .ok, "the refused refresh must not have consumed the token: \(after.text)")
            }
        }
    }

    @Test("platform from x-client-SKU / x-client-OS; report-only policies never refuse")
    func platformAndReportOnly() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let token = try await client.adminToken()
                #expect(
                    try await client.admin(.post, "/conditional-access/policies", token: token, json: Policies.document(platforms: ["iOS", "android"])).status
                        == .created)
                #expect(
                    try await client.admin(
                        .post, "/conditional-access/policies", token: token,
                        json: Policies.document(
                            id: "a1000000-0000-4000-8000-000000000005", name: "report-only block", state: "enabledForReportingButNotEnforced",
                            controls: ["block"])
                    ).status == .created)
                #expect(
                    try await client.token(
                        Grants.password(), headers: [HTTPField.Name("x-client-SKU")!: "MSAL.Python", HTTPField.Name("x-client-OS")!: "linux"]
                    ).status == .ok)
                #expect(try await client.token(Grants.password()).status == .ok, "unknown platform: an iOS/Android policy does not apply")
                let ios = try await client.token(
                    Grants.password(), headers: [HTTPField.Name("x-client-SKU")!: "MSAL.iOS", HTTPField.Name("x-client-OS")!: "17.4"])
                #expect(ios.errorCode == 53005)
                let android = try await client.token(
                    Grants.password(), headers: [HTTPField.Name("x-client-SKU")!: "MSAL.Android", HTTPField.Name("x-client-OS")!: "34"])
                #expect(android.errorCode == 53005)
            }
        }
    }

    @Test("sign-in log: one record per evaluation, with per-policy results, filters and paging")
    func signInLog() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let token = try await client.adminToken()
                #expect(try await client.admin(.post, "/conditional-access/policies", token: token, json: Policies.document()).status == .created)
                _ = try await client.token(Grants.password(), headers: [HTTPField.Name("client-request-id")!: "refused-1"])
                _ = try await client.token(Grants.password(Fixtures.bob, scope: "openid"), headers: [HTTPField.Name("client-request-id")!: "ok-1"])
                _ = try await client.token(Grants.clientCredentials(), headers: [HTTPField.Name("client-request-id")!: "app-1"])

                let all = try await client.admin(.get, "/sign-ins", token: token)
                let records = try #require(all["value"] as? [[String: Any]])
                #expect(records.map { $0["correlationId"] as? String }.prefix(3) == ["app-1", "ok-1", "refused-1"])
                let refused = try #require(records.first { $0["correlationId"] as? String == "refused-1" })
                #expect(refused["conditionalAccessStatus"] as? String == "failure")
                #expect(refused["errorCode"] as? Int == 53005)
                #expect(refused["userId"] as? String == Fixtures.alice.id)
                #expect(refused["capabilities"] as? [String] == ["protapp"])
                #expect(refused["grantType"] as? String == "password")
                let applied = try #require((refused["appliedConditionalAccessPolicies"] as? [[String: Any]])?.first)
                #expect(applied["id"] as? String == Policies.requireAppProtection)
                #expect(applied["result"] as? String == "failure")
                #expect(applied["enforcedGrantControls"] as? [String] == ["compliantApplication"])

                let failures = try await client.admin(.get, "/sign-ins?status=failure", token: token)
                #expect((failures["value"] as? [[String: Any]])?.map { $0["correlationId"] as? String } == ["refused-1"])
                let byUser = try await client.admin(.get, "/sign-ins?user=BOB@fabrikam.test", token: token)
                #expect((byUser["value"] as? [[String: Any]])?.map { $0["correlationId"] as? String } == ["ok-1"])
                let byPolicy = try await client.admin(.get, "/sign-ins?policy=\(Policies.requireAppProtection)", token: token)
                #expect((byPolicy["value"] as? [[String: Any]])?.count == 1)
                let byCorrelation = try await client.admin(.get, "/sign-ins?correlationId=app-1", token: token)
                #expect((byCorrelation["value"] as? [[String: Any]])?.first?["userId"] == nil)
                let page = try await client.admin(.get, "/sign-ins?top=2", token: token)
                #expect((page["value"] as? [[String: Any]])?.count == 2)
                let next = try #require(page.string("nextLink"))
                let rest = try await client.admin(.get, String(next.dropFirst("/admin/v1".count)), token: token)
                #expect(((rest["value"] as? [[String: Any]])?.count ?? 0) >= 1)
                #expect(try await client.admin(.get, "/sign-ins?from=yesterday", token: token).status == .badRequest)
                let future = try await client.admin(.get, "/sign-ins?from=2099-01-01T00:00:00Z", token: token)
                #expect((future["value"] as? [[String: Any]])?.isEmpty == true)
            }
        }
    }

    @Test("what-if against stored policies and against drafts, explaining every policy, issuing nothing")
    func whatIf() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let token = try await client.adminToken()
                #expect(
                    try await client.admin(.post, "/conditional-access/policies", token: token, json: Policies.document(platforms: ["iOS"])).status == .created)
                let signIn: [String: Any] = [
                    "userId": Fixtures.alice.upn, "clientAppId": Fixtures.mobileClientId, "resourceAppId": Fixtures.mailResource,
                    "platform": "iOS", "capabilities": ["protapp"], "appProtection": "none",
                ]
                let stored = try await client.admin(.post, "/conditional-access/evaluate", token: token, json: ["signIn": signIn])
                #expect(stored.status == .ok, "\(stored.text)")
                let record = try #require(stored["signIn"] as? [String: Any])
                #expect(record["conditionalAccessStatus"] as? String == "failure")
                #expect(record["errorCode"] as? Int == 53005)
                #expect(stored.string("suberror") == "protection_policy_required")

                var android = signIn
                android["platform"] = "android"
                let notApplied = try await client.admin(.post, "/conditional-access/evaluate", token: token, json: ["signIn": android])
                let policies = try #require((notApplied["signIn"] as? [String: Any])?["appliedConditionalAccessPolicies"] as? [[String: Any]])
                #expect(policies.first?["result"] as? String == "notApplied")
                #expect(policies.first?["conditionsNotSatisfied"] as? [String] == ["devicePlatform"])

                let drafts = try await client.admin(
                    .post, "/conditional-access/evaluate", token: token,
                    json: [
                        "signIn": android, "policies": [Policies.document(id: "a1000000-0000-4000-8000-0000000000dd", controls: ["block"])],
                    ])
                #expect((drafts["signIn"] as? [String: Any])?["errorCode"] as? Int == 53003)

                let invalid = try await client.admin(
                    .post, "/conditional-access/evaluate", token: token,
                    json: [
                        "signIn": [
                            "userId": "nobody@fabrikam.test", "clientAppId": Fixtures.mobileClientId, "resourceAppId": "api://nowhere",
                            "ipAddress": "999.1.1.1",
                        ],
                        "policies": [["displayName": "x"]],
                    ])
                #expect(invalid.status == .badRequest)
                let pointers = Set(((invalid["error"] as? [String: Any])?["details"] as? [[String: String]] ?? []).compactMap { $0["pointer"] })
                #expect(pointers.isSuperset(of: ["/signIn/userId", "/signIn/resourceAppId", "/signIn/ipAddress", "/policies/0/state"]))
                // What-if writes no sign-in record.
                let log = try await client.admin(.get, "/sign-ins", token: token)
                #expect((log["value"] as? [[String: Any]])?.contains { $0["grantType"] as? String == "what-if" } == false)
            }
        }
    }
}

@Suite("conditional access, live")
struct ConditionalAccessLiveTests {
    @Test("a policy created through the admin API changes the answer of the very next token request; named locations by client IP through a trusted proxy")
    func liveChange() async throws {
        try await withTestEnvironment(configure: { $0.trustedProxies = [IPRange("127.0.0.0/8")!, IPRange("::1/128")!] }) { env in
            try await env.application().test(.live) { client in
                #expect(try await client.token(Grants.password()).status == .ok)
                let token = try await client.adminToken()
                let policy = Policies.document(locations: ["All"], excludeLocations: ["AllTrusted"], controls: ["block"])
                #expect(try await client.admin(.post, "/conditional-access/policies", token: token, json: policy).status == .created)
                let blocked = try await client.token(Grants.password())
                #expect(blocked.errorCode == 53003)
                let fromHQ = try await client.token(Grants.password(), headers: [HTTPField.Name("X-Forwarded-For")!: "198.51.100.1, 203.0.113.77"])
                #expect(fromHQ.status == .ok, "the proxy says the client is at HQ (trusted)")
                let spoofedChain = try await client.token(Grants.password(), headers: [HTTPField.Name("X-Forwarded-For")!: "203.0.113.77, 198.51.100.1"])
                #expect(spoofedChain.errorCode == 53003, "only the right-most untrusted hop counts")
            }
        }
    }
}
