import Foundation
import PortcullisAPI

extension TokenResponse {
    /// The response body, written directly: the token endpoint's hottest encoding, a fixed shape of strings
    /// and integers (the same JSON `JSONEncoder` writes with sorted keys, measured ~5 % of a grant's CPU).
    var jsonBody: Data {
        var out = "{"
        out.reserveCapacity(accessToken.utf8.count + (idToken?.utf8.count ?? 0) + 256)
        var first = true
        func separator() {
            if !first { out += "," }
            first = false
        }
        func string(_ key: String, _ value: String?) {
            guard let value else { return }
            separator()
            out += "\"" + key + "\":\"" + JSONText.escape(value) + "\""
        }
        func integer(_ key: String, _ value: Int) {
            separator()
            out += "\"" + key + "\":" + String(value)
        }
        string("access_token", accessToken)
        string("client_info", clientInfo)
        integer("expires_in", expiresIn)
        integer("ext_expires_in", extExpiresIn)
        string("id_token", idToken)
        string("refresh_token", refreshToken)
        string("scope", scope)
        string("token_type", tokenType)
        out += "}"
        return Data(out.utf8)
    }
}

/// JSON string escaping (RFC 8259 §7).
enum JSONText {
    static func escape(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
