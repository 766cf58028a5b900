import Foundation

/// What kind of secret an app configuration policy hands a managed app (PROTOCOL §8.1, Apple's ManagedApp
/// passwords, certificates and identities).
public enum ManagedSecretKind: String, Codable, Sendable, CaseIterable {
    case password, certificate, identity
}
