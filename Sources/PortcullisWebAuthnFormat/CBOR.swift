/// The part of CBOR (RFC 8949) that WebAuthn's attestation objects, authenticator data and COSE keys use
/// (PROTOCOL §12.1): unsigned and negative integers, byte and text strings, arrays, maps, `false`, `true`, `null` and
/// `undefined`, all with definite lengths. Everything else — indefinite lengths, tags, floating-point numbers, other
/// simple values, reserved encodings — is refused, as are duplicate map keys, text that is not UTF-8, nesting deeper
/// than `maximumDepth` and any declared length the input cannot hold (so a hostile length never allocates).
/// No package on the mirror decodes CBOR; this one is fuzzed (`Fuzz/`, docs/decisions.md).
public enum CBOR: Hashable, Sendable {
    case unsigned(UInt64)
    /// The integer −1 − n.
    case negative(UInt64)
    case bytes([UInt8])
    case text(String)
    case array([CBOR])
    /// Entries in the order they were encoded (WebAuthn does not require canonical order on input).
    case map([Entry])
    case bool(Bool)
    case null
    case undefined

    public struct Entry: Hashable, Sendable {
        public let key: CBOR
        public let value: CBOR

        public init(_ key: CBOR, _ value: CBOR) {
            self.key = key
            self.value = value
        }
    }

    /// The value under `key` when this is a map.
    public subscript(key: CBOR) -> CBOR? {
        guard case .map(let entries) = self else { return nil }
        return entries.first { $0.key == key }?.value
    }

    public subscript(text key: String) -> CBOR? { self[.text(key)] }
    public subscript(int key: Int) -> CBOR? { self[CBOR(key)] }

    /// An integer as CBOR (negative values as major type 1).
    public init(_ value: Int) {
        self = value >= 0 ? .unsigned(UInt64(value)) : .negative(UInt64(-(value + 1)))
    }

    /// The value as a Swift `Int`, when it is an integer that fits.
    public var int: Int? {
        switch self {
        case .unsigned(let value): return value <= UInt64(Int.max) ? Int(value) : nil
        case .negative(let value): return value <= UInt64(Int.max) ? -1 - Int(value) : nil
        default: return nil
        }
    }

    public var byteString: [UInt8]? {
        if case .bytes(let value) = self { return value }
        return nil
    }

    public var textString: String? {
        if case .text(let value) = self { return value }
        return nil
    }
}

/// Why CBOR input was refused, and at which byte.
public struct CBORError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Reason: String, Sendable {
        case truncated = "the input ends inside an item"
        case indefiniteLength = "indefinite lengths are not accepted"
        case reservedEncoding = "a reserved additional-information value"
        case unsupportedType = "tags, floating-point numbers and other simple values are not accepted"
        case tooDeep = "nested too deeply"
        case tooLong = "a declared length is longer than the input"
        case invalidText = "a text string that is not UTF-8"
        case duplicateKey = "a map key appears twice"
        case trailingBytes = "bytes follow the item"
    }

    public let reason: Reason
    public let offset: Int

    public var description: String { "CBOR at byte \(offset): \(reason.rawValue)" }
}

/// Decodes CBOR items from bytes within limits.
public struct CBORDecoder: Sendable {
    /// How many arrays and maps may nest (COSE keys and attestation statements need 3).
    public var maximumDepth: Int

    public init(maximumDepth: Int = 8) {
        self.maximumDepth = maximumDepth
    }

    /// The one item `bytes` hold; bytes after it are an error.
    public func decode(_ bytes: some Collection<UInt8>) throws(CBORError) -> CBOR {
        let input = Array(bytes)
        var reader = Reader(bytes: input, position: 0, maximumDepth: maximumDepth)
        let item = try reader.item(depth: 0)
        guard reader.position == input.count else { throw CBORError(reason: .trailingBytes, offset: reader.position) }
        return item
    }

    /// The item at the start of `bytes`, and how many bytes it took (authenticator data carries a COSE key followed by
    /// more data).
    public func decodePrefix(_ bytes: some Collection<UInt8>) throws(CBORError) -> (item: CBOR, length: Int) {
        var reader = Reader(bytes: Array(bytes), position: 0, maximumDepth: maximumDepth)
        let item = try reader.item(depth: 0)
        return (item, reader.position)
    }

    private struct Reader {
        let bytes: [UInt8]
        var position: Int
        let maximumDepth: Int

        var remaining: Int { bytes.count - position }

        mutating func byte() throws(CBORError) -> UInt8 {
            guard position < bytes.count else { throw CBORError(reason: .truncated, offset: position) }
            defer { position += 1 }
            return bytes[position]
        }

        /// The argument of a head (RFC 8949 §3): the additional information itself or the 1, 2, 4 or 8 bytes after it.
        mutating func argument(_ information: UInt8, at start: Int) throws(CBORError) -> UInt64 {
            switch information {
            case 0..<24: return UInt64(information)
            case 24, 25, 26, 27:
                let count = 1 << Int(information - 24)
                guard remaining >= count else { throw CBORError(reason: .truncated, offset: position) }
                var value: UInt64 = 0
                for _ in 0..<count {
                    value = value << 8 | UInt64(bytes[position])
                    position += 1
                }
                return value
            case 31: throw CBORError(reason: .indefiniteLength, offset: start)
            default: throw CBORError(reason: .reservedEncoding, offset: start)
            }
        }

        /// A length that the rest of the input can hold, `minimumBytesEach` bytes per element at least.
        mutating func length(_ information: UInt8, at start: Int, minimumBytesEach: Int) throws(CBORError) -> Int {
            let declared = try argument(information, at: start)
            guard declared <= UInt64(remaining / minimumBytesEach) else { throw CBORError(reason: .tooLong, offset: start) }
            return Int(declared)
        }

        mutating func item(depth: Int) throws(CBORError) -> CBOR {
            let start = position
            let head = try byte()
            let major = head >> 5
            let information = head & 0x1f
            switch major {
            case 0: return .unsigned(try argument(information, at: start))
            case 1: return .negative(try argument(information, at: start))
            case 2:
                let count = try length(information, at: start, minimumBytesEach: 1)
                defer { position += count }
                return .bytes(Array(bytes[position..<position + count]))
            case 3:
                let count = try length(information, at: start, minimumBytesEach: 1)
                guard let text = String(validating: bytes[position..<position + count], as: UTF8.self) else {
                    throw CBORError(reason: .invalidText, offset: start)
                }
                position += count
                return .text(text)
            case 4:
                guard depth < maximumDepth else { throw CBORError(reason: .tooDeep, offset: start) }
                let count = try length(information, at: start, minimumBytesEach: 1)
                var items: [CBOR] = []
                items.reserveCapacity(count)
                for _ in 0..<count { items.append(try item(depth: depth + 1)) }
                return .array(items)
            case 5:
                guard depth < maximumDepth else { throw CBORError(reason: .tooDeep, offset: start) }
                let count = try length(information, at: start, minimumBytesEach: 2)
                var entries: [CBOR.Entry] = []
                entries.reserveCapacity(count)
                var keys = Set<CBOR>()
                for _ in 0..<count {
                    let keyStart = position
                    let key = try item(depth: depth + 1)
                    guard keys.insert(key).inserted else { throw CBORError(reason: .duplicateKey, offset: keyStart) }
                    entries.append(CBOR.Entry(key, try item(depth: depth + 1)))
                }
                return .map(entries)
            case 6: throw CBORError(reason: .unsupportedType, offset: start)
            default:
                switch information {
                case 20: return .bool(false)
                case 21: return .bool(true)
                case 22: return .null
                case 23: return .undefined
                case 28, 29, 30: throw CBORError(reason: .reservedEncoding, offset: start)
                case 31: throw CBORError(reason: .indefiniteLength, offset: start)
                default: throw CBORError(reason: .unsupportedType, offset: start)
                }
            }
        }
    }
}

extension CBOR {
    /// The item's encoding with the shortest heads (deterministic for the same value; maps in their given order).
    /// Tests build attestation objects with it; the fuzzer checks that decoding what it encodes gives the same value.
    public var encoded: [UInt8] {
        var out: [UInt8] = []
        append(to: &out)
        return out
    }

    private static func head(_ major: UInt8, _ argument: UInt64, to out: inout [UInt8]) {
        let type = major << 5
        switch argument {
        case 0..<24: out.append(type | UInt8(argument))
        case 24...0xff: out += [type | 24, UInt8(argument)]
        case 0x100...0xffff: out += [type | 25, UInt8(argument >> 8), UInt8(argument & 0xff)]
        case 0x1_0000...0xffff_ffff:
            out.append(type | 26)
            for shift in stride(from: 24, through: 0, by: -8) { out.append(UInt8(argument >> UInt64(shift) & 0xff)) }
        default:
            out.append(type | 27)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(argument >> UInt64(shift) & 0xff)) }
        }
    }

    private func append(to out: inout [UInt8]) {
        switch self {
        case .unsigned(let value): Self.head(0, value, to: &out)
        case .negative(let value): Self.head(1, value, to: &out)
        case .bytes(let value):
            Self.head(2, UInt64(value.count), to: &out)
            out += value
        case .text(let value):
            Self.head(3, UInt64(value.utf8.count), to: &out)
            out += value.utf8
        case .array(let items):
            Self.head(4, UInt64(items.count), to: &out)
            for item in items { item.append(to: &out) }
        case .map(let entries):
            Self.head(5, UInt64(entries.count), to: &out)
            for entry in entries {
                entry.key.append(to: &out)
                entry.value.append(to: &out)
            }
        case .bool(let value): out.append(value ? 0xf5 : 0xf4)
        case .null: out.append(0xf6)
        case .undefined: out.append(0xf7)
        }
    }
}
