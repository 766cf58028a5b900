import Crypto
import CryptoExtras
import Foundation
import PortcullisTokens
import PortcullisWebAuthnFormat
import SwiftASN1
import Testing
import X509

/// A software authenticator that builds ceremonies by hand (WebAuthn L3 §6), so that every check of §7.1 and §7.2
/// has a test that fails when the check is removed.
struct SoftwareAuthenticator {
    enum Key {
        case p256(P256.Signing.PrivateKey)
        case ed25519(Curve25519.Signing.PrivateKey)
        case rsa(_RSA.Signing.PrivateKey)

        var cose: CBOR {
            switch self {
            case .p256(let key):
                let raw = Array(key.publicKey.rawRepresentation)
                return .map([
                    .init(CBOR(1), CBOR(2)), .init(CBOR(3), CBOR(-7)), .init(CBOR(-1), CBOR(1)), .init(CBOR(-2), .bytes(Array(raw[0..<32]))),
                    .init(CBOR(-3), .bytes(Array(raw[32..<64]))),
                ])
            case .ed25519(let key):
                return .map([
                    .init(CBOR(1), CBOR(1)), .init(CBOR(3), CBOR(-8)), .init(CBOR(-1), CBOR(6)),
                    .init(CBOR(-2), .bytes(Array(key.publicKey.rawRepresentation))),
                ])
            case .rsa(let key):
                let primitives = try! key.publicKey.getKeyPrimitives()
                return .map([
                    .init(CBOR(1), CBOR(3)), .init(CBOR(3), CBOR(-257)), .init(CBOR(-1), .bytes(Array(primitives.modulus))),
                    .init(CBOR(-2), .bytes(Array(primitives.publicExponent))),
                ])
            }
        }

        var algorithm: Int {
            switch self {
            case .p256: -7
            case .ed25519: -8
            case .rsa: -257
            }
        }

        func sign(_ data: [UInt8]) -> [UInt8] {
            switch self {
            case .p256(let key): Array(try! key.signature(for: data).derRepresentation)
            case .ed25519(let key): Array(try! key.signature(for: data))
            case .rsa(let key): Array(try! key.signature(for: data, padding: .insecurePKCS1v1_5).rawRepresentation)
            }
        }
    }

    var key: Key = .p256(P256.Signing.PrivateKey())
    var rpId = "login.contoso.example"
    var origin = "https://login.contoso.example"
    var credentialId: [UInt8] = Array((0..<32).map { UInt8($0) })
    var aaguid: [UInt8] = [0xad, 0xce, 0x00, 0x02, 0x35, 0xbc, 0xc6, 0x0a, 0x64, 0x8b, 0x0b, 0x25, 0xf1, 0xf0, 0x55, 0x03]
    var flags: AuthenticatorData.Flags = [.userPresent, .userVerified]
    var signCount: UInt32 = 1

    func clientData(type: String, challenge: [UInt8], origin: String? = nil, crossOrigin: Bool = false) -> [UInt8] {
        Array(
            #"{"type":"\#(type)","challenge":"\#(WebAuthnVerifier.base64URL(challenge))","origin":"\#(origin ?? self.origin)","crossOrigin":\#(crossOrigin)}"#
                .utf8)
    }

    func authenticatorData(attested: Bool, rpId: String? = nil, coseKey: CBOR? = nil) -> [UInt8] {
        var data = Array(SHA256.hash(data: Data((rpId ?? self.rpId).utf8)))
        data.append((attested ? flags.union(.attestedCredentialData) : flags).rawValue)
        data += withUnsafeBytes(of: signCount.bigEndian) { Array($0) }
        if attested {
            data += aaguid + [UInt8(credentialId.count >> 8), UInt8(credentialId.count & 0xff)] + credentialId + (coseKey ?? key.cose).encoded
        }
        return data
    }

    /// `none`, `packed` self (signed by the credential key), or `packed` with `x5c` (signed by `attestationKey`).
    enum Attestation {
        case none
        case packedSelf(algorithm: Int? = nil)
        case packedX5C(certificate: [UInt8], key: P256.Signing.PrivateKey)
    }

    func attestationObject(_ attestation: Attestation, clientData: [UInt8], authenticatorData: [UInt8]? = nil, format: String? = nil) -> [UInt8] {
        let data = authenticatorData ?? self.authenticatorData(attested: true)
        let signed = data + Array(SHA256.hash(data: clientData))
        let statement: CBOR
        let fmt: String
        switch attestation {
        case .none:
            fmt = "none"
            statement = .map([])
        case .packedSelf(let algorithm):
            fmt = "packed"
            statement = .map([.init(.text("alg"), CBOR(algorithm ?? key.algorithm)), .init(.text("sig"), .bytes(key.sign(signed)))])
        case .packedX5C(let certificate, let attestationKey):
            fmt = "packed"
            statement = .map([
                .init(.text("alg"), CBOR(-7)), .init(.text("sig"), .bytes(Array(try! attestationKey.signature(for: signed).derRepresentation))),
                .init(.text("x5c"), .array([.bytes(certificate)])),
            ])
        }
        return CBOR.map([.init(.text("fmt"), .text(format ?? fmt)), .init(.text("attStmt"), statement), .init(.text("authData"), .bytes(data))]).encoded
    }

    /// An attestation certificate for `key`, signed by a throwaway CA (WebAuthn L3 §8.2.1 requirements unless told).
    static func attestationCertificate(
        key: P256.Signing.PrivateKey, unit: String = "Authenticator Attestation", isCA: Bool = false, aaguid: [UInt8]? = nil
    ) throws -> [UInt8] {
        let ca = P256.Signing.PrivateKey()
        let issuer = try DistinguishedName { CommonName("Test attestation root") }
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
        let now = Date()
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: now.addingTimeInterval(-60), notValidAfter: now.addingTimeInterval(86400), issuer: issuer, subject: subject,
            signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions, issuerPrivateKey: Certificate.PrivateKey(ca))
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return serializer.serializedBytes
    }
}

@Suite("WebAuthn ceremonies (L3 §7.1, §7.2)")
struct WebAuthnVerifierTests {
    let verifier = WebAuthnVerifier(relyingParty: RelyingParty(baseURL: "https://login.contoso.example")!)
    let challenge: [UInt8] = Array((0..<32).map { UInt8(255 - $0) })

    func register(
        _ authenticator: SoftwareAuthenticator, _ attestation: SoftwareAuthenticator.Attestation = .none
    ) throws(WebAuthnError)
        -> RegisteredCredential
    {
        let clientData = authenticator.clientData(type: "webauthn.create", challenge: challenge)
        return try verifier.verifyRegistration(
            clientDataJSON: clientData, attestationObject: authenticator.attestationObject(attestation, clientData: clientData), challenge: challenge)
    }

    func refusal(_ step: WebAuthnError.Step, _ body: () throws(WebAuthnError) -> Void) {
        do {
            try body()
            Issue.record("accepted; expected a refusal at \(step)")
        } catch {
            #expect(error.step == step, "\(error)")
        }
    }

    @Test("the relying party from the base URL: RP ID is the host, the origin is scheme, host and a non-default port")
    func relyingParty() {
        #expect(
            RelyingParty(baseURL: "https://Login.Contoso.example/base") == RelyingParty(id: "login.contoso.example", origin: "https://login.contoso.example"))
        #expect(
            RelyingParty(baseURL: "https://login.contoso.example:443") == RelyingParty(id: "login.contoso.example", origin: "https://login.contoso.example"))
        #expect(RelyingParty(baseURL: "http://localhost:8080") == RelyingParty(id: "localhost", origin: "http://localhost:8080"))
        #expect(RelyingParty(baseURL: "not a url") == nil)
    }

    @Test("registration with attestation none, for ES256, EdDSA and RS256 keys: the credential, its AAGUID and backup flags")
    func registrationNone() throws {
        for key in [SoftwareAuthenticator.Key.p256(.init()), .ed25519(.init()), .rsa(try _RSA.Signing.PrivateKey(keySize: .bits2048))] {
            var authenticator = SoftwareAuthenticator(key: key)
            authenticator.flags = [.userPresent, .userVerified, .backupEligible, .backedUp]
            let credential = try register(authenticator)
            #expect(credential.credentialId == authenticator.credentialId)
            #expect(credential.algorithm.rawValue == key.algorithm)
            #expect(credential.aaguid == UUID(uuidString: "ADCE0002-35BC-C60A-648B-0B25F1F05503"))
            #expect(credential.backupEligible && credential.backedUp && credential.attestation == .none && credential.signCount == 1)
            #expect(credential.publicKey == key.cose.encoded)
        }
    }

    @Test("packed self attestation: verified with the credential's key and algorithm; another algorithm or other signed data is refused")
    func packedSelf() throws {
        let authenticator = SoftwareAuthenticator()
        #expect(try register(authenticator, .packedSelf()).attestation == .self)
        refusal(.attestation) { () throws(WebAuthnError) in _ = try register(authenticator, .packedSelf(algorithm: -257)) }
        let clientData = authenticator.clientData(type: "webauthn.create", challenge: challenge)
        let otherClientData = authenticator.clientData(type: "webauthn.create", challenge: challenge, origin: "https://login.contoso.example ")
        // Signed over other client data than the one sent.
        refusal(.attestation) { () throws(WebAuthnError) in
            _ = try verifier.verifyRegistration(
                clientDataJSON: clientData, attestationObject: authenticator.attestationObject(.packedSelf(), clientData: otherClientData), challenge: challenge
            )
        }
    }

    @Test("packed x5c attestation: signature by the certificate's key, OU 'Authenticator Attestation', not a CA, AAGUID extension matching")
    func packedX5C() throws {
        let authenticator = SoftwareAuthenticator()
        let attestationKey = P256.Signing.PrivateKey()
        let good = try SoftwareAuthenticator.attestationCertificate(key: attestationKey, aaguid: authenticator.aaguid)
        let credential = try register(authenticator, .packedX5C(certificate: good, key: attestationKey))
        #expect(credential.attestation == .basic && credential.attestationChain == [good])
        refusal(.attestation) { () throws(WebAuthnError) in _ = try register(authenticator, .packedX5C(certificate: good, key: P256.Signing.PrivateKey())) }
        let wrongUnit = try SoftwareAuthenticator.attestationCertificate(key: attestationKey, unit: "Something else")
        refusal(.attestation) { () throws(WebAuthnError) in _ = try register(authenticator, .packedX5C(certificate: wrongUnit, key: attestationKey)) }
        let authority = try SoftwareAuthenticator.attestationCertificate(key: attestationKey, isCA: true)
        refusal(.attestation) { () throws(WebAuthnError) in _ = try register(authenticator, .packedX5C(certificate: authority, key: attestationKey)) }
        let otherModel = try SoftwareAuthenticator.attestationCertificate(key: attestationKey, aaguid: Array(repeating: 7, count: 16))
        refusal(.attestation) { () throws(WebAuthnError) in _ = try register(authenticator, .packedX5C(certificate: otherModel, key: attestationKey)) }
        refusal(.attestation) { () throws(WebAuthnError) in
            _ = try register(authenticator, .packedX5C(certificate: [0x30, 0x03, 0x02, 0x01, 0x01], key: attestationKey))
        }
    }

    @Test("registration refusals, one per check: type, challenge, origin, cross-origin, RP ID hash, UP, UV, format, algorithm, BS without BE")
    func registrationRefusals() throws {
        let authenticator = SoftwareAuthenticator()
        func attempt(
            _ authenticator: SoftwareAuthenticator, type: String = "webauthn.create", challenge: [UInt8]? = nil, origin: String? = nil,
            crossOrigin: Bool = false,
            authenticatorData: [UInt8]? = nil, format: String? = nil
        ) throws(WebAuthnError) {
            let clientData = authenticator.clientData(type: type, challenge: challenge ?? self.challenge, origin: origin, crossOrigin: crossOrigin)
            _ = try verifier.verifyRegistration(
                clientDataJSON: clientData,
                attestationObject: authenticator.attestationObject(.none, clientData: clientData, authenticatorData: authenticatorData, format: format),
                challenge: self.challenge)
        }
        refusal(.type) { () throws(WebAuthnError) in try attempt(authenticator, type: "webauthn.get") }
        refusal(.challenge) { () throws(WebAuthnError) in try attempt(authenticator, challenge: Array(repeating: 1, count: 32)) }
        refusal(.origin) { () throws(WebAuthnError) in try attempt(authenticator, origin: "https://login.contoso.example.evil") }
        refusal(.origin) { () throws(WebAuthnError) in try attempt(authenticator, origin: "http://login.contoso.example") }
        refusal(.crossOrigin) { () throws(WebAuthnError) in try attempt(authenticator, crossOrigin: true) }
        refusal(.rpIdHash) { () throws(WebAuthnError) in
            try attempt(authenticator, authenticatorData: authenticator.authenticatorData(attested: true, rpId: "contoso.example"))
        }
        var absent = authenticator
        absent.flags = [.userVerified]
        refusal(.userPresent) { () throws(WebAuthnError) in try attempt(absent) }
        var unverified = authenticator
        unverified.flags = [.userPresent]
        refusal(.userVerified) { () throws(WebAuthnError) in try attempt(unverified) }
        refusal(.attestation) { () throws(WebAuthnError) in try attempt(authenticator, format: "tpm") }
        var backedUpOnly = authenticator
        backedUpOnly.flags = [.userPresent, .userVerified, .backedUp]
        refusal(.format) { () throws(WebAuthnError) in try attempt(backedUpOnly) }
        // ES384 (-35) is not accepted.
        let es384: CBOR = .map([
            .init(CBOR(1), CBOR(2)), .init(CBOR(3), CBOR(-35)), .init(CBOR(-1), CBOR(2)), .init(CBOR(-2), .bytes(Array(repeating: 1, count: 48))),
        ])
        refusal(.format) { () throws(WebAuthnError) in
            try attempt(authenticator, authenticatorData: authenticator.authenticatorData(attested: true, coseKey: es384))
        }
        refusal(.format) { () throws(WebAuthnError) in
            _ = try verifier.verifyRegistration(clientDataJSON: Array("{".utf8), attestationObject: [0xa0], challenge: challenge)
        }
        refusal(.challenge) { () throws(WebAuthnError) in
            let clientData = authenticator.clientData(type: "webauthn.create", challenge: [])
            _ = try verifier.verifyRegistration(
                clientDataJSON: clientData, attestationObject: authenticator.attestationObject(.none, clientData: clientData), challenge: [])
        }
    }

    func assert(
        _ authenticator: SoftwareAuthenticator, registered: RegisteredCredential, storedSignCount: UInt32 = 0, signedOver clientDataOverride: [UInt8]? = nil,
        type: String = "webauthn.get"
    ) throws(WebAuthnError) -> VerifiedAssertion {
        let clientData = authenticator.clientData(type: type, challenge: challenge)
        let data = authenticator.authenticatorData(attested: false)
        let signature = authenticator.key.sign(data + Array(SHA256.hash(data: clientDataOverride ?? clientData)))
        return try verifier.verifyAssertion(
            clientDataJSON: clientData, authenticatorData: data, signature: signature, challenge: challenge, publicKey: registered.publicKey,
            storedSignCount: storedSignCount, backupEligible: registered.backupEligible)
    }

    @Test("assertions verify for ES256, EdDSA and RS256; a signature over other data is refused")
    func assertions() throws {
        for key in [SoftwareAuthenticator.Key.p256(.init()), .ed25519(.init()), .rsa(try _RSA.Signing.PrivateKey(keySize: .bits2048))] {
            var authenticator = SoftwareAuthenticator(key: key)
            let registered = try register(authenticator)
            authenticator.signCount = 5
            #expect(try assert(authenticator, registered: registered, storedSignCount: 1).signCount == 5)
            refusal(.signature) { () throws(WebAuthnError) in
                _ = try assert(authenticator, registered: registered, storedSignCount: 1, signedOver: Array("other".utf8))
            }
        }
    }

    @Test("the sign count: refused when it does not move forward (a clone); authenticators that never count (0 and 0) pass")
    func signCount() throws {
        var authenticator = SoftwareAuthenticator()
        let registered = try register(authenticator)
        authenticator.signCount = 7
        refusal(.signCount) { () throws(WebAuthnError) in _ = try assert(authenticator, registered: registered, storedSignCount: 7) }
        refusal(.signCount) { () throws(WebAuthnError) in _ = try assert(authenticator, registered: registered, storedSignCount: 9) }
        authenticator.signCount = 0
        refusal(.signCount) { () throws(WebAuthnError) in _ = try assert(authenticator, registered: registered, storedSignCount: 3) }
        #expect(try assert(authenticator, registered: registered, storedSignCount: 0).signCount == 0)
    }

    @Test("assertion refusals: the create type, UV missing, another RP, backup eligibility changed, a stored key that is not COSE")
    func assertionRefusals() throws {
        var authenticator = SoftwareAuthenticator()
        let registered = try register(authenticator)
        refusal(.type) { () throws(WebAuthnError) in _ = try assert(authenticator, registered: registered, type: "webauthn.create") }
        authenticator.flags = [.userPresent]
        refusal(.userVerified) { () throws(WebAuthnError) in _ = try assert(authenticator, registered: registered) }
        authenticator.flags = [.userPresent, .userVerified, .backupEligible]
        refusal(.backupEligibility) { () throws(WebAuthnError) in _ = try assert(authenticator, registered: registered) }
        authenticator.flags = [.userPresent, .userVerified]
        authenticator.rpId = "evil.example"
        refusal(.rpIdHash) { () throws(WebAuthnError) in _ = try assert(authenticator, registered: registered) }
        refusal(.credential) { () throws(WebAuthnError) in
            _ = try verifier.verifyAssertion(
                clientDataJSON: authenticator.clientData(type: "webauthn.get", challenge: challenge),
                authenticatorData: SoftwareAuthenticator().authenticatorData(attested: false), signature: [], challenge: challenge, publicKey: [0xa0],
                storedSignCount: 0, backupEligible: false)
        }
    }
}
