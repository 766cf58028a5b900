import Foundation
public import Logging
import NIOCore
import PortcullisCore
public import PortcullisStorage
import SQLiteNIO
import Synchronization

/// The embedded default store: one SQLite file in WAL mode, one writer connection on a thread of its own (transactions
/// run there one after another, with group commit) and a few reader connections, each on a thread of its own, that read
/// concurrently with it. Statements are prepared once per connection.
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

        /// Reader connections used on the calling task's thread (a read that finds none free takes a reader's thread).
        public var inlineReaders: Int
        /// The threads Swift runs tasks on here (one per core), at least two.
        public static var threadsRunningTasks: Int { max(2, System.coreCount) }

        public init(
            path: String, readers: Int = 2, inlineReaders: Int = Configuration.threadsRunningTasks, synchronous: String = "FULL",
            deadline: Duration = .seconds(2)
        ) {
            self.path = path
            self.readers = readers
            self.inlineReaders = inlineReaders
            self.synchronous = synchronous
            self.deadline = deadline
        }
    }

    let writer: SQLiteWriter
    /// Reader connections, each on a thread of its own (SQLite's calls block; a read must not wait for a commit's fsync).
    let readers: SQLiteThreads
    let logger: Logger
    let deadline: StoreDeadline
    let rotationsInDoubt = RotationsInDoubt()
    /// Reader connections for reads on the caller's own thread (see `reading`).
    let inlineReaders: InlineReaders
    /// Reads that took a reader's thread (every inline reader was in use, or a lock was in the way), for tests.
    let readsOnReaderThreads = Atomic<Int>(0)
    /// The DPoP replay cache (see `claimProof`).
    let proofs = ProofMemory()

    private init(writer: SQLiteHandle, readers: [SQLiteHandle], inlineReaders: [SQLiteHandle], deadline: Duration, logger: Logger) {
        self.deadline = StoreDeadline(deadline)
        self.writer = SQLiteWriter(writer)
        self.readers = SQLiteThreads(readers)
        self.inlineReaders = InlineReaders(inlineReaders)
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
        do {
            // Start-up: the connections are opened here, before any request.
            let writer = try SQLiteHandle(path: configuration.path)
            for pragma in ["busy_timeout = 5000", "journal_mode = WAL", "synchronous = \(configuration.synchronous.uppercased())", "foreign_keys = ON"] {
                _ = try writer.execute("PRAGMA \(pragma)")
            }
            func readers(_ count: Int, busyTimeout milliseconds: Int) throws -> [SQLiteHandle] {
                try (0..<max(1, count)).map { _ in
                    let reader = try SQLiteHandle(path: configuration.path)
                    _ = try reader.execute("PRAGMA busy_timeout = \(milliseconds)")
                    _ = try reader.execute("PRAGMA query_only = ON")
                    return reader
                }
            }
            // The inline readers never wait for a lock (busy_timeout 0: the read takes a reader's thread, which waits).
            return SQLiteStore(
                writer: writer, readers: try readers(configuration.readers, busyTimeout: 5000),
                inlineReaders: try readers(configuration.inlineReaders, busyTimeout: 0), deadline: configuration.deadline, logger: logger)
        } catch let error as SQLiteFailure {
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

    /// Runs `body` as one transaction on the writer, on its thread: atomically, and durably once it returns — or
    /// `StorageError.unavailable` at the deadline (waiting for the writer included). A transaction whose deadline passed
    /// before its work was done is rolled back (or never starts); one whose deadline passes during the commit itself may
    /// still commit: `onAbandoned` then receives the outcome (see `rotate`). Its statements run to their end whatever
    /// happens to the caller meanwhile.
    func transaction<T: Sendable>(
        onTimeout: (@Sendable () -> Void)? = nil,
        onAbandoned: (@Sendable (Result<T, any Error>) async -> Void)? = nil,
        _ body: @escaping @Sendable (WriterStatements) throws -> T
    ) async throws -> T {
        do {
            return try await deadline.run("SQLite transaction", onTimeout: onTimeout) { (ticket: DeadlineTicket<T>) in
                let value = ResultBox<T>()
                writer.submit(
                    WriteJob(
                        isAnswered: { ticket.isAnswered },
                        perform: { db in value.value = try body(db) },
                        complete: { outcome in
                            let result = outcome.flatMap { () -> Result<T, any Error> in
                                guard let value = value.value else { return .failure(StorageError(.unavailable, "the transaction returned nothing")) }
                                return .success(value)
                            }
                            if !ticket.finish(result), let onAbandoned { Task { await onAbandoned(result) } }
                        }))
            }
        } catch let error as StorageError where error.code == .unavailable {
            rotationsInDoubt.storeFailed()
            throw error
        }
    }

    /// Reads on a reader connection, translating errors.
    func read(_ sql: String, _ binds: [SQLiteData] = []) async throws -> [StoredRow] {
        try await reading { db in try db.execute(sql, binds) }
    }

    /// A read of a few rows by an index's key (the token path's reads): short enough to run on the caller's thread, which it
    /// does when an inline reader is free.
    func lookup(_ sql: String, _ binds: [SQLiteData] = []) async throws -> [StoredRow] {
        try await reading(inline: true) { db in try db.execute(sql, binds) }
    }

    /// Several reads on one reader connection, the caller waiting once for all of them. `inline`: reads by key, run on the
    /// caller's thread when one of the inline readers is free and no lock is in the way (the threads that run tasks are as
    /// many as the cores: a scan there would hold up every request behind it); else on a reader's thread.
    func reading<T: Sendable>(inline: Bool = false, _ body: @escaping @Sendable (SQLiteHandle) throws -> T) async throws -> T {
        if inline, let reader = inlineReaders.take() {
            defer { inlineReaders.give(reader) }
            if let value = try readInline(reader, body) { return value }
        }
        readsOnReaderThreads.add(1, ordering: .relaxed)
        do {
            return try await deadline.run("SQLite read") { (ticket: DeadlineTicket<T>) in
                readers.submit { connection in
                    // Answered at the deadline while it waited: nobody wants the answer any more.
                    guard !ticket.isAnswered else { return }
                    guard let connection else {
                        ticket.finish(.failure(StorageError(.unavailable, "the store is closed")))
                        return
                    }
                    ticket.finish(Result { try body(connection) }.mapError { Self.translate($0) })
                }
            }
        } catch let error as StorageError where error.code == .unavailable {
            rotationsInDoubt.storeFailed()
            throw error
        }
    }

    /// `body` on `reader` under the deadline; nil when SQLite would have had to wait for a lock (the inline connections do
    /// not wait: the caller's thread is one of the few that run every task).
    private func readInline<T>(_ reader: InlineReaders.Reader, _ body: (SQLiteHandle) throws -> T) throws -> T? {
        let use = reader.begin()
        defer { reader.end() }
        let duration = deadline.watch(done: { reader.isDone(use) }, expire: { reader.expire(use) })
        do {
            return try body(reader.connection)
        } catch let failure as SQLiteFailure where failure.code & 0xff == SQLiteFailure.busy {
            return nil
        } catch let failure as SQLiteFailure where failure.code == SQLiteFailure.interrupted {
            rotationsInDoubt.storeFailed()
            throw StorageError(.unavailable, "the store did not answer within \(duration) (SQLite read)", underlying: failure)
        } catch {
            let translated = Self.translate(error)
            if let storage = translated as? StorageError, storage.code == .unavailable { rotationsInDoubt.storeFailed() }
            throw translated
        }
    }

    static func translate(_ error: any Error) -> any Error {
        guard let error = error as? SQLiteFailure else { return error }
        switch error.code {
        case SQLiteFailure.constraintUnique, SQLiteFailure.constraintPrimaryKey:
            return StorageError(.duplicate, error.message, underlying: error)
        case _ where error.code & 0xff == SQLiteFailure.constraint:
            return StorageError(.constraint, error.message, underlying: error)
        case _ where error.code & 0xff == SQLiteFailure.corrupt || error.code & 0xff == SQLiteFailure.notADatabase:
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
            _ = try db.query("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at REAL NOT NULL)")
            return Set(try db.query("SELECT version FROM schema_migrations").compactMap { $0.column("version")?.integer })
        }
        for migration in SQLiteMigrations.all where !applied.contains(migration.version) {
            try await transaction { db in
                if migration.version == StoreUpgrade.installationIdentifiersVersion {
                    let rows = try db.query(
                        """
                        SELECT CASE kind WHEN 'application' THEN 'application' ELSE 'directoryObject' END AS namespace, id,
                               group_concat(kind || ' of tenant ' || tenant_id, ', ') AS owners
                        FROM documents WHERE kind IN ('user', 'group', 'application') GROUP BY namespace, id HAVING COUNT(*) > 1 ORDER BY id LIMIT 100
                        """)
                    try StoreUpgrade.checkInstallationIdentifiers(try rows.map { (try $0.string("id"), try $0.string("owners")) })
                }
                for statement in migration.statements { _ = try db.query(statement) }
                _ = try db.query(
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
            _ = try db.query("UPDATE policy_replays SET lease_owner = NULL, lease_until = NULL WHERE lease_owner IS NOT NULL")
        }
    }

    public func ping() async throws {
        _ = try await read("SELECT 1")
    }

    public func close() async throws {
        await drainProofs()
        inlineReaders.close()
        try await readers.close(interrupting: true)
        try await writer.close()
    }
}

/// The writer connection inside a transaction, on the writer's thread.
struct WriterStatements: @unchecked Sendable {
    let connection: SQLiteHandle

    func query(_ sql: String, _ binds: [SQLiteData] = []) throws -> [StoredRow] {
        try connection.execute(sql, binds)
    }
}

/// A transaction's value, from its work to its answer (both on the writer's thread).
final class ResultBox<T>: @unchecked Sendable {
    var value: T?
}

extension StoredRow {
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
