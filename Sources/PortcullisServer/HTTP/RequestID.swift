import Synchronization

/// Identifiers of requests and log records (`trace_id`, generated correlation IDs, sign-in record IDs): unique
/// within the process and across processes, shaped like a GUID, made without a system call. Random UUIDs cost a
/// share of the kernel's random source each (`UUID.random()`); these IDs need to be unique, not secret (tokens' `jti`
/// and every secret keep using a cryptographic source).
/// A random 64-bit prefix per process and a 64-bit counter.
enum RequestID {
    private static let prefix = UInt64.random(in: .min ... .max)
    private static let counter = Atomic<UInt64>(0)
    private static let digits = Array("0123456789abcdef".utf8)

    static func next() -> String {
        let count = counter.wrappingAdd(1, ordering: .relaxed).newValue
        var bytes = [UInt8](repeating: UInt8(ascii: "-"), count: 36)
        var index = 0
        func put(_ value: UInt64, _ nibbles: Int) {
            for shift in stride(from: (nibbles - 1) * 4, through: 0, by: -4) {
                if index == 8 || index == 13 || index == 18 || index == 23 { index += 1 }
                bytes[index] = digits[Int((value >> UInt64(shift)) & 0xF)]
                index += 1
            }
        }
        put(prefix, 16)
        put(count, 16)
        return String(decoding: bytes, as: UTF8.self)
    }
}
