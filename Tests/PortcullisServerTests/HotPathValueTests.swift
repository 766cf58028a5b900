import Foundation
import NIOCore
import PortcullisCore
import Testing

@testable import PortcullisServer
@testable import PortcullisVocabulary

/// `UUID.random()`: version-4 UUIDs from the kernel's random source, read in blocks (PortcullisVocabulary).
@Suite("Random UUIDs")
struct RandomUUIDTests {
    @Test("version 4, RFC 9562 variant, lower-case identifier text in UUID's own form, all distinct across refills")
    func shapeAndUniqueness() {
        var seen = Set<String>()
        // 1,000 UUIDs: the pool of 4 KiB (256 UUIDs) is refilled several times.
        for _ in 0..<1000 {
            let uuid = UUID.random()
            #expect(uuid.uuid.6 >> 4 == 4, "version 4")
            #expect(uuid.uuid.8 >> 6 == 0b10, "variant")
            let text = UUID.randomIdentifierText
            #expect(UUID(uuidString: text)?.uuidString.lowercased() == text, "the same text UUID writes, in lower case")
            #expect(text.utf8.count == 36)
            seen.insert(uuid.identifierText)
            seen.insert(text)
        }
        #expect(seen.count == 2000)
    }

    @Test("bits are random: each of the 122 random bits is set in about half of 4,000 UUIDs")
    func bitsVary() {
        var ones = [Int](repeating: 0, count: 128)
        let count = 4000
        for _ in 0..<count {
            withUnsafeBytes(of: UUID.random().uuid) { bytes in
                for bit in 0..<128 where bytes[bit / 8] & (0x80 >> UInt8(bit % 8)) != 0 { ones[bit] += 1 }
            }
        }
        let fixed: Set<Int> = [48, 49, 50, 51, 64, 65]  // version and variant
        for bit in 0..<128 where !fixed.contains(bit) {
            // 4,000 fair coins: 2,000 ± 5 standard deviations (31.6 each).
            #expect(abs(ones[bit] - count / 2) < 160, "bit \(bit) set \(ones[bit]) times")
        }
    }
}

@Suite("base64url")
struct Base64URLTests {
    static func foundation(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    @Test("encode: Foundation's base64 in the URL alphabet without padding, for every length up to 100, and decodes back")
    func encodeMatchesFoundation() {
        var generator = SystemRandomNumberGenerator()
        for length in 0...100 {
            let bytes = (0..<length).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
            let encoded = Base64URL.encode(bytes)
            #expect(encoded == Self.foundation(bytes), "length \(length)")
            #expect(Base64URL.decode(encoded).map(Array.init) == bytes)
            // A sequence without contiguous storage takes the same path through a copy.
            #expect(Base64URL.encode(bytes.lazy.map { $0 }) == encoded)
        }
        #expect(Base64URL.encode([0xFB, 0xFF, 0xBF]) == "-_-_")
    }
}

@Suite("client addresses from sockets")
struct SocketAddressTests {
    @Test("a socket's address as bits equals the same address parsed from its text (IPv4, IPv6, IPv4-mapped IPv6)")
    func bitsEqualText() throws {
        for text in ["127.0.0.1", "203.0.113.7", "255.255.255.255", "::1", "2001:db8::8a2e:370:7334", "fe80::1", "::ffff:198.51.100.9"] {
            let socket = try SocketAddress(ipAddress: text, port: 443)
            let fromBits = try #require(IPAddress(socket))
            #expect(fromBits == IPAddress(text), "\(text)")
            #expect(fromBits.isIPv4 == text.contains("."))
        }
        #expect(IPAddress(try SocketAddress(unixDomainSocketPath: "/tmp/portcullis.sock")) == nil)
    }
}

@Suite("request IDs")
struct RequestIDTests {
    @Test("shaped like a GUID in lower case; this process's prefix, then a count that grows by one")
    func shape() throws {
        let first = RequestID.next()
        let second = RequestID.next()
        for id in [first, second] {
            #expect(id.split(separator: "-").map(\.count) == [8, 4, 4, 4, 12])
            #expect(
                id.utf8.allSatisfy {
                    (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) || $0 == UInt8(ascii: "-")
                })
        }
        #expect(first.prefix(19) == second.prefix(19))
        let count = { (id: String) in UInt64(id.dropFirst(19).replacingOccurrences(of: "-", with: ""), radix: 16) }
        #expect(try #require(count(second)) == (try #require(count(first))) &+ 1)
        #expect(GUIDText.lowercase(high: 0x0123_4567_89AB_CDEF, low: 0xFEDC_BA98_7654_3210) == "01234567-89ab-cdef-fedc-ba9876543210")
    }
}

@Suite("ASCII case-insensitive search")
struct ASCIISearchTests {
    @Test("containsIgnoringCase and hasPrefixIgnoringCase: any ASCII case, anywhere; nothing across non-ASCII; substrings too")
    func search() {
        #expect("MSAL.iOS".containsIgnoringCase("ios"))
        #expect("IOS".containsIgnoringCase("ios"))
        #expect("xxwinyy".containsIgnoringCase("win"))
        #expect("Darwin".containsIgnoringCase("darwin"))
        #expect(!"wi n".containsIgnoringCase("win"))
        #expect(!"".containsIgnoringCase("win"))
        #expect("".containsIgnoringCase(""))
        #expect(!"wİn".containsIgnoringCase("win"))
        #expect("ünix Linux".containsIgnoringCase("linux"))
        #expect("abc LINUX def".dropFirst(4).containsIgnoringCase("linux"))
        #expect(!"abc LINUX def".dropFirst(5).containsIgnoringCase("linux"))
        #expect("iPadOS 17".hasPrefixIgnoringCase("ipados"))
        #expect(!"17 iPadOS".hasPrefixIgnoringCase("ipados"))
        #expect(!"ipa".hasPrefixIgnoringCase("ipados"))
    }
}

@Suite("JSON escaping's scan")
struct JSONEscapeScanTests {
    @Test("eight bytes at a time finds exactly what a test per byte finds: every byte value, at every position, among plain and non-ASCII bytes")
    func scanMatchesBytewise() {
        func bytewise(_ bytes: [UInt8], slash: Bool = false) -> Bool {
            bytes.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") || (slash && $0 == UInt8(ascii: "/")) }
        }
        for filler: UInt8 in [UInt8(ascii: "a"), 0x7F, 0x80, 0xC3, 0xFF, 0x21, 0x23, 0x5B, 0x5D, 0x20, 0x2E, 0x30] {
            for length in 0...20 {
                let plain = [UInt8](repeating: filler, count: length)
                #expect(plain.withUnsafeBufferPointer { JSONText.needsEscaping($0) } == bytewise(plain))
                for position in 0..<length {
                    for value in UInt8.min...UInt8.max {
                        var bytes = [UInt8](repeating: filler, count: length)
                        bytes[position] = value
                        for slash in [false, true] {
                            let expected = bytewise(bytes, slash: slash)
                            if bytes.withUnsafeBufferPointer({ JSONText.needsEscaping($0, slash: slash) }) != expected {
                                Issue.record("filler \(filler), length \(length), byte \(value) at \(position), slash \(slash): expected \(expected)")
                            }
                        }
                    }
                }
            }
        }
        // A plain token's worth, then one quote at its end.
        var token = Array(String(repeating: "eyJhbGciOiJFUzI1NiJ9-_", count: 40).utf8)
        #expect(!token.withUnsafeBufferPointer { JSONText.needsEscaping($0) })
        #expect(!token.withUnsafeBufferPointer { JSONText.needsEscaping($0, slash: true) })
        token.append(UInt8(ascii: "/"))
        #expect(!token.withUnsafeBufferPointer { JSONText.needsEscaping($0) })
        #expect(token.withUnsafeBufferPointer { JSONText.needsEscaping($0, slash: true) })
        token.append(UInt8(ascii: "\""))
        #expect(token.withUnsafeBufferPointer { JSONText.needsEscaping($0) })
    }
}
