import Foundation
import PortcullisCore
import PortcullisStorage
import PortcullisTokens

/// Temporary access passes (PROTOCOL §12.3): made, hashed and matched in one place. A pass is 12 characters from an
/// alphabet without look-alikes (about 59 bits): typed by a person from what an admin read out, never stored in
/// clear, and — like a password — guessed only at the §9.6 rate, so a fast keyed hash is enough.
struct TemporaryAccessPasses: Sendable {
    let store: any TemporaryAccessPassStore
    let credentials: CredentialHasher

    static let alphabet = Array("ABCDEFGHJKMNPQRSTUVWXYZ23456789")
    static let length = 12
    /// Graph's limits and default for `lifetimeInMinutes`.
    static let lifetimeRange = 10...43_200
    static let defaultLifetime = 60

    /// A new pass, drawn uniformly from the alphabet.
    static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        return String((0..<length).map { _ in alphabet[Int(generator.next(upperBound: UInt32(alphabet.count)))] })
    }

    /// The pass as it is hashed: what a person typed, without spaces or dashes, in upper case.
    static func normalized(_ typed: String) -> String {
        String(typed.uppercased().filter { $0 != " " && $0 != "-" })
    }

    func hash(_ pass: String) -> String { credentials.hashSecret(Self.normalized(pass)) }

    /// The user's pass when it is usable at `now` and `typed` is it (compared in constant time).
    func matching(_ typed: String, tenantId: String, userId: String, now: Date) async throws -> TemporaryAccessPassRecord? {
        guard typed.count <= 64, let pass = try await store.temporaryAccessPass(tenantId: TenantID(tenantId), userId: ObjectID(userId)),
            pass.usability(at: now) == .enabledByPolicy, credentials.verifySecret(Self.normalized(typed), against: [pass.passHash])
        else { return nil }
        return pass
    }
}
