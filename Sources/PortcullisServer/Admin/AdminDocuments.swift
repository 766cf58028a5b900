import Foundation
import HTTPTypes
import Logging
import PortcullisCore
import PortcullisStorage
import PortcullisTokens

/// Every kind of tenant document the admin API and the console edit, each registered once (issue 26): how a body
/// is read and validated into the type, how the type is shown, what a delete must not break, and what follows a
/// change. Adding a kind is its `TenantDocument` type plus one entry here (and its path in `register`). What a change
/// ends and announces is the kind's own (`TenantDocument.effects`, Core), committed with it by `DocumentResource`.
struct AdminDocuments: Sendable {
    let conditionalAccessPolicies: DocumentResource<ConditionalAccessPolicy>
    let authenticationStrengths: DocumentResource<AuthenticationStrengthPolicy>
    let authenticationContexts: DocumentResource<AuthenticationContextClassReference>
    let attestationRoots: DocumentResource<FidoAttestationRoot>
    let namedLocations: DocumentResource<NamedLocation>
    let appProtectionPolicies: DocumentResource<AppProtectionPolicy>
    let appConfigurationPolicies: DocumentResource<AppConfigurationPolicy>
    let users: DocumentResource<User>
    let groups: DocumentResource<Group>
    let applications: DocumentResource<PortcullisCore.Application>
    let roleAssignments: DocumentResource<RoleAssignmentDocument>
    let directoryRoleAssignments: DocumentResource<DirectoryRoleAssignment>
    let tenant: DocumentResource<Tenant>
    /// Terms of use (PROTOCOL §17), and users' answers (written by the sign-in page, read through the agreement).
    let agreements: DocumentResource<Agreement>
    let agreementAcceptances: DocumentResource<AgreementAcceptance>
    /// B2B collaboration (PROTOCOL §17): invitations (each makes its B2B collaboration user through `users`) and trust in
    /// partner tenants.
    let invitations: DocumentResource<Invitation>
    let crossTenantAccessPartners: DocumentResource<CrossTenantAccessPartner>
    /// Tells Shared Signals receivers about users' changes (PROTOCOL §14.1).
    let transmitter: SignalTransmitter
    let logger: Logger

    init(
        store: any PortcullisStore, tenants: TenantCache, clock: any WallClock, passwords: PasswordHasher, credentials: CredentialHasher,
        compliance: ComplianceService, transmitter: SignalTransmitter, logger: Logger
    ) {
        self.transmitter = transmitter
        self.logger = logger
        func resource<Document: TenantDocument>(_ registration: DocumentRegistration<Document>) -> DocumentResource<Document> {
            DocumentResource(registration: registration, store: store, tenants: tenants, clock: clock, effects: transmitter)
        }
        conditionalAccessPolicies = resource(
            DocumentRegistration(
                read: { value, tenant, options in
                    let policy = try ConditionalAccessPolicy.parse(
                        value, directory: tenant.directory, strengths: tenant.contents.authenticationStrengths,
                        contexts: tenant.contents.authenticationContexts, agreements: tenant.contents.agreements,
                        generatedId: UUID().identifierText, force: options.force, unenforceable: options.unenforceable)
                    if !options.force {
                        let registered = ConditionalAccessPolicy.RegisteredMethods(
                            anyFactor: try await store.usersWithAuthenticationMethods(tenantId: TenantID(tenant.tenant.id)),
                            passkey: try await store.usersWithPasskeys(tenantId: TenantID(tenant.tenant.id)))
                        let warnings = policy.lockoutWarnings(
                            directory: tenant.directory, registered: registered,
                            strength: policy.grantControls.authenticationStrength.flatMap { tenant.authenticationStrength(id: $0.id) },
                            protectedApps: Set(tenant.appProtectionPolicies.flatMap(\.targets.applications)))
                        if !warnings.isEmpty { throw ValidationError(problems: warnings) }
                    }
                    return policy
                },
                present: { policy, tenant in Self.present(policy, tenant: tenant) }))

        authenticationStrengths = resource(
            DocumentRegistration(
                read: { value, tenant, _ in
                    try AuthenticationStrengthPolicy.parse(
                        value, others: tenant.contents.authenticationStrengths, generatedId: UUID().identifierText)
                },
                beforeDelete: { strength, tenant, _ in
                    try Self.refuseWhileUsed("The authentication strength is required by", tenant: tenant) { $0.refers(toStrength: strength.id) }
                },
                builtIns: AuthenticationStrengthPolicy.builtIns))

        agreements = resource(
            DocumentRegistration(
                read: { value, tenant, _ in
                    let existing = value["id"]?.stringValue.flatMap { tenant.agreement(id: $0) }
                    let agreement = try Agreement.parse(value, existing: existing, generatedId: UUID().identifierText)
                    // Their files live in every node's memory: a tenant holds a bounded number.
                    if existing == nil, tenant.contents.agreements.count >= Agreement.maximumPerTenant {
                        throw ValidationError(problems: [
                            ValidationProblem(pointer: "", message: "this tenant holds \(Agreement.maximumPerTenant) agreements already, the most it may.")
                        ])
                    }
                    return agreement
                },
                present: { agreement, _ in agreement.presented },
                beforeDelete: { agreement, tenant, _ in
                    try Self.refuseWhileUsed("The agreement is required by", tenant: tenant) { $0.refers(toAgreement: agreement.id) }
                },
                // Up to ten files of 512 KiB, in base64.
                maximumBody: 8 * 1024 * 1024))

        agreementAcceptances = resource(
            DocumentRegistration(read: { _, _, _ in
                throw APIError(.methodNotAllowed, "methodNotAllowed", "Acceptances are recorded by the sign-in page, when the user answers.")
            }))

        authenticationContexts = resource(
            DocumentRegistration(
                read: { value, tenant, _ in try AuthenticationContextClassReference.parse(value, others: tenant.contents.authenticationContexts) },
                beforeDelete: { reference, tenant, _ in
                    try Self.refuseWhileUsed("The authentication context is targeted by", tenant: tenant) { $0.refers(toContext: reference.id) }
                }))

        attestationRoots = resource(
            DocumentRegistration(
                read: { value, tenant, _ in
                    try FidoAttestationRoot.parse(
                        value, others: tenant.contents.attestationRoots, generatedId: UUID().identifierText, at: clock.now())
                },
                present: { root, _ in
                    .object([
                        "id": .string(root.id), "displayName": .string(root.displayName), "certificate": .string(root.pem),
                        "subject": .string(root.subject), "sha256Thumbprint": .string(root.sha256Thumbprint),
                        "notAfter": .string(ISO8601.string(root.notAfter)),
                    ])
                }))

        namedLocations = resource(
            DocumentRegistration(
                read: { value, _, _ in
                    let problems = ProblemCollector()
                    let location = DirectoryDocument.parseNamedLocation(DocumentBody.withGeneratedId(value), at: "", problems: problems)
                    try problems.check()
                    guard let location else { throw ValidationError(problems: [ValidationProblem(pointer: "", message: "is not a named location.")]) }
                    return location
                },
                beforeDelete: { location, tenant, _ in
                    try Self.refuseWhileUsed("The named location is used by", tenant: tenant) { $0.refers(toLocation: location.id) }
                }))

        appProtectionPolicies = resource(
            DocumentRegistration(
                read: { value, tenant, _ in
                    try AppProtectionPolicy.parse(value, directory: tenant.directory, generatedId: UUID().identifierText)
                }))

        appConfigurationPolicies = resource(
            DocumentRegistration(
                read: { value, tenant, _ in
                    try AppConfigurationPolicy.parse(
                        value, directory: tenant.directory, others: tenant.appConfigurationPolicies, generatedId: UUID().identifierText)
                },
                afterWrite: { before, after, tenant, actor in
                    if let policyId = (before ?? after)?.id {
                        try await AppSecretRoutes.removeUndeclared(
                            policyId: policyId, declared: after?.secrets ?? [], tenantId: tenant.tenant.id, actor: actor, at: clock.now(), store: store,
                            tenants: tenants)
                    }
                    // The apps whose instances may see another configuration now: those targeted before or after. Best effort:
                    // the write is stored; an instance not told now gets `refreshConfiguration` at its next check-in.
                    let apps = [before, after].compactMap { $0 }.flatMap(\.targets.applications)
                    _ = try? await compliance.announceConfiguration(tenantId: tenant.tenant.id, clientIds: Set(apps))
                },
                // A policy carries up to 64 KiB of configuration besides its targets.
                maximumBody: 2 * AppConfigurationPolicy.maximumConfigurationBytes))

        let users = resource(
            DocumentRegistration(
                read: { value, tenant, _ in try await Self.readUser(value, tenant: tenant, passwords: passwords) },
                present: { user, _ in
                    var shown = user
                    shown.passwordHash = nil  // answers and audit records never carry it
                    return JSONValue(encoding: shown)
                },
                beforeDelete: { user, tenant, _ in
                    let groups = tenant.directory.groupIds(ofUser: user.id)
                    let roles = tenant.directory.appRoleAssignments.filter { $0.principalId.lowercased() == user.id }
                    let directoryRoles = tenant.directory.directoryRoleAssignments(ofPrincipal: user.id)
                    if !groups.isEmpty || !roles.isEmpty || !directoryRoles.isEmpty {
                        throw APIError(
                            .conflict, "inUse",
                            "The user is a member of groups (\(groups.joined(separator: ", "))), holds app roles (\(roles.map(\.role).joined(separator: ", "))) or directory roles (\(directoryRoles.map(\.roleDisplayName).joined(separator: ", "))). Remove those first."
                        )
                    }
                }))
        self.users = users

        invitations = resource(
            DocumentRegistration(
                read: { value, tenant, _ in try await Self.readInvitation(value, tenant: tenant, tenants: tenants).invitation },
                afterWrite: { _, after, tenant, actor in
                    // The B2B collaboration user, made through the users' own write path (validation, audit, effects) when
                    // the tenant has none for that home account yet.
                    guard let after, let current = try await tenants.snapshot(tenantSegment: tenant.tenant.id),
                        current.directory.user(id: after.invitedUser.id) == nil
                    else { return }
                    let made = try await Self.readInvitation(JSONValue(encoding: after), tenant: current, tenants: tenants).user
                    _ = try await users.save(made, before: nil, precondition: .mustNotExist, tenant: current, actor: actor)
                }))

        crossTenantAccessPartners = resource(
            DocumentRegistration(read: { value, tenant, _ in try CrossTenantAccessPartner.parse(value, ownTenantId: tenant.tenant.id) }))

        groups = resource(
            DocumentRegistration(
                read: { value, tenant, _ in
                    let problems = ProblemCollector()
                    let parsed = DirectoryDocument.parseGroup(
                        DocumentBody.withGeneratedId(value), at: "", problems: problems, isUser: { tenant.directory.user(id: $0) != nil })
                    try problems.check()
                    guard let parsed else { throw ValidationError(problems: [ValidationProblem(pointer: "", message: "is not a group.")]) }
                    return parsed
                },
                beforeDelete: { group, tenant, _ in
                    let conditional = tenant.conditionalAccess.policies.filter { $0.refers(toGroup: group.id) }.map(\.id)
                    let protection = tenant.appProtectionPolicies.filter { ($0.targets.includeGroups + $0.targets.excludeGroups).contains(group.id) }.map(\.id)
                    let configuration = tenant.appConfigurationPolicies.filter { ($0.targets.includeGroups + $0.targets.excludeGroups).contains(group.id) }.map(
                        \.id)
                    let directoryRoles = tenant.directory.directoryRoleAssignments(ofPrincipal: group.id)
                    if !conditional.isEmpty || !protection.isEmpty || !configuration.isEmpty || !directoryRoles.isEmpty {
                        throw APIError(
                            .conflict, "inUse",
                            "The group is named by conditional-access policies (\(conditional.joined(separator: ", "))), app protection policies (\(protection.joined(separator: ", "))) or app configuration policies (\(configuration.joined(separator: ", "))), or holds directory roles (\(directoryRoles.map(\.roleDisplayName).joined(separator: ", "))). Change them first."
                        )
                    }
                },
                afterWrite: { _, _, tenant, _ in
                    // A membership change can move a member's app configuration: announce it (best effort, PROTOCOL §8.2).
                    let apps = Set(tenant.appConfigurationPolicies.flatMap(\.targets.applications))
                    if !apps.isEmpty { _ = try? await compliance.announceConfiguration(tenantId: tenant.tenant.id, clientIds: apps) }
                }))

        applications = resource(
            DocumentRegistration(
                read: { value, tenant, _ in
                    try Self.readApplication(DocumentBody.withGeneratedId(value, key: "appId"), tenant: tenant, credentials: credentials, now: clock.now())
                },
                present: { application, _ in
                    var shown = JSONValue(encoding: application)
                    // Every secret as metadata: never its hash.
                    if case .object(var object) = shown, case .array(let secrets)? = object["secrets"] {
                        object["secrets"] = .array(
                            secrets.map { secret in
                                guard case .object(var fields) = secret else { return secret }
                                fields["secretHash"] = nil
                                return .object(fields)
                            })
                        shown = .object(object)
                    }
                    return shown
                },
                beforeDelete: { application, tenant, _ in
                    let id = application.appId
                    let roles = tenant.directory.appRoleAssignments.filter { assignment in
                        assignment.principalId == id || tenant.directory.resource(identifier: assignment.resource)?.appId == id
                    }
                    let conditional = tenant.conditionalAccess.policies.filter { $0.refers(toApplication: id) }.map(\.id)
                    let protection = tenant.appProtectionPolicies.filter { $0.targets.applications.contains(id) }.map(\.id)
                    if !roles.isEmpty || !conditional.isEmpty || !protection.isEmpty {
                        throw APIError(
                            .conflict, "inUse",
                            "The application holds or grants app roles (\(roles.count)), or is named by conditional-access policies (\(conditional.joined(separator: ", "))) or app protection policies (\(protection.joined(separator: ", "))). Remove those first."
                        )
                    }
                }))

        roleAssignments = resource(
            DocumentRegistration(
                read: { value, tenant, _ in try Self.readRoleAssignment(value, tenant: tenant) },
                beforeDelete: { assignment, tenant, force in
                    // Removing the last holder of Portcullis.Admin would leave nobody to administer the tenant.
                    let admins = tenant.directory.administratorAssignments
                    guard !force, admins.count == 1, let last = admins.first, tenant.directory.documentId(of: last) == assignment.id else { return }
                    throw APIError(
                        .conflict, "lastAdministrator",
                        "This is the tenant's last \(BuiltInResources.adminRole) assignment: without it nobody can use the admin API. Assign the role to someone else first, or force it."
                    )
                }))

        directoryRoleAssignments = resource(
            DocumentRegistration(
                read: { value, tenant, _ in
                    let problems = ProblemCollector()
                    guard let item = JSONObjectReader(value, at: "", problems: problems) else {
                        try problems.check()
                        throw APIError.malformedJSON()
                    }
                    let assignment = DirectoryRoleAssignment.read(item, directory: tenant.directory)
                    try problems.check()
                    guard let assignment else { throw APIError.malformedJSON() }
                    return assignment
                }))

        tenant = resource(
            DocumentRegistration(
                read: { value, tenant, _ in try Self.readTenant(value, tenant: tenant) },
                beforeDelete: { _, _, _ in throw APIError(.methodNotAllowed, "methodNotAllowed", "A tenant cannot be deleted through its own admin API.") }))
    }

    // MARK: Readers that need the tenant or the server's services

    /// A user document as `directory.json` writes it. The ID is generated on create when absent; the UPN is
    /// unique in the tenant (case-insensitively); a `password` is hashed (bcrypt), and a replace without
    /// `password` or `passwordHash` keeps the stored hash — as does the same password again (a folder re-applied
    /// changes nothing).
    /// A policy as Graph shows it: the strength it requires expanded (`id`, `displayName`, `allowedCombinations`…).
    static func present(_ policy: ConditionalAccessPolicy, tenant: TenantSnapshot) -> JSONValue {
        let shown = JSONValue(encoding: policy)
        guard let reference = policy.grantControls.authenticationStrength, let strength = tenant.authenticationStrength(id: reference.id),
            case .object(var object) = shown, case .object(var grant)? = object["grantControls"]
        else { return shown }
        grant["authenticationStrength"] = JSONValue(encoding: strength)
        object["grantControls"] = .object(grant)
        return .object(object)
    }

    /// An invitation as Graph writes it, resolved: the invitee's address names a user of another tenant of this
    /// installation (by its verified domain and the user's UPN), and the B2B collaboration user it makes here — the one
    /// the tenant already has for that home account, when it has one (a re-invitation).
    static func readInvitation(_ value: JSONValue, tenant: TenantSnapshot, tenants: TenantCache) async throws -> (invitation: Invitation, user: User) {
        let asked = try Invitation.parse(value)
        let pointer = "/invitedUserEmailAddress"
        func refuse(_ message: String) -> ValidationError { ValidationError(problems: [ValidationProblem(pointer: pointer, message: message)]) }
        guard asked.domain != tenant.tenant.domain else { throw refuse("is in this tenant's own domain: invite users of other tenants.") }
        guard let home = try await tenants.snapshot(tenantSegment: asked.domain), home.tenant.domain == asked.domain else {
            throw refuse("'\(asked.domain)' is the domain of no tenant of this installation (B2B collaboration is between its tenants).")
        }
        guard let homeUser = home.directory.user(principalName: asked.emailAddress), homeUser.homeAccount == nil else {
            throw refuse("names no user of \(home.tenant.displayName).")
        }
        let existing = tenant.directory.user(homeUserId: homeUser.id)
        let user = Invitation.collaborationUser(asked, home: homeUser, homeTenant: home.tenant, resourceTenant: tenant.tenant, existing: existing)
        if existing == nil, let other = tenant.directory.user(principalName: user.userPrincipalName) {
            throw refuse("would make the user \(user.userPrincipalName), a UPN \(other.id) already has.")
        }
        let given = value["id"]?.stringValue
        if let given, !given.isGUID { throw ValidationError(problems: [ValidationProblem(pointer: "/id", message: "must be a GUID.")]) }
        let id = given ?? UUID().identifierText
        let invitation = Invitation(
            id: id, invitedUserEmailAddress: asked.emailAddress, invitedUserDisplayName: asked.displayName, inviteRedirectUrl: asked.redirectUrl,
            invitedUserType: existing?.userType ?? asked.userType, invitedUserId: user.id)
        return (invitation, user)
    }

    static func readUser(_ value: JSONValue, tenant: TenantSnapshot, passwords: PasswordHasher) async throws -> User {
        let problems = ProblemCollector()
        let entry = DirectoryDocument.parseUser(DocumentBody.withGeneratedId(value), at: "", problems: problems, domain: tenant.tenant.domain)
        if let entry, let other = tenant.directory.user(principalName: entry.user.userPrincipalName), other.id != entry.user.id {
            problems.add("/userPrincipalName", "'\(entry.user.userPrincipalName)' is the UPN of another user (\(other.id)); UPNs compare case-insensitively.")
        }
        try problems.check()
        guard var user = entry?.user else { throw ValidationError(problems: [ValidationProblem(pointer: "", message: "is not a user.")]) }
        if let password = entry?.plaintextPassword {
            let stored = tenant.directory.user(id: user.id)?.passwordHash
            user.passwordHash = try await passwords.verify(password, hash: stored) ? stored : try await passwords.hash(password)
        } else if user.passwordHash == nil {
            user.passwordHash = tenant.directory.user(id: user.id)?.passwordHash
        }
        return user
    }

    /// An application document as `directory.json` writes it, unique by `appId` and identifier URI (built-in
    /// resources included), its API permissions naming this tenant's resources and clients, with its `secrets`
    /// resolved against the stored application (`ApplicationSecrets`).
    static func readApplication(_ value: JSONValue, tenant: TenantSnapshot, credentials: CredentialHasher, now: Date) throws -> PortcullisCore.Application {
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
        let application = try ApplicationSecrets.resolve(
            entry, stored: tenant.directory.application(appId: entry.application.appId), credentials: credentials, now: now)
        if application.publicClient && !application.secrets.isEmpty {
            // A replace without `secrets` keeps the stored ones: a confidential client turned public must drop them.
            throw ValidationError(problems: [
                ValidationProblem(
                    pointer: "/publicClient",
                    message: "a public client cannot hold secrets; this application has \(application.secrets.count): send \"secrets\": [] with it.")
            ])
        }
        return application
    }

    /// `{"principalId", "resource", "role"}`: the principal is a user or application of the tenant, the resource
    /// (identifier URI or app ID, built-in ones included) defines the role. The ID follows from the grant.
    static func readRoleAssignment(_ value: JSONValue, tenant: TenantSnapshot) throws -> RoleAssignmentDocument {
        let problems = ProblemCollector()
        guard let item = JSONObjectReader(value, at: "", problems: problems) else {
            try problems.check()
            throw APIError.malformedJSON()
        }
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
                if !target.appRoles.contains(role) {
                    problems.add("/role", "'\(role)' is not an app role of \(resource) (it has: \(target.appRoles.joined(separator: ", "))).")
                }
            } else {
                problems.add("/resource", "'\(resource)' names no resource of this tenant.")
            }
        }
        try problems.check()
        guard let principal, let resource, let role, target != nil else { throw APIError.malformedJSON() }
        let stored = RoleAssignmentDocument(AppRoleAssignment(principalId: principal, resource: resource, role: role), in: tenant.directory)
        if let given = item.string("id"), given.lowercased() != stored.id {
            throw ValidationError(problems: [
                ValidationProblem(
                    pointer: "/id", message: "an assignment's ID follows from what it grants: \(stored.id) for this principal, resource and role.")
            ])
        }
        return stored
    }

    /// The tenant document: `displayName`, `allowedAccounts` (UPNs or object IDs; `null` lets every account
    /// enroll) and `passwordOnlyRegistration` (PROTOCOL §12.3; `null` is the default) change; `id` and `domain` do not.
    static func readTenant(_ value: JSONValue, tenant: TenantSnapshot) throws -> Tenant {
        let problems = ProblemCollector()
        guard let reader = JSONObjectReader(value, at: "", problems: problems) else {
            try problems.check()
            throw APIError.malformedJSON()
        }
        reader.rejectUnknownMembers(allowed: ["id", "domain", "displayName", "allowedAccounts", "passwordOnlyRegistration"])
        var updated = tenant.tenant
        if let domain = reader.string("domain"), domain.lowercased() != updated.domain {
            problems.add("/domain", "cannot change (it is part of every user's UPN and of the authority URL).")
        }
        if let name = reader.string("displayName") { updated.displayName = name }
        if case .object(let object) = value, object["passwordOnlyRegistration"] != nil {
            updated.passwordOnlyRegistration = reader.enumeration(
                "passwordOnlyRegistration", allowed: Tenant.PasswordOnlyRegistration.allCases.map(\.rawValue)
            ).flatMap(Tenant.PasswordOnlyRegistration.init(rawValue:))
        }
        if case .object(let object) = value, let accounts = object["allowedAccounts"] {
            if accounts == .null {
                updated.allowedAccounts = nil
            } else if let items = reader.strings("allowedAccounts") {
                if items.count > Tenant.maximumAllowedAccounts {
                    problems.add(
                        "/allowedAccounts", "holds \(items.count) accounts; at most \(Tenant.maximumAllowedAccounts) (use a group-targeted policy for more).")
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
        return updated
    }
}

extension AdminDocuments {
    /// A document that conditional-access policies name cannot be deleted (409 `inUse`): `what` says how they name it.
    static func refuseWhileUsed(_ what: String, tenant: TenantSnapshot, _ uses: (ConditionalAccessPolicy) -> Bool) throws {
        let users = tenant.conditionalAccess.policies.filter(uses)
        if !users.isEmpty {
            throw APIError(.conflict, "inUse", "\(what) conditional-access policies: \(users.map(\.id).joined(separator: ", ")). Change them first.")
        }
    }
}
