import Foundation
import PortcullisTesting
import Testing

@testable import PortcullisTokenVerification
@testable import PortcullisTokens

/// RFC 9449 proofs, RFC 7638 thumbprints and the server's stateless nonces (PROTOCOL §15), below the HTTP layer.
@Suite("DPoP proofs, thumbprints and nonces")
struct DPoPProofTests {
    static let url = "https://portcullis.test/t/oauth2/v2.0/token"
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test("RFC 7638 §3.1's example key has the RFC's thumbprint")
    func thumbprintVector() {
        let n =
            "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw"
        #expect(JWKThumbprint.rsa(n: n, e: "AQAB") == "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs")
    }

    @Test("a good proof by each key type verifies to the key's thumbprint, computed independently")
    func verifies() throws {
        for kind in [DPoPKey.Kind.p256, .rsa2048, .ed25519] {
            let key = try DPoPKey(kind)
            let proof = try DPoPVerifier.verify(
                try key.proof(url: Self.url, issuedAt: Self.now, jti: "j-1", nonce: "n"), method: "POST", url: Self.url, now: Self.now)
            #expect(proof.thumbprint == key.thumbprint && proof.algorithm == key.algorithm && proof.jti == "j-1" && proof.nonce == "n")
        }
    }

    @Test("a resource's check: ath required with an access token and must be its hash; iat at the window's edges")
    func accessTokenHashAndWindow() throws {
        let key = try DPoPKey()
        let token = "header.payload.signature"
        #expect(throws: DPoPProofError.self) {
            try DPoPVerifier.verify(try key.proof(url: Self.url, issuedAt: Self.now), method: "POST", url: Self.url, now: Self.now, accessToken: token)
        }
        #expect(throws: DPoPProofError.self) {
            try DPoPVerifier.verify(
                try key.proof(url: Self.url, issuedAt: Self.now, accessToken: "another"), method: "POST", url: Self.url, now: Self.now, accessToken: token)
        }
        _ = try DPoPVerifier.verify(
            try key.proof(url: Self.url, issuedAt: Self.now, accessToken: token), method: "POST", url: Self.url, now: Self.now, accessToken: token)
        for (offset, accepted) in [(-60.0, true), (60, true), (-61, false), (61, false)] {
            let result = Result {
                try DPoPVerifier.verify(
                    try key.proof(url: Self.url, issuedAt: Self.now.addingTimeInterval(offset)), method: "POST", url: Self.url, now: Self.now)
            }
            #expect(((try? result.get()) != nil) == accepted, "iat \(offset)")
        }
    }

    @Test("htu: scheme and host case, default port, query and fragment do not matter; path, port and host do")
    func targetURI() throws {
        let key = try DPoPKey()
        func check(_ htu: String) -> Bool {
            (try? DPoPVerifier.verify(try key.proof(url: htu, issuedAt: Self.now), method: "POST", url: Self.url, now: Self.now)) != nil
        }
        #expect(check("HTTPS://PORTCULLIS.test:443/t/oauth2/v2.0/token?q=1#frag"))
        #expect(!check("https://portcullis.test:8443/t/oauth2/v2.0/token"))
        #expect(!check("https://portcullis.test/T/oauth2/v2.0/token"))
        #expect(!check("http://portcullis.test/t/oauth2/v2.0/token"))
        #expect(!check("https://other.test/t/oauth2/v2.0/token"))
        #expect(!check("not a url"))
    }

    @Test("nonces: this period's and the previous one's accepted, older, forged or another installation's refused")
    func nonces() throws {
        let nonces = DPoPNonces(credentials: CredentialHasher(pepper: Data(repeating: 1, count: 32)))
        let other = DPoPNonces(credentials: CredentialHasher(pepper: Data(repeating: 2, count: 32)))
        let nonce = nonces.current(now: Self.now)
        #expect(nonces.isValid(nonce, now: Self.now))
        #expect(nonces.isValid(nonce, now: Self.now.addingTimeInterval(DPoPNonces.period)), "the next period still accepts it")
        #expect(!nonces.isValid(nonce, now: Self.now.addingTimeInterval(2 * DPoPNonces.period)), "two periods later it is refused")
        #expect(nonces.current(now: Self.now.addingTimeInterval(DPoPNonces.period)) != nonce, "rotated every period")
        #expect(!other.isValid(nonce, now: Self.now), "another installation's pepper")
        var tampered = Array(nonce)
        tampered[tampered.count - 1] = tampered.last == "A" ? "B" : "A"
        #expect(!nonces.isValid(String(tampered), now: Self.now))
        #expect(!nonces.isValid("", now: Self.now) && !nonces.isValid(String(repeating: "A", count: 100), now: Self.now))
    }

    @Test("the flat payload reader agrees with JSONSerialization where it answers, and declines what it does not read")
    func flatPayloads() throws {
        let read = [
            #"{"jti":"a","htm":"POST","htu":"https://x/t?q=1","iat":1800000000}"#, #" { "a" : "b\"c\\d\/e" , "n" : -1.5e3 } "#, "{}",
            #"{"s":"é日本"}"#,
        ]
        for text in read {
            let flat = try #require(FlatJSONObject.parse(Data(text.utf8)), "\(text)")
            let general = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
            #expect(Set(flat.keys) == Set(general.keys), "\(text)")
            for (name, value) in flat {
                if let string = value as? String { #expect(general[name] as? String == string, "\(text) \(name)") }
                if let number = value as? Double { #expect((general[name] as? NSNumber)?.doubleValue == number, "\(text) \(name)") }
            }
        }
        let declined = [
            #"{"a":{"b":1}}"#, #"{"a":[1]}"#, #"{"a":true}"#, #"{"a":null}"#, #"{"a":"\u0041"}"#, #"{"a":"x"} trailing"#, #"{"a":"x""#, "[]",
            #"{"a":"x","a":"y"}"#, #"{"a" "x"}"#, #"{"a":"x",}"#, "", #"{"a":"line\#nbreak"}"#,
        ]
        for text in declined { #expect(FlatJSONObject.parse(Data(text.utf8)) == nil, "\(text)") }
        // A payload the flat reader declines is still read (the general way).
        let nested = try DPoPKey().proof(url: Self.url, issuedAt: Self.now, claims: ["extra": ["nested": true]])
        #expect(try DPoPVerifier.verify(nested, method: "POST", url: Self.url, now: Self.now).jti.isEmpty == false)
    }
}
