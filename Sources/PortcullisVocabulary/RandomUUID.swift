public import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Random (version 4) UUIDs from the kernel's random source, read 4 KiB at a time. Foundation's `UUID()` on Linux opens
/// `/dev/urandom`, reads 16 bytes and closes it for every UUID: three system calls on every grant (a token's `jti`), 4 % of
/// a client-credentials grant's CPU in a profile. The bytes are the same cryptographic source's, handed out once each.
enum RandomUUIDPool {
    private struct Pool {
        var bytes = [UInt8](repeating: 0, count: 4096)
        var offset = 4096
    }
    private static let pool = Mutex(Pool())

    static func next() -> UUID {
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        pool.withLock { pool in
            if pool.offset + 16 > pool.bytes.count {
                pool.bytes.withUnsafeMutableBytes { fill($0) }
                pool.offset = 0
            }
            withUnsafeMutableBytes(of: &uuid) { target in
                pool.bytes.withUnsafeBytes { source in
                    target.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[pool.offset..<pool.offset + 16]))
                }
                // Overwritten: a byte handed out is never handed out again, nor left behind.
                pool.bytes.withUnsafeMutableBytes { $0[pool.offset..<pool.offset + 16].initializeMemory(as: UInt8.self, repeating: 0) }
            }
            pool.offset += 16
        }
        uuid.6 = (uuid.6 & 0x0F) | 0x40  // version 4
        uuid.8 = (uuid.8 & 0x3F) | 0x80  // the RFC 9562 variant
        return UUID(uuid: uuid)
    }

    /// Fills `buffer` from the kernel's random source, `/dev/urandom` (unreadable, it is fatal, as it is for `UUID()`).
    private static func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        #if canImport(Glibc)
        let file = open("/dev/urandom", O_RDONLY | O_CLOEXEC)
        guard file >= 0 else { fatalError("cannot open /dev/urandom: \(errno)") }
        defer { close(file) }
        var filled = 0
        while filled < buffer.count {
            let count = read(file, buffer.baseAddress! + filled, buffer.count - filled)
            if count <= 0 {
                guard count < 0, errno == EINTR else { fatalError("cannot read /dev/urandom: \(errno)") }
                continue
            }
            filled += count
        }
        #else
        arc4random_buf(buffer.baseAddress!, buffer.count)
        #endif
    }
}

extension UUID {
    /// A random UUID, as `UUID()` makes one, without a system call for each.
    public static func random() -> UUID { RandomUUIDPool.next() }

    /// A random UUID as this system writes identifiers (lower case, as `identifierText`).
    public static var randomIdentifierText: String {
        let (high, low) = withUnsafeBytes(of: random().uuid) { bytes in
            (bytes.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }, bytes.suffix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
        }
        return GUIDText.lowercase(high: high, low: low)
    }
}

/// 128 bits written as a GUID is (8-4-4-4-12 hexadecimal digits, lower case), straight into the string's storage.
public enum GUIDText {
    private static let digits: StaticString = "0123456789abcdef"

    public static func lowercase(high: UInt64, low: UInt64) -> String {
        String(unsafeUninitializedCapacity: 36) { text in
            var index = 0
            for word in [high, low] {
                for shift in stride(from: 60, through: 0, by: -4) {
                    if index == 8 || index == 13 || index == 18 || index == 23 {
                        text[index] = UInt8(ascii: "-")
                        index += 1
                    }
                    text[index] = digits.utf8Start[Int((word >> UInt64(shift)) & 0xF)]
                    index += 1
                }
            }
            return index
        }
    }
}
