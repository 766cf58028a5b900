public import Foundation
import PortcullisVocabulary

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
    /// bytes in one pass (Foundation's `trimmingCharacters` and `contains` go through NSString on Linux: 13 % of the
    /// gateway's CPU once; walking a Substring's UTF-8 view, 3 %).
    public init?(authorization: String?) {
        guard var authorization else { return nil }
        let parsed: (Scheme, String)? = authorization.withUTF8 { bytes in
            guard let space = bytes.firstIndex(of: UInt8(ascii: " ")) else { return nil }
            let scheme: Scheme
            if ASCII.equalsIgnoringCase(bytes[..<space], "bearer") {
                scheme = .bearer
            } else if ASCII.equalsIgnoringCase(bytes[..<space], "dpop") {
                scheme = .dpop
            } else {
                return nil
            }
            func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
            var start = space
            var end = bytes.count
            while start < end, isBlank(bytes[start]) { start += 1 }
            while end > start, isBlank(bytes[end - 1]) { end -= 1 }
            guard start < end else { return nil }
            for index in start..<end where isBlank(bytes[index]) { return nil }
            return (scheme, String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self))
        }
        guard let parsed else { return nil }
        (scheme, token) = parsed
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
