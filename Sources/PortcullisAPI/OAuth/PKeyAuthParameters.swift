import Foundation

/// The parameters of an Entra PKeyAuth value (PROTOCOL §18) — a token endpoint's `WWW-Authenticate: PKeyAuth …`
/// challenge, a client's `Authorization: PKeyAuth …` answer — read as MSAL's `DeviceAuthHelper` reads them: after the
/// scheme, `key="value"` pairs separated by commas outside quotes, every quote dropped. The server and the client SDK
/// both read them here.
public enum PKeyAuthParameters {
    /// The pairs, or `nil` when the value is not PKeyAuth, is too long, or names a key twice.
    public static func parse(_ value: String) -> [String: String]? {
        guard value.utf8.count <= 32 * 1024, value.count > 8, value.prefix(8).caseInsensitiveCompare("PKeyAuth") == .orderedSame else { return nil }
        var pieces: [String] = []
        var current = ""
        var quoted = false
        for character in value.dropFirst(8) {
            if character == "\"" { quoted.toggle() }
            if character == "," && !quoted {
                pieces.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        pieces.append(current)
        var pairs: [String: String] = [:]
        for piece in pieces {
            guard let equals = piece.firstIndex(of: "=") else { continue }
            let key = piece[..<equals].trimmingCharacters(in: .whitespaces)
            let value = piece[piece.index(after: equals)...].trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "\"", with: "")
            guard !key.isEmpty, pairs[key] == nil else { return nil }
            pairs[key] = value
        }
        return pairs
    }
}
