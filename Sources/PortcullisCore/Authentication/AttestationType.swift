/// How an authenticator attested a passkey when it was registered (PROTOCOL §12.1; WebAuthn L3 §6.5.3).
public enum AttestationType: String, Codable, Sendable, CaseIterable {
    /// `fmt: none`: the authenticator said nothing about itself.
    case none
    /// `packed` signed with the credential's own key.
    case `self`
    /// `packed` with an attestation certificate chain (`x5c`), its signature and certificate requirements checked, but
    /// the chain not verified to a root the tenant trusts: the model it claims is not known.
    case basic
    /// `packed` with an `x5c` chain that verified, at registration, to a root the tenant trusts (an admin's, or the FIDO
    /// metadata BLOB's for the AAGUID): the only attestation that makes the passkey's model (AAGUID) known.
    case attested
}
