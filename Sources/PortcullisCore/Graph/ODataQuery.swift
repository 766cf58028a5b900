import Foundation

/// A collection request's OData query options as Microsoft Graph reads them (PROTOCOL §20): `$filter`, `$select`,
/// `$orderby` (on `displayName`), `$top`, `$skiptoken` (the position of the next page, in links this server made),
/// `$count=true`, `$expand`, `$search` refused. Read once with the type's members, so a misspelt member is a 400 at once.
public struct ODataQuery: Sendable {
    public var filter: ODataFilter?
    public var select: [String]?
    public var orderBy: (member: String, descending: Bool)?
    public var top: Int?
    public var skip = 0
    public var count = false
    public var expand: [String] = []

    public init() {}

    /// A query option Portcullis cannot honour: Graph's 400 (`code`, `message`).
    public struct Refusal: Error, Sendable, Equatable {
        public let code: String
        public let message: String
    }

    /// The largest page, as Graph's directory collections allow.
    public static let maximumTop = 999

    /// Reads the options named in `parameter` (`$filter`, … — also without the `$`, as Graph accepts) for a collection of
    /// `type` (`GraphSchema`), whose navigation properties `expandable` may be expanded.
    public static func read(type: String?, expandable: Set<String> = [], _ parameter: (String) -> String?) throws(Refusal) -> ODataQuery {
        func option(_ name: String) -> String? { parameter("$" + name) ?? parameter(name) }
        let members = type.flatMap(GraphSchema.members(of:)).map { Set($0.map(\.name)).union(["id", "@odata.type"]) }
        let typeName = "microsoft.graph.\(type ?? "entity")"
        var query = ODataQuery()
        if option("search") != nil {
            throw Refusal(code: "Request_UnsupportedQuery", message: "$search is not supported; use $filter with startswith.")
        }
        if let text = option("filter") {
            do {
                let filter = try ODataFilter.parse(text)
                if let members, let unknown = filter.members.sorted().first(where: { !members.contains($0) }) {
                    throw Refusal(code: "BadRequest", message: "Invalid filter clause: Could not find a property named '\(unknown)' on type '\(typeName)'.")
                }
                query.filter = filter
            } catch let error as ODataFilter.SyntaxError {
                throw Refusal(code: "BadRequest", message: "Invalid filter clause: \(error.message)")
            } catch let refusal as Refusal {
                throw refusal
            } catch {
                throw Refusal(code: "BadRequest", message: "Invalid filter clause.")
            }
        }
        if let text = option("select") {
            let names = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            guard !names.isEmpty, names.count <= 64 else { throw Refusal(code: "BadRequest", message: "$select names 1 to 64 properties.") }
            if let members, let unknown = names.first(where: { !members.contains($0) && $0 != "*" }) {
                throw Refusal(
                    code: "BadRequest", message: "Parsing OData Select and Expand failed: Could not find a property named '\(unknown)' on type '\(typeName)'.")
            }
            query.select = names.contains("*") ? nil : names
        }
        if let text = option("orderby") {
            let parts = text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            guard let member = parts.first, parts.count <= 2, ["displayName", "createdDateTime", "userPrincipalName"].contains(member),
                parts.count == 1 || parts[1].equalsIgnoringCase("asc") || parts[1].equalsIgnoringCase("desc")
            else {
                throw Refusal(code: "Request_UnsupportedQuery", message: "$orderby is supported on displayName (asc or desc) only.")
            }
            if let members, !members.contains(member) {
                throw Refusal(code: "BadRequest", message: "Could not find a property named '\(member)' on type '\(typeName)'.")
            }
            query.orderBy = (member, parts.count == 2 && parts[1].equalsIgnoringCase("desc"))
        }
        if let text = option("top") {
            guard let value = Int(text), (1...maximumTop).contains(value) else {
                throw Refusal(code: "BadRequest", message: "Invalid page size specified: '\(text.prefix(32))'. Must be between 1 and \(maximumTop) inclusive.")
            }
            query.top = value
        }
        if let text = option("skiptoken") {
            guard let value = SkipToken.position(text) else { throw Refusal(code: "BadRequest", message: "$skiptoken is not one this server issued.") }
            query.skip = value
        }
        if let text = option("count") {
            guard text == "true" || text == "false" else { throw Refusal(code: "BadRequest", message: "$count must be true or false.") }
            query.count = text == "true"
        }
        if let text = option("expand") {
            let names = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            if let unknown = names.first(where: { !expandable.contains($0) }) {
                throw Refusal(
                    code: "BadRequest",
                    message: "Parsing OData Select and Expand failed: Could not find a navigation property named '\(unknown)' on type '\(typeName)'.")
            }
            query.expand = names
        }
        return query
    }

    /// The page of `documents` this query asks for: filtered, ordered, from `skip`, at most `top` (or `pageSize`). Also the
    /// count of all that matched and where the next page starts (`nil`: this is the last).
    public func page(_ documents: [JSONValue], pageSize: Int) -> (value: [JSONValue], count: Int, next: Int?) {
        var matched = filter.map { filter in documents.filter(filter.matches) } ?? documents
        if let orderBy {
            matched.sort { a, b in
                let x = (a[orderBy.member]?.stringValue ?? "").utf8.map(ASCII.lowercased)
                let y = (b[orderBy.member]?.stringValue ?? "").utf8.map(ASCII.lowercased)
                return orderBy.descending ? y.lexicographicallyPrecedes(x) : x.lexicographicallyPrecedes(y)
            }
        }
        let size = top ?? pageSize
        let value = Array(matched.dropFirst(skip).prefix(size))
        let end = skip + value.count
        return (value, matched.count, end < matched.count ? end : nil)
    }

    /// `document` with only the selected members (and `id` and `@odata.type`, which Graph always keeps).
    public func selected(_ document: JSONValue) -> JSONValue {
        guard let select, case .object(let object) = document else { return document }
        let kept = Set(select).union(["id", "@odata.type"])
        return .object(object.filter { kept.contains($0.key) })
    }
}

/// The `$skiptoken` of this server's next links: the position of the next page, in a form that says it is a token.
public enum SkipToken {
    public static func make(position: Int) -> String { "p\(position)" }

    public static func position(_ token: String) -> Int? {
        guard token.hasPrefix("p"), let value = Int(token.dropFirst()), (0...1_000_000).contains(value) else { return nil }
        return value
    }
}

/// Graph's evolvable enumerations (PROTOCOL §20): members added after `unknownFutureValue` are sent only to a client that
/// asks with `Prefer: include-unknown-enum-members`; to others they read `unknownFutureValue`, as Graph answers.
public enum EvolvableEnums {
    /// Where, in a type, a member holds such an enumeration, and its members after `unknownFutureValue`.
    static let members: [String: [(path: [String], late: Set<String>)]] = [
        "conditionalAccessPolicy": [
            (["grantControls", "builtInControls"], ["riskRemediation"]),
            (["conditions", "platforms", "includePlatforms"], ["linux"]),
            (["conditions", "platforms", "excludePlatforms"], ["linux"]),
        ],
        "conditionalAccessTemplate": [
            (["details", "grantControls", "builtInControls"], ["riskRemediation"]),
            (["details", "conditions", "platforms", "includePlatforms"], ["linux"]),
            (["details", "conditions", "platforms", "excludePlatforms"], ["linux"]),
        ],
        "authenticationStrengthPolicy": [(["allowedCombinations"], ["qrCodePin"])],
    ]

    /// `document` (of `type`) as a client that did not ask for late members reads it. A combination of authentication
    /// methods (`"password,qrCodePin"`) holding a late member reads `unknownFutureValue` as a whole.
    public static func hidingLateMembers(_ document: JSONValue, type: String) -> JSONValue {
        guard let entries = members[type] else { return document }
        var result = document
        for entry in entries {
            result = replace(result, path: entry.path[...]) { value in
                guard case .string(let text) = value else { return value }
                let parts = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                return parts.contains(where: entry.late.contains) ? .string("unknownFutureValue") : value
            }
        }
        return result
    }

    static func replace(_ value: JSONValue, path: ArraySlice<String>, _ transform: (JSONValue) -> JSONValue) -> JSONValue {
        guard let first = path.first else {
            if case .array(let items) = value { return .array(items.map(transform)) }
            return transform(value)
        }
        guard case .object(var object) = value, let inner = object[first] else { return value }
        object[first] = replace(inner, path: path.dropFirst(), transform)
        return .object(object)
    }
}
