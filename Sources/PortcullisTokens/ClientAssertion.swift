import Crypto
public import Foundation
public import PortcullisCore
import SwiftASN1
public import X509
import _CryptoExtras

/// An RFC 7523 client assertion (PROTOCOL §21): a JWT a confidential client signs with the private key of one of its
/// registered certificates. Read here, not yet trusted: `KeyCredential.check` (Core) decides its claims, `isSigned(by:)`
/// its signature.
public struct ClientAssertion: Sendable {
    public let algorithm: String
    /// The header's certificate names: `x5t` (SHA-1 thumbprint, base64url), `x5t#S256`, `kid`.
    public let x5t: String?
    public let x5tS256: String?
    public let kid: String?
    public let claims: JSONValue
    /// The assertion's own SHA-256 (base64url): "the very same assertion" is this.
    public let digest: String
    let signingInput: [UInt8]
    let signature: [UInt8]

    /// The algorithms a client may sign with (PROTOCOL §21).
    public static let algorithms: Set<String> = ["RS256", "PS256", "ES256"]
    /// The longest assertion read.
    public static let maximumBytes = 16 * 1024

    public static func read(_ token: String) -> Result<ClientAssertion, TokenError> {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard token.utf8.count <= maximumBytes, parts.count == 3, let headerData = Base64URL.decode(String(parts[0])),
            let payloadData = Base64URL.decode(String(parts[1])), let signature = Base64URL.decode(String(parts[2])),
            let header = JSONValue.parse(headerData)?.objectValue, let payload = JSONValue.parse(payloadData), payload.objectValue != nil
        else { return .failure(.malformedClientAssertion("The client assertion is not a signed JWT.")) }
        guard let algorithm = header["alg"]?.stringValue, algorithms.contains(algorithm) else {
            return .failure(.malformedClientAssertion("The client assertion must be signed with RS256, PS256 or ES256."))
        }
        return .success(
            ClientAssertion(
                algorithm: algorithm, x5t: header["x5t"]?.stringValue, x5tS256: header["x5t#S256"]?.stringValue, kid: header["kid"]?.stringValue,
                claims: payload, digest: digest(of: token), signingInput: Array("\(parts[0]).\(parts[1])".utf8),
                signature: Array(signature)))
    }

    /// An assertion's own SHA-256, base64url: the very same assertion is this.
    public static func digest(of token: String) -> String { Base64URL.encode(SHA256.hash(data: Data(token.utf8))) }

    /// The application's certificate the header names (by SHA-1 or SHA-256 thumbprint, or a `kid` that is either in hex),
    /// or `nil`.
    public func certificate(among credentials: [KeyCredential]) -> KeyCredential? {
        credentials.first { credential in
            if let x5t, let bytes = Base64URL.decode(x5t), Hex.encode(bytes) == credential.thumbprint { return true }
            if let x5tS256, let bytes = Base64URL.decode(x5tS256), Hex.encode(bytes) == credential.thumbprintSHA256 { return true }
            if let kid, kid.equalsIgnoringCase(credential.thumbprint) || kid.equalsIgnoringCase(credential.thumbprintSHA256) { return true }
            return false
        }
    }

    /// A registered certificate's public key (`nil` when what is stored does not parse).
    public static func publicKey(of credential: KeyCredential) -> Certificate.PublicKey? {
        guard let der = Data(base64Encoded: credential.key), let certificate = try? Certificate(derEncoded: Array(der)) else { return nil }
        return certificate.publicKey
    }

    /// Whether the assertion is signed by `key` (a registered certificate's) with its algorithm (RSA keys of at least
    /// 2048 bits).
    public func isSigned(by key: Certificate.PublicKey) -> Bool {
        JWSSignature.isValid(signature, for: signingInput, algorithm: algorithm, key: key)
    }
}

/// A JWS signature checked with a certificate's public key: RS256, PS256 (RSA ≥ 2048 bits), ES256.
enum JWSSignature {
    static func isValid(_ signature: [UInt8], for signingInput: [UInt8], algorithm: String, key: Certificate.PublicKey) -> Bool {
        switch algorithm {
        case "RS256", "PS256":
            guard let rsa = _RSA.Signing.PublicKey(key), rsa.keySizeInBits >= 2048 else { return false }
            return rsa.isValidSignature(
                _RSA.Signing.RSASignature(rawRepresentation: signature), for: signingInput, padding: algorithm == "PS256" ? .PSS : .insecurePKCS1v1_5)
        case "ES256":
            guard let p256 = P256.Signing.PublicKey(key), let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
            return p256.isValidSignature(ecdsa, for: signingInput)
        default:
            return false
        }
    }
}

extension KeyCredential {
    /// A certificate an admin registers (PEM or base64 DER), read into its credential: the thumbprints, the validity, its
    /// key (RSA of at least 2048 bits, or P-256). A private key is refused, never kept.
    public static func reading(_ text: String, keyId: RecordID, displayName: String?) -> Result<KeyCredential, KeyCredentialProblem> {
        guard !text.contains("PRIVATE KEY") else {
            return .failure(.init("is a private key: register the certificate only (its private key stays with the client)."))
        }
        let der: [UInt8]
        if text.contains("-----BEGIN") {
            guard let pem = try? PEMDocument(pemString: text), pem.discriminator == "CERTIFICATE" else {
                return .failure(.init("is not a PEM certificate."))
            }
            der = pem.derBytes
        } else {
            guard let bytes = Data(base64Encoded: text.filter { !$0.isWhitespace }) else { return .failure(.init("is not a PEM or base64 DER certificate.")) }
            der = Array(bytes)
        }
        guard let certificate = try? Certificate(derEncoded: der) else { return .failure(.init("is not an X.509 certificate.")) }
        if let rsa = _RSA.Signing.PublicKey(certificate.publicKey) {
            guard rsa.keySizeInBits >= 2048 else { return .failure(.init("holds an RSA key of fewer than 2048 bits.")) }
        } else if P256.Signing.PublicKey(certificate.publicKey) == nil {
            return .failure(.init("holds a key other than RSA (2048 bits or more) or P-256."))
        }
        return .success(
            KeyCredential(
                keyId: keyId, displayName: displayName ?? Self.subject(of: certificate), thumbprint: Hex.encode(Insecure.SHA1.hash(data: der)),
                thumbprintSHA256: Hex.encode(SHA256.hash(data: der)), key: Data(der).base64EncodedString(), startDateTime: certificate.notValidBefore,
                endDateTime: certificate.notValidAfter))
    }

    static func subject(of certificate: Certificate) -> String {
        let name = certificate.subject.description
        return name.count <= 128 ? name : String(name.prefix(128))
    }
}

/// Upper-case hexadecimal, as Entra shows thumbprints.
enum Hex {
    static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
