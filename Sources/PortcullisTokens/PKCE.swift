import Crypto
import Foundation
import PortcullisAPI
import PortcullisCore

/// Proof Key for Code Exchange (RFC 7636), S256 only.
public enum PKCE {
    /// The S256 challenge of a verifier: base64url(SHA-256(ASCII(verifier))), no padding.
    public static func challenge(of verifier: String) -> String {
        Base64URL.encode(Array(SHA256.hash(data: Data(verifier.utf8))))
    }

    /// Whether `verifier` is well formed and hashes to `challenge` (compared in constant time).
    public static func matches(verifier: String, challenge: String) -> Bool {
        guard PKCEChallenge.isWellFormedVerifier(verifier) else { return false }
        return CredentialHasher.constantTimeEquals(Array(self.challenge(of: verifier).utf8), Array(challenge.utf8))
    }
}
