import Foundation
import Logging
import NIOCore
import PortcullisCore
import PortcullisStorage
import PortcullisTesting
import SQLiteNIO
import Synchronization
import Testing

@testable import PortcullisSQLite

func temporarySQLitePath() -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("portcullis-sqlite-\(UUID().uuidString)/db.sqlite").path
}

let quietLogger: Logger = {
    var logger = Logger(label: "test")
    logger.logLevel = .critical
    return logger
}()

/// Conformance is about correctness: a generous deadline, so that a loaded machine cannot turn a queue of
/// 50 concurrent writers into timeouts (the deadline has tests of its own).
func openStore(_ path: String, deadline: Duration = .seconds(60)) async throws -> SQLiteStore {
    let store = try await SQLiteStore.open(.init(path: path, deadline: deadline), logger: quietLogger)
    try await store.migrate()
    return store
}

/// A migrated store for the body's duration, closed (and awaited) when the body returns or throws.
func withStore<T>(_ path: String, deadline: Duration = .seconds(60), _ body: (SQLiteStore) async throws -> T) async throws -> T {
    let store = try await openStore(path, deadline: deadline)
    do {
        let result = try await body(store)
        try? await store.close()
        return result
    } catch {
        try? await store.close()
        throw error
    }
}

@Suite("SQLite store")
struct SQLiteStoreTests {
    @Test("conformance", arguments: StoreConformance.cases)
    func conformance(_ conformanceCase: ConformanceCase) async throws {
        try await withStore(temporarySQLitePath()) { store in
            try await conformanceCase.run(store)
        }
    }

    @Test("DPoP proofs are refused from memory at once and written behind; a store closed and reopened within their window still refuses them")
    func proofsSurviveARestart() async throws {
        let path = temporarySQLitePath()
        let now = Date()
        do {
            let store = try await openStore(path)
            for index in 0..<1000 { #expect(try await store.claimProof(key: "k\(index)", expiresAt: now.addingTimeInterval(121), now: now)) }
            #expect(!(try await store.claimProof(key: "k1", expiresAt: now.addingTimeInterval(121), now: now)), "a replay, from memory")
            // Closing writes what is still pending (a graceful stop keeps them all).
            try await store.close()
        }
        let store = try await openStore(path)
        #expect(!(try await store.claimProof(key: "k999", expiresAt: now.addingTimeInterval(121), now: now)), "known after the restart")
        #expect(try await store.claimProof(key: "new", expiresAt: now.addingTimeInterval(121), now: now))
        try await store.close()
    }

    @Test("a reopened database keeps documents and refresh tokens; migrations are idempotent")
    func reopen() async throws {
        let path = temporarySQLitePath()
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        do {
            let store = try await openStore(path)
            _ = try await store.put(tenantId: "t", kind: .tenant, id: "t", body: Data("{}".utf8), precondition: .mustNotExist, at: now, audit: nil)
            try await store.insert(
                RefreshTokenRecord(
                    tokenHash: "h", familyId: "f", tenantId: "t", userId: "u", clientId: "c", scope: "openid", issuedAt: now,
                    expiresAt: now.addingTimeInterval(60)))
            try await store.close()
        }
        let store = try await openStore(path)
        try await store.migrate()
        #expect(try await store.tenantIds() == ["t"])
        #expect(try await store.find(tokenHash: "h")?.familyId == "f")
        try await store.close()
    }

    @Test("the store's connections: every kind of value round-trips through a kept statement, a failed call leaves it usable, the cache stays bounded")
    func connections() throws {
        let path = temporarySQLitePath()
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let db = try SQLiteHandle(path: path)
        defer { db.close() }
        _ = try db.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v)")
        let large = String(repeating: "é✓", count: 6000)  // over the 16 KiB kept binding
        let values: [SQLiteData] = [
            .integer(-42), .float(1.5), .text(""), .text("naïve ✓ \u{1F512}"), .text(large), .null,
            .blob(ByteBuffer(bytes: [0, 1, 2, 255])), .text("after the large one"),
        ]
        for (key, value) in values.enumerated() { _ = try db.execute("INSERT INTO t (k, v) VALUES (?, ?)", [.integer(key), value]) }
        for (key, value) in values.enumerated() {
            #expect(try db.execute("SELECT v, k AS key FROM t WHERE k = ?", [.integer(key)]).first?.column("v") == value)
        }
        #expect(try db.execute("SELECT k FROM t WHERE k > ?", [.integer(100)]).isEmpty)
        #expect(throws: SQLiteFailure.self) { try db.execute("INSERT INTO t (k, v) VALUES (?, ?)", [.integer(0), .null]) }
        let duplicate = SQLiteStore.translate(SQLiteFailure(code: SQLiteFailure.constraintPrimaryKey, message: "x"))
        #expect((duplicate as? StorageError)?.code == .duplicate)
        _ = try db.execute("INSERT INTO t (k, v) VALUES (?, ?)", [.integer(99), .text("the kept statement works after a failure")])
        #expect(try db.execute("SELECT v FROM t WHERE k = ?", [.integer(99)]).first?.column("v")?.string == "the kept statement works after a failure")
        // Fewer values than parameters: the rest are NULL, not what the last call bound.
        _ = try db.execute("INSERT INTO t (k, v) VALUES (?, ?)", [.integer(100), .text("kept?")])
        _ = try db.execute("INSERT INTO t (k, v) VALUES (?, ?)", [.integer(101)])
        #expect(try db.execute("SELECT v FROM t WHERE k = ?", [.integer(101)]).first?.column("v") == .null)
        for n in 0..<(SQLiteHandle.statementLimit + 50) { _ = try db.execute("SELECT \(n) AS n") }
        #expect(db.cachedStatements <= SQLiteHandle.statementLimit)
        #expect(try db.execute("SELECT v FROM t WHERE k = ?", [.integer(1)]).first?.column("v") == .float(1.5))
    }

    @Test("concurrent writers share commits (group commit); each still gets its own outcome")
    func groupCommit() async throws {
        try await withStore(temporarySQLitePath()) { store in
            let before = store.writer.commits.load(ordering: .relaxed)
            let now = Date(timeIntervalSince1970: 1_800_000_000)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<50 {
                    group.addTask {
                        try await store.insert(
                            RefreshTokenRecord(
                                tokenHash: "h\(index)", familyId: "f\(index)", tenantId: "t", userId: "u", clientId: "c", scope: "openid",
                                issuedAt: now, expiresAt: now.addingTimeInterval(60)))
                    }
                }
                try await group.waitForAll()
            }
            let commits = store.writer.commits.load(ordering: .relaxed) - before
            #expect(commits < 25, "50 concurrent writes took \(commits) commits")
            // A failing member rolls back alone: a duplicate refused, the others of its group kept.
            async let duplicate: Result<Void, any Error> = {
                do {
                    return .success(
                        try await store.insert(
                            RefreshTokenRecord(
                                tokenHash: "h1", familyId: "f-other", tenantId: "t", userId: "u", clientId: "c", scope: "openid", issuedAt: now,
                                expiresAt: now.addingTimeInterval(60))))
                } catch { return .failure(error) }
            }()
            async let fresh: Void = store.insert(
                RefreshTokenRecord(
                    tokenHash: "h-new", familyId: "f-new", tenantId: "t", userId: "u", clientId: "c", scope: "openid", issuedAt: now,
                    expiresAt: now.addingTimeInterval(60)))
            let refused = await duplicate
            #expect(throws: StorageError.self) { try refused.get() }
            try await fresh
            for index in 0..<50 { #expect(try await store.find(tokenHash: "h\(index)") != nil) }
            #expect(try await store.find(tokenHash: "h-new") != nil)
            #expect(try await store.find(tokenHash: "h1")?.familyId == "f1")
        }
    }

    @Test("an unwritable path is a clear unavailable error")
    func unwritable() async throws {
        await #expect(throws: StorageError.self) {
            _ = try await SQLiteStore.open(.init(path: "/proc/portcullis/cannot/db.sqlite"), logger: quietLogger)
        }
    }
}

@Suite("SQLite store upgrades")
struct SQLiteUpgradeTests {
    @Test("migration 13 (issue 32): sign-in records written before it read back whole, are counted in the log's size and go by age")
    func signInLogUpgrade() async throws {
        let store = try await openStore(temporarySQLitePath())
        try await store.transaction { db in
            for statement in SignInLogUpgrade.downgrade { _ = try db.query(statement) }
            _ = try db.query(
                """
                INSERT INTO sign_ins (cursor, id, tenant_id, created_at, correlation_id, user_id, client_app_id, resource_app_id, status, record)
                VALUES (1, 'old-1', 't-1', 1800000000, 'c-old', 'u-1', 'app', 'res', 'success', ?)
                """, [.text(SignInLogUpgrade.oldText)])
            _ = try db.query("INSERT INTO sign_in_policies (cursor, policy_id) VALUES (1, 'p-1'), (1, 'p-2')")
        }
        try await store.migrate()
        try await SignInLogUpgrade.check(store)
        try await store.close()
    }

    @Test("a store with an object ID used in two tenants is not upgraded to installation-wide identifiers until resolved; nothing is changed meanwhile")
    func installationIdentifierConflicts() async throws {
        let path = temporarySQLitePath()
        let store = try await openStore(path)
        // The store as the release before left it: no migration 7, and the same user ID in two tenants.
        try await store.transaction { db in
            for statement in [
                "DROP INDEX documents_installation_ids", "DROP INDEX device_codes_pending_client", "DROP INDEX device_codes_pending_address",
                "ALTER TABLE device_codes DROP COLUMN client_address", "DELETE FROM schema_migrations WHERE version = 7",
            ] { _ = try db.query(statement) }
            for tenant in ["t-victim", "t-attacker"] {
                _ = try db.query(
                    "INSERT INTO documents (tenant_id, kind, id, body, version, updated_at) VALUES (?, 'user', 'same-oid', '{}', 1, 0)", [.text(tenant)])
            }
        }
        do {
            try await store.migrate()
            Issue.record("the upgrade must be refused")
        } catch let error as StorageError {
            #expect(error.message.contains("same-oid") && error.message.contains("t-victim") && error.message.contains("t-attacker"), "\(error.message)")
        }
        #expect(try await store.document(tenantId: "t-attacker", kind: .user, id: "same-oid") != nil, "nothing is deleted behind the operator's back")
        try await store.delete(tenantId: "t-attacker", kind: .user, id: "same-oid", precondition: .none, audit: nil)
        try await store.migrate()
        await #expect(throws: StorageError.self) {
            try await store.put(tenantId: "t-attacker", kind: .user, id: "same-oid", body: Data("{}".utf8), precondition: .none, at: Date(), audit: nil)
        }
        try await store.close()
    }
}
