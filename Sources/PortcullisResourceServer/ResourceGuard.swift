public import Foundation
public import PortcullisTokenVerification

/// What a resource server asks of each request (PROTOCOL §14.3, §15): a valid access token for this resource, presented
/// with the right scheme (`Bearer`, or `DPoP` with a proof by the token's key, for this method and URL, used once). The
/// answer is the token's claims, or the 401 to send with its challenges.
public struct ResourceGuard: Sendable {
    public let validator: AccessTokenValidator
    public let replays: ProofReplayCache
    /// Revocations heard from the authority's Shared Signals stream (PROTOCOL §14.3); `nil`: none are enforced.
    public let revocations: RevocationView?
    /// While no current revocation view stands behind the tokens (none, or its stream is down), no token counts for longer
    /// than this after its `iat` (PROTOCOL §14.3: CAE's long lifetimes rest on revocations arriving); `nil`: no limit.
    public let maximumTokenAge: TimeInterval?

    public init(
        validator: AccessTokenValidator, replays: ProofReplayCache = ProofReplayCache(), revocations: RevocationView? = nil,
        maximumTokenAge: TimeInterval? = nil
    ) {
        self.validator = validator
        self.replays = replays
        self.revocations = revocations
        self.maximumTokenAge = maximumTokenAge
    }

    /// The claims request a revoked token's holder must satisfy: a token issued after the revocation (PROTOCOL §14.1),
    /// named by the first whole second at or after it (`revokedAt` in milliseconds). A token issued within the
    /// revocation's second but after it is honoured (`xms_iat_ms`); asking from the next whole second makes the token
    /// endpoint wait for it, so that a node whose clock lags the revoking node's still issues one that counts.
    public static func notBeforeClaims(revokedAt: Int64) -> String {
        notBeforeClaims(seconds: (revokedAt + 999) / 1000)
    }

    static func notBeforeClaims(seconds: Int64) -> String {
        #"{"access_token":{"nbf":{"essential":true,"value":"\#(seconds)"}}}"#
    }

    /// Whether a token issued at `iat` is older than a resource without current revocations accepts now.
    public func tooOld(iat: Int, now: Date) -> Bool {
        guard let maximumTokenAge, revocations?.isCurrent != true else { return false }
        return now.timeIntervalSince1970 - TimeInterval(iat) > maximumTokenAge
    }

    /// Whether a token holding `constraints` may be used from `clientAddress`: every constraint admits it; an unknown
    /// address is admitted by none.
    static func admits(_ constraints: [StrictLocationConstraint], clientAddress: String?) -> Bool {
        guard let address = clientAddress.flatMap(IPAddress.init) else { return constraints.isEmpty }
        return constraints.allSatisfy { $0.admits(address) }
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
    /// names it); `clientAddress` the address the request came from (a token under strict location enforcement is refused
    /// without one).
    public func authorize(
        authorization: String?, proofs: [String], method: String, url: String, clientAddress: String? = nil, now: Date
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
        if let proof = try admit(presented, claims, proofs: proofs, method: method, url: url, clientAddress: clientAddress, now: now) {
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
    public func authorizeRemembered(
        authorization: String?, proofs: [String], method: String, url: String, clientAddress: String? = nil, now: Date
    ) -> Result<AccessTokenClaims, Refusal>? {
        let presented: ProtectedResourceRequest
        do { presented = try presentedToken(authorization) } catch { return .failure(error) }
        guard presented.scheme == .bearer, proofs.isEmpty, let validated = validator.validateRemembered(presented.token, now: now) else { return nil }
        switch validated {
        case .failure(let error): return .failure(invalidToken(error, presented))
        case .success(let claims):
            do {
                guard try admit(presented, claims, proofs: proofs, method: method, url: url, clientAddress: clientAddress, now: now) == nil else {
                    return nil
                }
                return .success(claims)
            } catch {
                return .failure(error)
            }
        }
    }

    /// `insufficient_claims` with a claims request, base64, as Entra's resources challenge.
    func notBefore(_ claims: String, _ presented: ProtectedResourceRequest, message: String) -> Refusal {
        let scheme = presented.scheme == .dpop ? "DPoP" : "Bearer"
        let encoded = Data(claims.utf8).base64EncodedString()
        return Refusal(
            challenges: [
                #"\#(scheme) realm="", authorization_uri="\#(validator.authority)/oauth2/v2.0/authorize", error="insufficient_claims", claims="\#(encoded)""#
            ], message: message)
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
        _ presented: ProtectedResourceRequest, _ claims: AccessTokenClaims, proofs: [String], method: String, url: String, clientAddress: String?,
        now: Date
    ) throws(Refusal) -> DPoPProof? {
        // Continuous access evaluation: a token issued before its user's (or its app's) revocation is challenged for a
        // new one, as Entra's resources do: `insufficient_claims` with the `nbf` claims request, base64.
        if let revokedAt = revocations?.revocation(of: claims) {
            throw notBefore(
                Self.notBeforeClaims(revokedAt: revokedAt), presented,
                message: "The access token was revoked (continuous access evaluation); get a new one with the claims in the challenge.")
        }
        // Without current revocations, a long-lived token is not trusted for long: a fresh one is asked for (one issued
        // after this one passes).
        if tooOld(iat: claims.iat, now: now) {
            throw notBefore(
                Self.notBeforeClaims(seconds: Int64(claims.iat) + 1), presented,
                message: "The access token is older than this resource accepts while it hears no revocations; get a new one with the claims in the challenge.")
        }
        // Strict location enforcement (PROTOCOL §17): the location policies hold at the address this resource sees. A
        // token used from outside them is challenged for a new one, which the token endpoint decides at that address.
        if let constraints = claims.xmsSle, !Self.admits(constraints, clientAddress: clientAddress) {
            throw notBefore(
                Self.notBeforeClaims(seconds: Int64(claims.iat) + 1), presented,
                message: "The access token is not accepted from this address (strict location enforcement); get a new one with the claims in the challenge.")
        }
        do {
            return try presented.checkBinding(confirmation: claims.cnf?.jkt, proofs: proofs, method: method, url: url, now: now)
        } catch {
            throw Refusal(error)
        }
    }
}
