/// A credential public key as COSE (RFC 9052/9053) encodes it, limited to the algorithms PROTOCOL §12.1 accepts:
/// ES256 (−7, EC2 on P-256), EdDSA (−8, OKP on Ed25519) and RS256 (−257, RSA with at least 2,048 bits). Other
/// members of the key map are ignored; the ones an algorithm needs must be there with the right types and sizes.
public enum COSEKey: Equatable, Sendable {
    case es256(x: [UInt8], y: [UInt8])
    case ed25519(x: [UInt8])
    case rs256(modulus: [UInt8], exponent: [UInt8])

    public enum Algorithm: Int, CaseIterable, Sendable {
        case es256 = -7
        case edDSA = -8
        case rs256 = -257
    }

    public var algorithm: Algorithm {
        switch self {
        case .es256: .es256
        case .ed25519: .edDSA
        case .rs256: .rs256
        }
    }

    public init(_ key: CBOR) throws(WebAuthnFormatError) {
        guard case .map = key else { throw WebAuthnFormatError("the COSE key is not a map") }
        guard let kty = key[int: 1]?.int else { throw WebAuthnFormatError("the COSE key has no key type (1)") }
        guard let alg = key[int: 3]?.int else { throw WebAuthnFormatError("the COSE key has no algorithm (3)") }
        func bytes(_ label: Int, _ name: String, count: ClosedRange<Int>) throws(WebAuthnFormatError) -> [UInt8] {
            guard let value = key[int: label]?.byteString, count.contains(value.count) else {
                throw WebAuthnFormatError(
                    "the COSE key's \(name) (\(label)) is missing or not \(count.lowerBound == count.upperBound ? "\(count.lowerBound)" : "\(count)") bytes")
            }
            return value
        }
        switch Algorithm(rawValue: alg) {
        case .es256:
            guard kty == 2, key[int: -1]?.int == 1 else { throw WebAuthnFormatError("an ES256 key must be EC2 (2) on P-256 (crv 1)") }
            self = .es256(x: try bytes(-2, "x", count: 32...32), y: try bytes(-3, "y", count: 32...32))
        case .edDSA:
            guard kty == 1, key[int: -1]?.int == 6 else { throw WebAuthnFormatError("an EdDSA key must be OKP (1) on Ed25519 (crv 6)") }
            self = .ed25519(x: try bytes(-2, "x", count: 32...32))
        case .rs256:
            guard kty == 3 else { throw WebAuthnFormatError("an RS256 key must be RSA (3)") }
            var modulus = try bytes(-1, "n", count: 256...1024)
            while modulus.first == 0 { modulus.removeFirst() }
            guard modulus.count >= 256 else { throw WebAuthnFormatError("an RSA modulus below 2,048 bits") }
            self = .rs256(modulus: modulus, exponent: try bytes(-2, "e", count: 1...8))
        case nil:
            throw WebAuthnFormatError("algorithm \(alg) is not one of ES256 (-7), EdDSA (-8), RS256 (-257)")
        }
    }
}
