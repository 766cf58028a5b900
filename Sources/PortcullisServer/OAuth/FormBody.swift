import Foundation
import PortcullisCore

/// An `application/x-www-form-urlencoded` body, kept as pairs so that a repeated parameter is noticed
/// (RFC 6749 §3.1: parameters must not be included more than once).
struct FormBody: Sendable {
    private(set) var fields: [String: String] = [:]

    /// A form built in process (the console's code redemption).
    init(fields: [String: String]) { self.fields = fields }

    /// Parses the body; a repeated name or a broken percent-escape is an `invalid_request`.
    init(_ bytes: [UInt8]) throws(TokenError) {
        // One pass over the bytes (`split` called a closure per byte: 4 % of a client-credentials grant).
        var start = bytes.startIndex
        while start < bytes.endIndex {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "&")) ?? bytes.endIndex
            defer { start = end + 1 }
            guard start < end else { continue }  // an empty pair ("a=1&&b=2")
            let pair = bytes[start..<end]
            let equals = pair.firstIndex(of: UInt8(ascii: "="))
            guard let name = Self.decode(pair[..<(equals ?? end)]) else { throw .malformedBody("The request body is not valid form encoding.") }
            guard let value = equals.map({ Self.decode(pair[($0 + 1)...]) }) ?? "" else {
                throw .malformedBody("The value of '\(name)' is not valid form encoding.")
            }
            guard !name.isEmpty else { continue }
            if fields[name] != nil { throw .duplicateParameter(name) }
            fields[name] = value
        }
    }

    subscript(name: String) -> String? {
        guard let value = fields[name], !value.isEmpty else { return nil }
        return value
    }

    func required(_ name: String) throws(TokenError) -> String {
        guard let value = self[name] else { throw .missingParameter(name) }
        return value
    }

    /// Percent-decoding with `+` as space; `nil` for a bad escape or bytes that are not UTF-8.
    static func decode(_ bytes: ArraySlice<UInt8>) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "+") {
                out.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.endIndex,
                    let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2])
                else { return nil }
                out.append(high << 4 | low)
                index += 2
            } else {
                out.append(byte)
            }
            index += 1
        }
        return String(validating: out, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
