public import Foundation
import PortcullisAPI
public import PortcullisVocabulary
import Synchronization

/// The key an app instance proves possession of for DPoP-bound tokens (PROTOCOL §15, RFC 9449): EC P-256, ES256. On
/// Apple platforms implement it over CryptoKit's `SecureEnclave.P256.Signing.PrivateKey`, so that the key (and so the
/// tokens bound to it) cannot leave the device; `FileInstanceKeyStore` (PortcullisClientKeys) keeps one in a 0600 file.
public protocol ProofKey: Sendable {
    /// The public key's coordinates.
    func proofPublicKey() async throws -> AppKeyJWK
    /// An ES256 signature of `message`: the 64-byte `r || s` of ECDSA P-256 over SHA-256.
    func signProof(_ message: Data) async throws -> Data
}

/// Makes DPoP proofs with a `ProofKey` and remembers the server's latest nonce (RFC 9449 §8), for the token endpoint and
/// for resources.
public final class DPoPProofMaker: Sendable {
    public let key: any ProofKey
    private let nonces = Mutex<[String: String]>([:])

    public init(key: any ProofKey) {
        self.key = key
    }

    /// A proof for `method` `url` (query and fragment are not part of `htu`), with `ath` when it goes with an access token.
    public func proof(method: String, url: URL, accessToken: String? = nil, now: Date = Date()) async throws -> String {
        let jwk = try await key.proofPublicKey()
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        components?.query = nil
        components?.fragment = nil
        let htu = components?.string ?? url.absoluteString
        let header = #"{"alg":"ES256","jwk":{"crv":"P-256","kty":"EC","x":"\#(jwk.x)","y":"\#(jwk.y)"},"typ":"dpop+jwt"}"#
        var claims: [String: Any] = ["jti": UUID().identifierText, "htm": method, "htu": htu, "iat": Int(now.timeIntervalSince1970)]
        if let nonce = nonce(for: url) { claims["nonce"] = nonce }
        if let accessToken { claims["ath"] = Base64URL.encode(SHA256Digest.hash(Array(accessToken.utf8))) }
        let payload = try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys, .withoutEscapingSlashes])
        let input = Base64URL.encode(Data(header.utf8)) + "." + Base64URL.encode(payload)
        let signature = try await key.signProof(Data(input.utf8))
        guard signature.count == 64 else { throw PortcullisClientError.transport("the proof key's signature is not a 64-byte ES256 signature") }
        return input + "." + Base64URL.encode(signature)
    }

    /// The `Authorization` and `DPoP` headers for calling a resource with `result`'s token.
    public func resourceHeaders(for result: AuthenticationResult, method: String, url: URL) async throws -> [String: String] {
        guard result.tokenType == TokenResponse.dpop else { return ["Authorization": "Bearer \(result.accessToken)"] }
        return ["Authorization": "DPoP \(result.accessToken)", "DPoP": try await proof(method: method, url: url, accessToken: result.accessToken)]
    }

    /// The thumbprint of the key (RFC 7638), as bound tokens carry it in `cnf.jkt`.
    public func thumbprint() async throws -> String {
        let jwk = try await key.proofPublicKey()
        return Base64URL.encode(SHA256Digest.hash(Array(#"{"crv":"P-256","kty":"EC","x":"\#(jwk.x)","y":"\#(jwk.y)"}"#.utf8)))
    }

    /// Remembers a server's `DPoP-Nonce` for its origin.
    func remember(nonce: String?, for url: URL) {
        guard let nonce, let origin = Self.origin(url) else { return }
        nonces.withLock { $0[origin] = nonce }
    }

    func nonce(for url: URL) -> String? {
        guard let origin = Self.origin(url) else { return nil }
        return nonces.withLock { $0[origin] }
    }

    private static func origin(_ url: URL) -> String? {
        guard let scheme = url.scheme, let host = url.host else { return nil }
        return "\(scheme)://\(host):\(url.port ?? -1)"
    }
}
