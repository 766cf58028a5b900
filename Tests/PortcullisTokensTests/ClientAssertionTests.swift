import Crypto
import Foundation
import PortcullisCore
import PortcullisTesting
import SwiftASN1
import Testing
import X509
import _CryptoExtras

@testable import PortcullisTokens

/// Certificates registered as application credentials and the RFC 7523 assertions signed with them (PROTOCOL §21),
/// below the HTTP layer.
@Suite("Client assertions: certificates read, signatures checked")
struct ClientAssertionTests {
    static let now = Date()

    static func certificate(_ key: P256.Signing.PrivateKey, from start: Date = now.addingTimeInterval(-3600), days: Double = 30) throws -> Certificate {
        let name = try DistinguishedName { CommonName("reports daemon") }
        return try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(key.publicKey), notValidBefore: start,
            notValidAfter: start.addingTimeInterval(days * 86400), issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: Certificate.Extensions(), issuerPrivateKey: Certificate.PrivateKey(key))
    }

    static func der(_ certificate: Certificate) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return serializer.serializedBytes
    }

    static func sign(_ header: [String: String], _ claims: [String: Any], with key: P256.Signing.PrivateKey) throws -> String {
        let head = Base64URL.encode(try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys]))
        let body = Base64URL.encode(try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys]))
        let signature = try key.signature(for: Data("\(head).\(body)".utf8)).rawRepresentation
        return "\(head).\(body).\(Base64URL.encode(signature))"
    }

    @Test("a certificate read in PEM or base64 DER: its thumbprints and validity; a private key, a small RSA key, junk refused")
    func reading() throws {
        let key = P256.Signing.PrivateKey()
        let certificate = try Self.certificate(key)
        let der = try Self.der(certificate)
        let fromPEM = try KeyCredential.reading(try certificate.serializeAsPEM().pemString, keyId: RecordID.generate(), displayName: nil).get()
        let fromDER = try KeyCredential.reading(Data(der).base64EncodedString(), keyId: RecordID.generate(), displayName: "mine").get()
        #expect(fromPEM.thumbprint == Hex.encode(Insecure.SHA1.hash(data: der)) && fromPEM.thumbprint.count == 40)
        #expect(fromPEM.thumbprintSHA256 == fromDER.thumbprintSHA256 && fromDER.displayName == "mine")
        #expect(fromPEM.displayName == "CN=reports daemon")
        #expect(abs(fromPEM.endDateTime.timeIntervalSince(certificate.notValidAfter)) < 1 && fromPEM.isValid(at: Self.now))
        #expect(!fromPEM.isValid(at: certificate.notValidAfter.addingTimeInterval(1)))
        #expect(!fromPEM.isValid(at: certificate.notValidBefore.addingTimeInterval(-1)))
        let privatePEM = key.pemRepresentation
        if case .success = KeyCredential.reading(privatePEM, keyId: RecordID.generate(), displayName: nil) { Issue.record("a private key was read") }
        if case .success = KeyCredential.reading("not a certificate", keyId: RecordID.generate(), displayName: nil) { Issue.record("junk was read") }
        let small = try _RSA.Signing.PrivateKey(unsafeKeySize: _RSA.Signing.KeySize(bitCount: 1024))
        let name = try DistinguishedName { CommonName("small") }
        let weak = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(small.publicKey), notValidBefore: Self.now,
            notValidAfter: Self.now.addingTimeInterval(86400), issuer: name, subject: name, signatureAlgorithm: .sha256WithRSAEncryption,
            extensions: Certificate.Extensions(), issuerPrivateKey: Certificate.PrivateKey(small))
        if case .success = KeyCredential.reading(try weak.serializeAsPEM().pemString, keyId: RecordID.generate(), displayName: nil) {
            Issue.record("an RSA key of 1024 bits was read")
        }
    }

    @Test("an assertion names its certificate by x5t, x5t#S256 or kid, and verifies only with that certificate's key")
    func signatures() throws {
        let key = P256.Signing.PrivateKey()
        let certificate = try Self.certificate(key)
        let der = try Self.der(certificate)
        let credential = try KeyCredential.reading(Data(der).base64EncodedString(), keyId: RecordID.generate(), displayName: nil).get()
        let claims: [String: Any] = ["iss": "c", "sub": "c", "aud": "a", "exp": 1, "jti": "j"]
        let x5t = Base64URL.encode(Insecure.SHA1.hash(data: der))
        for header in [["x5t": x5t], ["x5t#S256": Base64URL.encode(SHA256.hash(data: der))], ["kid": credential.thumbprint.lowercased()]] {
            let token = try Self.sign(header.merging(["alg": "ES256", "typ": "JWT"]) { a, _ in a }, claims, with: key)
            let assertion = try ClientAssertion.read(token).get()
            #expect(assertion.certificate(among: [credential]) == credential, "\(header)")
            #expect(assertion.isSigned(by: certificate.publicKey))
        }
        let forged = try ClientAssertion.read(try Self.sign(["alg": "ES256", "x5t": x5t], claims, with: P256.Signing.PrivateKey())).get()
        #expect(forged.certificate(among: [credential]) == credential && !forged.isSigned(by: certificate.publicKey))
        let unnamed = try ClientAssertion.read(try Self.sign(["alg": "ES256", "x5t": "AAAA"], claims, with: key)).get()
        #expect(unnamed.certificate(among: [credential]) == nil)
        // The same bytes have the same digest; another assertion another.
        let one = try Self.sign(["alg": "ES256", "x5t": x5t], claims, with: key)
        #expect(try ClientAssertion.read(one).get().digest == (try ClientAssertion.read(one).get().digest))
        #expect(try ClientAssertion.read(one).get().digest != (try ClientAssertion.read(try Self.sign(["alg": "ES256"], claims, with: key)).get().digest))
        // Refused before anything: none, HS256, not a JWT, too long.
        for token in ["a.b.c", "x", String(repeating: "a", count: 20_000)] {
            if case .success = ClientAssertion.read(token) { Issue.record("\(token.prefix(20)) was read") }
        }
        let hs = try Self.sign(["alg": "HS256"], claims, with: key)
        if case .failure(let error) = ClientAssertion.read(hs) { #expect(error.aadsts == 50027) } else { Issue.record("HS256 was read") }
    }
}
