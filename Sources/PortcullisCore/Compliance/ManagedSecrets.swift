public import Foundation

/// Where an identity's private key comes from: uploaded by the admin (PEM + PKCS #8, or PKCS #12), or
/// generated on the device and certified by the tenant's issuing CA (the key never leaves the device).
public enum IdentityIssuance: String, Codable, Sendable, CaseIterable {
    case uploaded, device
}

/// One secret a policy declares: an identifier the app looks it up by, and its kind.
public struct SecretDeclaration: Codable, Sendable, Equatable {
    public var identifier: String
    public var kind: ManagedSecretKind
    /// Identities only.
    public var issuance: IdentityIssuance?
    /// Device identities only: the lifetime of an issued certificate, in days.
    public var validityDays: Int?

    public init(identifier: String, kind: ManagedSecretKind, issuance: IdentityIssuance? = nil, validityDays: Int? = nil) {
        self.identifier = identifier
        self.kind = kind
        self.issuance = issuance
        self.validityDays = validityDays
    }

    /// Whether the server holds material for it (everything but a device identity, which is issued on request).
    public var holdsMaterial: Bool { !(kind == .identity && issuance == .device) }

    public static let maximumPerPolicy = 50
    public static let validityRange = 1...397
    public static let defaultValidityDays = 30

    /// An identifier is reverse-DNS-like (`com.contoso.mail.smtp`): it is a URL path segment and part of the sealing's `info`.
    public static func isValidIdentifier(_ identifier: String) -> Bool {
        guard (1...200).contains(identifier.utf8.count), let first = identifier.unicodeScalars.first,
            CharacterSet.alphanumerics.contains(first), first.isASCII
        else { return false }
        return identifier.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "._-".unicodeScalars.contains($0)) }
    }

    static func readAll(_ elements: [(value: JSONValue, pointer: String)], problems: ProblemCollector) -> [SecretDeclaration] {
        if elements.count > maximumPerPolicy {
            problems.add(elements[maximumPerPolicy].pointer, "a policy declares at most \(maximumPerPolicy) secrets.")
        }
        var seen: [String: String] = [:]
        var declarations: [SecretDeclaration] = []
        for (value, pointer) in elements.prefix(maximumPerPolicy) {
            guard let reader = JSONObjectReader(value, at: pointer, problems: problems) else { continue }
            reader.rejectUnknownMembers(allowed: ["identifier", "kind", "issuance", "validityDays"])
            let identifier = reader.string("identifier", required: true)
            if let identifier {
                if !isValidIdentifier(identifier) {
                    problems.add(
                        reader.path("identifier"),
                        "must be 1 to 200 letters, digits, '.', '-' or '_', starting with a letter or digit (such as com.contoso.mail.smtp).")
                } else if let earlier = seen[identifier.lowercased()] {
                    problems.add(reader.path("identifier"), "'\(identifier)' is declared twice (also at \(earlier)).")
                } else {
                    seen[identifier.lowercased()] = reader.path("identifier")
                }
            }
            let kind = reader.enumeration("kind", allowed: ManagedSecretKind.allCases.map(\.rawValue), required: true).flatMap(
                ManagedSecretKind.init(rawValue:))
            var issuance: IdentityIssuance?
            var validityDays: Int?
            if kind == .identity {
                issuance = reader.enumeration("issuance", allowed: IdentityIssuance.allCases.map(\.rawValue), required: true).flatMap(
                    IdentityIssuance.init(rawValue:))
                if issuance == .device {
                    validityDays = reader.integer("validityDays", in: validityRange) ?? defaultValidityDays
                } else if reader.has("validityDays") {
                    problems.add(reader.path("validityDays"), "applies to device identities only (an uploaded identity's lifetime is its certificate's).")
                }
            } else if kind != nil {
                for member in ["issuance", "validityDays"] where reader.has(member) {
                    problems.add(reader.path(member), "applies to identities only.")
                }
            }
            guard let identifier, let kind else { continue }
            declarations.append(SecretDeclaration(identifier: identifier, kind: kind, issuance: issuance, validityDays: validityDays))
        }
        return declarations
    }
}

/// Secret material as stored (PROTOCOL §8.1): metadata in the clear, the material itself sealed with AES-256-GCM
/// under the key-encryption key in `Keys/` (`sealed`, base64), bound to the tenant, policy, identifier and version.
public struct StoredSecretMaterial: Codable, Sendable, Equatable {
    public var policyId: PolicyID
    public var identifier: String
    public var kind: ManagedSecretKind
    /// Grows on every write; part of the sealing's `info` and of the configuration's version.
    public var version: String
    /// SHA-256 of the leaf certificate (certificates, identities), or a keyed hash of a password: whether two
    /// writes gave the same material, without revealing it.
    public var fingerprint: String
    public var notAfter: Date?
    public var updatedAt: Date
    public var sealed: String

    public init(
        policyId: PolicyID, identifier: String, kind: ManagedSecretKind, version: String, fingerprint: String, notAfter: Date?, updatedAt: Date, sealed: String
    ) {
        self.policyId = policyId
        self.identifier = identifier
        self.kind = kind
        self.version = version
        self.fingerprint = fingerprint
        self.notAfter = notAfter
        self.updatedAt = updatedAt
        self.sealed = sealed
    }

    /// The stored document's ID: identifiers contain no ':'.
    public static func documentId(policyId: PolicyID, identifier: String) -> String { "\(policyId):\(identifier)" }
    public var documentId: String { Self.documentId(policyId: policyId, identifier: identifier) }

    /// What reads answer (never the material).
    public var metadata: SecretMetadata {
        SecretMetadata(identifier: identifier, kind: kind, version: version, fingerprint: fingerprint, notAfter: notAfter, updatedAt: updatedAt)
    }
}

/// A secret's metadata as the admin API shows it.
public struct SecretMetadata: Codable, Sendable, Equatable {
    public var identifier: String
    public var kind: ManagedSecretKind
    public var version: String
    public var fingerprint: String
    public var notAfter: Date?
    public var updatedAt: Date
}

/// A secret an app instance is provisioned with: the winning declaration of its identifier, and the version of
/// its material (none for a device identity, issued on request).
public struct ProvisionedSecret: Sendable, Equatable, Codable {
    public var identifier: String
    public var kind: ManagedSecretKind
    public var issuance: IdentityIssuance?
    public var version: String?
    /// The policy that declares it (not shown to apps).
    public var policyId: PolicyID
    public var validityDays: Int?
}
