import Foundation
import PortcullisAPI

/// A resource's claims challenge (PROTOCOL §13, §14.3): the `WWW-Authenticate` answer of a protected API that wants a
/// token with more in it — `error="insufficient_claims"` with `claims` (base64 of a claims request: `acrs` for an
/// authentication context, `nbf` after a revocation). The app hands `claims` to the next acquisition; MSAL apps do the
/// same with `claims_challenge`.
public struct ClaimsChallenge: Sendable, Equatable {
    /// The claims request, as JSON text (what `claimsChallenge:` takes).
    public var claims: String
    /// The authentication contexts it asks for (`access_token.acrs`), if any.
    public var authenticationContexts: [String]

    /// The longest header read (a resource's challenge is a few hundred bytes).
    public static let maximumHeaderLength = 16 * 1024

    /// Reads a `WWW-Authenticate` header value (`Bearer …, error="insufficient_claims", claims="…"`), or `nil` when it is
    /// not a claims challenge (another error, no `claims`, a `claims` that is not base64 of a JSON object).
    public init?(wwwAuthenticate header: String) {
        guard header.utf8.count <= Self.maximumHeaderLength else { return nil }
        let parameters = Self.parameters(header)
        guard parameters["error"] == "insufficient_claims", let encoded = parameters["claims"], let data = Base64URL.decode(encoded),
            let text = String(data: data, encoding: .utf8)
        else { return nil }
        self.init(claims: text)
    }

    /// A claims request given as JSON text (`portcullis token --claims-challenge '{"access_token":…}'`); `nil` unless it is
    /// a JSON object.
    public init?(claims text: String) {
        guard text.utf8.count <= Self.maximumHeaderLength, let data = text.data(using: .utf8),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return nil }
        claims = text
        let acrs = (object["access_token"] as? [String: Any])?["acrs"] as? [String: Any]
        authenticationContexts = ([acrs?["value"] as? String] + ((acrs?["values"] as? [String]) ?? []).map { Optional($0) }).compactMap { $0 }
    }

    /// The `name="value"` (or `name=token`) parameters of a challenge, names lower-cased; quoted values unescaped.
    static func parameters(_ header: String) -> [String: String] {
        var found: [String: String] = [:]
        var rest = Substring(header)
        // Past the scheme ("Bearer "), if any.
        if let space = rest.firstIndex(of: " "), !rest[..<space].contains("=") { rest = rest[rest.index(after: space)...] }
        while !rest.isEmpty {
            rest = rest.drop { $0 == " " || $0 == "," }
            guard let equals = rest.firstIndex(of: "=") else { break }
            let name = rest[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            rest = rest[rest.index(after: equals)...].drop { $0 == " " }
            var value = ""
            if rest.first == "\"" {
                rest = rest.dropFirst()
                var escaped = false
                var closed = false
                while let character = rest.first {
                    rest = rest.dropFirst()
                    if escaped {
                        value.append(character)
                        escaped = false
                    } else if character == "\\" {
                        escaped = true
                    } else if character == "\"" {
                        closed = true
                        break
                    } else {
                        value.append(character)
                    }
                }
                if !closed { break }
            } else {
                let end = rest.firstIndex(of: ",") ?? rest.endIndex
                value = rest[..<end].trimmingCharacters(in: .whitespaces)
                rest = rest[end...]
            }
            if found[name] == nil { found[name] = value }
        }
        return found
    }
}
