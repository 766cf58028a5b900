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
import Testing

/// Model-restricted strengths (PROTOCOL §12.1, issue 43 item 3): a passkey's model is known only when its packed
/// attestation chain verified to a root the tenant trusts — an admin's upload or the operator's FIDO metadata BLOB.
@Suite("Passkey attestation for model-restricted strengths (PROTOCOL §12.1)")
struct PasskeyAttestationTests {
    static let model = "adce0002-35bc-c60a-648b-0b25f1f05503"
    static let rootsPath = "/authentication-methods-policy/fido2/attestation-roots"

    /// A custom strength allowing passkeys of `model` only, required of Bob on the mail API.
    static func requireModel(_ client: some TestClientProtocol, _ admin: String) async throws {
        let made = try await client.admin(
            .post, "/authentication-strengths", token: admin,
            json: [
                "displayName": "Our model", "allowedCombinations": ["fido2"],
                "combinationConfigurations": [["allowedAAGuids": [model], "appliesToCombinations": ["fido2"]]],
            ])
        let id = try #require(made.string("id"), "\(made.text)")
        #expect(try await Passkeys.requireStrength(client, admin, strengthId: id).status == .created)
    }

    /// A passkey sign-in with `authenticator` in a new browser: the code, or the page that refused.
    static func signIn(_ client: some TestClientProtocol, _ authenticator: inout SoftwareAuthenticator) async throws -> Page {
        authenticator.signCount += 1
        let browser = Browser()
        let page = try await browser.get(client, Authorize.query())
        return try await browser.post(client, "/\(Fixtures.domain)/oauth2/v2.0/authorize/passkey", try Passkeys.assertion(page, authenticator))
    }

    /// The admin listing's passkeys by display name: (attestationLevel, model).
    static func listed(_ client: some TestClientProtocol, _ admin: String) async throws -> [String: (String, String?)] {
        let methods = try await client.admin(.get, "/users/\(Fixtures.bob.id)/authentication-methods", token: admin)
        var found: [String: (String, String?)] = [:]
        for method in methods.json["value"] as? [[String: Any]] ?? [] where method["@odata.type"] as? String == "#microsoft.graph.fido2AuthenticationMethod" {
            found[method["id"] as? String ?? ""] = (method["attestationLevel"] as? String ?? "", method["model"] as? String)
        }
        return found
    }

    @Test("an unattested passkey claiming the model does not meet the strength; one whose chain verifies to an admin's root does; the roots API")
    func adminRoot() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let vendor = try AttestationCA(name: "Vendor attestation root")
                let browser = Browser()
                var claiming = Passkeys.authenticator()
                #expect(try await Passkeys.registerForBob(client, browser, env.clock, claiming).html.contains("Passkey added"))

                // The admin trusts the vendor's root.
                let created = try await client.admin(.post, Self.rootsPath, token: admin, json: ["displayName": "Vendor", "certificate": vendor.pem])
                #expect(created.status == .created && created.string("sha256Thumbprint")?.count == 64, "\(created.text)")
                let rootId = try #require(created.string("id"))
                let list = try await client.admin(.get, Self.rootsPath, token: admin)
                #expect((list.json["value"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [rootId], "\(list.text)")
                let refused = try await client.admin(
                    .post, Self.rootsPath, token: admin,
                    json: ["displayName": "Bad", "certificate": "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----"])
                #expect(refused.status == .badRequest && refused.text.contains("/certificate"), "\(refused.text)")

                var attested = Passkeys.authenticator()
                let attestationKey = P256.Signing.PrivateKey()
                let certificate = try vendor.attestationCertificate(key: attestationKey, aaguid: attested.aaguid)
                let added = try await Passkeys.addOnSecurityInfo(
                    client, browser, attested, attestation: .packedX5C(certificate: certificate, key: attestationKey))
                #expect(added.html.contains("Passkey added"), "\(added.html)")
                // A chain from a root nobody trusts: the model stays unknown.
                var stranger = Passkeys.authenticator()
                let strangers = try AttestationCA(name: "Unknown root").attestationCertificate(key: attestationKey, aaguid: stranger.aaguid)
                _ = try await Passkeys.addOnSecurityInfo(client, browser, stranger, attestation: .packedX5C(certificate: strangers, key: attestationKey))

                let passkeys = try await env.store.passkeys(tenantId: TenantID(Fixtures.tenantId), userId: ObjectID(Fixtures.bob.id))
                let levels = try await Self.listed(client, admin)
                func level(_ authenticator: SoftwareAuthenticator) -> String? {
                    passkeys.first { Array($0.credentialId) == authenticator.credentialId }.flatMap { levels[$0.id.rawValue]?.0 }
                }
                #expect(level(claiming) == "notAttested" && level(attested) == "attested" && level(stranger) == "notAttested", "\(levels)")

                try await Self.requireModel(client, admin)
                let unknown = try await Self.signIn(client, &claiming)
                #expect(unknown.delivered["code"] == nil && unknown.html.contains("requires a passkey"), "an unattested passkey: \(unknown.html)")
                let untrusted = try await Self.signIn(client, &stranger)
                #expect(untrusted.delivered["code"] == nil, "a chain to an untrusted root: \(untrusted.html)")
                let known = try await Self.signIn(client, &attested)
                #expect(known.delivered["code"] != nil, "the attested model meets the strength: \(known.status) \(known.html)")

                // Removing the root: listed no more (passkeys keep the attestation they registered with, as in Entra).
                let deleted = try await client.admin(.delete, "\(Self.rootsPath)/\(rootId)", token: admin, headers: [.ifMatch: "*"])
                #expect(deleted.status == .noContent, "\(deleted.text)")
                #expect((try await client.admin(.get, Self.rootsPath, token: admin).json["value"] as? [Any])?.isEmpty == true)
            }
        }
    }

    @Test("the operator's FIDO metadata BLOB: a model's chain to the root it lists is attested, with the model's name; a distrusted model's is not")
    func metadataBlob() async throws {
        let fido = try AttestationCA(name: "Test metadata root")
        let vendor = try AttestationCA(name: "Vendor attestation root")
        let revoked = try AttestationCA(name: "Revoked vendor root")
        let revokedModel = "11111111-2222-3333-4444-555555555555"
        let blob = try fido.metadataBLOB(entries: [
            AttestationCA.metadataEntry(aaguid: Self.model, description: "Test Key 5", root: vendor),
            AttestationCA.metadataEntry(aaguid: revokedModel, description: "Broken Key", root: revoked, statuses: ["REVOKED"]),
        ])
        let metadata = try await FidoMetadata.load(blob: blob, rootPEM: fido.pem, at: Date())
        try await withTestEnvironment(configure: { $0.passkeyMetadata = metadata }) { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let browser = Browser()
                let attestationKey = P256.Signing.PrivateKey()
                var listedModel = Passkeys.authenticator()
                let certificate = try vendor.attestationCertificate(key: attestationKey, aaguid: listedModel.aaguid)
                _ = try await Passkeys.registerForBob(
                    client, browser, env.clock, listedModel, attestation: .packedX5C(certificate: certificate, key: attestationKey))
                var distrusted = Passkeys.authenticator()
                distrusted.aaguid = withUnsafeBytes(of: UUID(uuidString: revokedModel)!.uuid) { Array($0) }
                let revokedCertificate = try revoked.attestationCertificate(key: attestationKey, aaguid: distrusted.aaguid)
                _ = try await Passkeys.addOnSecurityInfo(
                    client, browser, distrusted, attestation: .packedX5C(certificate: revokedCertificate, key: attestationKey))

                let passkeys = try await env.store.passkeys(tenantId: TenantID(Fixtures.tenantId), userId: ObjectID(Fixtures.bob.id))
                let listed = try await Self.listed(client, admin)
                let good = try #require(passkeys.first { Array($0.credentialId) == listedModel.credentialId })
                let bad = try #require(passkeys.first { Array($0.credentialId) == distrusted.credentialId })
                #expect(listed[good.id.rawValue]?.0 == "attested" && listed[good.id.rawValue]?.1 == "Test Key 5", "\(listed)")
                #expect(listed[bad.id.rawValue]?.0 == "notAttested" && listed[bad.id.rawValue]?.1 == nil, "\(listed)")

                try await Self.requireModel(client, admin)
                #expect(try await Self.signIn(client, &listedModel).delivered["code"] != nil)
            }
        }
    }
}
