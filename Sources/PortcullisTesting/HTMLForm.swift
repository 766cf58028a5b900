import Foundation

/// Reads the first form of a server-rendered page the way a browser submits it: its action and its inputs'
/// values (HTML-unescaped). For tests that drive the sign-in pages without a browser.
public struct HTMLForm: Sendable {
    public var action: String?
    public var fields: [String: String]

    public init(html: String) {
        self.action = Self.attribute("action", of: Self.firstTag("form", in: html))
        var fields: [String: String] = [:]
        var rest = html[...]
        while let start = rest.range(of: "<input ") {
            guard let end = rest[start.upperBound...].firstIndex(of: ">") else { break }
            let tag = String(rest[start.lowerBound...end])
            if let name = Self.attribute("name", of: tag) { fields[name] = Self.attribute("value", of: tag) ?? "" }
            rest = rest[rest.index(after: end)...]
        }
        self.fields = fields
    }

    static func firstTag(_ name: String, in html: String) -> String? {
        guard let start = html.range(of: "<\(name) "), let end = html[start.upperBound...].firstIndex(of: ">") else { return nil }
        return String(html[start.lowerBound...end])
    }

    static func attribute(_ name: String, of tag: String?) -> String? {
        guard let tag, let start = tag.range(of: " \(name)=\"") else { return nil }
        guard let end = tag[start.upperBound...].firstIndex(of: "\"") else { return nil }
        return unescape(String(tag[start.upperBound..<end]))
    }

    /// The entities the template engine produces.
    public static func unescape(_ text: String) -> String {
        text.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'").replacingOccurrences(of: "&lt;", with: "<")
            .replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&#x2F;", with: "/").replacingOccurrences(of: "&#x3D;", with: "=")
            .replacingOccurrences(of: "&#x60;", with: "`").replacingOccurrences(of: "&amp;", with: "&")
    }
}
