import Foundation

/// A GUID derived from a text: the same text always names the same GUID (version 4 layout, 128 bits of
/// FNV-1a mixing — an identifier, not a digest; it protects nothing).
public enum StableGUID {
    public static func make(from text: String) -> String {
        var bytes = Array(text.utf8)
        var digest = [UInt8](repeating: 0, count: 16)
        for lane in 0..<2 {
            var value: UInt64 = 0xcbf2_9ce4_8422_2325 &+ UInt64(lane)
            for byte in bytes { value = (value ^ UInt64(byte)) &* 0x100_0000_01b3 }
            for index in 0..<8 { digest[lane * 8 + index] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(index))) }
            bytes.reverse()
        }
        digest[6] = (digest[6] & 0x0f) | 0x40
        digest[8] = (digest[8] & 0x3f) | 0x80
        let hex = digest.map { String(format: "%02x", $0) }.joined()
        return [hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4), hex.dropFirst(16).prefix(4), hex.dropFirst(20)]
            .map(String.init).joined(separator: "-")
    }
}
