import NIOCore
import PortcullisGatewayWire
import PortcullisResourceServer
import PortcullisTesting
import PortcullisTokens
import Testing

/// The gateway's own HTTP/1.1 framing (GatewayWire): what it accepts, what it refuses and with which status, and that no
/// input makes it crash or hand out ranges outside the head.
@Suite("the gateway's HTTP/1.1 framing")
struct GatewayWireTests {
    typealias Wire = GatewayWire

    static func head(_ text: String, request: Bool = true) throws(Wire.Malformed) -> Wire.Head? {
        let bytes = Array(text.utf8)
        return try bytes.withUnsafeBufferPointer { buffer throws(Wire.Malformed) in
            let raw = UnsafeRawBufferPointer(buffer)
            guard let length = try Wire.headLength(raw) else { return nil }
            return try Wire.parseHead(raw, length: length, request: request)
        }
    }

    static func refusal(_ text: String, request: Bool = true) -> Int? {
        do {
            guard let head = try head(text, request: request) else { return nil }
            if request { _ = try Wire.requestFraming(head, minorVersion: Wire.minorVersion(head, head.third)) }
            return 0
        } catch {
            return error.status
        }
    }

    @Test("a request's head: its parts, its fields told apart, the values trimmed")
    func requestHead() throws {
        let parsed = try #require(
            try Self.head(
                "POST /a/b?c=d HTTP/1.1\r\nHost: x\r\nauthorization:  Bearer t \r\nX-Portcullis-Subject: forged\r\nDPoP: p\r\n"
                    + "Connection: Keep-Alive, X-Hop\r\nX-Hop: 1\r\nTE: trailers\r\nContent-Length: 3\r\nAccept:\r\n\r\nabc"))
        #expect(parsed.string(parsed.first) == "POST" && parsed.string(parsed.second) == "/a/b?c=d" && Wire.minorVersion(parsed, parsed.third) == 1)
        #expect(parsed.bytes.suffix(4).elementsEqual("\r\n\r\n".utf8))  // the head ends before the body
        #expect(
            parsed.fields.map(\.kind) == [.host, .authorization, .claim, .dpop, .connection, .other, .hopByHop, .contentLength, .other])
        #expect(parsed.values(.authorization) == ["Bearer t"] && parsed.values(.dpop) == ["p"])
        #expect(parsed.connectionOptions == ["keep-alive", "x-hop"])
        #expect(try Wire.requestFraming(parsed, minorVersion: 1) == .length(3))
        #expect(parsed.string(parsed.fields.last!.value) == "")
        // Not all of it yet: no answer either way.
        #expect(try Self.head("GET / HTTP/1.1\r\nHost: x\r\n") == nil)
    }

    @Test(
        "what could be read two ways is refused, with its status",
        arguments: [
            ("GET / HTTP/1.1\nHost: x\r\n\r\n", 400),  // a bare LF
            ("GET / HTTP/1.1\r\nHost: x\rY: z\r\n\r\n", 400),  // a bare CR
            ("GET / HTTP/1.1\r\nA: b\r\n c\r\n\r\n", 400),  // obs-fold
            ("GET / HTTP/1.1\r\nHost : x\r\n\r\n", 400),  // whitespace before the colon
            ("GET / HTTP/1.1\r\nA: b\u{0}c\r\n\r\n", 400),  // NUL
            ("GET / HTTP/1.1\r\nA: b\u{1}c\r\n\r\n", 400),  // another control character
            ("GET / HTTP/1.1\r\nnocolon\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\n: x\r\n\r\n", 400),
            ("G(T / HTTP/1.1\r\n\r\n", 400),
            ("GET http://elsewhere/ HTTP/1.1\r\n\r\n", 400),  // absolute-form
            ("GET * HTTP/1.1\r\n\r\n", 400),
            ("GET /a b HTTP/1.1\r\n\r\n", 400),
            ("GET /\r\n\r\n", 400),  // HTTP/0.9
            ("GET / HTTP/2.0\r\n\r\n", 505),
            ("GET / HTTP/1.2\r\n\r\n", 505),
            ("GET / HTTQ/1.1\r\n\r\n", 400),
            ("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n", 400),  // CL.TE
            ("POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400),  // TE.CL
            ("POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501),
            ("POST / HTTP/1.1\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", 501),
            ("POST / HTTP/1.1\r\nTransfer-Encoding: xchunked\r\n\r\n", 501),
            ("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
            ("POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n", 400),
            ("POST / HTTP/1.1\r\nContent-Length: 3, 4\r\n\r\n", 400),
            ("POST / HTTP/1.1\r\nContent-Length: +3\r\n\r\n", 400),
            ("POST / HTTP/1.1\r\nContent-Length: 0x3\r\n\r\n", 400),
            ("POST / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n", 400),
            ("POST / HTTP/1.1\r\nContent-Length: \r\n\r\n", 400),
            ("POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n", 0),  // repeated, the same: one length
            ("POST / HTTP/1.1\r\nContent-Length: 3, 3\r\n\r\n", 0),
            ("GET / HTTP/1.0\r\nA:\tb\t\r\n\r\n", 0),
        ])
    func refusals(text: String, status: Int) {
        #expect(Self.refusal(text) == status, "\(text.debugDescription)")
    }

    @Test("names the gateway sets, in any spelling of - and _ (CGI and WSGI fold them): X-Portcullis-*, X-Forwarded-*, Forwarded")
    func foldedNames() throws {
        let names = [
            "X-Portcullis-Roles", "X_Portcullis_Roles", "x-PORTCULLIS_acrs", "X_PORTCULLIS-USER", "X-Forwarded-For", "X_Forwarded_Host",
            "x-forwarded_proto", "Forwarded", "FORWARDED", "X-Portcullis-Something-New",
        ]
        let text = "GET / HTTP/1.1\r\nHost: x\r\n" + names.map { "\($0): v\r\n" }.joined() + "X-Portcullisx: keep\r\nX-Forwarded: keep\r\n\r\n"
        let parsed = try #require(try Self.head(text))
        let kinds = parsed.fields.dropFirst().map(\.kind)
        #expect(kinds == [.claim, .claim, .claim, .claim, .forwarded, .forwarded, .forwarded, .forwarded, .forwarded, .claim, .other, .other], "\(kinds)")
    }

    @Test("a path stays inside the base: dot segments (literal or %2e in any case), encoded slashes and backslashes refused; the query is not read")
    func targets() {
        func refused(_ target: String) -> Bool {
            do {
                try Wire.checkTarget(Array(target.utf8)[...])
                return false
            } catch {
                return error.status == 400
            }
        }
        for bad in [
            "/..", "/../secret", "/a/../../b", "/a/./b", "/.", "/%2e%2e/secret", "/%2E%2e/x", "/.%2e/x", "/%2e/x", "/a/%2E", "/a%2fb", "/a%2F..",
            "/a%5cb", "/a\\b", "/x/..?q=1",
        ] {
            #expect(refused(bad), "\(bad)")
        }
        for good in ["/", "/a/b", "/a..b", "/...", "/.well-known/x", "/a/.b", "/%2e%2e%2e", "/a?x=../..", "/a?p=%2f", "/a%2Eb", "/%41"] {
            #expect(!refused(good), "\(good)")
        }
    }

    @Test("limits: the head's size and its number of fields (431)")
    func limits() {
        let long = "GET / HTTP/1.1\r\nA: " + String(repeating: "a", count: Wire.maximumHeadBytes) + "\r\n\r\n"
        #expect(Self.refusal(long) == 431)
        let unterminated = "GET / HTTP/1.1\r\nA: " + String(repeating: "a", count: Wire.maximumHeadBytes)
        #expect(Self.refusal(unterminated) == 431)
        let many = "GET / HTTP/1.1\r\n" + String(repeating: "A: b\r\n", count: Wire.maximumFields + 1) + "\r\n"
        #expect(Self.refusal(many) == 431)
        let enough = "GET / HTTP/1.1\r\n" + String(repeating: "A: b\r\n", count: Wire.maximumFields) + "\r\n"
        #expect(Self.refusal(enough) == 0)
    }

    @Test("an answer's framing (RFC 9112 §6.3)")
    func answerFraming() throws {
        func framing(_ text: String, method: String = "GET") throws -> Wire.Framing {
            let head = try #require(try Self.head(text, request: false))
            return try Wire.answerFraming(head, status: Int(head.string(head.second))!, requestMethod: method)
        }
        #expect(try framing("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n") == .length(5))
        #expect(try framing("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", method: "HEAD") == .none)
        #expect(try framing("HTTP/1.1 204 No Content\r\n\r\n") == .none)
        #expect(try framing("HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n") == .none)
        #expect(try framing("HTTP/1.1 100 Continue\r\n\r\n") == .none)
        #expect(try framing("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\nContent-Length: 5\r\n\r\n") == .chunked)
        #expect(try framing("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n") == .untilClose)
        #expect(try framing("HTTP/1.0 200 OK\r\n\r\n") == .untilClose)
        #expect(try framing("HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n") == .none)  // no reason phrase
        #expect(throws: Wire.Malformed(status: 502, reason: "The Content-Length is not a number.")) {
            try framing("HTTP/1.1 200 OK\r\nContent-Length: five\r\n\r\n")
        }
        #expect(Self.refusal("HTTP/1.1 20 OK\r\n\r\n", request: false) == 400)
        #expect(Self.refusal("HTTP/1.1 200 O\u{1}K\r\n\r\n", request: false) == 400)
    }

    @Test("a chunked body, however it is split, and what breaks one")
    func chunked() throws {
        let body = "5;name=value\r\nhello\r\n6\r\n world\r\nA\r\n0123456789\r\n0\r\nTrailer: x\r\n\r\nNEXT"
        for split in [1, 2, 3, 7, body.utf8.count] {
            var decoder = Wire.ChunkedDecoder()
            var out = ByteBuffer()
            var rest = ByteBuffer()
            var bytes = Array(body.utf8)[...]
            while !bytes.isEmpty, !decoder.isDone {
                rest.writeBytes(bytes.prefix(split))
                bytes = bytes.dropFirst(split)
                try decoder.feed(&rest, into: &out)
            }
            #expect(decoder.isDone && String(buffer: out) == "hello world0123456789", "split \(split)")
            #expect(String(buffer: rest) + String(decoding: bytes, as: UTF8.self) == "NEXT", "split \(split)")
        }
        for broken in ["x\r\n", "5\r\nhelloXY", "5\nhello\r\n", "-5\r\n", "+5\r\n", "5\r\r\n", "1;\u{0}\r\n", "1000000000000000\r\n"] {
            var decoder = Wire.ChunkedDecoder()
            var out = ByteBuffer()
            var input = ByteBuffer(string: broken)
            #expect(throws: Wire.Malformed.self, "\(broken.debugDescription)") { try decoder.feed(&input, into: &out) }
        }
        var decoder = Wire.ChunkedDecoder()
        var out = ByteBuffer()
        var endless = ByteBuffer(string: String(repeating: "1", count: 2000))
        #expect(throws: Wire.Malformed.self) { try decoder.feed(&endless, into: &out) }  // a size line without end
    }

    @Test("20,000 mutated requests: no crash, and what is accepted holds only well-formed fields")
    func mutations() throws {
        var random = SeededGenerator(seed: 0x5EED)
        let seeds = [
            "POST /echo?x=1 HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer abc.def\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
            "GET / HTTP/1.0\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nhi",
            "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
        ]
        let alphabet: [UInt8] = Array("\r\n :;,\t\0\u{7F}0aZ/-".utf8) + [0xFF]
        for round in 0..<20000 {
            var bytes = Array(seeds[round % seeds.count].utf8)
            for _ in 0...Int.random(in: 0..<4, using: &random) {
                let at = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<4, using: &random) {
                case 0: bytes[at] = alphabet.randomElement(using: &random)!
                case 1: bytes.insert(alphabet.randomElement(using: &random)!, at: at)
                case 2: if bytes.count > 1 { bytes.remove(at: at) }
                default: bytes = Array(bytes.prefix(at + 1))
                }
            }
            let request = round % seeds.count != 2
            let parsed: Wire.Head?
            do throws(Wire.Malformed) {
                parsed = try bytes.withUnsafeBufferPointer { buffer throws(Wire.Malformed) in
                    let raw = UnsafeRawBufferPointer(buffer)
                    guard let length = try Wire.headLength(raw) else { return nil }
                    return try Wire.parseHead(raw, length: length, request: request)
                }
            } catch {
                #expect([400, 431, 505].contains(error.status))
                continue
            }
            guard let parsed else { continue }
            for field in parsed.fields {
                #expect(field.name.upperBound <= parsed.bytes.count && field.value.upperBound <= parsed.bytes.count)
                #expect(!field.name.isEmpty && parsed.bytes[field.name].allSatisfy(Wire.isTokenByte))
                #expect(parsed.bytes[field.value].allSatisfy { $0 == 9 || $0 >= 32 && $0 != 127 })
            }
            if request {
                _ = try? Wire.requestFraming(parsed, minorVersion: Wire.minorVersion(parsed, parsed.third))
                var decoder = Wire.ChunkedDecoder()
                var out = ByteBuffer()
                var rest = ByteBuffer(bytes: bytes.dropFirst(parsed.bytes.count))
                _ = try? decoder.feed(&rest, into: &out)
            } else {
                _ = try? Wire.answerFraming(parsed, status: Int(parsed.string(parsed.second)) ?? 0, requestMethod: "GET")
            }
        }
    }

    @Test("the head's end is the first CRLF CRLF, wherever it falls (against a plain search, 50,000 inputs)")
    func headEnd() throws {
        var random = SeededGenerator(seed: 0xE4D)
        let alphabet = Array("\r\n\ra".utf8)
        for _ in 0..<50000 {
            let bytes = (0..<Int.random(in: 0..<24, using: &random)).map { _ in alphabet.randomElement(using: &random)! }
            let expected = bytes.indices.first { bytes[$0...].starts(with: [13, 10, 13, 10]) }.map { $0 + 4 }
            let found = try bytes.withUnsafeBufferPointer { buffer throws(Wire.Malformed) in try Wire.headLength(UnsafeRawBufferPointer(buffer)) }
            #expect(found == expected, "\(bytes)")
        }
    }

    @Test("an Authorization field's scheme and token")
    func authorization() {
        func parsed(_ value: String?) -> String? {
            ProtectedResourceRequest(authorization: value).map { "\($0.scheme.rawValue) \($0.token)" }
        }
        #expect(parsed("Bearer abc") == "Bearer abc")
        #expect(parsed("bEARER \t abc \t") == "Bearer abc")
        #expect(parsed("DPoP x.y.z") == "DPoP x.y.z")
        #expect(parsed("dpop x") == "DPoP x")
        for refused in [nil, "Basic abc", "Bearer", "Bearer ", "Bearer a b", "Bearer a\tb", "Bearerx abc", "abc"] {
            #expect(parsed(refused) == nil, "\(String(describing: refused))")
        }
    }
}
