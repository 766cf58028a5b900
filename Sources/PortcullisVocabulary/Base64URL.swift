public import Foundation

/// base64url without padding (RFC 4648 §5), as JOSE and `client_info` use it.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        if let encoded = bytes.withContiguousStorageIfAvailable({ encode(buffer: $0) }) { return encoded }
        return Array(bytes).withUnsafeBufferPointer { encode(buffer: $0) }
    }

    /// Written straight into the string's storage (an access token's payload and signature on every grant).
    private static func encode(buffer input: UnsafeBufferPointer<UInt8>) -> String {
        let count = input.count / 3 * 4 + [0, 2, 3][input.count % 3]
        return alphabet.withUnsafeBufferPointer { alphabet in
            String(unsafeUninitializedCapacity: count) { output in
                var index = 0
                var written = 0
                while index + 3 <= input.count {
                    let value = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
                    output[written] = alphabet[Int(value >> 18 & 63)]
                    output[written + 1] = alphabet[Int(value >> 12 & 63)]
                    output[written + 2] = alphabet[Int(value >> 6 & 63)]
                    output[written + 3] = alphabet[Int(value & 63)]
                    index += 3
                    written += 4
                }
                let rest = input.count - index
                if rest > 0 {
                    let value = UInt32(input[index]) << 16 | (rest == 2 ? UInt32(input[index + 1]) << 8 : 0)
                    output[written] = alphabet[Int(value >> 18 & 63)]
                    output[written + 1] = alphabet[Int(value >> 12 & 63)]
                    written += 2
                    if rest == 2 {
                        output[written] = alphabet[Int(value >> 6 & 63)]
                        written += 1
                    }
                }
                return written
            }
        }
    }

    /// The bytes of `text`; `nil` when it is not base64url (the standard alphabet's `+` and `/`, and trailing `=`
    /// padding, are accepted as well). A table over the UTF-8 bytes: this runs several times on every DPoP proof and
    /// token (Foundation's `Data(base64Encoded:)` after two string replacements measured ten times slower).
    public static func decode(_ text: String) -> Data? {
        var text = text
        return decodingTable.withUnsafeBufferPointer { table in
            text.withUTF8 { utf8 -> Data? in
                var end = utf8.count
                while end > 0 && utf8[end - 1] == UInt8(ascii: "=") { end -= 1 }
                guard utf8.count - end <= 2, end % 4 != 1 else { return nil }
                var output = [UInt8]()
                output.reserveCapacity(end * 3 / 4)
                var accumulator: UInt32 = 0
                var bits: UInt32 = 0
                for index in 0..<end {
                    let value = table[Int(utf8[index])]
                    guard value != 0xFF else { return nil }
                    accumulator = accumulator << 6 | UInt32(value)
                    bits += 6
                    if bits >= 8 {
                        bits -= 8
                        output.append(UInt8(truncatingIfNeeded: accumulator >> bits))
                    }
                }
                return Data(output)
            }
        }
    }

    private static let decodingTable: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in alphabet.enumerated() { table[Int(character)] = UInt8(index) }
        table[Int(UInt8(ascii: "+"))] = 62
        table[Int(UInt8(ascii: "/"))] = 63
        return table
    }()
}
