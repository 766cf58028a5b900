import Foundation

/// Differences between two JSON documents, one line per JSON Pointer (`+` added, `-` removed, `~` changed),
/// credential members masked — for `portcullis apply --plan` and the console's audit log.
public enum JSONDiff {
    public static let hidden: Set<String> = ["password", "secret", "secretHash", "passwordHash"]

    /// The document with credential values replaced, at any depth (the plan and the audit page never show them).
    public static func masked(_ value: JSONValue) -> JSONValue {
        switch value {
        case .object(let members):
            return .object(
                Dictionary(
                    uniqueKeysWithValues: members.map { key, member in
                        (key, hidden.contains(key) && member != .null ? .string("(hidden)") : masked(member))
                    }))
        case .array(let items): return .array(items.map(masked))
        default: return value
        }
    }

    /// `null` members count as absent.
    public static func lines(from before: JSONValue?, to after: JSONValue?, at pointer: String = "") -> [String] {
        switch (before.flatMap(present), after.flatMap(present)) {
        case (nil, nil): return []
        case (nil, let after?): return additions(after, at: pointer, sign: "+")
        case (let before?, nil): return additions(before, at: pointer, sign: "-")
        case (.object(let before), .object(let after)):
            return Set(before.keys).union(after.keys).sorted().flatMap { key in
                lines(from: before[key], to: after[key], at: "\(pointer)/\(escape(key))")
            }
        case (.array(let before), .array(let after)):
            return (0..<max(before.count, after.count)).flatMap { index in
                lines(from: index < before.count ? before[index] : nil, to: index < after.count ? after[index] : nil, at: "\(pointer)/\(index)")
            }
        case (let before?, let after?):
            return before == after ? [] : ["~ \(pointer.isEmpty ? "/" : pointer): \(text(before)) → \(text(after))"]
        }
    }

    static func present(_ value: JSONValue) -> JSONValue? { value == .null ? nil : value }

    static func additions(_ value: JSONValue, at pointer: String, sign: String) -> [String] {
        if case .object(let object) = value, pointer.isEmpty {
            return object.keys.sorted().compactMap { key in object[key].flatMap(present).map { "\(sign) /\(escape(key)): \(text($0))" } }
        }
        return ["\(sign) \(pointer.isEmpty ? "/" : pointer): \(text(value))"]
    }

    public static func escape(_ key: String) -> String { key.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1") }

    /// The value as compact JSON (sorted keys), clipped to 100 characters.
    public static func text(_ value: JSONValue) -> String {
        let string = String(decoding: (try? encoder.encode(value)) ?? Data(), as: UTF8.self)
        return string.count > 100 ? String(string.prefix(97)) + "…" : string
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
}
