import Foundation
public import Logging
import NIOCore
import NIOPosix
import PortcullisCore
public import PortcullisStorage
import SQLiteNIO
import Synchronization

/// The embedded default store: one SQLite file in WAL mode, one writer connection (serialised by a gate,
/// so transactions are real) and a few reader connections that read concurrently with it.
public final class SQLiteStore: PortcullisStore {
    public struct Configuration: Sendable {
        /// The database file.
        public var path: String
        /// Reader connections besides the writer.
        public var readers: Int
        /// `PRAGMA synchronous` for the writer: `FULL` (default; a commit survives power loss) or `NORMAL`
        /// (a commit survives a crash of the process; a power loss may undo the last ones).
        public var synchronous: String
        /// No operation waits longer (PROTOCOL §2.4); then the caller gets `StorageError.unavailable`.
        public var deadline: Duration

        public init(path: String, readers: Int = 2, synchronous: String = "FULL", deadline: Duration = .seconds(2)) {
            self.path = path
            self.readers = readers
            self.synchronous = synchronous
            self.deadline = deadline
        }
    }

    let writer: SQLiteConnection
    let readers: [SQLiteConnection]
    /// SQLite's own threads: a commit blocked in fsync must not starve the reads (the shared NIO pool has
    /// one thread per core).
    let threadPool: NIOThreadPool
    let gate = WriteGate()
    private let nextReader = Atomic<Int>(0)
    let logger: Logger
    let deadline: StoreDeadline
    let rotationsInDoubt = RotationsInDoubt()
    /// The DPoP replay cache (see `claimProof`).
    let proofs = ProofMemory()

    private init(writer: SQLiteConnection, readers: [SQLiteConnection], threadPool: NIOThreadPool, deadline: Duration, logger: Logger) {
        self.deadline = StoreDeadline(deadline)
        self.writer = writer
        self.readers = readers
        self.threadPool = threadPool
        self.logger = logger
    }

    /// Opens (creating when absent) the database file and its connections. Call `migrate()` before use.
    public static func open(_ configuration: Configuration, logger: Logger) async throws -> SQLiteStore {
        guard ["FULL", "NORMAL", "EXTRA"].contains(configuration.synchronous.uppercased()) else {
            throw StorageError(.unavailable, "storage.sqlite.synchronous must be FULL, NORMAL or EXTRA.")
        }
        let directory = URL(fileURLWithPath: configuration.path).deletingLastPathComponent()
        do {
            try Self.preparePrivateFiles(path: configuration.path, logger: logger)
        } catch {
            throw StorageError(.unavailable, "cannot create the data directory \(directory.path) or the database file", underlying: error)
        }
        let threadPool = NIOThreadPool(numberOfThreads: max(4, configuration.readers + 2))
        threadPool.start()
        let eventLoop = MultiThreadedEventLoopGroup.singleton.any()
        do {
            let writer = try await SQLiteConnection.open(storage: .file(path: configuration.path), threadPool: threadPool, logger: logger, on: eventLoop)
            _ = try await writer.query("PRAGMA journal_mode = WAL")
            _ = try await writer.query("PRAGMA synchronous = \(configuration.synchronous.uppercased())")
            _ = try await writer.query("PRAGMA busy_timeout = 5000")
            _ = try await writer.query("PRAGMA foreign_keys = ON")
            var readers: [SQLiteConnection] = []
            for _ in 0..<max(1, configuration.readers) {
                let reader = try await SQLiteConnection.open(storage: .file(path: configuration.path), threadPool: threadPool, logger: logger, on: eventLoop)
                _ = try await reader.query("PRAGMA busy_timeout = 5000")
                _ = try await reader.query("PRAGMA query_only = ON")
                readers.append(reader)
            }
            return SQLiteStore(writer: writer, readers: readers, threadPool: threadPool, deadline: configuration.deadline, logger: logger)
        } catch let error as SQLiteError {
            try? await threadPool.shutdownGracefully()
            throw StorageError(.unavailable, "cannot open the SQLite database at \(configuration.path): \(error.message)", underlying: error)
        }
    }

    /// The database holds password hashes, sign-ins and enrollments: its directory is created 0700 and
    /// the database file 0600 before SQLite opens it (SQLite gives its `-wal` and `-shm` files the mode of
    /// the database). Files of ours that an older build left readable by others are tightened; a data
    /// directory that others can read is reported, not changed (it may be the operator's own choice).
    static func preparePrivateFiles(path: String, logger: Logger) throws {
        let fm = FileManager.default
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
        if !fm.fileExists(atPath: directory.path) {
            try fm.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } else if let mode = (try? fm.attributesOfItem(atPath: directory.path)[.posixPermissions] as? NSNumber)?.intValue, mode & 0o077 != 0 {
            logger.warning(
                "the data directory is readable by other users; make it 0700",
                metadata: [
                    "portcullis.path": .string(directory.path), "portcullis.mode": .string(String(mode, radix: 8)),
                ])
        }
        if !fm.fileExists(atPath: path), !fm.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) {
            throw StorageError(.unavailable, "cannot create \(path)")
        }
        for file in [path, path + "-wal", path + "-shm"] where fm.fileExists(atPath: file) {
            chmod(file, 0o600)
        }
    }

    var reader: SQLiteConnection {
        readers[nextReader.wrappingAdd(1, ordering: .relaxed).oldValue % readers.count]
    }

    /// Group commit: transactions that arrive while one runs join its SQLite transaction (each in a
    /// savepoint of its own) and all commit together, so that concurrent writers share one fsync. Only
    /// touched by the holder of the gate.
    struct Batch {
        var open = false
        var size = 0
        var members: [CheckedContinuation<Void, any Error>] = []
    }
    let batch = Mutex(Batch())
    static let maximumBatch = 64

    /// Runs `body` as one transaction on the writer, alone: atomically, and durably once it returns — or
    /// `StorageError.unavailable` at the deadline (waiting for the writer included). A transaction whose
    /// deadline passed before its work was done is rolled back; one whose deadline passes during the
    /// commit itself may still commit: `onAbandoned` then receives the outcome (see `rotate`).
    /// Cancellation cannot leave a transaction open: statements run through `WriterStatements`, which waits
    /// on NIO futures (not cancellable) instead of sqlite-nio's async API (which skips queued work of a
    /// cancelled task, ROLLBACK included).
    func transaction<T: Sendable>(
        onTimeout: (@Sendable () -> Void)? = nil,
        onAbandoned: (@Sendable (Result<T, any Error>) async -> Void)? = nil,
        _ body: @escaping @Sendable (WriterStatements) async throws -> T
    ) async throws -> T {
        do {
            return try await deadline.run("SQLite transaction", onTimeout: onTimeout, onAbandoned: onAbandoned) {
                try await self.transactionNow(body)
            }
        } catch let error as StorageError where error.code == .unavailable {
            rotationsInDoubt.storeFailed()
            throw error
        }
    }

    private func transactionNow<T: Sendable>(_ body: @Sendable (WriterStatements) async throws -> T) async throws -> T {
        await gate.acquire()
        let db = WriterStatements(connection: writer)
        if Task.isCancelled {
            // The deadline passed while this transaction waited for the writer: it never starts. But an open group
            // may have been handed to it: its members' work is done and they wait for its COMMIT, so commit it now
            // (left open, they would wait for the next writer, however long that takes).
            if batch.withLock({ $0.open }) { try? await commitGroup(db) }
            gate.release()
            throw StorageError(.unavailable, "the deadline passed while waiting for the writer")
        }
        if !batch.withLock({ $0.open }) {
            do {
                _ = try await db.query("BEGIN IMMEDIATE")
            } catch {
                gate.release()
                throw Self.translate(error)
            }
            batch.withLock { $0.open = true }
        }
        let outcome: Result<T, any Error>
        do {
            _ = try await db.query("SAVEPOINT portcullis")
            let value = try await body(db)
            // Past its deadline the caller has been told "unavailable": its work must not commit.
            if Task.isCancelled { throw StorageError(.unavailable, "the deadline passed before the commit") }
            _ = try await db.query("RELEASE portcullis")
            outcome = .success(value)
        } catch {
            _ = try? await db.query("ROLLBACK TO portcullis")
            _ = try? await db.query("RELEASE portcullis")
            outcome = .failure(Self.translate(error))
        }
        let joined = batch.withLock { batch -> Int in
            if case .success = outcome { batch.size += 1 }
            return batch.size
        }
        if gate.hasWaiters && joined < Self.maximumBatch {
            // Hand the open transaction to the next writer; the last one of the group commits for everyone.
            switch outcome {
            case .failure(let error):
                gate.release()
                throw error
            case .success(let value):
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    batch.withLock { $0.members.append(continuation) }
                    gate.release()
                }
                return value
            }
        }
        do {
            try await commitGroup(db)
        } catch {
            gate.release()
            throw error
        }
        gate.release()
        return try outcome.get()
    }

    /// Commits the open group (the gate's holder calls it) and answers its waiting members: `COMMIT`, or on
    /// failure `ROLLBACK` and the error for everyone.
    private func commitGroup(_ db: WriterStatements) async throws {
        let members = batch.withLock { batch -> [CheckedContinuation<Void, any Error>] in
            let members = batch.members
            batch = Batch()
            return members
        }
        do {
            _ = try await db.query("COMMIT")
        } catch {
            _ = try? await db.query("ROLLBACK")
            let translated = Self.translate(error)
            for member in members { member.resume(throwing: translated) }
            throw translated
        }
        for member in members { member.resume() }
    }

    /// Reads on a reader connection, translating errors.
    func read(_ sql: String, _ binds: [SQLiteData] = []) async throws -> [SQLiteRow] {
        let reader = self.reader
        do {
            let future: EventLoopFuture<[SQLiteRow]> = reader.query(sql, binds)
            return try await deadline.run("SQLite read", future: future)
        } catch let error as StorageError where error.code == .unavailable {
            rotationsInDoubt.storeFailed()
            throw error
        } catch {
            let translated = Self.translate(error)
            if (translated as? StorageError)?.code == .unavailable { rotationsInDoubt.storeFailed() }
            throw translated
        }
    }

    static func translate(_ error: any Error) -> any Error {
        guard let error = error as? SQLiteError else { return error }
        switch error.reason {
        case .constraintUniqueFailed, .constraintPrimaryKeyFailed:
            return StorageError(.duplicate, error.message, underlying: error)
        case .constraint, .constraintCheckFailed, .constraintForeignKeyFailed, .constraintNotNullFailed:
            return StorageError(.constraint, error.message, underlying: error)
        case .corrupt, .notADatabase:
            return StorageError(.corrupt, error.message, underlying: error)
        default:
            return StorageError(.unavailable, error.message, underlying: error)
        }
    }

    public func migrate() async throws {
        try await StoreDeadline.forMaintenance { try await migrateNow() }
    }

    private func migrateNow() async throws {
        let applied = try await transaction { db in
            _ = try await db.query("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at REAL NOT NULL)")
            return Set(try await db.query("SELECT version FROM schema_migrations").compactMap { $0.column("version")?.integer })
        }
        for migration in SQLiteMigrations.all where !applied.contains(migration.version) {
            try await transaction { db in
                if migration.version == StoreUpgrade.installationIdentifiersVersion {
                    let rows = try await db.query(
                        """
                        SELECT CASE kind WHEN 'application' THEN 'application' ELSE 'directoryObject' END AS namespace, id,
                               group_concat(kind || ' of tenant ' || tenant_id, ', ') AS owners
                        FROM documents WHERE kind IN ('user', 'group', 'application') GROUP BY namespace, id HAVING COUNT(*) > 1 ORDER BY id LIMIT 100
                        """)
                    try StoreUpgrade.checkInstallationIdentifiers(try rows.map { (try $0.string("id"), try $0.string("owners")) })
                }
                for statement in migration.statements { _ = try await db.query(statement) }
                _ = try await db.query(
                    "INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)",
                    [.integer(migration.version), .float(Date().timeIntervalSince1970)])
            }
            logger.info("applied SQLite migration", metadata: ["portcullis.migration": "\(migration.version)"])
        }
        // The DPoP proofs of the last two minutes, so that a restart does not forget them.
        try await loadProofs(now: Date())
        // One process writes this file: a replay leased before a restart was this process's own, cut short (a crash): it
        // runs again now, not when its lease would have run out.
        try await transaction { db in
            _ = try await db.query("UPDATE policy_replays SET lease_owner = NULL, lease_until = NULL WHERE lease_owner IS NOT NULL")
        }
    }

    public func ping() async throws {
        _ = try await read("SELECT 1")
    }

    public func close() async throws {
        await drainProofs()
        for reader in readers { try? await reader.close() }
        try? await writer.close()
        try await threadPool.shutdownGracefully()
    }
}

/// The writer connection inside a transaction: every statement runs to completion once submitted, even
/// if the task that submitted it is cancelled meanwhile.
struct WriterStatements: Sendable {
    let connection: SQLiteConnection

    func query(_ sql: String, _ binds: [SQLiteData] = []) async throws -> [SQLiteRow] {
        let future: EventLoopFuture<[SQLiteRow]> = connection.query(sql, binds)
        return try await future.get()
    }
}

extension SQLiteRow {
    /// A stored identifier (stored in normal form; read through `Identifier`, which normalises anyway).
    func id<Kind>(_ name: String) throws -> Identifier<Kind> { Identifier(try string(name)) }

    func string(_ name: String) throws -> String {
        guard let value = column(name)?.string else { throw StorageError(.corrupt, "column \(name) is missing") }
        return value
    }
    func optionalString(_ name: String) -> String? {
        guard let value = column(name), !value.isNull else { return nil }
        return value.string
    }
    func int(_ name: String) throws -> Int64 {
        guard let value = column(name)?.integer else { throw StorageError(.corrupt, "column \(name) is missing") }
        return Int64(value)
    }
    func date(_ name: String) throws -> Date {
        guard let value = column(name)?.double else { throw StorageError(.corrupt, "column \(name) is missing") }
        return Date(timeIntervalSince1970: value)
    }
    func optionalDate(_ name: String) -> Date? {
        guard let value = column(name), !value.isNull, let seconds = value.double else { return nil }
        return Date(timeIntervalSince1970: seconds)
    }
}

extension SQLiteData {
    static func id<Kind>(_ id: Identifier<Kind>) -> SQLiteData { .text(id.rawValue) }
    static func date(_ date: Date) -> SQLiteData { .float(date.timeIntervalSince1970) }
    static func optionalDate(_ date: Date?) -> SQLiteData { date.map { .float($0.timeIntervalSince1970) } ?? .null }
    static func optionalText(_ text: String?) -> SQLiteData { text.map { .text($0) } ?? .null }
}
