import Foundation
public import Logging
public import NIOCore
import NIOExtras
import NIOHTTP1
public import NIOPosix
public import NIOSSL
import PortcullisTokens
public import ServiceLifecycle

/// `portcullis gateway`'s HTTP server (PROTOCOL §14.3), on SwiftNIO directly: each client connection has one keep-alive
/// connection to the upstream on the same event loop, and a request whose token the gateway already verified is
/// checked and forwarded without leaving that thread (`ResourceGuard.authorizeRemembered`). Anything else — a token seen
/// for the first time, keys due for a refresh, a DPoP proof to claim — waits for `ResourceGuard.authorize` and comes
/// back. Hummingbird and AsyncHTTPClient cost a trivial upstream's throughput three times over here (BENCHMARKS.md);
/// this costs about what nginx does.
///
/// What it forwards is what `Gateway` describes: no hop-by-hop fields or credentials, the token's claims in
/// `X-Portcullis-*`; bodies up to `maximumBodyBytes` each way (413, 502 beyond); 502 when the upstream does not answer
/// within `upstreamTimeout`. On graceful shutdown it stops accepting, lets each connection finish its request, and ends
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
                channel.eventLoop.makeCompletedFuture {
                    // Header validation is off: what the gateway sends was parsed by NIO's decoder from the client or the
                    // upstream, or is a claim it filtered for CR, LF and NUL itself (`forward`). Pipelining is
                    // GatewayConnection's own: NIO's assistance stops and restarts reading around every request (two
                    // epoll_ctl calls on each request's path), where the gateway holds reads back only when a pipelined
                    // request has actually come.
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                        withPipeliningAssistance: false, withErrorHandling: true, withOutboundHeaderValidation: false)
                    try channel.pipeline.syncOperations.addHandler(GatewayConnection(gateway: gateway, upstream: upstream))
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

/// One client connection: its requests one at a time, each authorized, then forwarded over the connection's own upstream
/// connection, its answer collected and sent back. A request pipelined behind one in progress waits, with whatever else
/// that read brought, and the connection reads no more until the requests waiting have been answered (RFC 9112 §9.3.2:
/// answers in the order of the requests).
final class GatewayConnection: ChannelDuplexHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    let gateway: Gateway
    let upstream: GatewayUpstream

    private enum Phase { case idle, receiving, waiting }
    private var phase = Phase.idle
    private var request: HTTPRequestHead?
    private var requestBody: ByteBuffer?
    private var requestTooLarge = false
    /// Counts requests, so that an answer that comes back late (an authorization, a timeout) for an earlier one is dropped.
    private var sequence: UInt64 = 0
    private var upstreamChannel: (any Channel)?
    private var answer: HTTPResponseHead?
    private var answerBody: ByteBuffer?
    private var answerTooLarge = false
    private var timeout: Scheduled<Void>?
    /// The request sent upstream and not answered yet, and whether it went on a connection used before.
    private var inFlight: (head: HTTPRequestHead, body: ByteBuffer?, reused: Bool)?
    /// Parts of pipelined requests that came while one was in progress; bounded by the one read that brought them, since
    /// reading stops (`holdingReads`) until they are handled.
    private var pipelined = CircularBuffer<HTTPServerRequestPart>()
    private var holdingReads = false
    private var readPending = false
    private var draining = false
    /// A graceful shutdown began: the connection closes once the request in progress, if any, is answered.
    private var quiescing = false

    init(gateway: Gateway, upstream: GatewayUpstream) {
        self.gateway = gateway
        self.upstream = upstream
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        if phase == .waiting || !pipelined.isEmpty {
            pipelined.append(part)
            holdingReads = true
            return
        }
        handle(context, part)
    }

    func read(context: ChannelHandlerContext) {
        if holdingReads {
            readPending = true
        } else {
            context.read()
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is ChannelShouldQuiesceEvent else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        quiescing = true
        if phase == .idle { context.close(promise: nil) }
    }

    /// Handles the pipelined requests that waited, once the one before them is answered; then reads again.
    private func drain(_ context: ChannelHandlerContext) {
        guard !draining else { return }  // `handle` can answer at once (a refusal), which calls back here
        draining = true
        defer { draining = false }
        while phase != .waiting, context.channel.isActive, let part = pipelined.popFirst() {
            handle(context, part)
        }
        guard pipelined.isEmpty, holdingReads else { return }
        holdingReads = false
        if readPending {
            readPending = false
            context.read()
        }
    }

    private func handle(_ context: ChannelHandlerContext, _ part: HTTPServerRequestPart) {
        switch part {
        case .head(let head):
            sequence &+= 1
            phase = .receiving
            request = head
            requestBody = nil
            requestTooLarge = false
            // RFC 9110 §10.1.1: a client that waits for 100 (Continue) before its body gets it at once; the body is
            // read whole before the token is checked.
            if head.version.major == 1, head.version.minor >= 1, head.headers["expect"].contains(where: { $0.lowercased() == "100-continue" }) {
                context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .continue))), promise: nil)
            }
        case .body(var chunk):
            guard phase == .receiving, !requestTooLarge else { return }
            if (requestBody?.readableBytes ?? 0) + chunk.readableBytes > gateway.configuration.maximumBodyBytes {
                requestTooLarge = true
                requestBody = nil
            } else if requestBody == nil {
                requestBody = chunk
            } else {
                requestBody!.writeBuffer(&chunk)
            }
        case .end:
            guard phase == .receiving, let head = request else { return }
            phase = .waiting
            if requestTooLarge {
                respond(context, status: .payloadTooLarge, headers: [:], body: nil)
                return
            }
            authorize(context, head)
        }
    }

    private func authorize(_ context: ChannelHandlerContext, _ head: HTTPRequestHead) {
        let authorizations = head.headers["authorization"]
        let authorization = authorizations.isEmpty ? nil : authorizations.joined(separator: ", ")
        let proofs = head.headers["dpop"]
        let method = head.method.rawValue
        let path = head.uri.utf8.firstIndex(of: UInt8(ascii: "?")).map { String(head.uri[..<$0]) } ?? head.uri
        let url = gateway.configuration.publicBaseURL + path
        let guardian = gateway.guardian
        if let decided = guardian.authorizeRemembered(authorization: authorization, proofs: proofs, method: method, url: url, now: Date()) {
            authorized(context, decided, sequence: sequence)
            return
        }
        let promise = context.eventLoop.makePromise(of: Result<AccessTokenClaims, ResourceGuard.Refusal>.self)
        promise.completeWithTask {
            do throws(ResourceGuard.Refusal) {
                return .success(try await guardian.authorize(authorization: authorization, proofs: proofs, method: method, url: url, now: Date()))
            } catch {
                return .failure(error)
            }
        }
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let sequence = self.sequence
        promise.futureResult.whenSuccess { result in
            let (handler, context) = bound.value
            handler.authorized(context, result, sequence: sequence)
        }
    }

    private func authorized(_ context: ChannelHandlerContext, _ result: Result<AccessTokenClaims, ResourceGuard.Refusal>, sequence: UInt64) {
        guard sequence == self.sequence, phase == .waiting, context.channel.isActive, let head = request else { return }
        switch result {
        case .failure(let refusal):
            var headers: HTTPHeaders = ["content-type": "application/json", "cache-control": "no-store"]
            for challenge in refusal.challenges { headers.add(name: "www-authenticate", value: challenge) }
            respond(context, status: .unauthorized, headers: headers, body: ByteBuffer(string: refusal.body))
        case .success(let claims):
            forward(context, head, claims)
        }
    }

    private func forward(_ context: ChannelHandlerContext, _ head: HTTPRequestHead, _ claims: AccessTokenClaims) {
        var outbound = HTTPRequestHead(version: .http1_1, method: head.method, uri: upstream.basePath + head.uri)
        // RFC 9110 §7.6.1: the fields the Connection field names are hop-by-hop too.
        let named = Gateway.connectionOptions(head.headers["connection"])
        for (name, value) in head.headers {
            let lower = name.lowercased()
            // `Expect: 100-continue` is answered by the body the gateway already holds.
            if Gateway.notForwarded.contains(lower) || named.contains(lower) || lower.hasPrefix(Gateway.claimHeaderPrefix) || lower == "expect" {
                continue
            }
            outbound.headers.add(name: name, value: value)
        }
        // The claims come from a verified token; a value that could break the request's framing is left out all the same.
        for (name, value) in Gateway.claimHeaders(claims) where !value.utf8.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 }) {
            outbound.headers.add(name: name, value: value)
        }
        outbound.headers.add(name: "host", value: upstream.authority)
        let body = requestBody.flatMap { $0.readableBytes > 0 ? $0 : nil }
        if let body {
            outbound.headers.add(name: "content-length", value: String(body.readableBytes))
        } else if head.method == .POST || head.method == .PUT || head.method == .PATCH {
            outbound.headers.add(name: "content-length", value: "0")
        }
        requestBody = nil
        answer = nil
        answerBody = nil
        answerTooLarge = false
        let sequence = self.sequence
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timeout = context.eventLoop.scheduleTask(in: gateway.configuration.upstreamTimeout) {
            let (handler, context) = bound.value
            guard sequence == handler.sequence, handler.phase == .waiting else { return }
            handler.upstreamChannel?.close(promise: nil)
            handler.upstreamChannel = nil
            handler.badGateway(context, "The upstream did not answer.\n")
        }
        if let channel = upstreamChannel, channel.isActive {
            send(outbound, body, on: channel, reused: true)
            return
        }
        connectAndSend(context, outbound, body)
    }

    private func connectAndSend(_ context: ChannelHandlerContext, _ outbound: HTTPRequestHead, _ body: ByteBuffer?) {
        let sequence = self.sequence
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let upstream = self.upstream
        var bootstrap = ClientBootstrap(group: context.eventLoop)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connectTimeout(.seconds(10))
        bootstrap = bootstrap.channelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                if let tls = upstream.tls {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: tls, serverHostname: upstream.serverName))
                }
                try channel.pipeline.syncOperations.addHTTPClientHandlers(enableOutboundHeaderValidation: false)
                try channel.pipeline.syncOperations.addHandler(UpstreamReader(connection: bound))
            }
        }
        bootstrap.connect(host: upstream.host, port: upstream.port).whenComplete { result in
            let (handler, context) = bound.value
            guard sequence == handler.sequence, handler.phase == .waiting else {
                if case .success(let channel) = result { channel.close(promise: nil) }
                return
            }
            switch result {
            case .success(let channel):
                handler.upstreamChannel = channel
                handler.send(outbound, body, on: channel, reused: false)
            case .failure:
                handler.badGateway(context, "The upstream did not answer.\n")
            }
        }
    }

    private func send(_ head: HTTPRequestHead, _ body: ByteBuffer?, on channel: any Channel, reused: Bool) {
        inFlight = (head, body, reused)
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        if let body { channel.write(HTTPClientRequestPart.body(.byteBuffer(body)), promise: nil) }
        channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
    }

    /// A part of the upstream's answer (on this connection's event loop).
    fileprivate func upstreamRead(_ context: ChannelHandlerContext, _ part: HTTPClientResponsePart) {
        guard phase == .waiting else { return }
        switch part {
        case .head(let head):
            // 1xx answers other than 101 are informational: the final answer follows.
            if head.status.code < 200 && head.status != .switchingProtocols { return }
            answer = head
            answerBody = context.channel.allocator.buffer(capacity: 0)
        case .body(var chunk):
            guard !answerTooLarge else { return }
            if (answerBody?.readableBytes ?? 0) + chunk.readableBytes > gateway.configuration.maximumBodyBytes {
                answerTooLarge = true
                answerBody = nil
            } else {
                answerBody?.writeBuffer(&chunk)
            }
        case .end:
            guard let answer, let head = request else { return }
            if answerTooLarge {
                badGateway(context, "The upstream's answer was larger than the gateway forwards, or broke off.\n")
                return
            }
            let named = Gateway.connectionOptions(answer.headers["connection"])
            var headers = HTTPHeaders()
            for (name, value) in answer.headers {
                let lower = name.lowercased()
                // A HEAD answer keeps the upstream's Content-Length (RFC 9110 §8.6): the length of what a GET would send.
                if (Gateway.notForwarded.contains(lower) && !(head.method == .HEAD && lower == "content-length")) || named.contains(lower) { continue }
                headers.add(name: name, value: value)
            }
            respond(context, status: answer.status, headers: headers, body: answerBody ?? ByteBuffer())
        }
    }

    /// The upstream connection closed or failed. A request sent on a kept-alive connection that closed before any of the
    /// answer came (the upstream's idle timeout raced it) is sent once more on a new connection; otherwise an answer the
    /// upstream did not finish is a 502.
    fileprivate func upstreamClosed(_ context: ChannelHandlerContext, _ channel: any Channel) {
        guard upstreamChannel === channel else { return }
        upstreamChannel = nil
        guard phase == .waiting, let sent = inFlight else { return }
        inFlight = nil
        if sent.reused && answer == nil {
            connectAndSend(context, sent.head, sent.body)
            return
        }
        badGateway(context, "The upstream's answer was larger than the gateway forwards, or broke off.\n")
    }

    private func badGateway(_ context: ChannelHandlerContext, _ text: String) {
        upstreamChannel?.close(promise: nil)
        upstreamChannel = nil
        respond(context, status: .badGateway, headers: ["content-type": "text/plain"], body: ByteBuffer(string: text))
    }

    /// Sends the answer to the current request; the connection stays open when the client wants it.
    private func respond(_ context: ChannelHandlerContext, status: HTTPResponseStatus, headers: HTTPHeaders, body: ByteBuffer?) {
        guard phase == .waiting, let head = request else { return }
        timeout?.cancel()
        timeout = nil
        inFlight = nil
        phase = .idle
        request = nil
        answer = nil
        answerBody = nil
        var headers = headers
        let keepAlive = head.isKeepAlive && !quiescing
        if head.method != .HEAD, status.mayHaveResponseBody {
            headers.replaceOrAdd(name: "content-length", value: String(body?.readableBytes ?? 0))
        }
        if !headers.contains(name: "server") { headers.add(name: "server", value: "Portcullis gateway") }
        if !keepAlive { headers.replaceOrAdd(name: "connection", value: "close") }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))), promise: nil)
        if let body, body.readableBytes > 0, head.method != .HEAD { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            pipelined.removeAll()
            let channel = context.channel
            written.whenComplete { _ in channel.close(promise: nil) }
            return
        }
        drain(context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        timeout?.cancel()
        timeout = nil
        phase = .idle
        pipelined.removeAll()
        upstreamChannel?.close(promise: nil)
        upstreamChannel = nil
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

extension GatewayUpstream {
    /// The name a TLS upstream is checked against and sent as SNI; `nil` for an IP address, which NIOSSL then checks
    /// against the certificate's IP addresses.
    var serverName: String? {
        (try? SocketAddress(ipAddress: host, port: 0)) == nil ? host : nil
    }
}

/// The upstream connection's end of the pipeline: hands each part of the answer to the client connection.
private final class UpstreamReader: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart

    let connection: NIOLoopBound<(GatewayConnection, ChannelHandlerContext)>

    init(connection: NIOLoopBound<(GatewayConnection, ChannelHandlerContext)>) {
        self.connection = connection
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let (handler, client) = connection.value
        handler.upstreamRead(client, unwrapInboundIn(data))
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
