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
struct RoleDefinitionList: Encodable {
    let value: [DirectoryRoleDefinition]
}

struct DirectoryRoutes: Sendable {
    let documents: AdminDocuments
    let credentials: CredentialHasher
    let tenants: TenantCache

    func register(on group: RouterGroup<PortcullisRequestContext>) {
        documents.users.register(on: group)
        documents.groups.register(on: group)
        documents.applications.register(on: group)
        ApplicationSecretRoutes(resource: documents.applications, credentials: credentials).register(on: group)
        documents.roleAssignments.register(on: group)
        // B2B collaboration (PROTOCOL §17): invitations of other tenants' users, and trust in partner tenants.
        documents.invitations.register(on: group)
        documents.crossTenantAccessPartners.register(on: group)
        // Devices (PROTOCOL §18): users register theirs at /{tenant}/devices/v1/register.
        documents.devices.register(on: group)
        documents.deviceCompliancePolicies.register(on: group)
        // Directory roles as Graph's role management spells them (PROTOCOL §17): Entra's built-in definitions, read-only,
        // and who holds them.
        documents.directoryRoleAssignments.register(on: group)
        group.get("role-management/directory/role-definitions") { _, _ in
            JSONResponse.make(status: .ok, RoleDefinitionList(value: DirectoryRoleDefinition.builtIns))
        }
        group.get("role-management/directory/role-definitions/:id") { _, context in
            let id = context.parameters.get("id") ?? ""
            guard let role = DirectoryRoleDefinition.builtIn(id: RoleID(id)) else { throw APIError.notFound("The directory role \(id.prefix(64))") }
            return JSONResponse.make(status: .ok, role)
        }
        let tenantResource = documents.tenant
        group.get("tenant") { _, context in try await tenantResource.readResponse(context, id: try context.requirePrincipal().tid) }
        group.put("tenant") { request, context in
            guard let tenant = try await tenants.snapshot(tenantSegment: try context.requirePrincipal().tid) else { throw APIError.unauthenticated }
            return try await tenantResource.writeResponse(request, context, pathId: tenant.tenant.id.rawValue)
        }
    }
}
