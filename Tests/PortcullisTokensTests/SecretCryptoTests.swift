import Crypto
import Foundation
import PortcullisAPI
import PortcullisCore
import PortcullisTesting
import PortcullisTokens
import SwiftASN1
import Testing
import X509

@Suite("secrets: HPKE sealing, material at rest, CSR checks (PROTOCOL §8)")
struct SecretCryptoTests {
    /// RFC 9180's test vector for exactly this suite: base mode, DHKEM(P-256, HKDF-SHA256) (0x0010),
    /// HKDF-SHA256 (0x0001), AES-256-GCM (0x0002) — from the CFRG's test-vectors.json.
    @Test("the RFC 9180 vector for DHKEM(P-256, HKDF-SHA256), HKDF-SHA256, AES-256-GCM opens with our suite")
    func rfc9180Vector() throws {
        let skRm = try P256.KeyAgreement.PrivateKey(rawRepresentation: hexBytes("317f915db7bc629c48fe765587897e01e282d3e8445f79f27f65d031a88082b2"))
        #expect(
            skRm.publicKey.x963Representation
                == hexBytes(
                    "04abc7e49a4c6b3566d77d0304addc6ed0e98512ffccf505e6a8e3eb25c685136f853148544876de76c0f2ef99cdc3a05ccf5ded7860c7c021238f9e2073d2356c"))
        let enc = hexBytes("04c06b4f6bebc7bb495cb797ab753f911aff80aefb86fd8b6fcc35525f3ab5f03e0b21bd31a86c6048af3cb2d98e0d3bf01da5cc4c39ff5370d331a4f1f7d5a4e0")
        var recipient = try HPKE.Recipient(
            privateKey: skRm, ciphersuite: SecretSealing.ciphersuite,
            info: hexBytes("4f6465206f6e2061204772656369616e2055726e"), encapsulatedKey: enc)
        let pt = hexBytes("4265617574792069732074727574682c20747275746820626561757479")
        let first = try recipient.open(
            hexBytes("58c61a45059d0c5704560e9d88b564a8b63f1364b8d1fcb3c4c6ddc1d291742465e902cd216f8908da49f8f96f"),
            authenticating: hexBytes("436f756e742d30"))
        #expect(first == pt)
        let second = try recipient.open(
            hexBytes("b4e7c90d1dd62cb563694956eb517ab55d5e7d1f6366a0066c04ababaa444dbaf60a30d7bb7d3e91b969762dee"),
            authenticating: hexBytes("436f756e742d31"))
        #expect(second == pt)
    }

    @Test("sealed to a JWK opens with its private key and that info only")
    func sealing() throws {
        let key = P256.KeyAgreement.PrivateKey()
        let jwk = SecretSealing.jwk(key.publicKey)
        let info = SealedSecretResponse.info(enrollmentId: "e1", identifier: "com.contoso.smtp", version: "7")
        #expect(String(decoding: info, as: UTF8.self) == "portcullis-secret-v1:e1:com.contoso.smtp:7")
        let sealed = try SecretSealing.seal(Data(#"{"password":"p"}"#.utf8), to: try SecretSealing.publicKey(jwk), info: info)
        #expect(try SecretSealing.open(sealed, with: key, info: info) == Data(#"{"password":"p"}"#.utf8))
        #expect(throws: (any Error).self) { try SecretSealing.open(sealed, with: P256.KeyAgreement.PrivateKey(), info: info) }
        #expect(throws: (any Error).self) {
            try SecretSealing.open(sealed, with: key, info: SealedSecretResponse.info(enrollmentId: "e2", identifier: "com.contoso.smtp", version: "7"))
        }
        // A JWK that is no P-256 point, or not EC P-256 at all.
        var off = jwk
        off.y = jwk.x
        #expect(throws: ValidationError.self) { try SecretSealing.publicKey(off) }
        var curve = jwk
        curve.crv = "P-384"
        #expect(throws: ValidationError.self) { try SecretSealing.publicKey(curve) }
    }

    @Test("material at rest opens only as the secret, policy, tenant and version it was sealed as")
    func atRest() throws {
        let credentials = CredentialHasher(pepper: Data(repeating: 7, count: 32))
        let box = SecretMaterialBox(credentials: credentials)
        let sealed = try box.seal(Data("material".utf8), tenantId: "t", policyId: "p", identifier: "com.x", version: "3")
        let stored = StoredSecretMaterial(
            policyId: "p", identifier: "com.x", kind: .password, version: "3", fingerprint: "f", notAfter: nil, updatedAt: Date(), sealed: sealed)
        #expect(box.open(stored, tenantId: "t") == Data("material".utf8))
        #expect(box.open(stored, tenantId: "u") == nil)
        var replayed = stored
        replayed.version = "4"
        #expect(box.open(replayed, tenantId: "t") == nil)
        var moved = stored
        moved.identifier = "com.y"
        #expect(box.open(moved, tenantId: "t") == nil)
        #expect(SecretMaterialBox(credentials: CredentialHasher(pepper: Data(repeating: 8, count: 32))).open(stored, tenantId: "t") == nil, "another Keys/")
        #expect(box.passwordFingerprint("a") == box.passwordFingerprint("a") && box.passwordFingerprint("a") != box.passwordFingerprint("b"))
    }

    static func csr(_ key: P256.Signing.PrivateKey, name: String = "device") throws -> String {
        let request = try CertificateSigningRequest(
            version: .v1, subject: try DistinguishedName { CommonName(name) }, privateKey: Certificate.PrivateKey(key),
            attributes: CertificateSigningRequest.Attributes(),
            signatureAlgorithm: .ecdsaWithSHA256)
        return try request.serializeAsPEM().pemString
    }

    @Test("CSR checks: the enrollment's key only, ECDSA P-256 with SHA-256, a valid signature; the leaf chains to the tenant CA")
    func csrChecks() throws {
        let appKey = P256.KeyAgreement.PrivateKey()
        let signing = try P256.Signing.PrivateKey(rawRepresentation: appKey.rawRepresentation)
        let verified = try IssuingAuthority.verifiedRequest(try Self.csr(signing), appKey: appKey.publicKey)

        func refused(_ pem: String) -> String? {
            do {
                _ = try IssuingAuthority.verifiedRequest(pem, appKey: appKey.publicKey)
                return nil
            } catch let error as ValidationError {
                return error.problems.first.map { "\($0.pointer) \($0.message)" }
            } catch { return "\(error)" }
        }
        #expect(
            refused(try Self.csr(P256.Signing.PrivateKey()))?.hasPrefix("/csr must request a certificate for the enrollment's appKey") == true, "another key")
        let p384 = try CertificateSigningRequest(
            version: .v1, subject: try DistinguishedName { CommonName("x") }, privateKey: Certificate.PrivateKey(P384.Signing.PrivateKey()),
            attributes: CertificateSigningRequest.Attributes(), signatureAlgorithm: .ecdsaWithSHA384)
        #expect(refused(try p384.serializeAsPEM().pemString)?.contains("ECDSA and SHA-256") == true, "wrong algorithm")
        #expect(refused("-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n")?.hasPrefix("/csr must be a PEM") == true)
        // A request for the right key whose signature was made by another: the bytes of a valid request, re-signed.
        let forged = try CertificateSigningRequest(
            version: verified.version, subject: verified.subject, publicKey: verified.publicKey, attributes: verified.attributes,
            signatureAlgorithm: .ecdsaWithSHA256,
            signature: try Certificate.PrivateKey(P256.Signing.PrivateKey()).sign(bytes: [1, 2, 3], signatureAlgorithm: .ecdsaWithSHA256))
        #expect(refused(try forged.serializeAsPEM().pemString)?.contains("not signed by the key") == true)

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ca-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let tenant = Tenant(id: "7d3c1a4e-1b2c-4d5e-8f90-a1b2c3d4e5f6", domain: "contoso.example", displayName: "Contoso")
        let authority = IssuingAuthority(keysDirectory: directory)
        let now = Date()
        let issued = try authority.issue(
            verified, tenant: tenant, userPrincipalName: "alice@contoso.example", userId: "u1", enrollmentId: "e1", validityDays: 7, now: now)
        let chain = try PEMDocument.parseMultiple(pemString: issued.certificatesPem).map { try Certificate(pemDocument: $0) }
        let ca = try Certificate(pemEncoded: try authority.certificatePEM(tenant: tenant, now: now))
        #expect(chain.count == 2 && chain[1] == ca)
        #expect(ca.publicKey.isValidSignature(chain[0].signature, for: chain[0]), "the leaf is signed by the CA")
        #expect(chain[0].publicKey == verified.publicKey)
        #expect(abs(chain[0].notValidAfter.timeIntervalSince(now) - 7 * 86400) < 5)
        #expect(
            "\(chain[0].subject)".contains("alice@contoso.example") && "\(chain[0].subject)".contains("e1")
                && "\(chain[0].subject)".contains(tenant.id.rawValue))
        // A second authority over the same directory (another node) loads the same CA; the key file is 0600.
        #expect(
            try IssuingAuthority(keysDirectory: directory).certificatePEM(tenant: tenant, now: now) == (try authority.certificatePEM(tenant: tenant, now: now)))
        let mode = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent("ca/\(tenant.id).key.pem").path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }
}
