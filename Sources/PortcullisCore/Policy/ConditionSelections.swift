import Foundation

/// The Graph keywords a condition's ID list may hold beside object IDs. Which keywords a list accepts is the
/// validator's business (`includeUsers` takes `All` and `None`, `excludeLocations` only `AllTrusted`, …).
public enum ConditionKeyword: String, Codable, Sendable, CaseIterable, Comparable {
    case all = "All"
    case none = "None"
    case allTrusted = "AllTrusted"
    case servicePrincipalsInMyTenant = "ServicePrincipalsInMyTenant"
    /// Application groups (PROTOCOL §17): the applications tagged `Office365`, and Portcullis's admin surfaces.
    case office365 = "Office365"
    case microsoftAdminPortals = "MicrosoftAdminPortals"
    /// Every guest and external user (`includeUsers`/`excludeUsers`, PROTOCOL §17).
    case guestsOrExternalUsers = "GuestsOrExternalUsers"

    public init?(caseInsensitive text: String) {
        guard let match = Self.allCases.first(where: { $0.rawValue.equalsIgnoringCase(text) }) else { return nil }
        self = match
    }

    public static func < (a: Self, b: Self) -> Bool {
        Self.allCases.firstIndex(of: a)! < Self.allCases.firstIndex(of: b)!
    }
}

/// A condition's list (`includeUsers`, `includeApplications`, `includeLocations`, …): keywords and object IDs,
/// told apart once, where the document is read. IDs are identifiers of the list's kind (users' object IDs, applications'
/// app IDs, locations' IDs), in the order given, without repeats. On the wire it stays Graph's array of strings, keywords
/// first.
public struct Selection<Kind>: Sendable, Equatable, Codable, ExpressibleByArrayLiteral {
    public private(set) var keywords: Set<ConditionKeyword>
    public private(set) var ids: [Identifier<Kind>]

    public init() {
        keywords = []
        ids = []
    }

    public init(keywords: Set<ConditionKeyword>, ids: [Identifier<Kind>]) {
        self.keywords = keywords
        self.ids = []
        for id in ids { insert(id: id) }
    }

    /// Splits Graph's strings: a keyword in any case is the keyword, anything else an ID.
    public init(_ strings: [String]) {
        keywords = []
        ids = []
        for string in strings {
            if let keyword = ConditionKeyword(caseInsensitive: string) { insert(keyword) } else { insert(id: Identifier(string)) }
        }
    }

    public init(arrayLiteral elements: String...) { self.init(elements) }

    mutating func insert(_ keyword: ConditionKeyword) { keywords.insert(keyword) }

    mutating func insert(id: Identifier<Kind>) {
        if !ids.contains(id) { ids.append(id) }
    }

    public func contains(_ keyword: ConditionKeyword) -> Bool { keywords.contains(keyword) }
    public func contains(id: Identifier<Kind>) -> Bool { ids.contains(id) }
    public var isEmpty: Bool { keywords.isEmpty && ids.isEmpty }
    /// Graph's array of strings.
    public var strings: [String] { keywords.sorted().map(\.rawValue) + ids.map(\.rawValue) }

    public init(from decoder: any Decoder) throws {
        self.init(try [String](from: decoder))
    }

    public func encode(to encoder: any Encoder) throws {
        try strings.encode(to: encoder)
    }
}

/// Users (`includeUsers`, `excludeUsers`): object IDs and keywords.
public typealias UserSelection = Selection<IdentifierKind.Object>
/// Applications (`includeApplications`, client service principals): app IDs and keywords.
public typealias ApplicationSelection = Selection<IdentifierKind.App>
/// Named locations: their IDs and `All`, `AllTrusted`.
public typealias LocationSelection = Selection<IdentifierKind.Policy>

/// A value a condition names as `all` or as a set of cases: `includePlatforms` and `clientAppTypes`. On the
/// wire, Graph's array: `["all"]`, or the case names in declaration order.
public enum AllOr<Element>: Sendable, Equatable, Codable
where Element: RawRepresentable<String> & CaseIterable & Hashable & Sendable {
    case all
    case only(Set<Element>)

    public static var keyword: String { "all" }

    public func contains(_ element: Element) -> Bool {
        switch self {
        case .all: true
        case .only(let set): set.contains(element)
        }
    }

    public var strings: [String] {
        switch self {
        case .all: [Self.keyword]
        case .only(let set): Element.allCases.filter(set.contains).map(\.rawValue)
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let strings = try container.decode([String].self)
        if strings.contains(Self.keyword) {
            self = .all
            return
        }
        var set = Set<Element>()
        for string in strings {
            guard let element = Element(rawValue: string) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "'\(string)' is not one of \(Element.allCases.map(\.rawValue))")
            }
            set.insert(element)
        }
        self = .only(set)
    }

    public func encode(to encoder: any Encoder) throws {
        try strings.encode(to: encoder)
    }
}
