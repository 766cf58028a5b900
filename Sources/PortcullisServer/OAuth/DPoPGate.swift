import Foundation
import PortcullisCore
import PortcullisStorage
import PortcullisTokens

/// The token endpoint's DPoP checks (PROTOCOL §15, RFC 9449 §4.3, §8, §11.1): the proof's form, key and signature,
/// `htm`/`htu`/`iat` (`DPoPVerifier`), then the server nonce, then the replay cache shared by every node. A refusal is
/// `invalid_dpop_proof`, or `use_dpop_nonce` with the nonce to use.
struct DPoPGate: Sendable {
    let nonces: DPoPNonces
    let replays: any ProofReplayStore
    /// Whether proofs must carry a server nonce (`tokens.dpopNonce`, default `required`).
    let requireNonce: Bool

    /// The valid proof among `headers` (the `DPoP` header values), or `nil` when there is none.
    func check(_ headers: [String], method: String, url: String, now: Date) async throws -> DPoPProof? {
        guard let compact = headers.first else { return nil }
        guard headers.count == 1 else { throw TokenError.invalidDPoPProof("The request carries more than one DPoP header.") }
        let proof: DPoPProof
        do {
            proof = try DPoPVerifier.verify(compact, method: method, url: url, now: now)
        } catch {
            throw TokenError.invalidDPoPProof(error.description)
        }
        if requireNonce {
            guard let nonce = proof.nonce, nonces.isValid(nonce, now: now) else { throw TokenError.useDPoPNonce(nonces.current(now: now)) }
        }
        // A proof is accepted once on every node.
        guard try await replays.claimProof(key: proof.replayKey, expiresAt: proof.replayExpiry, now: now) else {
            throw TokenError.invalidDPoPProof("The DPoP proof was already used: every request needs a new proof (a new jti).")
        }
        return proof
    }

    /// The `DPoP-Nonce` to send with an answer to a DPoP request.
    func nonceHeader(now: Date) -> String? { requireNonce ? nonces.current(now: now) : nil }
}
