public import Crypto
public import Foundation
public import PortcullisAPI
public import PortcullisCore

/// Secret material at rest (PROTOCOL §8.1): AES-256-GCM under a key-encryption key derived from the credential
/// pepper in `Keys/` (a copy of the database alone reveals no secret; every node sharing `Keys/` derives the
/// same key), with the tenant, policy, identifier and version as associated data — sealed material moved to
/// another secret, policy or tenant, or replayed as another version, does not open.
public struct SecretMaterialBox: Sendable {
    private let key: SymmetricKey

    public init(credentials: CredentialHasher) {
        self.key = credentials.derivedKey(purpose: "app-secrets-kek-v1")
        self.fingerprintKey = credentials.derivedKey(purpose: "app-secrets-fingerprint-v1")
    }

    private let fingerprintKey: SymmetricKey

    static func associatedData(tenantId: TenantID, policyId: PolicyID, identifier: String, version: String) -> Data {
        Data("portcullis-app-secret|\(tenantId)|\(policyId)|\(identifier)|\(version)".utf8)
    }

    /// The sealed material, base64 (nonce, ciphertext and tag).
    public func seal(_ material: Data, tenantId: TenantID, policyId: PolicyID, identifier: String, version: String) throws -> String {
        let aad = Self.associatedData(tenantId: tenantId, policyId: policyId, identifier: identifier, version: version)
        guard let combined = try AES.GCM.seal(material, using: key, authenticating: aad).combined else { throw CryptoKitError.incorrectParameterSize }
        return combined.base64EncodedString()
    }

    /// The material, or `nil` when it does not open (another key, another secret or version, damaged).
    public func open(_ stored: StoredSecretMaterial, tenantId: TenantID) -> Data? {
        guard let combined = Data(base64Encoded: stored.sealed), let box = try? AES.GCM.SealedBox(combined: combined) else { return nil }
        let aad = Self.associatedData(tenantId: tenantId, policyId: stored.policyId, identifier: stored.identifier, version: stored.version)
        return try? AES.GCM.open(box, using: key, authenticating: aad)
    }

    /// A keyed fingerprint of a password: equal passwords compare equal, and the stored metadata cannot be
    /// tested against guesses without `Keys/`.
    public func passwordFingerprint(_ password: String) -> String {
        Self.hex(Data(HMAC<SHA256>.authenticationCode(for: Data(password.utf8), using: fingerprintKey)))
    }

    static func hex<D: Sequence>(_ bytes: D) -> String where D.Element == UInt8 {
        bytes.map { String(format: "%02x", $0) }.joined()
    }
}

/// HPKE (RFC 9180) as PROTOCOL §8.2 seals a secret to an app instance: base mode, DHKEM(P-256, HKDF-SHA256),
/// HKDF-SHA256, AES-256-GCM, empty AAD.
public enum SecretSealing {
    public static let ciphersuite = HPKE.Ciphersuite(kem: .P256_HKDF_SHA256, kdf: .HKDF_SHA256, aead: .AES_GCM_256)

    /// The public key of a JWK, or why it is not one this server seals to.
    public static func publicKey(_ jwk: AppKeyJWK) throws -> P256.KeyAgreement.PublicKey {
        func problem(_ pointer: String, _ message: String) -> ValidationError {
            ValidationError(problems: [ValidationProblem(pointer: "/appKey" + pointer, message: message)])
        }
        guard jwk.kty == "EC" else { throw problem("/kty", "must be \"EC\".") }
        guard jwk.crv == "P-256" else { throw problem("/crv", "must be \"P-256\".") }
        guard let x = Base64URL.decode(jwk.x), x.count == 32 else { throw problem("/x", "must be 32 bytes, base64url.") }
        guard let y = Base64URL.decode(jwk.y), y.count == 32 else { throw problem("/y", "must be 32 bytes, base64url.") }
        do {
            return try P256.KeyAgreement.PublicKey(x963Representation: Data([0x04]) + x + y)
        } catch {
            throw problem("", "is not a point on P-256.")
        }
    }

    /// The JWK of a P-256 public key.
    public static func jwk(_ key: P256.KeyAgreement.PublicKey) -> AppKeyJWK {
        let raw = Array(key.rawRepresentation)
        return AppKeyJWK(x: Base64URL.encode(raw[0..<32]), y: Base64URL.encode(raw[32..<64]))
    }

    public static func seal(_ plaintext: Data, to key: P256.KeyAgreement.PublicKey, info: Data) throws -> SealedSecretResponse.Sealed {
        var sender = try HPKE.Sender(recipientKey: key, ciphersuite: ciphersuite, info: info)
        let ciphertext = try sender.seal(plaintext, authenticating: Data())
        return SealedSecretResponse.Sealed(enc: Base64URL.encode(sender.encapsulatedKey), ciphertext: Base64URL.encode(ciphertext))
    }

    public static func open(_ sealed: SealedSecretResponse.Sealed, with key: P256.KeyAgreement.PrivateKey, info: Data) throws -> Data {
        guard let enc = Base64URL.decode(sealed.enc), let ciphertext = Base64URL.decode(sealed.ciphertext) else { throw CryptoKitError.incorrectParameterSize }
        var recipient = try HPKE.Recipient(privateKey: key, ciphersuite: ciphersuite, info: info, encapsulatedKey: Data(enc))
        return try recipient.open(Data(ciphertext), authenticating: Data())
    }
}
