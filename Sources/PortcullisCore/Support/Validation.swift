import Foundation

/// One problem found in a document: where (RFC 6901 JSON Pointer) and what, as a sentence.
public struct ValidationProblem: Codable, Sendable, Equatable, CustomStringConvertible {
    public let pointer: String
    public let message: String

    public init(pointer: String, message: String) {
        self.pointer = pointer
        self.message = message
    }

    public var description: String { "\(pointer.isEmpty ? "/" : pointer): \(message)" }
}

/// A document was refused; `problems` lists every problem found, not only the first.
public struct ValidationError: Error, Sendable, Equatable {
    public let problems: [ValidationProblem]
    public init(problems: [ValidationProblem]) { self.problems = problems }
}

/// Collects problems while a document is walked.
public final class ProblemCollector {
    public private(set) var problems: [ValidationProblem] = []
    public init() {}

    public func add(_ pointer: String, _ message: String) {
        problems.append(ValidationProblem(pointer: pointer, message: message))
    }

    /// Throws the collected problems, if any.
    public func check() throws(ValidationError) {
        if !problems.isEmpty { throw ValidationError(problems: problems) }
    }
}

/// RFC 6901 pointer composition.
public enum JSONPointer {
    public static func appending(_ pointer: String, _ token: String) -> String {
        pointer + "/" + token.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
    }
    public static func appending(_ pointer: String, _ index: Int) -> String { pointer + "/\(index)" }
}

/// A strict reader of one JSON object: every typed accessor records a problem (with its pointer) when the
/// member has the wrong type, and `rejectUnknownMembers` records every member nobody asked for.
public struct JSONObjectReader {
    public let object: [String: JSONValue]
    public let pointer: String
    public let problems: ProblemCollector

    /// `nil` (with a problem recorded) when `value` is not an object.
    public init?(_ value: JSONValue, at pointer: String, problems: ProblemCollector) {
        guard let object = value.objectValue else {
            problems.add(pointer, "must be an object, found \(value.typeName).")
            return nil
        }
        self.object = object
        self.pointer = pointer
        self.problems = problems
    }

    public func path(_ key: String) -> String { JSONPointer.appending(pointer, key) }

    /// Whether the member is present with a value other than `null` (null counts as absent).
    public func has(_ key: String) -> Bool {
        guard let value = object[key] else { return false }
        return value != .null
    }

    public func rejectUnknownMembers(allowed: Set<String>) {
        for key in object.keys.sorted() where !allowed.contains(key) {
            problems.add(path(key), "is not a known member; allowed here: \(allowed.sorted().joined(separator: ", ")).")
        }
    }

    /// Whether a member name is Graph's markup rather than data (PROTOCOL §17): an OData annotation (`@odata.type`,
    /// `createdDateTime@odata.type`, `authenticationStrength@odata.context`) or an OData action an export lists
    /// (`#microsoft.graph.restore`).
    public static func isGraphMarkup(_ key: String) -> Bool { key.hasPrefix("#") || key.hasPrefix("@odata.") || key.contains("@odata.") }

    /// `rejectUnknownMembers` for a document in Graph's spelling (PROTOCOL §17): Graph's markup is read and ignored;
    /// `readOnly` members (what Graph computes, such as `deletedDateTime`) are ignored whatever their value;
    /// `ignoredWhenEmpty` members (what Graph added that this server does not enforce, such as `agents`) are
    /// ignored when null or empty and refused otherwise, naming the member.
    public func rejectUnknownGraphMembers(allowed: Set<String>, readOnly: Set<String> = [], ignoredWhenEmpty: Set<String> = []) {
        for key in object.keys.sorted() where !allowed.contains(key) && !readOnly.contains(key) && !Self.isGraphMarkup(key) {
            if ignoredWhenEmpty.contains(key) {
                if !(object[key]?.isNullOrEmpty ?? true) { problems.add(path(key), "cannot be evaluated by this server; remove it or set null.") }
            } else {
                problems.add(
                    path(key), "is not a known member; allowed here: \(allowed.union(readOnly).union(ignoredWhenEmpty).sorted().joined(separator: ", ")).")
            }
        }
    }

    private func value(_ key: String, required: Bool) -> JSONValue? {
        guard let value = object[key] else {
            if required { problems.add(path(key), "is required.") }
            return nil
        }
        if case .null = value {
            if required { problems.add(path(key), "is required and must not be null.") }
            return nil
        }
        return value
    }

    public func string(_ key: String, required: Bool = false, nonEmpty: Bool = true) -> String? {
        guard let value = value(key, required: required) else { return nil }
        guard let string = value.stringValue else {
            problems.add(path(key), "must be a string, found \(value.typeName).")
            return nil
        }
        if nonEmpty && string.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            problems.add(path(key), "must not be empty.")
            return nil
        }
        return string
    }

    public func bool(_ key: String, required: Bool = false) -> Bool? {
        guard let value = value(key, required: required) else { return nil }
        guard let bool = value.boolValue else {
            problems.add(path(key), "must be a boolean, found \(value.typeName).")
            return nil
        }
        return bool
    }

    public func integer(_ key: String, in range: ClosedRange<Int>, required: Bool = false) -> Int? {
        guard let value = value(key, required: required) else { return nil }
        guard case .number(let number) = value, number.rounded() == number, abs(number) < 1e15 else {
            problems.add(path(key), "must be an integer, found \(value.typeName).")
            return nil
        }
        let int = Int(number)
        guard range.contains(int) else {
            problems.add(path(key), "must be between \(range.lowerBound) and \(range.upperBound).")
            return nil
        }
        return int
    }

    public func object(_ key: String, required: Bool = false) -> JSONObjectReader? {
        guard let value = value(key, required: required) else { return nil }
        return JSONObjectReader(value, at: path(key), problems: problems)
    }

    /// The elements of an array member, each with its pointer.
    public func array(_ key: String, required: Bool = false) -> [(value: JSONValue, pointer: String)]? {
        guard let value = value(key, required: required) else { return nil }
        guard let array = value.arrayValue else {
            problems.add(path(key), "must be an array, found \(value.typeName).")
            return nil
        }
        return array.enumerated().map { ($0.element, JSONPointer.appending(path(key), $0.offset)) }
    }

    /// An array of strings; each element that is not a non-empty string is a problem of its own.
    public func strings(_ key: String, required: Bool = false) -> [(value: String, pointer: String)]? {
        guard let elements = array(key, required: required) else { return nil }
        var result: [(String, String)] = []
        for (element, pointer) in elements {
            guard let string = element.stringValue else {
                problems.add(pointer, "must be a string, found \(element.typeName).")
                continue
            }
            guard !string.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
                problems.add(pointer, "must not be empty.")
                continue
            }
            result.append((string, pointer))
        }
        return result
    }

    /// A string member that must be one of `allowed` (compared case-insensitively; the canonical spelling is returned).
    public func enumeration(_ key: String, allowed: [String], required: Bool = false) -> String? {
        guard let string = string(key, required: required) else { return nil }
        guard let canonical = allowed.first(where: { $0.equalsIgnoringCase(string) }) else {
            problems.add(path(key), "'\(string)' is not one of: \(allowed.joined(separator: ", ")).")
            return nil
        }
        return canonical
    }
}

extension JSONObjectReader {
    /// A member that must be a GUID, as the identifier of its kind it names (normalised here, once); a problem at its
    /// pointer when it is something else.
    public func guid<Kind>(_ key: String, required: Bool = false) -> Identifier<Kind>? {
        guard let value = string(key, required: required) else { return nil }
        guard let id = Identifier<Kind>(guid: value) else {
            problems.add(path(key), "must be a GUID (8-4-4-4-12 hexadecimal digits).")
            return nil
        }
        return id
    }
}

extension Identifier {
    /// The identifier a GUID names; `nil` for text that is not one.
    public init?(guid text: String) {
        guard text.isGUID else { return nil }
        self.init(text)
    }
}

extension String {
    /// Whether this is a GUID in the 8-4-4-4-12 hexadecimal form.
    public var isGUID: Bool {
        let parts = split(separator: "-", omittingEmptySubsequences: false)
        guard parts.map(\.count) == [8, 4, 4, 4, 12] else { return false }
        return parts.allSatisfy { $0.allSatisfy(\.isHexDigit) }
    }
}

extension JSONValue {
    /// Null, an empty array, or an object whose members are all Graph's markup or themselves null or empty: what
    /// Graph writes for a member that a policy does not use.
    var isNullOrEmpty: Bool {
        switch self {
        case .null: true
        case .array(let items): items.isEmpty
        case .object(let members): members.allSatisfy { JSONObjectReader.isGraphMarkup($0.key) || $0.value.isNullOrEmpty }
        default: false
        }
    }
}
