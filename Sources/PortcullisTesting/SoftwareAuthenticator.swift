public import Crypto
public import CryptoExtras
import Foundation
import PortcullisAPI
import PortcullisTokens
public import PortcullisWebAuthnFormat
import SwiftASN1
import X509

/// A software authenticator that builds ceremonies by hand (WebAuthn L3 §6), so that every check of §7.1 and §7.2
/// has a test that fails when the check is removed.
public struct SoftwareAuthenticator {
    public init() {}

    public init(key: Key) {
        self.key = key
    }

    public enum Key {
        case p256(P256.Signing.PrivateKey)
        case ed25519(Curve25519.Signing.PrivateKey)
        case rsa(_RSA.Signing.PrivateKey)

        public var cose: CBOR {
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

        public var algorithm: Int {
            switch self {
            case .p256: -7
            case .ed25519: -8
            case .rsa: -257
            }
        }

        public func sign(_ data: [UInt8]) -> [UInt8] {
            switch self {
            case .p256(let key): Array(try! key.signature(for: data).derRepresentation)
            case .ed25519(let key): Array(try! key.signature(for: data))
            case .rsa(let key): Array(try! key.signature(for: data, padding: .insecurePKCS1v1_5).rawRepresentation)
            }
        }
    }

    public var key: Key = .p256(P256.Signing.PrivateKey())
    public var rpId = "login.contoso.example"
    public var origin = "https://login.contoso.example"
    public var credentialId: [UInt8] = Array((0..<32).map { UInt8($0) })
    public var aaguid: [UInt8] = [0xad, 0xce, 0x00, 0x02, 0x35, 0xbc, 0xc6, 0x0a, 0x64, 0x8b, 0x0b, 0x25, 0xf1, 0xf0, 0x55, 0x03]
    public var flags: AuthenticatorData.Flags = [.userPresent, .userVerified]
    public var signCount: UInt32 = 1

    public func clientData(type: String, challenge: [UInt8], origin: String? = nil, crossOrigin: Bool = false) -> [UInt8] {
        Array(
            #"{"type":"\#(type)","challenge":"\#(Base64URL.encode(challenge))","origin":"\#(origin ?? self.origin)","crossOrigin":\#(crossOrigin)}"#
                .utf8)
    }

    public func authenticatorData(attested: Bool, rpId: String? = nil, coseKey: CBOR? = nil) -> [UInt8] {
        var data = Array(SHA256.hash(data: Data((rpId ?? self.rpId).utf8)))
        data.append((attested ? flags.union(.attestedCredentialData) : flags).rawValue)
        data += withUnsafeBytes(of: signCount.bigEndian) { Array($0) }
        if attested {
            data += aaguid + [UInt8(credentialId.count >> 8), UInt8(credentialId.count & 0xff)] + credentialId + (coseKey ?? key.cose).encoded
        }
        return data
    }

    /// `none`, `packed` self (signed by the credential key), or `packed` with `x5c` (signed by `attestationKey`).
    public enum Attestation {
        case none
        case packedSelf(algorithm: Int? = nil)
        case packedX5C(certificate: [UInt8], key: P256.Signing.PrivateKey)
    }

    public func attestationObject(_ attestation: Attestation, clientData: [UInt8], authenticatorData: [UInt8]? = nil, format: String? = nil) -> [UInt8] {
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
    public static func attestationCertificate(
        key: P256.Signing.PrivateKey, unit: String = "Authenticator Attestation", isCA: Bool = false, aaguid: [UInt8]? = nil
    ) throws -> [UInt8] {
        try AttestationCA().attestationCertificate(key: key, unit: unit, isCA: isCA, aaguid: aaguid)
    }
}
