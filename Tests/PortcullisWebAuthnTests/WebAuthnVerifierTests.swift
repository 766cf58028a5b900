import Crypto
import CryptoExtras
import Foundation
import PortcullisCore
import PortcullisTesting
import PortcullisTokens
import PortcullisWebAuthnFormat
import SwiftASN1
import Testing
import X509

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
        // 'none' with something in its statement.
        refusal(.attestation) { () throws(WebAuthnError) in
            let clientData = authenticator.clientData(type: "webauthn.create", challenge: challenge)
            let object = CBOR.map([
                .init(.text("fmt"), .text("none")), .init(.text("attStmt"), .map([.init(.text("sig"), .bytes([1]))])),
                .init(.text("authData"), .bytes(authenticator.authenticatorData(attested: true))),
            ])
            _ = try verifier.verifyRegistration(clientDataJSON: clientData, attestationObject: object.encoded, challenge: challenge)
        }
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
