import Crypto
public import Foundation

/// Second-factor secrets at rest (PROTOCOL §10): AES-256-GCM under a key derived from the credential pepper in
/// `Keys/` (so a copy of the database alone reveals no secret), with the tenant, the user and the method's ID
/// as associated data (a sealed secret moved to another user's row does not open). Every node derives the
/// same key.
public struct FactorSecretBox: Sendable {
    private let key: SymmetricKey

    public init(credentials: CredentialHasher) {
        self.key = credentials.derivedKey(purpose: "factor-secrets-v1")
    }

    static func associatedData(tenantId: String, userId: String, methodId: String) -> Data {
        Data("portcullis-factor|\(tenantId.lowercased())|\(userId.lowercased())|\(methodId.lowercased())".utf8)
    }

    public func seal(_ secret: [UInt8], tenantId: String, userId: String, methodId: String) throws -> Data {
        guard
            let combined = try AES.GCM.seal(secret, using: key, authenticating: Self.associatedData(tenantId: tenantId, userId: userId, methodId: methodId))
                .combined
        else { throw CryptoKitError.incorrectParameterSize }
        return combined
    }

    /// The secret, or `nil` when the box does not open (another key, another row, damaged).
    public func open(_ sealed: Data, tenantId: String, userId: String, methodId: String) -> [UInt8]? {
        guard let box = try? AES.GCM.SealedBox(combined: sealed),
            let plain = try? AES.GCM.open(box, using: key, authenticating: Self.associatedData(tenantId: tenantId, userId: userId, methodId: methodId))
        else { return nil }
        return Array(plain)
    }
}
