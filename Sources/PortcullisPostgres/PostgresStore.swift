import Foundation
public import Logging
import PortcullisCore
public import PortcullisStorage
public import PostgresNIO

/// The scale-out store: several stateless Portcullis nodes share one PostgreSQL database. Same tables,
/// constraints and behaviour as the SQLite store (one conformance suite runs against both). The
/// `PostgresClient` is a `Service`: run it (`client.run()`) for as long as the store is used.
public final class PostgresStore: PortcullisStore {
    public struct Configuration: Sendable {
        public var url: String
        public var maximumConnections: Int
        public var connectTimeout: Duration
        /// PEM file of the CA that signs the server's certificate (else `sslrootcert` in the URL, else the system's roots).
        public var caFile: String?
        /// No operation waits longer (PROTOCOL §2.4); then the caller gets `StorageError.unavailable`.
        public var deadline: Duration

        public init(
            url: String, maximumConnections: Int = 20, connectTimeout: Duration = .seconds(1), caFile: String? = nil,
            deadline: Duration = .seconds(2)
        ) {
            self.deadline = deadline
            self.url = url
            self.caFile = caFile
            self.maximumConnections = maximumConnections
            self.connectTimeout = connectTimeout
        }
    }

    public let client: PostgresClient
    let url: PostgresURL
    let logger: Logger
    let deadline: StoreDeadline
    /// DPoP claims gathered into one statement (see `claimProof`).
    let proofClaims = ProofClaims()
    let breaker = Breaker()
    let rotationsInDoubt = RotationsInDoubt()

    public init(_ configuration: Configuration, logger: Logger) throws {
        var url = try PostgresURL(configuration.url)
        if let caFile = configuration.caFile { url.sslRootCert = caFile }
        var clientConfiguration = url.clientConfiguration()
        clientConfiguration.options.maximumConnections = max(1, configuration.maximumConnections)
        // One connection is always kept (or being made): the pool only replaces a closed connection below its
        // minimum, so without it requests queued when every connection died would wait for a new request.
        clientConfiguration.options.minimumConnections = 1
        clientConfiguration.options.connectTimeout = configuration.connectTimeout
        clientConfiguration.options.additionalStartupParameters = [
            ("application_name", "portcullis"), ("idle_in_transaction_session_timeout", "30s"), ("statement_timeout", "30s"),
        ]
        self.url = url
        self.logger = logger
        self.deadline = StoreDeadline(configuration.deadline)
        self.client = PostgresClient(configuration: clientConfiguration, backgroundLogger: logger)
    }

    /// Connects once, directly, so that a wrong URL, password or database fails at start-up with a clear
    /// message instead of the pool's minute of silent retries.
    public func preflight(timeout: Duration = .seconds(10)) async throws {
        var configuration = try url.connectionConfiguration()
        configuration.options.connectTimeout = .seconds(Int64(timeout.components.seconds))
        do {
            let connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
            do {
                try await connection.query("SELECT 1", logger: logger)
            } catch {
                try? await connection.close()
                throw error
            }
            try await connection.close()
        } catch {
            let state = error.postgresSQLState
            let reason =
                switch state {
                case "28P01": "authentication failed (wrong user or password)"
                case "3D000": "the database does not exist"
                case "28000": "the server refused the connection (pg_hba.conf)"
                default: state.map { "SQLSTATE \($0)" } ?? "cannot connect"
                }
            throw StorageError(.unavailable, "PostgreSQL at \(url.redacted): \(reason)", underlying: error)
        }
    }

    // MARK: Queries (execution, deadline and breaker in PostgresStore+Execution.swift)

    /// Runs one statement on a pooled connection and returns every row (errors surface here, not later).
    func rows(_ query: PostgresQuery) async throws -> [PostgresRow] {
        try await execute("PostgreSQL query") { connection in
            try await Self.guarded(connection) { try await connection.query(query, logger: self.logger).collect() }
        }
    }

    /// Runs `body` in one transaction; a throw rolls it back. Past the deadline before its `COMMIT` is sent,
    /// the transaction is rolled back (its connection closed). `inDoubt` names a write whose outcome matters
    /// to its client (a refresh-token rotation): when the deadline passes during the commit, or the
    /// connection dies after `COMMIT` was sent, the key is held in doubt and `undo` runs in the background
    /// once the store answers (see `RotationsInDoubt`).
    func transaction<T: Sendable>(
        inDoubt: (key: String, undo: @Sendable () async throws -> Void)? = nil,
        _ body: @escaping @Sendable (Statements) async throws -> T
    ) async throws -> T {
        let commitSent = CommitSent()
        let timedOut = CommitSent()
        let tracker = rotationsInDoubt
        do {
            return try await execute(
                "PostgreSQL transaction",
                onTimeout: {
                    timedOut.mark()
                    if let inDoubt { tracker.insert(inDoubt.key) }
                },
                onAbandoned: { outcome in
                    guard let inDoubt else { return }
                    if case .success = outcome {
                        tracker.settle(inDoubt.key, undo: inDoubt.undo)
                    } else if commitSent.value {
                        tracker.settle(inDoubt.key, undo: inDoubt.undo)
                    } else {
                        tracker.remove(inDoubt.key)
                    }
                }
            ) { connection in
                let db = Statements(connection: connection, logger: self.logger)
                try await db.query("BEGIN")
                let value: T
                do {
                    value = try await body(db)
                    // Past its deadline the caller has been told "unavailable": its work must not commit.
                    if Task.isCancelled { throw StorageError(.unavailable, "the deadline passed before the commit") }
                } catch {
                    if !connection.isClosed { _ = try? await db.query("ROLLBACK") }
                    throw error
                }
                commitSent.mark()
                try await db.query("COMMIT")
                return value
            }
        } catch {
            // Answered with an error before the deadline, after COMMIT was sent: the outcome is unknown.
            if let inDoubt, commitSent.value, !timedOut.value { tracker.settle(inDoubt.key, undo: inDoubt.undo) }
            throw error
        }
    }

    /// Statements inside a transaction. Each waits for its answer or for the connection to close, whichever
    /// comes first (postgres-nio can lose a query written to a connection that is closing: it would wait for ever).
    struct Statements: Sendable {
        let connection: PostgresConnection
        let logger: Logger

        @discardableResult
        func query(_ query: PostgresQuery) async throws -> [PostgresRow] {
            let connection = self.connection
            let logger = self.logger
            return try await PostgresStore.guarded(connection) { try await connection.query(query, logger: logger).collect() }
        }
    }

    static func translate(_ error: any Error) -> any Error {
        if error is StorageError { return error }
        if let transaction = error as? PostgresTransactionError,
            let inner = transaction.closureError ?? transaction.commitError ?? transaction.beginError, inner is StorageError
        {
            return inner
        }
        switch error.postgresSQLState {
        case "23505": return StorageError(.duplicate, "a unique key is already taken", underlying: error)
        case let state? where state.hasPrefix("23"): return StorageError(.constraint, "a constraint refused the write (SQLSTATE \(state))", underlying: error)
        case let state?: return StorageError(.unavailable, "PostgreSQL error SQLSTATE \(state)", underlying: error)
        case nil: return StorageError(.unavailable, "PostgreSQL is unavailable", underlying: error)
        }
    }

    public func migrate() async throws {
        try await StoreDeadline.forMaintenance { try await migrateNow() }
    }

    private func migrateNow() async throws {
        try await transaction { db in
            // Nodes starting together must not race: one runs the migrations, the others wait for it.
            try await db.query("SELECT pg_advisory_xact_lock(\(Int64(0x706F_7274)))")
            try await db.query("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at DOUBLE PRECISION NOT NULL)")
            var applied = Set<Int>()
            for row in try await db.query("SELECT version FROM schema_migrations") { applied.insert(try row.decode(Int.self)) }
            for migration in PostgresMigrations.all where !applied.contains(migration.version) {
                if migration.version == StoreUpgrade.installationIdentifiersVersion {
                    let rows = try await db.query(
                        """
                        SELECT id, string_agg(kind || ' of tenant ' || tenant_id, ', ' ORDER BY tenant_id) FROM documents
                        WHERE kind IN ('user', 'group', 'application')
                        GROUP BY (CASE kind WHEN 'application' THEN 'application' ELSE 'directoryObject' END), id HAVING COUNT(*) > 1 ORDER BY id LIMIT 100
                        """)
                    try StoreUpgrade.checkInstallationIdentifiers(try rows.map { try $0.decode((String, String).self) })
                }
                for statement in migration.statements { try await db.query(PostgresQuery(unsafeSQL: statement)) }
                try await db.query("INSERT INTO schema_migrations (version, applied_at) VALUES (\(migration.version), \(Date().timeIntervalSince1970))")
                self.logger.info("applied PostgreSQL migration", metadata: ["portcullis.migration": "\(migration.version)"])
            }
        }
    }

    public func ping() async throws {
        _ = try await rows("SELECT 1")
    }

    public func close() async throws {}
}

extension Error {
    /// The SQLSTATE of a PostgreSQL error, looking through transaction wrappers.
    var postgresSQLState: String? {
        if let error = self as? PSQLError { return error.serverInfo?[.sqlState] }
        if let transaction = self as? PostgresTransactionError {
            return (transaction.closureError ?? transaction.commitError ?? transaction.beginError)?.postgresSQLState
        }
        return nil
    }
}

extension Date {
    var seconds: Double { timeIntervalSince1970 }
    init(seconds: Double) { self.init(timeIntervalSince1970: seconds) }
}

extension Optional where Wrapped == Date {
    var seconds: Double? { self?.timeIntervalSince1970 }
}

/// WHERE clauses with a variable number of conditions, every value a bound parameter.
struct Conditions {
    var binds = PostgresBindings()
    var clauses: [String] = []

    /// `sql` receives the placeholder (`$3`); only literal SQL goes in it.
    mutating func add(_ value: some PostgresDynamicTypeEncodable, _ sql: (String) -> String) {
        binds.append(value)
        clauses.append(sql("$\(binds.count)"))
    }

    mutating func bind(_ value: some PostgresDynamicTypeEncodable) -> String {
        binds.append(value)
        return "$\(binds.count)"
    }

    var sql: String { clauses.isEmpty ? "TRUE" : clauses.joined(separator: " AND ") }
}
