import Foundation
public import Logging
public import NIOCore
import NIOExtras
import NIOHTTP1
public import NIOPosix
public import NIOSSL
import PortcullisTokens
public import ServiceLifecycle

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
                    // The connection frames HTTP itself (GatewayWire), on bytes: no NIO HTTP codec on either side.
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

/// One client connection: its requests one at a time, each framed (`GatewayWire`), authorized, then forwarded over the
/// connection's own upstream connection, the answer framed and sent back. Bytes of a request pipelined behind one in
/// progress wait, and the connection reads no more until they have been handled (RFC 9112 §9.3.2: answers in the order
/// of the requests).
final class GatewayConnection: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let gateway: Gateway
    let upstream: GatewayUpstream

    /// `head`: reading a request's head; `body`: its body; `waiting`: deciding it or waiting for the upstream; `closing`:
    /// the last answer is written and the connection closes.
    private enum Phase { case head, body, waiting, closing }
    private var phase = Phase.head
    /// What the client sent that is not consumed yet.
    private var inbound = ByteBuffer()
    private var request: Request?
    /// Counts requests, so that an answer that comes back late (an authorization, a timeout) for an earlier one is dropped.
    private var sequence: UInt64 = 0
    private var processing = false
    private var holdingReads = false
    private var readPending = false
    /// A graceful shutdown began: the connection closes once the request in progress, if any, is answered.
    private var quiescing = false

    private var upstreamChannel: (any Channel)?
    /// The request sent upstream and not answered yet, and whether it went on a connection used before.
    private var inFlight: (bytes: ByteBuffer, reused: Bool)?
    private var answer = Answer()
    /// When the request in flight stops waiting for the upstream; one timer per connection checks it, and the client's
    /// silence while the gateway waits for a request (`lastRead` + `clientTimeout`).
    private var deadline: NIODeadline?
    private var lastRead = NIODeadline.now()
    private var timer: Scheduled<Void>?

    struct Request {
        let head: GatewayWire.Head
        let method: String
        let minorVersion: Int
        let keepAlive: Bool
        let connectionOptions: Set<String>
        let framing: GatewayWire.Framing
        var body: ByteBuffer
        var chunks = GatewayWire.ChunkedDecoder()
    }

    /// The upstream's answer being read.
    struct Answer {
        var inbound = ByteBuffer()
        var head: GatewayWire.Head?
        var status = 0
        var framing = GatewayWire.Framing.none
        var body = ByteBuffer()
        var chunks = GatewayWire.ChunkedDecoder()
        /// Whether the upstream connection can carry another request after this answer.
        var reusable = true
        var started: Bool { head != nil || inbound.readableBytes > 0 }

        /// Frames what came so far; `true` once the answer is whole (one delimited by the connection's close never is).
        mutating func read(limit: Int, requestMethod: String) throws(GatewayWire.Malformed) -> Bool {
            while head == nil {
                let length: Int? = try inbound.withUnsafeReadableBytes { bytes throws(GatewayWire.Malformed) in try GatewayWire.headLength(bytes) }
                guard let length else { return false }
                let parsed = try inbound.withUnsafeReadableBytes { bytes throws(GatewayWire.Malformed) in
                    try GatewayWire.parseHead(bytes, length: length, request: false)
                }
                inbound.moveReaderIndex(forwardBy: length)
                let code = Int(parsed.string(parsed.second)) ?? 0
                if code == 101 { throw GatewayWire.Malformed(status: 502, reason: "the upstream switched protocols") }
                if code < 200 { continue }  // informational: the final answer follows
                head = parsed
                status = code
                framing = try GatewayWire.answerFraming(parsed, status: code, requestMethod: requestMethod)
                if GatewayWire.minorVersion(parsed, parsed.first) == 0 || parsed.connectionOptions.contains("close") || framing == .untilClose {
                    reusable = false
                }
                if case .length(let length) = framing, length > limit { throw GatewayWire.Malformed(status: 502, reason: "too large") }
            }
            switch framing {
            case .none:
                break
            case .length(let length):
                let take = min(length - body.readableBytes, inbound.readableBytes)
                if take > 0, var slice = inbound.readSlice(length: take) { body.writeBuffer(&slice) }
                guard body.readableBytes == length else { return false }
            case .chunked:
                try chunks.feed(&inbound, into: &body)
                if body.readableBytes > limit { throw GatewayWire.Malformed(status: 502, reason: "too large") }
                guard chunks.isDone else { return false }
            case .untilClose:
                body.writeBuffer(&inbound)
                if body.readableBytes > limit { throw GatewayWire.Malformed(status: 502, reason: "too large") }
                return false
            }
            if inbound.readableBytes > 0 { reusable = false }  // bytes beyond the answer: nothing to pair them with
            return true
        }
    }

    init(gateway: Gateway, upstream: GatewayUpstream) {
        self.gateway = gateway
        self.upstream = upstream
    }

    // MARK: The client's side

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { armTimeout(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        armTimeout(context)
        context.fireChannelActive()
    }

    private func armTimeout(_ context: ChannelHandlerContext) {
        guard timer == nil else { return }
        lastRead = .now()
        scheduleTimeout(context, at: lastRead + min(gateway.configuration.clientTimeout, gateway.configuration.upstreamTimeout))
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        lastRead = .now()
        var bytes = unwrapInboundIn(data)
        if inbound.readableBytes == 0 {
            inbound = bytes
        } else {
            inbound.writeBuffer(&bytes)
        }
        if phase == .waiting || phase == .closing {
            holdingReads = true  // a pipelined request: handled once the one in progress is answered
            return
        }
        process(context)
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
        if phase == .head, inbound.readableBytes == 0 { context.close(promise: nil) }
    }

    /// Frames what the client sent, deciding each complete request, until a request waits or more bytes are needed.
    private func process(_ context: ChannelHandlerContext) {
        guard !processing else { return }  // an answer given at once (a refusal) comes back here; the loop goes on
        processing = true
        defer { processing = false }
        do throws(GatewayWire.Malformed) {
            loop: while context.channel.isActive {
                switch phase {
                case .head:
                    guard inbound.readableBytes > 0, try readHead(context) else { break loop }
                case .body:
                    guard try readBody() else { break loop }
                    phase = .waiting
                    authorize(context)
                case .waiting, .closing:
                    break loop
                }
            }
        } catch {
            refuse(context, error)
            return
        }
        if phase == .head || phase == .body {
            if inbound.readableBytes == 0 { inbound.clear() } else if inbound.readerIndex > 65536 { inbound.discardReadBytes() }
            holdingReads = false
            if readPending {
                readPending = false
                context.read()
            }
        }
    }

    /// Reads the next request's head when it has all come; `false` until then.
    private func readHead(_ context: ChannelHandlerContext) throws(GatewayWire.Malformed) -> Bool {
        let length: Int? = try inbound.withUnsafeReadableBytes { bytes throws(GatewayWire.Malformed) in try GatewayWire.headLength(bytes) }
        guard let length else { return false }
        let head = try inbound.withUnsafeReadableBytes { bytes throws(GatewayWire.Malformed) in
            try GatewayWire.parseHead(bytes, length: length, request: true)
        }
        inbound.moveReaderIndex(forwardBy: length)
        let minor = GatewayWire.minorVersion(head, head.third)
        let options = head.connectionOptions
        let keepAlive = minor == 1 ? !options.contains("close") : options.contains("keep-alive")
        let framing = try GatewayWire.requestFraming(head, minorVersion: minor)
        // RFC 9112 §3.2: an HTTP/1.1 request has one Host field (the gateway sends the upstream's own).
        if minor == 1, head.fields.lazy.filter({ $0.kind == .host }).count != 1 {
            throw GatewayWire.Malformed.bad("An HTTP/1.1 request needs one Host field.")
        }
        sequence &+= 1
        request = Request(
            head: head, method: head.string(head.first), minorVersion: minor, keepAlive: keepAlive, connectionOptions: options, framing: framing,
            body: context.channel.allocator.buffer(capacity: 0))
        if case .length(let length) = framing, length > gateway.configuration.maximumBodyBytes {
            throw GatewayWire.Malformed(status: 413, reason: "The request's body is larger than the gateway forwards.")
        }
        // RFC 9110 §10.1.1: a client that waits for 100 (Continue) before its body gets it at once; the body is read whole
        // before the token is checked.
        if minor == 1, framing != .none, inbound.readableBytes == 0, head.listElements(.expect).contains("100-continue") {
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(staticString: "HTTP/1.1 100 Continue\r\n\r\n")), promise: nil)
        }
        phase = .body
        return true
    }

    /// Reads the request's body as it comes; `true` once it is whole.
    private func readBody() throws(GatewayWire.Malformed) -> Bool {
        guard var current = request else { return false }
        request = nil  // the body's buffer stays uniquely referenced while it grows
        defer { request = current }
        switch current.framing {
        case .none, .untilClose:
            return true
        case .length(let length):
            let take = min(length - current.body.readableBytes, inbound.readableBytes)
            if take > 0, var slice = inbound.readSlice(length: take) { current.body.writeBuffer(&slice) }
            return current.body.readableBytes == length
        case .chunked:
            try current.chunks.feed(&inbound, into: &current.body)
            if current.body.readableBytes > gateway.configuration.maximumBodyBytes {
                throw GatewayWire.Malformed(status: 413, reason: "The request's body is larger than the gateway forwards.")
            }
            return current.chunks.isDone
        }
    }

    /// A request the gateway cannot frame or will not take: answered, and the connection closes (what follows on it
    /// cannot be framed).
    private func refuse(_ context: ChannelHandlerContext, _ error: GatewayWire.Malformed) {
        phase = .waiting
        let minor = request?.minorVersion ?? 1
        let method = request?.method ?? "GET"
        request = nil
        respond(
            context, minorVersion: minor, method: method, keepAlive: false, status: error.status,
            fields: [("content-type", "text/plain")], body: ByteBuffer(string: error.reason + "\n"))
    }

    // MARK: Deciding

    private func authorize(_ context: ChannelHandlerContext) {
        guard let request else { return }
        let head = request.head
        let authorizations = head.values(.authorization)
        let authorization = authorizations.isEmpty ? nil : authorizations.joined(separator: ", ")
        let proofs = head.values(.dpop)
        let target = head.bytes[head.second]
        let path = String(decoding: target.prefix { $0 != UInt8(ascii: "?") }, as: UTF8.self)
        let url = gateway.configuration.publicBaseURL + path
        let guardian = gateway.guardian
        let method = request.method
        if path == Gateway.healthPath, method == "GET" || method == "HEAD" {
            let (status, body) = gateway.health()
            respond(
                context, minorVersion: request.minorVersion, method: method, keepAlive: request.keepAlive, status: status,
                fields: [("content-type", "application/json"), ("cache-control", "no-store")], body: ByteBuffer(string: body + "\n"))
            return
        }
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
        guard sequence == self.sequence, phase == .waiting, context.channel.isActive, let request else { return }
        switch result {
        case .failure(let refusal):
            var fields: [(String, String)] = [("content-type", "application/json"), ("cache-control", "no-store")]
            for challenge in refusal.challenges { fields.append(("www-authenticate", challenge)) }
            respond(
                context, minorVersion: request.minorVersion, method: request.method, keepAlive: request.keepAlive, status: 401, fields: fields,
                body: ByteBuffer(string: refusal.body))
        case .success(let claims):
            forward(context, request, claims)
        }
    }

    // MARK: The upstream's side

    private func forward(_ context: ChannelHandlerContext, _ request: Request, _ claims: AccessTokenClaims) {
        let head = request.head
        let body = request.body.readableBytes > 0 ? request.body : nil
        var out = context.channel.allocator.buffer(capacity: head.bytes.count + 512 + (body?.readableBytes ?? 0))
        out.writeString(request.method)
        out.writeStaticString(" ")
        out.writeString(upstream.basePath)
        out.writeBytes(head.bytes[head.second])
        out.writeStaticString(" HTTP/1.1\r\n")
        // Not forwarded: hop-by-hop fields, the framing, the credentials, any `X-Portcullis-*` and `Expect` (answered by the
        // body the gateway already holds); RFC 9110 §7.6.1: the fields the Connection field names are hop-by-hop too.
        let named = request.connectionOptions
        for field in head.fields where field.kind == .other || field.kind == .server {
            if !named.isEmpty, named.contains(head.lowercasedName(field)) { continue }
            out.writeBytes(head.bytes[field.name])
            out.writeStaticString(": ")
            out.writeBytes(head.bytes[field.value])
            out.writeStaticString("\r\n")
        }
        // The claims come from a verified token; a value that could break the request's framing is left out all the same.
        for (name, value) in Gateway.claimHeaders(claims) where value.utf8.allSatisfy(GatewayWire.isFieldValueByte) {
            out.writeString(name)
            out.writeStaticString(": ")
            out.writeString(value)
            out.writeStaticString("\r\n")
        }
        out.writeStaticString("Host: ")
        out.writeString(upstream.authority)
        out.writeStaticString("\r\n")
        if let body {
            out.writeStaticString("Content-Length: ")
            out.writeString(String(body.readableBytes))
            out.writeStaticString("\r\n")
        } else if request.method == "POST" || request.method == "PUT" || request.method == "PATCH" {
            out.writeStaticString("Content-Length: 0\r\n")
        }
        out.writeStaticString("\r\n")
        if var body { out.writeBuffer(&body) }
        self.request?.body = ByteBuffer()  // the bytes are in `out`
        answer = Answer()
        deadline = .now() + gateway.configuration.upstreamTimeout
        if let channel = upstreamChannel, channel.isActive {
            send(out, on: channel, reused: true)
            return
        }
        connectAndSend(context, out)
    }

    /// The connection's one timer, always armed while it is open: a request still waiting for the upstream at its
    /// deadline is answered 502; a client silent for `clientTimeout` while the gateway waits for its request is closed
    /// (408 when it had begun one). Otherwise the timer waits for whichever deadline comes next.
    private func scheduleTimeout(_ context: ChannelHandlerContext, at deadline: NIODeadline) {
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(deadline: deadline) {
            let (handler, context) = bound.value
            handler.timer = nil
            handler.timeoutDue(context)
        }
    }

    private func timeoutDue(_ context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        let now = NIODeadline.now()
        switch phase {
        case .waiting:
            if let deadline, deadline <= now {
                badGateway(context, "The upstream did not answer.\n")
            }
        case .head, .body:
            if lastRead + gateway.configuration.clientTimeout <= now {
                if phase == .head, inbound.readableBytes == 0 {
                    context.close(promise: nil)
                } else {
                    refuse(context, GatewayWire.Malformed(status: 408, reason: "The request did not come in time."))
                }
                return
            }
        case .closing:
            return
        }
        guard context.channel.isActive, phase != .closing else { return }
        // Never later than a request forwarded from now on could time out (`now + upstreamTimeout`): `forward` then
        // needs no timer of its own, and the timer fires about once per upstreamTimeout on a busy connection.
        let upstreamTimeout = gateway.configuration.upstreamTimeout
        let next = phase == .waiting ? (deadline ?? now + upstreamTimeout) : min(lastRead + gateway.configuration.clientTimeout, now + upstreamTimeout)
        scheduleTimeout(context, at: max(next, now + .milliseconds(1)))
    }

    private func connectAndSend(_ context: ChannelHandlerContext, _ bytes: ByteBuffer) {
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
                handler.send(bytes, on: channel, reused: false)
            case .failure:
                handler.badGateway(context, "The upstream did not answer.\n")
            }
        }
    }

    private func send(_ bytes: ByteBuffer, on channel: any Channel, reused: Bool) {
        inFlight = (bytes, reused)
        channel.writeAndFlush(bytes, promise: nil)
    }

    /// Bytes of the upstream's answer (on this connection's event loop).
    fileprivate func upstreamRead(_ context: ChannelHandlerContext, _ channel: any Channel, _ bytes: ByteBuffer) {
        guard phase == .waiting, inFlight != nil, upstreamChannel === channel else {
            channel.close(promise: nil)  // an answer to nothing: the connection's framing is lost
            return
        }
        var bytes = bytes
        if answer.inbound.readableBytes == 0 {
            answer.inbound = bytes
        } else {
            answer.inbound.writeBuffer(&bytes)
        }
        do throws(GatewayWire.Malformed) {
            // An answer delimited by the connection's close ends in `upstreamClosed`.
            if try answer.read(limit: gateway.configuration.maximumBodyBytes, requestMethod: request?.method ?? "GET") { answered(context) }
        } catch {
            badGateway(context, "The upstream's answer was malformed or larger than the gateway forwards: \(error.reason)\n")
        }
    }

    /// The upstream's answer is whole: sent on to the client.
    private func answered(_ context: ChannelHandlerContext) {
        guard let request, let head = answer.head else { return }
        if !answer.reusable { dropUpstream() }
        let named = head.connectionOptions
        let isHead = request.method == "HEAD"
        respond(
            context, minorVersion: request.minorVersion, method: request.method, keepAlive: request.keepAlive, status: answer.status,
            reason: head.bytes[head.third], body: answer.body
        ) { out in
            // The upstream's fields but the hop-by-hop ones and its framing; a HEAD answer keeps its Content-Length (RFC
            // 9110 §8.6: the length a GET would send).
            var server = false
            for field in head.fields {
                switch field.kind {
                case .connection, .hopByHop, .transferEncoding, .host, .authorization, .dpop: continue
                case .contentLength: if !isHead { continue }
                case .server: server = true
                case .other, .expect, .claim: break
                }
                if !named.isEmpty, named.contains(head.lowercasedName(field)) { continue }
                out.writeBytes(head.bytes[field.name])
                out.writeStaticString(": ")
                out.writeBytes(head.bytes[field.value])
                out.writeStaticString("\r\n")
            }
            return server
        }
    }

    /// The upstream connection closed or failed. An answer delimited by the close is whole; a request sent on a
    /// kept-alive connection that closed before any of the answer came (the upstream's idle timeout raced it) is sent once
    /// more on a new connection; otherwise an answer the upstream did not finish is a 502.
    fileprivate func upstreamClosed(_ context: ChannelHandlerContext, _ channel: any Channel) {
        guard upstreamChannel === channel else { return }
        upstreamChannel = nil
        guard phase == .waiting, let sent = inFlight else { return }
        if answer.head != nil, answer.framing == .untilClose {
            answered(context)
            return
        }
        inFlight = nil
        if sent.reused, !answer.started {
            connectAndSend(context, sent.bytes)
            return
        }
        badGateway(context, "The upstream's answer was larger than the gateway forwards, or broke off.\n")
    }

    /// Closes the upstream connection, forgotten first: its close calls back (`upstreamClosed`) at once.
    private func dropUpstream() {
        let channel = upstreamChannel
        upstreamChannel = nil
        channel?.close(promise: nil)
    }

    private func badGateway(_ context: ChannelHandlerContext, _ text: String) {
        dropUpstream()
        guard let request else { return }
        respond(
            context, minorVersion: request.minorVersion, method: request.method, keepAlive: request.keepAlive, status: 502,
            fields: [("content-type", "text/plain")], body: ByteBuffer(string: text))
    }

    // MARK: Answering

    /// Sends the answer to the current request; the connection stays open when the client wants it, and what the client
    /// pipelined behind it is handled next.
    private func respond(
        _ context: ChannelHandlerContext, minorVersion: Int, method: String, keepAlive: Bool, status: Int, fields: [(String, String)],
        body: ByteBuffer
    ) {
        respond(context, minorVersion: minorVersion, method: method, keepAlive: keepAlive, status: status, reason: nil, body: body) { out in
            for (name, value) in fields {
                out.writeString(name)
                out.writeStaticString(": ")
                out.writeString(value)
                out.writeStaticString("\r\n")
            }
            return false
        }
    }

    /// `writeFields` writes the answer's fields but Content-Length, Connection and Server, and says whether it wrote a
    /// Server field.
    private func respond(
        _ context: ChannelHandlerContext, minorVersion: Int, method: String, keepAlive: Bool, status: Int, reason: ArraySlice<UInt8>?,
        body: ByteBuffer, writeFields: (inout ByteBuffer) -> Bool
    ) {
        guard phase == .waiting else { return }
        deadline = nil
        inFlight = nil
        request = nil
        answer = Answer()
        let keepAlive = keepAlive && !quiescing
        let sendsBody = method != "HEAD" && status >= 200 && status != 204 && status != 304
        var out = context.channel.allocator.buffer(capacity: 256 + body.readableBytes)
        out.writeStaticString(minorVersion == 0 ? "HTTP/1.0 " : "HTTP/1.1 ")
        out.writeString(String(status))
        out.writeStaticString(" ")
        if let reason, !reason.isEmpty {
            out.writeBytes(reason)
        } else {
            out.writeString(HTTPResponseStatus(statusCode: status).reasonPhrase)
        }
        out.writeStaticString("\r\n")
        let server = writeFields(&out)
        if sendsBody {
            out.writeStaticString("Content-Length: ")
            out.writeString(String(body.readableBytes))
            out.writeStaticString("\r\n")
        }
        if !server { out.writeStaticString("Server: Portcullis gateway\r\n") }
        if !keepAlive {
            out.writeStaticString("Connection: close\r\n")
        } else if minorVersion == 0 {
            out.writeStaticString("Connection: keep-alive\r\n")
        }
        out.writeStaticString("\r\n")
        if sendsBody, body.readableBytes > 0 {
            var body = body
            out.writeBuffer(&body)
        }
        guard keepAlive else {
            phase = .closing
            inbound.clear()
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(out)).whenComplete { _ in channel.close(promise: nil) }
            return
        }
        context.writeAndFlush(wrapOutboundOut(out), promise: nil)
        phase = .head
        process(context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        phase = .closing
        inbound.clear()
        dropUpstream()
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
