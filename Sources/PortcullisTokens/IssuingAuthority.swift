public import Crypto
public import Foundation
public import PortcullisCore
import SwiftASN1
import Synchronization
public import X509

/// Each tenant's issuing CA for device identities (PROTOCOL §8.1): ECDSA P-256, created on first use in
/// `Keys/ca/` under the keys directory's lock (nodes sharing `Keys/` create one), never replaced. It certifies
/// keys generated on devices: an app proves its enrollment's `appKey` by signing a PKCS #10 request with it.
public final class IssuingAuthority: Sendable {
    public let directory: URL
    private let loaded = Mutex<[String: Loaded]>([:])

    struct Loaded: Sendable {
        let key: P256.Signing.PrivateKey
        let certificate: Certificate
        let pem: String
    }

    /// The CA certificate's lifetime: ten years (leaves live days; the CA outlives many rotations of them).
    public static let lifetimeDays = 3650

    public init(keysDirectory: URL) {
        self.directory = keysDirectory.appendingPathComponent("ca")
    }

    /// The tenant's CA certificate (PEM), created on first use.
    public func certificatePEM(tenant: Tenant, now: Date) throws -> String {
        try load(tenant: tenant, now: now).pem
    }

    func load(tenant: Tenant, now: Date) throws -> Loaded {
        let tenantId = tenant.id.rawValue
        if let cached = loaded.withLock({ $0[tenantId] }) { return cached }
        try PrivateFile.createDirectory(directory)
        let keyURL = directory.appendingPathComponent("\(tenantId).key.pem")
        let certificateURL = directory.appendingPathComponent("\(tenantId).cert.pem")
        var result: Loaded?
        try SigningKeyStore.withExclusiveLock(directory.appendingPathComponent(".lock")) {
            if !FileManager.default.fileExists(atPath: keyURL.path) {
                let key = P256.Signing.PrivateKey()
                let certificate = try Self.makeCA(key: key, tenant: tenant, now: now)
                let pem = try certificate.serializeAsPEM().pemString + "\n"
                try PrivateFile.write(Data(key.pemRepresentation.utf8), to: keyURL)
                try Data(pem.utf8).write(to: certificateURL, options: .atomic)
            }
            guard let keyText = try? String(contentsOf: keyURL, encoding: .utf8), let key = try? P256.Signing.PrivateKey(pemRepresentation: keyText) else {
                throw KeyFileError(
                    file: keyURL.path,
                    problem: "the tenant's issuing CA key cannot be read; restore it from a backup (it is never replaced: devices trust its certificate)")
            }
            guard let pem = try? String(contentsOf: certificateURL, encoding: .utf8), let certificate = try? Certificate(pemEncoded: pem),
                certificate.publicKey == Certificate.PublicKey(key.publicKey)
            else {
                throw KeyFileError(
                    file: certificateURL.path, problem: "the tenant's issuing CA certificate is missing or not the key's; restore it from a backup")
            }
            result = Loaded(key: key, certificate: certificate, pem: pem)
        }
        guard let result else { throw KeyFileError(file: keyURL.path, problem: "the issuing CA could not be loaded") }
        loaded.withLock { $0[tenantId] = result }
        return result
    }

    static func makeCA(key: P256.Signing.PrivateKey, tenant: Tenant, now: Date) throws -> Certificate {
        let name = try DistinguishedName {
            OrganizationName(tenant.displayName.isEmpty ? tenant.domain : tenant.displayName)
            OrganizationalUnitName(tenant.id.rawValue)
            CommonName("Portcullis issuing CA")
        }
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
            Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            SubjectKeyIdentifier(hash: Certificate.PublicKey(key.publicKey))
        }
        return try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: now.addingTimeInterval(-300), notValidAfter: now.addingTimeInterval(TimeInterval(lifetimeDays) * 86400),
            issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions,
            issuerPrivateKey: Certificate.PrivateKey(key))
    }

    /// Checks a PKCS #10 request against the enrollment's key: PEM, ECDSA with SHA-256, for exactly `appKey`,
    /// and signed by it (so only the holder of the key asks). Problems point at `/csr`.
    public static func verifiedRequest(_ pem: String, appKey: P256.KeyAgreement.PublicKey) throws -> CertificateSigningRequest {
        func problem(_ message: String) -> ValidationError { ValidationError(problems: [ValidationProblem(pointer: "/csr", message: message)]) }
        guard pem.utf8.count <= 16 * 1024, let csr = try? CertificateSigningRequest(pemEncoded: pem) else {
            throw problem("must be a PEM PKCS #10 certificate request (-----BEGIN CERTIFICATE REQUEST-----).")
        }
        guard csr.signatureAlgorithm == .ecdsaWithSHA256 else {
            throw problem("must be signed with ECDSA and SHA-256 (found \(csr.signatureAlgorithm)).")
        }
        guard let key = try? P256.Signing.PublicKey(rawRepresentation: appKey.rawRepresentation), csr.publicKey == Certificate.PublicKey(key) else {
            throw problem("must request a certificate for the enrollment's appKey (the key it was registered with).")
        }
        guard csr.publicKey.isValidSignature(csr.signature, for: csr) else {
            throw problem("is not signed by the key it names.")
        }
        return csr
    }

    public struct Issued: Sendable {
        /// The leaf, then the CA certificate.
        public let certificatesPem: String
        public let notAfter: Date
        public let serialNumber: String
    }

    /// A leaf certificate for a verified request: subject naming the account (CN: UPN), the enrollment (OU) and
    /// the tenant (O: its ID); a client-authentication key; `validityDays` long, never beyond the CA.
    public func issue(
        _ csr: CertificateSigningRequest, tenant: Tenant, userPrincipalName: String, userId: ObjectID, enrollmentId: String,
        validityDays: Int, now: Date
    ) throws -> Issued {
        let ca = try load(tenant: tenant, now: now)
        let subject = try DistinguishedName {
            OrganizationName(tenant.id.rawValue)
            OrganizationalUnitName(enrollmentId)
            CommonName(userPrincipalName)
        }
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.notCertificateAuthority)
            Critical(KeyUsage(digitalSignature: true))
            try ExtendedKeyUsage([.clientAuth])
            SubjectKeyIdentifier(hash: csr.publicKey)
            AuthorityKeyIdentifier(keyIdentifier: SubjectKeyIdentifier(hash: ca.certificate.publicKey).keyIdentifier)
            SubjectAlternativeNames([
                .uniformResourceIdentifier("urn:portcullis:tenant:\(tenant.id):user:\(userId):enrollment:\(enrollmentId)")
            ])
        }
        let notAfter = min(now.addingTimeInterval(TimeInterval(validityDays) * 86400), ca.certificate.notValidAfter)
        let serial = Certificate.SerialNumber()
        let leaf = try Certificate(
            version: .v3, serialNumber: serial, publicKey: csr.publicKey,
            notValidBefore: now.addingTimeInterval(-60), notValidAfter: notAfter,
            issuer: ca.certificate.subject, subject: subject, signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions,
            issuerPrivateKey: Certificate.PrivateKey(ca.key))
        return Issued(
            certificatesPem: try leaf.serializeAsPEM().pemString + "\n" + ca.pem, notAfter: leaf.notValidAfter,
            serialNumber: serial.bytes.map { String(format: "%02x", $0) }.joined())
    }
}
