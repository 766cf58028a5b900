import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PortcullisAPI
import PortcullisCore
import PortcullisSQLite
import PortcullisServer
import PortcullisStorage
import PortcullisTesting
import PortcullisTokens
import SwiftASN1
import Testing
import X509

/// A self-signed certificate and its key, as an admin would upload them.
enum TestCertificates {
    static func make(_ name: String, days: Double = 30, from now: Date = Date()) throws -> (certificate: String, key: String, der: [UInt8]) {
        let key = P256.Signing.PrivateKey()
        let subject = try DistinguishedName { CommonName(name) }
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: now.addingTimeInterval(-days * 86400 - 60), notValidAfter: now.addingTimeInterval(days * 86400),
            issuer: subject, subject: subject, signatureAlgorithm: .ecdsaWithSHA256, extensions: Certificate.Extensions(),
            issuerPrivateKey: Certificate.PrivateKey(key))
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return (try certificate.serializeAsPEM().pemString + "\n", key.pemRepresentation, serializer.serializedBytes)
    }
}

/// An app instance's key, as the SDK's key store holds it.
struct InstanceKey {
    let key = P256.KeyAgreement.PrivateKey()
    var jwk: [String: Any] {
        let jwk = SecretSealing.jwk(key.publicKey)
        return ["kty": jwk.kty, "crv": jwk.crv, "x": jwk.x, "y": jwk.y, "kid": "ignored"]
    }

    func open(_ reply: JSONReply, enrollmentId: String) throws -> [String: Any] {
        let sealed = try #require(reply["sealed"] as? [String: String], "\(reply.text)")
        let info = SealedSecretResponse.info(
            enrollmentId: enrollmentId, identifier: try #require(reply.string("identifier")), version: try #require(reply.string("version")))
        let plaintext = try SecretSealing.open(SealedSecretResponse.Sealed(enc: sealed["enc"]!, ciphertext: sealed["ciphertext"]!), with: key, info: info)
        return try #require(try JSONSerialization.jsonObject(with: plaintext) as? [String: Any])
    }

    func csr() throws -> String {
        let signing = try P256.Signing.PrivateKey(rawRepresentation: key.rawRepresentation)
        return try CertificateSigningRequest(
            version: .v1, subject: try DistinguishedName { CommonName("device") }, privateKey: Certificate.PrivateKey(signing),
            attributes: CertificateSigningRequest.Attributes(), signatureAlgorithm: .ecdsaWithSHA256
        ).serializeAsPEM().pemString
    }
}

extension TestClientProtocol {
    /// Enrolls with an instance key (remediation, policy applied, good check-in). Returns the enrollment ID.
    func becomeCompliant(_ account: Fixtures.Account = Fixtures.alice, device: String = "device-1", appKey: InstanceKey) async throws -> String {
        let token = try await complianceToken(account)
        var body = Device.body(device)
        body["appKey"] = appKey.jwk
        let remediation = try await mam(.post, "/remediations", token: token, json: body)
        guard let id = remediation.string("enrollmentId"), let version = (remediation["policy"] as? [String: Any])?["version"] as? String else {
            throw InteropSetupError(message: "remediation did not enroll: \(remediation.text)")
        }
        let checkIn = try await mam(.post, "/enrollments/\(id)/checkin", token: token, json: Device.checkIn(version))
        guard status(checkIn) == "compliant" else { throw InteropSetupError(message: "check-in: \(checkIn.text)") }
        return id
    }
}

@Suite("managed secrets: material, sealed delivery, device identities (PROTOCOL §8)")
struct AppSecretTests {
    static let policyId = "c0000000-0000-4000-8000-0000000000d1"
    static let password = "Smtp-pass-\(UUID().uuidString)"

    static func policy(secrets: [[String: Any]]) -> [String: Any] {
        var policy = AppConfigurationTests.policy(id: policyId)
        policy["secrets"] = secrets
        return policy
    }

    static var declared: [[String: Any]] {
        [
            ["identifier": "com.fabrikam.mail.smtp", "kind": "password"],
            ["identifier": "com.fabrikam.mail.root", "kind": "certificate"],
            ["identifier": "com.fabrikam.mail.vpn", "kind": "identity", "issuance": "uploaded"],
            ["identifier": "com.fabrikam.mail.license", "kind": "identity", "issuance": "device", "validityDays": 7],
        ]
    }

    static func secrets(_ policyId: String = policyId) -> String { "/app-configuration/policies/\(policyId)/secrets" }

    @Test("material is written, never read back, sealed at rest; delivered sealed to the instance key only; every write and delivery audited without the value")
    func delivery() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                #expect(
                    try await client.admin(.post, "/app-configuration/policies", token: admin, json: Self.policy(secrets: Self.declared)).status == .created)
                let appKey = InstanceKey()
                let id = try await client.becomeCompliant(appKey: appKey)
                let token = try await client.complianceToken()
                let before = try await client.mam(.get, "/enrollments/\(id)/configuration", token: token)
                let listed = try #require(before["secrets"] as? [[String: Any]], "\(before.text)")
                #expect(
                    listed.map { $0["identifier"] as? String } == ["com.fabrikam.mail.license"],
                    "only the device identity is provisioned before material exists: \(before.text)")
                #expect(listed.first?["issuance"] as? String == "device" && listed.first?["version"] == nil)

                let written = try await client.admin(.put, "\(Self.secrets())/com.fabrikam.mail.smtp", token: admin, json: ["password": Self.password])
                #expect(
                    written.status == .created && written.string("kind") == "password" && written.string("version") != nil
                        && written.string("fingerprint") != nil, "\(written.text)")
                #expect(!written.text.contains(Self.password))
                let again = try await client.admin(.put, "\(Self.secrets())/com.fabrikam.mail.smtp", token: admin, json: ["password": Self.password])
                #expect(again.status == .ok && again.string("version") == written.string("version"), "the same material: no new version")
                let read = try await client.admin(.get, "\(Self.secrets())/com.fabrikam.mail.smtp", token: admin)
                #expect(read.status == .ok && read.headers[.eTag] != nil && !read.text.contains(Self.password) && read["password"] == nil, "\(read.text)")

                let root = try TestCertificates.make("Fabrikam Root")
                let certificate = try await client.admin(
                    .put, "\(Self.secrets())/com.fabrikam.mail.root", token: admin, json: ["certificatesPem": root.certificate])
                #expect(
                    certificate.status == .created
                        && certificate.string("fingerprint") == SHA256.hash(data: root.der).map { String(format: "%02x", $0) }.joined()
                        && certificate.string("notAfter") != nil, "\(certificate.text)")
                let vpn = try TestCertificates.make("alice vpn")
                let identity = try await client.admin(
                    .put, "\(Self.secrets())/com.fabrikam.mail.vpn", token: admin,
                    json: ["certificatesPem": root.certificate + vpn.certificate, "privateKeyPem": vpn.key])
                #expect(identity.status == .created, "\(identity.text)")

                // The app: all four listed with versions; a change of configuration version; the instance told.
                let after = try await client.mam(.get, "/enrollments/\(id)/configuration", token: token)
                let provisioned = try #require(after["secrets"] as? [[String: Any]])
                #expect(
                    provisioned.compactMap { $0["identifier"] as? String } == [
                        "com.fabrikam.mail.license", "com.fabrikam.mail.root", "com.fabrikam.mail.smtp", "com.fabrikam.mail.vpn",
                    ])
                #expect(provisioned.first { $0["identifier"] as? String == "com.fabrikam.mail.smtp" }?["version"] as? String == written.string("version"))
                #expect(after.string("version") != before.string("version"))
                let messages = try await env.store.outboxMessages(tenantId: Fixtures.tenantId, state: nil, limit: 100)
                #expect(
                    messages.contains { (try? (decodeSegment($0.payload, 1)["events"] as? [String: Any])?[SecurityEventTypes.configurationChanged]) != nil })

                let smtp = try await client.mam(.get, "/enrollments/\(id)/secrets/com.fabrikam.mail.smtp", token: token)
                #expect(smtp.status == .ok && smtp.headers[.cacheControl] == "no-store" && !smtp.text.contains(Self.password), "\(smtp.text)")
                #expect(try appKey.open(smtp, enrollmentId: id)["password"] as? String == Self.password)
                #expect(throws: (any Error).self, "another key does not open it") { try InstanceKey().open(smtp, enrollmentId: id) }
                #expect(throws: (any Error).self, "bound to its enrollment") { try appKey.open(smtp, enrollmentId: "another") }
                let opened = try appKey.open(try await client.mam(.get, "/enrollments/\(id)/secrets/com.fabrikam.mail.vpn", token: token), enrollmentId: id)
                let pem = try #require(opened["certificatesPem"] as? String)
                #expect(pem.hasPrefix(vpn.certificate.trimmingCharacters(in: .newlines)), "the leaf first")
                #expect((opened["privateKeyPem"] as? String)?.contains("BEGIN PRIVATE KEY") == true, "PKCS #8")
                #expect(
                    try Certificate.PrivateKey(pemEncoded: try #require(opened["privateKeyPem"] as? String)).publicKey
                        == (try Certificate(pemEncoded: vpn.certificate)).publicKey)

                #expect(try await client.mam(.get, "/enrollments/\(id)/secrets/com.fabrikam.mail.unknown", token: token).status == .notFound)
                let device = try await client.mam(.get, "/enrollments/\(id)/secrets/com.fabrikam.mail.license", token: token)
                #expect(device.status == .conflict && device.text.contains("deviceIdentity"), "\(device.text)")
                // An instance without a key gets nothing sealed.
                let bobId = try await client.becomeCompliant(Fixtures.bob, device: "device-2")
                let keyless = try await client.mam(
                    .get, "/enrollments/\(bobId)/secrets/com.fabrikam.mail.smtp", token: try await client.complianceToken(Fixtures.bob))
                #expect(keyless.status == .conflict && keyless.text.contains("appKeyRequired"), "\(keyless.text)")

                // Neither the database nor the audit log holds the password.
                let data = env.root.appendingPathComponent("data")
                let files = try FileManager.default.contentsOfDirectory(atPath: data.path)
                #expect(files.contains("portcullis.sqlite"), "\(files)")
                for file in files {
                    let bytes = try Data(contentsOf: data.appendingPathComponent(file))
                    #expect(bytes.range(of: Data(Self.password.utf8)) == nil, "\(file) holds the password in clear")
                    #expect(bytes.range(of: Data(vpn.key.split(separator: "\n")[1].utf8)) == nil, "\(file) holds the private key in clear")
                }
                let audit = try await env.store.auditRecords(tenantId: TenantID(Fixtures.tenantId), limit: 100, before: nil)
                let trail = audit.filter { $0.kind == AuditSubject(.appSecretMaterial) }
                #expect(trail.contains { $0.action == .create && $0.documentId == "\(Self.policyId):com.fabrikam.mail.smtp" })
                #expect(
                    trail.contains {
                        $0.action == .deliver && $0.documentId == "\(Self.policyId):com.fabrikam.mail.smtp" && $0.afterText.contains(id)
                            && $0.actor.contains(Fixtures.alice.upn)
                    })
                #expect(!audit.contains { $0.afterText.contains(Self.password) || $0.beforeText.contains(Self.password) })

                // A new password is a new version; removing material unlists it; a wipe stops delivery.
                let rotated = try await client.admin(.put, "\(Self.secrets())/com.fabrikam.mail.smtp", token: admin, json: ["password": Self.password + "2"])
                #expect(rotated.status == .ok && Int(rotated.string("version") ?? "") ?? 0 > Int(written.string("version") ?? "") ?? .max)
                #expect(
                    try appKey.open(try await client.mam(.get, "/enrollments/\(id)/secrets/com.fabrikam.mail.smtp", token: token), enrollmentId: id)["password"]
                        as? String
                        == Self.password + "2")
                #expect(try await client.admin(.delete, "\(Self.secrets())/com.fabrikam.mail.root", token: admin).status == .noContent)
                #expect(try await client.mam(.get, "/enrollments/\(id)/secrets/com.fabrikam.mail.root", token: token).status == .notFound)
                #expect(try await client.admin(.get, "\(Self.secrets())/com.fabrikam.mail.root", token: admin).status == .notFound)
                // A policy that stops declaring a secret drops its material.
                #expect(
                    try await client.admin(
                        .put, "/app-configuration/policies/\(Self.policyId)", token: admin,
                        json: Self.policy(secrets: Array(Self.declared.dropFirst())), headers: [.ifMatch: "*"]
                    ).status == .ok)
                #expect(
                    try await env.store.document(tenantId: TenantID(Fixtures.tenantId), kind: .appSecretMaterial, id: "\(Self.policyId):com.fabrikam.mail.smtp")
                        == nil)
                #expect(try await client.admin(.post, "/enrollments/\(id)/wipe", token: admin).status == .accepted)
                let wiped = try await client.mam(.get, "/enrollments/\(id)/secrets/com.fabrikam.mail.vpn", token: token)
                #expect(wiped.status == .forbidden && wiped["sealed"] == nil && (wiped["commands"] as? [String]) == ["wipe"], "\(wiped.text)")
            }
        }
    }

    @Test("a device identity: a CSR signed by the appKey gets a leaf naming tenant, account and enrollment that chains to GET /{tenant}/pki/ca.pem")
    func deviceIdentity() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                #expect(
                    try await client.admin(.post, "/app-configuration/policies", token: admin, json: Self.policy(secrets: Self.declared)).status == .created)
                let appKey = InstanceKey()
                let id = try await client.becomeCompliant(appKey: appKey)
                let token = try await client.complianceToken()
                let path = "/enrollments/\(id)/identities/com.fabrikam.mail.license"
                let issued = try await client.mam(.post, path, token: token, json: ["csr": try appKey.csr()])
                #expect(issued.status == .ok, "\(issued.text)")
                let chain = try PEMDocument.parseMultiple(pemString: try #require(issued.string("certificatesPem"))).map { try Certificate(pemDocument: $0) }
                let caText = try await client.execute(uri: "/\(Fixtures.tenantId)/pki/ca.pem", method: .get) { String(buffer: $0.body) }
                let ca = try Certificate(pemEncoded: caText)
                #expect(chain.count == 2 && chain[1] == ca)
                #expect(ca.publicKey.isValidSignature(chain[0].signature, for: chain[0]))
                let appSigning = try P256.Signing.PrivateKey(rawRepresentation: appKey.key.rawRepresentation)
                #expect(chain[0].publicKey == Certificate.PublicKey(appSigning.publicKey), "the device's key, certified")
                let subject = "\(chain[0].subject)"
                #expect(subject.contains(Fixtures.alice.upn) && subject.contains(id) && subject.contains(Fixtures.tenantId), "\(subject)")
                #expect(abs(chain[0].notValidAfter.timeIntervalSince(env.clock.now()) - 7 * 86400) < 120, "validityDays")
                #expect(try await client.execute(uri: "/fabrikam.test/pki/ca.pem", method: .get) { String(buffer: $0.body) } == caText, "by domain too")

                let otherKey = try await client.mam(.post, path, token: token, json: ["csr": try InstanceKey().csr()])
                #expect(otherKey.status == .badRequest && otherKey.text.contains("/csr"), "\(otherKey.text)")
                let notIdentity = try await client.mam(
                    .post, "/enrollments/\(id)/identities/com.fabrikam.mail.vpn", token: token, json: ["csr": try appKey.csr()])
                #expect(
                    notIdentity.status == .conflict || notIdentity.status == .notFound,
                    "an uploaded identity (no material yet) is not issued: \(notIdentity.text)")
                let audit = try await env.store.auditRecords(tenantId: TenantID(Fixtures.tenantId), limit: 100, before: nil)
                #expect(audit.contains { $0.action == .issue && $0.afterText.contains(id) })
                #expect(try await client.admin(.post, "/enrollments/\(id)/wipe", token: admin).status == .accepted)
                #expect(
                    try await client.mam(.post, path, token: token, json: ["csr": try appKey.csr()]).status == .forbidden, "a wiped enrollment gets nothing")
            }
        }
    }

    @Test("validation: declarations and material refused with pointers; an appKey that is no P-256 point is refused at enrollment")
    func validation() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                for (secrets, pointer) in [
                    ([["identifier": "a.b", "kind": "password"], ["identifier": "A.B", "kind": "password"]], "/secrets/1/identifier"),
                    ([["identifier": "a.b", "kind": "token"]], "/secrets/0/kind"),
                    ([["identifier": "a/b", "kind": "password"]], "/secrets/0/identifier"),
                    ([["identifier": "a.b", "kind": "password", "validityDays": 3]], "/secrets/0/validityDays"),
                    ([["identifier": "a.b", "kind": "identity"]], "/secrets/0/issuance"),
                    ([["identifier": "a.b", "kind": "identity", "issuance": "device", "validityDays": 0]], "/secrets/0/validityDays"),
                ] as [([[String: Any]], String)] {
                    let refused = try await client.admin(.post, "/app-configuration/policies", token: admin, json: Self.policy(secrets: secrets))
                    #expect(refused.status == .badRequest && refused.text.contains("\"\(pointer)\""), "\(pointer): \(refused.text)")
                }
                #expect(
                    try await client.admin(.post, "/app-configuration/policies", token: admin, json: Self.policy(secrets: Self.declared)).status == .created)
                let root = try TestCertificates.make("root")
                let expired = try TestCertificates.make("old", days: 1, from: Date().addingTimeInterval(-10 * 86400))
                let stranger = try TestCertificates.make("stranger")
                for (identifier, body, pointer) in [
                    ("com.fabrikam.mail.smtp", ["certificatesPem": root.certificate], "/certificatesPem"),
                    ("com.fabrikam.mail.smtp", ["password": ""], "/password"),
                    ("com.fabrikam.mail.root", ["certificatesPem": "not a certificate"], "/certificatesPem"),
                    ("com.fabrikam.mail.root", ["certificatesPem": expired.certificate], "/certificatesPem"),
                    ("com.fabrikam.mail.vpn", ["certificatesPem": root.certificate, "privateKeyPem": stranger.key], "/privateKeyPem"),
                    ("com.fabrikam.mail.vpn", ["certificatesPem": root.certificate], "/privateKeyPem"),
                    ("com.fabrikam.mail.vpn", ["pkcs12": "AAAA", "passphrase": "x"], "/pkcs12"),
                    ("com.fabrikam.mail.license", ["certificatesPem": root.certificate], ""),
                ] as [(String, [String: Any], String)] {
                    let refused = try await client.admin(.put, "\(Self.secrets())/\(identifier)", token: admin, json: body)
                    #expect(refused.status == .badRequest && refused.text.contains("\"pointer\":\"\(pointer)\""), "\(identifier) \(pointer): \(refused.text)")
                    #expect(!refused.text.contains("PRIVATE KEY"), "a refusal never echoes material")
                }
                #expect(
                    try await client.admin(.put, "\(Self.secrets())/com.fabrikam.mail.undeclared", token: admin, json: ["password": "x"]).status == .notFound)
                #expect(
                    try await client.admin(.put, "\(Self.secrets("c0000000-0000-4000-8000-00000000ffff"))/a.b", token: admin, json: ["password": "x"]).status
                        == .notFound)

                let token = try await client.complianceToken()
                var body = Device.body()
                var jwk = InstanceKey().jwk
                jwk["y"] = jwk["x"]
                body["appKey"] = jwk
                let refused = try await client.mam(.post, "/enrollments", token: token, json: body)
                #expect(refused.status == .badRequest && refused.text.contains("/appKey"), "\(refused.text)")
            }
        }
    }
}
