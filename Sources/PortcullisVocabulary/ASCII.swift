/// ASCII case-insensitive byte comparisons, for what HTTP reads case-insensitively (field names, auth schemes) on bytes:
/// `ProtectedResourceRequest` and the gateway's framing.
public enum ASCII {
    /// The byte with an upper-case ASCII letter lower-cased.
    @inlinable
    public static func lowercased(_ byte: UInt8) -> UInt8 { (65...90).contains(byte) ? byte | 0x20 : byte }

    /// Whether `bytes` spell `lowercased` (which must be lower-case) in any ASCII case.
    @inlinable
    public static func equalsIgnoringCase<Bytes: Collection<UInt8>>(_ bytes: Bytes, _ lowercased: StaticString) -> Bool {
        guard bytes.count == lowercased.utf8CodeUnitCount else { return false }
        return lowercased.withUTF8Buffer { expected in
            zip(bytes, expected).allSatisfy { Self.lowercased($0) == $1 }
        }
    }
}
