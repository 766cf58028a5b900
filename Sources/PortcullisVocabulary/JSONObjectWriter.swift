public import Foundation

/// Writes one JSON object of strings, integers, booleans, string arrays and objects of strings, members in call order, without
/// `JSONEncoder`. For the token path's fixed shapes (token responses, access-token payloads), where
/// `JSONEncoder` measured 5–10 % of a grant's CPU. Absent (`nil`) members are left out.
public struct JSONObjectWriter {
    // Bytes, not a `String`: appending `"\"" + escaped + "\""` to a string made three temporaries per member and
    // measured 7 % of a client-credentials grant's instructions (callgrind).
    private var out: [UInt8]
    private var first = true

    public init(capacity: Int = 256) {
        out = []
        out.reserveCapacity(capacity)
        out.append(UInt8(ascii: "{"))
    }

    private mutating func key(_ name: String) {
        if !first { out.append(UInt8(ascii: ",")) }
        first = false
        quoted(name)
        out.append(UInt8(ascii: ":"))
    }

    private mutating func quoted(_ text: String) {
        out.append(UInt8(ascii: "\""))
        JSONText.appendEscaped(text, to: &out)
        out.append(UInt8(ascii: "\""))
    }

    public mutating func string(_ name: String, _ value: String?) {
        guard let value else { return }
        key(name)
        quoted(value)
    }

    public mutating func integer(_ name: String, _ value: Int?) {
        guard let value else { return }
        key(name)
        JSONText.appendDecimal(value, to: &out)
    }

    public mutating func bool(_ name: String, _ value: Bool?) {
        guard let value else { return }
        key(name)
        out.append(contentsOf: value ? Self.trueBytes : Self.falseBytes)
    }

    private static let trueBytes = Array("true".utf8)
    private static let falseBytes = Array("false".utf8)

    public mutating func strings(_ name: String, _ values: [String]?) {
        guard let values else { return }
        key(name)
        out.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            quoted(value)
        }
        out.append(UInt8(ascii: "]"))
    }

    public mutating func integers(_ name: String, _ values: [Int]?) {
        guard let values else { return }
        key(name)
        out.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            JSONText.appendDecimal(value, to: &out)
        }
        out.append(UInt8(ascii: "]"))
    }

    /// A nested object written by `write` (members in its call order).
    public mutating func object(_ name: String, _ write: (inout JSONObjectWriter) -> Void) {
        key(name)
        nested { write(&$0) }
    }

    /// A nested object of string members (`cnf: {"jkt": …}`), in the order given.
    public mutating func object(_ name: String, strings members: [(String, String)]?) {
        guard let members else { return }
        key(name)
        nested { for (member, value) in members { $0.string(member, value) } }
    }

    /// An array of nested objects, each written by `write` (`xms_sle: [{"in": […], "ex": […]}]`).
    public mutating func objects<Element>(_ name: String, _ elements: [Element]?, _ write: (inout JSONObjectWriter, Element) -> Void) {
        guard let elements else { return }
        key(name)
        out.append(UInt8(ascii: "["))
        for (index, element) in elements.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            nested { write(&$0, element) }
        }
        out.append(UInt8(ascii: "]"))
    }

    /// An object written into this writer's own buffer by `write` (handed this writer, its members counted afresh).
    private mutating func nested(_ write: (inout JSONObjectWriter) -> Void) {
        out.append(UInt8(ascii: "{"))
        first = true
        write(&self)
        out.append(UInt8(ascii: "}"))
        first = false  // the outer object's member (its key) is written
    }

    /// The finished object.
    public mutating func finish() -> Data {
        out.append(UInt8(ascii: "}"))
        return Data(out)
    }
}

/// JSON string escaping (RFC 8259 §7).
public enum JSONText {
    public static func escape(_ text: String) -> String {
        guard text.utf8.withContiguousStorageIfAvailable({ $0.contains(where: special) }) ?? text.utf8.contains(where: special) else {
            return text
        }
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count + 16)
        appendEscaped(text, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    private static func special(_ byte: UInt8) -> Bool { byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") }

    /// Appends `text` escaped (without quotes) to `out`.
    public static func appendEscaped(_ text: String, to out: inout [UInt8]) {
        // A native string's bytes are contiguous: a tight loop over them, not an iterator per byte.
        let done: Void? = text.utf8.withContiguousStorageIfAvailable { bytes in
            if !needsEscaping(bytes) {
                out.append(contentsOf: bytes)
            } else {
                for byte in bytes { appendEscaped(byte, to: &out) }
            }
        }
        if done == nil {
            for byte in text.utf8 { appendEscaped(byte, to: &out) }
        }
    }

    /// Whether any byte is a control character, `"` or `\`: eight bytes at a time (a token response's tokens are
    /// kilobytes of plain base64url; a test per byte cost ten instructions a byte, 2 % of a refresh).
    /// `slash`: `/` too (`JSONEncoder` escapes it; `SortedJSONEncoder` writes what it writes).
    static func needsEscaping(_ bytes: UnsafeBufferPointer<UInt8>, slash: Bool = false) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        // Each is non-zero exactly when some byte of `word` is below 0x20, or equal to `"`, or to `\`.
        func specialWord(_ word: UInt64) -> Bool {
            let below = (word &- ones &* 0x20) & ~word & highs
            let quote = word ^ (ones &* 0x22)
            let backslash = word ^ (ones &* 0x5C)
            let solidus = slash ? word ^ (ones &* 0x2F) : ~0
            return below | ((quote &- ones) & ~quote & highs) | ((backslash &- ones) & ~backslash & highs) | ((solidus &- ones) & ~solidus & highs)
                != 0
        }
        guard let base = bytes.baseAddress else { return false }
        var offset = 0
        while offset + 8 <= bytes.count {
            if specialWord(UnsafeRawPointer(base + offset).loadUnaligned(as: UInt64.self)) { return true }
            offset += 8
        }
        return bytes[offset...].contains { Self.special($0) || (slash && $0 == UInt8(ascii: "/")) }
    }

    // Byte by byte (a multi-byte UTF-8 sequence has no byte below 0x80, so it passes through whole).
    private static func appendEscaped(_ byte: UInt8, to out: inout [UInt8]) {
        let backslash = UInt8(ascii: "\\")
        switch byte {
        case UInt8(ascii: "\""), backslash:
            out.append(backslash)
            out.append(byte)
        case UInt8(ascii: "\n"):
            out.append(backslash)
            out.append(UInt8(ascii: "n"))
        case UInt8(ascii: "\r"):
            out.append(backslash)
            out.append(UInt8(ascii: "r"))
        case UInt8(ascii: "\t"):
            out.append(backslash)
            out.append(UInt8(ascii: "t"))
        case 0..<0x20:
            let hex: StaticString = "0123456789abcdef"
            out.append(contentsOf: [backslash, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
            out.append(hex.utf8Start[Int(byte >> 4)])
            out.append(hex.utf8Start[Int(byte & 0xF)])
        default: out.append(byte)
        }
    }

    /// Appends `value` in decimal, as `String(value)` writes it.
    public static func appendDecimal(_ value: Int, to out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits:
            (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
                (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[19 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            out.append(contentsOf: buffer[(20 - count)...])
        }
    }
}
