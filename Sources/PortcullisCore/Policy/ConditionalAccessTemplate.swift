public import Foundation

/// Graph's `conditionalAccessTemplate` (PROTOCOL §17): one of Microsoft's conditional-access templates — a policy's
/// `details` with a name, a description and the scenarios it serves — and "create from template", which makes a policy
/// of it as the Entra portal does.
public struct ConditionalAccessTemplate: Sendable, Equatable {
    public let id: String
    public let name: String
    /// The template as Graph lists it (`id`, `name`, `description`, `scenarios`, `details`).
    public let document: JSONValue

    /// What the portal writes in a template's `excludeUsers` for the admin who creates the policy.
    public static let currentAdministrator = "Current administrator will be excluded"

    public init?(_ document: JSONValue) {
        guard let id = document["id"]?.stringValue, let name = document["name"]?.stringValue, document["details"]?.objectValue != nil else { return nil }
        self.id = id.lowercased()
        self.name = name
        self.document = document
    }

    /// The templates of a catalogue in Graph's list shape (`{"value": [...]}`); one that is not a template is left out.
    public static func catalogue(_ data: Data) -> [ConditionalAccessTemplate] {
        (JSONValue.parse(data)?["value"]?.arrayValue ?? []).compactMap(ConditionalAccessTemplate.init)
    }

    /// Whether the template excludes the administrator who creates a policy of it.
    public var excludesCurrentAdministrator: Bool {
        document["details"]?["conditions"]?["users"]?["excludeUsers"]?.arrayValue?.contains(.string(Self.currentAdministrator)) ?? false
    }

    /// The policy "create from template" makes: the template's `details`, named `displayName` (the template's name by
    /// default), in `state` (report-only by default, as the portal proposes), and with the placeholder replaced by
    /// `administrator`'s object ID (left as it is without one: the policy's validation then refuses it at its pointer).
    public func policy(displayName: String? = nil, state: ConditionalAccessPolicy.State = .reportOnly, administrator: String?) -> JSONValue {
        var details = document["details"]?.objectValue ?? [:]
        details["displayName"] = .string(displayName ?? name)
        details["state"] = .string(state.rawValue)
        guard let administrator else { return .object(details) }
        return Self.replacing(.object(details), Self.currentAdministrator, with: administrator)
    }

    static func replacing(_ value: JSONValue, _ text: String, with replacement: String) -> JSONValue {
        switch value {
        case .string(let s): .string(s == text ? replacement : s)
        case .array(let items): .array(items.map { replacing($0, text, with: replacement) })
        case .object(let members): .object(members.mapValues { replacing($0, text, with: replacement) })
        default: value
        }
    }
}
