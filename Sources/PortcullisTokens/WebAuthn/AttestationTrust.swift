import Crypto
public import Foundation
import JWTKit
import PortcullisAPI
public import PortcullisCore
import SwiftASN1
public import X509

/// Which passkey attestations a tenant trusts (PROTOCOL §12.1): a packed `x5c` chain verified to a root an admin
/// uploaded, or to a root the FIDO metadata BLOB lists for the authenticator's AAGUID (unless the BLOB reports the
/// model compromised or revoked). Only such a passkey's model is known; `none`, self and untrusted chains never meet a
/// strength that names `allowedAAGuids`.
public struct AttestationTrust: Sendable {
    public let metadata: FidoMetadata
    public let tenantRoots: [Certificate]

    public init(metadata: FidoMetadata, tenantRoots: [FidoAttestationRoot]) {
        self.metadata = metadata
        self.tenantRoots = tenantRoots.compactMap { root in Data(base64Encoded: root.certificate).flatMap { try? Certificate(derEncoded: Array($0)) } }
    }

    /// The attestation the passkey is stored with: `attested` when its chain verifies at `time` to a trusted root for
    /// its AAGUID, else what the ceremony showed.
    public func attestation(of credential: RegisteredCredential, at time: Date) async -> AttestationType {
        guard credential.attestation == .basic, let leafBytes = credential.attestationChain.first,
            let leaf = try? Certificate(derEncoded: leafBytes)
        else { return credential.attestation }
        var roots = tenantRoots
        if let entry = metadata.authenticators[credential.aaguid], !entry.distrusted { roots += entry.roots }
        guard !roots.isEmpty else { return credential.attestation }
        let intermediates = credential.attestationChain.dropFirst().compactMap { try? Certificate(derEncoded: $0) }
        var verifier = Verifier(rootCertificates: CertificateStore(roots)) { RFC5280Policy(validationTime: time) }
        switch await verifier.validate(leaf: leaf, intermediates: CertificateStore(intermediates)) {
        case .validCertificate: return .attested
        case .couldNotValidate: return credential.attestation
        }
    }
}

/// The authenticators a FIDO Metadata Service (MDS3) BLOB describes, read once from the file the operator provides
/// (`passkeys.metadataBlob`): a JWS whose `x5c` chain must verify to the FIDO Alliance's root (GlobalSign Root CA – R3)
/// or to the root the operator names (`passkeys.metadataRoot`), and whose signature must verify with the chain's leaf.
public struct FidoMetadata: Sendable {
    public struct Authenticator: Sendable {
        public let aaguid: UUID
        /// The metadata statement's `description` (the model's name).
        public let description: String
        public let roots: [Certificate]
        /// A status report says the model must not be trusted (revoked, compromised, user verification bypassed).
        public let distrusted: Bool
    }

    public let authenticators: [UUID: Authenticator]
    /// The BLOB's serial number (`no`) and when FIDO said a newer one would be published (`nextUpdate`).
    public let serial: Int?
    public let nextUpdate: Date?

    public static let empty = FidoMetadata(authenticators: [:], serial: nil, nextUpdate: nil)

    /// The statuses (FIDO Metadata Service v3 §3.1.4) after which a model's attestations are no longer trusted.
    static let distrustingStatuses: Set<String> = [
        "REVOKED", "USER_VERIFICATION_BYPASS", "ATTESTATION_KEY_COMPROMISE", "USER_KEY_REMOTE_COMPROMISE", "USER_KEY_PHYSICAL_COMPROMISE",
    ]

    /// The FIDO Alliance's metadata root, GlobalSign Root CA – R3 (valid until 2029-03-18), as FIDO publishes it.
    public static let fidoAllianceRoot = """
        -----BEGIN CERTIFICATE-----
        MIIDXzCCAkegAwIBAgILBAAAAAABIVhTCKIwDQYJKoZIhvcNAQELBQAwTDEgMB4G
        A1UECxMXR2xvYmFsU2lnbiBSb290IENBIC0gUjMxEzARBgNVBAoTCkdsb2JhbFNp
        Z24xEzARBgNVBAMTCkdsb2JhbFNpZ24wHhcNMDkwMzE4MTAwMDAwWhcNMjkwMzE4
        MTAwMDAwWjBMMSAwHgYDVQQLExdHbG9iYWxTaWduIFJvb3QgQ0EgLSBSMzETMBEG
        A1UEChMKR2xvYmFsU2lnbjETMBEGA1UEAxMKR2xvYmFsU2lnbjCCASIwDQYJKoZI
        hvcNAQEBBQADggEPADCCAQoCggEBAMwldpB5BngiFvXAg7aEyiie/QV2EcWtiHL8
        RgJDx7KKnQRfJMsuS+FggkbhUqsMgUdwbN1k0ev1LKMPgj0MK66X17YUhhB5uzsT
        gHeMCOFJ0mpiLx9e+pZo34knlTifBtc+ycsmWQ1z3rDI6SYOgxXG71uL0gRgykmm
        KPZpO/bLyCiR5Z2KYVc3rHQU3HTgOu5yLy6c+9C7v/U9AOEGM+iCK65TpjoWc4zd
        QQ4gOsC0p6Hpsk+QLjJg6VfLuQSSaGjlOCZgdbKfd/+RFO+uIEn8rUAVSNECMWEZ
        XriX7613t2Saer9fwRPvm2L7DWzgVGkWqQPabumDk3F2xmmFghcCAwEAAaNCMEAw
        DgYDVR0PAQH/BAQDAgEGMA8GA1UdEwEB/wQFMAMBAf8wHQYDVR0OBBYEFI/wS3+o
        LkUkrk1Q+mOai97i3Ru8MA0GCSqGSIb3DQEBCwUAA4IBAQBLQNvAUKr+yAzv95ZU
        RUm7lgAJQayzE4aGKAczymvmdLm6AC2upArT9fHxD4q/c2dKg8dEe3jgr25sbwMp
        jjM5RcOO5LlXbKr8EpbsU8Yt5CRsuZRj+9xTaGdWPoO4zzUhw8lo/s7awlOqzJCK
        6fBdRoyV3XpYKBovHd7NADdBj+1EbddTKJd+82cEHhXXipa0095MJ6RMG3NzdvQX
        mcIfeg7jLQitChws/zyrVQ4PkX4268NXSb7hLi18YIvDQVETI53O9zJrlAGomecs
        Mx86OyXShkDOOyyGeMlhLxS67ttVb9+E7gUJTb0o2HLO02JQZR7rkpeDMdmztcpH
        WD9f
        -----END CERTIFICATE-----
        """

    /// The largest BLOB file read (FIDO's is some megabytes).
    public static let maximumBytes = 64 * 1_048_576

    public init(authenticators: [UUID: Authenticator], serial: Int?, nextUpdate: Date?) {
        self.authenticators = authenticators
        self.serial = serial
        self.nextUpdate = nextUpdate
    }

    /// Reads and verifies a BLOB: its chain to `rootPEM` (FIDO's when `nil`) at `time`, its signature, then its entries
    /// (those without an AAGUID — FIDO U2F and UAF authenticators — are skipped).
    public static func load(blob: String, rootPEM: String? = nil, at time: Date) async throws(FidoMetadataError) -> FidoMetadata {
        let root: Certificate
        do { root = try Certificate(pemEncoded: rootPEM ?? fidoAllianceRoot) } catch {
            throw FidoMetadataError("the metadata root is not a PEM certificate")
        }
        let payload: BLOBPayload
        do {
            payload = try await X5CVerifier(rootCertificates: [root]).verifyJWS(
                blob.trimmingCharacters(in: .whitespacesAndNewlines), as: BLOBPayload.self, validationTime: .fixed(time))
        } catch {
            throw FidoMetadataError("the BLOB does not verify to the metadata root: \(String(describing: error).prefix(300))")
        }
        var authenticators: [UUID: Authenticator] = [:]
        for entry in payload.entries {
            guard let text = entry.aaguid, let aaguid = UUID(uuidString: text) else { continue }
            let roots = (entry.metadataStatement?.attestationRootCertificates ?? []).compactMap { encoded in
                Data(base64Encoded: encoded).flatMap { try? Certificate(derEncoded: Array($0)) }
            }
            let distrusted = (entry.statusReports ?? []).contains { distrustingStatuses.contains($0.status) }
            authenticators[aaguid] = Authenticator(
                aaguid: aaguid, description: entry.metadataStatement?.description ?? "", roots: roots, distrusted: distrusted)
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        return FidoMetadata(authenticators: authenticators, serial: payload.no, nextUpdate: payload.nextUpdate.flatMap(formatter.date(from:)))
    }

    /// The parts of an MDS3 BLOB payload (FIDO Metadata Service v3 §3.1.6) Portcullis reads.
    struct BLOBPayload: JWTPayload {
        struct Entry: Codable {
            struct Statement: Codable {
                var description: String?
                var attestationRootCertificates: [String]?
            }
            struct StatusReport: Codable { var status: String }
            var aaguid: String?
            var metadataStatement: Statement?
            var statusReports: [StatusReport]?
        }
        var no: Int?
        var nextUpdate: String?
        var entries: [Entry]

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }
}

/// Why a metadata BLOB cannot be used.
public struct FidoMetadataError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

extension FidoAttestationRoot {
    /// Reads an admin's body (`{"displayName", "certificate": "<PEM>"}`) into a root to store: the certificate must be
    /// one PEM certificate of a CA (basic constraints) that has not expired at `time`; a tenant holds at most
    /// `perTenant` roots, each certificate once.
    public static func parse(
        _ value: JSONValue, others: [FidoAttestationRoot], generatedId: String, at time: Date
    ) throws(ValidationError) -> FidoAttestationRoot {
        let problems = ProblemCollector()
        guard let reader = JSONObjectReader(value, at: "", problems: problems) else { throw ValidationError(problems: problems.problems) }
        reader.rejectUnknownMembers(allowed: ["id", "displayName", "certificate", "subject", "sha256Thumbprint", "notAfter", "@odata.context"])
        var id = generatedId
        if let given = reader.string("id") {
            if UUID(uuidString: given) != nil { id = given.lowercased() } else { problems.add(reader.path("id"), "must be a GUID.") }
        }
        let displayName = reader.string("displayName", required: true)
        if let displayName, displayName.count > 256 { problems.add(reader.path("displayName"), "must be at most 256 characters.") }
        var certificate: Certificate?
        if let pem = reader.string("certificate", required: true) {
            if pem.utf8.count > 16 * 1024 {
                problems.add(reader.path("certificate"), "must be at most 16 KiB.")
            } else if let parsed = try? Certificate(pemEncoded: pem) {
                if case .isCertificateAuthority = (try? parsed.extensions.basicConstraints) ?? .notCertificateAuthority {
                    if parsed.notValidAfter <= time {
                        problems.add(reader.path("certificate"), "expired on \(ISO8601.string(parsed.notValidAfter)).")
                    } else {
                        certificate = parsed
                    }
                } else {
                    problems.add(reader.path("certificate"), "is not a CA certificate (basic constraints): upload the vendor's attestation root.")
                }
            } else {
                problems.add(reader.path("certificate"), "must be one PEM certificate (-----BEGIN CERTIFICATE-----).")
            }
        }
        var der: [UInt8] = []
        if let certificate {
            var serializer = DER.Serializer()
            if (try? serializer.serialize(certificate)) != nil { der = serializer.serializedBytes }
        }
        let thumbprint = SHA256.hash(data: der).map { String(format: "%02x", $0) }.joined()
        if certificate != nil, others.contains(where: { $0.sha256Thumbprint == thumbprint && $0.id != id }) {
            problems.add(reader.path("certificate"), "is already trusted (another root of this tenant holds it).")
        }
        if !others.contains(where: { $0.id == id }) && others.count >= perTenant {
            problems.add("", "a tenant trusts at most \(perTenant) attestation roots; delete one first.")
        }
        try problems.check()
        guard let certificate else { throw ValidationError(problems: [ValidationProblem(pointer: "/certificate", message: "is required.")]) }
        return FidoAttestationRoot(
            id: id, displayName: displayName ?? "", certificate: Data(der).base64EncodedString(), subject: certificate.subject.description,
            sha256Thumbprint: thumbprint, notAfter: certificate.notValidAfter)
    }

    /// The certificate as PEM, as the admin uploaded it.
    public var pem: String {
        let lines = stride(from: 0, to: certificate.count, by: 64).map { offset in
            let start = certificate.index(certificate.startIndex, offsetBy: offset)
            return String(certificate[start..<(certificate.index(start, offsetBy: 64, limitedBy: certificate.endIndex) ?? certificate.endIndex)])
        }
        return (["-----BEGIN CERTIFICATE-----"] + lines + ["-----END CERTIFICATE-----"]).joined(separator: "\n") + "\n"
    }
}

extension FidoAttestationRoot: AdministeredDocument {
    public static func read(_ body: JSONValue, in write: DocumentWrite) async throws -> FidoAttestationRoot {
        try parse(body, others: write.tenant.contents.attestationRoots, generatedId: UUID.randomIdentifierText, at: write.services.now)
    }

    /// The certificate as PEM with what an admin checks it by; never stored fields beside.
    public func presented(in tenant: TenantSnapshot) -> JSONValue {
        .object([
            "id": .string(id), "displayName": .string(displayName), "certificate": .string(pem), "subject": .string(subject),
            "sha256Thumbprint": .string(sha256Thumbprint), "notAfter": .string(ISO8601.string(notAfter)),
        ])
    }
}
