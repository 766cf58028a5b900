public import Foundation

/// Writes one JSON object of strings, integers, booleans, string arrays and objects of strings, members in call order, without
/// `JSONEncoder`. For the token path's fixed shapes (token responses, access-token payloads), where
/// `JSONEncoder` measured 5–10 % of a grant's CPU. Absent (`nil`) members are left out.
public struct JSONObjectWriter {
    private var out: String
    private var first = true

    public init(capacity: Int = 256) {
        out = "{"
        out.reserveCapacity(capacity)
    }

    private mutating func key(_ name: String) {
        if !first { out += "," }
        first = false
        out += "\"" + JSONText.escape(name) + "\":"
    }

    public mutating func string(_ name: String, _ value: String?) {
        guard let value else { return }
        key(name)
        out += "\"" + JSONText.escape(value) + "\""
    }

    public mutating func integer(_ name: String, _ value: Int?) {
        guard let value else { return }
        key(name)
        out += String(value)
    }

    public mutating func bool(_ name: String, _ value: Bool?) {
        guard let value else { return }
        key(name)
        out += value ? "true" : "false"
    }

    public mutating func strings(_ name: String, _ values: [String]?) {
        guard let values else { return }
        key(name)
        out += "["
        for (index, value) in values.enumerated() {
            if index > 0 { out += "," }
            out += "\"" + JSONText.escape(value) + "\""
        }
        out += "]"
    }

    public mutating func integers(_ name: String, _ values: [Int]?) {
        guard let values else { return }
        key(name)
        out += "[" + values.map(String.init).joined(separator: ",") + "]"
    }

    /// A nested object written by `write` (members in its call order).
    public mutating func object(_ name: String, _ write: (inout JSONObjectWriter) -> Void) {
        key(name)
        var nested = JSONObjectWriter(capacity: 128)
        write(&nested)
        out += nested.out + "}"
    }

    /// A nested object of string members (`cnf: {"jkt": …}`), in the order given.
    public mutating func object(_ name: String, strings members: [(String, String)]?) {
        guard let members else { return }
        key(name)
        var nested = JSONObjectWriter(capacity: 64)
        for (member, value) in members { nested.string(member, value) }
        out += nested.out + "}"
    }

    /// An array of nested objects, each written by `write` (`xms_sle: [{"in": […], "ex": […]}]`).
    public mutating func objects<Element>(_ name: String, _ elements: [Element]?, _ write: (inout JSONObjectWriter, Element) -> Void) {
        guard let elements else { return }
        key(name)
        out += "["
        for (index, element) in elements.enumerated() {
            if index > 0 { out += "," }
            var nested = JSONObjectWriter(capacity: 64)
            write(&nested, element)
            out += nested.out + "}"
        }
        out += "]"
    }

    /// The finished object.
    public mutating func finish() -> Data {
        out += "}"
        return Data(out.utf8)
    }
}

/// JSON string escaping (RFC 8259 §7).
public enum JSONText {
    public static func escape(_ text: String) -> String {
        func special(_ byte: UInt8) -> Bool { byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") }
        // A native string's bytes are contiguous: a tight loop over them, not an iterator per byte.
        let needed = text.utf8.withContiguousStorageIfAvailable { $0.contains(where: special) } ?? text.utf8.contains(where: special)
        guard needed else { return text }
        // Byte by byte (a multi-byte UTF-8 sequence has no byte below 0x80, so it passes through whole).
        let hex = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count + 16)
        let backslash = UInt8(ascii: "\\")
        for byte in text.utf8 {
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
                out.append(contentsOf: [backslash, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
