public import Foundation
public import Hummingbird
import Logging
import PortcullisAPI
import PortcullisCore
public import PortcullisSQLite
public import PortcullisServer
import PortcullisStorage
public import PortcullisTokens

/// A complete server over a temporary SQLite file and temporary keys, seeded with `Fixtures`, driven by a
/// manual clock. Used by router tests (`server.router()`) and live tests (`start()`).
public final class TestEnvironment: Sendable {
    public let root: URL
    public let store: SQLiteStore
    public let server: PortcullisServer
    public let clock: ManualClock
    /// The fixture tenant's signer (its own key ring).
    public let signer: TokenSigner
    public let configuration: ServerConfiguration

    public var dependencies: ServerDependencies { server.dependencies }

    public static func make(
        root existingRoot: URL? = nil,
        baseURL: String = "http://portcullis.test",
        algorithm: SigningAlgorithm = .es256,
        accessTokenType: AccessTokenType = .jwt,
        directoryJSON: Data = Fixtures.directoryJSON(),
        configFiles: [String: Data] = Fixtures.configFiles,
        passwords customPasswords: PasswordHasher? = nil,
        countries: CountryTableSource? = nil,
        riskLists: RiskListSource? = nil,
        configure: (inout ServerConfiguration) -> Void = { _ in }
    ) async throws -> TestEnvironment {
        let root = existingRoot ?? FileManager.default.temporaryDirectory.appendingPathComponent("portcullis-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        var logger = Logger(label: "portcullis-test")
        logger.logLevel = ProcessInfo.processInfo.environment["PORTCULLIS_TEST_LOG"].flatMap { Logger.Level(rawValue: $0) } ?? .critical
        let clock = ManualClock(Date())
        let keys = root.appendingPathComponent("Keys")
        let signers = try TenantKeyRings(keysDirectory: keys, algorithm: algorithm, accessTokenType: accessTokenType, retiringWindow: 3600 + 300, clock: clock)
        let signer = try await signers.signer(tenantId: TenantID(Fixtures.tenantId))
        let credentials = try CredentialHasher.loadOrCreate(file: keys.appendingPathComponent("credential-pepper.key"))
        // A generous store deadline: these tests are about behaviour, on a loaded machine (deadlines have tests of their own).
        let store = try await SQLiteStore.open(
            .init(path: root.appendingPathComponent("data/portcullis.sqlite").path, synchronous: "NORMAL", deadline: .seconds(60)), logger: logger)
        try await store.migrate()
        let passwords: PasswordHasher
        if let customPasswords { passwords = customPasswords } else { passwords = try await PasswordHasher(cost: 4) }
        var configuration = ServerConfiguration(baseURL: baseURL)
        // The tests' callback and push receivers listen on loopback, which the server refuses by default (PROTOCOL §14.2).
        configuration.outbox.destinations.allowLoopback = true
        configure(&configuration)
        let config = root.appendingPathComponent("Config")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        try directoryJSON.write(to: config.appendingPathComponent("directory.json"))
        for (path, data) in configFiles {
            let file = config.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try data.write(to: file)
        }
        do {
            try await Seeder(store: store, passwords: passwords, credentials: credentials, clock: clock, logger: logger)
                .seedIfEmpty(configDirectory: config)
        } catch {
            try? await store.close()
            throw error
        }
        let dependencies = ServerDependencies(
            configuration: configuration, store: store, signers: signers, credentials: credentials, passwords: passwords,
            clock: clock, logger: logger, keysDirectory: root.appendingPathComponent("Keys"), countries: countries,
            riskLists: riskLists)
        return TestEnvironment(
            root: root, store: store, server: PortcullisServer(dependencies: dependencies), clock: clock, signer: signer, configuration: configuration)
    }

    private init(root: URL, store: SQLiteStore, server: PortcullisServer, clock: ManualClock, signer: TokenSigner, configuration: ServerConfiguration) {
        self.root = root
        self.store = store
        self.server = server
        self.clock = clock
        self.signer = signer
        self.configuration = configuration
    }

    /// An application over the router, for `app.test(.router)` and `app.test(.live)`. The background
    /// services (sign-in writer, callback dispatcher, sweeper) run only when asked for: tests that drive
    /// them by hand (with the manual clock) must not race them.
    public func application(services: Bool = false) -> some ApplicationProtocol {
        let endpoints = server.endpoints
        return Application(
            router: server.router(), services: services ? server.services() : [],
            onServerRunning: { channel in endpoints.bind(port: channel.localAddress?.port ?? 0) },
            logger: server.dependencies.logger)
    }

    /// Closes the store and removes the files (`keepFiles` to reopen the same data and keys later).
    public func close(keepFiles: Bool = false) async {
        try? await store.close()
        if !keepFiles { try? FileManager.default.removeItem(at: root) }
    }

    /// The token endpoint path of the fixture tenant.
    public static let tokenPath = "/\(Fixtures.domain)/oauth2/v2.0/token"
}

/// Form encoding for test requests.
public enum Form {
    public static func encode(_ fields: [(String, String)]) -> ByteBuffer {
        ByteBuffer(string: FormEncoding.encode(fields))
    }

    public static let headers: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]
}

/// A test environment for the length of `body`, closed (its store, its files) when `body` returns or throws: the
/// scoped form of `make` and `close`.
public func withTestEnvironment<Result>(
    root: URL? = nil,
    baseURL: String = "http://portcullis.test",
    algorithm: SigningAlgorithm = .es256,
    accessTokenType: AccessTokenType = .jwt,
    directoryJSON: Data = Fixtures.directoryJSON(),
    configFiles: [String: Data] = Fixtures.configFiles,
    passwords: PasswordHasher? = nil,
    countries: CountryTableSource? = nil,
    riskLists: RiskListSource? = nil,
    configure: (inout ServerConfiguration) -> Void = { _ in },
    _ body: (TestEnvironment) async throws -> Result
) async throws -> Result {
    let env = try await TestEnvironment.make(
        root: root, baseURL: baseURL, algorithm: algorithm, accessTokenType: accessTokenType, directoryJSON: directoryJSON, configFiles: configFiles,
        passwords: passwords, countries: countries, riskLists: riskLists, configure: configure)
    do {
        let result = try await body(env)
        await env.close()
        return result
    } catch {
        await env.close()
        throw error
    }
}
