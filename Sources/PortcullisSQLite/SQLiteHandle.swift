import NIOCore
import NIOPosix
import SQLiteNIO
import Synchronization
import VaporCSQLite

/// A failed SQLite call: its extended result code and SQLite's message.
struct SQLiteFailure: Error, CustomStringConvertible {
    let code: Int32
    let message: String

    var description: String { message }

    static let busy: Int32 = 5
    static let interrupted: Int32 = 9
    static let constraint: Int32 = 19
    static let corrupt: Int32 = 11
    static let notADatabase: Int32 = 26
    static let constraintUnique: Int32 = 2067
    static let constraintPrimaryKey: Int32 = 1555
}

/// A row of a result: values by position, the statement's column names shared by all its rows.
struct StoredRow: Sendable {
    let columns: ColumnNames
    let values: [SQLiteData]

    /// The value of the first column of that name.
    func column(_ name: String) -> SQLiteData? {
        columns.offsets[name].map { values[$0] }
    }
}

/// A statement's column names, looked up by name.
final class ColumnNames: Sendable {
    let offsets: [String: Int]

    init(_ names: [String]) {
        var offsets: [String: Int] = [:]
        for (offset, name) in names.enumerated() where offsets[name] == nil { offsets[name] = offset }
        self.offsets = offsets
    }
}

/// One SQLite connection, called from one thread at a time (its owner hands it to one job at a time), with its prepared
/// statements kept: the store's statements are a fixed set of texts, parsed once per connection instead of on every call.
/// SQLite itself is the copy sqlite-nio builds in (its symbols prefixed); the connection is opened without SQLite's own
/// mutex, which the one-job-at-a-time rule makes unnecessary.
final class SQLiteHandle: @unchecked Sendable {
    private var db: OpaquePointer?
    private var statements: [String: (statement: OpaquePointer, columns: ColumnNames)] = [:]
    /// Statements kept at most (texts built with a variable number of placeholders vary); beyond it the cache starts over.
    static let statementLimit = 256
    /// A bound text or blob longer than this is not kept in its statement after the call.
    static let largeBinding = 16 * 1024

    init(path: String) throws {
        let flags = SQLITE_OPEN_CREATE | SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI | SQLITE_OPEN_EXRESCODE
        var handle: OpaquePointer?
        let result = sqlite_nio_sqlite3_open_v2(path, &handle, flags, nil)
        guard result == SQLITE_OK, let handle else {
            let message = handle.flatMap { sqlite_nio_sqlite3_errmsg($0) }.map { String(cString: $0) } ?? "cannot open the database"
            if let handle { sqlite_nio_sqlite3_close_v2(handle) }
            throw SQLiteFailure(code: result, message: message)
        }
        db = handle
    }

    deinit { close() }

    /// Statements prepared and kept now.
    var cachedStatements: Int { statements.count }

    /// Stops the statement running now, if any, with an error (any thread may call it while the connection is open).
    func interrupt() {
        if let db { sqlite_nio_sqlite3_interrupt(db) }
    }

    /// Asked before each statement: `true` fails it with `SQLITE_INTERRUPT` (a read whose deadline passed between two of
    /// its statements; one running then is stopped by `interrupt`). Set once, before the connection is used.
    var stopped: (@Sendable () -> Bool)?

    func close() {
        for (statement, _) in statements.values { sqlite_nio_sqlite3_finalize(statement) }
        statements.removeAll()
        if let db { sqlite_nio_sqlite3_close_v2(db) }
        db = nil
    }

    private func failure(_ code: Int32) -> SQLiteFailure {
        SQLiteFailure(code: code, message: db.flatMap { sqlite_nio_sqlite3_errmsg($0) }.map { String(cString: $0) } ?? "SQLite error \(code)")
    }

    /// Runs one statement (the first of `sql`) with `binds`; its rows.
    func execute(_ sql: String, _ binds: [SQLiteData] = []) throws -> [StoredRow] {
        guard let db else { throw SQLiteFailure(code: SQLITE_MISUSE, message: "the connection is closed") }
        if let stopped, stopped() { throw SQLiteFailure(code: SQLITE_INTERRUPT, message: "interrupted") }
        let prepared: (statement: OpaquePointer, columns: ColumnNames)
        if let cached = statements[sql] {
            prepared = cached
        } else {
            var statement: OpaquePointer?
            let result = sqlite_nio_sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
            guard result == SQLITE_OK else { throw failure(result) }
            // A text of only a comment or whitespace prepares to nothing.
            guard let statement else { return [] }
            let count = sqlite_nio_sqlite3_column_count(statement)
            let names = (0..<count).map { column in sqlite_nio_sqlite3_column_name(statement, column).map { String(cString: $0) } ?? "" }
            if statements.count >= Self.statementLimit {
                for (old, _) in statements.values { sqlite_nio_sqlite3_finalize(old) }
                statements.removeAll(keepingCapacity: true)
            }
            prepared = (statement, ColumnNames(names))
            statements[sql] = prepared
        }
        let statement = prepared.statement
        // Bindings stay until the next call binds anew, except large ones: clearing them makes SQLite prepare the statement
        // again on its next use when a partial index was weighed against a bound value (seen on every read of the refresh
        // path), so they are cleared only where holding the value would cost memory.
        var large = false
        defer {
            sqlite_nio_sqlite3_reset(statement)
            if large { sqlite_nio_sqlite3_clear_bindings(statement) }
        }
        // A call that binds fewer values than the statement has parameters gets NULL for the rest, as a fresh statement
        // would, never a value an earlier call left.
        if Int(sqlite_nio_sqlite3_bind_parameter_count(statement)) != binds.count { sqlite_nio_sqlite3_clear_bindings(statement) }
        for (offset, value) in binds.enumerated() {
            let index = Int32(offset + 1)
            let result: Int32
            switch value {
            case .integer(let integer): result = sqlite_nio_sqlite3_bind_int64(statement, index, Int64(integer))
            case .float(let double): result = sqlite_nio_sqlite3_bind_double(statement, index, double)
            case .null: result = sqlite_nio_sqlite3_bind_null(statement, index)
            case .text(let text):
                var text = text
                large = large || text.utf8.count > Self.largeBinding
                result = text.withUTF8 { bytes in
                    guard let start = bytes.baseAddress else {
                        return sqlite_nio_sqlite3_bind_text64(statement, index, "", 0, Self.transient, UInt8(SQLITE_UTF8))
                    }
                    return start.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                        sqlite_nio_sqlite3_bind_text64(statement, index, $0, UInt64(bytes.count), Self.transient, UInt8(SQLITE_UTF8))
                    }
                }
            case .blob(let buffer):
                large = large || buffer.readableBytes > Self.largeBinding
                result = buffer.withUnsafeReadableBytes { bytes in
                    sqlite_nio_sqlite3_bind_blob64(statement, index, bytes.baseAddress, UInt64(bytes.count), Self.transient)
                }
            }
            guard result == SQLITE_OK else { throw failure(result) }
        }
        var rows: [StoredRow] = []
        let width = sqlite_nio_sqlite3_column_count(statement)
        while true {
            let step = sqlite_nio_sqlite3_step(statement)
            if step == SQLITE_DONE { return rows }
            guard step == SQLITE_ROW else { throw failure(step) }
            var values: [SQLiteData] = []
            values.reserveCapacity(Int(width))
            for column in 0..<width { values.append(value(statement, column)) }
            rows.append(StoredRow(columns: prepared.columns, values: values))
        }
    }

    private func value(_ statement: OpaquePointer, _ column: Int32) -> SQLiteData {
        switch sqlite_nio_sqlite3_column_type(statement, column) {
        case SQLITE_INTEGER:
            return .integer(Int(sqlite_nio_sqlite3_column_int64(statement, column)))
        case SQLITE_FLOAT:
            return .float(sqlite_nio_sqlite3_column_double(statement, column))
        case SQLITE_TEXT:
            guard let text = sqlite_nio_sqlite3_column_text(statement, column) else { return .text("") }
            let count = Int(sqlite_nio_sqlite3_column_bytes(statement, column))
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let count = Int(sqlite_nio_sqlite3_column_bytes(statement, column))
            guard let bytes = sqlite_nio_sqlite3_column_blob(statement, column), count > 0 else { return .blob(ByteBuffer()) }
            return .blob(ByteBuffer(bytes: UnsafeRawBufferPointer(start: bytes, count: count)))
        default:
            return .null
        }
    }

    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}

/// Threads of SQLite's own, each job run to its end on one of them with a connection of its own: the caller waits for the
/// whole job (a transaction, or a read) once, rather than for a hop to the thread and back per statement.
final class SQLiteThreads: Sendable {
    private let pool: NIOThreadPool
    private let idle: Mutex<[SQLiteHandle]>
    private let connections: [SQLiteHandle]

    /// One thread per connection.
    init(_ connections: [SQLiteHandle]) {
        pool = NIOThreadPool(numberOfThreads: connections.count)
        idle = Mutex(connections)
        self.connections = connections
        pool.start()
    }

    /// Runs `job` with a free connection on one of the threads (there is one for each thread, so one is always free).
    func submit(_ job: @escaping @Sendable (SQLiteHandle?) -> Void) {
        pool.submit { state in
            guard case .active = state, let connection = self.idle.withLock({ $0.popLast() }) else { return job(nil) }
            job(connection)
            self.idle.withLock { $0.append(connection) }
        }
    }

    /// Closes every connection and stops the threads; `interrupting`, a statement still running (a read nobody waits for)
    /// is stopped rather than waited for.
    func close(interrupting: Bool) async throws {
        if interrupting { for connection in connections { connection.interrupt() } }
        try await pool.shutdownGracefully()
        let connections = idle.withLock { connections -> [SQLiteHandle] in
            defer { connections.removeAll() }
            return connections
        }
        for connection in connections { connection.close() }
    }
}

/// Reader connections used on the calling task's own thread: a read that finds one free runs there and then, without a
/// hop to a reader's thread and back (two context switches and two hand-offs each). A read that finds none free, or that
/// would have to wait for a lock, takes the hop instead (`SQLiteThreads`). The deadline stops a read here with
/// `sqlite3_interrupt` (the statement running when it passes) and before each statement it would start after.
final class InlineReaders: Sendable {
    /// One connection, and whether the deadline of its use in progress has passed.
    final class Reader: Sendable {
        let connection: SQLiteHandle
        private struct Uses {
            /// The use in progress, or the last one ended (numbers grow with every begin and end).
            var current: UInt64 = 0
            /// The last use whose deadline passed while it was in progress.
            var expired: UInt64 = .max
        }
        private let uses = Mutex(Uses())

        init(_ connection: SQLiteHandle) {
            self.connection = connection
            connection.stopped = { [unowned self] in uses.withLock { $0.expired == $0.current } }
        }

        /// Begins a use; its number, for `expire`.
        func begin() -> UInt64 {
            uses.withLock {
                $0.current &+= 1
                return $0.current
            }
        }
        /// Ends the use in progress: its deadline can no longer stop anything.
        func end() { uses.withLock { $0.current &+= 1 } }
        func isDone(_ use: UInt64) -> Bool { uses.withLock { $0.current != use } }

        /// Stops `use` if it is still in progress — under the lock, so that a later use is never interrupted.
        func expire(_ use: UInt64) {
            uses.withLock {
                guard $0.current == use else { return }
                $0.expired = use
                connection.interrupt()
            }
        }
        /// Stops whatever use is in progress (closing).
        func expireCurrent() { expire(uses.withLock { $0.current }) }
    }

    private struct State {
        var idle: [Reader]
        var closed = false
    }
    private let state: Mutex<State>
    private let readers: [Reader]

    init(_ connections: [SQLiteHandle]) {
        readers = connections.map(Reader.init)
        state = Mutex(State(idle: readers))
    }

    /// A free reader, or nil when all are in use (or closed).
    func take() -> Reader? {
        state.withLock { $0.closed ? nil : $0.idle.popLast() }
    }

    func give(_ reader: Reader) {
        let closed = state.withLock { state -> Bool in
            if !state.closed { state.idle.append(reader) }
            return state.closed
        }
        if closed { reader.connection.close() }
    }

    /// Stops the reads running now and closes the free connections; one in use is closed when it is given back.
    func close() {
        let idle = state.withLock { state -> [Reader] in
            state.closed = true
            // Under the lock: a reader given back after this closes its connection, never while it is being stopped here.
            for reader in readers where !state.idle.contains(where: { $0 === reader }) { reader.expireCurrent() }
            defer { state.idle.removeAll() }
            return state.idle
        }
        for reader in idle { reader.connection.close() }
    }
}
