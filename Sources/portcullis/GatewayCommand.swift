import ArgumentParser
import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PortcullisResourceServer
import ServiceLifecycle
import UnixSignals

/// `portcullis gateway` (PROTOCOL §14.3, §15): a reverse proxy that checks every request's Portcullis token.
struct GatewayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gateway",
        abstract: "Check each request's Portcullis access token (Bearer or DPoP-bound) and forward good ones to an upstream.",
        discussion: """
            Every request must carry an access token of --authority for --audience: a bearer token as Authorization: Bearer, \
            a DPoP-bound one (cnf.jkt) as Authorization: DPoP with a DPoP proof by its key for this method and URL (ath, used \
            once). Refused requests are answered 401 here with WWW-Authenticate challenges (Bearer, and RFC 9449 §7.1's DPoP \
            one); accepted ones go to --upstream with the token's claims in X-Portcullis-* headers (Subject, Object-Id, \
            Tenant-Id, Client-Id, User, Scopes, Roles, Acrs, Token-Id, Token-Binding) instead of the credentials. The \
            authority's keys are fetched from its discovery document and refreshed when a token names a new one.

            With --ssf-client-id and --ssf-client-secret (an application holding SSF.Receiver on api://portcullis-ssf), the \
            gateway keeps a Shared Signals poll stream at the authority and enforces continuous access evaluation: a token \
            issued before its user's sessions were revoked (disabled, password reset, revokeSignInSessions, a method removed) \
            or before its app's enrollment was wiped is answered 401 error="insufficient_claims" with the nbf claims request, \
            as Entra's resources answer. While the stream is down (and without --ssf-*), no token counts for longer than \
            --max-token-age after its iat. GET /.well-known/portcullis/health is answered by the gateway itself: 200 while \
            revocations are heard, 503 with the reason while the stream is down.

            Hostile clients: a client's fields named like the gateway's own (X-Portcullis-*, X-Forwarded-*, Forwarded, in any \
            spelling of - and _) are dropped and X-Forwarded-For, -Host and -Proto set by the gateway; paths with dot segments \
            or encoded slashes are refused (400); a head must be whole within --head-timeout of its first byte and a body must \
            keep --minimum-body-rate; connections are capped in all and per address.
            """)

    @Option(help: "Port to listen on.") var port: Int = 8600
    @Option(help: "Address to listen on.") var host: String = "127.0.0.1"
    @Option(help: "The upstream's base URL, e.g. http://127.0.0.1:9000") var upstream: String
    @Option(help: "The tenant's authority, e.g. http://127.0.0.1:8080/contoso.example") var authority: String
    @Option(help: "The resource's application ID (aud); repeat for its identifier URIs.") var audience: [String]
    @Option(help: "The URL clients call the gateway by (the proofs' htu); default http://HOST:PORT.") var publicUrl: String?
    @Option(help: "Most DPoP proofs remembered at once (each is kept about two minutes).") var replayCapacity: Int = 200_000
    @Option(help: "Receiver application for continuous access evaluation (SSF.Receiver on api://portcullis-ssf).") var ssfClientId: String?
    @Option(help: "Its client secret (or PORTCULLIS_SSF_CLIENT_SECRET).") var ssfClientSecret: String?
    @Option(help: "Most revocations remembered at once (each until every token it refuses has expired).") var revocationCapacity: Int = 200_000
    @Option(help: "A PEM file of CA certificates to trust, besides the system's, for the authority (a private CA, a development certificate).")
    var caFile: String?
    @Option(help: "Seconds a client connection may stay silent while the gateway waits for its request (idle, or a slow head or body).")
    var clientTimeout: Int = 60
    @Option(help: "Seconds a request's head may take from its first byte, however slowly it trickles in (then 408).") var headTimeout: Int = 10
    @Option(help: "Bytes a second a request's body must average once 10 seconds have passed (then 408).") var minimumBodyRate: Int = 1024
    @Option(help: "Client connections at once; more are closed when accepted.") var maxConnections: Int = 10_000
    @Option(help: "Client connections at once from one address (an IPv6 client by its /64); more are closed when accepted.")
    var maxConnectionsPerAddress: Int = 256
    @Option(
        help:
            "Seconds a token counts after its iat while no revocations are heard (started without --ssf-*, or the stream down): CAE's long lifetimes rest on revocations arriving."
    )
    var maxTokenAge: Int = 3600
    @Option(help: "Log level.") var logLevel: String = "info"

    func run() async throws {
        var logger = Logger(label: "portcullis-gateway")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        guard URL(string: upstream)?.host != nil else { throw ValidationError("--upstream is not a URL") }
        guard URL(string: authority)?.host != nil else { throw ValidationError("--authority is not a URL") }
        let secret = ssfClientSecret ?? ProcessInfo.processInfo.environment["PORTCULLIS_SSF_CLIENT_SECRET"]
        if (ssfClientId == nil) != (secret == nil) { throw ValidationError("--ssf-client-id and --ssf-client-secret go together") }
        var tls = TLSConfiguration.makeClientConfiguration()
        if let caFile {
            guard FileManager.default.isReadableFile(atPath: caFile) else { throw ValidationError("--ca-file: cannot read \(caFile)") }
            tls.additionalTrustRoots = [.file(caFile)]
        }
        let client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: .init(tlsConfiguration: tls))
        let validator = AccessTokenValidator(authority: authority, audiences: audience, client: client, logger: logger)
        var services: [any Service] = []
        guard maxTokenAge > 0 else { throw ValidationError("--max-token-age must be a positive number of seconds") }
        var revocations: RevocationView?
        var poller: SharedSignalsPoller?
        if let ssfClientId, let secret {
            let view = RevocationView(capacity: revocationCapacity)
            revocations = view
            let started = SharedSignalsPoller(
                configuration: .init(authority: authority, clientId: ssfClientId, clientSecret: secret, streamDescription: "portcullis gateway"),
                receiver: SharedSignalsReceiver(view: view), validator: validator, client: client, logger: logger)
            poller = started
            services.append(started)
        }
        var configuration = Gateway.Configuration(upstream: upstream, publicBaseURL: publicUrl ?? "http://\(host):\(port)")
        configuration.clientTimeout = .seconds(Int64(max(1, clientTimeout)))
        guard headTimeout > 0, minimumBodyRate >= 0, maxConnections > 0, maxConnectionsPerAddress > 0 else {
            throw ValidationError("--head-timeout, --max-connections and --max-connections-per-address must be positive, --minimum-body-rate not negative")
        }
        configuration.headTimeout = .seconds(Int64(headTimeout))
        configuration.minimumBodyRate = minimumBodyRate
        configuration.maximumConnections = maxConnections
        configuration.maximumConnectionsPerAddress = maxConnectionsPerAddress
        let gateway = Gateway(
            configuration: configuration,
            guardian: ResourceGuard(
                validator: validator, replays: ProofReplayCache(capacity: replayCapacity), revocations: revocations,
                maximumTokenAge: TimeInterval(maxTokenAge)),
            streamProblem: { [poller] in poller?.problem })
        let upstream = self.upstream
        let server = try GatewayServer(
            gateway: gateway, host: host, port: port, upstreamTLS: tls, logger: logger,
            onListening: { address in
                say("gateway listening on http://\(address?.ipAddress ?? "?"):\(address?.port ?? 0) → \(upstream)")
            })
        let group = ServiceGroup(
            configuration: .init(services: [server] + services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        do {
            try await group.run()
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }
}
