import Foundation
import PortcullisAPI
import Testing

@testable import PortcullisClient

@Suite("client SDK units")
struct ClientTests {
    @Test("capabilities become the claims parameter, merged into a claims challenge as MSAL does")
    func claims() throws {
        #expect(try ClaimsParameter.build(capabilities: [], challenge: nil) == nil)
        #expect(try ClaimsParameter.build(capabilities: ["protapp"], challenge: nil) == #"{"access_token":{"xms_cc":{"values":["protapp"]}}}"#)
        let merged = try #require(
            try ClaimsParameter.build(
                capabilities: ["protapp", "cp1"], challenge: #"{"access_token":{"nbf":{"essential":true,"value":"1700000000"}},"id_token":{"acr":null}}"#))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(merged.utf8)) as? [String: Any])
        let accessToken = try #require(object["access_token"] as? [String: Any])
        #expect((accessToken["xms_cc"] as? [String: Any])?["values"] as? [String] == ["protapp", "cp1"])
        #expect(accessToken["nbf"] != nil && object["id_token"] != nil, "the challenge's own claims stay")
        let dedup = try #require(try ClaimsParameter.build(capabilities: ["ProtApp"], challenge: #"{"access_token":{"xms_cc":{"values":["protapp"]}}}"#))
        #expect(dedup.contains(#""values":["protapp"]"#))
        #expect(throws: PortcullisClientError.self) { try ClaimsParameter.build(capabilities: ["protapp"], challenge: "[1]") }
    }

    @Test("a resource's claims challenge is read from WWW-Authenticate (standard or URL-safe base64, escapes); anything else is not one")
    func claimsChallenge() throws {
        let claims = #"{"access_token":{"acrs":{"essential":true,"value":"c1"}}}"#
        let standard = Data(claims.utf8).base64EncodedString()
        let header = #"Bearer realm="", authorization_uri="https://login.example/t/oauth2/v2.0/authorize", error="insufficient_claims", claims="\#(standard)""#
        let read = try #require(ClaimsChallenge(wwwAuthenticate: header))
        #expect(read.claims == claims && read.authenticationContexts == ["c1"])
        let urlSafe = standard.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        #expect(ClaimsChallenge(wwwAuthenticate: #"Bearer error=insufficient_claims, claims="\#(urlSafe)""#)?.claims == claims)
        #expect(ClaimsChallenge(wwwAuthenticate: #"Bearer realm="a \"quoted\", realm", error="insufficient_claims",claims="\#(standard)""#) != nil)
        let values = try #require(ClaimsChallenge(claims: #"{"access_token":{"acrs":{"values":["c2","c10"]}}}"#))
        #expect(values.authenticationContexts == ["c2", "c10"])
        #expect(ClaimsChallenge(wwwAuthenticate: #"Bearer error="invalid_token", claims="\#(standard)""#) == nil)
        #expect(ClaimsChallenge(wwwAuthenticate: #"Bearer error="insufficient_claims""#) == nil)
        #expect(ClaimsChallenge(wwwAuthenticate: #"Bearer error="insufficient_claims", claims="not base64!""#) == nil)
        #expect(ClaimsChallenge(wwwAuthenticate: #"Bearer error="insufficient_claims", claims="\#(Data("[1]".utf8).base64EncodedString())""#) == nil)
        #expect(ClaimsChallenge(wwwAuthenticate: #"Bearer error="insufficient_claims", claims="unterminated"#) == nil)
        #expect(ClaimsChallenge(wwwAuthenticate: "Bearer " + String(repeating: "a", count: 20_000)) == nil)
        #expect(ClaimsChallenge(claims: "not json") == nil)
    }

    @Test("the protection refusal is recognised case-insensitively; the account comes from client_info and adi")
    func classification() {
        let info = ClientInfo(uid: "OID-1", utid: "TID-1").encoded
        let body = OAuthErrorBody(
            error: "Unauthorized_Client", suberror: "PROTECTION_POLICY_REQUIRED", errorDescription: "AADSTS53005: …", errorCodes: [53005],
            timestamp: "t", traceId: "x", correlationId: "c", adi: "Alice@Contoso.example", clientInfo: info)
        let error = PortcullisClientError.from(body, requestAccount: nil)
        #expect(error.kind == .protectionPolicyRequired)
        #expect(error.protection?.account.homeAccountId == "oid-1.tid-1")
        #expect(error.protection?.account.username == "Alice@Contoso.example")
        #expect(error.errorCode == 53005)
        let other = PortcullisClientError.from(
            OAuthErrorBody(error: "invalid_grant", errorDescription: "d", errorCodes: [50126], timestamp: "t", traceId: "x", correlationId: "c"),
            requestAccount: nil)
        #expect(other.kind == .server && other.protection == nil)
        // Without client_info, the request's account is used.
        let bare = OAuthErrorBody(
            error: "unauthorized_client", suberror: "protection_policy_required", errorDescription: "d", errorCodes: [53005], timestamp: "t", traceId: "x",
            correlationId: "c")
        let fallback = PortcullisClientError.from(bare, requestAccount: Account(objectId: "o", tenantId: "t", username: "u"))
        #expect(fallback.protection?.account.homeAccountId == "o.t")
    }

    @Test("accounts match by UPN, object ID or home account ID, case-insensitively; allowed accounts likewise")
    func accounts() {
        let account = Account(objectId: "AAAA", tenantId: "TTTT", username: "Alice@Contoso.example")
        #expect(account.homeAccountId == "aaaa.tttt")
        #expect(account.matches(identity: "alice@CONTOSO.example") && account.matches(identity: "aaaa") && account.matches(identity: "AAAA.TTTT"))
        #expect(!account.matches(identity: "bob@contoso.example"))
        #expect(ComplianceManager.isAccountAllowed(account, allowed: nil))
        #expect(ComplianceManager.isAccountAllowed(account, allowed: ["ALICE@contoso.example"]))
        #expect(ComplianceManager.isAccountAllowed(account, allowed: ["aaaa"]))
        #expect(!ComplianceManager.isAccountAllowed(account, allowed: ["bob@contoso.example"]))
    }

    @Test("the file token cache persists across instances, keyed by home account ID")
    func fileCache() async throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("portcullis-cache-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: url) }
        let account = Account(objectId: "o", tenantId: "t", username: "u@t")
        try await FileTokenCache(url: url).store(CachedAccount(account: account, refreshToken: "rt", idToken: nil))
        let reopened = FileTokenCache(url: url)
        #expect(try await reopened.entry(homeAccountId: "O.T")?.refreshToken == "rt")
        try await reopened.remove(homeAccountId: "o.t")
        #expect(try await FileTokenCache(url: url).entries().isEmpty)
    }
}

@Suite("compliance callback checks (receiver side)")
struct SecurityEventChecksTests {
    static let issuer = "https://login.example/t/v2.0"
    static func event(aud: String = "app", iat: Date, jti: String, iss: String = issuer) -> ComplianceSecurityEvent {
        ComplianceSecurityEvent(
            iss: iss, aud: aud, iat: Int(iat.timeIntervalSince1970), jti: jti,
            events: .init(deviceComplianceChange: nil, complianceStatus: nil))
    }

    @Test("typ, issuer, audience, iat freshness, and jti replay are each checked, with the reason")
    func checks() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let checks = SecurityEventChecks(issuer: Self.issuer, audience: "APP", maximumAge: 600, capacity: 3)
        let header: [String: Any] = ["typ": "secevent+jwt", "alg": "ES256"]
        #expect(checks.check(header: header, event: Self.event(iat: now, jti: "a"), now: now) == .accept)
        #expect(checks.check(header: header, event: Self.event(iat: now, jti: "a"), now: now) == .duplicate)
        guard case .reject(let typ) = checks.check(header: ["typ": "JWT"], event: Self.event(iat: now, jti: "b"), now: now) else {
            Issue.record("typ")
            return
        }
        #expect(typ.contains("typ"))
        guard case .reject(let aud) = checks.check(header: header, event: Self.event(aud: "other", iat: now, jti: "c"), now: now) else {
            Issue.record("aud")
            return
        }
        #expect(aud.contains("audience"))
        guard case .reject(let iss) = checks.check(header: header, event: Self.event(iat: now, jti: "d", iss: "https://evil/v2.0"), now: now) else {
            Issue.record("iss")
            return
        }
        #expect(iss.contains("issuer"))
        guard case .reject(let old) = checks.check(header: header, event: Self.event(iat: now.addingTimeInterval(-601), jti: "e"), now: now) else {
            Issue.record("iat")
            return
        }
        #expect(old.contains("iat"))
        guard case .reject = checks.check(header: header, event: Self.event(iat: now.addingTimeInterval(600), jti: "f"), now: now) else {
            Issue.record("future")
            return
        }
        // Memory is bounded: the oldest identifiers are forgotten beyond the capacity.
        for jti in ["g", "h", "i"] { #expect(checks.check(header: header, event: Self.event(iat: now, jti: jti), now: now) == .accept) }
        #expect(checks.check(header: header, event: Self.event(iat: now, jti: "a"), now: now) == .accept)
    }
}

@Suite("client errors")
struct ClientErrorTests {
    @Test("50076 with basic_action (a factor the silent grant cannot give) and interaction_required/login_required become interactionRequired")
    func interactionRequired() {
        func body(_ error: String, _ suberror: String?, _ code: Int) -> OAuthErrorBody {
            OAuthErrorBody(
                error: error, suberror: suberror, errorDescription: "AADSTS\(code): …", errorCodes: [code], timestamp: "t", traceId: "x", correlationId: "c")
        }
        #expect(PortcullisClientError.from(body("invalid_grant", "basic_action", 50076), requestAccount: nil).kind == .interactionRequired)
        #expect(PortcullisClientError.from(body("interaction_required", nil, 50076), requestAccount: nil).kind == .interactionRequired)
        #expect(PortcullisClientError.from(body("login_required", nil, 50058), requestAccount: nil).kind == .interactionRequired)
        #expect(
            PortcullisClientError.from(body("invalid_grant", nil, 50126), requestAccount: nil).kind == .server, "a wrong password is not an interaction problem"
        )
    }

    @Test("a 503 temporarily_unavailable becomes a retryable error carrying Retry-After")
    func temporarilyUnavailable() throws {
        let body = try JSONDecoder().decode(
            OAuthErrorBody.self,
            from: Data(
                #"{"error":"temporarily_unavailable","error_description":"AADSTS90033: try again","error_codes":[90033],"timestamp":"t","trace_id":"x","correlation_id":"c"}"#
                    .utf8))
        let error = PortcullisClientError.from(body, requestAccount: nil, retryAfter: 3)
        #expect(error.kind == .temporarilyUnavailable && error.retryAfter == 3 && error.errorCode == 90033)
        #expect(PortcullisClientError.from(body, requestAccount: nil).retryAfter == 1)
    }
}

@Suite("PKCE on the client")
struct PKCETests {
    private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    @Test("SHA-256 against FIPS 180-4 vectors, including the two-block and padding-boundary cases")
    func digest() {
        #expect(hex(SHA256Digest.hash([])) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(hex(SHA256Digest.hash(Array("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            hex(SHA256Digest.hash(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(
            hex(SHA256Digest.hash([UInt8](repeating: 0x61, count: 1_000_000)))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test("the S256 challenge of RFC 7636 Appendix B; fresh verifiers are 43 URL-safe characters and differ")
    func challenge() {
        #expect(PKCEPair(verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk").challenge == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        let (first, second) = (PKCEPair(), PKCEPair())
        #expect(first.verifier.count == 43 && first.verifier != second.verifier)
        #expect(first.verifier.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
    }
}
