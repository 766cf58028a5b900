public import AsyncHTTPClient
public import Foundation
import JWTKit
public import Logging
import NIOCore
import NIOHTTP1
public import PortcullisTokenVerification
import PortcullisVocabulary
import Synchronization

/// Validates a tenant's access tokens from its published keys (PROTOCOL §14.3): signature by a key of the JWKS (fetched
/// from the authority's discovery document, refreshed every `keyRefresh` and at once — at most every `minimumRefetch`
/// — when a token names a key it does not know, so a rotation needs no restart), then issuer, audience and time.
public actor AccessTokenValidator {
    /// `{base}/{tenant}`, as the gateway's `--authority` names it.
    public nonisolated let authority: String
    /// The audiences accepted (`aud`): the resource's application ID and its identifier URIs.
    public nonisolated let audiences: [String]
    public nonisolated let leeway: TimeInterval
    let client: HTTPClient
    let keyRefresh: TimeInterval
    let minimumRefetch: TimeInterval
    let logger: Logger
    private var keys = JWTKeyCollection()
    /// What a request can be answered from without waiting (`validateRemembered`): the issuer and when the keys were
    /// fetched, and the tokens whose signature was checked, with their claims. A client sends the same token with every
    /// request, and the signature check and payload decoding were the larger part of the gateway's work per request.
    /// At most `verifiedCapacity` tokens (emptied when full, and at every key refresh); issuer, audience and time are
    /// checked on every request all the same.
    private struct Remembered {
        var issuer: String?
        var fetchedAt: Date?
        var verified: [String: AccessTokenClaims] = [:]
    }
    private nonisolated let remembered = Mutex(Remembered())
    public nonisolated let verifiedCapacity: Int

    public init(
        authority: String, audiences: [String], client: HTTPClient, leeway: TimeInterval = 60, keyRefresh: TimeInterval = 300,
        minimumRefetch: TimeInterval = 30, verifiedCapacity: Int = 4096, logger: Logger
    ) {
        self.verifiedCapacity = max(0, verifiedCapacity)
        self.authority = authority.hasSuffix("/") ? String(authority.dropLast()) : authority
        self.audiences = audiences.map { $0.lowercased() }
        self.client = client
        self.leeway = leeway
        self.keyRefresh = keyRefresh
        self.minimumRefetch = minimumRefetch
        self.logger = logger
    }

    /// Why a token is not accepted (the `error_description` of the challenge).
    public struct Rejection: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// The token's claims, when it is valid at `now`.
    public func validate(_ token: String, now: Date) async throws(Rejection) -> AccessTokenClaims {
        guard token.utf8.count <= 16_384 else { throw Rejection(description: "The access token is too long.") }
        if keysDue(now: now) { await refresh(now: now) }
        if let answer = validateRemembered(token, now: now) { return try answer.get() }
        guard let checked = await verified(token, as: AccessTokenClaims.self, now: now) else {
            throw Rejection(description: "The access token's signature is not by a key of the authority.")
        }
        let issuer = remembered.withLock { remembered in
            if remembered.verified.count >= verifiedCapacity { remembered.verified.removeAll(keepingCapacity: true) }
            if verifiedCapacity > 0 { remembered.verified[token] = checked }
            return remembered.issuer
        }
        return try check(checked, issuer: issuer, now: now)
    }

    /// The answer for a token whose signature was already checked, without waiting: `nil` when the token is not
    /// remembered or the keys are due for a refresh (then `validate` decides).
    public nonisolated func validateRemembered(_ token: String, now: Date) -> Result<AccessTokenClaims, Rejection>? {
        let found = remembered.withLock { remembered -> (AccessTokenClaims, String?)? in
            guard let fetchedAt = remembered.fetchedAt, now.timeIntervalSince(fetchedAt) <= keyRefresh, let claims = remembered.verified[token]
            else { return nil }
            return (claims, remembered.issuer)
        }
        guard let (claims, issuer) = found else { return nil }
        return Result { () throws(Rejection) in try check(claims, issuer: issuer, now: now) }
    }

    /// Issuer, audience and time.
    nonisolated func check(_ claims: AccessTokenClaims, issuer: String?, now: Date) throws(Rejection) -> AccessTokenClaims {
        guard let issuer, claims.iss == issuer else { throw Rejection(description: "The access token is from another issuer.") }
        guard audiences.contains(claims.aud) || audiences.contains(claims.aud.lowercased()) else {
            throw Rejection(description: "The access token is for another audience.")
        }
        let time = now.timeIntervalSince1970
        guard TimeInterval(claims.exp) + leeway > time else { throw Rejection(description: "The access token has expired.") }
        guard TimeInterval(claims.nbf) - leeway <= time else { throw Rejection(description: "The access token is not valid yet.") }
        // A token dated ahead would count as issued after revocations that come before it (PROTOCOL §14.1).
        guard TimeInterval(claims.iat) - leeway <= time else { throw Rejection(description: "The access token is dated in the future.") }
        return claims
    }

    private func keysDue(now: Date) -> Bool {
        remembered.withLock { $0.fetchedAt }.map { now.timeIntervalSince($0) > keyRefresh } ?? true
    }

    /// A Shared Signals SET of the authority (PROTOCOL §14.2): signed by a key of its JWKS, `typ: secevent+jwt`, its
    /// issuer's, for `audience`.
    public func validateSecurityEvent(_ token: String, audience: String, now: Date) async throws(Rejection) -> SharedSignalsSecurityEvent {
        guard token.utf8.count <= 16_384 else { throw Rejection(description: "The SET is too long.") }
        guard let header = token.split(separator: ".").first.flatMap({ Base64URL.decode(String($0)) }),
            let fields = try? JSONSerialization.jsonObject(with: header) as? [String: Any], (fields["typ"] as? String)?.lowercased() == "secevent+jwt"
        else { throw Rejection(description: "The SET's typ is not secevent+jwt.") }
        guard let event = await verified(token, as: SharedSignalsSecurityEvent.self, now: now) else {
            throw Rejection(description: "The SET's signature is not by a key of the authority.")
        }
        guard let issuer = remembered.withLock({ $0.issuer }), event.iss == issuer else { throw Rejection(description: "The SET is from another issuer.") }
        guard event.aud.lowercased() == audience.lowercased() else { throw Rejection(description: "The SET is for another audience.") }
        return event
    }

    /// The payload, when a key of the authority signed `token`: the keys are refreshed every `keyRefresh`, and at once
    /// (at most every `minimumRefetch`) when none verifies — perhaps a key published since the last fetch (a rotation).
    private func verified<Payload: JWTPayload>(_ token: String, as type: Payload.Type, now: Date) async -> Payload? {
        if keysDue(now: now) { await refresh(now: now) }
        if let payload = try? await keys.verify(token, as: type) { return payload }
        guard remembered.withLock({ $0.fetchedAt }).map({ now.timeIntervalSince($0) > minimumRefetch }) ?? true else { return nil }
        await refresh(now: now)
        return try? await keys.verify(token, as: type)
    }

    /// Fetches the discovery document and the JWKS; on failure the keys in hand are kept.
    func refresh(now: Date) async {
        remembered.withLock { $0.fetchedAt = now }
        do {
            let discovery = try await fetchJSON("\(authority)/v2.0/.well-known/openid-configuration")
            guard let issuer = discovery["issuer"] as? String, let jwksURI = discovery["jwks_uri"] as? String else {
                throw Rejection(description: "discovery without issuer or jwks_uri")
            }
            let jwks = try await fetchData(jwksURI)
            let collection = JWTKeyCollection()
            try await collection.add(jwks: try JSONDecoder().decode(JWKS.self, from: jwks))
            keys = collection
            remembered.withLock { remembered in
                remembered.issuer = issuer
                remembered.verified.removeAll()
            }
        } catch {
            logger.warning("could not refresh the authority's keys; keeping the ones in hand", metadata: ["portcullis.error": "\(error)"])
        }
    }

    private func fetchData(_ url: String) async throws -> Data {
        var request = HTTPClientRequest(url: url)
        request.method = .GET
        let response = try await client.execute(request, timeout: .seconds(10))
        guard response.status == .ok else { throw Rejection(description: "\(url) answered \(response.status.code)") }
        return Data((try await response.body.collect(upTo: 1 << 20)).readableBytesView)
    }

    private func fetchJSON(_ url: String) async throws -> [String: Any] {
        (try JSONSerialization.jsonObject(with: try await fetchData(url)) as? [String: Any]) ?? [:]
    }
}
