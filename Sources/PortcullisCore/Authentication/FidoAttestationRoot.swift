public import Foundation

/// A root certificate an admin trusts for passkey attestation (PROTOCOL §12.1): a vendor's attestation CA, uploaded
/// as PEM at `/admin/v1/authentication-methods-policy/fido2/attestation-roots`. A packed `x5c` chain that verifies to
/// one at registration makes the passkey's model (AAGUID) known, which a strength naming `allowedAAGuids` requires.
/// The certificate is read and checked where certificates are understood (`PortcullisTokens`); this is what is stored.
public struct FidoAttestationRoot: Codable, Sendable, Equatable {
    public var id: String
    public var displayName: String
    /// The certificate, DER in standard base64 (the admin API shows it as PEM).
    public var certificate: String
    /// The certificate's subject, as RFC 4514 text, for people.
    public var subject: String
    /// SHA-256 of the DER, lower-case hex: what tells two uploads of one certificate apart.
    public var sha256Thumbprint: String
    public var notAfter: Date

    /// A tenant trusts at most this many roots.
    public static let perTenant = 100

    public init(id: String, displayName: String, certificate: String, subject: String, sha256Thumbprint: String, notAfter: Date) {
        self.id = id.lowercased()
        self.displayName = displayName
        self.certificate = certificate
        self.subject = subject
        self.sha256Thumbprint = sha256Thumbprint
        self.notAfter = notAfter
    }
}
