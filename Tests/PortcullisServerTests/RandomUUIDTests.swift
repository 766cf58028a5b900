import Foundation
import PortcullisCore
import Testing

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
