import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOFoundationEssentialsCompat
import PortcullisCore
import PortcullisTesting
import Testing

extension TestClientProtocol {
    func graph(_ method: HTTPRequest.Method, _ path: String, token: String, json: Any? = nil, headers: HTTPFields = [:]) async throws -> JSONReply {
        var all: HTTPFields = [.authorization: "Bearer \(token)", .contentType: "application/json"]
        for field in headers { all[field.name] = field.value }
        let body = try json.map { ByteBuffer(data: try JSONSerialization.data(withJSONObject: $0)) }
        return try await execute(uri: path, method: method, headers: all, body: body) { JSONReply($0) }
    }

    /// Lets `clientId` ask for Graph's `scopes` (delegated) and `roles` (application), the latter assigned.
    func allowGraph(_ clientId: String, scopes: [String] = [], roles: [String] = [], admin: String) async throws {
        let current = try await self.admin(.get, "/applications/\(clientId)", token: admin)
        var document = current.json
        document["requiredResourceAccess"] =
            (document["requiredResourceAccess"] as? [[String: Any]] ?? []) + [
                ["resourceAppId": BuiltInResources.graphIdentifier, "scopes": scopes, "appRoles": roles]
            ]
        let put = try await self.admin(
            .put, "/applications/\(clientId)", token: admin, json: document, headers: [HTTPField.Name("If-Match")!: current.headers[.eTag] ?? "*"])
        #expect(put.status == .ok, "\(put.text)")
        for role in roles {
            let assigned = try await self.admin(
                .post, "/app-role-assignments", token: admin, json: ["principalId": clientId, "resource": BuiltInResources.graphIdentifier, "role": role])
            #expect(assigned.status == .created, "\(assigned.text)")
        }
    }
}

extension TestClientProtocol {
    /// The daemon's app-only Graph token, after `roles` are assigned to it.
    func daemonGraphToken(roles: [String], admin: String) async throws -> String {
        try await allowGraph(Fixtures.daemonClientId, roles: roles, admin: admin)
        let answer = try await token([
            ("grant_type", "client_credentials"), ("client_id", Fixtures.daemonClientId), ("client_secret", Fixtures.daemonSecret),
            ("scope", "https://graph.microsoft.com/.default"),
        ])
        return try #require(answer.string("access_token"), "\(answer.text)")
    }
}

/// The Graph API's checks (PROTOCOL §20): Graph's permission names held now, a delegated caller's directory roles, the
/// audience, `$batch`'s bounds, and paths that reach nothing else. The SDKs' own run is Tests/Interop/graph_interop.py.
@Suite("the Graph API's authorisation (PROTOCOL §20)")
struct GraphRouteTests {
    nonisolated(unsafe) static let policy: [String: Any] = [
        "displayName": "Through Graph", "state": "disabled",
        "conditions": ["users": ["includeUsers": ["All"]], "applications": ["includeApplications": ["All"]], "clientAppTypes": ["all"]],
        "grantControls": ["operator": "OR", "builtInControls": ["mfa"]],
    ]

    @Test("app-only: a read permission reads and never writes; a token for another resource is refused; the error is Graph's")
    func applicationPermissions() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let token = try await client.daemonGraphToken(roles: ["Policy.Read.All"], admin: admin)
                let listed = try await client.graph(.get, "/v1.0/identity/conditionalAccess/policies", token: token)
                #expect(listed.status == .ok && listed.json["value"] is [Any], "\(listed.text)")
                let write = try await client.graph(.post, "/v1.0/identity/conditionalAccess/policies", token: token, json: Self.policy)
                #expect(write.status == .forbidden, "\(write.text)")
                let error = write.json["error"] as? [String: Any]
                #expect(error?["code"] as? String == "Authorization_RequestDenied" && (error?["innerError"] as? [String: Any])?["request-id"] != nil)
                let users = try await client.graph(.get, "/v1.0/users", token: token)
                #expect(users.status == .forbidden, "Policy.Read.All reads no users: \(users.text)")
                let other = try await client.graph(.get, "/v1.0/identity/conditionalAccess/policies", token: admin)
                #expect(other.status == .unauthorized && (other.json["error"] as? [String: Any])?["code"] as? String == "InvalidAuthenticationToken")
                let none = try await client.graph(.get, "/beta/organization", token: "")
                #expect(none.status == .unauthorized)
                // Paths are segments: an encoded slash or a dot segment reaches no other collection.
                for sneaky in ["/v1.0/identity%2FconditionalAccess%2Fpolicies", "/v1.0/identity/conditionalAccess/policies/../../users", "/v1.0/users/..%2F"] {
                    let reply = try await client.graph(.get, sneaky, token: token)
                    #expect(reply.status != .ok, "\(sneaky): \(reply.text)")
                }
                // Query strings as fuzzers write them (an empty name, a bare `=`) are read, never a crash (schemathesis found one).
                let odd = try await client.graph(.get, "/v1.0/identity/conditionalAccess/policies?=&a=&=b&$top=1&%ZZ=1", token: token)
                #expect(odd.status == .ok, "\(odd.text)")
                // The role is checked as assigned now: unassigned, the token that claims it reads nothing.
                let assignments = try await client.admin(.get, "/app-role-assignments", token: admin)
                let assignment = (assignments.json["value"] as? [[String: Any]] ?? []).first {
                    $0["principalId"] as? String == Fixtures.daemonClientId && $0["role"] as? String == "Policy.Read.All"
                }
                let id = try #require(assignment?["id"] as? String, "\(assignments.text)")
                #expect(
                    try await client.admin(.delete, "/app-role-assignments/\(id)", token: admin, headers: [HTTPField.Name("If-Match")!: "*"]).status
                        == .noContent)
                #expect(try await client.graph(.get, "/v1.0/identity/conditionalAccess/policies", token: token).status == .forbidden)
            }
        }
    }

    @Test("delegated: the scope and the user's directory roles both — a Conditional Access Administrator writes policies, not groups; no role, no access")
    func delegatedRoles() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let scopes = ["Policy.ReadWrite.ConditionalAccess", "Group.ReadWrite.All"]
                try await client.allowGraph(Fixtures.mobileClientId, scopes: scopes, admin: admin)
                let assigned = try await client.admin(
                    .post, "/role-management/directory/role-assignments", token: admin,
                    json: ["principalId": Fixtures.alice.id, "roleDefinitionId": DirectoryRoleDefinition.conditionalAccessAdministrator.rawValue])
                #expect(assigned.status == .created, "\(assigned.text)")
                func token(_ account: Fixtures.Account) async throws -> String {
                    let scope = scopes.map { "https://graph.microsoft.com/\($0)" }.joined(separator: " ")
                    let answer = try await client.token(Grants.password(account, scope: scope, claims: nil))
                    return try #require(answer.string("access_token"), "\(answer.text)")
                }
                let alice = try await token(Fixtures.alice)
                let made = try await client.graph(.post, "/v1.0/identity/conditionalAccess/policies", token: alice, json: Self.policy)
                #expect(made.status == .created, "\(made.text)")
                let group = try await client.graph(
                    .post, "/v1.0/groups", token: alice, json: ["displayName": "Not hers", "securityEnabled": true, "mailEnabled": false, "mailNickname": "x"])
                #expect(group.status == .forbidden, "the scope alone does not write groups: \(group.text)")
                let bob = try await token(Fixtures.bob)
                let read = try await client.graph(.get, "/v1.0/identity/conditionalAccess/policies", token: bob)
                #expect(read.status == .forbidden, "a user without a directory role reads nothing: \(read.text)")
            }
        }
    }

    @Test("an object holding administrative rights: neither an app with User.ReadWrite.All nor a User Administrator changes it, by ID or by UPN")
    func privilegedTargets() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let token = try await client.daemonGraphToken(roles: ["User.ReadWrite.All"], admin: admin)
                // Erin holds Portcullis.Admin: her password would be the admin API's.
                for key in [Fixtures.admin.id, Fixtures.admin.upn] {
                    let patched = try await client.graph(
                        .patch, "/v1.0/users/\(key)", token: token, json: ["passwordProfile": ["password": "Taken-over-1!"]])
                    #expect(patched.status == .forbidden, "app-only, \(key): \(patched.text)")
                }
                #expect(try await client.graph(.patch, "/v1.0/users/\(Fixtures.bob.upn)", token: token, json: ["displayName": "Bob B."]).status == .noContent)
                // A user's sign-in methods need UserAuthenticationMethod.Read.All, not what reads and writes users.
                let methods = try await client.graph(.get, "/v1.0/users/\(Fixtures.alice.id)/authentication/methods", token: token)
                #expect(methods.status == .forbidden, "\(methods.text)")
                // A User Administrator, delegated, by UPN as by ID.
                try await client.allowGraph(Fixtures.mobileClientId, scopes: ["User.ReadWrite.All"], admin: admin)
                let assigned = try await client.admin(
                    .post, "/role-management/directory/role-assignments", token: admin,
                    json: ["principalId": Fixtures.carol.id, "roleDefinitionId": DirectoryRoleDefinition.userAdministrator.rawValue])
                #expect(assigned.status == .created, "\(assigned.text)")
                let answer = try await client.token(Grants.password(Fixtures.carol, scope: "https://graph.microsoft.com/User.ReadWrite.All", claims: nil))
                let carol = try #require(answer.string("access_token"), "\(answer.text)")
                for key in [Fixtures.admin.id, Fixtures.admin.upn] {
                    let disabled = try await client.graph(.patch, "/v1.0/users/\(key)", token: carol, json: ["accountEnabled": false])
                    #expect(disabled.status == .forbidden, "delegated, \(key): \(disabled.text)")
                }
                #expect(try await client.graph(.patch, "/v1.0/users/\(Fixtures.bob.upn)", token: carol, json: ["displayName": "Bob C."]).status == .noContent)
            }
        }
    }

    @Test("$batch: at most 20 requests, ids unique, no batch inside a batch; each answered on its own")
    func batch() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let token = try await client.daemonGraphToken(roles: ["Policy.Read.All"], admin: admin)
                let many = (0...20).map { ["id": "\($0)", "method": "GET", "url": "/organization"] }
                #expect(try await client.graph(.post, "/v1.0/$batch", token: token, json: ["requests": many]).status == .badRequest)
                let mixed: [[String: Any]] = [
                    ["id": "a", "method": "GET", "url": "/identity/conditionalAccess/policies?$top=1"],
                    ["id": "a", "method": "GET", "url": "/organization"],
                    ["id": "b", "method": "POST", "url": "/$batch", "body": ["requests": []]],
                    ["id": "c", "method": "POST", "url": "/identity/conditionalAccess/policies", "body": Self.policy],
                ]
                let reply = try await client.graph(.post, "/v1.0/$batch", token: token, json: ["requests": mixed])
                let statuses = (reply.json["responses"] as? [[String: Any]] ?? []).map { $0["status"] as? Int ?? 0 }
                #expect(reply.status == .ok && statuses == [200, 400, 400, 403], "\(reply.text)")
            }
        }
    }
}
