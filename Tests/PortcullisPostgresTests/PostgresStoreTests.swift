import Foundation
import Logging
import PortcullisCore
import PortcullisStorage
import PortcullisTesting
import PostgresNIO
import Synchronization
import Testing

@testable import PortcullisPostgres

let quiet: Logger = {
    var logger = Logger(label: "postgres-test")
    logger.logLevel = .critical
    return logger
}()

@Suite("PostgreSQL store", .enabled(if: PostgresTestDatabase.suitesEnabled, "POSTGRES_URL is not set"))
struct PostgresStoreTests {
    @Test("conformance", arguments: StoreConformance.cases)
    func conformance(_ conformanceCase: ConformanceCase) async throws {
        try await PostgresTestDatabase.withStore { store in try await conformanceCase.run(store) }
    }

    @Test("a wrong password or an unreachable server fails start-up quickly with a clear message")
    func preflight() async throws {
        let server = try #require(PostgresTestDatabase.serverURL)
        var components = try #require(URLComponents(string: server))
        components.password = "definitely-wrong"
        components.user = "nobody_\(UInt32.random(in: 0...UInt32.max))"
        let wrongURL = try #require(components.string)
        let wrong = try PostgresStore(.init(url: wrongURL), logger: quiet)
        let start = ContinuousClock.now
        do {
            try await wrong.preflight(timeout: .seconds(5))
            Issue.record("must fail")
        } catch let error as StorageError {
            #expect(error.code == .unavailable)
            #expect(error.message.contains("authentication failed"), "\(error.message)")
            #expect(!error.message.contains("definitely-wrong"), "never print the password")
        }
        let unreachable = try PostgresStore(.init(url: "postgres://u:p@127.0.0.1:1/db?sslmode=disable"), logger: quiet)
        await #expect(throws: StorageError.self) { try await unreachable.preflight(timeout: .seconds(3)) }
        #expect(ContinuousClock.now - start < .seconds(15))
        #expect(throws: PostgresURL.Invalid.self) { try PostgresURL("mysql://x@y/z") }
    }

    @Test("migration 13 (issue 32): sign-in records written before it read back whole, are counted in the log's size and go by age")
    func signInLogUpgrade() async throws {
        try await PostgresTestDatabase.withStore { store in
            try await store.transaction { db in
                for statement in SignInLogUpgrade.downgrade { try await db.query(PostgresQuery(unsafeSQL: statement)) }
                let rows = try await db.query(
                    """
                    INSERT INTO sign_ins (id, tenant_id, created_at, correlation_id, user_id, client_app_id, resource_app_id, status, record)
                    VALUES ('old-1', 't-1', 1800000000, 'c-old', 'u-1', 'app', 'res', 'success', \(SignInLogUpgrade.oldText)) RETURNING cursor
                    """)
                let cursor = try #require(try rows.first?.decode(Int64.self))
                try await db.query("INSERT INTO sign_in_policies (cursor, policy_id) VALUES (\(cursor), 'p-1'), (\(cursor), 'p-2')")
            }
            try await store.migrate()
            try await SignInLogUpgrade.check(store)
        }
    }

    @Test("a store with an object ID used in two tenants is not upgraded to installation-wide identifiers until resolved; nothing is changed meanwhile")
    func installationIdentifierConflicts() async throws {
        try await PostgresTestDatabase.withStore { store in
            // The store as the release before left it: no migration 7, and the same application ID in two tenants.
            try await store.transaction { db in
                for statement in [
                    "DROP INDEX documents_installation_ids", "DROP INDEX device_codes_pending_client", "DROP INDEX device_codes_pending_address",
                    "ALTER TABLE device_codes DROP COLUMN client_address", "DELETE FROM schema_migrations WHERE version = 7",
                ] { try await db.query(PostgresQuery(unsafeSQL: statement)) }
                for tenant in ["t-victim", "t-attacker"] {
                    try await db.query(
                        "INSERT INTO documents (tenant_id, kind, id, body, version, updated_at) VALUES (\(tenant), 'application', 'same-app', '{}', 1, 0)")
                }
            }
            do {
                try await store.migrate()
                Issue.record("the upgrade must be refused")
            } catch let error as StorageError {
                #expect(error.message.contains("same-app") && error.message.contains("t-victim") && error.message.contains("t-attacker"), "\(error.message)")
            }
            #expect(
                try await store.document(tenantId: "t-attacker", kind: .application, id: "same-app") != nil, "nothing is deleted behind the operator's back")
            try await store.delete(tenantId: "t-attacker", kind: .application, id: "same-app", precondition: .none, audit: nil)
            try await store.migrate()
            await #expect(throws: StorageError.self) {
                try await store.put(
                    tenantId: "t-attacker", kind: .application, id: "same-app", body: Data("{}".utf8), precondition: .none, at: Date(), audit: nil)
            }
        }
    }
}

@Suite("PostgreSQL change feed", .enabled(if: PostgresTestDatabase.suitesEnabled, "POSTGRES_URL is not set"))
struct PostgresChangeFeedTests {
    @Test("every committed document write is announced to every node with its tenant, revision, kind and ID; a refused write is not")
    func notifications() async throws {
        try await PostgresTestDatabase.withStore { store in
            let received = ReceivedChanges()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await store.followDocumentChanges { received.append($0) } }
                // The listener is in place once a write it must see arrives.
                let deadline = ContinuousClock.now + .seconds(10)
                var probe: Int64 = 0
                while received.all.isEmpty && ContinuousClock.now < deadline {
                    probe = try await store.put(
                        tenantId: "t-probe", kind: .namedLocation, id: "p", body: Data("{}".utf8), precondition: .none, at: Date(), audit: nil
                    ).version
                    try await Task.sleep(for: .milliseconds(50))
                }
                #expect(probe > 0 && !received.all.isEmpty)
                let written = try await store.put(tenantId: "t-a", kind: .user, id: "u-1", body: Data("{}".utf8), precondition: .none, at: Date(), audit: nil)
                await #expect(throws: StorageError.self) {
                    try await store.put(tenantId: "t-a", kind: .user, id: "u-1", body: Data("{}".utf8), precondition: .mustNotExist, at: Date(), audit: nil)
                }
                let deleted = try await store.delete(tenantId: "t-a", kind: .user, id: "u-1", precondition: .none, audit: nil)
                while received.all.filter({ $0.tenantId == "t-a" }).count < 2 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
                group.cancelAll()
                let changes = received.all.filter { $0.tenantId == "t-a" }
                #expect(
                    changes == [
                        DocumentChange(tenantId: "t-a", revision: written.version, kind: .user, id: "u-1"),
                        DocumentChange(tenantId: "t-a", revision: deleted, kind: .user, id: "u-1"),
                    ], "the refused write announced nothing: \(changes)")
            }
        }
    }
}

final class ReceivedChanges: Sendable {
    private let changes = Mutex<[DocumentChange]>([])
    func append(_ change: DocumentChange) { changes.withLock { $0.append(change) } }
    var all: [DocumentChange] { changes.withLock { $0 } }
}
