import Foundation
import Hummingbird
import HummingbirdTesting
import PortcullisAPI
import PortcullisTesting
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Two real `portcullis serve` processes on one PostgreSQL database and one keys directory: the topology
/// of docker-compose.yml, without Docker.
@Suite("several nodes on one PostgreSQL", .serialized, .enabled(if: PostgresTestDatabase.suitesEnabled, "POSTGRES_URL is not set"))
struct MultiNodeTests {
    static func token(_ node: ServerProcess, _ fields: [(String, String)]) async throws -> (Int, [String: Any]) {
        try await node.request(TestEnvironment.tokenPath, form: fields)
    }

    static func adminToken(_ node: ServerProcess) async throws -> String {
        let (_, body) = try await token(
            node,
            [
                ("grant_type", "client_credentials"), ("client_id", Fixtures.adminClientId),
                ("client_secret", Fixtures.adminSecret), ("scope", "api://portcullis-admin/.default"),
            ])
        return body["access_token"] as? String ?? ""
    }

    /// What another node answers once a change has reached it: the other nodes learn of a write by the store's change
    /// notification (milliseconds), not by asking the store on every request — so a test asks until it holds, for up
    /// to five seconds, and the answer must be the expected one by then.
    static func eventually<T: Equatable>(_ expected: T, _ ask: () async throws -> T) async throws -> T {
        let deadline = ContinuousClock.now + .seconds(5)
        var last = try await ask()
        while last != expected && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
            last = try await ask()
        }
        return last
    }

    static func complianceToken(_ node: ServerProcess, _ account: Fixtures.Account) async throws -> String {
        try await token(node, Grants.password(account, scope: "api://portcullis-compliance/.default"))
            .1["access_token"] as? String ?? ""
    }

    @Test("changes through one node are enforced by the other at once; keys, constraints and callbacks are shared correctly")
    func twoNodes() async throws {
        let receiver = CallbackReceiver()
        try await receiver.application().test(.live) { receiverClient in
            try await PostgresTestDatabase.with { database, url in
                let root = FileManager.default.temporaryDirectory.appendingPathComponent("portcullis-nodes-\(UUID().uuidString)")
                defer { try? FileManager.default.removeItem(at: root) }
                let directory = Fixtures.directoryJSON(callbackBase: "http://127.0.0.1:\(receiverClient.port!)")
                // Behind one load balancer every node has the same public base URL (the issuer).
                let environment = ["PORTCULLIS_POSTGRES_URL": url, "PORTCULLIS_BASE_URL": "http://portcullis.test"]
                // Started together: one migrates, one key is created, both seed idempotently.
                async let startA = ServerProcess(root: root, directoryJSON: directory, data: "data-a", extraEnvironment: environment)
                async let startB = ServerProcess(root: root, directoryJSON: directory, data: "data-b", extraEnvironment: environment)
                let (a, b) = try await (startA, startB)
                do {
                    try await Self.exercise(a, b, receiver: receiver)
                    try await Self.dpopAcrossNodes(a, b)
                } catch {
                    _ = try? await a.stop()
                    _ = try? await b.stop()
                    throw error
                }
                // Stop the nodes before the receiver, so that its graceful shutdown finds no open connection.
                #expect(try await a.stop() == 0)
                #expect(try await b.stop() == 0)
            }
        }
    }

    /// PROTOCOL §15 across nodes: a nonce from one node is good on the other (stateless), and a proof used on one node is
    /// a replay on the other (the replay cache is the store's).
    static func dpopAcrossNodes(_ a: ServerProcess, _ b: ServerProcess) async throws {
        let key = try DPoPKey()
        let htu = "http://portcullis.test\(TestEnvironment.tokenPath)"
        func send(_ node: ServerProcess, _ proof: String) async throws -> (Int, [String: Any], String?) {
            var request = URLRequest(url: URL(string: node.baseURL + TestEnvironment.tokenPath)!)
            request.httpMethod = "POST"
            request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            request.setValue(proof, forHTTPHeaderField: "DPoP")
            request.httpBody = Data(String(buffer: Form.encode(Grants.clientCredentials())).utf8)
            let (data, response) = try await URLSession.shared.data(for: request)
            let http = response as? HTTPURLResponse
            return (
                http?.statusCode ?? 0, (try? JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:], http?.value(forHTTPHeaderField: "DPoP-Nonce")
            )
        }
        let (_, first, nonceFromA) = try await send(a, try key.proof(url: htu, issuedAt: Date()))
        #expect(first["error"] as? String == "use_dpop_nonce" && nonceFromA != nil, "\(first)")
        let proof = try key.proof(url: htu, issuedAt: Date(), nonce: nonceFromA)
        let (onA, issued, _) = try await send(a, proof)
        #expect(onA == 200 && issued["token_type"] as? String == "DPoP", "\(issued)")
        let (onB, replayed, _) = try await send(b, proof)
        #expect(onB == 400 && replayed["error"] as? String == "invalid_dpop_proof", "the proof used on node A is a replay on node B: \(replayed)")
        let (fresh, other, _) = try await send(b, try key.proof(url: htu, issuedAt: Date(), nonce: nonceFromA))
        #expect(fresh == 200 && other["token_type"] as? String == "DPoP", "node B accepts node A's nonce: \(other)")
    }

    static func exercise(_ a: ServerProcess, _ b: ServerProcess, receiver: CallbackReceiver) async throws {
        do {

            // The same JWKS, and each node accepts the other's tokens.
            let (_, jwksA) = try await a.request("/\(Fixtures.domain)/discovery/v2.0/keys")
            let (_, jwksB) = try await b.request("/\(Fixtures.domain)/discovery/v2.0/keys")
            #expect((jwksA["keys"] as? [[String: String]])?.map { $0["kid"] } == (jwksB["keys"] as? [[String: String]])?.map { $0["kid"] })
            #expect((jwksA["keys"] as? [[String: String]])?.count == 1)
            let (_, issuedByA) = try await Self.token(a, Grants.password())
            let accessA = try #require(issuedByA["access_token"] as? String)
            let (_, introspected) = try await b.request(
                "/\(Fixtures.domain)/oauth2/v2.0/introspect",
                form: [("client_id", Fixtures.mailApiId), ("client_secret", Fixtures.mailApiSecret), ("token", accessA)])
            #expect(introspected["active"] as? Bool == true)
            let adminA = try await Self.adminToken(a)
            let (adminOnB, _) = try await b.request("/admin/v1/conditional-access/policies", bearer: adminA)
            #expect(adminOnB == 200)

            // A refresh-token revocation through A is enforced by B on its very next request.
            let refresh = try #require(issuedByA["refresh_token"] as? String)
            _ = try await a.request("/\(Fixtures.domain)/oauth2/v2.0/revoke", form: [("client_id", Fixtures.mobileClientId), ("token", refresh)])
            #expect(try await Self.token(b, Grants.refresh(refresh)).1["error_codes"] as? [Int] == [70008])

            // A policy change through A is enforced by B as soon as its notification arrives.
            #expect(try await Self.token(b, Grants.password()).0 == 200)
            let (created, _) = try await a.request("/admin/v1/conditional-access/policies", json: Policies.document(), bearer: adminA)
            #expect(created == 201)
            #expect(try await Self.eventually([53005]) { try await Self.token(b, Grants.password()).1["error_codes"] as? [Int] ?? [] } == [53005])

            // Remediate through B; a wipe through A is enforced by B at once.
            let compliance = try await Self.complianceToken(b, Fixtures.alice)
            let appKey = InstanceKey()
            var remediationBody = Device.body("phone")
            remediationBody["appKey"] = appKey.jwk
            let (_, remediation) = try await b.request("/mam/v1/remediations", json: remediationBody, bearer: compliance)
            let enrollment = try #require(remediation["enrollmentId"] as? String)
            let version = try #require((remediation["policy"] as? [String: Any])?["version"] as? String)
            let (_, checkIn) = try await a.request("/mam/v1/enrollments/\(enrollment)/checkin", json: Device.checkIn(version), bearer: compliance)
            #expect((checkIn["complianceStatus"] as? [String: Any])?["status"] as? String == "compliant")
            let (granted, grantedBody) = try await Self.token(b, Grants.password())
            #expect(granted == 200)
            let protectedRefresh = try #require(grantedBody["refresh_token"] as? String)
            // Managed configuration (PROTOCOL §8.2): a change written through A wakes a long poll waiting on B.
            let (_, unmanaged) = try await b.request("/mam/v1/enrollments/\(enrollment)/configuration", bearer: compliance)
            let unmanagedVersion = try #require(unmanaged["version"] as? String)
            async let woken = b.request(
                "/mam/v1/enrollments/\(enrollment)/configuration?wait=20", bearer: compliance,
                headers: ["If-None-Match": "\"\(unmanagedVersion)\""])
            try await Task.sleep(for: .milliseconds(500))
            let written = ContinuousClock.now
            let policyId = "c0000000-0000-4000-8000-00000000a0b0"
            let (configured, _) = try await a.request(
                "/admin/v1/app-configuration/policies",
                json: [
                    "id": policyId, "displayName": "Mail settings", "priority": 10, "configuration": ["serverUrl": "https://mail.fabrikam.test"],
                    "targets": ["applications": [Fixtures.mobileClientId], "includeGroups": ["All"], "excludeGroups": []],
                    "secrets": [
                        ["identifier": "com.fabrikam.smtp", "kind": "password"],
                        ["identifier": "com.fabrikam.license", "kind": "identity", "issuance": "device"],
                    ],
                ] as [String: Any], bearer: adminA)
            #expect(configured == 201)
            let (wokenStatus, wokenBody) = try await woken
            #expect(
                wokenStatus == 200 && (wokenBody["configuration"] as? [String: Any])?["serverUrl"] as? String == "https://mail.fabrikam.test", "\(wokenBody)")
            #expect(ContinuousClock.now - written < .seconds(5), "B noticed A's write by the store's change notification, not by the 20 s timeout")
            // Secrets: material sealed at rest by A opens on B (one key-encryption key from the shared Keys/), and
            // both nodes issue device identities from one tenant CA.
            let (stored, _) = try await a.request(
                "/admin/v1/app-configuration/policies/\(policyId)/secrets/com.fabrikam.smtp", method: "PUT",
                json: ["password": "shared-smtp"], bearer: adminA)
            #expect(stored == 201)
            #expect(
                try await Self.eventually(200) { try await b.request("/mam/v1/enrollments/\(enrollment)/secrets/com.fabrikam.smtp", bearer: compliance).0 }
                    == 200)
            let (sealedStatus, sealedBody) = try await b.request("/mam/v1/enrollments/\(enrollment)/secrets/com.fabrikam.smtp", bearer: compliance)
            #expect(sealedStatus == 200)
            let sealed = JSONReply(status: .ok, headers: [:], json: sealedBody, text: "")
            #expect(try appKey.open(sealed, enrollmentId: enrollment)["password"] as? String == "shared-smtp")
            var issuers: [String] = []
            for node in [a, b] {
                let (issued, body) = try await node.request(
                    "/mam/v1/enrollments/\(enrollment)/identities/com.fabrikam.license", json: ["csr": try appKey.csr()], bearer: compliance)
                #expect(issued == 200, "\(body)")
                let chain = (body["certificatesPem"] as? String ?? "").components(separatedBy: "-----BEGIN CERTIFICATE-----")
                issuers.append(chain.last ?? "")
            }
            #expect(issuers.count == 2 && issuers[0] == issuers[1] && !issuers[0].isEmpty, "one issuing CA for the tenant across nodes")

            let (wiped, _) = try await a.request("/admin/v1/enrollments/\(enrollment)/wipe", method: "POST", bearer: adminA)
            #expect(wiped == 202)
            #expect(try await Self.token(b, Grants.refresh(protectedRefresh)).1["error_codes"] as? [Int] == [70008])
            #expect(try await Self.token(b, Grants.password()).1["error_codes"] as? [Int] == [53005])

            // A user disabled through A cannot get a token from B, and their refresh token stops there too (§11).
            let (carolGranted, carolTokens) = try await Self.token(b, Grants.password(Fixtures.carol, scope: "openid offline_access", claims: nil))
            #expect(carolGranted == 200)
            let carolRefresh = try #require(carolTokens["refresh_token"] as? String)
            let carolUser: [String: Any] = ["id": Fixtures.carol.id, "userPrincipalName": Fixtures.carol.upn, "displayName": "Carol", "accountEnabled": false]
            let (disabled, _) = try await a.request(
                "/admin/v1/users/\(Fixtures.carol.id)", method: "PUT", json: carolUser, bearer: adminA, headers: ["If-Match": "*"])
            #expect(disabled == 200)
            #expect(
                try await Self.eventually([50057]) {
                    try await Self.token(b, Grants.password(Fixtures.carol, scope: "openid", claims: nil)).1["error_codes"] as? [Int] ?? []
                } == [50057])
            #expect(try await Self.token(b, Grants.refresh(carolRefresh, claims: nil)).0 == 400)

            // Concurrent enrollments of two accounts on one app instance through both nodes: one managed account.
            let bob = try await Self.complianceToken(a, Fixtures.bob)
            let alice = try await Self.complianceToken(b, Fixtures.alice)
            let codes = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<40 {
                    let node = index % 2 == 0 ? a : b
                    let token = index % 4 < 2 ? bob : alice
                    group.addTask { try await node.request("/mam/v1/enrollments", json: Device.body("contended"), bearer: token).1["statusCode"] as? Int ?? 0 }
                }
                var codes: [Int] = []
                for try await code in group { codes.append(code) }
                return codes
            }
            #expect(codes.filter { $0 == 100 }.count == 1, "\(codes)")
            #expect(codes.allSatisfy { [100, 208, 227].contains($0) })
            let (_, listed) = try await a.request("/admin/v1/enrollments?device=contended", bearer: adminA)
            #expect((listed["value"] as? [[String: Any]])?.filter { $0["state"] as? String != "unenrolled" }.count == 1)

            // Both dispatchers ran the whole time: every callback arrived exactly once.
            for _ in 0..<250 {
                let (_, pending) = try await a.request("/admin/v1/outbox?state=pending", bearer: adminA)
                if (pending["value"] as? [[String: Any]])?.isEmpty == true { break }
                try await Task.sleep(for: .milliseconds(20))
            }
            let (_, delivered) = try await a.request("/admin/v1/outbox?state=delivered&top=1000", bearer: adminA)
            let messages = try #require(delivered["value"] as? [[String: Any]])
            #expect(messages.count >= 4)
            #expect(messages.allSatisfy { $0["attempts"] as? Int == 1 })
            let received = receiver.tokens.map { token -> String in
                (try? decodeSegment(token, 1))?["jti"] as? String ?? ""
            }
            #expect(received.count == messages.count, "each message delivered once")
            #expect(Set(received).count == received.count, "no duplicates")
        }
    }
}
