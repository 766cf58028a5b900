import Foundation
import PortcullisAPI
import Testing

@testable import PortcullisServer

@Suite("hand-written encodings")
struct EncodingTests {
    @Test(
        "the token response JSON decodes back to the same response, with JSON escapes where needed",
        arguments: [
            TokenResponse(
                scope: "api://a/Mail.Read openid", expiresIn: 3600, extExpiresIn: 3600, accessToken: "a.b.c", refreshToken: "r-1", idToken: "i.d.t",
                clientInfo: "eyJ"),
            TokenResponse(scope: "api://a/\"quoted\" \\ back\nslash\u{1}é", expiresIn: 60, extExpiresIn: 60, accessToken: "x"),
        ])
    func tokenResponse(_ response: TokenResponse) throws {
        let data = response.jsonBody
        #expect(try JSONDecoder().decode(TokenResponse.self, from: data) == response)
        #expect(try JSONSerialization.jsonObject(with: data) is [String: Any])
    }

    @Test("base64url matches Foundation's base64 with the URL alphabet and no padding", arguments: 0..<40)
    func base64url(_ length: Int) {
        let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11 &+ length) }
        let expected = Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        #expect(Base64URL.encode(bytes) == expected)
        #expect(Base64URL.decode(expected) == Data(bytes))
        #expect(Base64URL.decode(Data(bytes).base64EncodedString()) == Data(bytes), "the standard alphabet and padding are read too")
    }

    @Test("base64url refuses what is not base64: other characters, an impossible length, too much padding")
    func base64urlRefusals() {
        for text in ["a", "abcde", "ab.c", "ab c", "ab===", "é", "ab=c"] { #expect(Base64URL.decode(text) == nil, "\(text)") }
        #expect(Base64URL.decode("") == Data())
    }
}
