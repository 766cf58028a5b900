import Crypto
public import Foundation
import PortcullisAPI

/// Seals small values that travel through a browser (the pending authorization request in the sign-in
/// form, CSRF tokens): `base64url(payload).base64url(HMAC-SHA-256)`. Tamper-evident, not secret — nothing
/// sealed here may be confidential. Every node derives the same key from the shared credential pepper.
public struct PageSealer: Sendable {
    private let key: SymmetricKey
    private let privateKey: SymmetricKey

    public init(credentials: CredentialHasher) {
        self.key = credentials.derivedKey(purpose: "page-seal-v1")
        self.privateKey = credentials.derivedKey(purpose: "page-private-v1")
    }

    /// Seals and encrypts (ChaCha20-Poly1305): for a value the browser must carry but not read, such as the
    /// second factor step (which may hold a secret being registered).
    public func sealPrivately(_ payload: Data) -> String {
        guard let box = try? ChaChaPoly.seal(payload, using: privateKey) else { return "" }
        return Base64URL.encode(Array(box.combined))
    }

    /// The payload, when `sealed` is intact.
    public func openPrivately(_ sealed: String) -> Data? {
        guard let bytes = Base64URL.decode(sealed), let box = try? ChaChaPoly.SealedBox(combined: bytes),
            let payload = try? ChaChaPoly.open(box, using: privateKey)
        else { return nil }
        return payload
    }

    public func seal(_ payload: Data) -> String {
        Base64URL.encode(Array(payload)) + "." + Base64URL.encode(Array(HMAC<SHA256>.authenticationCode(for: payload, using: key)))
    }

    /// The payload, when `sealed` is intact.
    public func open(_ sealed: String) -> Data? {
        let parts = sealed.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let payload = Base64URL.decode(String(parts[0])), let tag = Base64URL.decode(String(parts[1])),
            HMAC<SHA256>.isValidAuthenticationCode(tag, authenticating: payload, using: key)
        else { return nil }
        return payload
    }

    /// A CSRF token bound to a browser's `portcullis_csrf` cookie value and to a form's purpose.
    public func csrfToken(cookie: String, purpose: String) -> String {
        Base64URL.encode(Array(HMAC<SHA256>.authenticationCode(for: Data("\(purpose):\(cookie)".utf8), using: key)))
    }

    public func checkCSRF(_ token: String, cookie: String, purpose: String) -> Bool {
        CredentialHasher.constantTimeEquals(Array(csrfToken(cookie: cookie, purpose: purpose).utf8), Array(token.utf8))
    }
}
