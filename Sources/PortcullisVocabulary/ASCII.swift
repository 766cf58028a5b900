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

extension StringProtocol {
    /// Whether the two spell the same text in any ASCII case (other characters compared exactly): how keywords, scope
    /// names and other protocol tokens compare, without lower-casing a copy of either.
    @inlinable
    public func equalsIgnoringCase(_ other: some StringProtocol) -> Bool {
        let a = utf8
        let b = other.utf8
        guard a.count == b.count else { return false }
        return zip(a, b).allSatisfy { ASCII.lowercased($0) == ASCII.lowercased($1) }
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs (HTTP's optional whitespace), without Foundation's
    /// `trimmingCharacters(in:)` (which goes through `NSString` on Linux: 3 % of a token request, measured, for one
    /// content-type check).
    public func trimmingSpaces() -> SubSequence {
        let isSpace = { (character: Character) in character == " " || character == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return self[endIndex...] }
        return self[first...last]
    }
}
