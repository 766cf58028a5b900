import Crypto
import CryptoExtras
public import Foundation
import PortcullisAPI

/// A DPoP proof key for tests, able to make proofs that are right and proofs that are wrong in one chosen way
/// (PROTOCOL §15). Written from RFC 9449 §4.2, not from the server's verifier.
public struct DPoPKey: Sendable {
    public enum Kind: Sendable {
        /// `rsa1024` is too short for a proof (the refusal's test).
        case p256, rsa2048, rsa1024, ed25519
    }

    private enum Secret: Sendable {
        case p256(P256.Signing.PrivateKey)
        case rsa(_RSA.Signing.PrivateKey)
        case ed25519(Curve25519.Signing.PrivateKey)
    }

    private let secret: Secret
    /// The public JWK's members (`[name: value]`), in RFC 7638 order of the required ones.
    public let publicJWK: [(String, String)]

    public init(_ kind: Kind = .p256) throws {
        switch kind {
        case .p256:
            let key = P256.Signing.PrivateKey()
            let raw = key.publicKey.rawRepresentation
            secret = .p256(key)
            publicJWK = [("crv", "P-256"), ("kty", "EC"), ("x", Base64URL.encode(raw.prefix(32))), ("y", Base64URL.encode(raw.suffix(32)))]
        case .rsa2048, .rsa1024:
            let key = try kind == .rsa2048 ? _RSA.Signing.PrivateKey(keySize: .bits2048) : _RSA.Signing.PrivateKey(unsafeKeySize: .init(bitCount: 1024))
            let primitives = try key.publicKey.getKeyPrimitives()
            secret = .rsa(key)
            publicJWK = [("e", Base64URL.encode(primitives.publicExponent)), ("kty", "RSA"), ("n", Base64URL.encode(primitives.modulus))]
        case .ed25519:
            let key = Curve25519.Signing.PrivateKey()
            secret = .ed25519(key)
            publicJWK = [("crv", "Ed25519"), ("kty", "OKP"), ("x", Base64URL.encode(key.publicKey.rawRepresentation))]
        }
    }

    public var algorithm: String {
        switch secret {
        case .p256: "ES256"
        case .rsa: "RS256"
        case .ed25519: "EdDSA"
        }
    }

    /// RFC 7638: SHA-256 over the required members in order, without whitespace.
    public var thumbprint: String {
        let json = "{" + publicJWK.map { "\"\($0.0)\":\"\($0.1)\"" }.joined(separator: ",") + "}"
        return Base64URL.encode(SHA256.hash(data: Data(json.utf8)))
    }

    /// A proof for `method` `url` at `issuedAt`. `header` and `claims` replace or add members (a value of `NSNull()`
    /// removes one) so that a test can break exactly one thing.
    public func proof(
        method: String = "POST", url: String, issuedAt: Date, jti: String = UUID().uuidString, nonce: String? = nil, accessToken: String? = nil,
        header: [String: Any] = [:], claims: [String: Any] = [:], signWith other: DPoPKey? = nil
    ) throws -> String {
        var jwk: [String: Any] = [:]
        for (name, value) in publicJWK { jwk[name] = value }
        var head: [String: Any] = ["typ": "dpop+jwt", "alg": algorithm, "jwk": jwk]
        for (name, value) in header { head[name] = value is NSNull ? nil : value }
        var body: [String: Any] = ["jti": jti, "htm": method, "htu": url, "iat": Int(issuedAt.timeIntervalSince1970)]
        if let nonce { body["nonce"] = nonce }
        if let accessToken { body["ath"] = Base64URL.encode(SHA256.hash(data: Data(accessToken.utf8))) }
        for (name, value) in claims { body[name] = value is NSNull ? nil : value }
        let input =
            Base64URL.encode(try JSONSerialization.data(withJSONObject: head, options: [.sortedKeys])) + "."
            + Base64URL.encode(try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys]))
        return input + "." + Base64URL.encode(try (other ?? self).sign(Data(input.utf8)))
    }

    func sign(_ data: Data) throws -> Data {
        switch secret {
        case .p256(let key): try key.signature(for: data).rawRepresentation
        case .rsa(let key): try key.signature(for: data, padding: .insecurePKCS1v1_5).rawRepresentation
        case .ed25519(let key): try key.signature(for: data)
        }
    }

    /// The key as a private JWK (public members and `d`), for the "private key in the proof" refusal.
    public var privateJWK: [String: Any] {
        var jwk: [String: Any] = [:]
        for (name, value) in publicJWK { jwk[name] = value }
        switch secret {
        case .p256(let key): jwk["d"] = Base64URL.encode(key.rawRepresentation)
        case .rsa: jwk["d"] = "AQAB"
        case .ed25519(let key): jwk["d"] = Base64URL.encode(key.rawRepresentation)
        }
        return jwk
    }
}
