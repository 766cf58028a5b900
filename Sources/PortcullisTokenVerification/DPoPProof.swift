import Crypto
import CryptoExtras
public import Foundation
import PortcullisVocabulary
import Synchronization

/// A DPoP proof (RFC 9449 §4) whose form, key and signature were checked: what the token endpoint and the resource
/// side go on to compare with the request, the nonce and the replay cache.
public struct DPoPProof: Sendable, Equatable {
    /// `jkt`: the RFC 7638 thumbprint of the proof's public key (SHA-256, base64url), as `cnf.jkt` carries it.
    public var thumbprint: String
    public var algorithm: String
    public var jti: String
    public var issuedAt: Int
    public var nonce: String?
    /// The replay cache's key: the key and the `jti`, hashed (a client chooses `jti`; the key makes one client's `jti`
    /// unable to collide with another's).
    /// How long the replay cache keeps it: until its `iat` can no longer pass the window check.
    public var replayExpiry: Date { Date(timeIntervalSince1970: TimeInterval(issuedAt) + DPoPVerifier.window + 1) }

    public var replayKey: String {
        Base64URL.encode(SHA256.hash(data: Data("\(thumbprint).\(jti)".utf8)).prefix(16))
    }
}

/// Why a proof was refused: the sentence after the AADSTS number (`invalid_dpop_proof`). Never quotes the proof.
public struct DPoPProofError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// RFC 9449 proof validation (§4.3), the parts that need only the proof and the request: the JWS form, `typ`, `alg`
/// (ES256, RS256, EdDSA), a public `jwk` (private members refused), the signature, `htm`, `htu` (normalised, without
/// query or fragment), `iat` within the window and, for a resource, `ath`. The nonce and the replay cache are the
/// caller's (they need the server's key and store).
public enum DPoPVerifier {
    /// What the token endpoint and the resource side accept.
    public static let algorithms = ["ES256", "RS256", "EdDSA"]
    /// `iat` may be this far in the past or the future (PROTOCOL §15).
    public static let window: TimeInterval = 60
    /// A proof longer than this is refused before it is parsed (an RSA-4096 key and every claim fit in 2 KB).
    public static let maximumLength = 8192
    /// `jti` and `nonce` longer than this are refused (bounded replay-cache and nonce work).
    static let maximumValueLength = 256

    public static func verify(
        _ compact: String, method: String, url: String, now: Date, accessToken: String? = nil
    ) throws(DPoPProofError) -> DPoPProof {
        guard compact.utf8.count <= maximumLength else { throw DPoPProofError("The DPoP proof is longer than \(maximumLength) bytes.") }
        // Split on the bytes: String's split walks Characters (grapheme breaking), which measured more than the signature.
        let parts = compact.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).map { String(Substring($0)) }
        guard parts.count == 3, let headerBytes = Base64URL.decode(parts[0]), let payloadBytes = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2])
        else { throw DPoPProofError("The DPoP proof is not a compact JWS.") }
        // A client signs every proof with the same key: the header (typ, alg, jwk), the key made of it and its thumbprint
        // are kept for the header's text, so only the first proof of a key pays for them.
        let key = try headerCache.key(for: parts[0], bytes: headerBytes)
        let signingInput = Data(compact.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        guard key.isValid(signature: signature, for: signingInput) else {
            throw DPoPProofError("The DPoP proof's signature does not verify with its jwk.")
        }
        guard let claims = Claims(payloadBytes) else {
            throw DPoPProofError("The DPoP proof's claims are not a JSON object of the expected members.")
        }
        guard let jti = claims.jti, !jti.isEmpty, jti.utf8.count <= maximumValueLength else {
            throw DPoPProofError("The DPoP proof needs a jti of 1 to \(maximumValueLength) characters.")
        }
        guard claims.htm == method else { throw DPoPProofError("The DPoP proof's htm does not match the request's method.") }
        // The very same text (what clients send) needs no parsing.
        guard let htu = claims.htu, htu == url || TargetURI(htu).map({ $0 == TargetURI(url) }) == true else {
            throw DPoPProofError("The DPoP proof's htu does not match the request's URL.")
        }
        guard let iat = claims.iat, iat.isFinite else { throw DPoPProofError("The DPoP proof has no iat.") }
        guard abs(iat - now.timeIntervalSince1970) <= window else {
            throw DPoPProofError("The DPoP proof's iat is more than \(Int(window)) seconds from the server's time.")
        }
        if let nonce = claims.nonce, nonce.utf8.count > maximumValueLength { throw DPoPProofError("The DPoP proof's nonce is too long.") }
        if let accessToken {
            guard let ath = claims.ath else { throw DPoPProofError("The DPoP proof has no ath for the access token it is sent with.") }
            guard ath == Self.accessTokenHash(accessToken) else { throw DPoPProofError("The DPoP proof's ath is not the access token's hash.") }
        }
        return DPoPProof(thumbprint: key.thumbprint, algorithm: key.algorithm, jti: jti, issuedAt: Int(iat.rounded(.down)), nonce: claims.nonce)
    }

    static let headerCache = HeaderCache()

    /// Proof headers already checked, by their base64url text: at most `limit`, forgotten all at once when full (a client
    /// that churns keys only makes its own proofs slower).
    final class HeaderCache: Sendable {
        private let keys = Mutex<[String: PublicKey]>([:])
        let limit = 4096

        func key(for text: String, bytes: Data) throws(DPoPProofError) -> PublicKey {
            if let key = keys.withLock({ $0[text] }) { return key }
            let key = try PublicKey(header: bytes)
            keys.withLock {
                if $0.count >= limit { $0.removeAll(keepingCapacity: true) }
                $0[text] = key
            }
            return key
        }
    }

    /// `ath`: base64url of the SHA-256 of the access token's ASCII text (RFC 9449 §4.2).
    public static func accessTokenHash(_ token: String) -> String { Base64URL.encode(SHA256.hash(data: Data(token.utf8))) }

    struct Header: Decodable {
        var typ: String?
        var alg: String?
        var jwk: JWK?
    }

    /// The payload's members. A flat object of strings and numbers (what proofs are) is read by hand; anything else
    /// goes to `JSONSerialization` (measured: it was a sixth of the proof check). A member of the wrong type is as good as
    /// absent.
    struct Claims {
        var jti: String?
        var htm: String?
        var htu: String?
        var iat: Double?
        var nonce: String?
        var ath: String?

        init?(_ data: Data) {
            let members: [String: Any]
            if let flat = FlatJSONObject.parse(data) {
                members = flat
            } else {
                guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
                members = object
            }
            jti = members["jti"] as? String
            htm = members["htm"] as? String
            htu = members["htu"] as? String
            // A JSON number (a boolean bridges to 0 or 1, which no window accepts).
            iat = (members["iat"] as? Double) ?? (members["iat"] as? NSNumber)?.doubleValue
            nonce = members["nonce"] as? String
            ath = members["ath"] as? String
        }
    }

    /// The members of a JWK that matter here. Private members are decoded only to be refused (RFC 9449 §4.3 item 6).
    struct JWK: Decodable {
        var kty: String?
        var crv: String?
        var x: String?
        var y: String?
        var n: String?
        var e: String?
        var privateMembers: [String]

        enum CodingKeys: String, CodingKey, CaseIterable {
            case kty, crv, x, y, n, e, d, p, q, dp, dq, qi, oth, k
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            kty = try container.decodeIfPresent(String.self, forKey: .kty)
            crv = try container.decodeIfPresent(String.self, forKey: .crv)
            x = try container.decodeIfPresent(String.self, forKey: .x)
            y = try container.decodeIfPresent(String.self, forKey: .y)
            n = try container.decodeIfPresent(String.self, forKey: .n)
            e = try container.decodeIfPresent(String.self, forKey: .e)
            privateMembers = [CodingKeys.d, .p, .q, .dp, .dq, .qi, .oth, .k].filter(container.contains).map(\.rawValue)
        }
    }

    /// A proof key, checked against its `alg`, with its RFC 7638 thumbprint over the required members only.
    enum PublicKey: Sendable {
        case p256(P256.Signing.PublicKey, thumbprint: String)
        case rsa(_RSA.Signing.PublicKey, thumbprint: String)
        case ed25519(Curve25519.Signing.PublicKey, thumbprint: String)

        /// The key of a proof's header, after its `typ` and `alg` are checked.
        init(header: Data) throws(DPoPProofError) {
            guard let header = try? JSONDecoder().decode(Header.self, from: header) else {
                throw DPoPProofError("The DPoP proof's header is not a JSON object of the expected members.")
            }
            guard header.typ == "dpop+jwt" else { throw DPoPProofError("The DPoP proof's typ must be dpop+jwt.") }
            guard let alg = header.alg, DPoPVerifier.algorithms.contains(alg) else {
                throw DPoPProofError("The DPoP proof's alg must be one of \(DPoPVerifier.algorithms.joined(separator: ", ")).")
            }
            guard let jwk = header.jwk else { throw DPoPProofError("The DPoP proof's header has no jwk.") }
            try self.init(jwk, algorithm: alg)
        }

        var algorithm: String {
            switch self {
            case .p256: "ES256"
            case .rsa: "RS256"
            case .ed25519: "EdDSA"
            }
        }

        init(_ jwk: JWK, algorithm: String) throws(DPoPProofError) {
            guard jwk.privateMembers.isEmpty else {
                throw DPoPProofError("The DPoP proof's jwk holds private key members (\(jwk.privateMembers.joined(separator: ", "))).")
            }
            switch (algorithm, jwk.kty) {
            case ("ES256", "EC"):
                guard jwk.crv == "P-256", let x = jwk.x, let y = jwk.y, let xBytes = Base64URL.decode(x), let yBytes = Base64URL.decode(y),
                    xBytes.count == 32, yBytes.count == 32,
                    let key = try? P256.Signing.PublicKey(rawRepresentation: xBytes + yBytes)
                else { throw DPoPProofError("The DPoP proof's jwk is not a P-256 public key.") }
                self = .p256(key, thumbprint: JWKThumbprint.p256(x: x, y: y))
            case ("RS256", "RSA"):
                guard let n = jwk.n, let e = jwk.e, let nBytes = Base64URL.decode(n), let eBytes = Base64URL.decode(e),
                    let key = try? _RSA.Signing.PublicKey(n: nBytes, e: eBytes)
                else { throw DPoPProofError("The DPoP proof's jwk is not an RSA public key.") }
                guard key.keySizeInBits >= 2048 else { throw DPoPProofError("The DPoP proof's RSA key is shorter than 2048 bits.") }
                self = .rsa(key, thumbprint: JWKThumbprint.rsa(n: n, e: e))
            case ("EdDSA", "OKP"):
                guard jwk.crv == "Ed25519", let x = jwk.x, let xBytes = Base64URL.decode(x), xBytes.count == 32,
                    let key = try? Curve25519.Signing.PublicKey(rawRepresentation: xBytes)
                else { throw DPoPProofError("The DPoP proof's jwk is not an Ed25519 public key.") }
                self = .ed25519(key, thumbprint: JWKThumbprint.ed25519(x: x))
            default:
                throw DPoPProofError("The DPoP proof's jwk is not a key for \(algorithm).")
            }
        }

        var thumbprint: String {
            switch self {
            case .p256(_, let thumbprint), .rsa(_, let thumbprint), .ed25519(_, let thumbprint): thumbprint
            }
        }

        func isValid(signature: Data, for input: Data) -> Bool {
            switch self {
            case .p256(let key, _):
                guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
                return key.isValidSignature(signature, for: input)
            case .rsa(let key, _):
                return key.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: input, padding: .insecurePKCS1v1_5)
            case .ed25519(let key, _):
                return key.isValidSignature(signature, for: input)
            }
        }
    }
}

/// RFC 7638 JWK thumbprints: the SHA-256 of the required members, in lexicographic order, as JSON without whitespace.
/// The signing keys' `kid` and DPoP's `jkt` are both this.
public enum JWKThumbprint {
    /// `members` in lexicographic order of their names.
    public static func compute(_ members: [(String, String)]) -> String {
        var writer = JSONObjectWriter(capacity: 128)
        for (name, value) in members { writer.string(name, value) }
        return Base64URL.encode(SHA256.hash(data: writer.finish()))
    }

    /// A P-256 key by its base64url coordinates.
    public static func p256(x: String, y: String) -> String { compute([("crv", "P-256"), ("kty", "EC"), ("x", x), ("y", y)]) }

    /// An RSA key by its base64url modulus and exponent.
    public static func rsa(n: String, e: String) -> String { compute([("e", e), ("kty", "RSA"), ("n", n)]) }

    /// An Ed25519 key by its base64url public key.
    public static func ed25519(x: String) -> String { compute([("crv", "Ed25519"), ("kty", "OKP"), ("x", x)]) }
}

/// `htu` as RFC 9449 §4.3 compares it: scheme and host case-insensitive, the default port implied, the path as sent
/// (an empty path is `/`), percent-encodings compared in upper case; query and fragment ignored.
struct TargetURI: Equatable {
    var scheme: String
    var host: String
    var port: Int
    var path: String

    init?(_ text: String) {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(), scheme == "https" || scheme == "http",
            let host = components.percentEncodedHost?.lowercased(), !host.isEmpty
        else { return nil }
        self.scheme = scheme
        self.host = host
        self.port = components.port ?? (scheme == "https" ? 443 : 80)
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        self.path = Self.upperCasingPercentEncodings(path)
    }

    private static func upperCasingPercentEncodings(_ path: String) -> String {
        guard path.contains("%") else { return path }
        var out = ""
        var remaining = 0
        for character in path {
            if character == "%" {
                remaining = 2
                out.append(character)
            } else if remaining > 0 {
                remaining -= 1
                out += character.uppercased()
            } else {
                out.append(character)
            }
        }
        return out
    }
}

/// A JSON object whose values are strings and numbers only, read without Foundation's parser; `nil` for anything else
/// (nested values, `true`/`false`/`null`, escapes beyond `\"`, `\\` and `\/`, malformed text), which the caller then
/// reads the general way. Strings are UTF-8 as sent; numbers are `Double`.
enum FlatJSONObject {
    static func parse(_ data: Data) -> [String: Any]? {
        data.withUnsafeBytes { raw -> [String: Any]? in
            let bytes = raw.bindMemory(to: UInt8.self)
            var index = 0
            func skipSpace() { while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 } }
            func string() -> String? {
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
                index += 1
                var out = [UInt8]()
                while index < bytes.count {
                    let byte = bytes[index]
                    index += 1
                    switch byte {
                    case UInt8(ascii: "\""): return String(validating: out, as: UTF8.self)
                    case UInt8(ascii: "\\"):
                        guard index < bytes.count, [UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/")].contains(bytes[index]) else { return nil }
                        out.append(bytes[index])
                        index += 1
                    case 0..<0x20: return nil
                    default: out.append(byte)
                    }
                }
                return nil
            }
            func number() -> Double? {
                let start = index
                while index < bytes.count,
                    (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) || [0x2D, 0x2B, 0x2E, 0x45, 0x65].contains(bytes[index])
                {
                    index += 1
                }
                guard index > start else { return nil }
                return Double(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self))
            }
            var members: [String: Any] = [:]
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else { return nil }
            index += 1
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
            } else {
                while true {
                    skipSpace()
                    guard let name = string(), members[name] == nil else { return nil }
                    skipSpace()
                    guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
                    index += 1
                    skipSpace()
                    guard index < bytes.count else { return nil }
                    if bytes[index] == UInt8(ascii: "\"") {
                        guard let value = string() else { return nil }
                        members[name] = value
                    } else {
                        guard let value = number() else { return nil }
                        members[name] = value
                    }
                    skipSpace()
                    guard index < bytes.count else { return nil }
                    if bytes[index] == UInt8(ascii: ",") {
                        index += 1
                        continue
                    }
                    guard bytes[index] == UInt8(ascii: "}") else { return nil }
                    index += 1
                    break
                }
            }
            skipSpace()
            return index == bytes.count ? members : nil
        }
    }
}
