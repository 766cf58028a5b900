public import Foundation
public import PortcullisTokens

/// What a resource server asks of each request (PROTOCOL §14.3, §15): a valid access token for this resource, presented
/// with the right scheme (`Bearer`, or `DPoP` with a proof by the token's key, for this method and URL, used once). The
/// answer is the token's claims, or the 401 to send with its challenges.
public struct ResourceGuard: Sendable {
    public let validator: AccessTokenValidator
    public let replays: ProofReplayCache
    /// Revocations heard from the authority's Shared Signals stream (PROTOCOL §14.3); `nil`: none are enforced.
    public let revocations: RevocationView?

    public init(validator: AccessTokenValidator, replays: ProofReplayCache = ProofReplayCache(), revocations: RevocationView? = nil) {
        self.validator = validator
        self.replays = replays
        self.revocations = revocations
    }

    /// The claims request a revoked token's holder must satisfy: a token issued after the revocation (PROTOCOL §14.1).
    /// Tokens issued in the revocation's second count as before it, so the new one is asked for from the next second.
    public static func notBeforeClaims(revokedAt: Int) -> String {
        #"{"access_token":{"nbf":{"essential":true,"value":"\#(revokedAt + 1)"}}}"#
    }

    /// A refused request: 401 with these `WWW-Authenticate` values.
    public struct Refusal: Error, Sendable, Equatable {
        public let challenges: [String]
        public let message: String

        public init(challenges: [String], message: String) {
            self.challenges = challenges
            self.message = message
        }

        /// The 401's small JSON body.
        public var body: String {
            #"{"error":"unauthorized","error_description":"\#(message.replacingOccurrences(of: "\"", with: "'"))"}"#
        }

        init(_ presentation: ProtectedResourceRequest.Refusal) {
            self.init(challenges: [presentation.challenge], message: presentation.message)
        }
    }

    /// The claims of the request's token. `url` is the URL the client called (scheme, host and path, as a proof's `htu`
    /// names it).
    public func authorize(
        authorization: String?, proofs: [String], method: String, url: String, now: Date
    ) async throws(Refusal)
        -> AccessTokenClaims
    {
        let presented = try presentedToken(authorization)
        let claims: AccessTokenClaims
        do {
            claims = try await validator.validate(presented.token, now: now)
        } catch {
            throw invalidToken(error, presented)
        }
        if let proof = try admit(presented, claims, proofs: proofs, method: method, url: url, now: now) {
            switch await replays.claim(proof.replayKey, expiresAt: proof.replayExpiry, now: now) {
            case .fresh: break
            case .replayed: throw Refusal(.replayed)
            case .full: throw Refusal(.busy)
            }
        }
        return claims
    }

    /// The same decision without waiting, from what is in memory: `nil` when it needs more (a token whose signature was
    /// not checked yet, keys due for a refresh, a DPoP proof to claim against replay); then `authorize` decides. The
    /// gateway answers most requests this way, on the connection's own thread.
    public func authorizeRemembered(authorization: String?, proofs: [String], method: String, url: String, now: Date) -> Result<AccessTokenClaims, Refusal>? {
        let presented: ProtectedResourceRequest
        do { presented = try presentedToken(authorization) } catch { return .failure(error) }
        guard presented.scheme == .bearer, proofs.isEmpty, let validated = validator.validateRemembered(presented.token, now: now) else { return nil }
        switch validated {
        case .failure(let error): return .failure(invalidToken(error, presented))
        case .success(let claims):
            do {
                guard try admit(presented, claims, proofs: proofs, method: method, url: url, now: now) == nil else { return nil }
                return .success(claims)
            } catch {
                return .failure(error)
            }
        }
    }

    var bearerChallenge: String { #"Bearer realm="", authorization_uri="\#(validator.authority)/oauth2/v2.0/authorize""# }
    static let dpopChallenge = #"DPoP algs="\#(DPoPVerifier.algorithms.joined(separator: " "))""#

    func presentedToken(_ authorization: String?) throws(Refusal) -> ProtectedResourceRequest {
        guard let presented = ProtectedResourceRequest(authorization: authorization) else {
            // RFC 6750 §3.1: no error code when the request had no credentials.
            throw Refusal(challenges: [bearerChallenge, Self.dpopChallenge], message: "An access token is required (Bearer or DPoP).")
        }
        return presented
    }

    func invalidToken(_ error: AccessTokenValidator.Rejection, _ presented: ProtectedResourceRequest) -> Refusal {
        let quoted = error.description.replacingOccurrences(of: "\"", with: "'")
        let challenge = presented.scheme == .dpop ? Self.dpopChallenge : bearerChallenge
        return Refusal(challenges: [challenge + #", error="invalid_token", error_description="\#(quoted)""#], message: error.description)
    }

    /// What follows a valid token, without waiting: continuous access evaluation's revocations, then the token's binding
    /// (the scheme, and a DPoP proof's checks). Answers the proof to claim against replay, if any.
    func admit(
        _ presented: ProtectedResourceRequest, _ claims: AccessTokenClaims, proofs: [String], method: String, url: String, now: Date
    ) throws(Refusal) -> DPoPProof? {
        // Continuous access evaluation: a token issued before its user's (or its app's) revocation is challenged for a
        // new one, as Entra's resources do: `insufficient_claims` with the `nbf` claims request, base64.
        if let revokedAt = revocations?.revocation(of: claims) {
            let scheme = presented.scheme == .dpop ? "DPoP" : "Bearer"
            let encoded = Data(Self.notBeforeClaims(revokedAt: revokedAt).utf8).base64EncodedString()
            throw Refusal(
                challenges: [
                    #"\#(scheme) realm="", authorization_uri="\#(validator.authority)/oauth2/v2.0/authorize", error="insufficient_claims", claims="\#(encoded)""#
                ], message: "The access token was revoked (continuous access evaluation); get a new one with the claims in the challenge.")
        }
        do {
            return try presented.checkBinding(confirmation: claims.cnf?.jkt, proofs: proofs, method: method, url: url, now: now)
        } catch {
            throw Refusal(error)
        }
    }
}
