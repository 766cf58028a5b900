import Foundation

/// An OData `$filter` expression as Microsoft Graph accepts it on the collections admins' tools read (PROTOCOL §20):
/// comparisons (`eq`, `ne`, `gt`, `ge`, `lt`, `le`), `in`, `startswith`/`endswith`, `not`, `and`/`or`, parentheses, and the
/// lambda `any()` on a collection (`members/any(m: m/id eq '…')`, `includePlatforms/any(p: p eq 'iOS')`). Parsed once,
/// evaluated over documents as Graph shows them (`JSONValue`); strings compare as directory strings do, ignoring ASCII case.
public indirect enum ODataFilter: Sendable, Equatable {
    case compare(Operand, Comparison, Operand)
    case `in`(Operand, [JSONValue])
    case function(StringFunction, Operand, Operand)
    case not(ODataFilter)
    case and(ODataFilter, ODataFilter)
    case or(ODataFilter, ODataFilter)
    /// `path/any(variable: condition)`; `any()` without a condition: the collection is not empty.
    case any(path: [String], variable: String?, condition: ODataFilter?)

    public enum Comparison: String, Sendable, CaseIterable {
        case eq, ne, gt, ge, lt, le
    }

    public enum StringFunction: String, Sendable, CaseIterable {
        case startswith, endswith, contains
    }

    public enum Operand: Sendable, Equatable {
        /// A member path (`displayName`, `conditions/users/includeUsers`), or a lambda variable and a path under it.
        case path([String])
        case literal(JSONValue)
    }

    /// A filter Portcullis cannot read: Graph's 400 with this sentence.
    public struct SyntaxError: Error, Sendable, Equatable {
        public let message: String
    }

    /// The longest expression read (Graph's URLs are bounded too), and how deep parentheses and lambdas may nest.
    public static let maximumLength = 4096
    public static let maximumDepth = 16

    public static func parse(_ text: String) throws(SyntaxError) -> ODataFilter {
        guard text.utf8.count <= maximumLength else { throw SyntaxError(message: "The filter is longer than \(maximumLength) characters.") }
        var parser = Parser(tokens: try Lexer.tokens(text))
        let filter = try parser.expression(depth: 0)
        guard parser.atEnd else { throw SyntaxError(message: "Syntax error at '\(parser.current.map(\.text) ?? "")' in the filter.") }
        return filter
    }

    /// The first member of every path the filter reads (outside lambdas' variables), for checking them against a type.
    public var members: Set<String> {
        func of(_ operand: Operand, _ variables: Set<String>) -> Set<String> {
            if case .path(let path) = operand, let first = path.first, !variables.contains(first) { return [first] }
            return []
        }
        func walk(_ filter: ODataFilter, _ variables: Set<String>) -> Set<String> {
            switch filter {
            case .compare(let a, _, let b), .function(_, let a, let b): return of(a, variables).union(of(b, variables))
            case .in(let a, _): return of(a, variables)
            case .not(let inner): return walk(inner, variables)
            case .and(let a, let b), .or(let a, let b): return walk(a, variables).union(walk(b, variables))
            case .any(let path, let variable, let condition):
                var found = of(.path(path), variables)
                if let condition { found.formUnion(walk(condition, variables.union(variable.map { [$0] } ?? []))) }
                return found
            }
        }
        return walk(self, [])
    }

    // MARK: Evaluation

    /// Whether `document` matches.
    public func matches(_ document: JSONValue) -> Bool { evaluate(document, variables: [:]) }

    func evaluate(_ document: JSONValue, variables: [String: JSONValue]) -> Bool {
        switch self {
        case .compare(let a, let comparison, let b):
            return Self.compare(Self.value(a, document, variables), comparison, Self.value(b, document, variables))
        case .in(let a, let list):
            let value = Self.value(a, document, variables)
            return list.contains { Self.compare(value, .eq, $0) }
        case .function(let function, let a, let b):
            guard let text = Self.value(a, document, variables).stringValue, let part = Self.value(b, document, variables).stringValue else { return false }
            let haystack = Array(text.utf8).map(ASCII.lowercased)
            let needle = Array(part.utf8).map(ASCII.lowercased)
            switch function {
            case .startswith: return haystack.starts(with: needle)
            case .endswith: return haystack.reversed().starts(with: needle.reversed())
            case .contains: return needle.isEmpty || haystack.indices.contains { haystack[$0...].starts(with: needle) }
            }
        case .not(let inner): return !inner.evaluate(document, variables: variables)
        case .and(let a, let b): return a.evaluate(document, variables: variables) && b.evaluate(document, variables: variables)
        case .or(let a, let b): return a.evaluate(document, variables: variables) || b.evaluate(document, variables: variables)
        case .any(let path, let variable, let condition):
            guard let items = Self.value(.path(path), document, variables).arrayValue else { return false }
            guard let condition, let variable else { return !items.isEmpty }
            return items.contains { item in
                var inner = variables
                inner[variable] = item
                return condition.evaluate(document, variables: inner)
            }
        }
    }

    static func value(_ operand: Operand, _ document: JSONValue, _ variables: [String: JSONValue]) -> JSONValue {
        switch operand {
        case .literal(let value): return value
        case .path(let path):
            guard let first = path.first else { return .null }
            var current: JSONValue
            var rest = path.dropFirst()
            if let bound = variables[first] {
                current = bound
            } else {
                current = document
                rest = path[...]
            }
            for member in rest {
                guard let next = current[member] else { return .null }
                current = next
            }
            return current
        }
    }

    static func compare(_ a: JSONValue, _ comparison: Comparison, _ b: JSONValue) -> Bool {
        let order: Int?
        switch (a, b) {
        case (.string(let x), .string(let y)):
            let left = x.utf8.map(ASCII.lowercased)
            let right = y.utf8.map(ASCII.lowercased)
            order = left == right ? 0 : left.lexicographicallyPrecedes(right) ? -1 : 1
        case (.number(let x), .number(let y)): order = x == y ? 0 : x < y ? -1 : 1
        case (.bool(let x), .bool(let y)): order = x == y ? 0 : nil
        case (.null, .null): order = 0
        default: order = nil
        }
        switch comparison {
        case .eq: return order == 0
        case .ne: return order != 0
        case .gt: return order.map { $0 > 0 } ?? false
        case .ge: return order.map { $0 >= 0 } ?? false
        case .lt: return order.map { $0 < 0 } ?? false
        case .le: return order.map { $0 <= 0 } ?? false
        }
    }

    // MARK: Reading

    struct Token: Equatable {
        enum Kind: Equatable { case word, string, number, open, close, comma, colon }
        let kind: Kind
        let text: String
    }

    enum Lexer {
        static func tokens(_ text: String) throws(SyntaxError) -> [Token] {
            var tokens: [Token] = []
            let bytes = Array(text.utf8)
            var index = 0
            while index < bytes.count {
                let byte = bytes[index]
                switch byte {
                case UInt8(ascii: " "), UInt8(ascii: "\t"):
                    index += 1
                case UInt8(ascii: "("):
                    tokens.append(Token(kind: .open, text: "("))
                    index += 1
                case UInt8(ascii: ")"):
                    tokens.append(Token(kind: .close, text: ")"))
                    index += 1
                case UInt8(ascii: ","):
                    tokens.append(Token(kind: .comma, text: ","))
                    index += 1
                case UInt8(ascii: ":"):
                    tokens.append(Token(kind: .colon, text: ":"))
                    index += 1
                case UInt8(ascii: "'"):
                    // A string literal; '' is a quote inside it.
                    var value: [UInt8] = []
                    index += 1
                    var closed = false
                    while index < bytes.count {
                        if bytes[index] == UInt8(ascii: "'") {
                            if index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "'") {
                                value.append(UInt8(ascii: "'"))
                                index += 2
                                continue
                            }
                            closed = true
                            index += 1
                            break
                        }
                        value.append(bytes[index])
                        index += 1
                    }
                    guard closed else { throw SyntaxError(message: "A string in the filter is not closed with a quote.") }
                    tokens.append(Token(kind: .string, text: String(decoding: value, as: UTF8.self)))
                default:
                    // A word: a member path (letters, digits, `/`, `.`, `_`, `@`), a keyword, a number, a GUID, a date.
                    let start = index
                    while index < bytes.count, Self.isWord(bytes[index]) { index += 1 }
                    guard index > start else { throw SyntaxError(message: "Unexpected character '\(Character(Unicode.Scalar(byte)))' in the filter.") }
                    let word = String(decoding: bytes[start..<index], as: UTF8.self)
                    let numeric = word.first.map { $0.isNumber || $0 == "-" } ?? false && Double(word) != nil
                    tokens.append(Token(kind: numeric ? .number : .word, text: word))
                }
            }
            return tokens
        }

        static func isWord(_ byte: UInt8) -> Bool {
            (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A) || byte >= 0x80 || byte == UInt8(ascii: "/")
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "@") || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "$")
        }
    }

    struct Parser {
        let tokens: [Token]
        var position = 0

        init(tokens: [Token]) { self.tokens = tokens }

        var atEnd: Bool { position >= tokens.count }
        var current: Token? { atEnd ? nil : tokens[position] }

        func isKeyword(_ keyword: String) -> Bool {
            guard let current, current.kind == .word else { return false }
            return current.text.equalsIgnoringCase(keyword)
        }

        mutating func expect(_ kind: Token.Kind, _ what: String) throws(SyntaxError) {
            guard current?.kind == kind else { throw SyntaxError(message: "Expected \(what) in the filter, found '\(current?.text ?? "the end")'.") }
            position += 1
        }

        mutating func expression(depth: Int) throws(SyntaxError) -> ODataFilter {
            guard depth <= ODataFilter.maximumDepth else { throw SyntaxError(message: "The filter nests deeper than \(ODataFilter.maximumDepth) levels.") }
            var left = try conjunction(depth: depth)
            while isKeyword("or") {
                position += 1
                left = .or(left, try conjunction(depth: depth))
            }
            return left
        }

        mutating func conjunction(depth: Int) throws(SyntaxError) -> ODataFilter {
            var left = try unary(depth: depth)
            while isKeyword("and") {
                position += 1
                left = .and(left, try unary(depth: depth))
            }
            return left
        }

        mutating func unary(depth: Int) throws(SyntaxError) -> ODataFilter {
            if isKeyword("not") {
                position += 1
                return .not(try unary(depth: depth + 1))
            }
            if current?.kind == .open {
                position += 1
                let inner = try expression(depth: depth + 1)
                try expect(.close, "')'")
                return inner
            }
            return try predicate(depth: depth)
        }

        mutating func predicate(depth: Int) throws(SyntaxError) -> ODataFilter {
            guard let token = current else { throw SyntaxError(message: "The filter ends where a condition was expected.") }
            if token.kind == .word, let function = StringFunction.allCases.first(where: { token.text.equalsIgnoringCase($0.rawValue) }),
                position + 1 < tokens.count, tokens[position + 1].kind == .open
            {
                position += 2
                let a = try operand()
                try expect(.comma, "','")
                let b = try operand()
                try expect(.close, "')'")
                return .function(function, a, b)
            }
            if token.kind == .word, token.text.hasSuffix("/any") || token.text.hasSuffix("/all"), position + 1 < tokens.count,
                tokens[position + 1].kind == .open
            {
                guard token.text.hasSuffix("/any") else { throw SyntaxError(message: "all() is not supported in filters; use any().") }
                let path = token.text.dropLast(4).split(separator: "/").map(String.init)
                guard !path.isEmpty else { throw SyntaxError(message: "any() needs a collection before it.") }
                position += 2
                if current?.kind == .close {
                    position += 1
                    return .any(path: path, variable: nil, condition: nil)
                }
                guard let variable = current, variable.kind == .word, !variable.text.contains("/") else {
                    throw SyntaxError(message: "any() needs a variable: any(x: x eq 'value').")
                }
                position += 1
                try expect(.colon, "':' after the lambda variable")
                let condition = try expression(depth: depth + 1)
                try expect(.close, "')'")
                return .any(path: path, variable: variable.text, condition: condition)
            }
            let left = try operand()
            if isKeyword("in") {
                position += 1
                try expect(.open, "'(' after in")
                var list: [JSONValue] = []
                while true {
                    guard case .literal(let value) = try operand() else { throw SyntaxError(message: "in (…) takes literal values only.") }
                    list.append(value)
                    guard list.count <= 100 else { throw SyntaxError(message: "in (…) takes at most 100 values.") }
                    if current?.kind == .comma {
                        position += 1
                        continue
                    }
                    try expect(.close, "')'")
                    break
                }
                return .in(left, list)
            }
            guard let word = current, word.kind == .word, let comparison = Comparison.allCases.first(where: { word.text.equalsIgnoringCase($0.rawValue) })
            else { throw SyntaxError(message: "Expected an operator (eq, ne, gt, ge, lt, le, in) in the filter, found '\(current?.text ?? "the end")'.") }
            position += 1
            return .compare(left, comparison, try operand())
        }

        mutating func operand() throws(SyntaxError) -> Operand {
            guard let token = current else { throw SyntaxError(message: "The filter ends where a value was expected.") }
            position += 1
            switch token.kind {
            case .string: return .literal(.string(token.text))
            case .number:
                // A GUID or a date-time read as a word compares as its text.
                if let number = Double(token.text), !token.text.contains("-") || token.text.hasPrefix("-") { return .literal(.number(number)) }
                return .literal(.string(token.text))
            case .word:
                if token.text == "true" { return .literal(.bool(true)) }
                if token.text == "false" { return .literal(.bool(false)) }
                if token.text == "null" { return .literal(.null) }
                if token.text.isGUID || token.text.first?.isNumber == true { return .literal(.string(token.text)) }
                return .path(token.text.split(separator: "/", omittingEmptySubsequences: false).map(String.init))
            default: throw SyntaxError(message: "Expected a value in the filter, found '\(token.text)'.")
            }
        }
    }
}
