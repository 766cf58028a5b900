/// Authenticator data (WebAuthn Level 3 §6.1), read strictly: the RP ID hash, the flags, the signature counter and,
/// when the flags say so, the attested credential data (AAGUID, credential ID, COSE public key) and the extensions —
/// and nothing after them.
public struct AuthenticatorData: Equatable, Sendable {
    public struct Flags: OptionSet, Equatable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// UP: the user was present.
        public static let userPresent = Flags(rawValue: 1 << 0)
        /// UV: the user was verified (PIN, biometrics).
        public static let userVerified = Flags(rawValue: 1 << 2)
        /// BE: the credential may be backed up (a synced passkey).
        public static let backupEligible = Flags(rawValue: 1 << 3)
        /// BS: the credential is backed up now.
        public static let backedUp = Flags(rawValue: 1 << 4)
        /// AT: attested credential data follows.
        public static let attestedCredentialData = Flags(rawValue: 1 << 6)
        /// ED: extensions follow.
        public static let extensionData = Flags(rawValue: 1 << 7)
    }

    public struct AttestedCredential: Equatable, Sendable {
        /// The authenticator model's AAGUID (all zeros when the authenticator does not say).
        public let aaguid: [UInt8]
        public let credentialId: [UInt8]
        /// The credential public key as it was encoded (stored as such).
        public let publicKeyBytes: [UInt8]
        public let publicKey: COSEKey
    }

    public let rpIdHash: [UInt8]
    public let flags: Flags
    public let signCount: UInt32
    public let attestedCredential: AttestedCredential?
    public let extensions: CBOR?
    /// The bytes as received (signatures cover them).
    public let bytes: [UInt8]

    /// WebAuthn L3 §5.8.3: a credential ID is at most 1,023 bytes.
    public static let maximumCredentialIdLength = 1023

    public init(_ bytes: some Collection<UInt8>) throws(WebAuthnFormatError) {
        let bytes = Array(bytes)
        guard bytes.count >= 37 else { throw WebAuthnFormatError("authenticator data is shorter than 37 bytes") }
        self.bytes = bytes
        rpIdHash = Array(bytes[0..<32])
        flags = Flags(rawValue: bytes[32])
        signCount = bytes[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
        if flags.contains(.backedUp) && !flags.contains(.backupEligible) {
            throw WebAuthnFormatError("the backup state flag is set without the backup eligibility flag")
        }
        var position = 37
        let decoder = CBORDecoder()
        if flags.contains(.attestedCredentialData) {
            guard bytes.count >= position + 18 else { throw WebAuthnFormatError("attested credential data is truncated") }
            let aaguid = Array(bytes[position..<position + 16])
            let idLength = Int(bytes[position + 16]) << 8 | Int(bytes[position + 17])
            position += 18
            guard idLength > 0, idLength <= Self.maximumCredentialIdLength else {
                throw WebAuthnFormatError("a credential ID of \(idLength) bytes (1 to \(Self.maximumCredentialIdLength))")
            }
            guard bytes.count >= position + idLength else { throw WebAuthnFormatError("the credential ID is truncated") }
            let credentialId = Array(bytes[position..<position + idLength])
            position += idLength
            let key: (item: CBOR, length: Int)
            do { key = try decoder.decodePrefix(bytes[position...]) } catch { throw WebAuthnFormatError("the credential public key: \(error)") }
            let publicKeyBytes = Array(bytes[position..<position + key.length])
            position += key.length
            attestedCredential = AttestedCredential(
                aaguid: aaguid, credentialId: credentialId, publicKeyBytes: publicKeyBytes, publicKey: try COSEKey(key.item))
        } else {
            attestedCredential = nil
        }
        if flags.contains(.extensionData) {
            let item: (item: CBOR, length: Int)
            do { item = try decoder.decodePrefix(bytes[position...]) } catch { throw WebAuthnFormatError("the extensions: \(error)") }
            guard case .map = item.item else { throw WebAuthnFormatError("the extensions are not a map") }
            extensions = item.item
            position += item.length
        } else {
            extensions = nil
        }
        guard position == bytes.count else { throw WebAuthnFormatError("\(bytes.count - position) bytes follow the authenticator data") }
    }
}

/// Why a WebAuthn structure could not be read.
public struct WebAuthnFormatError: Error, Equatable, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
