import Foundation

/// A rule of conditional access's filter for devices (`conditions.devices.deviceFilter.rule`, PROTOCOL §18), in Entra's
/// rule syntax: `device.<property> <operator> <value>` comparisons joined by `-and` and `-or`, with parentheses.
/// Parsed once (`parse`), printed back (`description`: parse ∘ print is the identity), and evaluated on a device's
/// properties (`matches`) with Entra's semantics for unregistered devices. Depends on the standard library and Foundation
/// only, so that the fuzzer compiles it alone (scripts/fuzz).
public indirect enum DeviceFilterRule: Sendable, Equatable, CustomStringConvertible {
    case comparison(Comparison)
    /// Two or more rules, none itself an `and` (the parser flattens `a -and (b -and c)`).
    case and([DeviceFilterRule])
    /// Two or more rules, none itself an `or`.
    case or([DeviceFilterRule])

    /// Entra's rule builder takes up to 3,072 characters.
    public static let maximumLength = 3072
    /// Parentheses nest at most this deep; lists hold at most this many values.
    public static let maximumDepth = 16
    public static let maximumListCount = 100

    /// The device properties a filter can name, as Entra's filter-for-devices documentation lists them.
    public enum Property: Sendable, Hashable, CustomStringConvertible {
        case deviceId, displayName, deviceOwnership, enrollmentProfileName, isCompliant, manufacturer, mdmAppId, model
        case operatingSystem, operatingSystemVersion, physicalIds, profileType, systemLabels, trustType
        /// `extensionAttribute1` … `extensionAttribute15`.
        case extensionAttribute(Int)

        public static let all: [Property] =
            [
                .deviceId, .displayName, .deviceOwnership, .enrollmentProfileName, .isCompliant, .manufacturer, .mdmAppId, .model, .operatingSystem,
                .operatingSystemVersion, .physicalIds, .profileType, .systemLabels, .trustType,
            ] + (1...15).map { .extensionAttribute($0) }

        public var description: String {
            switch self {
            case .deviceId: "deviceId"
            case .displayName: "displayName"
            case .deviceOwnership: "deviceOwnership"
            case .enrollmentProfileName: "enrollmentProfileName"
            case .isCompliant: "isCompliant"
            case .manufacturer: "manufacturer"
            case .mdmAppId: "mdmAppId"
            case .model: "model"
            case .operatingSystem: "operatingSystem"
            case .operatingSystemVersion: "operatingSystemVersion"
            case .physicalIds: "physicalIds"
            case .profileType: "profileType"
            case .systemLabels: "systemLabels"
            case .trustType: "trustType"
            case .extensionAttribute(let n): "extensionAttribute\(n)"
            }
        }

        /// A property by its name in a rule, any case; `devicePhysicalIds` is the spelling one of Entra's examples uses.
        init?(name: String) {
            let folded = DeviceFilterRule.fold(name)
            if folded == "devicephysicalids" {
                self = .physicalIds
                return
            }
            guard let found = Property.all.first(where: { DeviceFilterRule.fold($0.description) == folded }) else { return nil }
            self = found
        }

        /// The operators Entra allows on this property.
        public var operators: [Operator] {
            switch self {
            case .deviceId, .mdmAppId: [.eq, .ne, .in, .notIn]
            case .deviceOwnership, .isCompliant, .profileType, .trustType: [.eq, .ne]
            case .physicalIds, .systemLabels: [.contains, .notContains]
            default: Operator.allCases
            }
        }

        /// The values an enumerated property takes (Entra's spelling; compared without regard to case), `nil` for free text.
        public var values: [String]? {
            switch self {
            case .deviceOwnership: ["Company", "Personal"]
            case .profileType: ["RegisteredDevice", "SecureVM", "Printer", "Shared", "IoT"]
            case .trustType: ["AzureAD", "ServerAD", "Workplace"]
            default: nil
            }
        }

        /// Set by management (Entra: counted only for a device that is compliant, managed or hybrid joined).
        public var isManagementSet: Bool { if case .extensionAttribute = self { true } else { false } }

        /// The slot of this property's value in `Subject`.
        var slot: Int {
            switch self {
            case .deviceId: 0
            case .displayName: 1
            case .deviceOwnership: 2
            case .enrollmentProfileName: 3
            case .isCompliant: 4
            case .manufacturer: 5
            case .mdmAppId: 6
            case .model: 7
            case .operatingSystem: 8
            case .operatingSystemVersion: 9
            case .physicalIds: 10
            case .profileType: 11
            case .systemLabels: 12
            case .trustType: 13
            case .extensionAttribute(let n): 13 + n
            }
        }
        static let slotCount = 29
    }

    public enum Operator: String, Sendable, CaseIterable {
        case eq = "-eq"
        case ne = "-ne"
        case startsWith = "-startsWith"
        case notStartsWith = "-notStartsWith"
        case endsWith = "-endsWith"
        case notEndsWith = "-notEndsWith"
        case contains = "-contains"
        case notContains = "-notContains"
        case `in` = "-in"
        case notIn = "-notIn"

        /// A negative operator holds for a property without a value (Entra: an unregistered device matches it).
        public var isNegative: Bool { [.ne, .notStartsWith, .notEndsWith, .notContains, .notIn].contains(self) }
    }

    public enum Value: Sendable, Equatable, CustomStringConvertible {
        case string(String)
        case bool(Bool)
        case list([String])

        public var description: String {
            switch self {
            case .string(let text): DeviceFilterRule.quoted(text)
            case .bool(let value): value ? "True" : "False"
            case .list(let items): "[" + items.map(DeviceFilterRule.quoted).joined(separator: ", ") + "]"
            }
        }
    }

    public struct Comparison: Sendable, Equatable, CustomStringConvertible {
        public var property: Property
        public var `operator`: Operator
        public var value: Value
        /// The value's text folded for comparison, computed once.
        let folded: [String]

        public init(property: Property, operator: Operator, value: Value) {
            self.property = property
            self.operator = `operator`
            self.value = value
            switch value {
            case .string(let text): folded = [DeviceFilterRule.fold(text)]
            case .bool(let flag): folded = [flag ? "true" : "false"]
            case .list(let items): folded = items.map(DeviceFilterRule.fold)
            }
        }

        public static func == (a: Comparison, b: Comparison) -> Bool {
            a.property == b.property && a.operator == b.operator && a.value == b.value
        }

        public var description: String { "device.\(property) \(`operator`.rawValue) \(value)" }
    }

    /// A rule that cannot be read: where (the 1-based character position in the rule) and why.
    public struct SyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
        public var position: Int
        public var message: String
        public var description: String { "at character \(position): \(message)" }
    }

    // MARK: Printing

    public var description: String { print(parenthesized: false) }

    func print(parenthesized: Bool) -> String {
        switch self {
        case .comparison(let comparison): return comparison.description
        case .and(let rules): return rules.map { $0.print(parenthesized: true) }.joined(separator: " -and ")
        case .or(let rules):
            let text = rules.map { $0.print(parenthesized: false) }.joined(separator: " -or ")
            return parenthesized ? "(\(text))" : text
        }
    }

    /// A string as a rule writes it: in double quotes, a quote or backtick inside escaped with a backtick (as Entra's rules).
    static func quoted(_ text: String) -> String {
        var out = "\""
        for character in text {
            if character == "\"" || character == "`" { out.append("`") }
            out.append(character)
        }
        return out + "\""
    }

    /// Case-insensitive comparison (Entra's: `"Company"` matches `company`): both sides folded the same way.
    static func fold(_ text: String) -> String { text.lowercased() }

    // MARK: Evaluation

    /// A device's properties, folded once for every rule evaluated on one sign-in. `nil` (no subject) is an unregistered
    /// device: every property is null.
    public struct Subject: Sendable {
        var values: [[String]?]
        /// Whether management-set properties (extension attributes) count: a compliant, managed or hybrid-joined device.
        var managementCounts: Bool

        /// `strings` by property; a property absent (or an empty list) has no value.
        public init(strings: [Property: [String]], isCompliant: Bool, managementCounts: Bool) {
            var values = [[String]?](repeating: nil, count: Property.slotCount)
            for (property, items) in strings where !items.isEmpty { values[property.slot] = items.map(DeviceFilterRule.fold) }
            values[Property.isCompliant.slot] = [isCompliant ? "true" : "false"]
            self.values = values
            self.managementCounts = managementCounts
        }
    }

    /// Whether the device matches the rule. Entra's semantics: a property without a value (every property of an
    /// unregistered device) fails a positive operator and meets a negative one; an extension attribute of a registered
    /// device that is neither compliant, managed nor hybrid joined does not count (the comparison fails).
    public func matches(_ device: Subject?) -> Bool {
        switch self {
        case .and(let rules): return rules.allSatisfy { $0.matches(device) }
        case .or(let rules): return rules.contains { $0.matches(device) }
        case .comparison(let c):
            if let device, c.property.isManagementSet, !device.managementCounts { return false }
            guard let values = device?.values[c.property.slot] else { return c.operator.isNegative }
            let wanted = c.folded
            switch c.operator {
            case .eq: return values.contains(wanted[0])
            case .ne: return !values.contains(wanted[0])
            case .startsWith: return values.contains { $0.hasPrefix(wanted[0]) }
            case .notStartsWith: return !values.contains { $0.hasPrefix(wanted[0]) }
            case .endsWith: return values.contains { $0.hasSuffix(wanted[0]) }
            case .notEndsWith: return !values.contains { $0.hasSuffix(wanted[0]) }
            case .contains: return values.contains { $0.contains(wanted[0]) }
            case .notContains: return !values.contains { $0.contains(wanted[0]) }
            case .in: return values.contains { wanted.contains($0) }
            case .notIn: return !values.contains { wanted.contains($0) }
            }
        }
    }

    /// The properties the rule names.
    public var properties: Set<Property> {
        switch self {
        case .comparison(let c): [c.property]
        case .and(let rules), .or(let rules): rules.reduce(into: []) { $0.formUnion($1.properties) }
        }
    }

    // MARK: Parsing

    /// Reads a rule; a rule that is not one is a `SyntaxError` naming the character where reading stopped.
    public static func parse(_ text: String) throws(SyntaxError) -> DeviceFilterRule {
        if text.count > maximumLength { throw SyntaxError(position: maximumLength + 1, message: "a rule is at most \(maximumLength) characters.") }
        var parser = Parser(Array(text))
        let rule = try parser.expression(depth: 0)
        parser.skipSpace()
        if parser.index < parser.characters.count {
            throw parser.error("expected -and, -or or the end of the rule, found '\(parser.word())'.")
        }
        return rule
    }

    struct Parser {
        let characters: [Character]
        var index = 0

        init(_ characters: [Character]) { self.characters = characters }

        func error(_ message: String, at position: Int? = nil) -> SyntaxError {
            SyntaxError(position: (position ?? index) + 1, message: message)
        }

        mutating func skipSpace() { while index < characters.count, characters[index].isWhitespace { index += 1 } }

        /// The next run of characters up to a space or a delimiter (for messages and keywords), not consumed.
        func word() -> String {
            var end = index
            while end < characters.count, !characters[end].isWhitespace, !"()[],".contains(characters[end]) { end += 1 }
            return end == index ? (index < characters.count ? String(characters[index]) : "") : String(characters[index..<end])
        }

        /// Consumes `keyword` (any case) when it is the next word.
        mutating func take(_ keyword: String) -> Bool {
            skipSpace()
            let next = word()
            guard !next.isEmpty, DeviceFilterRule.fold(next) == DeviceFilterRule.fold(keyword) else { return false }
            index += next.count
            return true
        }

        mutating func expression(depth: Int) throws(SyntaxError) -> DeviceFilterRule {
            var alternatives = [try conjunction(depth: depth)]
            while take("-or") { alternatives.append(try conjunction(depth: depth)) }
            if alternatives.count == 1 { return alternatives[0] }
            return .or(alternatives.flatMap { if case .or(let inner) = $0 { inner } else { [$0] } })
        }

        mutating func conjunction(depth: Int) throws(SyntaxError) -> DeviceFilterRule {
            var terms = [try primary(depth: depth)]
            while take("-and") { terms.append(try primary(depth: depth)) }
            if terms.count == 1 { return terms[0] }
            return .and(terms.flatMap { if case .and(let inner) = $0 { inner } else { [$0] } })
        }

        mutating func primary(depth: Int) throws(SyntaxError) -> DeviceFilterRule {
            skipSpace()
            guard index < characters.count else { throw error("expected a comparison (device.property -operator value), found the end of the rule.") }
            if characters[index] == "(" {
                guard depth < DeviceFilterRule.maximumDepth else { throw error("parentheses nest at most \(DeviceFilterRule.maximumDepth) deep.") }
                let open = index
                index += 1
                let inner = try expression(depth: depth + 1)
                skipSpace()
                guard index < characters.count, characters[index] == ")" else {
                    throw error(
                        index < characters.count
                            ? "expected ')' to close the '(' at character \(open + 1)." : "the '(' at character \(open + 1) is never closed.")
                }
                index += 1
                return inner
            }
            return .comparison(try comparison())
        }

        mutating func comparison() throws(SyntaxError) -> Comparison {
            let name = word()
            guard DeviceFilterRule.fold(name).hasPrefix("device.") else {
                throw error("expected a device property (device.trustType, device.isCompliant, device.extensionAttribute1…), found '\(name)'.")
            }
            guard let property = Property(name: String(name.dropFirst("device.".count))) else {
                throw error("'\(name)' is not a property a filter for devices can use (\(Property.all.map { "device.\($0)" }.joined(separator: ", "))).")
            }
            index += name.count
            skipSpace()
            let operatorStart = index
            let text = word()
            guard let op = Operator.allCases.first(where: { DeviceFilterRule.fold($0.rawValue) == DeviceFilterRule.fold(text) }) else {
                throw error("expected an operator (\(Operator.allCases.map(\.rawValue).joined(separator: " "))), found '\(text)'.")
            }
            guard property.operators.contains(op) else {
                throw error(
                    "device.\(property) takes \(property.operators.map(\.rawValue).joined(separator: ", ")), not \(op.rawValue).", at: operatorStart)
            }
            index += text.count
            skipSpace()
            let valueStart = index
            let value: Value
            if op == .in || op == .notIn {
                value = .list(try list())
            } else if property == .isCompliant {
                value = .bool(try boolean())
            } else {
                guard index < characters.count, characters[index] == "\"" || characters[index] == "'" else {
                    throw error("expected a quoted string after \(op.rawValue), found '\(word())'.")
                }
                value = .string(try string())
            }
            if let allowed = property.values {
                let given: [String] =
                    switch value {
                    case .string(let text): [text]
                    case .list(let items): items
                    case .bool: []
                    }
                let folded = Set(allowed.map(DeviceFilterRule.fold))
                if let wrong = given.first(where: { !folded.contains(DeviceFilterRule.fold($0)) }) {
                    throw error("device.\(property) is one of \(allowed.joined(separator: ", ")), not '\(wrong)'.", at: valueStart)
                }
            }
            return Comparison(property: property, operator: op, value: value)
        }

        /// `True` or `False`, bare (as Entra writes them) or quoted.
        mutating func boolean() throws(SyntaxError) -> Bool {
            let start = index
            let text: String
            if index < characters.count, characters[index] == "\"" || characters[index] == "'" {
                text = try string()
            } else {
                text = word()
                index += text.count
            }
            switch DeviceFilterRule.fold(text) {
            case "true": return true
            case "false": return false
            default: throw error("device.isCompliant is True or False, not '\(text)'.", at: start)
            }
        }

        /// A string in double (or single) quotes; a backtick escapes the next character.
        mutating func string() throws(SyntaxError) -> String {
            let open = index
            let quote = characters[index]
            index += 1
            var out = ""
            while index < characters.count {
                let character = characters[index]
                if character == "`", index + 1 < characters.count {
                    out.append(characters[index + 1])
                    index += 2
                } else if character == quote {
                    index += 1
                    return out
                } else {
                    out.append(character)
                    index += 1
                }
            }
            throw error("the string opened at character \(open + 1) is never closed.", at: characters.count)
        }

        mutating func list() throws(SyntaxError) -> [String] {
            guard index < characters.count, characters[index] == "[" else { throw error("-in and -notIn take a list: [\"a\", \"b\"].") }
            index += 1
            var items: [String] = []
            while true {
                skipSpace()
                guard index < characters.count, characters[index] == "\"" || characters[index] == "'" else {
                    throw error("expected a quoted string in the list, found '\(word())'.")
                }
                items.append(try string())
                if items.count > DeviceFilterRule.maximumListCount {
                    throw error("a list holds at most \(DeviceFilterRule.maximumListCount) values.")
                }
                skipSpace()
                guard index < characters.count else { throw error("the list is never closed with ']'.") }
                if characters[index] == "]" {
                    index += 1
                    return items
                }
                guard characters[index] == "," else { throw error("expected ',' or ']' in the list, found '\(word())'.") }
                index += 1
            }
        }
    }
}
