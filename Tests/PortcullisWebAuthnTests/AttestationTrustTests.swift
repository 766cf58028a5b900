import Crypto
import Foundation
import PortcullisCore
import PortcullisTesting
import PortcullisTokens
import PortcullisWebAuthnFormat
import Testing

/// Which attestations make a passkey's model known (PROTOCOL §12.1): a packed `x5c` chain verified to an admin's root
/// or to the metadata BLOB's root for the AAGUID; a BLOB only when it verifies to its root.
@Suite("Attestation trust and the FIDO metadata BLOB (PROTOCOL §12.1)")
struct AttestationTrustTests {
    let verifier = WebAuthnVerifier(relyingParty: RelyingParty(baseURL: "https://login.contoso.example")!)
    let challenge: [UInt8] = Array(repeating: 7, count: 32)
    static let aaguidText = "adce0002-35bc-c60a-648b-0b25f1f05503"

    func register(_ authenticator: SoftwareAuthenticator, _ attestation: SoftwareAuthenticator.Attestation) throws -> RegisteredCredential {
        let clientData = authenticator.clientData(type: "webauthn.create", challenge: challenge)
        return try verifier.verifyRegistration(
            clientDataJSON: clientData, attestationObject: authenticator.attestationObject(attestation, clientData: clientData), challenge: challenge)
    }

    func root(_ ca: AttestationCA) throws -> FidoAttestationRoot {
        try FidoAttestationRoot.parse(
            .object(["displayName": .string("Vendor"), "certificate": .string(ca.pem)]), others: [], generatedId: UUID().uuidString, at: Date())
    }

    @Test("a chain to an admin's root is attested; to another root, self or none it is not; no roots, nothing is")
    func adminRoots() async throws {
        let vendor = try AttestationCA(name: "Vendor attestation root")
        let stranger = try AttestationCA(name: "Someone else's root")
        let authenticator = SoftwareAuthenticator()
        let attestationKey = P256.Signing.PrivateKey()
        let issued = try vendor.attestationCertificate(key: attestationKey, aaguid: authenticator.aaguid)
        let credential = try register(authenticator, .packedX5C(certificate: issued, key: attestationKey))
        #expect(credential.attestation == .basic)
        let trust = AttestationTrust(metadata: .empty, tenantRoots: [try root(vendor)])
        #expect(await trust.attestation(of: credential, at: Date()) == .attested)
        #expect(await AttestationTrust(metadata: .empty, tenantRoots: [try root(stranger)]).attestation(of: credential, at: Date()) == .basic)
        #expect(await AttestationTrust(metadata: .empty, tenantRoots: []).attestation(of: credential, at: Date()) == .basic)
        // Past the attestation certificate's validity the chain no longer verifies.
        #expect(await trust.attestation(of: credential, at: Date().addingTimeInterval(3 * 86400)) == .basic)
        let strangers = try stranger.attestationCertificate(key: attestationKey, aaguid: authenticator.aaguid)
        #expect(await trust.attestation(of: try register(authenticator, .packedX5C(certificate: strangers, key: attestationKey)), at: Date()) == .basic)
        #expect(await trust.attestation(of: try register(authenticator, .packedSelf()), at: Date()) == .self)
        #expect(await trust.attestation(of: try register(authenticator, .none), at: Date()) == .none)
    }

    @Test("a BLOB verified to its root: the model's root attests its AAGUID only; a distrusting status, a tampered BLOB or another root: not")
    func metadataBlob() async throws {
        let fido = try AttestationCA(name: "Test metadata root")
        let vendor = try AttestationCA(name: "Vendor attestation root")
        let revokedVendor = try AttestationCA(name: "Revoked vendor root")
        let revokedAAGUID = "11111111-2222-3333-4444-555555555555"
        let blob = try fido.metadataBLOB(
            entries: [
                AttestationCA.metadataEntry(aaguid: Self.aaguidText, description: "Test Key 5", root: vendor),
                AttestationCA.metadataEntry(
                    aaguid: revokedAAGUID, description: "Broken Key", root: revokedVendor, statuses: ["FIDO_CERTIFIED", "ATTESTATION_KEY_COMPROMISE"]),
                ["attestationCertificateKeyIdentifiers": ["abc"], "statusReports": [] as [Any]],  // a U2F entry: no AAGUID
            ], number: 42, nextUpdate: "2030-06-01")
        let metadata = try await FidoMetadata.load(blob: blob, rootPEM: fido.pem, at: Date())
        #expect(metadata.serial == 42 && metadata.authenticators.count == 2)
        #expect(metadata.nextUpdate.map { ISO8601.string($0) } == "2030-06-01T00:00:00Z")
        let model = try #require(metadata.authenticators[UUID(uuidString: Self.aaguidText)!])
        #expect(model.description == "Test Key 5" && !model.distrusted)
        #expect(metadata.authenticators[UUID(uuidString: revokedAAGUID)!]?.distrusted == true)

        let attestationKey = P256.Signing.PrivateKey()
        var authenticator = SoftwareAuthenticator()
        let trust = AttestationTrust(metadata: metadata, tenantRoots: [])
        let issued = try vendor.attestationCertificate(key: attestationKey, aaguid: authenticator.aaguid)
        #expect(await trust.attestation(of: try register(authenticator, .packedX5C(certificate: issued, key: attestationKey)), at: Date()) == .attested)
        // The vendor's root vouches for its own model only: another AAGUID signed by it is not attested.
        authenticator.aaguid = Self.bytes("99999999-2222-3333-4444-555555555555")
        let otherModel = try vendor.attestationCertificate(key: attestationKey, aaguid: authenticator.aaguid)
        #expect(await trust.attestation(of: try register(authenticator, .packedX5C(certificate: otherModel, key: attestationKey)), at: Date()) == .basic)
        // A model the BLOB distrusts.
        authenticator.aaguid = Self.bytes(revokedAAGUID)
        let revoked = try revokedVendor.attestationCertificate(key: attestationKey, aaguid: authenticator.aaguid)
        #expect(await trust.attestation(of: try register(authenticator, .packedX5C(certificate: revoked, key: attestationKey)), at: Date()) == .basic)

        await #expect(throws: FidoMetadataError.self) { _ = try await FidoMetadata.load(blob: blob, rootPEM: vendor.pem, at: Date()) }
        let tampered = try fido.metadataBLOB(entries: [], tamper: true)
        await #expect(throws: FidoMetadataError.self) { _ = try await FidoMetadata.load(blob: tampered, rootPEM: fido.pem, at: Date()) }
        await #expect(throws: FidoMetadataError.self) {
            _ = try await FidoMetadata.load(blob: blob, rootPEM: fido.pem, at: Date().addingTimeInterval(3 * 86400))
        }
        // Without a root named, FIDO's own (GlobalSign Root CA – R3): this test BLOB does not verify to it.
        await #expect(throws: FidoMetadataError.self) { _ = try await FidoMetadata.load(blob: blob, at: Date()) }
    }

    @Test("an admin's root: one PEM CA certificate, not expired, each once, at most 100; shown back as the PEM uploaded")
    func rootValidation() throws {
        let vendor = try AttestationCA()
        let stored = try root(vendor)
        #expect(stored.pem.trimmingCharacters(in: .whitespacesAndNewlines) == vendor.pem.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(stored.subject.contains("Test attestation root") && stored.sha256Thumbprint.count == 64)
        func problems(_ body: [String: JSONValue], others: [FidoAttestationRoot] = []) -> [String] {
            do {
                _ = try FidoAttestationRoot.parse(.object(body), others: others, generatedId: UUID().uuidString, at: Date())
                return []
            } catch {
                return error.problems.map(\.pointer)
            }
        }
        #expect(problems(["displayName": .string("x"), "certificate": .string("not a certificate")]) == ["/certificate"])
        let leaf = try vendor.attestationCertificate(key: P256.Signing.PrivateKey())
        let leafPEM = "-----BEGIN CERTIFICATE-----\n\(Data(leaf).base64EncodedString(options: .lineLength64Characters))\n-----END CERTIFICATE-----\n"
        #expect(problems(["displayName": .string("x"), "certificate": .string(leafPEM)]) == ["/certificate"], "a leaf is not a root")
        #expect(problems(["displayName": .string("x"), "certificate": .string(vendor.pem)], others: [stored]) == ["/certificate"], "the same twice")
        let expired = try AttestationCA(notValidAfter: Date().addingTimeInterval(-1))
        #expect(problems(["displayName": .string("x"), "certificate": .string(expired.pem)]) == ["/certificate"])
        #expect(problems(["certificate": .string(vendor.pem)]) == ["/displayName"])
        #expect(problems(["displayName": .string("x"), "certificate": .string(vendor.pem), "extra": .bool(true)]) == ["/extra"])
        let full = (0..<FidoAttestationRoot.perTenant).map { index in
            FidoAttestationRoot(id: UUID().uuidString, displayName: "\(index)", certificate: "", subject: "", sha256Thumbprint: "\(index)", notAfter: Date())
        }
        #expect(problems(["displayName": .string("x"), "certificate": .string(vendor.pem)], others: full) == [""])
    }

    static func bytes(_ uuid: String) -> [UInt8] {
        let value = UUID(uuidString: uuid)!.uuid
        return withUnsafeBytes(of: value) { Array($0) }
    }
}
