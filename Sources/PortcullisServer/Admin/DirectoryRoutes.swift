import Foundation
import Hummingbird
import Logging
import PortcullisCore
import PortcullisStorage
import PortcullisTokens

/// The directory through the admin API (PROTOCOL §7, §11): `/admin/v1/users`, `/groups`, `/applications` (with
/// their secrets), `/app-role-assignments` and `/tenant` (the `allowedAccounts`). Users and groups are created, read, replaced and
/// deleted with the validation of `directory.json`, ETags and `If-Match`, and the audit log — never showing a
/// password or its hash. Disabling or deleting a user revokes their refresh-token families and ends their
/// sessions at once; a group that policies name cannot be deleted.
struct DirectoryRoutes: Sendable {
    let store: any PortcullisStore
    let tenants: TenantCache
    let passwords: PasswordHasher
    let credentials: CredentialHasher
    let compliance: ComplianceService
    let clock: any WallClock
    let logger: Logger

    static var encoder: JSONEncoder { JSONResponse.encoder }

    func register(on group: RouterGroup<PortcullisRequestContext>) {
        DocumentResource(
            kind: .user, noun: "user", store: store, tenants: tenants, clock: clock,
            validate: { [passwords] value, tenant, _ in try await Self.validateUser(value, tenant: tenant, passwords: passwords) },
            beforeDelete: { id, tenant, _ in
                let groups = tenant.directory.groupIds(ofUser: id)
                let roles = tenant.directory.appRoleAssignments.filter { $0.principalId.lowercased() == id }
                if !groups.isEmpty || !roles.isEmpty {
                    throw APIError(.conflict, "inUse", "The user is a member of groups (\(groups.joined(separator: ", "))) or holds app roles (\(roles.map(\.role).joined(separator: ", "))). Remove those first.")
                }
            },
            present: Self.withoutSecrets,
            afterWrite: { [store, clock, logger] before, after, tenant, _ in
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
            beforeDelete: { id, tenant, _ in
                let conditional = tenant.conditionalAccess.policies.filter { $0.refers(toGroup: id) }.map(\.id)
                let protection = tenant.appProtectionPolicies.filter { ($0.targets.includeGroups + $0.targets.excludeGroups).contains(id) }.map(\.id)
                let configuration = tenant.appConfigurationPolicies.filter { ($0.targets.includeGroups + $0.targets.excludeGroups).contains(id) }.map(\.id)
                if !conditional.isEmpty || !protection.isEmpty || !configuration.isEmpty {
                    throw APIError(.conflict, "inUse", "The group is named by conditional-access policies (\(conditional.joined(separator: ", "))), app protection policies (\(protection.joined(separator: ", "))) or app configuration policies (\(configuration.joined(separator: ", "))). Change them first.")
                }
            },
            afterWrite: { [compliance] _, _, tenant, _ in
                // A membership change can move a member's app configuration: announce it (best effort, PROTOCOL §8.2).
                let apps = Set(tenant.appConfigurationPolicies.flatMap(\.targets.applications))
                if !apps.isEmpty { _ = try? await compliance.announceConfiguration(tenantId: tenant.tenant.id, clientIds: apps) }
            }
        ).register(on: group, path: "groups")

        let applications = DocumentResource(
            kind: .application, noun: "application", store: store, tenants: tenants, clock: clock,
            validate: { [credentials, clock] value, tenant, _ in
                try Self.validateApplication(DocumentResource.withGeneratedId(value, key: "appId"), tenant: tenant, credentials: credentials, now: clock.now())
            },
            beforeDelete: { id, tenant, _ in
                let roles = tenant.directory.appRoleAssignments.filter { assignment in
                    assignment.principalId == id || tenant.directory.resource(identifier: assignment.resource)?.appId == id
                }
                let conditional = tenant.conditionalAccess.policies.filter { $0.refers(toApplication: id) }.map(\.id)
                let protection = tenant.appProtectionPolicies.filter { $0.targets.applications.contains(id) }.map(\.id)
                if !roles.isEmpty || !conditional.isEmpty || !protection.isEmpty {
                    throw APIError(.conflict, "inUse", "The application holds or grants app roles (\(roles.count)), or is named by conditional-access policies (\(conditional.joined(separator: ", "))) or app protection policies (\(protection.joined(separator: ", "))). Remove those first.")
                }
            },
            idKey: "appId",
            present: ApplicationSecrets.withoutHashes
        )
        applications.register(on: group, path: "applications")
        ApplicationSecretRoutes(resource: applications, credentials: credentials).register(on: group)

        DocumentResource(
            kind: .appRoleAssignment, noun: "app role assignment", store: store, tenants: tenants, clock: clock,
            validate: { value, tenant, _ in try Self.validateRoleAssignment(value, tenant: tenant) },
            beforeDelete: { id, tenant, force in
                // Removing the last holder of Portcullis.Admin would leave nobody to administer the tenant.
                let admins = tenant.directory.administratorAssignments
                guard !force, admins.count == 1, let last = admins.first,
                      tenant.directory.documentId(of: last) == id
                else { return }
                throw APIError(.conflict, "lastAdministrator", "This is the tenant's last \(BuiltInResources.adminRole) assignment: without it nobody can use the admin API. Assign the role to someone else first, or force it.")
            }
        ).register(on: group, path: "app-role-assignments")

        let tenantResource = DocumentResource(
            kind: .tenant, noun: "tenant", store: store, tenants: tenants, clock: clock,
            validate: { value, tenant, _ in try Self.validateTenant(value, tenant: tenant) },
            beforeDelete: { _, _, _ in throw APIError(.methodNotAllowed, "methodNotAllowed", "A tenant cannot be deleted through its own admin API.") })
        group.get("tenant") { _, context in try await tenantResource.read(context, id: try context.requirePrincipal().tid) }
        group.put("tenant") { request, context in
            guard let tenant = try await tenants.snapshot(tenantSegment: try context.requirePrincipal().tid) else { throw APIError.unauthenticated }
            return try await tenantResource.write(request, context, pathId: tenant.tenant.id)
        }
    }

    /// A user document as `directory.json` writes it. The ID is generated on create when absent; the UPN is
    /// unique in the tenant (case-insensitively); a `password` is hashed (bcrypt), and a replace without
    /// `password` or `passwordHash` keeps the stored hash.
    static func validateUser(_ value: JSONValue, tenant: TenantSnapshot, passwords: PasswordHasher) async throws -> (id: String, body: Data) {
        let value = DocumentResource.withGeneratedId(value)
        let problems = ProblemCollector()
        let entry = DirectoryDocument.parseUser(value, at: "", problems: problems, domain: tenant.tenant.domain)
        if let entry, let other = tenant.directory.user(principalName: entry.user.userPrincipalName), other.id != entry.user.id {
            problems.add("/userPrincipalName", "'\(entry.user.userPrincipalName)' is the UPN of another user (\(other.id)); UPNs compare case-insensitively.")
        }
        try problems.check()
        guard var user = entry?.user else { throw ValidationError(problems: [ValidationProblem(pointer: "", message: "is not a user.")]) }
        if let password = entry?.plaintextPassword {
            // The stored hash stays when the password is the same (a folder re-applied changes nothing).
            let stored = tenant.directory.user(id: user.id)?.passwordHash
            user.passwordHash = try await passwords.verify(password, hash: stored) ? stored : try await passwords.hash(password)
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

    /// An application document as `directory.json` writes it, unique by `appId` and identifier URI (built-in
    /// resources included), with its `secrets` resolved against the stored application (`ApplicationSecrets`).
    static func validateApplication(_ value: JSONValue, tenant: TenantSnapshot, credentials: CredentialHasher, now: Date) throws -> (id: String, body: Data) {
        let problems = ProblemCollector()
        let entry = DirectoryDocument.parseApplication(value, at: "", problems: problems)
        if let application = entry?.application {
            if BuiltInResources.reserved.contains(where: { $0.appId == application.appId }) {
                problems.add("/appId", "is the app ID of a built-in resource.")
            }
            let others = BuiltInResources.reserved + tenant.directory.applications.filter { $0.appId != application.appId }
            for (index, uri) in application.identifierUris.enumerated() {
                if let other = others.first(where: { $0.identifierUris.contains { $0.lowercased() == uri.lowercased() } }) {
                    problems.add("/identifierUris/\(index)", "'\(uri)' is already the identifier of \(other.displayName) (\(other.appId)).")
                }
            }
            // API permissions name resources and clients of this tenant (this application included, as it will be).
            let resources = DirectorySnapshot.resourceIndex([application] + others)
            application.accessProblems(
                at: "", resource: { resources[$0.lowercased()] },
                isApplication: { $0 == application.appId || tenant.directory.application(appId: $0) != nil }, problems: problems)
        }
        try problems.check()
        guard let entry else { throw ValidationError(problems: [ValidationProblem(pointer: "", message: "is not an application.")]) }
        let application = try ApplicationSecrets.resolve(entry, stored: tenant.directory.application(appId: entry.application.appId), credentials: credentials, now: now)
        if application.publicClient && !application.secrets.isEmpty {
            // A replace without `secrets` keeps the stored ones: a confidential client turned public must drop them.
            throw ValidationError(problems: [ValidationProblem(pointer: "/publicClient", message: "a public client cannot hold secrets; this application has \(application.secrets.count): send \"secrets\": [] with it.")])
        }
        return (application.appId, try encoder.encode(application))
    }

    /// `{"principalId", "resource", "role"}`: the principal is a user or application of the tenant, the resource
    /// (identifier URI or app ID, built-in ones included) defines the role. The ID follows from the grant.
    static func validateRoleAssignment(_ value: JSONValue, tenant: TenantSnapshot) throws -> (id: String, body: Data) {
        let problems = ProblemCollector()
        guard let item = JSONObjectReader(value, at: "", problems: problems) else { try problems.check(); throw APIError.malformedJSON() }
        item.rejectUnknownMembers(allowed: ["id", "principalId", "resource", "role"])
        let principal = item.string("principalId", required: true)
        let resource = item.string("resource", required: true)
        let role = item.string("role", required: true)
        if let principal, tenant.directory.user(id: principal) == nil, tenant.directory.application(appId: principal) == nil {
            problems.add("/principalId", "'\(principal)' names no user or application of this tenant.")
        }
        let target = resource.flatMap { tenant.directory.resource(identifier: $0) ?? tenant.directory.application(appId: $0) }
        if let resource, let role {
            if let target {
                if !target.appRoles.contains(role) { problems.add("/role", "'\(role)' is not an app role of \(resource) (it has: \(target.appRoles.joined(separator: ", "))).") }
            } else {
                problems.add("/resource", "'\(resource)' names no resource of this tenant.")
            }
        }
        try problems.check()
        guard let principal, let resource, let role, target != nil else { throw APIError.malformedJSON() }
        let stored = RoleAssignmentDocument(AppRoleAssignment(principalId: principal, resource: resource, role: role), in: tenant.directory)
        if let given = item.string("id"), given.lowercased() != stored.id {
            throw ValidationError(problems: [ValidationProblem(pointer: "/id", message: "an assignment's ID follows from what it grants: \(stored.id) for this principal, resource and role.")])
        }
        return (stored.id, try encoder.encode(stored))
    }

    /// The tenant document: `displayName` and `allowedAccounts` (UPNs or object IDs; `null` lets every account
    /// enroll) change; `id` and `domain` do not.
    static func validateTenant(_ value: JSONValue, tenant: TenantSnapshot) throws -> (id: String, body: Data) {
        let problems = ProblemCollector()
        guard let reader = JSONObjectReader(value, at: "", problems: problems) else { try problems.check(); throw APIError.malformedJSON() }
        reader.rejectUnknownMembers(allowed: ["id", "domain", "displayName", "allowedAccounts"])
        var updated = tenant.tenant
        if let domain = reader.string("domain"), domain.lowercased() != updated.domain {
            problems.add("/domain", "cannot change (it is part of every user's UPN and of the authority URL).")
        }
        if let name = reader.string("displayName") { updated.displayName = name }
        if case .object(let object) = value, let accounts = object["allowedAccounts"] {
            if accounts == .null {
                updated.allowedAccounts = nil
            } else if let items = reader.strings("allowedAccounts") {
                if items.count > Tenant.maximumAllowedAccounts {
                    problems.add("/allowedAccounts", "holds \(items.count) accounts; at most \(Tenant.maximumAllowedAccounts) (use a group-targeted policy for more).")
                }
                var seen = Set<String>()
                updated.allowedAccounts = []
                for (account, pointer) in items {
                    if !(account.isGUID || (account.contains("@") && account.count <= 256 && !account.contains(" "))) {
                        problems.add(pointer, "must be a UPN (name@domain) or a user object ID.")
                    } else if seen.insert(account.lowercased()).inserted {
                        updated.allowedAccounts?.append(account.lowercased())
                    }
                }
            }
        }
        try problems.check()
        return (updated.id, try encoder.encode(updated))
    }
}
