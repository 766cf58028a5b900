import Foundation

/// base64url without padding (RFC 4648 §5), as JOSE and `client_info` use it.
public enum Base64URL {
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    public static func decode(_ text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64.append("=") }
        return Data(base64Encoded: base64)
    }
}

extension ClientInfo {
    /// The wire form: base64url of the JSON object.
    public var encoded: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return Base64URL.encode((try? encoder.encode(self)) ?? Data())
    }

    public init?(encoded: String) {
        guard let data = Base64URL.decode(encoded), let info = try? JSONDecoder().decode(ClientInfo.self, from: data) else { return nil }
        self = info
    }
}
