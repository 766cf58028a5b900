import Foundation
import Hummingbird
import Logging
import PortcullisCore
import PortcullisStorage

/// `/admin/v1/users[/{id}]` and `/admin/v1/groups[/{id}]` (PROTOCOL §7, §11): created, read, replaced and
/// deleted with the validation of `directory.json`, ETags and `If-Match`, and the audit log — never showing a
/// password or its hash. Disabling or deleting a user revokes their refresh-token families and ends their
/// sessions at once; a group that policies name cannot be deleted.
struct DirectoryRoutes: Sendable {
    let store: any PortcullisStore
    let tenants: TenantCache
    let passwords: PasswordHasher
    let clock: any WallClock
    let logger: Logger

    static var encoder: JSONEncoder { JSONResponse.encoder }

    func register(on group: RouterGroup<PortcullisRequestContext>) {
        DocumentResource(
            kind: .user, noun: "user", store: store, tenants: tenants, clock: clock,
            validate: { [passwords] value, tenant, _ in try await Self.validateUser(value, tenant: tenant, passwords: passwords) },
            beforeDelete: { id, tenant in
                let groups = tenant.directory.groupIds(ofUser: id)
                let roles = tenant.directory.appRoleAssignments.filter { $0.principalId.lowercased() == id }
                if !groups.isEmpty || !roles.isEmpty {
                    throw APIError(.conflict, "inUse", "The user is a member of groups (\(groups.joined(separator: ", "))) or holds app roles (\(roles.map(\.role).joined(separator: ", "))). Remove those first.")
                }
            },
            present: Self.withoutSecrets,
            afterWrite: { [store, clock, logger] before, after, tenant in
                // A user who could sign in and now cannot (disabled or deleted) loses every refresh token and session now.
                guard let before = before.flatMap({ try? JSONDecoder().decode(User.self, from: $0) }), before.accountEnabled else { return }
                if let after = after.flatMap({ try? JSONDecoder().decode(User.self, from: $0) }), after.accountEnabled { return }
                let families = try await store.revokeAllFamilies(tenantId: tenant.tenant.id, userId: before.id, at: clock.now())
                let sessions = try await store.deleteSessions(tenantId: tenant.tenant.id, userId: before.id)
                logger.notice("user disabled or deleted: refresh tokens revoked and sessions ended", metadata: [
                    LogKeys.userId: .string(before.id), "portcullis.families": .stringConvertible(families), "portcullis.sessions": .stringConvertible(sessions),
                ])
            }
        ).register(on: group, path: "users")

        DocumentResource(
            kind: .group, noun: "group", store: store, tenants: tenants, clock: clock,
            validate: { value, tenant, _ in
                let value = DocumentResource.withGeneratedId(value)
                let problems = ProblemCollector()
                let parsed = DirectoryDocument.parseGroup(value, at: "", problems: problems, isUser: { tenant.directory.user(id: $0) != nil })
                try problems.check()
                guard let parsed else { throw ValidationError(problems: [ValidationProblem(pointer: "", message: "is not a group.")]) }
                return (parsed.id, try Self.encoder.encode(parsed))
            },
            beforeDelete: { id, tenant in
                let conditional = tenant.conditionalAccess.policies.filter { $0.refers(toGroup: id) }.map(\.id)
                let protection = tenant.appProtectionPolicies.filter { ($0.targets.includeGroups + $0.targets.excludeGroups).contains(id) }.map(\.id)
                if !conditional.isEmpty || !protection.isEmpty {
                    throw APIError(.conflict, "inUse", "The group is named by conditional-access policies (\(conditional.joined(separator: ", "))) or app protection policies (\(protection.joined(separator: ", "))). Change them first.")
                }
            }
        ).register(on: group, path: "groups")
    }

    /// A user document as `directory.json` writes it. The ID is generated on create when absent; the UPN is
    /// unique in the tenant (case-insensitively); a `password` is hashed (bcrypt), and a replace without
    /// `password` or `passwordHash` keeps the stored hash.
    static func validateUser(_ value: JSONValue, tenant: TenantSnapshot, passwords: PasswordHasher) async throws -> (id: String, body: Data) {
        let value = DocumentResource.withGeneratedId(value)
        let problems = ProblemCollector()
        let entry = DirectoryDocument.parseUser(value, at: "", problems: problems)
        if let entry, let other = tenant.directory.user(principalName: entry.user.userPrincipalName), other.id != entry.user.id {
            problems.add("/userPrincipalName", "'\(entry.user.userPrincipalName)' is the UPN of another user (\(other.id)); UPNs compare case-insensitively.")
        }
        try problems.check()
        guard var user = entry?.user else { throw ValidationError(problems: [ValidationProblem(pointer: "", message: "is not a user.")]) }
        if let password = entry?.plaintextPassword {
            user.passwordHash = try await passwords.hash(password)
        } else if user.passwordHash == nil {
            user.passwordHash = tenant.directory.user(id: user.id)?.passwordHash
        }
        return (user.id, try encoder.encode(user))
    }

    /// The stored user without `passwordHash` (answers and audit records never carry it).
    static func withoutSecrets(_ body: Data) -> Data {
        guard var object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else { return body }
        object.removeValue(forKey: "passwordHash")
        return (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? body
    }
}
