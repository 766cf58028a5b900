/// HTTP/1.1 message framing for `GatewayServer` (RFC 9112), on bytes, with no dependency (so that the fuzzer builds it
/// alone, as it builds the WebAuthn readers: `scripts/fuzz`). The gateway reads a request's head, decides it,
/// and copies the fields it forwards byte for byte; building NIO's `HTTPRequestHead` and `HTTPHeaders` for that (and
/// again for the upstream's answer) was most of what separated the gateway from a plain TCP relay (BENCHMARKS.md).
///
/// It is strict where leniency lets two parsers disagree about where a message ends (request smuggling): lines end in
/// CRLF and nowhere else, no obs-fold, no whitespace before a field's colon, no control characters in values, one
/// Content-Length value, Transfer-Encoding only as `chunked` and never with Content-Length. What it cannot frame safely it
/// refuses; the connection closes after any framing error.
public enum GatewayWire {
    /// Why a message could not be framed; `status` is the answer to a client (a malformed upstream answer is a 502).
    public struct Malformed: Error, Equatable, Sendable {
        public let status: Int
        public let reason: String
        public init(status: Int, reason: String) {
            self.status = status
            self.reason = reason
        }
        public static func bad(_ reason: String) -> Malformed { Malformed(status: 400, reason: reason) }
    }

    /// A field of a head: byte ranges of its name and (trimmed) value within the head, and what the gateway makes of it.
    public struct Field: Equatable, Sendable {
        public let name: Range<Int>
        public let value: Range<Int>
        public let kind: Kind
    }

    /// The fields the gateway reads or does not forward, told apart by their names once, as the head is parsed.
    public enum Kind: UInt8, Equatable, Sendable {
        case other, connection, contentLength, transferEncoding, authorization, dpop, expect, host, server
        /// Hop-by-hop (RFC 9110 §7.6.1) other than Connection and Transfer-Encoding: Keep-Alive, Proxy-Connection, TE,
        /// Trailer, Upgrade.
        case hopByHop
        /// `X-Portcullis-*`: set by the gateway only. Also `X_Portcullis_*` and any mix: CGI and WSGI stacks map `-` and `_`
        /// alike (`HTTP_X_PORTCULLIS_ROLES`), so a name that folds to the prefix is the gateway's too.
        case claim
        /// `X-Forwarded-*` and `Forwarded` (RFC 7239), in any spelling of `-` and `_`: set by the gateway, never passed on.
        case forwarded

        static func of(_ bytes: UnsafeBufferPointer<UInt8>, _ name: Range<Int>) -> Kind {
            func named(_ lowercased: StaticString) -> Bool { equalsIgnoringCase(bytes[name], lowercased) }
            switch name.count {
            case 2: if named("te") { return .hopByHop }
            case 4: if named("host") { return .host } else if named("dpop") { return .dpop }
            case 6: if named("expect") { return .expect } else if named("server") { return .server }
            case 7: if named("trailer") || named("upgrade") { return .hopByHop }
            case 9: if named("forwarded") { return .forwarded }
            case 10: if named("connection") { return .connection } else if named("keep-alive") { return .hopByHop }
            case 13: if named("authorization") { return .authorization }
            case 14: if named("content-length") { return .contentLength }
            case 16: if named("proxy-connection") { return .hopByHop }
            case 17: if named("transfer-encoding") { return .transferEncoding }
            default: break
            }
            if startsFolded(bytes[name], "x-portcullis-") { return .claim }
            if startsFolded(bytes[name], "x-forwarded-") { return .forwarded }
            return .other
        }

        /// Whether the name starts with `prefix` (lower-case, with `-`) in any ASCII case, `_` read as `-`.
        static func startsFolded(_ name: Slice<UnsafeBufferPointer<UInt8>>, _ prefix: StaticString) -> Bool {
            guard name.count >= prefix.utf8CodeUnitCount else { return false }
            return prefix.withUTF8Buffer { expected in
                zip(name, expected).allSatisfy { byte, wanted in
                    let folded = byte == UInt8(ascii: "_") ? UInt8(ascii: "-") : lowercased(byte)
                    return folded == wanted
                }
            }
        }
    }

    /// A parsed head: its bytes (start line to the empty line, inclusive) and where its parts lie in them.
    public struct Head: Sendable {
        public let bytes: [UInt8]
        /// The start line's three parts: method, target, version (a request) or version, status, reason (an answer).
        public let first: Range<Int>
        public let second: Range<Int>
        public let third: Range<Int>
        public let fields: [Field]

        public func string(_ range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }

        public func values(_ kind: Kind) -> [String] {
            fields.compactMap { $0.kind == kind ? string($0.value) : nil }
        }

        public func has(_ kind: Kind) -> Bool { fields.contains { $0.kind == kind } }

        public func lowercasedName(_ field: Field) -> String { String(decoding: bytes[field.name].map(GatewayWire.lowercased), as: UTF8.self) }

        /// The comma-separated elements of every `kind` field, trimmed and lower-cased (`Connection`, `Transfer-Encoding`).
        public func listElements(_ kind: Kind) -> [String] {
            guard has(kind) else { return [] }
            return values(kind).flatMap { $0.split(separator: ",") }.map { $0.trimmingWhitespace().lowercased() }.filter { !$0.isEmpty }
        }

        /// The names the Connection field lists (RFC 9110 §7.6.1: hop-by-hop too), lower-cased; `close` and `keep-alive`
        /// among them.
        public var connectionOptions: Set<String> { Set(listElements(.connection)) }
    }

    public static let maximumHeadBytes = 64 * 1024
    public static let maximumFields = 200

    /// Where the head that starts `bytes` ends (just after its empty line), `nil` if it has not all come; throws when no
    /// head ends within `maximumHeadBytes` (431).
    public static func headLength(_ bytes: UnsafeRawBufferPointer) throws(Malformed) -> Int? {
        let count = bytes.count
        var index = 0
        while index + 3 < count {
            let fourth = bytes[index + 3]
            if fourth != 10 {  // no window holding this byte can match unless it is CR (then the next one might)
                index += fourth == 13 ? 1 : 4
                continue
            }
            if bytes[index] == 13, bytes[index + 1] == 10, bytes[index + 2] == 13 {
                guard index + 4 <= maximumHeadBytes else { break }
                return index + 4
            }
            index += 1
        }
        if count > maximumHeadBytes { throw Malformed(status: 431, reason: "The header section is too large.") }
        return nil
    }

    /// Parses a head of `length` bytes (from `headLength`). `request`: the start line is `method SP target SP version`;
    /// otherwise `version SP status SP reason`.
    public static func parseHead(_ raw: UnsafeRawBufferPointer, length: Int, request: Bool) throws(Malformed) -> Head {
        let bytes = [UInt8](raw[0..<length])
        let parts = try bytes.withUnsafeBufferPointer { bytes throws(Malformed) in try parseLines(bytes, request: request) }
        return Head(bytes: bytes, first: parts.first, second: parts.second, third: parts.third, fields: parts.fields)
    }

    private static func parseLines(
        _ bytes: UnsafeBufferPointer<UInt8>, request: Bool
    ) throws(Malformed) -> (first: Range<Int>, second: Range<Int>, third: Range<Int>, fields: [Field]) {
        let firstEnd = try lineEnd(bytes, from: 0)
        guard let space1 = bytes[0..<firstEnd].firstIndex(of: 32) else { throw .bad("The start line has no space.") }
        let first = 0..<space1
        let rest = space1 + 1
        let space2 = bytes[rest..<firstEnd].firstIndex(of: 32)
        let second = rest..<(space2 ?? firstEnd)
        let third = space2.map { ($0 + 1)..<firstEnd } ?? firstEnd..<firstEnd
        if request {
            guard !first.isEmpty, first.allSatisfy({ isTokenByte(bytes[$0]) }) else { throw .bad("The request's method is not a token.") }
            guard second.first.map({ bytes[$0] }) == UInt8(ascii: "/"), second.allSatisfy({ (0x21...0x7E).contains(bytes[$0]) }) else {
                throw .bad("The request's target is not an absolute path (origin-form).")
            }
            guard space2 != nil else { throw .bad("The request line has no version.") }
            try checkVersion(bytes, third)
        } else {
            try checkVersion(bytes, first)
            guard second.count == 3, second.allSatisfy({ (48...57).contains(bytes[$0]) }) else { throw .bad("The status code is not three digits.") }
        }
        var fields: [Field] = []
        fields.reserveCapacity(16)
        var lineStart = firstEnd + 2
        while true {
            let end = try lineEnd(bytes, from: lineStart)
            if end == lineStart { break }  // the empty line
            guard fields.count < maximumFields else { throw Malformed(status: 431, reason: "The head has too many fields.") }
            let firstByte = bytes[lineStart]
            if firstByte == 32 || firstByte == 9 { throw .bad("A field is folded over lines (obs-fold).") }
            var colon = lineStart
            while colon < end, bytes[colon] != 58 {
                guard isTokenByte(bytes[colon]) else { throw .bad("A field's name is not a token (or has a space before its colon).") }
                colon += 1
            }
            guard colon < end, colon > lineStart else { throw .bad("A field has no name or no colon.") }
            var valueStart = colon + 1
            var valueEnd = end
            while valueStart < valueEnd, bytes[valueStart] == 32 || bytes[valueStart] == 9 { valueStart += 1 }
            while valueEnd > valueStart, bytes[valueEnd - 1] == 32 || bytes[valueEnd - 1] == 9 { valueEnd -= 1 }
            fields.append(Field(name: lineStart..<colon, value: valueStart..<valueEnd, kind: Kind.of(bytes, lineStart..<colon)))
            lineStart = end + 2
        }
        return (first, second, third, fields)
    }

    /// Where the line starting at `start` ends (its CR), checking every byte on the way: a CR only before LF, no bare LF,
    /// no control character but HTAB (which only a field's value or a reason phrase may then hold).
    private static func lineEnd(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) throws(Malformed) -> Int {
        var index = start
        let count = bytes.count
        while index < count {
            let byte = bytes[index]
            if byte < 32 || byte == 127 {
                if byte == 13 {
                    guard index + 1 < count, bytes[index + 1] == 10 else { throw .bad("A line of the head ends in a bare CR.") }
                    return index
                }
                if byte == 10 { throw .bad("A line of the head ends in a bare LF.") }
                if byte != 9 { throw .bad("A line of the head has a control character.") }
            }
            index += 1
        }
        throw .bad("The head does not end in an empty line.")
    }

    private static func checkVersion(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) throws(Malformed) {
        guard range.count == 8, bytes[range.lowerBound..<(range.lowerBound + 7)].elementsEqual("HTTP/1.".utf8) else {
            throw range.count == 8 && bytes[range].starts(with: "HTTP/".utf8)
                ? Malformed(status: 505, reason: "Only HTTP/1.0 and HTTP/1.1 are served.") : .bad("The HTTP version is malformed.")
        }
        guard bytes[range.lowerBound + 7] == 48 || bytes[range.lowerBound + 7] == 49 else {
            throw Malformed(status: 505, reason: "Only HTTP/1.0 and HTTP/1.1 are served.")
        }
    }

    /// The minor version of a version part that `parseHead` accepted.
    public static func minorVersion(_ head: Head, _ range: Range<Int>) -> Int { Int(head.bytes[range.upperBound - 1]) - 48 }

    /// A request target's path must stay inside the upstream's base however the upstream reads it: no dot segment
    /// (`.` or `..`, literal or percent-encoded in any case), no encoded slash or backslash (`%2F`, `%5C`) and no backslash,
    /// which some upstreams decode or normalise into segments. The query is not looked at. Throws 400 otherwise.
    public static func checkTarget(_ target: ArraySlice<UInt8>) throws(Malformed) {
        let path = target.prefix { $0 != UInt8(ascii: "?") }
        var segmentStart = path.startIndex
        var index = path.startIndex
        while index <= path.endIndex {
            if index == path.endIndex || path[index] == UInt8(ascii: "/") {
                try checkSegment(path[segmentStart..<index])
                segmentStart = index + 1
            } else if path[index] == UInt8(ascii: "\\") {
                throw .bad("The request's path has a backslash.")
            } else if path[index] == UInt8(ascii: "%"), index + 2 < path.endIndex {
                let first = path[index + 1]
                let second = lowercased(path[index + 2])
                if (first == UInt8(ascii: "2") && second == UInt8(ascii: "f")) || (first == UInt8(ascii: "5") && second == UInt8(ascii: "c")) {
                    throw .bad("The request's path has an encoded slash or backslash.")
                }
            }
            index += 1
        }
    }

    /// Refuses a segment that is `.` or `..` once `%2E` is read as a dot.
    private static func checkSegment(_ segment: ArraySlice<UInt8>) throws(Malformed) {
        guard segment.count <= 6 else { return }  // `%2e%2e` at the most
        var dots = 0
        var index = segment.startIndex
        while index < segment.endIndex {
            if segment[index] == UInt8(ascii: ".") {
                index += 1
            } else if segment[index] == UInt8(ascii: "%"), index + 2 < segment.endIndex, segment[index + 1] == UInt8(ascii: "2"),
                lowercased(segment[index + 2]) == UInt8(ascii: "e")
            {
                index += 3
            } else {
                return
            }
            dots += 1
        }
        if dots == 1 || dots == 2 { throw .bad("The request's path has a dot segment (. or ..): the gateway forwards only paths inside its base.") }
    }

    /// How a message's body is framed (RFC 9112 §6).
    public enum Framing: Equatable, Sendable {
        case none
        case length(Int)
        case chunked
        /// Until the connection closes (an answer only).
        case untilClose
    }

    /// A request's framing: chunked, a Content-Length, or none; anything ambiguous is refused.
    public static func requestFraming(_ head: Head, minorVersion: Int) throws(Malformed) -> Framing {
        if head.has(.transferEncoding) {
            let codings = head.listElements(.transferEncoding)
            guard !head.has(.contentLength) else { throw .bad("The request has both Transfer-Encoding and Content-Length.") }
            guard minorVersion == 1 else { throw .bad("Transfer-Encoding in an HTTP/1.0 request.") }
            guard codings == ["chunked"] else {
                throw Malformed(status: 501, reason: "The only transfer coding served is chunked, once.")
            }
            return .chunked
        }
        guard let length = try contentLength(head) else { return .none }
        return length == 0 ? .none : .length(length)
    }

    /// An answer's framing, given the request's method and the status (RFC 9112 §6.3); throws when it cannot be framed.
    public static func answerFraming(_ head: Head, status: Int, requestMethod: String) throws(Malformed) -> Framing {
        if requestMethod == "HEAD" || (100..<200).contains(status) || status == 204 || status == 304 { return .none }
        if head.has(.transferEncoding) {
            return head.listElements(.transferEncoding).last == "chunked" ? .chunked : .untilClose
        }
        do throws(Malformed) {
            guard let length = try contentLength(head) else { return .untilClose }
            return length == 0 ? .none : .length(length)
        } catch {
            throw Malformed(status: 502, reason: error.reason)
        }
    }

    /// One Content-Length, however many times it is repeated (as fields or as a list); `nil` when there is none. Read
    /// on the head's bytes: digits, with optional whitespace around each list element.
    public static func contentLength(_ head: Head) throws(Malformed) -> Int? {
        var found: Int?
        for field in head.fields where field.kind == .contentLength {
            var index = field.value.lowerBound
            let end = field.value.upperBound
            repeat {
                while index < end, head.bytes[index] == 32 || head.bytes[index] == 9 { index += 1 }
                var length = 0
                var digits = 0
                while index < end, (48...57).contains(head.bytes[index]) {
                    guard digits < 18 else { throw .bad("The Content-Length is not a number.") }
                    length = length * 10 + Int(head.bytes[index] - 48)
                    digits += 1
                    index += 1
                }
                while index < end, head.bytes[index] == 32 || head.bytes[index] == 9 { index += 1 }
                guard digits > 0, index == end || head.bytes[index] == UInt8(ascii: ",") else { throw .bad("The Content-Length is not a number.") }
                guard found == nil || found == length else { throw .bad("The message has differing Content-Length values.") }
                found = length
                index += 1  // past the comma (or the end)
            } while index <= end
        }
        return found
    }

    /// Reads a chunked body (RFC 9112 §7.1) as it comes: sizes, data, the last chunk and the trailer section (dropped).
    public struct ChunkedDecoder: Sendable {
        @usableFromInline enum State: Sendable { case size, data(Int), dataEnd, trailers, done }
        @usableFromInline var state = State.size
        public var isDone: Bool { if case .done = state { true } else { false } }

        public init() {}

        /// Consumes what it can of `input`, appending the data to `body`; throws on a malformed body.
        @inlinable
        public mutating func feed<Input: WireInput, Output: WireOutput>(_ input: inout Input, into body: inout Output) throws(Malformed) {
            while true {
                switch state {
                case .done:
                    return
                case .size:
                    guard let line = try Self.line(&input, maximum: 1024) else { return }
                    state = try Self.chunkSize(line)
                case .data(let remaining):
                    let take = min(remaining, input.readableBytes)
                    guard take > 0 else { return }
                    input.withUnsafeReadableBytes { bytes in _ = body.writeBytes(UnsafeRawBufferPointer(rebasing: bytes[0..<take])) }
                    input.moveReaderIndex(forwardBy: take)
                    state = remaining == take ? .dataEnd : .data(remaining - take)
                case .dataEnd:
                    guard input.readableBytes >= 2 else { return }
                    let ends = input.withUnsafeReadableBytes { $0[0] == 13 && $0[1] == 10 }
                    guard ends else { throw .bad("A chunk's data does not end in CRLF.") }
                    input.moveReaderIndex(forwardBy: 2)
                    state = .size
                case .trailers:
                    guard let line = try Self.line(&input, maximum: 8192) else { return }
                    if line.isEmpty { state = .done }
                }
            }
        }

        /// A size line's chunk: its hexadecimal size (extensions ignored but checked for control characters).
        @usableFromInline
        static func chunkSize(_ line: [UInt8]) throws(Malformed) -> State {
            let sizePart = line.prefix { $0 != UInt8(ascii: ";") }
            let hex = sizePart.reversed().drop { $0 == 32 || $0 == 9 }.reversed()
            guard !hex.isEmpty, hex.count <= 15, hex.allSatisfy({ isHexDigit($0) }), let size = Int(String(decoding: hex, as: UTF8.self), radix: 16),
                size >= 0
            else { throw .bad("A chunk's size is not hexadecimal.") }
            guard line.allSatisfy({ $0 == 9 || (32...126).contains($0) || $0 >= 128 }) else {
                throw .bad("A chunk extension has a control character.")
            }
            return size == 0 ? .trailers : .data(size)
        }

        /// The next CRLF-terminated line (without it), or `nil` until it has all come.
        @usableFromInline
        static func line<Input: WireInput>(_ input: inout Input, maximum: Int) throws(Malformed) -> [UInt8]? {
            let found: Int?? = input.withUnsafeReadableBytes { bytes in
                guard let lf = bytes.firstIndex(of: 10) else { return bytes.count > maximum ? .some(nil) : nil }
                return .some(lf)
            }
            guard let found else { return nil }
            guard let lf = found, lf <= maximum else { throw .bad("A chunk's line is too long.") }
            let line: [UInt8]? = input.withUnsafeReadableBytes { bytes in lf > 0 && bytes[lf - 1] == 13 ? Array(bytes[0..<(lf - 1)]) : nil }
            guard let line else { throw .bad("A chunk's line ends in a bare LF.") }
            input.moveReaderIndex(forwardBy: lf + 1)
            guard !line.contains(13) else { throw .bad("A chunk's line has a bare CR.") }
            return line
        }
    }

    /// RFC 9110 §5.6.2's tchar.
    public static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
            UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
            UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default: false
        }
    }

    /// A byte a field value may hold (RFC 9110 §5.5): HTAB, SP, VCHAR, obs-text.
    public static func isFieldValueByte(_ byte: UInt8) -> Bool { byte == 9 || (32...126).contains(byte) || byte >= 128 }

    public static func isHexDigit(_ byte: UInt8) -> Bool {
        (48...57).contains(byte) || (65...70).contains(byte) || (97...102).contains(byte)
    }

    /// The byte with an upper-case ASCII letter lower-cased (the module has no dependency to take it from).
    public static func lowercased(_ byte: UInt8) -> UInt8 { (65...90).contains(byte) ? byte | 0x20 : byte }

    /// Whether `bytes` spell `lowercased` (which must be lower-case) in any ASCII case.
    static func equalsIgnoringCase(_ bytes: Slice<UnsafeBufferPointer<UInt8>>, _ lowercased: StaticString) -> Bool {
        guard bytes.count == lowercased.utf8CodeUnitCount else { return false }
        return lowercased.withUTF8Buffer { expected in zip(bytes, expected).allSatisfy { Self.lowercased($0) == $1 } }
    }
}

/// Bytes the framing reads from (a NIO `ByteBuffer` in the gateway, an array in tests and the fuzzer).
public protocol WireInput {
    var readableBytes: Int { get }
    func withUnsafeReadableBytes<T, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> T) throws(E) -> T
    mutating func moveReaderIndex(forwardBy offset: Int)
}

/// Where the framing appends a body's bytes.
public protocol WireOutput {
    @discardableResult mutating func writeBytes(_ bytes: UnsafeRawBufferPointer) -> Int
}

/// An array read from the front: `WireInput` and `WireOutput` without NIO.
public struct WireBytes: WireInput, WireOutput, Sendable {
    public var bytes: [UInt8]
    public var readerIndex = 0

    public init(_ bytes: [UInt8] = []) { self.bytes = bytes }

    public var readableBytes: Int { bytes.count - readerIndex }
    public var readable: ArraySlice<UInt8> { bytes[readerIndex...] }

    public func withUnsafeReadableBytes<T, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> T) throws(E) -> T {
        let result: Result<T, E> = bytes.withUnsafeBytes { raw in
            do throws(E) { return .success(try body(UnsafeRawBufferPointer(rebasing: raw[readerIndex...]))) } catch { return .failure(error) }
        }
        return try result.get()
    }

    public mutating func moveReaderIndex(forwardBy offset: Int) { readerIndex += offset }

    @discardableResult
    public mutating func writeBytes(_ bytes: UnsafeRawBufferPointer) -> Int {
        self.bytes.append(contentsOf: bytes)
        return bytes.count
    }
}

extension Substring {
    func trimmingWhitespace() -> Substring {
        var trimmed = self
        while let first = trimmed.first, first == " " || first == "\t" { trimmed.removeFirst() }
        while let last = trimmed.last, last == " " || last == "\t" { trimmed.removeLast() }
        return trimmed
    }
}
