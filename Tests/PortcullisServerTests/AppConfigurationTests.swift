import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PortcullisAPI
import PortcullisCore
import PortcullisSQLite
import PortcullisServer
import PortcullisStorage
import PortcullisTesting
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("managed app configuration (PROTOCOL §8.1, §8.2)")
struct AppConfigurationTests {
    static let ifNoneMatch = HTTPField.Name("If-None-Match")!
    static let policyId = "c0000000-0000-4000-8000-0000000000c1"

    static func policy(
        id: String = policyId, name: String = "Mail settings", priority: Int = 10, groups: [String] = ["All"],
        configuration: [String: Any] = ["serverUrl": "https://mail.fabrikam.test", "syncDays": 7]
    ) -> [String: Any] {
        [
            "id": id, "displayName": name, "priority": priority, "configuration": configuration,
            "targets": ["applications": [Fixtures.mobileClientId], "includeGroups": groups, "excludeGroups": []],
        ]
    }

    @Test(
        "a compliant enrollment gets the merged configuration with an ETag; 304 when current; a check-in asks for a refresh after a change; a SET announces it")
    func delivery() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let id = try await client.becomeCompliant()
                let token = try await client.complianceToken()
                let unmanaged = try await client.mam(.get, "/enrollments/\(id)/configuration", token: token)
                #expect(
                    unmanaged.status == .ok && unmanaged["configuration"] is NSNull && unmanaged["secrets"] as? [Any] != nil,
                    "no policy: null: \(unmanaged.text)")

                #expect(try await client.admin(.post, "/app-configuration/policies", token: admin, json: Self.policy()).status == .created)
                // A second policy for Sales at a higher number: only keys the first lacks come from it.
                let sales = Self.policy(
                    id: "c0000000-0000-4000-8000-0000000000c2", name: "Sales mail", priority: 20, groups: [Fixtures.salesGroupId],
                    configuration: ["serverUrl": "https://sales.fabrikam.test", "signature": ["enabled": true]])
                #expect(try await client.admin(.post, "/app-configuration/policies", token: admin, json: sales).status == .created)
                let merged = try await client.mam(.get, "/enrollments/\(id)/configuration", token: token)
                let configuration = try #require(merged["configuration"] as? [String: Any], "\(merged.text)")
                #expect(
                    configuration["serverUrl"] as? String == "https://mail.fabrikam.test" && configuration["syncDays"] as? Int == 7
                        && (configuration["signature"] as? [String: Any])?["enabled"] as? Bool == true, "lowest priority wins a key; keys merge: \(merged.text)"
                )
                let version = try #require(merged.string("version"))
                #expect(merged.headers[.eTag] == "\"\(version)\"")
                let same = try await client.execute(
                    uri: "/mam/v1/enrollments/\(id)/configuration", method: .get,
                    headers: [.authorization: "Bearer \(token)", Self.ifNoneMatch: "\"\(version)\""]
                ) { JSONReply($0) }
                #expect(same.status == .notModified)
                let checkIn = try await client.mam(.post, "/enrollments/\(id)/checkin", token: token, json: Device.checkIn(nil))
                #expect((checkIn["commands"] as? [String])?.contains("refreshConfiguration") != true, "fetched: nothing to refresh: \(checkIn.text)")

                var changed = Self.policy()
                changed["configuration"] = ["serverUrl": "https://mail2.fabrikam.test"]
                #expect(
                    try await client.admin(.put, "/app-configuration/policies/\(Self.policyId)", token: admin, json: changed, headers: [.ifMatch: "*"]).status
                        == .ok)
                let after = try await client.mam(.post, "/enrollments/\(id)/checkin", token: token, json: Device.checkIn(nil))
                #expect((after["commands"] as? [String])?.contains("refreshConfiguration") == true, "\(after.text)")
                let messages = try await env.store.outboxMessages(tenantId: Fixtures.tenantId, state: nil, limit: 100)
                let events = messages.compactMap { try? decodeSegment($0.payload, 1)["events"] as? [String: Any] }
                let announced = events.compactMap { $0[SecurityEventTypes.configurationChanged] as? [String: Any] }
                #expect(announced.contains { $0["enrollmentId"] as? String == id && ($0["version"] as? String)?.isEmpty == false }, "\(events)")
                let fresh = try await client.mam(.get, "/enrollments/\(id)/configuration", token: token)
                #expect(
                    (fresh["configuration"] as? [String: Any])?["serverUrl"] as? String == "https://mail2.fabrikam.test" && fresh.string("version") != version)
                let quiet = try await client.mam(.post, "/enrollments/\(id)/checkin", token: token, json: Device.checkIn(nil))
                #expect((quiet["commands"] as? [String])?.contains("refreshConfiguration") != true)
                let history = try await env.store.enrollmentHistory(id: RecordID(id)).map(\.event)
                #expect(history.contains(.configurationDelivered) && history.contains(.configurationChanged), "\(history)")
            }
        }
    }

    @Test("a group membership change that moves an instance's configuration is announced too; a group a configuration policy names cannot be deleted")
    func membership() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                #expect(
                    try await client.admin(.post, "/app-configuration/policies", token: admin, json: Self.policy(groups: [Fixtures.salesGroupId])).status
                        == .created)
                let id = try await client.becomeCompliant()
                let token = try await client.complianceToken()
                let fetched = try await client.mam(.get, "/enrollments/\(id)/configuration", token: token)
                #expect(fetched["configuration"] as? [String: Any] != nil, "Alice is in Sales: \(fetched.text)")
                let sales = try await client.admin(.get, "/groups/\(Fixtures.salesGroupId)", token: admin)
                let left = try await client.admin(
                    .put, "/groups/\(Fixtures.salesGroupId)", token: admin,
                    json: ["displayName": "Sales", "members": [Fixtures.bob.id]], headers: [.ifMatch: try #require(sales.headers[.eTag])])
                #expect(left.status == .ok, "\(left.text)")
                let messages = try await env.store.outboxMessages(tenantId: Fixtures.tenantId, state: nil, limit: 100)
                let announced = messages.compactMap {
                    try? (decodeSegment($0.payload, 1)["events"] as? [String: Any])?[SecurityEventTypes.configurationChanged] as? [String: Any]
                }
                #expect(announced.contains { $0["enrollmentId"] as? String == id }, "Alice left Sales: her configuration is gone, and she is told")
                #expect((try await client.mam(.get, "/enrollments/\(id)/configuration", token: token))["configuration"] is NSNull)
                let engineering = Self.policy(
                    id: "c0000000-0000-4000-8000-0000000000e1", name: "Engineering mail", priority: 20, groups: [Fixtures.engineeringGroupId])
                #expect(try await client.admin(.post, "/app-configuration/policies", token: admin, json: engineering).status == .created)
                let named = try await client.admin(.delete, "/groups/\(Fixtures.engineeringGroupId)", token: admin, headers: [.ifMatch: "*"])
                #expect(named.status == .conflict && named.text.contains("c0000000-0000-4000-8000-0000000000e1"), "\(named.text)")
            }
        }
    }

    @Test("a long poll returns at once on a change through this node; 304 when nothing changed; wait is bounded; not compliant → 403 with the status")
    func longPoll() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.live) { client in
                let admin = try await client.adminToken()
                #expect(try await client.admin(.post, "/app-configuration/policies", token: admin, json: Self.policy()).status == .created)
                let id = try await client.becomeCompliant()
                let token = try await client.complianceToken()
                let first = try await client.mam(.get, "/enrollments/\(id)/configuration", token: token)
                let version = try #require(first.string("version"))
                let headers: HTTPFields = [.authorization: "Bearer \(token)", Self.ifNoneMatch: "\"\(version)\""]

                let idle = ContinuousClock.now
                let unchanged = try await client.execute(uri: "/mam/v1/enrollments/\(id)/configuration?wait=1", method: .get, headers: headers) {
                    JSONReply($0)
                }
                #expect(unchanged.status == .notModified && ContinuousClock.now - idle >= .milliseconds(900), "held for the wait, then 304")
                #expect(unchanged.headers[.retryAfter] == nil, "it waited: come back at once")
                let tooLong = try await client.execute(uri: "/mam/v1/enrollments/\(id)/configuration?wait=61", method: .get, headers: headers) { JSONReply($0) }
                #expect(tooLong.status == .badRequest)

                // On its own connection (the test client has one, and the write below must not queue behind the poll).
                var poll = URLRequest(url: URL(string: "http://127.0.0.1:\(client.port!)/mam/v1/enrollments/\(id)/configuration?wait=30")!, timeoutInterval: 60)
                poll.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
                poll.setValue("\"\(version)\"", forHTTPHeaderField: "If-None-Match")
                async let woken = URLSession.shared.data(for: poll)
                try await Task.sleep(for: .milliseconds(300))
                let written = ContinuousClock.now
                var changed = Self.policy()
                changed["configuration"] = ["serverUrl": "https://changed.fabrikam.test"]
                #expect(
                    try await client.admin(.put, "/app-configuration/policies/\(Self.policyId)", token: admin, json: changed, headers: [.ifMatch: "*"]).status
                        == .ok)
                let (data, response) = try await woken
                let reply = (try? JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
                #expect(
                    (response as? HTTPURLResponse)?.statusCode == 200
                        && (reply["configuration"] as? [String: Any])?["serverUrl"] as? String == "https://changed.fabrikam.test", "\(reply)")
                #expect(ContinuousClock.now - written < .seconds(5), "woken by the write, not by the 30 s timeout")

                let wiped = try await client.admin(.post, "/enrollments/\(id)/wipe", token: admin)
                #expect(wiped.status == .accepted)
                let refused = try await client.mam(.get, "/enrollments/\(id)/configuration", token: token)
                #expect(refused.status == .forbidden && refused["configuration"] == nil && (refused["commands"] as? [String]) == ["wipe"], "\(refused.text)")
                let other = try await client.mam(.get, "/enrollments/\(id)/configuration", token: try await client.complianceToken(Fixtures.bob))
                #expect(other.status == .notFound, "another account's enrollment is not found")
            }
        }
    }

    @Test("the change broadcast holds at most its capacity of waiters; beyond it, and once closed for shutdown, a wait returns at once")
    func broadcastBounds() async throws {
        let broadcast = ChangeBroadcast(capacity: 1)
        async let first = broadcast.wait(for: .seconds(20))
        for _ in 0..<500 where broadcast.waiting == 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(broadcast.waiting == 1)
        let started = ContinuousClock.now
        #expect(await broadcast.wait(for: .seconds(20)) == false, "full: no second waiter")
        #expect(ContinuousClock.now - started < .seconds(5))
        broadcast.signal()
        #expect(await first == true, "the waiter was woken")
        broadcast.close()
        #expect(await broadcast.wait(for: .seconds(20)) == false, "closed: nobody waits")
        #expect(broadcast.waiting == 0)
    }

    @Test("validation: pointers, the 64 KiB limit, equal priorities on one app, an unknown secret kind; the admin API audits")
    func validation() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                #expect(try await client.admin(.post, "/app-configuration/policies", token: admin, json: Self.policy()).status == .created)
                let huge = Self.policy(id: "c0000000-0000-4000-8000-0000000000c3", priority: 30, configuration: ["blob": String(repeating: "x", count: 70_000)])
                var secrets = Self.policy(id: "c0000000-0000-4000-8000-0000000000c4", priority: 40)
                secrets["secrets"] = [["identifier": "com.fabrikam.mail.smtp", "kind": "token"]]
                var unknownApp = Self.policy(id: "c0000000-0000-4000-8000-0000000000c5", priority: 50)
                unknownApp["targets"] = ["applications": ["00000000-0000-4000-8000-00000000dead"], "includeGroups": ["All"]]
                var notObject = Self.policy(id: "c0000000-0000-4000-8000-0000000000c6", priority: 60)
                notObject["configuration"] = ["a", "b"]
                for (body, pointer) in [
                    (huge, "/configuration"), (Self.policy(id: "c0000000-0000-4000-8000-0000000000c7", name: "Same priority"), "/priority"),
                    (secrets, "/secrets/0/kind"), (unknownApp, "/targets/applications/0"), (notObject, "/configuration"),
                    (Self.policy(id: "c0000000-0000-4000-8000-0000000000c8", priority: -1), "/priority"),
                ] {
                    let refused = try await client.admin(.post, "/app-configuration/policies", token: admin, json: body)
                    #expect(refused.status == .badRequest && refused.text.contains("\"\(pointer)\""), "\(pointer): \(refused.text)")
                }
                let audit = try await client.admin(.get, "/audit", token: admin)
                #expect(audit.text.contains(Self.policyId))
            }
        }
    }
}
