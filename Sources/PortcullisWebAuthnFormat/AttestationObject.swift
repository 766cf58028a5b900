import Foundation

/// An attestation object (WebAuthn L3 §6.5): `{"fmt": text, "attStmt": map, "authData": bytes}`.
public struct AttestationObject: Equatable, Sendable {
    public let format: String
    public let statement: CBOR
    public let authenticatorData: AuthenticatorData

    /// The largest attestation object read (an x5c chain of a few certificates fits many times over).
    public static let maximumLength = 16 * 1024

    public init(_ bytes: some Collection<UInt8>) throws(WebAuthnFormatError) {
        guard bytes.count <= Self.maximumLength else { throw WebAuthnFormatError("the attestation object is over \(Self.maximumLength) bytes") }
        let object: CBOR
        do { object = try CBORDecoder().decode(bytes) } catch { throw WebAuthnFormatError("the attestation object: \(error)") }
        guard case .map = object else { throw WebAuthnFormatError("the attestation object is not a map") }
        guard let format = object[text: "fmt"]?.textString else { throw WebAuthnFormatError("the attestation object has no fmt") }
        guard let statement = object[text: "attStmt"], case .map = statement else { throw WebAuthnFormatError("the attestation object has no attStmt map") }
        guard let data = object[text: "authData"]?.byteString else { throw WebAuthnFormatError("the attestation object has no authData") }
        let authenticatorData = try AuthenticatorData(data)
        guard authenticatorData.attestedCredential != nil else { throw WebAuthnFormatError("the authenticator data of a registration carries no credential") }
        self.format = format
        self.statement = statement
        self.authenticatorData = authenticatorData
    }
}

/// The client data a browser signs over (WebAuthn L3 §5.8.1), as sent: its members and its exact bytes (the hash is
/// over the bytes, never over a re-encoding).
public struct CollectedClientData: Sendable {
    public let type: String
    /// The challenge as base64url text, compared with the issued one as text.
    public let challenge: String
    public let origin: String
    public let crossOrigin: Bool
    public let topOrigin: String?
    public let bytes: [UInt8]

    public static let maximumLength = 4 * 1024

    private struct Members: Decodable {
        let type: String
        let challenge: String
        let origin: String
        let crossOrigin: Bool?
        let topOrigin: String?
    }

    public init(_ bytes: some Collection<UInt8>) throws(WebAuthnFormatError) {
        let bytes = Array(bytes)
        guard bytes.count <= Self.maximumLength else { throw WebAuthnFormatError("the client data is over \(Self.maximumLength) bytes") }
        let members: Members
        do { members = try JSONDecoder().decode(Members.self, from: Data(bytes)) } catch {
            throw WebAuthnFormatError("the client data is not the JSON object WebAuthn describes")
        }
        type = members.type
        challenge = members.challenge
        origin = members.origin
        crossOrigin = members.crossOrigin ?? false
        topOrigin = members.topOrigin
        self.bytes = bytes
    }
}
