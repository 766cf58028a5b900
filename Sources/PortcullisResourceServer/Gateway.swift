import Foundation
public import NIOCore
public import PortcullisTokenVerification

/// `portcullis gateway` (PROTOCOL §14.3): a reverse proxy that lets any HTTP service, in any language, rely on Portcullis
/// tokens. Every request's token is checked by `ResourceGuard` (Bearer, or DPoP with a proof); refused requests are
/// answered 401 here with the challenges; good ones go to the upstream with the token's claims in `X-Portcullis-*`
/// headers (any such header the client sent is dropped first, so the upstream can trust them) and without the
/// `Authorization` and `DPoP` headers. `GatewayServer` serves it.
public struct Gateway: Sendable {
    public struct Configuration: Sendable {
        /// The upstream's base URL (`http://127.0.0.1:9000`); the request's path and query are appended.
        public var upstream: String
        /// The public base URL clients call the gateway by, for the proofs' `htu`.
        public var publicBaseURL: String
        /// The largest request body forwarded (413 beyond).
        public var maximumBodyBytes = 10 * 1024 * 1024
        /// How long the upstream may take to answer.
        public var upstreamTimeout: TimeAmount = .seconds(30)
        /// How long a client connection may wait between reads while the gateway waits for a request (idle keep-alive, a
        /// head or a body coming slowly): then it is closed (408 if a request had begun).
        public var clientTimeout: TimeAmount = .seconds(60)
        /// A request's head must be whole this long after its first byte came (slowloris); then 408.
        public var headTimeout: TimeAmount = .seconds(10)
        /// Once `bodyGrace` has passed, a request's body must have come at this many bytes a second on average; else 408.
        public var minimumBodyRate = 1024
        public var bodyGrace: TimeAmount = .seconds(10)
        /// Client connections at once, in all and from one address (an IPv6 client by its /64); more are closed on accept.
        public var maximumConnections = 10_000
        public var maximumConnectionsPerAddress = 256

        /// The scheme clients call the gateway by (`X-Forwarded-Proto`).
        var publicScheme: String { publicBaseURL.lowercased().hasPrefix("https:") ? "https" : "http" }

        public init(upstream: String, publicBaseURL: String) {
            self.upstream = upstream.hasSuffix("/") ? String(upstream.dropLast()) : upstream
            self.publicBaseURL = publicBaseURL.hasSuffix("/") ? String(publicBaseURL.dropLast()) : publicBaseURL
        }
    }

    public let configuration: Configuration
    public let guardian: ResourceGuard
    /// Why the Shared Signals stream is down, when it is (the poller's `problem`).
    let streamProblem: @Sendable () -> String?

    public init(configuration: Configuration, guardian: ResourceGuard, streamProblem: @escaping @Sendable () -> String? = { nil }) {
        self.configuration = configuration
        self.guardian = guardian
        self.streamProblem = streamProblem
    }

    /// `GET /.well-known/portcullis/health`, answered by the gateway itself and never forwarded (PROTOCOL §14.3).
    public static let healthPath = "/.well-known/portcullis/health"

    /// The health answer: 200 while revocations are heard (the stream connected), 503 with the reason while they are not —
    /// then no token counts for longer than the maximum token age. A gateway started without a stream answers 200 and
    /// says so: it was configured to rely on the maximum token age alone (docs/decisions.md).
    public func health() -> (status: Int, body: String) {
        let age = guardian.maximumTokenAge.map { ",\"maximumTokenAge\":\(Int($0))" } ?? ""
        guard let view = guardian.revocations else { return (200, #"{"status":"noStream","revocations":"not heard"\#(age)}"#) }
        if view.isCurrent { return (200, #"{"status":"connected","revocations":"current"}"#) }
        let reason = (streamProblem() ?? "the Shared Signals stream is not connected").replacingOccurrences(of: "\"", with: "'")
        return (503, #"{"status":"disconnected","reason":"\#(reason)"\#(age)}"#)
    }

    /// The headers the gateway sets for the upstream; the prefix is removed from whatever the client sent.
    public static let claimHeaderPrefix = "x-portcullis-"

    /// The token's claims as the upstream sees them.
    public static func claimHeaders(_ claims: AccessTokenClaims) -> [(String, String)] {
        var headers = [
            ("X-Portcullis-Subject", claims.sub), ("X-Portcullis-Tenant-Id", claims.tid), ("X-Portcullis-Client-Id", claims.azp),
            ("X-Portcullis-Token-Id", claims.jti), ("X-Portcullis-Token-Binding", claims.cnf == nil ? "bearer" : "dpop"),
        ]
        if let oid = claims.oid { headers.append(("X-Portcullis-Object-Id", oid)) }
        if let upn = claims.upn { headers.append(("X-Portcullis-User", upn)) }
        if let scp = claims.scp { headers.append(("X-Portcullis-Scopes", scp)) }
        if let roles = claims.roles, !roles.isEmpty { headers.append(("X-Portcullis-Roles", roles.joined(separator: " "))) }
        if let acrs = claims.acrs, !acrs.isEmpty { headers.append(("X-Portcullis-Acrs", acrs.joined(separator: " "))) }
        return headers
    }
}
