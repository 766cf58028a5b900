import Foundation
import PortcullisAPI
import PortcullisCore
import Testing

@testable import PortcullisTokens

/// The table of verified access tokens (`TokenSigner.verified`) skips a signature check and nothing else.
@Suite("verified access tokens")
struct VerifiedAccessTokensTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func rejection(_ result: Result<AccessTokenClaims, AccessTokenRejection>) -> AccessTokenRejection? {
        if case .failure(let rejection) = result { return rejection }
        return nil
    }

    @Test("a remembered token is still judged on every call: expiry, not-before, issuer, audience")
    func judgedEveryTime() async throws {
        let signer = try await TokenSigner(loaded: try SigningKeyStore(directory: keysDirectory()).load(algorithm: .es256, now: now))
        let claims = sampleClaims(now: now, lifetime: 600)
        let token = try await signer.sign(accessToken: claims)
        #expect(try await signer.verifyAccessToken(token, issuer: claims.iss, audiences: ["api://mail"], now: now).get() == claims)
        #expect(signer.verified.count == 1)
        #expect(try await signer.verifyAccessToken(token, issuer: claims.iss, audiences: ["api://mail"], now: now).get() == claims)
        #expect(signer.verified.count == 1, "the same token is one entry")
        #expect(rejection(await signer.verifyAccessToken(token, issuer: claims.iss, audiences: nil, now: now.addingTimeInterval(600))) == .expired)
        #expect(rejection(await signer.verifyAccessToken(token, issuer: claims.iss, audiences: nil, now: now.addingTimeInterval(-60))) == .notYetValid)
        #expect(rejection(await signer.verifyAccessToken(token, issuer: "https://other.test/v2.0", audiences: nil, now: now)) == .wrongIssuer)
        #expect(rejection(await signer.verifyAccessToken(token, issuer: nil, audiences: ["api://other"], now: now)) == .wrongAudience)
    }

    @Test("a token that differs from a remembered one by a byte is checked, and refused")
    func nearMiss() async throws {
        let signer = try await TokenSigner(loaded: try SigningKeyStore(directory: keysDirectory()).load(algorithm: .es256, now: now))
        let token = try await signer.sign(accessToken: sampleClaims(now: now))
        _ = await signer.verifyAccessToken(token, issuer: nil, audiences: nil, now: now)
        var bytes = Array(token.utf8)
        let last = bytes.count - 3
        bytes[last] = bytes[last] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        let altered = String(decoding: bytes, as: UTF8.self)
        #expect(rejection(await signer.verifyAccessToken(altered, issuer: nil, audiences: nil, now: now)) == .malformedOrBadSignature)
        #expect(signer.verified.count == 1, "only tokens whose signature verified are kept")
    }

    @Test("another signer (other keys) has its own table: a token remembered by one is not accepted by the other")
    func perSigner() async throws {
        let a = try await TokenSigner(loaded: try SigningKeyStore(directory: keysDirectory()).load(algorithm: .es256, now: now))
        let b = try await TokenSigner(loaded: try SigningKeyStore(directory: keysDirectory()).load(algorithm: .es256, now: now))
        let token = try await a.sign(accessToken: sampleClaims(now: now))
        _ = await a.verifyAccessToken(token, issuer: nil, audiences: nil, now: now)
        #expect(rejection(await b.verifyAccessToken(token, issuer: nil, audiences: nil, now: now)) == .malformedOrBadSignature)
    }

    @Test("the table holds at most its capacity: one entry dropped for each added when full")
    func bounded() {
        let table = VerifiedAccessTokens(capacity: 3)
        let claims = sampleClaims(now: now)
        for index in 0..<10 { table.remember("token-\(index)", claims) }
        #expect(table.count == 3)
        #expect(table.claims(of: "token-9") == claims, "the newest is kept")
        table.remember("token-9", claims)
        #expect(table.count == 3, "remembering a kept token again drops nothing")
    }
}
