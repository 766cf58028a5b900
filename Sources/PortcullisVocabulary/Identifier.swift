public import Foundation

/// An identifier that compares case-insensitively (a GUID, as Entra's object, tenant and application IDs are), normalised
/// once where it enters — in its initialiser and its decoder — and compared, hashed and stored in that one form. `Kind`
/// keeps a tenant ID from being passed where a user's object ID belongs. Its JSON is the plain string, so stored documents
/// and wire formats are unchanged.
public struct Identifier<Kind>: RawRepresentable, Hashable, Comparable, Sendable, Codable, ExpressibleByStringLiteral,
    CustomStringConvertible
{
    /// The normal (lower-case) form.
    public let rawValue: String

    public init(_ text: some StringProtocol) { rawValue = Self.normalize(text) }
    public init(rawValue: String) { self.init(rawValue) }
    public init(stringLiteral value: String) { self.init(value) }

    public init(from decoder: any Decoder) throws { self.init(try decoder.singleValueContainer().decode(String.self)) }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var description: String { rawValue }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    /// A new random one (a lower-case UUID).
    public static func generate() -> Self { Self(UUID.randomIdentifierText) }

    /// The one place identifiers are normalised: ASCII letters lowered (GUIDs and the IDs of this system are ASCII; other
    /// text is lowered as Swift lowers it), without allocating when the text is already in normal form.
    static func normalize(_ text: some StringProtocol) -> String {
        func normal(_ byte: UInt8) -> Bool { byte < 0x41 || (byte > 0x5A && byte < 0x80) }
        let isNormal = text.utf8.withContiguousStorageIfAvailable { $0.allSatisfy(normal) } ?? text.utf8.allSatisfy(normal)
        if isNormal { return String(text) }
        return text.lowercased()
    }
}

/// What an identifier names (the `Kind` of `Identifier`).
public enum IdentifierKind {
    public enum Tenant {}
    /// Users and groups: Entra's directory objects, one namespace.
    public enum Object {}
    /// Applications (`appId`, `client_id`).
    public enum App {}
    /// A stored record of this system: an authentication method, a passkey, a temporary access pass, an enrollment.
    public enum Record {}
    /// An app instance's device, as the app names it (enrollments).
    public enum Device {}
    /// Whoever holds a grant: a user's or group's object ID, or a client's app ID (one GUID namespace in Entra).
    public enum Principal {}
    /// Policies and other documents named by a GUID (conditional access, app protection, strengths, agreements).
    public enum Policy {}
    /// A directory role's definition (Entra's template IDs).
    public enum Role {}
    /// What a resource is named by in a token request or a grant: its app ID or one of its identifier URIs (compared
    /// case-insensitively, as Entra does).
    public enum Resource {}
    /// What an admin names an account by: its UPN or its object ID (both compared case-insensitively).
    public enum Account {}
}

public typealias TenantID = Identifier<IdentifierKind.Tenant>
public typealias ObjectID = Identifier<IdentifierKind.Object>
public typealias AppID = Identifier<IdentifierKind.App>
public typealias RecordID = Identifier<IdentifierKind.Record>
public typealias DeviceID = Identifier<IdentifierKind.Device>
public typealias PolicyID = Identifier<IdentifierKind.Policy>
public typealias PrincipalID = Identifier<IdentifierKind.Principal>
public typealias RoleID = Identifier<IdentifierKind.Role>
public typealias ResourceIdentifier = Identifier<IdentifierKind.Resource>
public typealias AccountName = Identifier<IdentifierKind.Account>

extension Identifier {
    /// The same identifier text as another kind's: a user's object ID as a grant's principal, say. Only between kinds
    /// that share a namespace (Entra's object IDs and app IDs are both principals).
    public init<Other>(_ other: Identifier<Other>) { rawValue = other.rawValue }
}

extension UUID {
    /// The UUID as this system writes identifiers: lower case.
    public var identifierText: String { RecordID(uuidString).rawValue }
}
