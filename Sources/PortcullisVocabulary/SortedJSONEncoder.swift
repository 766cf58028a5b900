public import Foundation

/// Encodes a value to the bytes `JSONEncoder` writes with `.sortedKeys` and the `.iso8601` date strategy, for values
/// made of strings, integers, booleans, dates, arrays and nested objects (every `Codable` type of the sign-in log).
/// Anything else — floating point, `Data`, `URL`, `Decimal`, a date outside the years 1970–9999 — throws
/// ``Unsupported``, and the caller encodes with `JSONEncoder` instead.
///
/// Why: `JSONEncoder` builds a tree of boxed values, sorts each object's keys and formats dates through a calendar; a
/// sign-in record through it measured a quarter of a refused grant's instructions (callgrind). This keeps the same
/// `Encodable` conformances — no member can be forgotten by a hand-written writer — and writes the same bytes
/// (`SortedJSONEncoderTests` compares the two on every shape the log has). Coding paths are not tracked (each would be an
/// array per member, and no type of the log reads them): an encoder's `codingPath` is empty.
public enum SortedJSONEncoder {
    public struct Unsupported: Error, CustomStringConvertible {
        public var description: String
    }

    public static func encode<Value: Encodable>(_ value: Value) throws -> [UInt8] {
        let root = Node()
        try root.encode(value)
        var out: [UInt8] = []
        out.reserveCapacity(512)
        root.write(to: &out)
        return out
    }

    /// One value being encoded: a finished scalar's bytes, or an object or array whose members are still being added.
    final class Node {
        enum Content {
            case empty
            case scalar([UInt8])
            case object([(key: String, node: Node)])
            case array([Node])
        }
        var content = Content.empty

        func encode<Value: Encodable>(_ value: Value) throws {
            // Metatypes compared, not `value as? Date`: a dynamic cast per value was a third of the encoder's instructions.
            let type = Value.self
            if type == Date.self {
                content = .scalar(try Self.iso8601(unsafeBitCast(value, to: Date.self)))
            } else if type == Double.self || type == Float.self || type == Decimal.self || type == Data.self || type == URL.self {
                throw Unsupported(description: "\(Value.self)")
            } else {
                try value.encode(to: NodeEncoder(node: self))
            }
        }

        func set(_ key: String, _ node: Node) {
            guard case .object(var members) = content else { return }
            content = .empty  // the array is uniquely referenced while it grows
            members.append((key, node))  // a key encoded twice is resolved when written
            content = .object(members)
        }

        func append(_ node: Node) {
            guard case .array(var elements) = content else { return }
            content = .empty
            elements.append(node)
            content = .array(elements)
        }

        func write(to out: inout [UInt8]) {
            switch content {
            case .empty: out.append(contentsOf: [UInt8(ascii: "{"), UInt8(ascii: "}")])  // a type that encoded nothing
            case .scalar(let bytes): out.append(contentsOf: bytes)
            case .object(let members):
                out.append(UInt8(ascii: "{"))
                // `sorted` is stable: of a key encoded twice, the later value comes later, and wins (as in `JSONEncoder`).
                let sorted = members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
                var written = 0
                for (index, member) in sorted.enumerated() {
                    if index + 1 < sorted.count, sorted[index + 1].key == member.key { continue }
                    if written > 0 { out.append(UInt8(ascii: ",")) }
                    written += 1
                    SortedJSONEncoder.appendString(member.key, to: &out)
                    out.append(UInt8(ascii: ":"))
                    member.node.write(to: &out)
                }
                out.append(UInt8(ascii: "}"))
            case .array(let elements):
                out.append(UInt8(ascii: "["))
                for (index, element) in elements.enumerated() {
                    if index > 0 { out.append(UInt8(ascii: ",")) }
                    element.write(to: &out)
                }
                out.append(UInt8(ascii: "]"))
            }
        }

        /// `2026-11-29T06:24:06Z`: UTC, whole seconds (the fraction dropped), as `JSONEncoder`'s `.iso8601` writes it.
        public static func iso8601(_ date: Date) throws -> [UInt8] {
            let interval = date.timeIntervalSince1970
            // 253402300800: 10000-01-01T00:00:00Z.
            guard interval.isFinite, interval >= 0, interval < 253_402_300_800 else {
                throw Unsupported(description: "the date \(date)")
            }
            let seconds = Int(interval.rounded(.down))
            let days = seconds / 86_400
            let secondOfDay = seconds % 86_400
            // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
            let z = days + 719_468
            let era = z / 146_097
            let dayOfEra = z - era * 146_097
            let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
            let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
            let monthIndex = (5 * dayOfYear + 2) / 153
            let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
            let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
            let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
            var out: [UInt8] = [UInt8(ascii: "\"")]
            out.reserveCapacity(22)
            func digits(_ value: Int, _ count: Int) {
                var divisor = 1
                for _ in 1..<count { divisor *= 10 }
                while divisor > 0 {
                    out.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
                    divisor /= 10
                }
            }
            digits(year, 4)
            out.append(UInt8(ascii: "-"))
            digits(month, 2)
            out.append(UInt8(ascii: "-"))
            digits(day, 2)
            out.append(UInt8(ascii: "T"))
            digits(secondOfDay / 3600, 2)
            out.append(UInt8(ascii: ":"))
            digits(secondOfDay / 60 % 60, 2)
            out.append(UInt8(ascii: ":"))
            digits(secondOfDay % 60, 2)
            out.append(contentsOf: [UInt8(ascii: "Z"), UInt8(ascii: "\"")])
            return out
        }
    }

    /// A string as `JSONEncoder` writes it: quoted, `"` `\` `/` and control characters escaped (`\b` `\f` `\n` `\r` `\t`
    /// by name, others as `\u00XX`), everything else as its UTF-8 bytes.
    public static func appendString(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { bytes in
            guard JSONText.needsEscaping(bytes, slash: true) else {
                out.append(contentsOf: bytes)
                return
            }
            let hex: StaticString = "0123456789abcdef"
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(contentsOf: [UInt8(ascii: "\\"), byte])
                case 0x08: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
                case 0x0C: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
                case UInt8(ascii: "\n"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
                case UInt8(ascii: "\r"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
                case UInt8(ascii: "\t"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
                case 0..<0x20:
                    out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                    out.append(hex.utf8Start[Int(byte >> 4)])
                    out.append(hex.utf8Start[Int(byte & 0xF)])
                default: out.append(byte)
                }
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    static func scalar(_ text: String) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count + 2)
        appendString(text, to: &out)
        return out
    }

    static func scalar(_ value: some BinaryInteger) -> [UInt8] {
        if let small = Int(exactly: value) {
            var out: [UInt8] = []
            JSONText.appendDecimal(small, to: &out)
            return out
        }
        return Array(String(value).utf8)
    }

    static let null = Array("null".utf8)
    static let `true` = Array("true".utf8)
    static let `false` = Array("false".utf8)

    struct NodeEncoder: Encoder {
        let node: Node
        var codingPath: [any CodingKey] { [] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            if case .object = node.content {} else { node.content = .object([]) }
            return KeyedEncodingContainer(Keyed<Key>(node: node))
        }

        func unkeyedContainer() -> any UnkeyedEncodingContainer {
            if case .array = node.content {} else { node.content = .array([]) }
            return Unkeyed(node: node)
        }

        func singleValueContainer() -> any SingleValueEncodingContainer { Single(node: node) }
    }

    struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let node: Node
        var codingPath: [any CodingKey] { [] }

        private func put(_ bytes: [UInt8], _ key: Key) {
            let child = Node()
            child.content = .scalar(bytes)
            node.set(key.stringValue, child)
        }

        mutating func encodeNil(forKey key: Key) throws { put(SortedJSONEncoder.null, key) }
        mutating func encode(_ value: Bool, forKey key: Key) throws { put(value ? SortedJSONEncoder.true : SortedJSONEncoder.false, key) }
        mutating func encode(_ value: String, forKey key: Key) throws { put(SortedJSONEncoder.scalar(value), key) }
        mutating func encode(_ value: Double, forKey key: Key) throws { throw Unsupported(description: "Double at \(key.stringValue)") }
        mutating func encode(_ value: Float, forKey key: Key) throws { throw Unsupported(description: "Float at \(key.stringValue)") }
        mutating func encode(_ value: Int, forKey key: Key) throws { put(SortedJSONEncoder.scalar(value), key) }
        mutating func encode(_ value: Int8, forKey key: Key) throws { put(SortedJSONEncoder.scalar(value), key) }
        mutating func encode(_ value: Int16, forKey key: Key) throws { put(SortedJSONEncoder.scalar(value), key) }
        mutating func encode(_ value: Int32, forKey key: Key) throws { put(SortedJSONEncoder.scalar(value), key) }
        mutating func encode(_ value: Int64, forKey key: Key) throws { put(SortedJSONEncoder.scalar(value), key) }
        mutating func encode(_ value: UInt, forKey key: Key) throws { put(SortedJSONEncoder.scalar(value), key) }
        mutating func encode(_ value: UInt8, forKey key: Key) throws { put(SortedJSONEncoder.scalar(value), key) }
        mutating func encode(_ value: UInt16, forKey key: Key) throws { put(SortedJSONEncoder.scalar(value), key) }
        mutating func encode(_ value: UInt32, forKey key: Key) throws { put(SortedJSONEncoder.scalar(value), key) }
        mutating func encode(_ value: UInt64, forKey key: Key) throws { put(SortedJSONEncoder.scalar(value), key) }

        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            let child = Node()
            try child.encode(value)
            node.set(key.stringValue, child)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            let child = Node()
            child.content = .object([])
            node.set(key.stringValue, child)
            return KeyedEncodingContainer(Keyed<NestedKey>(node: child))
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            let child = Node()
            child.content = .array([])
            node.set(key.stringValue, child)
            return Unkeyed(node: child)
        }

        mutating func superEncoder() -> any Encoder { superEncoder(named: "super") }
        mutating func superEncoder(forKey key: Key) -> any Encoder { superEncoder(named: key.stringValue) }

        private func superEncoder(named name: String) -> any Encoder {
            let child = Node()
            node.set(name, child)
            return NodeEncoder(node: child)
        }
    }

    struct Unkeyed: UnkeyedEncodingContainer {
        let node: Node
        var codingPath: [any CodingKey] { [] }
        var count: Int {
            guard case .array(let elements) = node.content else { return 0 }
            return elements.count
        }

        private func put(_ bytes: [UInt8]) {
            let child = Node()
            child.content = .scalar(bytes)
            node.append(child)
        }

        mutating func encodeNil() throws { put(SortedJSONEncoder.null) }
        mutating func encode(_ value: Bool) throws { put(value ? SortedJSONEncoder.true : SortedJSONEncoder.false) }
        mutating func encode(_ value: String) throws { put(SortedJSONEncoder.scalar(value)) }
        mutating func encode(_ value: Double) throws { throw Unsupported(description: "Double in an array") }
        mutating func encode(_ value: Float) throws { throw Unsupported(description: "Float in an array") }
        mutating func encode(_ value: Int) throws { put(SortedJSONEncoder.scalar(value)) }
        mutating func encode(_ value: Int8) throws { put(SortedJSONEncoder.scalar(value)) }
        mutating func encode(_ value: Int16) throws { put(SortedJSONEncoder.scalar(value)) }
        mutating func encode(_ value: Int32) throws { put(SortedJSONEncoder.scalar(value)) }
        mutating func encode(_ value: Int64) throws { put(SortedJSONEncoder.scalar(value)) }
        mutating func encode(_ value: UInt) throws { put(SortedJSONEncoder.scalar(value)) }
        mutating func encode(_ value: UInt8) throws { put(SortedJSONEncoder.scalar(value)) }
        mutating func encode(_ value: UInt16) throws { put(SortedJSONEncoder.scalar(value)) }
        mutating func encode(_ value: UInt32) throws { put(SortedJSONEncoder.scalar(value)) }
        mutating func encode(_ value: UInt64) throws { put(SortedJSONEncoder.scalar(value)) }

        mutating func encode<T: Encodable>(_ value: T) throws {
            let child = Node()
            try child.encode(value)
            node.append(child)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            let child = Node()
            child.content = .object([])
            node.append(child)
            return KeyedEncodingContainer(Keyed<NestedKey>(node: child))
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            let child = Node()
            child.content = .array([])
            node.append(child)
            return Unkeyed(node: child)
        }

        mutating func superEncoder() -> any Encoder {
            let child = Node()
            node.append(child)
            return NodeEncoder(node: child)
        }
    }

    struct Single: SingleValueEncodingContainer {
        let node: Node
        var codingPath: [any CodingKey] { [] }

        mutating func encodeNil() throws { node.content = .scalar(SortedJSONEncoder.null) }
        mutating func encode(_ value: Bool) throws { node.content = .scalar(value ? SortedJSONEncoder.true : SortedJSONEncoder.false) }
        mutating func encode(_ value: String) throws { node.content = .scalar(SortedJSONEncoder.scalar(value)) }
        mutating func encode(_ value: Double) throws { throw Unsupported(description: "Double") }
        mutating func encode(_ value: Float) throws { throw Unsupported(description: "Float") }
        mutating func encode(_ value: Int) throws { node.content = .scalar(SortedJSONEncoder.scalar(value)) }
        mutating func encode(_ value: Int8) throws { node.content = .scalar(SortedJSONEncoder.scalar(value)) }
        mutating func encode(_ value: Int16) throws { node.content = .scalar(SortedJSONEncoder.scalar(value)) }
        mutating func encode(_ value: Int32) throws { node.content = .scalar(SortedJSONEncoder.scalar(value)) }
        mutating func encode(_ value: Int64) throws { node.content = .scalar(SortedJSONEncoder.scalar(value)) }
        mutating func encode(_ value: UInt) throws { node.content = .scalar(SortedJSONEncoder.scalar(value)) }
        mutating func encode(_ value: UInt8) throws { node.content = .scalar(SortedJSONEncoder.scalar(value)) }
        mutating func encode(_ value: UInt16) throws { node.content = .scalar(SortedJSONEncoder.scalar(value)) }
        mutating func encode(_ value: UInt32) throws { node.content = .scalar(SortedJSONEncoder.scalar(value)) }
        mutating func encode(_ value: UInt64) throws { node.content = .scalar(SortedJSONEncoder.scalar(value)) }
        mutating func encode<T: Encodable>(_ value: T) throws { try node.encode(value) }
    }
}

extension SortedJSONEncoder {
    /// JSON written value by value in the order called: the bytes `encode` writes for the same values when objects' members
    /// are named in UTF-8 order (as `encode` sorts them) and absent optionals are left out (as synthesized `Encodable`
    /// conformances leave them). For the one shape written on every refused grant, a sign-in record, where `Encodable`'s
    /// generic dispatch cost 130,000 instructions for 650 bytes (`StoredJSON.signInBytes`, tested byte for byte against
    /// `encode`).
    public struct Writer {
        public private(set) var bytes: [UInt8] = []
        /// Whether the next member or element follows another in its object or array.
        private var follows = false

        public init(capacity: Int = 1024) { bytes.reserveCapacity(capacity) }

        private mutating func separate() {
            if follows { bytes.append(UInt8(ascii: ",")) }
            follows = true
        }

        /// A member's name, then its value is written by the next call. `name` needs no escaping (a Swift property's name).
        public mutating func key(_ name: StaticString) {
            separate()
            bytes.append(UInt8(ascii: "\""))
            name.withUTF8Buffer { bytes.append(contentsOf: $0) }
            bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
            follows = false
        }

        public mutating func object(_ write: (inout Writer) throws -> Void) rethrows {
            separate()
            bytes.append(UInt8(ascii: "{"))
            follows = false
            try write(&self)
            bytes.append(UInt8(ascii: "}"))
            follows = true
        }

        public mutating func array<Element>(_ elements: [Element], _ write: (inout Writer, Element) throws -> Void) rethrows {
            separate()
            bytes.append(UInt8(ascii: "["))
            follows = false
            for element in elements { try write(&self, element) }
            bytes.append(UInt8(ascii: "]"))
            follows = true
        }

        public mutating func string(_ value: String) {
            separate()
            SortedJSONEncoder.appendString(value, to: &bytes)
        }

        public mutating func integer(_ value: Int) {
            separate()
            JSONText.appendDecimal(value, to: &bytes)
        }

        public mutating func bool(_ value: Bool) {
            separate()
            bytes.append(contentsOf: value ? SortedJSONEncoder.true : SortedJSONEncoder.false)
        }

        /// Throws `Unsupported` for a date `encode` would not write either.
        public mutating func date(_ value: Date) throws {
            let text = try Node.iso8601(value)
            separate()
            bytes.append(contentsOf: text)
        }

        // Members, left out when absent.
        public mutating func member(_ name: StaticString, _ value: String?) {
            guard let value else { return }
            key(name)
            string(value)
        }
        public mutating func member(_ name: StaticString, _ value: Int?) {
            guard let value else { return }
            key(name)
            integer(value)
        }
        public mutating func member(_ name: StaticString, _ value: Bool?) {
            guard let value else { return }
            key(name)
            bool(value)
        }
        public mutating func member(_ name: StaticString, _ values: [String]?) {
            guard let values else { return }
            key(name)
            array(values) { $0.string($1) }
        }
        public mutating func member<Value: RawRepresentable<String>>(_ name: StaticString, _ value: Value?) {
            member(name, value?.rawValue)
        }
        public mutating func member<Value: RawRepresentable<String>>(_ name: StaticString, _ values: [Value]?) {
            member(name, values?.map(\.rawValue))
        }
    }
}
