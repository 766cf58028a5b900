public import Crypto
public import Foundation
public import PortcullisCore
import SwiftASN1
import Synchronization
public import X509
import _CryptoExtras

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

// MARK: Devices (PROTOCOL §18)

extension IssuingAuthority {
    /// Checks a device's PKCS #10 request: PEM, for an RSA key of 2,048 bits or more signed with SHA-256 (as MSAL for .NET
    /// signs PKeyAuth answers, RS256) or a P-256 key signed with ECDSA and SHA-256, and signed by the key it names.
    /// Problems point at `/csr`.
    /// Whether a device's certificate is for the key a request is for.
    public static func certificate(_ certificate: Device.Certificate, isFor request: CertificateSigningRequest) -> Bool {
        guard let held = try? Certificate(pemEncoded: certificate.pem) else { return false }
        return held.publicKey == request.publicKey
    }

    public static func verifiedDeviceRequest(_ pem: String) throws -> CertificateSigningRequest {
        func problem(_ message: String) -> ValidationError { ValidationError(problems: [ValidationProblem(pointer: "/csr", message: message)]) }
        guard pem.utf8.count <= 16 * 1024, let csr = try? CertificateSigningRequest(pemEncoded: pem) else {
            throw problem("must be a PEM PKCS #10 certificate request (-----BEGIN CERTIFICATE REQUEST-----).")
        }
        if let rsa = _RSA.Signing.PublicKey(csr.publicKey) {
            guard rsa.keySizeInBits >= 2048 else { throw problem("must be for an RSA key of at least 2048 bits (found \(rsa.keySizeInBits)).") }
            guard csr.signatureAlgorithm == .sha256WithRSAEncryption else {
                throw problem("must be signed with RSA and SHA-256 (found \(csr.signatureAlgorithm)).")
            }
        } else if P256.Signing.PublicKey(csr.publicKey) != nil {
            guard csr.signatureAlgorithm == .ecdsaWithSHA256 else { throw problem("must be signed with ECDSA and SHA-256 (found \(csr.signatureAlgorithm)).") }
        } else {
            throw problem("must be for an RSA (2048 bits or more) or a P-256 key.")
        }
        guard csr.publicKey.isValidSignature(csr.signature, for: csr) else { throw problem("is not signed by the key it names.") }
        return csr
    }

    /// The subject of a device's certificate: the tenant (O), the device's object ID (OU), its device ID (CN).
    static func deviceSubject(tenantId: TenantID, objectId: ObjectID, deviceId: DeviceID) throws -> DistinguishedName {
        try DistinguishedName {
            OrganizationName(tenantId.rawValue)
            OrganizationalUnitName(objectId.rawValue)
            CommonName(deviceId.rawValue)
        }
    }

    /// How long a device's certificate lives: five years, never beyond the CA (the device record, not the date, is what
    /// voids it early).
    public static let deviceCertificateDays = 5 * 365

    /// A certificate for a verified device request, from the tenant's CA.
    public func issueDevice(_ csr: CertificateSigningRequest, tenant: Tenant, objectId: ObjectID, deviceId: DeviceID, now: Date) throws -> Device.Certificate {
        let ca = try load(tenant: tenant, now: now)
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.notCertificateAuthority)
            Critical(KeyUsage(digitalSignature: true))
            try ExtendedKeyUsage([.clientAuth])
            SubjectKeyIdentifier(hash: csr.publicKey)
            AuthorityKeyIdentifier(keyIdentifier: SubjectKeyIdentifier(hash: ca.certificate.publicKey).keyIdentifier)
        }
        let notAfter = min(now.addingTimeInterval(TimeInterval(Self.deviceCertificateDays) * 86400), ca.certificate.notValidAfter)
        let serial = Certificate.SerialNumber()
        let leaf = try Certificate(
            version: .v3, serialNumber: serial, publicKey: csr.publicKey, notValidBefore: now.addingTimeInterval(-60), notValidAfter: notAfter,
            issuer: ca.certificate.subject, subject: try Self.deviceSubject(tenantId: tenant.id, objectId: objectId, deviceId: deviceId),
            signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions, issuerPrivateKey: Certificate.PrivateKey(ca.key))
        var serializer = DER.Serializer()
        try serializer.serialize(leaf)
        return Device.Certificate(
            pem: try leaf.serializeAsPEM().pemString + "\n", thumbprint: Self.thumbprint(serializer.serializedBytes),
            serialNumber: serial.bytes.map { String(format: "%02x", $0) }.joined(), notAfter: leaf.notValidAfter)
    }

    /// The CA's subject as a challenge names it (`CertAuthorities`: the issuer the device's certificate must have).
    public func subjectName(tenant: Tenant, now: Date) throws -> String { try load(tenant: tenant, now: now).certificate.subject.description }

    /// SHA-256 of a certificate's DER, lower-case hex: how a device's certificate is recorded and recognised.
    public static func thumbprint(_ der: [UInt8]) -> String { SHA256.hash(data: der).map { String(format: "%02x", $0) }.joined() }

    /// A device certificate presented at sign-in (DER), if the tenant's CA issued it and it is valid `now`: its device's
    /// object ID and device ID (from the subject), its thumbprint, and its key. Whether the device still has this
    /// certificate is the caller's to check against the device record.
    public func verifyDevice(
        certificate der: [UInt8], tenant: Tenant, now: Date
    ) throws -> (
        objectId: ObjectID, deviceId: DeviceID, thumbprint: String, publicKey: Certificate.PublicKey
    )? {
        let ca = try load(tenant: tenant, now: now)
        guard der.count <= 8192, let leaf = try? Certificate(derEncoded: der), leaf.issuer == ca.certificate.subject,
            ca.certificate.publicKey.isValidSignature(leaf.signature, for: leaf), leaf.notValidBefore <= now, now <= leaf.notValidAfter
        else { return nil }
        var objectId: String?
        var deviceId: String?
        for rdn in leaf.subject {
            for attribute in rdn {
                if attribute.type == .RDNAttributeType.organizationalUnitName { objectId = String(describing: attribute.value) }
                if attribute.type == .RDNAttributeType.commonName { deviceId = String(describing: attribute.value) }
            }
        }
        guard let objectId, let deviceId else { return nil }
        return (ObjectID(objectId), DeviceID(deviceId), Self.thumbprint(der), leaf.publicKey)
    }
}
