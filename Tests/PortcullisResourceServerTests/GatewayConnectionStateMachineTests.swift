import NIOCore
import Testing

@testable import PortcullisResourceServer

/// The gateway connection's state machine as tables: events in, actions out, no sockets (issue 44).
@Suite("the gateway connection's state machine")
struct GatewayConnectionStateMachineTests {
    typealias Machine = GatewayConnectionStateMachine
    static let start = NIODeadline.uptimeNanoseconds(1_000_000_000_000)
    static let limits = Machine.Limits(
        maximumBodyBytes: 1024, clientTimeout: .seconds(60), upstreamTimeout: .seconds(30), headTimeout: .seconds(10), minimumBodyRate: 1024,
        bodyGrace: .seconds(10))

    static func machine(address: String? = "192.0.2.7") -> Machine {
        Machine(limits: limits, forwarding: .init(basePath: "/base", authority: "upstream:9000", scheme: "https", clientAddress: address), now: start)
    }

    static func at(_ seconds: Double) -> NIODeadline { start + .nanoseconds(Int64(seconds * 1_000_000_000)) }

    /// An action in words: what a table compares.
    static func words(_ actions: [Machine.Action]) -> [String] {
        actions.map { action in
            func line(_ bytes: ByteBuffer) -> String { String(String(buffer: bytes).split(separator: "\r\n", maxSplits: 1).first ?? "") }
            switch action {
            case .read: return "read"
            case .write(let bytes): return "write \(line(bytes))"
            case .writeAndClose(let bytes): return "write+close \(line(bytes))"
            case .decide(let request): return "decide \(request.method) \(request.path)"
            case .forward(let bytes): return "forward \(line(bytes))"
            case .closeUpstream: return "close upstream"
            case .close: return "close"
            }
        }
    }

    static func bytes(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }
    static let get = "GET /a?q=1 HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer t\r\n\r\n"
    static let ok = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

    @Test("a request: decided, forwarded under the base, answered; the connection kept")
    func ordinary() {
        var machine = Self.machine()
        #expect(Self.words(machine.read(Self.bytes(Self.get), now: Self.at(0))) == ["decide GET /a"])
        #expect(Self.words(machine.readRequested()) == ["read"], "reads go on until bytes come while a request is decided")
        let sequence = machine.sequence
        #expect(
            Self.words(machine.decided(sequence: sequence, .forward(claims: [("X-Portcullis-Subject", "s")]), now: Self.at(0))) == [
                "forward GET /base/a?q=1 HTTP/1.1"
            ])
        machine.upstreamSent(reused: false)
        #expect(Self.words(machine.upstreamRead(Self.bytes(Self.ok), now: Self.at(0.1))) == ["write HTTP/1.1 200 OK"])
        #expect(machine.phase == .head)
        // A decision for an earlier request, arriving late, is dropped.
        #expect(Self.words(machine.decided(sequence: sequence, .forward(claims: []), now: Self.at(1))).isEmpty)
    }

    @Test("pipelined requests: answered in order, the second decided only after the first is answered")
    func pipelined() {
        var machine = Self.machine()
        #expect(Self.words(machine.read(Self.bytes(Self.get + "HEAD /b HTTP/1.1\r\nHost: gw\r\n\r\n"), now: Self.at(0))) == ["decide GET /a"])
        #expect(
            Self.words(machine.decided(sequence: machine.sequence, .respond(status: 401, fields: [], body: Self.bytes("no")), now: Self.at(0)))
                == ["write HTTP/1.1 401 Unauthorized", "decide HEAD /b"])
        #expect(Self.words(machine.decided(sequence: machine.sequence, .forward(claims: []), now: Self.at(0))) == ["forward HEAD /base/b HTTP/1.1"])
        machine.upstreamSent(reused: false)
        #expect(Self.words(machine.upstreamRead(Self.bytes("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"), now: Self.at(0))) == ["write HTTP/1.1 200 OK"])

        // Bytes that come while a request is in progress hold the reads until it is answered; then the held read goes on.
        var held = Self.machine()
        _ = held.read(Self.bytes(Self.get), now: Self.at(0))
        #expect(Self.words(held.read(Self.bytes("GET /c HTTP/1.1\r\nHost: gw\r\n\r\n"), now: Self.at(0))).isEmpty)
        #expect(Self.words(held.readRequested()).isEmpty, "held")
        #expect(
            Self.words(held.decided(sequence: held.sequence, .respond(status: 204, fields: [], body: ByteBuffer()), now: Self.at(0)))
                == ["write HTTP/1.1 204 No Content", "decide GET /c"])
        #expect(
            Self.words(held.decided(sequence: held.sequence, .respond(status: 204, fields: [], body: ByteBuffer()), now: Self.at(0)))
                == ["write HTTP/1.1 204 No Content", "read"])
    }

    @Test("what is refused: malformed framing (400, closed), a dot segment (400), a body too large (413), Expect: 100-continue answered first")
    func refusals() {
        for (request, first) in [
            ("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", "write+close HTTP/1.1 400 Bad Request"),
            ("GET /../secret HTTP/1.1\r\nHost: a\r\n\r\n", "write+close HTTP/1.1 400 Bad Request"),
            ("GET /%2e%2E/secret HTTP/1.0\r\n\r\n", "write+close HTTP/1.0 400 Bad Request"),
            ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5000\r\n\r\n", "write+close HTTP/1.1 413 Payload Too Large"),
            ("GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n", "write+close HTTP/1.1 400 Bad Request"),
        ] {
            var machine = Self.machine()
            #expect(Self.words(machine.read(Self.bytes(request), now: Self.at(0))) == [first], "\(request.debugDescription)")
            #expect(machine.phase == .draining)
        }
        var machine = Self.machine()
        #expect(
            Self.words(machine.read(Self.bytes("PUT /x HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n"), now: Self.at(0)))
                == ["write HTTP/1.1 100 Continue"])
        #expect(Self.words(machine.read(Self.bytes("abc"), now: Self.at(0.1))) == ["decide PUT /x"])
    }

    @Test("slowloris: a head trickling in is cut at headTimeout from its first byte whatever each byte resets; a slow body at the minimum rate")
    func slowClients() {
        var machine = Self.machine()
        let partial = Array("GET / HTTP/1.1\r\nHost: gw\r\nX-Slow: ".utf8)
        for (index, byte) in partial.enumerated() {
            #expect(Self.words(machine.read(ByteBuffer(bytes: [byte]), now: Self.at(Double(index) * 0.25))).isEmpty)
        }
        #expect(machine.nextDeadline == Self.at(10), "the head's deadline does not move with each byte")
        #expect(Self.words(machine.timerFired(now: Self.at(9.9))).isEmpty)
        #expect(Self.words(machine.timerFired(now: Self.at(10))) == ["write+close HTTP/1.1 408 Request Timeout"])
        // Then the connection lingers (RFC 9112 §9.6): the client's next bytes are read and dropped, so that closing does
        // not reset the connection under the 408 it has not read yet; the timer closes it after lingerTimeout.
        #expect(machine.phase == .draining)
        #expect(Self.words(machine.read(Self.bytes("X"), now: Self.at(10.5))).isEmpty)
        #expect(Self.words(machine.readRequested()) == ["read"], "still reading, to drop")
        #expect(machine.nextDeadline == Self.at(12), "a byte does not extend the linger")
        #expect(Self.words(machine.timerFired(now: Self.at(11.9))).isEmpty)
        #expect(Self.words(machine.quiesce()).isEmpty, "a shutdown waits for the linger, which is short")
        #expect(Self.words(machine.timerFired(now: Self.at(12))) == ["close"])
        #expect(machine.phase == .closing)

        var slow = Self.machine()
        #expect(Self.words(slow.read(Self.bytes("POST /u HTTP/1.1\r\nHost: gw\r\nContent-Length: 1000\r\n\r\n"), now: Self.at(0))).isEmpty)
        for second in 1...12 {
            _ = slow.read(Self.bytes("0123456789"), now: Self.at(Double(second) * 0.9))  // 11 B/s, under 1 KiB/s
        }
        #expect(slow.nextDeadline == Self.at(10), "the grace, then the rate")
        #expect(Self.words(slow.timerFired(now: Self.at(10.5))) == ["write+close HTTP/1.1 408 Request Timeout"])

        // At the rate: 1 KiB in the first second of a 1,000-byte body meets it at once.
        var fast = Self.machine()
        _ = fast.read(Self.bytes("POST /u HTTP/1.1\r\nHost: gw\r\nContent-Length: 1000\r\n\r\n"), now: Self.at(0))
        #expect(Self.words(fast.read(ByteBuffer(repeating: 0x61, count: 1000), now: Self.at(0.5))) == ["decide POST /u"])
    }

    @Test("idle: a keep-alive connection silent for clientTimeout is closed without a word; a request begun is answered 408")
    func idle() {
        var machine = Self.machine()
        #expect(machine.nextDeadline == Self.at(60))
        #expect(Self.words(machine.timerFired(now: Self.at(59))).isEmpty)
        #expect(Self.words(machine.timerFired(now: Self.at(60))) == ["close"])
        var begun = Self.machine()
        _ = begun.read(Self.bytes("GET / HTTP/1.1\r\n"), now: Self.at(0))
        #expect(Self.words(begun.timerFired(now: Self.at(10))) == ["write+close HTTP/1.1 408 Request Timeout"])
    }

    @Test("the upstream: silent past upstreamTimeout (502, its connection dropped); a kept-alive connection closed under a request is retried once")
    func upstream() {
        var machine = Self.machine()
        _ = machine.read(Self.bytes(Self.get), now: Self.at(0))
        _ = machine.decided(sequence: machine.sequence, .forward(claims: []), now: Self.at(0))
        machine.upstreamSent(reused: false)
        #expect(machine.nextDeadline == Self.at(30))
        #expect(Self.words(machine.timerFired(now: Self.at(30))) == ["close upstream", "write HTTP/1.1 502 Bad Gateway"])

        var retried = Self.machine()
        _ = retried.read(Self.bytes(Self.get), now: Self.at(0))
        _ = retried.decided(sequence: retried.sequence, .forward(claims: []), now: Self.at(0))
        retried.upstreamSent(reused: true)
        #expect(Self.words(retried.upstreamClosed(now: Self.at(0.1))) == ["forward GET /base/a?q=1 HTTP/1.1"], "sent again on a new connection")
        retried.upstreamSent(reused: false)
        #expect(Self.words(retried.upstreamClosed(now: Self.at(0.2))) == ["write HTTP/1.1 502 Bad Gateway"], "not twice")

        var untilClose = Self.machine()
        _ = untilClose.read(Self.bytes(Self.get), now: Self.at(0))
        _ = untilClose.decided(sequence: untilClose.sequence, .forward(claims: []), now: Self.at(0))
        untilClose.upstreamSent(reused: false)
        #expect(Self.words(untilClose.upstreamRead(Self.bytes("HTTP/1.0 200 OK\r\n\r\nall of it"), now: Self.at(0))).isEmpty)
        #expect(Self.words(untilClose.upstreamClosed(now: Self.at(0.1))) == ["write HTTP/1.1 200 OK"])

        var malformed = Self.machine()
        _ = malformed.read(Self.bytes(Self.get), now: Self.at(0))
        _ = malformed.decided(sequence: malformed.sequence, .forward(claims: []), now: Self.at(0))
        #expect(
            Self.words(malformed.upstreamRead(Self.bytes("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"), now: Self.at(0)))
                == ["close upstream", "write HTTP/1.1 502 Bad Gateway"])
    }

    @Test("a graceful shutdown: an idle connection closes at once, a busy one after its answer (Connection: close)")
    func quiescing() {
        var idle = Self.machine()
        #expect(Self.words(idle.quiesce()) == ["close"])
        var busy = Self.machine()
        _ = busy.read(Self.bytes(Self.get), now: Self.at(0))
        #expect(Self.words(busy.quiesce()).isEmpty)
        let answered = busy.decided(sequence: busy.sequence, .respond(status: 401, fields: [], body: ByteBuffer()), now: Self.at(0))
        #expect(Self.words(answered) == ["write+close HTTP/1.1 401 Unauthorized"])
        if case .writeAndClose(let bytes) = answered.first { #expect(String(buffer: bytes).contains("Connection: close\r\n")) }
    }

    @Test("what goes upstream: the client's fields but those named like the gateway's (any spelling of - and _), the claims, X-Forwarded-* set here")
    func forwardedFields() throws {
        var machine = Self.machine()
        let request =
            "GET /a HTTP/1.1\r\nHost: api.contoso.example\r\nX_Portcullis_Roles: News.All\r\nX-Portcullis-Acrs: c1\r\n"
            + "x-forwarded-for: 10.0.0.1\r\nX_Forwarded_Host: evil\r\nForwarded: for=1.1.1.1\r\nAccept: text/plain\r\nConnection: close, X-Hop\r\nX-Hop: 1\r\n\r\n"
        _ = machine.read(Self.bytes(request), now: Self.at(0))
        let actions = machine.decided(sequence: machine.sequence, .forward(claims: [("X-Portcullis-Subject", "alice")]), now: Self.at(0))
        guard case .forward(let bytes) = try #require(actions.first) else {
            Issue.record("\(actions)")
            return
        }
        let sent = String(buffer: bytes)
        #expect(
            sent == "GET /base/a HTTP/1.1\r\nAccept: text/plain\r\nX-Portcullis-Subject: alice\r\nX-Forwarded-For: 192.0.2.7\r\n"
                + "X-Forwarded-Host: api.contoso.example\r\nX-Forwarded-Proto: https\r\nHost: upstream:9000\r\n\r\n", "\(sent)")
    }
}
