import Foundation

/// A language the user-facing compliance messages are written in (PROTOCOL §16: the seeds' languages). Chinese is
/// simplified Chinese.
public enum MessageLanguage: String, Codable, Sendable, CaseIterable {
    case english = "en"
    case spanish = "es"
    case portuguese = "pt"
    case italian = "it"
    case chinese = "zh"

    /// The best of these for an `Accept-Language` header (RFC 9110 §12.5.4): ranges by weight, then by order; a range
    /// matches on its primary subtag (`pt-BR` → Portuguese, `zh-Hant-TW` → Chinese); `*` or nothing we have → English.
    /// A malformed header is read as far as it makes sense and never fails. At most 32 ranges are looked at.
    public init(acceptLanguage header: String?) {
        self = Self.first(of: Self.tags(acceptLanguage: header)) ?? .english
    }

    /// The language ranges of an `Accept-Language` header (RFC 9110 §12.5.4), best first: by weight, then by order; those
    /// weighted 0 left out. A malformed header is read as far as it makes sense; at most 32 ranges are looked at.
    public static func tags(acceptLanguage header: String?) -> [String] {
        guard let header, !header.isEmpty else { return [] }
        var ranges: [(tag: String, weight: Double, order: Int)] = []
        for (order, item) in header.split(separator: ",").prefix(32).enumerated() {
            let parameters = item.split(separator: ";")
            guard let tag = parameters.first?.trimmingCharacters(in: .whitespaces), !tag.isEmpty else { continue }
            var weight = 1.0
            for parameter in parameters.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                if pair.count == 2, pair[0].lowercased() == "q" { weight = Double(pair[1]).map { min(max($0, 0), 1) } ?? 0 }
            }
            if weight > 0 { ranges.append((tag, weight, order)) }
        }
        return ranges.sorted { $0.weight != $1.weight ? $0.weight > $1.weight : $0.order < $1.order }.map(\.tag)
    }

    /// The first of `tags` (BCP 47, best first, as `Locale.preferredLanguages` lists them) that we have, or English.
    public init(preferred tags: [String]) {
        self = Self.first(of: tags) ?? .english
    }

    static func first(of tags: [String]) -> MessageLanguage? {
        for tag in tags {
            let primary = tag.split(whereSeparator: { $0 == "-" || $0 == "_" }).first.map { $0.lowercased() } ?? ""
            if let language = MessageLanguage(rawValue: primary) { return language }
        }
        return nil
    }
}
