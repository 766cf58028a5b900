import ArgumentParser
import Crypto
import Foundation
import PortcullisTokens
import SwiftASN1
import X509

struct DevCertCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dev-cert",
        abstract: "Write a self-signed TLS certificate for localhost and 127.0.0.1 into the keys directory (development only)."
    )

    @OptionGroup var locations: LocationOptions

    @Option(help: "Extra DNS names for the certificate.")
    var dnsName: [String] = []

    @Option(help: "Days the certificate is valid.")
    var days: Int = 365

    func run() async throws {
        let settings = try locations.settings(environment: ProcessInfo.processInfo.environment)
        let directory = URL(fileURLWithPath: settings.keysDirectory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let (certificatePEM, keyPEM) = try DevCertificate.make(dnsNames: ["localhost"] + dnsName, days: days, now: Date())
        let certificateURL = directory.appendingPathComponent("dev-cert.pem")
        let keyURL = directory.appendingPathComponent("dev-key.pem")
        try? FileManager.default.removeItem(at: keyURL)
        try PrivateFile.write(Data(keyPEM.utf8), to: keyURL)
        try Data(certificatePEM.utf8).write(to: certificateURL)
        print("certificate: \(certificateURL.path)")
        print("private key: \(keyURL.path) (mode 0600)")
        print("serve with: portcullis serve --tls-cert \(certificateURL.path) --tls-key \(keyURL.path)")
    }
}

/// A self-signed certificate that is its own trust anchor (CA:TRUE, pathlen 0) for localhost, 127.0.0.1
/// and ::1, so clients can trust it with `verify=<file>` / `--cacert <file>`.
enum DevCertificate {
    static func make(dnsNames: [String], days: Int, now: Date) throws -> (certificate: String, key: String) {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName {
            CommonName("localhost")
            OrganizationName("Portcullis development")
        }
        var sans: [GeneralName] = dnsNames.map { .dnsName($0) }
        sans.append(.ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])))
        sans.append(.ipAddress(ASN1OctetString(contentBytes: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1])))
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
            Critical(KeyUsage(digitalSignature: true, keyCertSign: true))
            try ExtendedKeyUsage([.serverAuth])
            SubjectAlternativeNames(sans)
        }
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: now.addingTimeInterval(-300), notValidAfter: now.addingTimeInterval(TimeInterval(days) * 86400),
            issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions,
            issuerPrivateKey: Certificate.PrivateKey(key))
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        let pem = PEMDocument(type: "CERTIFICATE", derBytes: serializer.serializedBytes).pemString
        return (pem + "\n", key.pemRepresentation + "\n")
    }
}
