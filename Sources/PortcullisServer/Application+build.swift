public import Foundation
import HTTPTypes
public import Hummingbird
import HummingbirdCore
import HummingbirdTLS
public import Logging
import NIOCore
public import NIOSSL
public import PortcullisCore
public import PortcullisStorage
public import PortcullisTokens
public import ServiceLifecycle

/// The concrete parts the server runs on, wired by the CLI (or by tests).
public struct ServerDependencies: Sendable {
    public var configuration: ServerConfiguration
    public var store: any PortcullisStore
    /// Every tenant's signing key ring (PROTOCOL §11).
    public var signers: TenantKeyRings
    public var credentials: CredentialHasher
    public var passwords: PasswordHasher
    public var clock: any WallClock
    public var metrics: ServerMetrics
    public var logger: Logger
    /// The tenants' issuing CAs (device identities), in `Keys/ca/`.
    public var issuingAuthority: IssuingAuthority
    /// The IP-to-country table for country named locations (PROTOCOL §13).
    public var countries: CountryTableSource
    /// The operator's anonymizer and malicious address lists (PROTOCOL §19).
    public var riskLists: RiskListSource

    /// `keysDirectory` holds the issuing CAs; without one (tests), a directory of this process under the
    /// temporary directory, shared by every server the process runs (as nodes share `Keys/`).
    public init(
        configuration: ServerConfiguration, store: any PortcullisStore, signers: TenantKeyRings, credentials: CredentialHasher,
        passwords: PasswordHasher, clock: any WallClock = SystemWallClock(), metrics: ServerMetrics = ServerMetrics(), logger: Logger,
        keysDirectory: URL? = nil, countries: CountryTableSource? = nil, riskLists: RiskListSource? = nil
    ) {
        self.countries = countries ?? .none(logger: logger)
        self.riskLists = riskLists ?? .none(logger: logger)
        self.configuration = configuration
        self.store = store
        self.signers = signers
        self.credentials = credentials
        self.passwords = passwords
        self.clock = clock
        self.metrics = metrics
        self.logger = logger
        self.issuingAuthority = IssuingAuthority(
            keysDirectory: keysDirectory
                ?? FileManager.default.temporaryDirectory.appendingPathComponent("portcullis-keys-\(ProcessInfo.processInfo.processIdentifier)"))
    }
}

/// Where and how to listen.
public struct ListenerConfiguration: Sendable {
    public var host: String
    public var port: Int
    /// PEM files; when set, the server speaks TLS only.
    public var tlsCertificatePath: String?
    public var tlsKeyPath: String?

    public init(host: String = "127.0.0.1", port: Int = 8080, tlsCertificatePath: String? = nil, tlsKeyPath: String? = nil) {
        self.host = host
        self.port = port
        self.tlsCertificatePath = tlsCertificatePath
        self.tlsKeyPath = tlsKeyPath
    }
}

extension ListenerConfiguration {
    /// TLS 1.2 at least (NIOSSL's default also accepts 1.0 and 1.1), and for 1.2 only forward-secret AEAD
    /// suites (ECDHE with AES-GCM or ChaCha20-Poly1305): what current browsers and MSAL's platforms use.
    /// TLS 1.3's suites are all AEAD.
    public static let cipherSuites = [
        "ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-GCM-SHA384",
        "ECDHE-RSA-AES256-GCM-SHA384", "ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-RSA-CHACHA20-POLY1305",
    ].joined(separator: ":")

    public static func tlsConfiguration(certificatePath: String, keyPath: String) throws -> TLSConfiguration {
        let chain = try NIOSSLCertificate.fromPEMFile(certificatePath).map { NIOSSLCertificateSource.certificate($0) }
        let key = try NIOSSLPrivateKey(file: keyPath, format: .pem)
        var tls = TLSConfiguration.makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(key))
        tls.minimumTLSVersion = .tlsv12
        tls.cipherSuites = cipherSuites
        return tls
    }
}

/// The server's routes and middleware, without a listener (router tests use this directly).
public struct PortcullisServer: Sendable {
    public let dependencies: ServerDependencies
    public let tenants: TenantCache
    public let signIns: SignInRecorder
    /// Risk (PROTOCOL §19): detections, users' risk, remediation.
    public let risk: RiskEngine
    public let compliance: ComplianceService
    public let outboxSignal: OutboxSignal
    /// The Shared Signals transmitter (PROTOCOL §14.2).
    public let transmitter: SignalTransmitter
    public let dispatcher: OutboxDispatcher
    /// Runs the conditional-access replays policy changes enqueue (PROTOCOL §14.1).
    public let replays: PolicyReplayRunner
    public let sweeper: ComplianceSweeper
    /// Shared Signals received (PROTOCOL §19): push, polls, streams made at transmitters.
    let receiver: SignalReceiver
    /// Readiness goes 503 first on SIGTERM; see `Drain`.
    public let drain: Drain
    /// The public base URL, completed once the listener is bound.
    public let endpoints: ServerEndpoints

    public init(dependencies: ServerDependencies) {
        self.dependencies = dependencies
        let tenants = TenantCache(store: dependencies.store, validation: dependencies.configuration.tenantCacheValidation, logger: dependencies.logger)
        self.tenants = tenants
        let endpoints = ServerEndpoints(baseURL: dependencies.configuration.baseURL)
        self.endpoints = endpoints
        let signal = OutboxSignal()
        self.outboxSignal = signal
        let configuration = dependencies.configuration
        let transmitter = SignalTransmitter(
            store: dependencies.store, tenants: tenants, signers: dependencies.signers, endpoints: endpoints, settings: configuration.signals,
            outboxSignal: signal, box: FactorSecretBox(credentials: dependencies.credentials), clock: dependencies.clock,
            accessTokenLifetime: configuration.accessTokenLifetime, continuousAccessTokenLifetime: configuration.continuousAccessTokenLifetime,
            logger: dependencies.logger)
        self.transmitter = transmitter
        let risk = RiskEngine(
            store: dependencies.store, tenants: tenants, transmitter: transmitter, lists: dependencies.riskLists, clock: dependencies.clock,
            detections: configuration.riskDetections, logger: dependencies.logger)
        self.risk = risk
        self.signIns = SignInRecorder(
            store: dependencies.store, aggregationWindow: dependencies.configuration.signInAggregationWindow, logger: dependencies.logger,
            observer: { risk.observe($0) })
        self.compliance = ComplianceService(
            configuration: configuration, endpoints: endpoints, store: dependencies.store, tenants: tenants, signers: dependencies.signers,
            clock: dependencies.clock,
            outboxSignal: signal, transmitter: transmitter, logger: dependencies.logger)
        self.dispatcher = OutboxDispatcher(
            store: dependencies.store, signal: signal, clock: dependencies.clock, configuration: configuration.outbox, logger: dependencies.logger,
            streamTarget: { message in try await transmitter.pushTarget(for: message) })
        self.replays = PolicyReplayRunner(
            store: dependencies.store, tenants: tenants, transmitter: transmitter, recorder: signIns, clock: dependencies.clock,
            pollInterval: configuration.outbox.pollInterval, logger: dependencies.logger)
        // The write paths the services below change documents through (validation, audit, effects), as the admin API's.
        let documentServices = AdminDocumentServices(
            store: dependencies.store, tenants: tenants, clock: dependencies.clock, passwords: dependencies.passwords,
            credentials: dependencies.credentials, authority: dependencies.issuingAuthority)
        func resource<Document: AdministeredDocument>() -> DocumentResource<Document> {
            DocumentResource(
                registration: DocumentRegistration(), services: documentServices, store: dependencies.store, tenants: tenants, clock: dependencies.clock,
                effects: transmitter)
        }
        // Devices' grace periods that end without a check-in (PROTOCOL §18), through the devices' own write path.
        let deviceSweep = DeviceGraceSweep(devices: resource(), tenants: tenants, clock: dependencies.clock)
        self.receiver = SignalReceiver(
            tenants: tenants, store: dependencies.store, transmitters: resource(), users: resource(), devices: resource(),
            sessions: SignalAdminRoutes(
                store: dependencies.store, tenants: tenants, transmitter: transmitter, risk: risk, clock: dependencies.clock, logger: dependencies.logger),
            risk: risk, credentials: dependencies.credentials, endpoints: endpoints, settings: configuration.signals,
            destinations: configuration.outbox.destinations, clock: dependencies.clock, logger: dependencies.logger)
        self.sweeper = ComplianceSweeper(
            compliance: compliance, store: dependencies.store, clock: dependencies.clock, interval: configuration.sweepInterval,
            idleEnrollmentRetention: configuration.idleEnrollmentRetention, signInRetention: configuration.signInRetention,
            signInMaximumBytes: configuration.signInMaximumBytes,
            outboxRetention: configuration.outboxRetention, devices: deviceSweep, logger: dependencies.logger)
        self.drain = Drain(
            delay: configuration.shutdownDrain, logger: dependencies.logger,
            onStart: {
                tenants.changes.close()
                transmitter.polls.close()
            })
    }

    public func router() -> Router<PortcullisRequestContext> {
        let deps = dependencies
        let router = Router(context: PortcullisRequestContext.self)
        router.add(
            middleware: RequestMiddleware(
                metrics: deps.metrics, strictTransportSecurity: deps.configuration.baseURL.hasPrefix("https://"),
                maximumBodyBytes: deps.configuration.maximumBodyBytes))
        let clients = ClientAuthenticator(
            credentials: deps.credentials, clock: deps.clock, replays: deps.store, endpoints: endpoints,
            federation: IssuerKeys(fetcher: IssuerFetcher(destinations: deps.configuration.outbox.destinations, logger: deps.logger)))
        let passes = TemporaryAccessPasses(store: deps.store, credentials: deps.credentials)
        let passwords = PasswordVerifier(
            store: deps.store, hasher: deps.passwords, policy: deps.configuration.lockout, temporaryAccessPasses: passes, logger: deps.logger)
        let devices = DeviceAuthentication(
            authority: deps.issuingAuthority, nonces: PKeyAuth.Nonces(credentials: deps.credentials), replays: deps.store)
        let tokens = TokenService(
            configuration: deps.configuration, endpoints: endpoints, tenants: tenants, store: deps.store, signers: deps.signers,
            clients: clients, compliance: compliance, recorder: signIns, passwords: passwords, countries: deps.countries, risk: risk,
            dpop: DPoPGate(
                nonces: DPoPNonces(credentials: deps.credentials), replays: deps.store, requireNonce: deps.configuration.dpopNonceRequired),
            devices: devices, clock: deps.clock, logger: deps.logger)
        let oauth = OAuthRoutes(
            configuration: deps.configuration, endpoints: endpoints, tenants: tenants, store: deps.store, signers: deps.signers,
            tokens: tokens, clients: clients, clock: deps.clock, metrics: deps.metrics)
        oauth.register(on: router)
        let sealer = PageSealer(credentials: deps.credentials)
        let documents = AdminDocuments(
            store: deps.store, tenants: tenants, clock: deps.clock, passwords: deps.passwords, credentials: deps.credentials, compliance: compliance,
            transmitter: transmitter, authority: deps.issuingAuthority, logger: deps.logger)
        SignInRoutes(
            configuration: deps.configuration, endpoints: endpoints, tenants: tenants, store: deps.store, signers: deps.signers, clients: clients,
            passwords: passwords, sealer: sealer, factorBox: FactorSecretBox(credentials: deps.credentials), pages: Pages(),
            countries: deps.countries, transmitter: transmitter, recorder: signIns, acceptances: documents.agreementAcceptances,
            users: documents.users, devices: devices, risk: risk, clock: deps.clock, logger: deps.logger
        ).register(on: router)
        let admin = AdminRoutes(
            configuration: deps.configuration, endpoints: endpoints, store: deps.store, tenants: tenants, signers: deps.signers, recorder: signIns,
            countries: deps.countries, clock: deps.clock,
            compliance: ComplianceAdminRoutes(
                store: deps.store, tenants: tenants, compliance: compliance, outboxSignal: outboxSignal, box: SecretMaterialBox(credentials: deps.credentials),
                clock: deps.clock, documents: documents),
            directory: DirectoryRoutes(documents: documents, credentials: deps.credentials, tenants: tenants),
            documents: documents, risk: risk
        )
        admin.register(on: router)
        // The same documents in Microsoft Graph's shape, for admins' Graph tools (PROTOCOL §20).
        GraphRoutes(
            endpoints: endpoints, tenants: tenants, clock: deps.clock,
            authenticator: BearerAuthenticator(
                resource: BuiltInResources.graph, requiredRole: nil, signers: deps.signers, endpoints: endpoints, tenants: tenants,
                revocations: deps.store, clock: deps.clock),
            sets: GraphCatalogue.sets(documents: documents, admin: admin, store: deps.store)
        ).register(on: router)
        // Device registration (PROTOCOL §18).
        DeviceRoutes(
            devices: documents.devices, authority: deps.issuingAuthority, tenants: tenants,
            authenticator: BearerAuthenticator(
                resource: BuiltInResources.devices, requiredRole: nil, signers: deps.signers, endpoints: endpoints, tenants: tenants,
                revocations: deps.store, clock: deps.clock),
            proofs: devices, endpoints: endpoints, clock: deps.clock
        ).register(on: router)
        // The console calls the admin API's functions and checks its session's token as the API checks a bearer token.
        ConsoleRoutes(
            endpoints: endpoints, tenants: tenants, sealer: sealer, admin: admin, authenticator: admin.authenticator, oauth: oauth,
            clock: deps.clock, revocations: deps.store
        ).register(on: router)
        ComplianceRoutes(
            service: compliance, configuration: deps.configuration, tenants: tenants, signers: deps.signers,
            secrets: SecretDelivery(
                service: compliance, box: SecretMaterialBox(credentials: deps.credentials), authority: deps.issuingAuthority, clock: deps.clock),
            clock: deps.clock
        ).register(on: router)
        SharedSignalsRoutes(
            transmitter: transmitter, tenants: tenants, signers: deps.signers, endpoints: endpoints, revocations: deps.store,
            destinations: deps.configuration.outbox.destinations, clock: deps.clock
        ).register(on: router)
        SignalReceiverRoutes(receiver: receiver, tenants: tenants, credentials: deps.credentials).register(on: router)
        OperationsRoutes(store: deps.store, metrics: deps.metrics, tenants: tenants, signers: deps.signers, drain: drain).register(on: router)
        return router
    }

    /// The long-running services that run beside the HTTP server.
    public func services() -> [any Service] {
        [signIns, risk, receiver, dispatcher, replays, sweeper, tenants, dependencies.countries, dependencies.riskLists]
    }

    /// The application: routes, services and listener. `onRunning` receives the bound port.
    public func application(
        listener: ListenerConfiguration, onRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) throws -> some ApplicationProtocol {
        let logger = dependencies.logger
        let scheme = listener.tlsCertificatePath == nil ? "http" : "https"
        let host = listener.host
        let endpoints = self.endpoints
        let server: HTTPServerBuilder
        if let certificatePath = listener.tlsCertificatePath, let keyPath = listener.tlsKeyPath {
            server = try .tls(.http1(), tlsConfiguration: ListenerConfiguration.tlsConfiguration(certificatePath: certificatePath, keyPath: keyPath))
        } else {
            server = .http1()
        }
        var app = Application(
            router: router(),
            server: server,
            configuration: .init(address: .hostname(listener.host, port: listener.port), serverName: "Portcullis"),
            services: services(),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? listener.port
                endpoints.bind(port: port)
                logger.info("Portcullis is listening on \(scheme)://\(host.contains(":") ? "[\(host)]" : host):\(port)")
                await onRunning(port)
            },
            logger: logger)
        // Build every tenant's snapshot before accepting requests, so the first ones do not pay for it.
        let tenants = self.tenants
        app.beforeServerStarts { _ = try await tenants.snapshots() }
        return app
    }
}
