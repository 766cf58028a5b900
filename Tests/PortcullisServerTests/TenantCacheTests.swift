import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import PortcullisCore
import PortcullisPostgres
import PortcullisSQLite
import PortcullisStorage
import PortcullisTesting
import PostgresNIO
import Testing

@testable import PortcullisServer

/// The tenant cache follows changes by the document (issue 26): a write in one tenant rebuilds that tenant's
/// snapshot and no other; other nodes learn of it through the store's change feed.
@Suite("tenant cache")
struct TenantCacheTests {
    @Test("a policy write in one tenant replaces that tenant's snapshot only, and the next request obeys it")
    func oneTenantAtATime() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                #expect(try await client.token(Grants.password()).status == .ok)
                let before = env.server.tenants.snapshotGenerations()
                let revisions = env.server.tenants.cachedRevisions()
                #expect(Set(before.keys) == [Fixtures.tenantId, Fixtures.otherTenantId])
                #expect(try await client.admin(.post, "/conditional-access/policies", token: admin, json: Policies.document()).status == .created)
                let after = env.server.tenants.snapshotGenerations()
                #expect(after[Fixtures.otherTenantId] == before[Fixtures.otherTenantId], "the other tenant's snapshot is untouched")
                #expect(after[Fixtures.tenantId] != before[Fixtures.tenantId])
                #expect(env.server.tenants.cachedRevisions()[Fixtures.tenantId]! > revisions[Fixtures.tenantId]!)
                #expect(env.server.tenants.cachedRevisions()[Fixtures.otherTenantId] == revisions[Fixtures.otherTenantId])
                #expect(try await client.token(Grants.password()).errorCode == 53005, "the write is in force on the very next request")
                let stored = try await env.store.tenantRevisions()
                #expect(stored == env.server.tenants.cachedRevisions(), "the cache holds the store's revision of every tenant")
                // A delete too: the policy goes, the next request obeys.
                #expect(
                    try await client.admin(.delete, "/conditional-access/policies/\(Policies.requireAppProtection)", token: admin, headers: [.ifMatch: "*"])
                        .status == .noContent)
                #expect(try await client.token(Grants.password()).status == .ok)
                #expect(env.server.tenants.snapshotGenerations()[Fixtures.otherTenantId] == before[Fixtures.otherTenantId])
            }
        }
    }

    @Test(
        "two nodes on PostgreSQL: a write through one reaches the other's cache through the change feed, for that tenant only; what a broken feed missed the revision check finds",
        .enabled(if: PostgresTestDatabase.suitesEnabled, "POSTGRES_URL is not set"))
    func changeFeed() async throws {
        try await PostgresTestDatabase.with { database, url in
            var logger = Logger(label: "cache-test")
            logger.logLevel = .critical
            let storeA = try PostgresStore(.init(url: url, maximumConnections: 4, deadline: .seconds(30)), logger: logger)
            let storeB = try PostgresStore(.init(url: url, maximumConnections: 4, deadline: .seconds(30)), logger: logger)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await storeA.client.run() }
                group.addTask { await storeB.client.run() }
                defer { group.cancelAll() }
                try await storeA.migrate()
                let now = Date()
                let encoder = JSONEncoder()
                var seed: [StoredDocument] = []
                for (id, domain) in [(Fixtures.tenantId, Fixtures.domain), (Fixtures.otherTenantId, Fixtures.otherDomain)] {
                    seed.append(
                        StoredDocument(
                            tenantId: id, kind: .tenant, id: id, body: try encoder.encode(Tenant(id: TenantID(id), domain: domain, displayName: domain)),
                            version: 0,
                            updatedAt: now))
                }
                try await storeA.seed(seed)
                let cacheB = TenantCache(store: storeB, validation: .changeFeed(recheck: .seconds(3600)), logger: logger)
                #expect(try await cacheB.snapshot(tenantSegment: Fixtures.domain)?.directory.namedLocations.isEmpty == true)
                let before = cacheB.snapshotGenerations()
                let follower = Task { await cacheB.follow() }
                defer { follower.cancel() }
                func write(_ name: String) async throws {
                    let location = NamedLocation(id: PolicyID(Fixtures.hqLocationId), displayName: name, ipRanges: ["203.0.113.0/24"], isTrusted: true)
                    _ = try await storeA.put(
                        tenantId: TenantID(Fixtures.tenantId), kind: .namedLocation, id: location.id.rawValue, body: try encoder.encode(location),
                        precondition: .none, at: now,
                        audit: nil)
                }
                func seen(_ name: String) async throws -> Bool {
                    let deadline = ContinuousClock.now + .seconds(10)
                    while ContinuousClock.now < deadline {
                        if try await cacheB.snapshot(tenantSegment: Fixtures.tenantId)?.directory.namedLocation(id: PolicyID(Fixtures.hqLocationId))?
                            .displayName == name
                        {
                            return true
                        }
                        try await Task.sleep(for: .milliseconds(5))
                    }
                    return false
                }
                // The feed is in place once a write reaches B (LISTEN starts asynchronously).
                var attempt = 0
                repeat {
                    attempt += 1
                    try await write("HQ \(attempt)")
                } while try await !seen("HQ \(attempt)") && attempt < 3
                #expect(try await seen("HQ \(attempt)"), "B's cache follows A's write")
                #expect(cacheB.snapshotGenerations()[Fixtures.otherTenantId] == before[Fixtures.otherTenantId], "the other tenant is untouched on B")
                // A write B could not hear (its feed stopped) is found by the revision check.
                follower.cancel()
                try await Task.sleep(for: .milliseconds(200))
                try await write("HQ unheard")
                #expect(try await cacheB.synchronize() == 1, "one tenant moved")
                #expect(try await seen("HQ unheard"))
                #expect(cacheB.snapshotGenerations()[Fixtures.otherTenantId] == before[Fixtures.otherTenantId])
            }
        }
    }
}
