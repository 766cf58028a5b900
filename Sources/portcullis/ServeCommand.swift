import ArgumentParser
import Foundation
import Hummingbird
import Logging
import PortcullisCore
import PortcullisPostgres
import PortcullisSQLite
import PortcullisServer
import PortcullisStorage
import PortcullisTokens
import PostgresNIO
import ServiceLifecycle
import UnixSignals

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "serve", abstract: "Run the server.")

    @OptionGroup var locations: LocationOptions

    @Option(help: "Address to listen on (PORTCULLIS_HOST; default 127.0.0.1).")
    var host: String?

    @Option(help: "Port to listen on; 0 picks a free one (PORTCULLIS_PORT; default 8080).")
    var port: Int?

    @Option(name: .customLong("base-url"), help: "Public base URL (PORTCULLIS_BASE_URL; default derived from host and port).")
    var baseURL: String?

    @Option(name: .customLong("tls-cert"), help: "PEM certificate chain; serve TLS (PORTCULLIS_TLS_CERT).")
    var tlsCertificate: String?

    @Option(name: .customLong("tls-key"), help: "PEM private key for --tls-cert (PORTCULLIS_TLS_KEY).")
    var tlsKey: String?

    func run() async throws {
        var settings = try locations.settings(environment: ProcessInfo.processInfo.environment)
        if let host { settings.host = host }
        if let port { settings.port = port }
        if let baseURL { settings.baseURL = baseURL }
        if let tlsCertificate { settings.tlsCertificate = tlsCertificate }
        if let tlsKey { settings.tlsKey = tlsKey }
        guard (settings.tlsCertificate == nil) == (settings.tlsKey == nil) else {
            throw ValidationError("--tls-cert and --tls-key go together.")
        }
        guard (0...65535).contains(settings.port) else { throw ValidationError("--port must be 0…65535.") }

        let logger = makeLogger(level: settings.logLevel)
        let clock = SystemWallClock()
        let keysURL = URL(fileURLWithPath: settings.keysDirectory)
        var configuration = settings.serverConfiguration
        do {
            configuration.passkeyMetadata = try await settings.passkeyMetadata(at: clock.now())
        } catch let problem as Settings.Problem {
            throw ValidationError(problem.description)
        }
        if let next = configuration.passkeyMetadata.nextUpdate {
            logger.log(
                level: next < clock.now() ? .warning : .info,
                next < clock.now()
                    ? "the FIDO metadata BLOB is past its nextUpdate: download the current one (it may distrust models this one trusts)"
                    : "FIDO metadata BLOB read",
                metadata: [
                    "portcullis.authenticators": .stringConvertible(configuration.passkeyMetadata.authenticators.count),
                    "portcullis.serial": .stringConvertible(configuration.passkeyMetadata.serial ?? 0), "portcullis.nextUpdate": .string(ISO8601.string(next)),
                ])
        }
        // Installation-wide keys of earlier releases verify only until every token they signed has expired.
        let signers = try TenantKeyRings(
            keysDirectory: keysURL, algorithm: settings.signingAlgorithm, accessTokenType: settings.accessTokenType,
            retiringWindow: max(configuration.longestAccessTokenLifetime, configuration.idTokenLifetime) + TenantKeyRings.retiringAllowance, clock: clock)
        if let until = signers.retiringUntil {
            logger.notice(
                clock.now() < until
                    ? "the installation-wide signing keys (Keys/signing-*.pem) no longer sign; they verify until every token they signed has expired"
                    : "the installation-wide signing keys (Keys/signing-*.pem) are retired and ignored; they may be deleted",
                metadata: ["portcullis.until": .string(ISO8601.string(until))])
        }
        let credentials = try CredentialHasher.loadOrCreate(file: keysURL.appendingPathComponent("credential-pepper.key"))

        let store: any PortcullisStore
        var postgres: PostgresStore?
        if let url = settings.postgresURL {
            let pg = try PostgresStore(
                .init(
                    url: url, maximumConnections: settings.postgresMaximumConnections, caFile: settings.postgresCAFile,
                    deadline: .milliseconds(settings.storeDeadlineMilliseconds)), logger: logger)
            try await pg.preflight()
            postgres = pg
            store = pg
            logger.info("store: PostgreSQL", metadata: ["portcullis.postgres": .string((try? PostgresURL(url).redacted) ?? "")])
        } else {
            store = try await SQLiteStore.open(
                .init(
                    path: settings.resolvedSQLitePath, synchronous: settings.sqliteSynchronous, deadline: .milliseconds(settings.storeDeadlineMilliseconds)),
                logger: logger)
            logger.info("store: SQLite", metadata: ["portcullis.sqlite": .string(settings.resolvedSQLitePath)])
        }

        // The PostgreSQL client's pool runs beside everything else, from migrations to the last request.
        try await withThrowingTaskGroup(of: Void.self) { group in
            if let postgres { group.addTask { await postgres.client.run() } }
            defer { group.cancelAll() }
            do {
                try await store.migrate()
                let passwords = try await PasswordHasher(cost: settings.bcryptCost, queueLimit: settings.passwordQueueLimit)
                let countries: CountryTableSource
                do {
                    countries = try CountryTableSource(
                        path: settings.countryTable, interval: .seconds(settings.countryTableReloadSeconds), logger: logger)
                } catch let error as CountryTableError {
                    throw ValidationError("the country table (network.countryTable) cannot be read:\n\(error.description)")
                }
                let riskLists: RiskListSource
                do {
                    riskLists = try RiskListSource(
                        anonymizerPath: settings.anonymizerList, maliciousPath: settings.maliciousList,
                        interval: .seconds(settings.countryTableReloadSeconds), logger: logger)
                } catch let error as AddressList.Problem {
                    throw ValidationError("a risk address list (risk.anonymizerList, risk.maliciousList) cannot be read: \(error.description)")
                }
                let dependencies = ServerDependencies(
                    configuration: configuration, store: store, signers: signers, credentials: credentials,
                    passwords: passwords, clock: clock, logger: logger, keysDirectory: URL(fileURLWithPath: settings.keysDirectory),
                    countries: countries, riskLists: riskLists)
                let loopback = CallbackURI.isLoopback(host: settings.host)
                if settings.demo && !loopback {
                    logger.warning(
                        "PORTCULLIS_DEMO=1: the demo directory's published development credentials may be seeded on a listener beyond loopback; never do this anywhere real"
                    )
                }
                let seeder = Seeder(
                    store: store, passwords: passwords, credentials: credentials, clock: clock, logger: logger,
                    plaintextCredentialsAllowed: loopback || settings.demo)
                do {
                    try await seeder.seedIfEmpty(configDirectory: URL(fileURLWithPath: settings.configDirectory))
                } catch let error as Seeder.SeedError {
                    throw ValidationError("the configuration cannot seed the store:\n\(error.description)")
                }
                // Every tenant's key ring exists before the first request (created under the keys lock on first start).
                for name in try await signers.preload(tenantIds: try await store.tenantIds().map { TenantID($0) }) {
                    logger.notice("generated a signing key", metadata: ["portcullis.file": .string(keysURL.appendingPathComponent(name).path)])
                }
                let server = PortcullisServer(dependencies: dependencies)
                let app = try server.application(
                    listener: ListenerConfiguration(
                        host: settings.host, port: settings.port, tlsCertificatePath: settings.tlsCertificate, tlsKeyPath: settings.tlsKey))
                // SIGTERM/SIGINT drain: no new connections; requests already accepted get their answers. What is
                // still running after the grace period is cancelled, and the process exits at most 5 s later.
                // Services stop in reverse order: the drain (readiness 503 for a moment) first, then the server.
                var group = ServiceGroupConfiguration(services: [app, server.drain], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
                group.maximumGracefulShutdownDuration = .seconds(settings.shutdownGraceSeconds) + .milliseconds(settings.shutdownDrainMilliseconds)
                group.maximumCancellationDuration = .seconds(5)
                try await ServiceGroup(configuration: group).run()
            } catch {
                try? await store.close()
                throw error
            }
            try await store.close()
        }
        logger.info("Portcullis stopped")
    }
}

func makeLogger(level: String) -> Logger {
    // Every logger of the process, ours and the libraries', writes through the escaping handler.
    LoggingSystem.bootstrap { label in SafeLogHandler(label: label) }
    var logger = Logger(label: "portcullis")
    logger.logLevel = Logger.Level(rawValue: level.lowercased()) ?? .info
    return logger
}
