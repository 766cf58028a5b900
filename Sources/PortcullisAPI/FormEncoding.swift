import Foundation

/// `application/x-www-form-urlencoded` (and the query of a redirect): every byte outside RFC 3986's unreserved
/// set is percent-encoded, `+` and non-ASCII letters included — a `+` left as is would be read as a space
/// by every form decoder (MSAL's among them).
public enum FormEncoding {
    private static let unreserved: CharacterSet = {
        var set = CharacterSet()
        set.insert(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        return set
    }()

    public static func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }

    public static func encode(_ fields: [(String, String)]) -> String {
        fields.map { "\(escape($0.0))=\(escape($0.1))" }.joined(separator: "&")
    }
}
