/// An authentication context (PROTOCOL §13; Graph's `authenticationContextClassReference`): a label `c1`…`c99` a
/// resource asks for when one action needs a stronger sign-in than the rest (step-up, RFC 9470). Conditional-access
/// policies target it with `applications.includeAuthenticationContextClassReferences`; a client asks for it with the
/// `acrs` claims request; a token that met it carries it in `acrs`.
public struct AuthenticationContextClassReference: Codable, Sendable, Equatable {
    public var id: String
    public var displayName: String
    public var description: String
    /// Whether apps may ask for it (Graph: "published"). An unavailable one can still be targeted by policies while an
    /// admin prepares them, but a request for it is refused.
    public var isAvailable: Bool

    public init(id: String, displayName: String, description: String = "", isAvailable: Bool) {
        self.id = id
        self.displayName = displayName
        self.description = description
        self.isAvailable = isAvailable
    }

    /// Whether `text` is a context ID: `c1`…`c99`, as Entra allows (lower-case; `C1` is read as `c1`).
    public static func isValidId(_ text: String) -> Bool { number(of: text) != nil }

    /// A context ID in its one spelling (`C7` → `c7`), `nil` when it is none.
    public static func normalized(_ text: String) -> String? { number(of: text).map { "c\($0)" } }

    /// The number of a context ID (`c7` → 7), for ordering `c2` before `c10`.
    public static func number(of text: String) -> Int? {
        let lower = text.lowercased()
        guard lower.hasPrefix("c"), lower.count <= 3, let number = Int(lower.dropFirst()), (1...99).contains(number),
            String(number) == String(lower.dropFirst())
        else { return nil }
        return number
    }

    /// Context IDs in their natural order (`c2` before `c10`), without repeats.
    public static func sorted(_ ids: some Sequence<String>) -> [String] {
        Set(ids).sorted { (number(of: $0) ?? 0, $0) < (number(of: $1) ?? 0, $1) }
    }

    /// Reads an admin's body (Graph's shape). `id` comes from the body or the path; a new one without it takes the lowest
    /// free number. `others` are the tenant's contexts (for that number).
    public static func parse(
        _ value: JSONValue, others: [AuthenticationContextClassReference]
    ) throws(ValidationError)
        -> AuthenticationContextClassReference
    {
        let problems = ProblemCollector()
        guard let reader = JSONObjectReader(value, at: "", problems: problems) else { throw ValidationError(problems: problems.problems) }
        reader.rejectUnknownMembers(allowed: ["id", "displayName", "description", "isAvailable", "@odata.type", "@odata.context"])
        var id = (1...99).map { "c\($0)" }.first { candidate in !others.contains { $0.id == candidate } } ?? ""
        if let given = reader.string("id") {
            if let normal = normalized(given) { id = normal } else { problems.add(reader.path("id"), "must be c1 to c99 (as in Entra).") }
        } else if id.isEmpty {
            problems.add(reader.path("id"), "every ID from c1 to c99 is taken; a tenant has at most 99 authentication contexts.")
        }
        let displayName = reader.string("displayName", required: true)
        if let displayName, displayName.count > 256 { problems.add(reader.path("displayName"), "must be at most 256 characters.") }
        let description = reader.string("description", nonEmpty: false) ?? ""
        if description.count > 1024 { problems.add(reader.path("description"), "must be at most 1024 characters.") }
        let isAvailable = reader.bool("isAvailable") ?? false
        try problems.check()
        return AuthenticationContextClassReference(id: id, displayName: displayName ?? "", description: description, isAvailable: isAvailable)
    }
}
