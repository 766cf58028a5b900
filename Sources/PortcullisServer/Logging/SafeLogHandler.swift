import Foundation
public import Logging
import Synchronization

/// The server's log handler: one line per event on standard error, in swift-log's stream format
/// (`<time> <level> <label>: <key=value …> [<source>] <message>`), with every control character of the
/// message and of every metadata key and value escaped (`\n`, `\r`, `\t`, `\u{1B}`…) and long values
/// clipped. So a client that puts a line break in a `client_id` or a path cannot forge a log line,
/// whatever call site forgot to clean it (docs/decisions.md, "Logs").
public struct SafeLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    public var logLevel: Logger.Level = .info
    private let label: String
    private let sink: @Sendable (String) -> Void

    /// Longest message and metadata value written, in characters; the rest is replaced by `…`.
    public static let messageLimit = 2048
    public static let valueLimit = 256

    public init(label: String, metadataProvider: Logger.MetadataProvider? = nil, write: @escaping @Sendable (String) -> Void = SafeLogHandler.standardError) {
        self.label = label
        self.metadataProvider = metadataProvider
        self.sink = write
    }

    /// One `write(2)` per line on file descriptor 2: lines from concurrent tasks never interleave.
    public static let standardError: @Sendable (String) -> Void = { line in
        var line = line
        line.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var effective = metadata
        if let provided = metadataProvider?.get() { effective.merge(provided) { _, new in new } }
        if let extra = event.metadata { effective.merge(extra) { _, new in new } }
        var line = Self.timestamp()
        line.reserveCapacity(512)
        line += " \(event.level) \(Self.escape(label, limit: 128)):"
        for key in effective.keys.sorted() {
            line += " \(Self.escape(key, limit: 128))=\(Self.escape(Self.flatten(effective[key]!), limit: Self.valueLimit))"
        }
        line += " [\(Self.escape(event.source, limit: 128))] \(Self.escape(event.message.description, limit: Self.messageLimit))\n"
        sink(line)
    }

    static func flatten(_ value: Logger.Metadata.Value) -> String {
        switch value {
        case .string(let text): text
        case .stringConvertible(let convertible): convertible.description
        case .array(let values): "[" + values.map(flatten).joined(separator: ", ") + "]"
        case .dictionary(let values): "[" + values.keys.sorted().map { "\($0): \(flatten(values[$0]!))" }.joined(separator: ", ") + "]"
        }
    }

    /// Control characters (C0, DEL, C1, and the Unicode line and paragraph separators) written as escapes,
    /// and the text clipped to `limit` characters.
    public static func escape(_ text: String, limit: Int) -> String {
        // Most text (IDs, routes, durations) is printable ASCII within the limit: returned as it is, with no copy.
        if text.utf8.count <= limit, Self.isPlainASCII(text) { return text }
        var out = ""
        var count = 0
        for scalar in text.unicodeScalars {
            if count >= limit {
                out += "…"
                break
            }
            count += 1
            switch scalar.value {
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x09: out += "\\t"
            case 0x5C: out += "\\\\"
            case 0x00..<0x20, 0x7F..<0xA0, 0x2028, 0x2029: out += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Whether every byte is printable ASCII other than `\`: nothing to escape.
    static func isPlainASCII(_ text: String) -> Bool {
        func plain(_ byte: UInt8) -> Bool { byte >= 0x20 && byte < 0x7F && byte != 0x5C }
        if let answer = text.utf8.withContiguousStorageIfAvailable({ $0.allSatisfy(plain) }) { return answer }
        return text.utf8.allSatisfy(plain)
    }

    /// The last second's text: a busy server logs many lines a second, and `strftime` costs more than the rest of a line.
    private static let lastTimestamp = Mutex<(seconds: time_t, text: String)>((-1, ""))

    static func timestamp() -> String {
        let now = time_t(Date().timeIntervalSince1970)
        if let known = lastTimestamp.withLock({ $0.seconds == now ? $0.text : nil }) { return known }
        let text = format(now)
        lastTimestamp.withLock { $0 = (now, text) }
        return text
    }

    static func format(_ time: time_t) -> String {
        var seconds = time
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var buffer = [Int8](repeating: 0, count: 32)
        let written = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%SZ", &parts)
        return String(decoding: buffer[0..<written].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

extension Logger.MetadataValue {
    /// A value the client chose (a `client_id`, a user name): clipped to 128 characters. The handler
    /// escapes control characters; clipping here keeps one request from filling the log.
    public static func clientControlled(_ text: String) -> Logger.MetadataValue {
        .string(text.unicodeScalars.count <= 128 ? text : String(String.UnicodeScalarView(text.unicodeScalars.prefix(128))) + "…")
    }
}
