import NIOCore
import NIOHTTP1
import PortcullisGatewayWire

/// One client connection of the gateway as a state machine, in the style of postgres-nio's `ConnectionStateMachine` and
/// NIO's `HTTPServerPipelineHandler`: events in (bytes read, the channel asking to read, a request decided, the upstream
/// connected, its bytes, its close, the timer, a graceful shutdown, the client gone), actions out (read, write, decide,
/// forward, close). Every decision is here — framing and pipelining (RFC 9112 §9.3.2: answers in the order of the
/// requests; what is pipelined behind a request in progress waits and reads stop), 100-continue, the retry of a request
/// sent on a kept-alive upstream connection the upstream had just closed, quiescing, the fields forwarded, and every
/// deadline: an idle client, a head that must be whole within `headTimeout` however slowly its bytes trickle in, a body
/// that must keep a minimum rate, an upstream that must answer within `upstreamTimeout`. `GatewayConnection` performs the
/// actions and nothing else, so this is tested as tables without sockets.
struct GatewayConnectionStateMachine {
    struct Limits: Sendable {
        var maximumBodyBytes: Int
        /// A client silent this long while the gateway waits for (more of) a request is closed (408 if one had begun).
        var clientTimeout: TimeAmount
        var upstreamTimeout: TimeAmount
        /// A request's head must be whole this long after its first byte (slowloris: a byte every few seconds resets the
        /// idle clock, never this one).
        var headTimeout: TimeAmount
        /// Once `bodyGrace` has passed, a body must have come at this many bytes a second on average.
        var minimumBodyRate: Int
        var bodyGrace: TimeAmount
        /// How long, after its last answer, a connection the gateway closes goes on reading (and dropping) what the client
        /// still sends (RFC 9112 §9.6: closing at once, with unread bytes, resets the connection and the client may lose
        /// the answer — a 408 to a client still trickling its head, say). The client's own close ends it sooner.
        var lingerTimeout: TimeAmount = .seconds(2)

        /// The shortest of the deadlines: the connection's timer never waits longer, so no event ever has to move it earlier.
        var shortest: TimeAmount { min(clientTimeout, upstreamTimeout, headTimeout, bodyGrace) }
    }

    /// What is written into every request sent upstream besides the client's own fields.
    struct Forwarding: Sendable {
        /// The upstream's base path (`/api` of `http://host/api`) and the `Host` it is sent.
        var basePath: String
        var authority: String
        /// `X-Forwarded-Proto`: the scheme clients call the gateway by.
        var scheme: String
        /// `X-Forwarded-For`: the client's address, when known.
        var clientAddress: String?
    }

    enum Action: Equatable {
        /// Ask the channel for more bytes.
        case read
        case write(ByteBuffer)
        /// Write, then close the connection's output (its FIN after the answer); the client's bytes are still read, and
        /// dropped, until it closes or the timer closes the connection (`lingerTimeout`, RFC 9112 §9.6).
        case writeAndClose(ByteBuffer)
        /// Decide the request (its token): the answer comes back as `decided`.
        case decide(Request.Summary)
        /// Send the bytes upstream: on the upstream connection if it is open, else on a new one (`upstreamSent`, or
        /// `upstreamFailed`, follows).
        case forward(ByteBuffer)
        case closeUpstream
        case close
    }

    /// How a request was decided.
    enum Decision {
        /// Forward it, with the token's claims as fields (`X-Portcullis-*`).
        case forward(claims: [(String, String)])
        /// Answer it here (a refusal, the health answer).
        case respond(status: Int, fields: [(String, String)], body: ByteBuffer)
    }

    /// `draining`: the last answer is written and the output closed; what the client still sends is dropped until it
    /// closes or `lingerTimeout` passes. `closing`: closed, or about to be.
    enum Phase: Equatable { case head, body, waiting, draining, closing }

    struct Request {
        let head: GatewayWire.Head
        let method: String
        let minorVersion: Int
        let keepAlive: Bool
        let connectionOptions: Set<String>
        var framing: GatewayWire.Framing
        var body: ByteBuffer
        var chunks = GatewayWire.ChunkedDecoder()

        /// What deciding a request needs to know of it.
        struct Summary: Equatable {
            let sequence: UInt64
            let method: String
            /// The target's path (without the query).
            let path: String
            /// The Authorization fields, joined (several are refused by the guard).
            let authorization: String?
            let proofs: [String]
        }
    }

    let limits: Limits
    let forwarding: Forwarding
    private(set) var phase = Phase.head
    /// What the client sent that is not consumed yet.
    private var inbound = ByteBuffer()
    private var request: Request?
    /// Counts requests: an answer that comes back late (a decision, a connect) for an earlier one is dropped.
    private(set) var sequence: UInt64 = 0
    private var holdingReads = false
    private var readPending = false
    /// A graceful shutdown began: the connection closes once the request in progress, if any, is answered.
    private var quiescing = false
    /// The request sent upstream and not answered yet, and whether it went on a connection used before.
    private var inFlight: (bytes: ByteBuffer, reused: Bool)?
    private var answer = GatewayAnswer()
    private var upstreamDeadline: NIODeadline?
    private var lastRead: NIODeadline
    /// When the head being read began (its first byte), and when its body began.
    private var headStarted: NIODeadline?
    private var bodyStarted: NIODeadline?
    /// When a draining connection is closed whatever the client does.
    private var drainDeadline: NIODeadline?

    init(limits: Limits, forwarding: Forwarding, now: NIODeadline) {
        self.limits = limits
        self.forwarding = forwarding
        self.lastRead = now
    }

    // MARK: The client's events

    mutating func read(_ bytes: ByteBuffer, now: NIODeadline) -> [Action] {
        if phase == .draining { return [] }  // after the last answer: dropped, and reads go on until the client closes
        lastRead = now
        var bytes = bytes
        if inbound.readableBytes == 0 {
            inbound = bytes
        } else {
            inbound.writeBuffer(&bytes)
        }
        if phase == .head, headStarted == nil { headStarted = now }
        if phase == .waiting || phase == .closing {
            holdingReads = true  // a pipelined request: handled once the one in progress is answered
            return []
        }
        return process(now: now)
    }

    /// The channel wants to read: granted unless reads are held.
    mutating func readRequested() -> [Action] {
        guard holdingReads else { return [.read] }
        readPending = true
        return []
    }

    /// A graceful shutdown: an idle connection closes now, a busy one after its answer.
    mutating func quiesce() -> [Action] {
        quiescing = true
        guard phase != .draining else { return [] }  // closes by itself within lingerTimeout
        guard phase == .head, inbound.readableBytes == 0 else { return [] }
        phase = .closing
        return [.close]
    }

    /// The client's connection closed.
    mutating func closed() -> [Action] {
        phase = .closing
        inbound.clear()
        request = nil
        inFlight = nil
        return [.closeUpstream]
    }

    // MARK: The decision's and the upstream's events

    mutating func decided(sequence: UInt64, _ decision: Decision, now: NIODeadline) -> [Action] {
        guard sequence == self.sequence, phase == .waiting, let request else { return [] }
        switch decision {
        case .respond(let status, let fields, let body):
            return respond(status: status, fields: fields, body: body, now: now)
        case .forward(let claims):
            let bytes = upstreamRequest(request, claims: claims)
            self.request?.body = ByteBuffer()  // the bytes are in `bytes`
            answer = GatewayAnswer()
            upstreamDeadline = now + limits.upstreamTimeout
            inFlight = (bytes, false)
            return [.forward(bytes)]
        }
    }

    /// Whether the request `sequence` still waits for the upstream (a connect that completes late is not used).
    func awaitsUpstream(_ sequence: UInt64) -> Bool { sequence == self.sequence && phase == .waiting && inFlight != nil }

    /// The request in flight was written upstream; `reused`: on a connection that carried an earlier one.
    mutating func upstreamSent(reused: Bool) {
        if let sent = inFlight { inFlight = (sent.bytes, reused) }
    }

    /// No upstream connection could be made.
    mutating func upstreamFailed(now: NIODeadline) -> [Action] {
        guard phase == .waiting, inFlight != nil else { return [] }
        return badGateway("The upstream did not answer.\n", now: now, upstreamOpen: false)
    }

    /// Bytes of the upstream's answer.
    mutating func upstreamRead(_ bytes: ByteBuffer, now: NIODeadline) -> [Action] {
        guard phase == .waiting, inFlight != nil, let request else { return [.closeUpstream] }  // an answer to nothing: framing lost
        var bytes = bytes
        answer.append(&bytes)
        do throws(GatewayWire.Malformed) {
            // An answer delimited by the connection's close ends in `upstreamClosed`.
            guard try answer.read(limit: limits.maximumBodyBytes, requestMethod: request.method) else { return [] }
            return answered(now: now, upstreamOpen: true)
        } catch {
            return badGateway("The upstream's answer was malformed or larger than the gateway forwards: \(error.reason)\n", now: now, upstreamOpen: true)
        }
    }

    /// The upstream connection closed or failed. An answer delimited by the close is whole; a request sent on a kept-alive
    /// connection that closed before any of the answer came (the upstream's idle timeout raced it) is sent once more on a
    /// new connection; otherwise an answer the upstream did not finish is a 502.
    mutating func upstreamClosed(now: NIODeadline) -> [Action] {
        guard phase == .waiting, let sent = inFlight else { return [] }
        if answer.head != nil, answer.framing == .untilClose { return answered(now: now, upstreamOpen: false) }
        if sent.reused, !answer.started {
            inFlight = (sent.bytes, false)
            answer = GatewayAnswer()
            return [.forward(sent.bytes)]
        }
        return badGateway("The upstream's answer was larger than the gateway forwards, or broke off.\n", now: now, upstreamOpen: false)
    }

    // MARK: Time

    /// When `timerFired` must next be called; `nil` when nothing waits.
    var nextDeadline: NIODeadline? {
        switch phase {
        case .closing:
            return nil
        case .draining:
            return drainDeadline
        case .waiting:
            return upstreamDeadline
        case .head:
            let idle = lastRead + limits.clientTimeout
            return headStarted.map { min(idle, $0 + limits.headTimeout) } ?? idle
        case .body:
            let idle = lastRead + limits.clientTimeout
            guard let bodyStarted, limits.minimumBodyRate > 0 else { return idle }  // a rate of 0: no minimum
            return min(idle, bodyStarted + max(limits.bodyGrace, bodyAllowance))
        }
    }

    /// How long the body received so far may have taken at the minimum rate.
    private var bodyAllowance: TimeAmount {
        let received = Int64((request?.body.readableBytes ?? 0) + inbound.readableBytes)
        return .nanoseconds(received * 1_000_000_000 / Int64(max(1, limits.minimumBodyRate)))
    }

    mutating func timerFired(now: NIODeadline) -> [Action] {
        guard let due = nextDeadline, due <= now else { return [] }
        switch phase {
        case .closing:
            return []
        case .draining:
            phase = .closing
            return [.close]
        case .waiting:
            return badGateway("The upstream did not answer.\n", now: now, upstreamOpen: true)
        case .head where headStarted == nil && inbound.readableBytes == 0:
            phase = .closing  // an idle keep-alive connection: closed without a word
            return [.close]
        case .head, .body:
            return refuse(GatewayWire.Malformed(status: 408, reason: "The request did not come in time."), now: now)
        }
    }

    // MARK: Framing

    /// Frames what the client sent: a request whose body has all come is to be decided; a malformed one is refused.
    private mutating func process(now: NIODeadline) -> [Action] {
        var actions: [Action] = []
        do throws(GatewayWire.Malformed) {
            while true {
                switch phase {
                case .head:
                    guard inbound.readableBytes > 0, let continues = try readHead(now: now) else { return actions + resumeReads() }
                    if continues { actions.append(.write(ByteBuffer(staticString: "HTTP/1.1 100 Continue\r\n\r\n"))) }
                case .body:
                    guard try readBody() else { return actions + resumeReads() }
                    phase = .waiting
                    bodyStarted = nil
                    return actions + [.decide(summary())]
                case .waiting, .draining, .closing:
                    return actions
                }
            }
        } catch {
            return actions + refuse(error, now: now)
        }
    }

    private mutating func resumeReads() -> [Action] {
        if inbound.readableBytes == 0 { inbound.clear() } else if inbound.readerIndex > 65536 { inbound.discardReadBytes() }
        holdingReads = false
        guard readPending else { return [] }
        readPending = false
        return [.read]
    }

    /// Reads the next request's head when it has all come: `nil` until then; `true` when the client waits for 100
    /// (Continue) before sending its body.
    private mutating func readHead(now: NIODeadline) throws(GatewayWire.Malformed) -> Bool? {
        if headStarted == nil { headStarted = now }
        let length: Int? = try inbound.withUnsafeReadableBytes { bytes throws(GatewayWire.Malformed) in try GatewayWire.headLength(bytes) }
        guard let length else { return nil }
        let head = try inbound.withUnsafeReadableBytes { bytes throws(GatewayWire.Malformed) in
            try GatewayWire.parseHead(bytes, length: length, request: true)
        }
        inbound.moveReaderIndex(forwardBy: length)
        headStarted = nil
        let minor = GatewayWire.minorVersion(head, head.third)
        let options = head.connectionOptions
        let keepAlive = minor == 1 ? !options.contains("close") : options.contains("keep-alive")
        sequence &+= 1
        // The request is known before its framing is checked: a refusal answers in its version.
        request = Request(
            head: head, method: head.string(head.first), minorVersion: minor, keepAlive: keepAlive, connectionOptions: options, framing: .none,
            body: ByteBuffer())
        let framing = try GatewayWire.requestFraming(head, minorVersion: minor)
        request?.framing = framing
        // RFC 9112 §3.2: an HTTP/1.1 request has one Host field (the gateway sends the upstream's own).
        if minor == 1, head.fields.lazy.filter({ $0.kind == .host }).count != 1 {
            throw GatewayWire.Malformed.bad("An HTTP/1.1 request needs one Host field.")
        }
        try GatewayWire.checkTarget(head.bytes[head.second])
        if case .length(let length) = framing, length > limits.maximumBodyBytes {
            throw GatewayWire.Malformed(status: 413, reason: "The request's body is larger than the gateway forwards.")
        }
        phase = .body
        bodyStarted = now
        // RFC 9110 §10.1.1: a client that waits for 100 (Continue) before its body gets it at once; the body is read whole
        // before the token is checked.
        return minor == 1 && framing != .none && inbound.readableBytes == 0 && head.listElements(.expect).contains("100-continue")
    }

    /// Reads the request's body as it comes; `true` once it is whole.
    private mutating func readBody() throws(GatewayWire.Malformed) -> Bool {
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
            if current.body.readableBytes > limits.maximumBodyBytes {
                throw GatewayWire.Malformed(status: 413, reason: "The request's body is larger than the gateway forwards.")
            }
            return current.chunks.isDone
        }
    }

    private func summary() -> Request.Summary {
        let head = request!.head
        let authorizations = head.values(.authorization)
        return Request.Summary(
            sequence: sequence, method: request!.method, path: String(decoding: head.bytes[head.second].prefix { $0 != UInt8(ascii: "?") }, as: UTF8.self),
            authorization: authorizations.isEmpty ? nil : authorizations.joined(separator: ", "), proofs: head.values(.dpop))
    }

    // MARK: The request sent upstream

    /// The request as the upstream gets it: the base path before the target; the client's fields but the hop-by-hop ones,
    /// the framing, the credentials, `Expect` (the gateway holds the body), anything named like the gateway's own
    /// (`X-Portcullis-*`, `X-Forwarded-*`, `Forwarded`, in any spelling of `-` and `_`) and the fields the Connection field
    /// names (RFC 9110 §7.6.1); then the token's claims, `X-Forwarded-For`/`-Host`/`-Proto`, the upstream's `Host` and the
    /// body's length.
    private func upstreamRequest(_ request: Request, claims: [(String, String)]) -> ByteBuffer {
        let head = request.head
        let body = request.body
        var out = ByteBuffer()
        out.reserveCapacity(head.bytes.count + 512 + body.readableBytes)
        out.writeString(request.method)
        out.writeStaticString(" ")
        out.writeString(forwarding.basePath)
        out.writeBytes(head.bytes[head.second])
        out.writeStaticString(" HTTP/1.1\r\n")
        let named = request.connectionOptions
        var host: ArraySlice<UInt8>?
        for field in head.fields {
            if field.kind == .host { host = head.bytes[field.value] }
            guard field.kind == .other || field.kind == .server else { continue }
            if !named.isEmpty, named.contains(head.lowercasedName(field)) { continue }
            out.writeBytes(head.bytes[field.name])
            out.writeStaticString(": ")
            out.writeBytes(head.bytes[field.value])
            out.writeStaticString("\r\n")
        }
        // The claims come from a verified token; a value that could break the request's framing is left out all the same.
        for (name, value) in claims where value.utf8.allSatisfy(GatewayWire.isFieldValueByte) {
            out.writeString(name)
            out.writeStaticString(": ")
            out.writeString(value)
            out.writeStaticString("\r\n")
        }
        if let address = forwarding.clientAddress {
            out.writeStaticString("X-Forwarded-For: ")
            out.writeString(address)
            out.writeStaticString("\r\n")
        }
        if let host {
            out.writeStaticString("X-Forwarded-Host: ")
            out.writeBytes(host)
            out.writeStaticString("\r\n")
        }
        out.writeStaticString("X-Forwarded-Proto: ")
        out.writeString(forwarding.scheme)
        out.writeStaticString("\r\nHost: ")
        out.writeString(forwarding.authority)
        out.writeStaticString("\r\n")
        if body.readableBytes > 0 {
            out.writeStaticString("Content-Length: ")
            out.writeString(String(body.readableBytes))
            out.writeStaticString("\r\n")
        } else if request.method == "POST" || request.method == "PUT" || request.method == "PATCH" {
            out.writeStaticString("Content-Length: 0\r\n")
        }
        out.writeStaticString("\r\n")
        if body.readableBytes > 0 {
            var body = body
            out.writeBuffer(&body)
        }
        return out
    }

    // MARK: Answering

    /// A request the gateway cannot frame or will not take: answered, and the connection closes (what follows on it
    /// cannot be framed).
    private mutating func refuse(_ error: GatewayWire.Malformed, now: NIODeadline) -> [Action] {
        phase = .waiting
        let minor = request?.minorVersion ?? 1
        let method = request?.method ?? "GET"
        return respond(
            minorVersion: minor, method: method, keepAlive: false, status: error.status, reason: nil,
            fields: Self.fields([("content-type", "text/plain")]), server: false, body: ByteBuffer(string: error.reason + "\n"), now: now)
    }

    private mutating func badGateway(_ text: String, now: NIODeadline, upstreamOpen: Bool) -> [Action] {
        inFlight = nil
        let actions = respond(status: 502, fields: [("content-type", "text/plain")], body: ByteBuffer(string: text), now: now)
        return upstreamOpen ? [.closeUpstream] + actions : actions
    }

    /// The upstream's answer is whole: sent on to the client, with the upstream's fields but the hop-by-hop ones and its
    /// framing (a HEAD answer keeps its Content-Length, RFC 9110 §8.6: the length a GET would send).
    private mutating func answered(now: NIODeadline, upstreamOpen: Bool) -> [Action] {
        guard let head = answer.head, let request else { return [] }
        let drop = upstreamOpen && !answer.reusable
        let isHead = request.method == "HEAD"
        let named = head.connectionOptions
        var fields = ByteBuffer()
        var server = false
        for field in head.fields {
            switch field.kind {
            case .connection, .hopByHop, .transferEncoding, .host, .authorization, .dpop: continue
            case .contentLength: if !isHead { continue }
            case .server: server = true
            case .other, .expect, .claim, .forwarded: break
            }
            if !named.isEmpty, named.contains(head.lowercasedName(field)) { continue }
            fields.writeBytes(head.bytes[field.name])
            fields.writeStaticString(": ")
            fields.writeBytes(head.bytes[field.value])
            fields.writeStaticString("\r\n")
        }
        let actions = respond(
            minorVersion: request.minorVersion, method: request.method, keepAlive: request.keepAlive, status: answer.status,
            reason: head.bytes[head.third], fields: fields, server: server, body: answer.body, now: now)
        return drop ? [.closeUpstream] + actions : actions
    }

    private mutating func respond(status: Int, fields: [(String, String)], body: ByteBuffer, now: NIODeadline) -> [Action] {
        guard let request else { return [] }
        return respond(
            minorVersion: request.minorVersion, method: request.method, keepAlive: request.keepAlive, status: status, reason: nil,
            fields: Self.fields(fields), server: false, body: body, now: now)
    }

    private static func fields(_ pairs: [(String, String)]) -> ByteBuffer {
        var out = ByteBuffer()
        for (name, value) in pairs {
            out.writeString(name)
            out.writeStaticString(": ")
            out.writeString(value)
            out.writeStaticString("\r\n")
        }
        return out
    }

    /// Sends the answer to the current request; the connection stays open when the client wants it, and what the client
    /// pipelined behind it is handled next.
    private mutating func respond(
        minorVersion: Int, method: String, keepAlive: Bool, status: Int, reason: ArraySlice<UInt8>?, fields: ByteBuffer, server: Bool,
        body: ByteBuffer, now: NIODeadline
    ) -> [Action] {
        guard phase == .waiting else { return [] }
        upstreamDeadline = nil
        inFlight = nil
        request = nil
        answer = GatewayAnswer()
        let keepAlive = keepAlive && !quiescing
        let sendsBody = method != "HEAD" && status >= 200 && status != 204 && status != 304
        var out = ByteBuffer()
        out.reserveCapacity(256 + fields.readableBytes + body.readableBytes)
        out.writeStaticString(minorVersion == 0 ? "HTTP/1.0 " : "HTTP/1.1 ")
        out.writeString(String(status))
        out.writeStaticString(" ")
        if let reason, !reason.isEmpty {
            out.writeBytes(reason)
        } else {
            out.writeString(HTTPResponseStatus(statusCode: status).reasonPhrase)
        }
        out.writeStaticString("\r\n")
        var fields = fields
        out.writeBuffer(&fields)
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
            phase = .draining
            drainDeadline = now + limits.lingerTimeout
            inbound = ByteBuffer()
            holdingReads = false
            let read = readPending
            readPending = false
            return [.writeAndClose(out)] + (read ? [.read] : [])
        }
        phase = .head
        headStarted = nil
        return [.write(out)] + process(now: now)
    }
}

/// The upstream's answer as it is read.
struct GatewayAnswer {
    private(set) var inbound = ByteBuffer()
    private(set) var head: GatewayWire.Head?
    private(set) var status = 0
    private(set) var framing = GatewayWire.Framing.none
    private(set) var body = ByteBuffer()
    private var chunks = GatewayWire.ChunkedDecoder()
    /// Whether the upstream connection can carry another request after this answer.
    private(set) var reusable = true
    var started: Bool { head != nil || inbound.readableBytes > 0 }

    mutating func append(_ bytes: inout ByteBuffer) {
        if inbound.readableBytes == 0 {
            inbound = bytes
        } else {
            inbound.writeBuffer(&bytes)
        }
    }

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
