import Crypto
import CryptoExtras
public import Foundation
import NIOSSL
import PortcullisAPI
public import PortcullisCore
import SwiftASN1
public import X509

/// Reads the material an admin writes for a declared secret (PROTOCOL §8.1) into the one form apps receive:
/// `{"password"}`, `{"certificatesPem"}` (leaf first), or `{"certificatesPem", "privateKeyPem"}` with the key
/// as PKCS #8 — a PKCS #12 upload is opened here, once, with its passphrase, and never stored as such.
/// Every refusal names the member at fault; nothing of the material appears in a message.
public enum SecretMaterialReader {
    public struct Read: Sendable {
        /// The plaintext an app opens: the JSON of `SecretMaterial`.
        public let material: Data
        /// SHA-256 of the leaf certificate (hex); `nil` for a password (the caller computes a keyed one).
        public let certificateFingerprint: String?
        public let notAfter: Date?
    }

    public static let maximumPasswordBytes = 4096
    public static let maximumPEMBytes = 64 * 1024
    public static let maximumCertificates = 10

    public static func read(_ value: JSONValue, declaration: SecretDeclaration, now: Date) throws -> Read {
        let problems = ProblemCollector()
        guard let root = JSONObjectReader(value, at: "", problems: problems) else { throw ValidationError(problems: problems.problems) }
        var read: Read?
        switch declaration.kind {
        case .password:
            root.rejectUnknownMembers(allowed: ["password"])
            if let password = root.string("password", required: true, nonEmpty: false) {
                if password.isEmpty || password.utf8.count > maximumPasswordBytes {
                    problems.add("/password", "must be 1 to \(maximumPasswordBytes) bytes.")
                } else {
                    read = Read(material: encode(SecretMaterial(password: password)), certificateFingerprint: nil, notAfter: nil)
                }
            }
        case .certificate:
            root.rejectUnknownMembers(allowed: ["certificatesPem"])
            if let pem = root.string("certificatesPem", required: true), let chain = certificates(pem, pointer: "/certificatesPem", problems: problems) {
                read = Read(
                    material: encode(SecretMaterial(certificatesPem: pemString(chain))), certificateFingerprint: fingerprint(chain[0]),
                    notAfter: chain[0].notValidAfter)
            }
        case .identity:
            guard declaration.issuance != .device else {
                problems.add(
                    "",
                    "'\(declaration.identifier)' is a device identity: its key is generated on the device and its certificate issued by the tenant's CA on request; nothing is uploaded."
                )
                break
            }
            if root.has("pkcs12") || root.has("passphrase") {
                root.rejectUnknownMembers(allowed: ["pkcs12", "passphrase"])
                let passphrase = root.string("passphrase", required: true, nonEmpty: false)
                if let base64 = root.string("pkcs12", required: true), let passphrase {
                    read = pkcs12(base64, passphrase: passphrase, problems: problems)
                }
            } else {
                root.rejectUnknownMembers(allowed: ["certificatesPem", "privateKeyPem"])
                let pem = root.string("certificatesPem", required: true)
                let keyPem = root.string("privateKeyPem", required: true)
                if let pem, let keyPem, let chain = certificates(pem, pointer: "/certificatesPem", problems: problems),
                    let key = privateKey(pem: keyPem, problems: problems)
                {
                    read = identity(chain: chain, key: key, problems: problems, keyPointer: "/privateKeyPem")
                }
            }
        }
        try problems.check()
        guard let read else {
            throw ValidationError(problems: [ValidationProblem(pointer: "", message: "is not valid material for a \(declaration.kind.rawValue).")])
        }
        if let notAfter = read.notAfter, notAfter <= now {
            throw ValidationError(problems: [
                ValidationProblem(
                    pointer: declaration.kind == .identity && value.objectValue?["pkcs12"] != nil ? "/pkcs12" : "/certificatesPem",
                    message: "the certificate expired on \(notAfter.formatted(.iso8601)).")
            ])
        }
        return read
    }

    static func encode(_ material: SecretMaterial) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(material)) ?? Data()
    }

    public static func fingerprint(_ certificate: Certificate) -> String {
        var serializer = DER.Serializer()
        guard (try? serializer.serialize(certificate)) != nil else { return "" }
        return SecretMaterialBox.hex(SHA256.hash(data: serializer.serializedBytes))
    }

    public static func pemString(_ chain: [Certificate]) -> String {
        chain.compactMap { try? $0.serializeAsPEM().pemString }.joined(separator: "\n") + "\n"
    }

    /// Every `CERTIFICATE` block of `pem`, in order (at least one, at most ten).
    static func certificates(_ pem: String, pointer: String, problems: ProblemCollector) -> [Certificate]? {
        guard pem.utf8.count <= maximumPEMBytes else {
            problems.add(pointer, "is larger than \(maximumPEMBytes / 1024) KiB.")
            return nil
        }
        guard let documents = try? PEMDocument.parseMultiple(pemString: pem), !documents.isEmpty else {
            problems.add(pointer, "must hold one or more PEM certificates (-----BEGIN CERTIFICATE-----).")
            return nil
        }
        guard documents.count <= maximumCertificates else {
            problems.add(pointer, "holds \(documents.count) certificates; at most \(maximumCertificates).")
            return nil
        }
        var chain: [Certificate] = []
        for (index, document) in documents.enumerated() {
            guard document.discriminator == "CERTIFICATE", let certificate = try? Certificate(pemDocument: document) else {
                problems.add(pointer, "block \(index + 1) is not an X.509 certificate (\(document.discriminator)).")
                return nil
            }
            chain.append(certificate)
        }
        return chain
    }

    /// A private key from PEM: PKCS #8 (`PRIVATE KEY`), or SEC 1 / PKCS #1, normalised to PKCS #8.
    static func privateKey(pem: String, problems: ProblemCollector) -> Certificate.PrivateKey? {
        guard pem.utf8.count <= maximumPEMBytes, let document = try? PEMDocument(pemString: pem) else {
            problems.add("/privateKeyPem", "must be one PEM private key (-----BEGIN PRIVATE KEY-----, PKCS #8).")
            return nil
        }
        if document.discriminator == "ENCRYPTED PRIVATE KEY" {
            problems.add(
                "/privateKeyPem",
                "is encrypted; give the key unencrypted (the request travels over TLS and the key is sealed at rest), or upload a PKCS #12 with its passphrase."
            )
            return nil
        }
        guard let key = try? Certificate.PrivateKey(pemDocument: document) else {
            problems.add("/privateKeyPem", "is not a supported private key (EC P-256/P-384/P-521 or RSA; PKCS #8, SEC 1 or PKCS #1).")
            return nil
        }
        return key
    }

    /// A key's PKCS #8 PEM (`serializeAsPEM` writes RSA keys as PKCS #1).
    static func pkcs8PEM(_ key: Certificate.PrivateKey) -> String? {
        guard let document = try? key.serializeAsPEM() else { return nil }
        if document.discriminator == "RSA PRIVATE KEY" {
            return (try? _RSA.Signing.PrivateKey(derRepresentation: document.derBytes))?.pkcs8PEMRepresentation
        }
        return document.pemString
    }

    /// An identity: the chain reordered leaf first (the certificate of the key), the key as PKCS #8.
    static func identity(chain: [Certificate], key: Certificate.PrivateKey, problems: ProblemCollector, keyPointer: String) -> Read? {
        guard let leafIndex = chain.firstIndex(where: { $0.publicKey == key.publicKey }) else {
            problems.add(keyPointer, "is not the key of any of the certificates given.")
            return nil
        }
        var ordered = chain
        let leaf = ordered.remove(at: leafIndex)
        ordered.insert(leaf, at: 0)
        guard let keyPem = pkcs8PEM(key) else {
            problems.add(keyPointer, "cannot be written as PKCS #8.")
            return nil
        }
        let material = SecretMaterial(certificatesPem: pemString(ordered), privateKeyPem: keyPem.hasSuffix("\n") ? keyPem : keyPem + "\n")
        return Read(material: encode(material), certificateFingerprint: fingerprint(leaf), notAfter: leaf.notValidAfter)
    }

    static func pkcs12(_ base64: String, passphrase: String, problems: ProblemCollector) -> Read? {
        guard base64.utf8.count <= maximumPEMBytes * 2, let bytes = Data(base64Encoded: base64, options: .ignoreUnknownCharacters) else {
            problems.add("/pkcs12", "must be a PKCS #12 file in base64, at most \(maximumPEMBytes * 2 / 1024) KiB.")
            return nil
        }
        guard let bundle = try? NIOSSLPKCS12Bundle(buffer: Array(bytes), passphrase: Array(passphrase.utf8)) else {
            problems.add("/pkcs12", "cannot be opened: not PKCS #12, or the passphrase (/passphrase) is not its own.")
            return nil
        }
        guard let der = try? bundle.privateKey.derBytes, let key = traditionalKey(der) else {
            problems.add("/pkcs12", "holds a private key of a kind not supported (EC P-256/P-384/P-521 or RSA).")
            return nil
        }
        var chain: [Certificate] = []
        for certificate in bundle.certificateChain {
            guard let der = try? certificate.toDERBytes(), let parsed = try? Certificate(derEncoded: der) else {
                problems.add("/pkcs12", "holds a certificate that cannot be read.")
                return nil
            }
            chain.append(parsed)
        }
        guard !chain.isEmpty, chain.count <= maximumCertificates else {
            problems.add("/pkcs12", "must hold 1 to \(maximumCertificates) certificates.")
            return nil
        }
        return identity(chain: chain, key: key, problems: problems, keyPointer: "/pkcs12")
    }

    /// A key in the DER BoringSSL writes (SEC 1 for EC, PKCS #1 for RSA).
    static func traditionalKey(_ der: [UInt8]) -> Certificate.PrivateKey? {
        if let key = try? P256.Signing.PrivateKey(derRepresentation: der) { return Certificate.PrivateKey(key) }
        if let key = try? P384.Signing.PrivateKey(derRepresentation: der) { return Certificate.PrivateKey(key) }
        if let key = try? P521.Signing.PrivateKey(derRepresentation: der) { return Certificate.PrivateKey(key) }
        if let key = try? _RSA.Signing.PrivateKey(derRepresentation: der) { return Certificate.PrivateKey(key) }
        return nil
    }
}
