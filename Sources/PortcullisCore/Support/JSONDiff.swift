import Foundation

/// Differences between two JSON documents, one line per JSON Pointer (`+` added, `-` removed, `~` changed),
/// credential members masked — for `portcullis apply --plan` and the console's audit log.
public enum JSONDiff {
    public static let hidden: Set<String> = ["password", "secret", "secretHash", "passwordHash"]

    /// The document with credential values replaced (the plan never prints them).
    public static func masked(_ value: [String: Any]) -> [String: Any] {
        value.mapValues { maskedValue($0) }.merging(value.filter { hidden.contains($0.key) }.mapValues { _ in "(hidden)" as Any }) { _, new in new }
    }

    public static func maskedValue(_ value: Any) -> Any {
        if let object = value as? [String: Any] { return masked(object) }
        if let array = value as? [Any] { return array.map(maskedValue) }
        return value
    }

    public static func lines(from before: Any?, to after: Any?, at pointer: String = "") -> [String] {
        switch (before, after) {
        case (nil, nil): return []
        case (nil, let after?): return additions(after, at: pointer, sign: "+")
        case (let before?, nil): return additions(before, at: pointer, sign: "-")
        case (let before as [String: Any], let after as [String: Any]):
            return Set(before.keys).union(after.keys).sorted().flatMap { key in
                lines(from: before[key].flatMap(present), to: after[key].flatMap(present), at: "\(pointer)/\(escape(key))")
            }
        case (let before as [Any], let after as [Any]):
            return (0..<max(before.count, after.count)).flatMap { index in
                lines(from: index < before.count ? before[index] : nil, to: index < after.count ? after[index] : nil, at: "\(pointer)/\(index)")
            }
        case (let before?, let after?):
            return text(before) == text(after) ? [] : ["~ \(pointer.isEmpty ? "/" : pointer): \(text(before)) → \(text(after))"]
        }
    }

    public static func present(_ value: Any) -> Any? { value is NSNull ? nil : value }

    public static func additions(_ value: Any, at pointer: String, sign: String) -> [String] {
        if let object = value as? [String: Any], pointer.isEmpty {
            return object.keys.sorted().compactMap { key in object[key].flatMap(present).map { "\(sign) /\(escape(key)): \(text($0))" } }
        }
        return ["\(sign) \(pointer.isEmpty ? "/" : pointer): \(text(value))"]
    }

    public static func escape(_ key: String) -> String { key.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1") }

    public static func text(_ value: Any) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed, .sortedKeys, .withoutEscapingSlashes])) ?? Data()
        let string = String(decoding: data, as: UTF8.self)
        return string.count > 100 ? String(string.prefix(97)) + "…" : string
    }
}
