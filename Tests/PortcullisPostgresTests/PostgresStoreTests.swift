import Foundation
import Logging
import PortcullisPostgres
import PortcullisStorage
import PortcullisTesting
import Testing

let quiet: Logger = {
    var logger = Logger(label: "postgres-test")
    logger.logLevel = .critical
    return logger
}()

@Suite("PostgreSQL store", .enabled(if: PostgresTestDatabase.serverURL != nil, "POSTGRES_URL is not set"))
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
}
