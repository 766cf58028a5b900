import Foundation

extension Application {
    /// Problems of `requiredResourceAccess` and `preAuthorizedApplications` against the directory (PROTOCOL §11):
    /// each listed resource exists (built-in ones included), each scope is one of its scopes and each app role
    /// one of its app roles, no resource is listed twice, and each pre-authorized application exists.
    /// `resource` resolves an app ID or identifier URI; `isApplication` answers for an app ID.
    public func accessProblems(at pointer: String, resource: (String) -> Application?, isApplication: (AppID) -> Bool, problems: ProblemCollector) {
        let accessPointer = JSONPointer.appending(pointer, "requiredResourceAccess")
        var listed = Set<AppID>()
        for (index, entry) in requiredResourceAccess.enumerated() {
            let entryPointer = JSONPointer.appending(accessPointer, index)
            if entry.resourceAppId.isEmpty { continue }  // unreadable: reported where it was read
            guard let target = resource(entry.resourceAppId) else {
                problems.add(
                    JSONPointer.appending(entryPointer, "resourceAppId"),
                    "'\(entry.resourceAppId.clipped())' names no resource (an app ID or identifier URI of an API) of this tenant.")
                continue
            }
            if !listed.insert(target.appId).inserted {
                problems.add(JSONPointer.appending(entryPointer, "resourceAppId"), "lists \(target.displayName) a second time; list each resource once.")
            }
            for (scopeIndex, scope) in entry.scopes.enumerated() where !target.scopes.contains(where: { $0.equalsIgnoringCase(scope) }) {
                problems.add(
                    JSONPointer.appending(JSONPointer.appending(entryPointer, "scopes"), scopeIndex),
                    "'\(scope.clipped())' is not a scope of \(target.displayName) (it has: \(target.scopes.joined(separator: ", "))).")
            }
            for (roleIndex, role) in entry.appRoles.enumerated() where !target.appRoles.contains(role) {
                problems.add(
                    JSONPointer.appending(JSONPointer.appending(entryPointer, "appRoles"), roleIndex),
                    "'\(role.clipped())' is not an app role of \(target.displayName) (it has: \(target.appRoles.joined(separator: ", "))).")
            }
        }
        for (index, client) in preAuthorizedApplications.enumerated() where client.rawValue.isGUID && !isApplication(client) {
            problems.add(
                JSONPointer.appending(JSONPointer.appending(pointer, "preAuthorizedApplications"), index), "'\(client)' names no application of this tenant.")
        }
    }
}
