public import Crypto
public import Foundation
import PortcullisAPI
import SwiftASN1
public import X509

/// A certificate authority of its own for attestation tests (PROTOCOL §12.1): a vendor's attestation root that issues
/// authenticators' attestation certificates, and a FIDO metadata root that signs metadata BLOBs. WebDriver's virtual
/// authenticator takes no attestation key, so the packed `x5c` paths are built by hand with `SoftwareAuthenticator`.
public struct AttestationCA: Sendable {
    public let key: P256.Signing.PrivateKey
    public let certificate: Certificate
    let name: DistinguishedName

    public init(name commonName: String = "Test attestation root", notValidAfter: Date = Date().addingTimeInterval(365 * 86400)) throws {
        key = P256.Signing.PrivateKey()
        name = try DistinguishedName {
            OrganizationName("Test authenticators")
            CommonName(commonName)
        }
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
            Critical(KeyUsage(keyCertSign: true, cRLSign: true))
        }
        certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: Date().addingTimeInterval(-3600), notValidAfter: notValidAfter, issuer: name, subject: name,
            signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions, issuerPrivateKey: Certificate.PrivateKey(key))
    }

    public var der: [UInt8] { Self.der(certificate) }
    public var pem: String { (try? certificate.serializeAsPEM().pemString) ?? "" }

    /// An attestation certificate for `key` (WebAuthn L3 §8.2.1: v3, OU "Authenticator Attestation", not a CA, the
    /// AAGUID extension when given), issued by this CA.
    public func attestationCertificate(
        key: P256.Signing.PrivateKey, unit: String = "Authenticator Attestation", isCA: Bool = false, aaguid: [UInt8]? = nil
    ) throws -> [UInt8] {
        let subject = try DistinguishedName {
            CountryName("US")
            OrganizationName("Test authenticators")
            OrganizationalUnitName(unit)
            CommonName("Test authenticator")
        }
        let extensions = try Certificate.Extensions {
            Critical(isCA ? BasicConstraints.isCertificateAuthority(maxPathLength: nil) : BasicConstraints.notCertificateAuthority)
            if let aaguid {
                Certificate.Extension(oid: [1, 3, 6, 1, 4, 1, 45724, 1, 1, 4], critical: false, value: [0x04, UInt8(aaguid.count)] + aaguid[...])
            }
        }
        return Self.der(try issue(subject: subject, key: key, extensions: extensions))
    }

    /// A FIDO metadata BLOB (MDS3: a JWS, ES256, its `x5c` a signing certificate this CA issued) with these entries.
    /// `tamper` changes the payload after signing.
    public func metadataBLOB(entries: [[String: Any]], number: Int = 1, nextUpdate: String = "2099-01-01", tamper: Bool = false) throws -> String {
        let signer = P256.Signing.PrivateKey()
        let subject = try DistinguishedName {
            OrganizationName("Test metadata service")
            CommonName("Test metadata BLOB signer")
        }
        let certificate = try issue(
            subject: subject, key: signer, extensions: try Certificate.Extensions { Critical(BasicConstraints.notCertificateAuthority) })
        let header = try JSONSerialization.data(
            withJSONObject: ["alg": "ES256", "typ": "JWT", "x5c": [Data(Self.der(certificate)).base64EncodedString()]], options: [.sortedKeys])
        let payload = try JSONSerialization.data(
            withJSONObject: ["legalHeader": "Test", "no": number, "nextUpdate": nextUpdate, "entries": entries], options: [.sortedKeys])
        let input = Base64URL.encode(header) + "." + Base64URL.encode(payload)
        let signature = try signer.signature(for: Data(input.utf8)).rawRepresentation
        let signedPayload =
            tamper
            ? try JSONSerialization.data(
                withJSONObject: ["legalHeader": "Test", "no": number + 1, "nextUpdate": nextUpdate, "entries": entries], options: [.sortedKeys]) : payload
        return Base64URL.encode(header) + "." + Base64URL.encode(signedPayload) + "." + Base64URL.encode(signature)
    }

    /// One BLOB entry for an authenticator model whose attestation root is `root`.
    public static func metadataEntry(aaguid: String, description: String, root: AttestationCA, statuses: [String] = ["FIDO_CERTIFIED"]) -> [String: Any] {
        [
            "aaguid": aaguid,
            "metadataStatement": [
                "aaguid": aaguid, "description": description, "attestationTypes": ["basic_full"],
                "attestationRootCertificates": [Data(root.der).base64EncodedString()],
            ],
            "statusReports": statuses.map { ["status": $0, "effectiveDate": "2024-01-01"] },
            "timeOfLastStatusChange": "2024-01-01",
        ]
    }

    func issue(subject: DistinguishedName, key: P256.Signing.PrivateKey, extensions: Certificate.Extensions) throws -> Certificate {
        try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: Date().addingTimeInterval(-60), notValidAfter: Date().addingTimeInterval(86400), issuer: name, subject: subject,
            signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions, issuerPrivateKey: Certificate.PrivateKey(self.key))
    }

    static func der(_ certificate: Certificate) -> [UInt8] {
        var serializer = DER.Serializer()
        try? serializer.serialize(certificate)
        return serializer.serializedBytes
    }
}
