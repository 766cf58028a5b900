import Foundation
public import Logging
public import NIOCore
import NIOExtras
import NIOHTTP1
public import NIOPosix
public import NIOSSL
public import PortcullisGatewayWire
import PortcullisTokenVerification
public import ServiceLifecycle
import Synchronization

/// `portcullis gateway`'s HTTP server (PROTOCOL §14.3), on SwiftNIO directly and on bytes: it frames HTTP/1.1 itself
/// (`GatewayWire`, strictly), each client connection has one keep-alive connection to the upstream on the same event
/// loop, and a request whose token the gateway already verified is checked and forwarded without leaving that thread
/// (`ResourceGuard.authorizeRemembered`). Anything else — a token seen for the first time, keys due for a refresh, a DPoP
/// proof to claim — waits for `ResourceGuard.authorize` and comes back. Hummingbird and AsyncHTTPClient cost a trivial
/// upstream's throughput three times over here, NIO's HTTP codecs a quarter more (BENCHMARKS.md).
///
/// What it forwards is what `Gateway` describes: no hop-by-hop fields or credentials, the token's claims in
/// `X-Portcullis-*`; bodies up to `maximumBodyBytes` each way (413, 502 beyond); 502 when the upstream does not answer
/// within `upstreamTimeout`. A request it cannot frame unambiguously is answered 400 (431, 501, 505 where those fit) and
/// the connection closed. On graceful shutdown it stops accepting, lets each connection finish its request, and ends
/// when they have closed.
public struct GatewayServer: Service {
    public let gateway: Gateway
    public let host: String
    public let port: Int
    let upstream: GatewayUpstream
    let group: any EventLoopGroup
    let logger: Logger
    let onListening: @Sendable (SocketAddress?) -> Void

    public init(
        gateway: Gateway, host: String, port: Int, upstreamTLS: TLSConfiguration = .makeClientConfiguration(),
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton, logger: Logger,
        onListening: @escaping @Sendable (SocketAddress?) -> Void = { _ in }
    ) throws {
        self.gateway = gateway
        self.host = host
        self.port = port
        self.upstream = try GatewayUpstream(gateway.configuration.upstream, tls: upstreamTLS)
        self.group = group
        self.logger = logger
        self.onListening = onListening
    }

    public func run() async throws {
        let quiescing = ServerQuiescingHelper(group: group)
        let gateway = self.gateway
        let upstream = self.upstream
        let limiter = GatewayConnectionLimiter(total: gateway.configuration.maximumConnections, perAddress: gateway.configuration.maximumConnectionsPerAddress)
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(quiescing.makeServerChannelHandler(channel: channel))
                }
            }
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                // At most so many connections in all and from one address (an IPv6 client by its /64): past either, a new one
                // is closed at once, before it costs a handler (slowloris, idle floods).
                let key = GatewayConnectionLimiter.key(channel.remoteAddress)
                guard limiter.admit(key) else {
                    return channel.close()
                }
                channel.closeFuture.whenComplete { _ in limiter.release(key) }
                return channel.eventLoop.makeCompletedFuture {
                    // The connection frames HTTP itself (GatewayWire), on bytes: no NIO HTTP codec on either side.
                    try channel.pipeline.syncOperations.addHandler(
                        GatewayConnection(gateway: gateway, upstream: upstream, clientAddress: channel.remoteAddress?.ipAddress))
                }
            }
            .bind(host: host, port: port).get()
        onListening(channel.localAddress)
        let closed = channel.eventLoop.makePromise(of: Void.self)
        await withTaskCancellationOrGracefulShutdownHandler {
            try? await closed.futureResult.get()
        } onCancelOrGracefulShutdown: {
            quiescing.initiateShutdown(promise: closed)
        }
    }
}

/// Where the gateway forwards to: `http(s)://host:port/base`, the request's path and query appended to `base`.
struct GatewayUpstream: Sendable {
    let host: String
    let port: Int
    let basePath: String
    /// The `Host` field sent upstream.
    let authority: String
    let tls: NIOSSLContext?

    struct Invalid: Error, CustomStringConvertible { let description: String }

    init(_ base: String, tls configuration: TLSConfiguration) throws {
        guard let url = URLComponents(string: base), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host, !host.isEmpty
        else { throw Invalid(description: "the upstream must be an http or https URL with a host: \(base)") }
        let secure = scheme == "https"
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        self.host = bare
        port = url.port ?? (secure ? 443 : 80)
        basePath = url.percentEncodedPath.hasSuffix("/") ? String(url.percentEncodedPath.dropLast()) : url.percentEncodedPath
        let named = bare.contains(":") ? "[\(bare)]" : bare  // an IPv6 address is bracketed in Host
        authority = url.port.map { "\(named):\($0)" } ?? named
        tls = secure ? try NIOSSLContext(configuration: configuration) : nil
    }
}

/// One client connection: performs what its `GatewayConnectionStateMachine` decides — reads, writes, the token's check
/// (`ResourceGuard`: at once for a token already verified, else on a task that comes back to this event loop), the
/// connection's one upstream connection, its one timer — and feeds the machine what happens.
final class GatewayConnection: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let gateway: Gateway
    let upstream: GatewayUpstream
    private var machine: GatewayConnectionStateMachine
    private var upstreamChannel: (any Channel)?
    private var timer: Scheduled<Void>?
    /// Actions are performed in order; one that feeds the machine again (a decision made at once) queues what follows.
    private var pending: [GatewayConnectionStateMachine.Action] = []
    private var performing = false

    /// The client's address, for tokens under strict location enforcement (PROTOCOL §17).
    private let clientAddress: String?

    init(gateway: Gateway, upstream: GatewayUpstream, clientAddress: String?) {
        self.gateway = gateway
        self.upstream = upstream
        self.clientAddress = clientAddress
        let configuration = gateway.configuration
        machine = GatewayConnectionStateMachine(
            limits: .init(
                maximumBodyBytes: configuration.maximumBodyBytes, clientTimeout: configuration.clientTimeout,
                upstreamTimeout: configuration.upstreamTimeout, headTimeout: configuration.headTimeout,
                minimumBodyRate: configuration.minimumBodyRate, bodyGrace: configuration.bodyGrace),
            forwarding: .init(
                basePath: upstream.basePath, authority: upstream.authority, scheme: configuration.publicScheme, clientAddress: clientAddress),
            now: .now())
    }

    // MARK: Events

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { arm(context, now: .now()) }
    }

    func channelActive(context: ChannelHandlerContext) {
        arm(context, now: .now())
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        perform(context, machine.read(unwrapInboundIn(data), now: .now()))
    }

    func read(context: ChannelHandlerContext) {
        perform(context, machine.readRequested())
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is ChannelShouldQuiesceEvent else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        perform(context, machine.quiesce())
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        perform(context, machine.closed())
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    // MARK: Actions

    private func perform(_ context: ChannelHandlerContext, _ actions: [GatewayConnectionStateMachine.Action]) {
        pending.append(contentsOf: actions)
        guard !performing else { return }
        performing = true
        defer { performing = false }
        var index = 0
        while index < pending.count {
            let action = pending[index]
            index += 1
            switch action {
            case .read:
                context.read()
            case .write(let bytes):
                context.writeAndFlush(wrapOutboundOut(bytes), promise: nil)
            case .writeAndClose(let bytes):
                // The output closed after the answer, the input still read: see `Limits.lingerTimeout`. A channel that
                // cannot close its output alone is closed whole.
                let channel = context.channel
                context.writeAndFlush(wrapOutboundOut(bytes)).whenComplete { written in
                    guard case .success = written else { return channel.close(promise: nil) }
                    channel.close(mode: .output).whenFailure { _ in channel.close(promise: nil) }
                }
                arm(context, now: .now())  // the drain's deadline may come before the one the timer waits for
            case .decide(let request):
                decide(context, request)
            case .forward(let bytes):
                forward(context, bytes)
            case .closeUpstream:
                let channel = upstreamChannel
                upstreamChannel = nil  // forgotten first: its close calls back at once
                channel?.close(promise: nil)
            case .close:
                context.close(promise: nil)
            }
        }
        pending.removeAll(keepingCapacity: true)
    }

    /// The health answer, or the token's check: at once when the guard remembers the token, else on a task.
    private func decide(_ context: ChannelHandlerContext, _ request: GatewayConnectionStateMachine.Request.Summary) {
        if request.path == Gateway.healthPath, request.method == "GET" || request.method == "HEAD" {
            let (status, body) = gateway.health()
            perform(
                context,
                machine.decided(
                    sequence: request.sequence,
                    .respond(
                        status: status, fields: [("content-type", "application/json"), ("cache-control", "no-store")],
                        body: ByteBuffer(string: body + "\n")), now: .now()))
            return
        }
        let guardian = gateway.guardian
        let url = gateway.configuration.publicBaseURL + request.path
        if let decided = guardian.authorizeRemembered(
            authorization: request.authorization, proofs: request.proofs, method: request.method, url: url, clientAddress: clientAddress, now: Date())
        {
            perform(context, machine.decided(sequence: request.sequence, Self.decision(decided), now: .now()))
            return
        }
        let promise = context.eventLoop.makePromise(of: Result<AccessTokenClaims, ResourceGuard.Refusal>.self)
        let clientAddress = clientAddress
        promise.completeWithTask {
            do throws(ResourceGuard.Refusal) {
                return .success(
                    try await guardian.authorize(
                        authorization: request.authorization, proofs: request.proofs, method: request.method, url: url, clientAddress: clientAddress,
                        now: Date()))
            } catch {
                return .failure(error)
            }
        }
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        promise.futureResult.whenSuccess { result in
            let (handler, context) = bound.value
            guard context.channel.isActive else { return }
            handler.perform(context, handler.machine.decided(sequence: request.sequence, Self.decision(result), now: .now()))
        }
    }

    static func decision(_ result: Result<AccessTokenClaims, ResourceGuard.Refusal>) -> GatewayConnectionStateMachine.Decision {
        switch result {
        case .success(let claims):
            return .forward(claims: Gateway.claimHeaders(claims))
        case .failure(let refusal):
            var fields: [(String, String)] = [("content-type", "application/json"), ("cache-control", "no-store")]
            for challenge in refusal.challenges { fields.append(("www-authenticate", challenge)) }
            return .respond(status: 401, fields: fields, body: ByteBuffer(string: refusal.body))
        }
    }

    /// Sends a request upstream on the open upstream connection, or on a new one.
    private func forward(_ context: ChannelHandlerContext, _ bytes: ByteBuffer) {
        if let channel = upstreamChannel, channel.isActive {
            machine.upstreamSent(reused: true)
            channel.writeAndFlush(bytes, promise: nil)
            return
        }
        let sequence = machine.sequence
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let upstream = self.upstream
        ClientBootstrap(group: context.eventLoop)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connectTimeout(.seconds(10))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls = upstream.tls {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: tls, serverHostname: upstream.serverName))
                    }
                    try channel.pipeline.syncOperations.addHandler(UpstreamReader(connection: bound))
                }
            }
            .connect(host: upstream.host, port: upstream.port)
            .whenComplete { result in
                let (handler, context) = bound.value
                guard handler.machine.awaitsUpstream(sequence) else {
                    if case .success(let channel) = result { channel.close(promise: nil) }
                    return
                }
                switch result {
                case .success(let channel):
                    handler.upstreamChannel = channel
                    handler.machine.upstreamSent(reused: false)
                    channel.writeAndFlush(bytes, promise: nil)
                case .failure:
                    handler.perform(context, handler.machine.upstreamFailed(now: .now()))
                }
            }
    }

    /// Bytes of the upstream's answer (on this connection's event loop).
    fileprivate func upstreamRead(_ context: ChannelHandlerContext, _ channel: any Channel, _ bytes: ByteBuffer) {
        guard upstreamChannel === channel else {
            channel.close(promise: nil)  // a connection given up on
            return
        }
        perform(context, machine.upstreamRead(bytes, now: .now()))
    }

    fileprivate func upstreamClosed(_ context: ChannelHandlerContext, _ channel: any Channel) {
        guard upstreamChannel === channel else { return }
        upstreamChannel = nil
        perform(context, machine.upstreamClosed(now: .now()))
    }

    // MARK: The timer

    /// The connection's one timer: armed never later than the machine's next deadline nor than the shortest of its
    /// timeouts from now, so that no event ever needs to move it earlier (a busy connection's timer fires about once per
    /// shortest timeout, and a request costs no timer of its own).
    private func arm(_ context: ChannelHandlerContext, now: NIODeadline) {
        timer?.cancel()
        var deadline = now + machine.limits.shortest
        if let next = machine.nextDeadline { deadline = min(deadline, max(next, now + .milliseconds(1))) }
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(deadline: deadline) {
            let (handler, context) = bound.value
            handler.timer = nil
            guard context.channel.isActive else { return }
            let now = NIODeadline.now()
            handler.perform(context, handler.machine.timerFired(now: now))
            if context.channel.isActive, handler.machine.phase != .closing { handler.arm(context, now: now) }
        }
    }
}

extension GatewayUpstream {
    /// The name a TLS upstream is checked against and sent as SNI; `nil` for an IP address, which NIOSSL then checks
    /// against the certificate's IP addresses.
    var serverName: String? {
        (try? SocketAddress(ipAddress: host, port: 0)) == nil ? host : nil
    }
}

/// The upstream connection's end of the pipeline: hands the answer's bytes to the client connection.
private final class UpstreamReader: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    let connection: NIOLoopBound<(GatewayConnection, ChannelHandlerContext)>

    init(connection: NIOLoopBound<(GatewayConnection, ChannelHandlerContext)>) {
        self.connection = connection
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let (handler, client) = connection.value
        handler.upstreamRead(client, context.channel, unwrapInboundIn(data))
    }

    func channelInactive(context: ChannelHandlerContext) {
        let (handler, client) = connection.value
        handler.upstreamClosed(client, context.channel)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

/// NIO's buffers are what the gateway frames (`GatewayWire` has no dependency, so it names what it reads and writes).
extension ByteBuffer: WireInput, WireOutput {}

/// Counts the gateway's client connections, in all and per address (IPv4 by address, IPv6 by /64).
final class GatewayConnectionLimiter: Sendable {
    let total: Int
    let perAddress: Int
    private let counts = Mutex<(total: Int, byAddress: [String: Int])>((0, [:]))

    init(total: Int, perAddress: Int) {
        self.total = total
        self.perAddress = perAddress
    }

    /// Takes a place for a connection from `key`; `false` when either bound is reached.
    func admit(_ key: String) -> Bool {
        counts.withLock { counts in
            let mine = counts.byAddress[key, default: 0]
            guard counts.total < total, mine < perAddress else { return false }
            counts.total += 1
            counts.byAddress[key] = mine + 1
            return true
        }
    }

    func release(_ key: String) {
        counts.withLock { counts in
            counts.total -= 1
            let left = counts.byAddress[key, default: 1] - 1
            counts.byAddress[key] = left > 0 ? left : nil
        }
    }

    /// An IPv4 client by its address, an IPv6 one by its /64 (one host holds a whole /64).
    static func key(_ address: SocketAddress?) -> String {
        guard let address else { return "" }
        if case .v6(let v6) = address {
            let bytes = withUnsafeBytes(of: v6.address.sin6_addr) { Array($0.prefix(8)) }
            // An IPv4-mapped address (::ffff:a.b.c.d) is the IPv4 client it maps.
            if bytes.prefix(8).allSatisfy({ $0 == 0 }), let text = address.ipAddress, text.hasPrefix("::ffff:") { return String(text.dropFirst(7)) }
            return bytes.map { String($0, radix: 16) }.joined(separator: ":") + "::/64"
        }
        return address.ipAddress ?? ""
    }
}
