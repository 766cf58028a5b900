public import Foundation

/// How a resource reads the access token of a request and checks its binding (PROTOCOL §15, RFC 9449 §7): the
/// `Authorization` scheme (`Bearer` or `DPoP`), and for a bound token (`cnf.jkt`) a `DPoP` proof for this request
/// by that key, with `ath`. A bound token presented as `Bearer` is refused; so is a bearer token presented as `DPoP`.
/// Shared by the server's own APIs and the resource-server library.
public struct ProtectedResourceRequest: Sendable {
    public enum Scheme: String, Sendable {
        case bearer = "Bearer"
        case dpop = "DPoP"
    }

    public let scheme: Scheme
    public let token: String

    /// The scheme and token of an `Authorization` header; `nil` when there is none of either scheme. Read on the UTF-8
    /// view (Foundation's `trimmingCharacters` and `contains` go through NSString on Linux: 13 % of the gateway's CPU).
    public init?(authorization: String?) {
        guard let authorization, let space = authorization.utf8.firstIndex(of: UInt8(ascii: " ")) else { return nil }
        let name = authorization[..<space].lowercased()
        let isBlank = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        var rest = authorization.utf8[space...]
        while let first = rest.first, isBlank(first) { rest = rest.dropFirst() }
        while let last = rest.last, isBlank(last) { rest = rest.dropLast() }
        guard !rest.isEmpty, !rest.contains(where: isBlank), let token = String(rest) else { return nil }
        switch name {
        case "bearer": scheme = .bearer
        case "dpop": scheme = .dpop
        default: return nil
        }
        self.token = token
    }

    /// Why a token's presentation was refused: the `WWW-Authenticate` challenge to answer 401 with.
    public struct Refusal: Error, Sendable, Equatable {
        /// `invalid_token` or `invalid_dpop_proof`.
        public let error: String
        public let message: String

        /// A proof presented a second time (the replay cache said so).
        public static let replayed = Refusal(error: "invalid_dpop_proof", message: "The DPoP proof was already used: every request needs a new one.")

        /// The resource's replay cache is full of live proofs: it cannot tell a replay, so it refuses until some expire.
        public static let busy = Refusal(error: "invalid_dpop_proof", message: "Too many DPoP proofs in the last two minutes: try again shortly.")

        /// RFC 9449 §7.1's challenge, with the algorithms a proof may use.
        public var challenge: String {
            #"DPoP error="\#(error)", error_description="\#(message)", algs="\#(DPoPVerifier.algorithms.joined(separator: " "))""#
        }
    }

    /// Checks the binding of a token whose claims were verified: `confirmation` is its `cnf.jkt`. For a `DPoP`
    /// presentation, `proofs` (the `DPoP` header values) must hold one valid proof for `method` `url` by that key; the
    /// proof is returned for the caller's replay cache.
    public func checkBinding(confirmation: String?, proofs: [String], method: String, url: String, now: Date) throws(Refusal) -> DPoPProof? {
        switch (scheme, confirmation) {
        case (.bearer, nil):
            return nil
        case (.bearer, .some):
            throw Refusal(error: "invalid_token", message: "The access token is bound to a DPoP key: present it with the DPoP scheme and a proof.")
        case (.dpop, nil):
            throw Refusal(error: "invalid_token", message: "The access token is not DPoP-bound: present it with the Bearer scheme.")
        case (.dpop, .some(let jkt)):
            guard proofs.count == 1, let compact = proofs.first else {
                throw Refusal(error: "invalid_dpop_proof", message: "A DPoP-bound token needs exactly one DPoP proof header.")
            }
            let proof: DPoPProof
            do {
                proof = try DPoPVerifier.verify(compact, method: method, url: url, now: now, accessToken: token)
            } catch {
                throw Refusal(error: "invalid_dpop_proof", message: error.description)
            }
            guard proof.thumbprint == jkt else {
                throw Refusal(error: "invalid_dpop_proof", message: "The DPoP proof is signed by another key than the one the token is bound to.")
            }
            return proof
        }
    }
}
