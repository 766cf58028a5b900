import Foundation

/// Policies as admins bring them from another directory (PROTOCOL §17): one policy per document or Graph's list
/// (`{"value": [...]}`, what `GET /identity/conditionalAccess/policies` answers), and object IDs of that directory mapped
/// to this one's by a table the admin writes. What stays unknown after mapping is refused by the policy's own
/// validation, with its pointer.
public enum PolicyImport {
    /// The policies a document holds, each with the pointer it is at: the elements of Graph's list, or the document.
    public static func policies(in document: JSONValue) -> [(policy: JSONValue, pointer: String)] {
        if let object = document.objectValue, object["displayName"] == nil, let items = object["value"]?.arrayValue {
            return items.enumerated().map { ($0.element, "/value/\($0.offset)") }
        }
        return [(document, "")]
    }

    /// A map file: one JSON object from the other directory's object IDs (users, groups, roles, applications, named
    /// locations, strengths…) to this directory's. Keys compare case-insensitively; at most 100,000 entries.
    public static func parseMap(_ value: JSONValue) throws(ValidationError) -> [String: String] {
        guard let object = value.objectValue else {
            throw ValidationError(problems: [ValidationProblem(pointer: "", message: "must be an object from foreign IDs to this directory's IDs.")])
        }
        guard object.count <= 100_000 else {
            throw ValidationError(problems: [ValidationProblem(pointer: "", message: "holds \(object.count) entries; at most 100,000.")])
        }
        var map: [String: String] = [:]
        var problems: [ValidationProblem] = []
        for (key, target) in object.sorted(by: { $0.key < $1.key }) {
            let pointer = JSONPointer.appending("", key)
            guard let text = target.stringValue, !text.isEmpty, !key.isEmpty else {
                problems.append(ValidationProblem(pointer: pointer, message: "must map a non-empty ID to a non-empty string."))
                continue
            }
            if map.updateValue(text, forKey: key.lowercased()) != nil {
                problems.append(ValidationProblem(pointer: pointer, message: "maps an ID that another key already maps (keys compare case-insensitively)."))
            }
        }
        if !problems.isEmpty { throw ValidationError(problems: problems) }
        return map
    }

    /// The policy with every string under `conditions` and `grantControls` that equals a key of `map`
    /// (case-insensitively) replaced by its value; names, descriptions and the rest are left as they are.
    public static func mapping(_ policy: JSONValue, with map: [String: String]) -> JSONValue {
        guard !map.isEmpty, case .object(var object) = policy else { return policy }
        func replace(_ value: JSONValue) -> JSONValue {
            switch value {
            case .string(let text): .string(map[text.lowercased()] ?? text)
            case .array(let items): .array(items.map(replace))
            case .object(let members): .object(members.mapValues(replace))
            default: value
            }
        }
        for key in ["conditions", "grantControls"] { if let value = object[key] { object[key] = replace(value) } }
        return .object(object)
    }
}
