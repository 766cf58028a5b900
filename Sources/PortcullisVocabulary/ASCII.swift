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
    /// Whether `needle` (lower-case ASCII) occurs in the text in any ASCII case, read as bytes: without lower-casing a copy
    /// of the text, or the standard library's `contains` for strings (which went through its string-processing machinery
    /// even for an empty text: 1 % of a client-credentials grant, reading two absent telemetry headers).
    public func containsIgnoringCase(_ needle: StaticString) -> Bool {
        let count = needle.utf8CodeUnitCount
        return needle.withUTF8Buffer { needle in
            let search = { (text: UnsafeBufferPointer<UInt8>) -> Bool in
                guard text.count >= count else { return false }
                if count == 0 { return true }
                for start in 0...(text.count - count) where (0..<count).allSatisfy({ ASCII.lowercased(text[start + $0]) == needle[$0] }) {
                    return true
                }
                return false
            }
            return utf8.withContiguousStorageIfAvailable(search) ?? Array(utf8).withUnsafeBufferPointer(search)
        }
    }

    /// Whether the text begins with `prefix` (lower-case ASCII) in any ASCII case.
    public func hasPrefixIgnoringCase(_ prefix: StaticString) -> Bool {
        ASCII.equalsIgnoringCase(utf8.prefix(prefix.utf8CodeUnitCount), prefix)
    }

    /// The text without leading and trailing spaces and tabs (HTTP's optional whitespace), without Foundation's
    /// `trimmingCharacters(in:)` (which goes through `NSString` on Linux: 3 % of a token request, measured, for one
    /// content-type check). Read as bytes, not `Character`s: a space or tab is one byte, never part of a multi-byte
    /// character.
    public func trimmingSpaces() -> SubSequence {
        let bytes = utf8
        var first: Index?
        var end = bytes.startIndex
        var index = bytes.startIndex
        while index != bytes.endIndex {
            let next = bytes.index(after: index)
            if bytes[index] != UInt8(ascii: " ") && bytes[index] != UInt8(ascii: "\t") {
                if first == nil { first = index }
                end = next
            }
            index = next
        }
        guard let first else { return self[endIndex...] }
        return self[first..<end]
    }

    /// The pieces between spaces, tabs, CRs and LFs, empty ones dropped: a scope parameter's items. Read as bytes, not
    /// as `Character`s (splitting a token request's scope by characters measured 1.5 % of a client-credentials grant).
    public func splitAtWhitespace() -> [SubSequence] {
        var pieces: [SubSequence] = []
        var start: Index?
        let bytes = utf8
        var index = bytes.startIndex
        while index != bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") {
                if let begun = start {
                    pieces.append(self[begun..<index])
                    start = nil
                }
            } else if start == nil {
                start = index
            }
            index = bytes.index(after: index)
        }
        if let begun = start { pieces.append(self[begun..<bytes.endIndex]) }
        return pieces
    }
}
