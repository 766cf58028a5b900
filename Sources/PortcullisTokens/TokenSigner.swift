import Crypto
import Foundation
import JWTKit
import PortcullisAPI
import PortcullisCore

/// Signs and verifies the server's JWTs with the loaded signing keys, and publishes them as a JWKS.
public struct TokenSigner: Sendable {
    public let loaded: SigningKeyStore.Loaded
    public let keys: [SigningKey]
    public let accessTokenType: AccessTokenType
    /// The JWKS document, serialised once.
    public let jwksJSON: Data
    private let collection: JWTKeyCollection
    private let clock: any WallClock

    /// The key that signs now.
    public var active: SigningKey { loaded.active(at: clock.now()) }

    public init(loaded: SigningKeyStore.Loaded, accessTokenType: AccessTokenType = .jwt, clock: any WallClock = SystemWallClock()) async throws {
        self.loaded = loaded
        self.clock = clock
        self.keys = loaded.all
        self.accessTokenType = accessTokenType
        let collection = JWTKeyCollection()
        // jwt-kit serialises with each key's own serializer (the collection's default serves JWKs only).
        let serializer = DefaultJWTSerializer(jsonEncoder: ClaimsJSONEncoder())
        for key in loaded.all {
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
        self.jwksJSON = try encoder.encode(["keys": loaded.all.map(\.publicJWK)])
    }

    /// Signs an access token with the active key.
    public func sign(accessToken claims: AccessTokenClaims) async throws -> String {
        try await collection.sign(claims, kid: JWKIdentifier(string: active.kid),
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
        try await collection.verify(token, as: type)
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
        guard let claims = try? await collection.verify(token, as: AccessTokenClaims.self) else {
            return .failure(.malformedOrBadSignature)
        }
        let current = now.timeIntervalSince1970
        if TimeInterval(claims.exp) + leeway <= current { return .failure(.expired) }
        if TimeInterval(claims.nbf) - leeway > current { return .failure(.notYetValid) }
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
        guard let claims = try? await collection.verify(token, as: IDTokenClaims.self), claims.iss == issuer else { return nil }
        return claims.aud
    }
}
