import Foundation
import Logging
import PortcullisCore
public import PortcullisPostgres
import PostgresNIO

/// Throwaway databases on the server `POSTGRES_URL` names (`.ci/run` starts a cluster and sets it).
public enum PostgresTestDatabase {
    public static var serverURL: String? { ProcessInfo.processInfo.environment["POSTGRES_URL"] }

    /// Whether the PostgreSQL suites run: when a server is named, and always under `CI=true` — there a missing server
    /// fails them instead of skipping them, so a green CI run never hides untested PostgreSQL code.
    public static var suitesEnabled: Bool { serverURL != nil || ProcessInfo.processInfo.environment["CI"] == "true" }

    static let logger: Logger = {
        var logger = Logger(label: "postgres-test")
        logger.logLevel = .critical
        return logger
    }()

    /// Creates an empty database and returns its URL.
    public static func create() async throws -> (name: String, url: String) {
        guard let server = serverURL, var components = URLComponents(string: server) else { throw PostgresURL.Invalid(description: "POSTGRES_URL is not set") }
        let name = "portcullis_test_\(UUID().identifierText.replacingOccurrences(of: "-", with: ""))"
        try await withAdminConnection { try await $0.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: logger) }
        components.path = "/\(name)"
        return (name, components.string ?? server)
    }

    /// An empty database for the body's duration (its name and URL), dropped (and awaited) when the body returns or throws.
    public static func with<T>(_ body: (_ name: String, _ url: String) async throws -> T) async throws -> T {
        let (name, url) = try await create()
        do {
            let result = try await body(name, url)
            await drop(name)
            return result
        } catch {
            await drop(name)
            throw error
        }
    }

    public static func drop(_ name: String) async {
        try? await withAdminConnection { try await $0.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"), logger: logger) }
    }

    static func withAdminConnection(_ body: (PostgresConnection) async throws -> Void) async throws {
        guard let server = serverURL else { return }
        let connection = try await PostgresConnection.connect(configuration: try PostgresURL(server).connectionConfigurationForTests(), id: 1, logger: logger)
        do {
            try await body(connection)
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
    }

    /// A migrated store on a fresh database, its pool running for the duration of `body`.
    public static func withStore(_ body: @Sendable (PostgresStore) async throws -> Void) async throws {
        try await with { _, url in
            let store = try PostgresStore(.init(url: url, maximumConnections: 8, deadline: .seconds(60)), logger: logger)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await store.client.run() }
                defer { group.cancelAll() }
                try await store.migrate()
                try await store.migrate()  // idempotent
                try await body(store)
            }
        }
    }
}
