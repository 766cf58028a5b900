import Crypto
public import Foundation
public import JWTKit
import PortcullisAPI
public import PortcullisCore
import Synchronization

/// Keys that verify and are published but never sign, until a moment: the installation-wide keys of releases
/// before per-tenant key rings, kept only until every token they signed has expired (docs/operations.md).
public struct RetiringKeys: Sendable {
    public let keys: [SigningKey]
    public let until: Date

    public init(keys: [SigningKey], until: Date) {
        self.keys = keys
        self.until = until
    }
}

/// Signs and verifies one tenant's JWTs with its key ring, and publishes the ring as a JWKS (PROTOCOL §11: each
/// tenant signs with its own keys and its JWKS lists only its own, so no tenant's token verifies against another's).
public struct TokenSigner: Sendable {
    public let loaded: SigningKeyStore.Loaded
    /// The ring's own keys (never the retiring ones).
    public let keys: [SigningKey]
    public let accessTokenType: AccessTokenType
    private let retiring: RetiringKeys?
    private let retiringKids: Set<String>
    private let ownJWKS: Data
    private let retiringJWKS: Data
    private let collection: JWTKeyCollection
    private let clock: any WallClock
    /// Access tokens these keys verified (`verifyAccessToken`).
    let verified = VerifiedAccessTokens(capacity: 1024)

    /// The key that signs now.
    public var active: SigningKey { loaded.active(at: clock.now()) }

    /// The JWKS document, serialised once: the ring's keys, and the retiring keys until they retire.
    public var jwksJSON: Data {
        if let retiring, clock.now() < retiring.until { return retiringJWKS }
        return ownJWKS
    }

    public init(
        loaded: SigningKeyStore.Loaded, retiring: RetiringKeys? = nil, accessTokenType: AccessTokenType = .jwt,
        clock: any WallClock = SystemWallClock()
    ) async throws {
        self.loaded = loaded
        self.clock = clock
        self.keys = loaded.all
        self.accessTokenType = accessTokenType
        let own = Set(loaded.all.map(\.kid))
        let retiringKeys = (retiring?.keys ?? []).filter { !own.contains($0.kid) }
        self.retiring = retiring.map { RetiringKeys(keys: retiringKeys, until: $0.until) }
        self.retiringKids = Set(retiringKeys.map(\.kid))
        let collection = JWTKeyCollection()
        // jwt-kit serialises with each key's own serializer (the collection's default serves JWKs only).
        let serializer = DefaultJWTSerializer(jsonEncoder: ClaimsJSONEncoder())
        for key in loaded.all + retiringKeys {
            switch key.algorithm {
            case .es256:
                await collection.add(ecdsa: try ES256PrivateKey(pem: key.privateKeyPEM), kid: JWKIdentifier(string: key.kid), serializer: serializer)
            case .rs256:
                await collection.add(
                    rsa: try Insecure.RSA.PrivateKey(pem: key.privateKeyPEM), digestAlgorithm: .sha256,
                    kid: JWKIdentifier(string: key.kid), serializer: serializer)
            }
        }
        self.collection = collection
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        self.ownJWKS = try encoder.encode(["keys": loaded.all.map(\.publicJWK)])
        self.retiringJWKS = try encoder.encode(["keys": (loaded.all + retiringKeys).map(\.publicJWK)])
    }

    /// Whether `token` names a retiring key whose time is over (such a token no longer verifies).
    private func namesRetiredKey(_ token: String) -> Bool {
        guard let retiring, clock.now() >= retiring.until, let dot = token.firstIndex(of: "."),
            let header = Base64URL.decode(String(token[..<dot])),
            let object = try? JSONSerialization.jsonObject(with: header) as? [String: Any], let kid = object["kid"] as? String
        else { return false }
        return retiringKids.contains(kid)
    }

    /// Signs an access token with the active key.
    public func sign(accessToken claims: AccessTokenClaims) async throws -> String {
        try await collection.sign(
            claims, kid: JWKIdentifier(string: active.kid),
            header: ["typ": .string(accessTokenType.rawValue)])
    }

    /// Signs an ID token with the active key.
    public func sign(idToken claims: IDTokenClaims) async throws -> String {
        try await collection.sign(claims, kid: JWKIdentifier(string: active.kid), header: ["typ": "JWT"])
    }

    /// Signs any payload (Security Event Tokens) with the active key and the given `typ`.
    public func sign(_ payload: some JWTPayload, type: String) async throws -> String {
        try await collection.sign(payload, kid: JWKIdentifier(string: active.kid), header: ["typ": .string(type)])
    }

    /// Verifies a signature made by one of our keys and decodes the payload; checks no claim.
    public func verifySignature<Payload: JWTPayload>(_ token: String, as type: Payload.Type) async throws -> Payload {
        if namesRetiredKey(token) { throw JWTError.signatureVerificationFailed }
        return try await collection.verify(token, as: type)
    }
}

/// Why an access token was not accepted.
public enum AccessTokenRejection: Error, Sendable, Equatable {
    case malformedOrBadSignature
    case expired
    case notYetValid
    case wrongIssuer
    case wrongAudience
}

extension TokenSigner {
    /// Verifies an access token: signature by one of our keys (any `alg` but the key's own is refused,
    /// `none` included), issuer, audience (one of `audiences`, case-insensitive) and time (with `leeway`).
    public func verifyAccessToken(
        _ token: String, issuer: String?, audiences: [String]?, now: Date, leeway: TimeInterval = 0
    ) async -> Result<AccessTokenClaims, AccessTokenRejection> {
        let claims: AccessTokenClaims
        if let known = verified.claims(of: token), !namesRetiredKey(token) {
            claims = known
        } else {
            guard let checked = try? await verifySignature(token, as: AccessTokenClaims.self) else {
                return .failure(.malformedOrBadSignature)
            }
            verified.remember(token, checked)
            claims = checked
        }
        let current = now.timeIntervalSince1970
        if TimeInterval(claims.exp) + leeway <= current { return .failure(.expired) }
        // A token dated ahead (`nbf` or `iat`) would count as issued after revocations that come before it (PROTOCOL §14.1).
        if TimeInterval(claims.nbf) - leeway > current || TimeInterval(claims.iat) - leeway > current { return .failure(.notYetValid) }
        if let issuer, claims.iss != issuer { return .failure(.wrongIssuer) }
        if let audiences, !audiences.contains(where: { $0.lowercased() == claims.aud.lowercased() }) {
            return .failure(.wrongAudience)
        }
        return .success(claims)
    }
}

extension TokenSigner {
    /// The client an ID token was issued to, when the token is ours (signature) and from `issuer`. Expiry is
    /// not checked: an `id_token_hint` at sign-out may be an expired one (OIDC RP-Initiated Logout §2).
    public func idTokenAudience(_ token: String, issuer: String) async -> String? {
        guard let claims = try? await verifySignature(token, as: IDTokenClaims.self), claims.iss == issuer else { return nil }
        return claims.aud
    }
}

/// Access tokens a signer's keys have verified, by their exact text, with their claims. A resource server introspects the
/// same token on each call it serves for the token's hour (an admin tool presents the same one to the admin API), and an
/// ES256 verification costs about three signatures (callgrind: half of an introspection's instructions). What a hit skips
/// is the signature and the decoding of the payload — the same bytes verify the same way under the same keys — and nothing
/// else: expiry, `nbf`, issuer and audience are judged on every call, a retired key's tokens are refused before the table
/// is asked, and a signer with other keys (a rotation) is another signer with an empty table. Only tokens whose signature
/// verified are kept — tokens this service issued — at most `capacity` of them; when full, one is dropped for each added.
final class VerifiedAccessTokens: Sendable {
    let capacity: Int
    private let table = Mutex<[String: AccessTokenClaims]>([:])

    init(capacity: Int) { self.capacity = capacity }

    func claims(of token: String) -> AccessTokenClaims? { table.withLock { $0[token] } }

    func remember(_ token: String, _ claims: AccessTokenClaims) {
        table.withLock { table in
            if table.count >= capacity, table[token] == nil { table.remove(at: table.startIndex) }
            table[token] = claims
        }
    }

    var count: Int { table.withLock { $0.count } }
}
