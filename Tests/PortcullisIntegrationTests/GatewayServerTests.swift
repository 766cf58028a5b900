import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOFoundationEssentialsCompat
import NIOHTTP1
import NIOPosix
import PortcullisResourceServer
import PortcullisServer
import PortcullisTesting
import ServiceLifecycle
import Synchronization
import Testing

/// An upstream that misbehaves on request (PROTOCOL §14.3's gateway must cope): `/ok`; `/echo` answers the body;
/// `/big` answers 2 KiB; `/never` never answers; `/slow` answers after 300 ms; `/once` answers on a connection's first
/// request and closes the connection, unanswered, on any later one (an idle keep-alive connection the upstream closed
/// just as the gateway reused it); `/chunked` answers in chunks; `/legacy` answers HTTP/1.0 until it closes.
final class MisbehavingUpstream: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart
    var head: HTTPRequestHead?
    var body = ByteBuffer()
    var served = 0

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body.clear()
        case .body(var chunk): body.writeBuffer(&chunk)
        case .end:
            guard let head else { return }
            served += 1
            let subject = head.headers["x-portcullis-subject"].first ?? "-"
            switch head.uri {
            case "/echo": answer(context, ByteBuffer(string: "\(subject) \(body.readableBytes)"))
            case "/big": answer(context, ByteBuffer(repeating: 0x61, count: 2048))
            case "/never": break
            case "/slow":
                let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
                context.eventLoop.scheduleTask(in: .milliseconds(300)) {
                    let (handler, context) = bound.value
                    handler.answer(context, ByteBuffer(string: "late"))
                }
            case "/once": if served == 1 { answer(context, ByteBuffer(string: "fresh")) } else { context.close(promise: nil) }
            case "/legacy":  // HTTP/1.0 without Content-Length: the answer ends when the connection closes
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_0, status: .ok))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: "old style")))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in context.close(promise: nil) }
            case "/chunked":  // no Content-Length: NIO's encoder sends the answer chunked
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok))), promise: nil)
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: "in ")))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: "chunks")))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            default: answer(context, ByteBuffer(string: "ok \(subject)"))
            }
        }
    }

    func answer(_ context: ChannelHandlerContext, _ body: ByteBuffer) {
        let head = HTTPResponseHead(version: .http1_1, status: .ok, headers: ["content-length": String(body.readableBytes), "x-upstream": "1"])
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    static func start() async throws -> any Channel {
        try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(MisbehavingUpstream())
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
    }
}

@Suite("the gateway's server (SwiftNIO)")
struct GatewayServerTests {
    @Test("limits, a silent or absent upstream, a stale kept-alive connection, and a graceful shutdown that lets a request finish")
    func misbehaviour() async throws {
        try await Self.withUpstream { authority, upstreamPort, client in try await Self.run(authority: authority, upstreamPort: upstreamPort, client: client) }
    }

    /// A live server (configured by `configure`), a `MisbehavingUpstream` and an HTTP client for the length of `body`,
    /// each closed however it ends.
    static func withUpstream(
        configure: (inout ServerConfiguration) -> Void = { _ in },
        _ body: @Sendable @escaping (_ authority: URL, _ upstreamPort: Int, _ client: HTTPClient) async throws -> Void
    ) async throws {
        try await withTestEnvironment(baseURL: "http://localhost:0", configure: configure) { env in
            try await withLiveServer(env) { authority in
                let client = HTTPClient(eventLoopGroupProvider: .singleton)
                let upstream = try await MisbehavingUpstream.start()
                do {
                    try await body(authority, upstream.localAddress!.port!, client)
                } catch {
                    try? await upstream.close()
                    try? await client.shutdown()
                    throw error
                }
                try await upstream.close()
                try await client.shutdown()
            }
        }
    }

    static func run(authority: URL, upstreamPort: Int, client: HTTPClient) async throws {
        let token = try await Client.carolMailToken(authority, client)
        let logger = Logger(label: "gateway-test")
        let validator = AccessTokenValidator(
            authority: authority.absoluteString, audiences: [Fixtures.mailApiId, Fixtures.mailResource], client: client, logger: logger)
        func gateway(upstream: String, clientTimeout: TimeAmount = .seconds(60)) -> Gateway {
            var configuration = Gateway.Configuration(upstream: upstream, publicBaseURL: "http://127.0.0.1")
            configuration.maximumBodyBytes = 1024
            configuration.upstreamTimeout = .seconds(1)
            configuration.clientTimeout = clientTimeout
            return Gateway(configuration: configuration, guardian: ResourceGuard(validator: validator))
        }
        try await serving(gateway(upstream: "http://127.0.0.1:\(upstreamPort)"), logger: logger) { port, group in
            let base = "http://127.0.0.1:\(port)"
            func call(_ path: String, method: HTTPMethod = .GET, body: Int = 0, authorized: Bool = true) async throws -> (UInt, String, HTTPHeaders) {
                var request = HTTPClientRequest(url: base + path)
                request.method = method
                if authorized { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
                if body > 0 { request.body = .bytes(ByteBuffer(repeating: 0x62, count: body)) }
                let response = try await client.execute(request, timeout: .seconds(10))
                return (response.status.code, String(buffer: try await response.body.collect(upTo: 1 << 20)), response.headers)
            }
            // The ordinary path: twice, the second answered from the verified token on the connection's thread.
            for _ in 0..<2 {
                let (status, text, headers) = try await call("/ok")
                #expect(status == 200 && text == "ok \(Fixtures.carol.id)" && headers.first(name: "x-upstream") == "1", "\(status) \(text)")
            }
            let (refused, _, challenge) = try await call("/ok", authorized: false)
            #expect(refused == 401 && challenge["www-authenticate"].count == 2)
            // Bodies: forwarded within the limit, 413 beyond; an answer beyond it is a 502.
            #expect(try await call("/echo", method: .POST, body: 1000).1 == "\(Fixtures.carol.id) 1000")
            #expect(try await call("/echo", method: .POST, body: 2000).0 == 413)
            #expect(try await call("/big").0 == 502)
            // An upstream that does not answer: 502 after the timeout, and the next request is served on a new connection.
            let started = ContinuousClock.now
            #expect(try await call("/never").0 == 502)
            #expect(ContinuousClock.now - started < .seconds(5))
            #expect(try await call("/ok").0 == 200)
            // A kept-alive upstream connection closed under the request: sent once more on a new one.
            #expect(try await call("/once").1 == "fresh")
            let (again, text, _) = try await call("/once")
            #expect(again == 200 && text == "fresh", "the gateway retried on a new connection: \(again) \(text)")
            // Expect: 100-continue (curl's way with a body over 1 KB): 100 at once, then the answer once the body came.
            let exchange = try await RawExchange.run(
                port: port,
                first: "POST /echo HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer \(token)\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n",
                then: "hello")
            #expect(exchange.beforeBody.hasPrefix("HTTP/1.1 100 Continue"), "\(exchange.beforeBody)")
            #expect(exchange.final.contains("HTTP/1.1 200 OK") && exchange.final.hasSuffix("\(Fixtures.carol.id) 5"), "\(exchange.final)")
            // The gateway frames HTTP itself: a chunked request body goes upstream whole, with its length; a chunked answer
            // comes back with its length; a request that could be framed two ways (CL.TE) is refused and the connection
            // closed; a HEAD answer keeps the upstream's length and has no body.
            let chunkedBody = try await RawExchange.all(
                port: port,
                sending: "POST /echo HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer \(token)\r\nTransfer-Encoding: chunked\r\n"
                    + "Connection: close\r\n\r\n3\r\nhel\r\n2;x=y\r\nlo\r\n0\r\n\r\n")
            #expect(chunkedBody.hasPrefix("HTTP/1.1 200 OK") && chunkedBody.hasSuffix("\r\n\r\n\(Fixtures.carol.id) 5"), "\(chunkedBody)")
            let (chunkedStatus, chunkedText, chunkedHeaders) = try await call("/chunked")
            #expect(chunkedStatus == 200 && chunkedText == "in chunks" && chunkedHeaders["content-length"] == ["9"], "\(chunkedHeaders)")
            #expect(chunkedHeaders["transfer-encoding"].isEmpty)
            let (legacyStatus, legacyText, legacyHeaders) = try await call("/legacy")
            #expect(legacyStatus == 200 && legacyText == "old style" && legacyHeaders["content-length"] == ["9"], "\(legacyStatus) \(legacyText)")
            #expect(try await call("/ok").0 == 200)  // on a new upstream connection
            let smuggled = try await RawExchange.all(
                port: port,
                sending: "POST /echo HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer \(token)\r\nContent-Length: 4\r\n"
                    + "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /ok HTTP/1.1\r\nHost: gateway\r\n\r\n")
            #expect(smuggled.hasPrefix("HTTP/1.1 400 Bad Request") && smuggled.contains("Connection: close"), "\(smuggled)")
            #expect(smuggled.components(separatedBy: "HTTP/1.1 ").count == 2, "one answer, then the connection closed: \(smuggled)")
            let hostless = try await RawExchange.all(
                port: port, sending: "GET /ok HTTP/1.1\r\nAuthorization: Bearer \(token)\r\n\r\n")
            #expect(hostless.hasPrefix("HTTP/1.1 400 Bad Request") && hostless.contains("one Host field"), "\(hostless)")
            let headAnswer = try await RawExchange.all(
                port: port,
                sending: "HEAD /ok HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer \(token)\r\nConnection: close\r\n\r\n")
            let getLength = "content-length: \(3 + Fixtures.carol.id.count)\r\n"  // what GET /ok's "ok <id>" would be
            #expect(
                headAnswer.hasPrefix("HTTP/1.1 200 OK") && headAnswer.lowercased().contains(getLength) && headAnswer.hasSuffix("\r\n\r\n"),
                "\(headAnswer)")
            // Pipelined requests (RFC 9112 §9.3.2): answered in order, each decided on its own — one the upstream answers
            // late, a refusal, a body, and a last one that closes the connection.
            let pipelined = try await RawExchange.all(
                port: port,
                sending: "GET /slow HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer \(token)\r\n\r\n"
                    + "GET /ok HTTP/1.1\r\nHost: gateway\r\n\r\n"
                    + "POST /echo HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer \(token)\r\nContent-Length: 5\r\n\r\nhello"
                    + "GET /ok HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer \(token)\r\nConnection: close\r\n\r\n")
            let statuses = pipelined.components(separatedBy: "HTTP/1.1 ").dropFirst().map { String($0.prefix(3)) }
            #expect(statuses == ["200", "401", "200", "200"], "\(pipelined)")
            let bodies = ["late", "\(Fixtures.carol.id) 5", "ok \(Fixtures.carol.id)"].map { pipelined.range(of: $0)?.lowerBound }
            #expect(bodies.allSatisfy { $0 != nil } && bodies == bodies.sorted { $0! < $1! }, "\(pipelined)")
            // Graceful shutdown: a request in flight finishes, and the server ends.
            async let inFlight = call("/slow")
            try await Task.sleep(for: .milliseconds(100))
            await group.triggerGracefulShutdown()
            let (late, lateText, _) = try await inFlight
            #expect(late == 200 && lateText == "late")
        }
        // A client that says nothing, or starts a request and stops, is closed after the client timeout (408 for the
        // latter); a request in progress is not.
        try await serving(gateway(upstream: "http://127.0.0.1:\(upstreamPort)", clientTimeout: .milliseconds(300)), logger: logger) { port, _ in
            let started = ContinuousClock.now
            #expect(try await RawExchange.all(port: port, sending: "") == "")
            let half = try await RawExchange.all(port: port, sending: "GET /ok HTTP/1.1\r\nHost: gateway\r\n")
            #expect(half.hasPrefix("HTTP/1.1 408 Request Timeout") && half.contains("Connection: close"), "\(half)")
            #expect(ContinuousClock.now - started < .seconds(4), "both closed by the timeout, not the test's 5 s")
            let slow = try await RawExchange.all(
                port: port, sending: "GET /slow HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer \(token)\r\nConnection: close\r\n\r\n")
            #expect(slow.hasPrefix("HTTP/1.1 200 OK") && slow.hasSuffix("late"), "the upstream's 300 ms are not the client's silence: \(slow)")
        }
        // No upstream at all: 502.
        try await serving(gateway(upstream: "http://127.0.0.1:1"), logger: logger) { port, _ in
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/ok")
            request.headers.add(name: "Authorization", value: "Bearer \(token)")
            let response = try await client.execute(request, timeout: .seconds(10))
            #expect(response.status == .badGateway)
        }
    }

    /// Runs `gateway` on a free port while `body` runs, then shuts it down gracefully (again, if `body` did) and waits
    /// until it has ended.
    static func serving(_ gateway: Gateway, logger: Logger, _ body: (_ port: Int, _ group: ServiceGroup) async throws -> Void) async throws {
        let listening = Mutex<Int?>(nil)
        let server = try GatewayServer(
            gateway: gateway, host: "127.0.0.1", port: 0, logger: logger, onListening: { address in listening.withLock { $0 = address?.port } })
        let group = ServiceGroup(configuration: .init(services: [server], logger: logger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var port: Int?
            for _ in 0..<200 where port == nil {
                port = listening.withLock { $0 }
                if port == nil { try await Task.sleep(for: .milliseconds(10)) }
            }
            try await body(try #require(port), group)
            await group.triggerGracefulShutdown()
            try await tasks.next()
        }
    }
}

/// A client on a raw socket: sends `first`, reads what comes back before sending `then`, then reads the rest.
enum RawExchange {
    final class Collector: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let received = Mutex("")
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let buffer = unwrapInboundIn(data)
            received.withLock { $0 += String(buffer: buffer) }
        }
    }

    /// Sends `text` in one write and returns all that comes back until the server closes the connection (or 5 s pass).
    static func all(port: Int, sending text: String) async throws -> String {
        let collector = Collector()
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(collector) } }
            .connect(host: "127.0.0.1", port: port).get()
        defer { channel.close(promise: nil) }
        try await channel.writeAndFlush(ByteBuffer(string: text))
        for _ in 0..<500 where channel.isActive { try await Task.sleep(for: .milliseconds(10)) }
        return collector.received.withLock { $0 }
    }

    static func run(port: Int, first: String, then body: String) async throws -> (beforeBody: String, final: String) {
        let collector = Collector()
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(collector) } }
            .connect(host: "127.0.0.1", port: port).get()
        defer { channel.close(promise: nil) }
        try await channel.writeAndFlush(ByteBuffer(string: first))
        func wait(until done: (String) -> Bool) async throws -> String {
            for _ in 0..<500 {
                let text = collector.received.withLock { $0 }
                if done(text) { return text }
                try await Task.sleep(for: .milliseconds(10))
            }
            return collector.received.withLock { $0 }
        }
        let early = try await wait { $0.contains("\r\n\r\n") }
        collector.received.withLock { $0 = "" }
        try await channel.writeAndFlush(ByteBuffer(string: body))
        let rest = try await wait { $0.contains("\r\n\r\n") && !$0.hasSuffix("\r\n\r\n") }
        return (early, rest)
    }
}
