import Foundation
import PortcullisStorage
import SQLiteNIO
import Synchronization
import Testing
import VaporCSQLite

@testable import PortcullisSQLite

/// Reads on the caller's own thread (`InlineReaders`): used when one is free, left for a reader's thread when SQLite would
/// have to wait for a lock.
@Suite("SQLite reads on the caller's thread", .serialized)
struct SQLiteInlineReadTests {
    /// Reads the store took to a reader's thread so far (migrating reads there too).
    static func hops(_ store: SQLiteStore) -> Int { store.readsOnReaderThreads.load(ordering: .relaxed) }

    @Test("reads by key one after another never take a reader's thread; other reads always do")
    func readsStayOnTheCallersThread() async throws {
        try await withStore(temporarySQLitePath()) { store in
            let before = Self.hops(store)
            for _ in 0..<20 { _ = try await store.lookup("SELECT count(*) FROM refresh_tokens") }
            #expect(Self.hops(store) == before)
            // Other reads (an admin's list, a scan) always take a reader's thread: they would hold up the threads that run tasks.
            _ = try await store.read("SELECT count(*) FROM refresh_tokens")
            #expect(Self.hops(store) == before + 1)
        }
    }

    @Test("with every inline reader in use, a read takes a reader's thread and does not wait for them")
    func busyInlineReadersHop() async throws {
        let path = temporarySQLitePath()
        let store = try await SQLiteStore.open(.init(path: path, inlineReaders: 1, deadline: .seconds(30)), logger: quietLogger)
        try await store.migrate()
        let before = Self.hops(store)
        // The one inline reader, held by a read that takes a while (a recursive count), on a thread of its own.
        let started = Atomic<Bool>(false)
        let slow = Task.detached {
            try await store.reading(inline: true) { db in
                started.store(true, ordering: .relaxed)
                return try db.execute(
                    "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 3000000) SELECT count(*) AS c FROM n")
            }
        }
        while !started.load(ordering: .relaxed) { try await Task.sleep(for: .milliseconds(1)) }
        let rows = try await store.lookup("SELECT 7 AS seven")
        #expect(rows.first?.column("seven")?.integer == 7)
        #expect(Self.hops(store) == before + 1)
        _ = try await slow.value
        try await store.close()
    }

    @Test("a read that meets a lock on the caller's thread runs again on a reader's thread, which may wait for it")
    func lockedDatabaseHops() async throws {
        try await withStore(temporarySQLitePath()) { store in
            // In WAL mode a reader meets SQLITE_BUSY only in passing (another connection recovering the WAL index); the
            // inline connections do not wait for it (busy_timeout 0). Here the first attempt meets it, as SQLite reports it.
            let before = Self.hops(store)
            let attempts = Mutex<[Bool]>([])
            let rows = try await store.reading(inline: true) { db in
                let inline = db.stopped != nil
                attempts.withLock { $0.append(inline) }
                if inline { throw SQLiteFailure(code: 5 | (1 << 8), message: "database is locked") }
                return try db.execute("SELECT 5 AS five")
            }
            #expect(rows.first?.column("five")?.integer == 5)
            #expect(attempts.withLock { $0 } == [true, false], "tried inline, then on a reader's thread")
            #expect(Self.hops(store) == before + 1)
        }
    }

    @Test("a read's deadline stops it between its statements, and the next use of the connection is not stopped")
    func deadlineBetweenStatements() async throws {
        try await withStore(temporarySQLitePath(), deadline: .milliseconds(200)) { store in
            await #expect(throws: StorageError.self) {
                _ = try await store.reading(inline: true) { db in
                    _ = try db.execute("SELECT 1")
                    usleep(600_000)  // past the deadline, between two statements
                    return try db.execute("SELECT 2")
                }
            }
            let rows = try await store.lookup("SELECT 3 AS three")
            #expect(rows.first?.column("three")?.integer == 3)
        }
    }

    @Test("the token path's statements run without a temporary b-tree (each is a database of its own, opened and zeroed)")
    func noTemporaryTrees() async throws {
        try await withStore(temporarySQLitePath()) { store in
            for query in [SQLiteStore.compliantEnrollmentQuery, SQLiteStore.consumableQuery] {
                let program = try await store.read("EXPLAIN " + query)
                let opcodes = program.compactMap { $0.column("opcode")?.string }
                #expect(!opcodes.isEmpty)
                #expect(!opcodes.contains("OpenEphemeral"), "\(query)")
                #expect(!opcodes.contains("SorterOpen"), "\(query)")
            }
        }
    }
}
