import Foundation
import PortcullisAPI
import PortcullisTokenVerification
import Testing

@testable import PortcullisServer
@testable import PortcullisStorage

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

    @Test(
        "the OAuth error body is written byte for byte as JSONEncoder writes it (sorted keys, slashes unescaped)",
        arguments: [
            OAuthErrorBody(
                error: "invalid_grant", suberror: "protection_policy_required",
                errorDescription: "AADSTS53005: Application needs to enforce Intune protection policies.\r\nTrace ID: t\r\nCorrelation ID: c",
                errorCodes: [53005], timestamp: "2026-11-29 04:00:00Z", traceId: "t", correlationId: "c", adi: "erin@contoso.example",
                clientInfo: "eyJ1aWQiOiJ4In0",
                remediation: RemediationDetails(
                    homeAccountId: "o.t", accountId: "o", tenantId: "t", upn: "erin@contoso.example", endpoint: "https://p.example/x",
                    scope: "https://p.example/.default", policyIds: ["p-1", "p/2"])),
            OAuthErrorBody(
                error: "invalid_client", errorDescription: "\"quoted\" \\ back\nslash\u{1}é ✓ </script>", errorCodes: [7000215, 1],
                timestamp: "", traceId: "", correlationId: ""),
        ])
    func errorBody(_ body: OAuthErrorBody) throws {
        var withClaims = body
        for candidate in [
            body,
            {
                withClaims.claims = #"{"access_token":{"polids":{"essential":true,"values":["p"]}}}"#
                return withClaims
            }(),
        ] {
            #expect(String(decoding: candidate.jsonBody, as: UTF8.self) == String(decoding: try JSONResponse.encoder.encode(candidate), as: UTF8.self))
            #expect(try JSONDecoder().decode(OAuthErrorBody.self, from: candidate.jsonBody) == candidate)
        }
    }

    @Test("client_info is JSONEncoder's sorted form, base64url", arguments: [("oid-1", "tid-1"), ("", "\"é\\/\n")])
    func clientInfo(_ ids: (String, String)) throws {
        let info = ClientInfo(uid: ids.0, utid: ids.1)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        #expect(Base64URL.decode(info.encoded) == (try encoder.encode(info)))
    }

    @Test(
        "the introspection response is written byte for byte as JSONEncoder writes it",
        arguments: [
            IntrospectionResponse.inactive,
            IntrospectionResponse(
                active: true, scope: "Mail.Read openid", clientId: "c", username: "erin@contoso.example", tokenType: "DPoP", exp: 3, iat: 1, nbf: 1,
                sub: "s", aud: "api://x/\"y\"", iss: "https://p.example/t/v2.0", jti: "j", tid: "t", oid: "o", roles: ["A", "B/é"],
                cnf: .init(jkt: "k")),
            IntrospectionResponse(active: true, clientId: "c", tokenType: "refresh_token", exp: 2, iat: 1, sub: "s", roles: []),
        ])
    func introspection(_ response: IntrospectionResponse) throws {
        #expect(String(decoding: response.jsonBody, as: UTF8.self) == String(decoding: try JSONResponse.encoder.encode(response), as: UTF8.self))
    }

    @Test("trimming spaces: spaces and tabs at either end only")
    func trimmingSpaces() {
        #expect(" \t a b \t".trimmingSpaces() == "a b")
        #expect("ab".trimmingSpaces() == "ab")
        #expect(" \t ".trimmingSpaces().isEmpty)
        #expect("".trimmingSpaces().isEmpty)
        #expect("\na\n".trimmingSpaces() == "\na\n", "line breaks are not HTTP's optional whitespace")
        #expect(" é日本 ".trimmingSpaces() == "é日本", "multi-byte characters at either end kept whole")
        #expect("\t👩‍👩‍👧".trimmingSpaces() == "👩‍👩‍👧")
        #expect(" x ;y".prefix(3).trimmingSpaces() == "x", "a substring's own bounds")
    }

    @Test("a scope parameter split at spaces, tabs, CRs and LFs, empty pieces dropped, other characters whole")
    func splitAtWhitespace() {
        #expect("openid  profile\tapi://x/.default".splitAtWhitespace() == ["openid", "profile", "api://x/.default"])
        #expect(" \r\n a\r\nb \n".splitAtWhitespace() == ["a", "b"], "CR LF separates (as bytes, not one Character)")
        #expect("".splitAtWhitespace().isEmpty)
        #expect(" \t ".splitAtWhitespace().isEmpty)
        #expect("é api://日本/Mail.Read 👩‍👩‍👧".splitAtWhitespace() == ["é", "api://日本/Mail.Read", "👩‍👩‍👧"])
        #expect("a\u{00A0}b".splitAtWhitespace() == ["a\u{00A0}b"], "a no-break space is not a separator")
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
