import PortcullisCore
import Synchronization

/// Identifiers of requests and log records (`trace_id`, generated correlation IDs, sign-in record IDs): unique
/// within the process and across processes, shaped like a GUID, made without a system call. Random UUIDs cost a
/// share of the kernel's random source each (`UUID.random()`); these IDs need to be unique, not secret (tokens' `jti`
/// and every secret keep using a cryptographic source).
/// A random 64-bit prefix per process and a 64-bit counter.
enum RequestID {
    private static let prefix = UInt64.random(in: .min ... .max)
    private static let counter = Atomic<UInt64>(0)

    static func next() -> String {
        GUIDText.lowercase(high: prefix, low: counter.wrappingAdd(1, ordering: .relaxed).newValue)
    }
}
