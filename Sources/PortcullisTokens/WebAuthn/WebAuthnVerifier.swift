import Crypto
import CryptoExtras
public import Foundation
import PortcullisAPI
public import PortcullisCore
public import PortcullisWebAuthnFormat
import SwiftASN1
import X509

/// The relying party of the sign-in page (PROTOCOL §12.1): RP ID = the host of the base URL, and the one origin
/// (scheme, host and port of the base URL) a ceremony may come from.
public struct RelyingParty: Equatable, Sendable {
    public let id: String
    public let origin: String

    public init(id: String, origin: String) {
        self.id = id
        self.origin = origin
    }

    /// From the server's base URL (`https://login.contoso.example/base` → ID `login.contoso.example`, origin
    /// `https://login.contoso.example`); `nil` when the URL has no host.
    public init?(baseURL: String) {
        guard let url = URL(string: baseURL), let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased(), !host.isEmpty else { return nil }
        let defaultPort = (scheme == "https" && url.port == 443) || (scheme == "http" && url.port == 80)
        id = host
        origin = "\(scheme)://\(host.contains(":") ? "[\(host)]" : host)\(url.port.map { defaultPort ? "" : ":\($0)" } ?? "")"
    }

    var idHash: [UInt8] { Array(SHA256.hash(data: Data(id.utf8))) }
}

/// A refused ceremony: which step of WebAuthn L3 §7.1 / §7.2 failed, in words a sign-in page can show.
public struct WebAuthnError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Step: String, Sendable {
        case format, type, challenge, origin, crossOrigin, rpIdHash, userPresent, userVerified, algorithm, attestation, signature, signCount,
            credential, backupEligibility
    }

    public let step: Step
    public let description: String

    init(_ step: Step, _ description: String) {
        self.step = step
        self.description = description
    }
}

/// A credential that passed registration (§7.1), ready to store.
public struct RegisteredCredential: Equatable, Sendable {
    public let credentialId: [UInt8]
    /// The COSE key exactly as the authenticator encoded it.
    public let publicKey: [UInt8]
    public let algorithm: COSEKey.Algorithm
    public let signCount: UInt32
    public let aaguid: UUID
    public let backupEligible: Bool
    public let backedUp: Bool
    public let attestation: AttestationType
    /// The attestation chain (DER, leaf first) when `attestation` is `basic`.
    public let attestationChain: [[UInt8]]
}

/// What an assertion (§7.2) proved, for the stored credential to follow.
public struct VerifiedAssertion: Equatable, Sendable {
    public let signCount: UInt32
    public let backedUp: Bool
    public let userVerified: Bool
}

/// The checks of WebAuthn Level 3 §7.1 (registration) and §7.2 (authentication) for PROTOCOL §12.1: user verification
/// required, ES256 / EdDSA / RS256, attestation `none` and `packed` (self and x5c). Storage, challenges and sessions
/// are the caller's: it passes the challenge it issued and the credential it has stored.
public struct WebAuthnVerifier: Sendable {
    public let relyingParty: RelyingParty

    public init(relyingParty: RelyingParty) {
        self.relyingParty = relyingParty
    }

    // MARK: §7.1 Registering a new credential

    public func verifyRegistration(clientDataJSON: [UInt8], attestationObject: [UInt8], challenge: [UInt8]) throws(WebAuthnError) -> RegisteredCredential {
        let clientData = try readClientData(clientDataJSON, type: "webauthn.create", challenge: challenge)
        let object: AttestationObject
        do { object = try AttestationObject(attestationObject) } catch { throw WebAuthnError(.format, error.description) }
        let data = object.authenticatorData
        try checkFlags(data)
        guard let credential = data.attestedCredential else { throw WebAuthnError(.format, "the registration carries no credential") }
        let clientDataHash = Array(SHA256.hash(data: clientData.bytes))
        let signed = data.bytes + clientDataHash
        let attestation: AttestationType
        var chain: [[UInt8]] = []
        switch object.format {
        case "none":
            guard case .map(let entries) = object.statement, entries.isEmpty else {
                throw WebAuthnError(.attestation, "a 'none' attestation must have an empty statement")
            }
            attestation = .none
        case "packed":
            guard let alg = object.statement[text: "alg"]?.int, let algorithm = COSEKey.Algorithm(rawValue: alg) else {
                throw WebAuthnError(.attestation, "a packed attestation names no supported algorithm")
            }
            guard let signature = object.statement[text: "sig"]?.byteString else { throw WebAuthnError(.attestation, "a packed attestation has no signature") }
            if let x5c = object.statement[text: "x5c"] {
                guard case .array(let items) = x5c, !items.isEmpty, items.count <= 8 else {
                    throw WebAuthnError(.attestation, "x5c must be an array of 1 to 8 certificates")
                }
                chain = try items.map { item throws(WebAuthnError) in
                    guard let der = item.byteString else { throw WebAuthnError(.attestation, "an x5c entry is not a byte string") }
                    return der
                }
                let leaf: Certificate
                do { leaf = try Certificate(derEncoded: chain[0]) } catch { throw WebAuthnError(.attestation, "the attestation certificate cannot be read") }
                try Self.checkPackedCertificate(leaf, aaguid: credential.aaguid)
                guard Self.verify(signature: signature, over: signed, certificateKey: leaf.publicKey, algorithm: algorithm) else {
                    throw WebAuthnError(.attestation, "the attestation signature does not verify with the attestation certificate")
                }
                attestation = .basic
            } else {
                guard algorithm == credential.publicKey.algorithm else {
                    throw WebAuthnError(.attestation, "a self attestation's algorithm must be the credential's")
                }
                guard Self.verify(signature: signature, over: signed, key: credential.publicKey) else {
                    throw WebAuthnError(.attestation, "the self attestation signature does not verify with the credential's key")
                }
                attestation = .self
            }
        default:
            throw WebAuthnError(.attestation, "attestation format '\(object.format.prefix(32))' is not accepted (none, packed)")
        }
        let aaguid = credential.aaguid
        return RegisteredCredential(
            credentialId: credential.credentialId, publicKey: credential.publicKeyBytes, algorithm: credential.publicKey.algorithm,
            signCount: data.signCount,
            aaguid: UUID(
                uuid: (
                    aaguid[0], aaguid[1], aaguid[2], aaguid[3], aaguid[4], aaguid[5], aaguid[6], aaguid[7], aaguid[8], aaguid[9], aaguid[10], aaguid[11],
                    aaguid[12], aaguid[13], aaguid[14], aaguid[15]
                )),
            backupEligible: data.flags.contains(.backupEligible), backedUp: data.flags.contains(.backedUp), attestation: attestation,
            attestationChain: chain)
    }

    // MARK: §7.2 Verifying an authentication assertion

    /// Verifies an assertion for a stored credential: `publicKey` and `signCount` as stored, and whether it was
    /// registered backup-eligible (that flag never changes for a credential).
    public func verifyAssertion(
        clientDataJSON: [UInt8], authenticatorData: [UInt8], signature: [UInt8], challenge: [UInt8], publicKey: [UInt8], storedSignCount: UInt32,
        backupEligible: Bool
    ) throws(WebAuthnError) -> VerifiedAssertion {
        let clientData = try readClientData(clientDataJSON, type: "webauthn.get", challenge: challenge)
        let data: AuthenticatorData
        do { data = try AuthenticatorData(authenticatorData) } catch { throw WebAuthnError(.format, error.description) }
        try checkFlags(data)
        guard data.flags.contains(.backupEligible) == backupEligible else {
            throw WebAuthnError(.backupEligibility, "the backup eligibility flag differs from the registered credential's")
        }
        let key: COSEKey
        do { key = try COSEKey(try CBORDecoder().decode(publicKey)) } catch { throw WebAuthnError(.credential, "the stored public key cannot be read") }
        let signed = data.bytes + Array(SHA256.hash(data: clientData.bytes))
        guard Self.verify(signature: signature, over: signed, key: key) else {
            throw WebAuthnError(.signature, "the signature does not verify with the credential's key")
        }
        // §7.2 step 22: a counter that does not move forward (when either side has ever counted) signals a clone.
        if (data.signCount != 0 || storedSignCount != 0) && data.signCount <= storedSignCount {
            throw WebAuthnError(.signCount, "the signature counter went from \(storedSignCount) to \(data.signCount): the authenticator may be cloned")
        }
        return VerifiedAssertion(signCount: data.signCount, backedUp: data.flags.contains(.backedUp), userVerified: true)
    }

    // MARK: Shared steps

    func readClientData(_ bytes: [UInt8], type: String, challenge: [UInt8]) throws(WebAuthnError) -> CollectedClientData {
        let clientData: CollectedClientData
        do { clientData = try CollectedClientData(bytes) } catch { throw WebAuthnError(.format, error.description) }
        guard clientData.type == type else { throw WebAuthnError(.type, "the client data is of type '\(clientData.type.prefix(32))', not \(type)") }
        guard !challenge.isEmpty, clientData.challenge == Base64URL.encode(challenge) else {
            throw WebAuthnError(.challenge, "the challenge is not the one this page issued")
        }
        guard clientData.origin == relyingParty.origin else {
            throw WebAuthnError(.origin, "the origin '\(clientData.origin.prefix(128))' is not \(relyingParty.origin)")
        }
        guard !clientData.crossOrigin, clientData.topOrigin == nil else {
            throw WebAuthnError(.crossOrigin, "the ceremony ran in a cross-origin frame")
        }
        return clientData
    }

    func checkFlags(_ data: AuthenticatorData) throws(WebAuthnError) {
        guard data.rpIdHash == relyingParty.idHash else { throw WebAuthnError(.rpIdHash, "the authenticator data is for another relying party") }
        guard data.flags.contains(.userPresent) else { throw WebAuthnError(.userPresent, "the user was not present (UP flag)") }
        guard data.flags.contains(.userVerified) else { throw WebAuthnError(.userVerified, "the user was not verified (UV flag)") }
    }

    /// Packed attestation certificate requirements (WebAuthn L3 §8.2.1).
    static func checkPackedCertificate(_ certificate: Certificate, aaguid: [UInt8]) throws(WebAuthnError) {
        guard certificate.version == .v3 else { throw WebAuthnError(.attestation, "the attestation certificate is not X.509 version 3") }
        let units = certificate.subject.flatMap { $0 }.filter { $0.type == .RDNAttributeType.organizationalUnitName }.map { "\($0.value)" }
        guard units.contains("Authenticator Attestation") else {
            throw WebAuthnError(.attestation, "the attestation certificate's subject OU is not 'Authenticator Attestation'")
        }
        if let constraints = try? certificate.extensions.basicConstraints, case .isCertificateAuthority = constraints {
            throw WebAuthnError(.attestation, "the attestation certificate is a CA certificate")
        }
        if let extensionValue = certificate.extensions[oid: [1, 3, 6, 1, 4, 1, 45724, 1, 1, 4]] {
            guard !extensionValue.critical else { throw WebAuthnError(.attestation, "the AAGUID extension must not be critical") }
            guard let octets = try? ASN1OctetString(derEncoded: extensionValue.value), Array(octets.bytes) == aaguid else {
                throw WebAuthnError(.attestation, "the attestation certificate's AAGUID is not the authenticator data's")
            }
        }
    }

    /// Verifies `signature` over `data` with a COSE key: ES256 (DER ECDSA over SHA-256), Ed25519, RS256 (PKCS #1 v1.5).
    public static func verify(signature: [UInt8], over data: [UInt8], key: COSEKey) -> Bool {
        switch key {
        case .es256(let x, let y):
            guard let publicKey = try? P256.Signing.PublicKey(rawRepresentation: x + y),
                let parsed = try? P256.Signing.ECDSASignature(derRepresentation: signature)
            else { return false }
            return publicKey.isValidSignature(parsed, for: data)
        case .ed25519(let x):
            guard let publicKey = try? Curve25519.Signing.PublicKey(rawRepresentation: x) else { return false }
            return publicKey.isValidSignature(signature, for: data)
        case .rs256(let modulus, let exponent):
            guard let publicKey = try? _RSA.Signing.PublicKey(n: modulus, e: exponent) else { return false }
            return publicKey.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: data, padding: .insecurePKCS1v1_5)
        }
    }

    /// Verifies an attestation signature with the attestation certificate's key, for the algorithm the statement names.
    static func verify(signature: [UInt8], over data: [UInt8], certificateKey: Certificate.PublicKey, algorithm: COSEKey.Algorithm) -> Bool {
        switch algorithm {
        case .es256:
            guard let publicKey = P256.Signing.PublicKey(certificateKey), let parsed = try? P256.Signing.ECDSASignature(derRepresentation: signature) else {
                return false
            }
            return publicKey.isValidSignature(parsed, for: data)
        case .edDSA:
            guard let publicKey = Curve25519.Signing.PublicKey(certificateKey) else { return false }
            return publicKey.isValidSignature(signature, for: data)
        case .rs256:
            guard let publicKey = _RSA.Signing.PublicKey(certificateKey) else { return false }
            return publicKey.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: data, padding: .insecurePKCS1v1_5)
        }
    }
}
