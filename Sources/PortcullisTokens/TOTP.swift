import Crypto
public import Foundation
import PortcullisCore

/// Time-based one-time passwords (RFC 6238 over RFC 4226's HOTP): the second factor of PROTOCOL §10.
/// Portcullis issues HMAC-SHA-1, 6 digits, 30-second steps — what every authenticator app supports — and
/// accepts the step before and after the current one (clock drift). The other hashes exist for RFC 6238's
/// own test vectors.
public enum TOTP {
    public enum Algorithm: Sendable {
        case sha1, sha256, sha512
    }

    public static let period: Int64 = 30
    public static let digits = 6
    /// 160 bits, as RFC 4226 §4 recommends.
    public static let secretLength = 20

    /// The time step of an instant (RFC 6238 §4.2, T0 = 0).
    public static func step(at time: Date) -> Int64 {
        Int64((time.timeIntervalSince1970 / Double(period)).rounded(.down))
    }

    /// The code of one step (RFC 4226 §5.3: dynamic truncation, then modulo 10^digits, zero-padded).
    public static func code(secret: [UInt8], step: Int64, digits: Int = digits, algorithm: Algorithm = .sha1) -> String {
        var counter = UInt64(bitPattern: step).bigEndian
        let message = withUnsafeBytes(of: &counter) { Data($0) }
        let key = SymmetricKey(data: secret)
        let mac: [UInt8]
        switch algorithm {
        case .sha1: mac = Array(HMAC<Insecure.SHA1>.authenticationCode(for: message, using: key))
        case .sha256: mac = Array(HMAC<SHA256>.authenticationCode(for: message, using: key))
        case .sha512: mac = Array(HMAC<SHA512>.authenticationCode(for: message, using: key))
        }
        let offset = Int(mac[mac.count - 1] & 0x0f)
        let binary = (UInt32(mac[offset] & 0x7f) << 24) | (UInt32(mac[offset + 1]) << 16) | (UInt32(mac[offset + 2]) << 8) | UInt32(mac[offset + 3])
        var modulus: UInt32 = 1
        for _ in 0..<digits { modulus *= 10 }
        let value = String(binary % modulus)
        return String(repeating: "0", count: max(0, digits - value.count)) + value
    }

    /// The step whose code `typed` is, among the current step and `window` steps on either side; `nil` when
    /// none matches. Spaces in what the user typed are ignored; anything but digits never matches. Every
    /// candidate is compared in constant time.
    public static func matchingStep(_ typed: String, secret: [UInt8], at time: Date, window: Int64 = 1) -> Int64? {
        let code = typed.filter { !$0.isWhitespace }
        guard code.count == digits, code.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        let current = step(at: time)
        var found: Int64?
        for candidate in (current - window)...(current + window) {
            if CredentialHasher.constantTimeEquals(Array(self.code(secret: secret, step: candidate).utf8), Array(code.utf8)), found == nil {
                found = candidate
            }
        }
        return found
    }

    /// A fresh secret from the system's secure generator.
    public static func newSecret() -> [UInt8] {
        SymmetricKey(size: .init(bitCount: secretLength * 8)).withUnsafeBytes { Array($0) }
    }

    /// The `otpauth://` URI authenticator apps read (Google's Key Uri Format), issuer and label as PROTOCOL §10.
    public static func provisioningURI(secret: [UInt8], account: String, issuer: String = "Portcullis") -> String {
        var allowed = CharacterSet()
        allowed.insert(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~@")
        let label = "\(issuer):\(account)".addingPercentEncoding(withAllowedCharacters: allowed.union(CharacterSet(charactersIn: ":"))) ?? account
        let issuerValue = issuer.addingPercentEncoding(withAllowedCharacters: allowed) ?? issuer
        return "otpauth://totp/\(label)?secret=\(Base32.encode(secret))&issuer=\(issuerValue)&algorithm=SHA1&digits=\(digits)&period=\(period)"
    }
}
