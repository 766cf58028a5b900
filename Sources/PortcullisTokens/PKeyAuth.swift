import Crypto
public import Foundation
import PortcullisAPI
public import PortcullisCore
public import X509
import _CryptoExtras

/// Entra's PKeyAuth device proof (PROTOCOL §18), as MSAL for .NET, iOS and Android speak it: the server challenges
/// (`WWW-Authenticate: PKeyAuth Context="…", Version="1.0", nonce="…", CertAuthorities="…", SubmitUrl="…"`), the client
/// answers on the same request with `Authorization: PKeyAuth AuthToken="<JWT>", Context="…", Version="…"` — the JWT's
/// header carrying the device certificate (`x5c`), its payload `aud` (the submit URL), `nonce` and `iat`, signed with
/// the device's key (RS256 as MSAL for .NET signs, or ES256) — or without `AuthToken` when it has no device certificate.
public enum PKeyAuth {
    public static let version = "1.0"
    /// The header a client sends to say it can answer a challenge.
    public static let supportHeader = "x-ms-PKeyAuth"
    /// The page's challenge is a redirect to this URN, the challenge's parameters its query; MSAL's web views intercept it
    /// and load the `SubmitUrl` with the answer in an `Authorization` header.
    public static let redirectPrefix = "urn:http-auth:PKeyAuth?"
    /// How long a challenge's nonce is good for (single use within it).
    public static let nonceLifetime: TimeInterval = 300
    /// An answer's `iat` may differ from the server's clock by this much.
    public static let clockSkew: TimeInterval = 300

    /// The parameters of a `PKeyAuth` Authorization or WWW-Authenticate value (`nil` when it is not one).
    public static func parameters(_ value: String) -> [String: String]? { PKeyAuthParameters.parse(value) }

    /// The challenge's value: one `WWW-Authenticate` value, every parameter quoted.
    public static func challenge(context: String, nonce: String, certAuthorities: String, submitURL: String) -> String {
        #"PKeyAuth Context="\#(context)", Version="\#(version)", nonce="\#(nonce)", CertAuthorities="\#(certAuthorities)", SubmitUrl="\#(submitURL)""#
    }

    /// Single-use nonces without server state until they are used: the expiry, the tenant and the challenge's `Context`
    /// under a MAC with a key every node derives from the shared credential pepper, plus random bytes (so two challenges
    /// never share one). Bound to the Context, a device's answer proves nothing for another sign-in (a page's Context is
    /// its sealed authorization request). Single use is the replay store's (`ProofReplayStore`), keyed by the nonce until
    /// it expires.
    public struct Nonces: Sendable {
        let key: SymmetricKey

        public init(credentials: CredentialHasher) { key = credentials.derivedKey(purpose: "pkeyauth-nonce-v1") }

        public func make(tenantId: TenantID, context: String, now: Date) -> String {
            let expiry = UInt64(now.addingTimeInterval(PKeyAuth.nonceLifetime).timeIntervalSince1970)
            let body = (0..<8).map { UInt8(truncatingIfNeeded: expiry >> (8 * (7 - $0))) } + (0..<16).map { _ in UInt8.random(in: 0...255) }
            return Base64URL.encode(body + tag(body, tenantId: tenantId, context: context))
        }

        /// When the nonce expires, if this installation made it for `tenantId` in the challenge whose Context is `context`,
        /// and it has not expired at `now`.
        public func expiry(of nonce: String, tenantId: TenantID, context: String, now: Date) -> Date? {
            guard nonce.utf8.count <= 64, let data = Base64URL.decode(nonce), data.count == 40 else { return nil }
            let bytes = Array(data)
            let body = Array(bytes[0..<24])
            guard CredentialHasher.constantTimeEquals(Array(bytes[24...]), tag(body, tenantId: tenantId, context: context)) else { return nil }
            let expiry = Date(timeIntervalSince1970: TimeInterval(body[0..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }))
            return now < expiry ? expiry : nil
        }

        func tag(_ body: [UInt8], tenantId: TenantID, context: String) -> [UInt8] {
            // The tenant and the Context, each length-prefixed, so that no two pairs MAC the same bytes.
            var message = body
            for part in [Array(tenantId.rawValue.utf8), Array(SHA256.hash(data: Array(context.utf8)))] {
                message += (0..<4).map { UInt8(truncatingIfNeeded: part.count >> (8 * (3 - $0))) } + part
            }
            return Array(HMAC<SHA256>.authenticationCode(for: message, using: key)).prefix(16).map { $0 }
        }
    }

    /// Why a device's token proves nothing: which check failed, in words.
    public struct Failure: Error, Sendable {
        public let reason: String
        public init(reason: String) { self.reason = reason }
    }

    /// A compact JWS a device signs with its key, its certificate in the header (`x5c`): a PKeyAuth `AuthToken`, a
    /// check-in. Read, not yet trusted.
    public struct DeviceSignedToken: Sendable {
        public let certificate: [UInt8]
        public let algorithm: String
        public let payload: [String: JSONValue]
        let signingInput: [UInt8]
        let signature: [UInt8]

        public static func read(_ token: String) -> Result<DeviceSignedToken, Failure> {
            let parts = token.split(separator: ".", omittingEmptySubsequences: false)
            guard token.utf8.count <= 16 * 1024, parts.count == 3, let headerData = Base64URL.decode(String(parts[0])),
                let payloadData = Base64URL.decode(String(parts[1])), let signature = Base64URL.decode(String(parts[2])),
                let header = JSONValue.parse(headerData)?.objectValue, let payload = JSONValue.parse(payloadData)?.objectValue
            else { return .failure(Failure(reason: "the token is not a signed JWT")) }
            guard let algorithm = header["alg"]?.stringValue, ["RS256", "ES256"].contains(algorithm) else {
                return .failure(Failure(reason: "the token must be signed with RS256 or ES256"))
            }
            guard let chain = header["x5c"]?.arrayValue, let first = chain.first?.stringValue, chain.count <= 4,
                let certificate = Data(base64Encoded: first)
            else { return .failure(Failure(reason: "the token's header carries no device certificate (x5c)")) }
            return .success(
                DeviceSignedToken(
                    certificate: Array(certificate), algorithm: algorithm, payload: payload, signingInput: Array("\(parts[0]).\(parts[1])".utf8),
                    signature: Array(signature)))
        }

        /// `iat` as a date, when it is a number.
        public var issuedAt: Date? {
            guard case .number(let iat)? = payload["iat"], iat.isFinite, abs(iat) < 1e11 else { return nil }
            return Date(timeIntervalSince1970: iat)
        }

        /// Whether the token is signed by `key` (the device certificate's), with its algorithm.
        public func isSigned(by key: Certificate.PublicKey) -> Bool {
            switch algorithm {
            case "RS256":
                guard let rsa = _RSA.Signing.PublicKey(key), rsa.keySizeInBits >= 2048 else { return false }
                return rsa.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: signingInput, padding: .insecurePKCS1v1_5)
            case "ES256":
                guard let p256 = P256.Signing.PublicKey(key), let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else {
                    return false
                }
                return p256.isValidSignature(ecdsa, for: signingInput)
            default:
                return false
            }
        }
    }

    /// An answer's `AuthToken`: a device-signed token whose payload carries `aud`, `nonce` and `iat`.
    public struct AuthToken: Sendable {
        public let token: DeviceSignedToken
        public let audience: String
        public let nonce: String
        public let issuedAt: Date

        public static func read(_ text: String) -> Result<AuthToken, Failure> {
            switch DeviceSignedToken.read(text) {
            case .failure(let failure): return .failure(failure)
            case .success(let token):
                guard let audience = token.payload["aud"]?.stringValue, let nonce = token.payload["nonce"]?.stringValue, let iat = token.issuedAt else {
                    return .failure(Failure(reason: "the AuthToken must carry aud, nonce and iat"))
                }
                return .success(AuthToken(token: token, audience: audience, nonce: nonce, issuedAt: iat))
            }
        }
    }
}
