public import Foundation

/// A tenant document the admin API, the console and `portcullis apply` write (issue 45): the kind's own rules — how a
/// body is read and validated into the type, how the type is shown, what a delete must not break, what every tenant has
/// built in — next to the type, in Core, where they are tested without a server. The server adds only what follows a
/// stored change outside the document (announcing configuration, making an invitation's user) and the HTTP around it.
public protocol AdministeredDocument: TenantDocument {
    /// Reads and validates a body into the document to store, every problem at its JSON Pointer (`ValidationError`), or
    /// refuses the write (`DocumentRefusal`). On a replace the body's ID is already the path's.
    static func read(_ body: JSONValue, in write: DocumentWrite) async throws -> Self
    /// How answers, dry runs and the audit log show the document (users without their password hash, applications'
    /// secrets without hashes, policies with the strength they name expanded).
    func presented(in tenant: TenantSnapshot) -> JSONValue
    /// Refuses a delete that would leave something broken (`force` passes the guards that say so).
    func checkDelete(in tenant: TenantSnapshot, force: Bool) throws(DocumentRefusal)
    /// Documents every tenant has, never stored and read-only (the built-in authentication strengths).
    static var builtIns: [Self] { get }
    /// The largest body a write accepts (`nil`: the server's usual limit).
    static var maximumBody: Int? { get }
}

extension AdministeredDocument {
    public func presented(in tenant: TenantSnapshot) -> JSONValue { JSONValue(encoding: self) }
    public func checkDelete(in tenant: TenantSnapshot, force: Bool) throws(DocumentRefusal) {}
    public static var builtIns: [Self] { [] }
    public static var maximumBody: Int? { nil }
}

/// One write of a document: the tenant as it is, what the request's query asks beside the body (`force=true` past the
/// lock-out guards, `unenforceable=reportOnly`), and the server's services a kind's rules need.
public struct DocumentWrite: Sendable {
    public var tenant: TenantSnapshot
    public var force: Bool
    public var unenforceable: ConditionalAccessPolicy.UnenforceableControls
    public var services: any DocumentServices

    public init(
        tenant: TenantSnapshot, force: Bool = false, unenforceable: ConditionalAccessPolicy.UnenforceableControls = .refuse,
        services: any DocumentServices
    ) {
        self.tenant = tenant
        self.force = force
        self.unenforceable = unenforceable
        self.services = services
    }

    /// On a create, a body without an `id` (or `key`) gets a new GUID (a replace already has the path's).
    public static func withGeneratedId(_ value: JSONValue, key: String = "id") -> JSONValue {
        guard case .object(var object) = value, object[key] == nil else { return value }
        object[key] = .string(UUID.randomIdentifierText)
        return .object(object)
    }
}

/// What reading a document needs of the server that Core does not compute: hashing, the time, facts the store keeps,
/// the installation's other tenants.
public protocol DocumentServices: Sendable {
    var now: Date { get }
    /// A password's bcrypt hash: `stored` itself when the password is the one it hashes (a folder re-applied changes
    /// nothing), else a new hash.
    func passwordHash(_ password: String, keeping stored: String?) async throws -> String
    /// A client secret's keyed hash (`CredentialHasher`).
    func secretHash(_ secret: String) -> String
    /// The users with any second factor, and with a passkey (the lock-out guards).
    func registeredMethods(tenantId: TenantID) async throws -> ConditionalAccessPolicy.RegisteredMethods
    /// A tenant of this installation by ID or verified domain.
    func tenant(segment: String) async throws -> TenantSnapshot?
    /// A secret the server must send later (a transmitter's `Authorization` value), sealed at rest, bound to the tenant,
    /// what it is for and the document's ID.
    func seal(_ secret: String, tenantId: TenantID, purpose: String, id: String) throws -> Data
    /// A certificate an application registers (PEM or base64 DER), read into its credential (PROTOCOL §21).
    func keyCredential(_ text: String, displayName: String?) -> Result<KeyCredential, KeyCredentialProblem>
    /// A certificate from the tenant's issuing CA for the key of a PKCS #10 request (PROTOCOL §18: RSA 2048 or larger, or
    /// P-256), subject the device (its object ID and device ID); a request that is not one is a `ValidationError` at `/csr`.
    /// `current`: the certificate the device holds; a request for the same key keeps it (the device is not re-keyed).
    func deviceCertificate(
        csr: String, tenant: Tenant, objectId: ObjectID, deviceId: DeviceID, current: Device.Certificate?
    ) throws
        -> Device.Certificate
}

/// A write or delete a kind's rules refuse, beside a document that is not valid (`ValidationError`).
public struct DocumentRefusal: Error, Sendable, Equatable {
    public enum Reason: String, Sendable {
        /// Something names the document (409 `inUse`).
        case inUse
        /// The tenant's last administrator (409 `lastAdministrator`).
        case lastAdministrator
        /// Not written through this API at all (405 `methodNotAllowed`).
        case notWritable
        /// The body is not a JSON object (400 `malformedJSON`).
        case malformed
    }

    public let reason: Reason
    public let message: String

    public init(_ reason: Reason, _ message: String) {
        self.reason = reason
        self.message = message
    }

    /// A document that conditional-access policies name (`what` says how they name it).
    static func whileUsed(_ what: String, in tenant: TenantSnapshot, _ uses: (ConditionalAccessPolicy) -> Bool) throws(DocumentRefusal) {
        let policies = tenant.conditionalAccess.policies.filter(uses)
        guard !policies.isEmpty else { return }
        throw DocumentRefusal(.inUse, "\(what) conditional-access policies: \(policies.map(\.id.rawValue).joined(separator: ", ")). Change them first.")
    }
}

extension ProblemCollector {
    /// The document read, or its problems thrown; `what` names it when nothing could be read and nothing was said why.
    func document<Document>(_ document: Document?, _ what: String) throws(ValidationError) -> Document {
        try check()
        guard let document else { throw ValidationError(problems: [ValidationProblem(pointer: "", message: "is not \(what).")]) }
        return document
    }
}

// MARK: Policies

extension ConditionalAccessPolicy: AdministeredDocument {
    /// Validated against the tenant's directory, strengths, contexts and agreements; unless forced, refused while it
    /// would lock users out (PROTOCOL §10, §11).
    public static func read(_ body: JSONValue, in write: DocumentWrite) async throws -> ConditionalAccessPolicy {
        let tenant = write.tenant
        let policy = try parse(
            body, directory: tenant.directory, strengths: tenant.contents.authenticationStrengths, contexts: tenant.contents.authenticationContexts,
            agreements: tenant.contents.agreements, generatedId: PolicyID.generate(), force: write.force, unenforceable: write.unenforceable)
        guard !write.force else { return policy }
        let warnings = policy.lockoutWarnings(
            directory: tenant.directory, registered: try await write.services.registeredMethods(tenantId: tenant.tenant.id),
            strength: policy.grantControls.authenticationStrength.flatMap { tenant.authenticationStrength(id: $0.id) },
            protectedApps: Set(tenant.appProtectionPolicies.flatMap(\.targets.applications)))
        if !warnings.isEmpty { throw ValidationError(problems: warnings) }
        return policy
    }

    /// As Graph shows it: the strength it requires expanded (`id`, `displayName`, `allowedCombinations`…).
    public func presented(in tenant: TenantSnapshot) -> JSONValue {
        let shown = JSONValue(encoding: self)
        guard let reference = grantControls.authenticationStrength, let strength = tenant.authenticationStrength(id: reference.id),
            case .object(var object) = shown, case .object(var grant)? = object["grantControls"]
        else { return shown }
        grant["authenticationStrength"] = JSONValue(encoding: strength)
        object["grantControls"] = .object(grant)
        return .object(object)
    }
}

extension AuthenticationStrengthPolicy: AdministeredDocument {
    public static func read(_ body: JSONValue, in write: DocumentWrite) async throws -> AuthenticationStrengthPolicy {
        try parse(body, others: write.tenant.contents.authenticationStrengths, generatedId: PolicyID.generate())
    }

    public func checkDelete(in tenant: TenantSnapshot, force: Bool) throws(DocumentRefusal) {
        try DocumentRefusal.whileUsed("The authentication strength is required by", in: tenant) { $0.refers(toStrength: id) }
    }
}

extension AuthenticationContextClassReference: AdministeredDocument {
    public static func read(_ body: JSONValue, in write: DocumentWrite) async throws -> AuthenticationContextClassReference {
        try parse(body, others: write.tenant.contents.authenticationContexts)
    }

    public func checkDelete(in tenant: TenantSnapshot, force: Bool) throws(DocumentRefusal) {
        try DocumentRefusal.whileUsed("The authentication context is targeted by", in: tenant) { $0.refers(toContext: id) }
    }
}

extension NamedLocation: AdministeredDocument {
    public static func read(_ body: JSONValue, in write: DocumentWrite) async throws -> NamedLocation {
        let problems = ProblemCollector()
        let location = DirectoryDocument.parseNamedLocation(DocumentWrite.withGeneratedId(body), at: "", problems: problems)
        return try problems.document(location, "a named location")
    }

    public func checkDelete(in tenant: TenantSnapshot, force: Bool) throws(DocumentRefusal) {
        try DocumentRefusal.whileUsed("The named location is used by", in: tenant) { $0.refers(toLocation: id) }
    }
}

extension Agreement: AdministeredDocument {
    /// A tenant holds a bounded number (their files live in every node's memory).
    public static func read(_ body: JSONValue, in write: DocumentWrite) async throws -> Agreement {
        let tenant = write.tenant
        let existing = body["id"]?.stringValue.flatMap { tenant.agreement(id: PolicyID($0)) }
        let agreement = try parse(body, existing: existing, generatedId: PolicyID.generate())
        if existing == nil, tenant.contents.agreements.count >= maximumPerTenant {
            throw ValidationError(problems: [
                ValidationProblem(pointer: "", message: "this tenant holds \(maximumPerTenant) agreements already, the most it may.")
            ])
        }
        return agreement
    }

    public func presented(in tenant: TenantSnapshot) -> JSONValue { presented }

    public func checkDelete(in tenant: TenantSnapshot, force: Bool) throws(DocumentRefusal) {
        try DocumentRefusal.whileUsed("The agreement is required by", in: tenant) { $0.refers(toAgreement: id) }
    }

    /// Up to ten files of 512 KiB, in base64.
    public static var maximumBody: Int? { 8 * 1024 * 1024 }
}

extension AgreementAcceptance: AdministeredDocument {
    public static func read(_ body: JSONValue, in write: DocumentWrite) async throws -> AgreementAcceptance {
        throw DocumentRefusal(.notWritable, "Acceptances are recorded by the sign-in page, when the user answers.")
    }
}

extension AppProtectionPolicy: AdministeredDocument {
    public static func read(_ body: JSONValue, in write: DocumentWrite) async throws -> AppProtectionPolicy {
        try parse(body, directory: write.tenant.directory, generatedId: PolicyID.generate())
    }
}

extension AppConfigurationPolicy: AdministeredDocument {
    public static func read(_ body: JSONValue, in write: DocumentWrite) async throws -> AppConfigurationPolicy {
        try parse(body, directory: write.tenant.directory, others: write.tenant.appConfigurationPolicies, generatedId: PolicyID.generate())
    }

    /// Up to 64 KiB of configuration besides its targets.
    public static var maximumBody: Int? { 2 * maximumConfigurationBytes }
}

// MARK: The directory

extension User: AdministeredDocument {
    /// As `directory.json` writes it. The ID is generated on create when absent; the UPN is unique in the tenant
    /// (case-insensitively); a `password` is hashed (bcrypt), and a replace without `password` or `passwordHash` keeps the
    /// stored hash — as does the same password again (a folder re-applied changes nothing).
    public static func read(_ body: JSONValue, in write: DocumentWrite) async throws -> User {
        let tenant = write.tenant
        let problems = ProblemCollector()
        let entry = DirectoryDocument.parseUser(DocumentWrite.withGeneratedId(body), at: "", problems: problems, domain: tenant.tenant.domain)
        if let entry, let other = tenant.directory.user(principalName: entry.user.userPrincipalName), other.id != entry.user.id {
            problems.add("/userPrincipalName", "'\(entry.user.userPrincipalName)' is the UPN of another user (\(other.id)); UPNs compare case-insensitively.")
        }
        var user = try problems.document(entry?.user, "a user")
        let stored = tenant.directory.user(id: user.id)?.passwordHash
        if let password = entry?.plaintextPassword {
            user.passwordHash = try await write.services.passwordHash(password, keeping: stored)
        } else if user.passwordHash == nil {
            user.passwordHash = stored
        }
        return user
    }

    /// Answers and audit records never carry the password hash.
    public func presented(in tenant: TenantSnapshot) -> JSONValue {
        var shown = self
        shown.passwordHash = nil
        return JSONValue(encoding: shown)
    }

    public func checkDelete(in tenant: TenantSnapshot, force: Bool) throws(DocumentRefusal) {
        let directory = tenant.directory
        let groups = directory.groupIds(ofUser: id)
        let roles = directory.appRoleAssignments.filter { $0.principalId == PrincipalID(id) }
        let directoryRoles = directory.directoryRoleAssignments(ofPrincipal: id)
        guard !groups.isEmpty || !roles.isEmpty || !directoryRoles.isEmpty else { return }
        throw DocumentRefusal(
            .inUse,
            "The user is a member of groups (\(groups.map(\.rawValue).joined(separator: ", "))), holds app roles (\(roles.map(\.role).joined(separator: ", "))) or directory roles (\(directoryRoles.map(\.roleDisplayName).joined(separator: ", "))). Remove those first."
        )
    }
}

extension Group: AdministeredDocument {
    public static func read(_ body: JSONValue, in write: DocumentWrite) async throws -> Group {
        let directory = write.tenant.directory
        let problems = ProblemCollector()
        let group = DirectoryDocument.parseGroup(
            DocumentWrite.withGeneratedId(body), at: "", problems: problems, isUser: { directory.user(id: $0) != nil })
        return try problems.document(group, "a group")
    }

    public func checkDelete(in tenant: TenantSnapshot, force: Bool) throws(DocumentRefusal) {
        func names(_ targets: AppProtectionPolicy.Targets) -> Bool { targets.includeGroups.contains(id: id) || targets.excludeGroups.contains(id) }
        let conditional = tenant.conditionalAccess.policies.filter { $0.refers(toGroup: id) }.map(\.id.rawValue)
        let protection = tenant.appProtectionPolicies.filter { names($0.targets) }.map(\.id.rawValue)
        let configuration = tenant.appConfigurationPolicies.filter { names($0.targets) }.map(\.id.rawValue)
        let directoryRoles = tenant.directory.directoryRoleAssignments(ofPrincipal: id)
        guard !conditional.isEmpty || !protection.isEmpty || !configuration.isEmpty || !directoryRoles.isEmpty else { return }
        throw DocumentRefusal(
            .inUse,
            "The group is named by conditional-access policies (\(conditional.joined(separator: ", "))), app protection policies (\(protection.joined(separator: ", "))) or app configuration policies (\(configuration.joined(separator: ", "))), or holds directory roles (\(directoryRoles.map(\.roleDisplayName).joined(separator: ", "))). Change them first."
        )
    }
}

extension Application: AdministeredDocument {
    /// As `directory.json` writes it, unique by `appId` and identifier URI (built-in resources included), its API
    /// permissions naming this tenant's resources and clients, with its `secrets` resolved against the stored
    /// application (`ApplicationSecrets`).
    public static func read(_ body: JSONValue, in write: DocumentWrite) async throws -> Application {
        let directory = write.tenant.directory
        let problems = ProblemCollector()
        let entry = DirectoryDocument.parseApplication(DocumentWrite.withGeneratedId(body, key: "appId"), at: "", problems: problems)
        if let application = entry?.application {
            if BuiltInResources.reserved.contains(where: { $0.appId == application.appId }) {
                problems.add("/appId", "is the app ID of a built-in resource.")
            }
            let others = BuiltInResources.reserved + directory.applications.filter { $0.appId != application.appId }
            for (index, uri) in application.identifierUris.enumerated() {
                if let other = others.first(where: { $0.identifierUris.contains { ResourceIdentifier($0) == ResourceIdentifier(uri) } }) {
                    problems.add("/identifierUris/\(index)", "'\(uri)' is already the identifier of \(other.displayName) (\(other.appId)).")
                }
            }
            // API permissions name resources and clients of this tenant (this application included, as it will be).
            let resources = DirectorySnapshot.resourceIndex([application] + others)
            application.accessProblems(
                at: "", resource: { resources[ResourceIdentifier($0)] },
                isApplication: { $0 == application.appId || directory.application(appId: $0) != nil }, problems: problems)
        }
        let read = try problems.document(entry, "an application")
        let stored = directory.application(appId: read.application.appId)
        var application = try ApplicationSecrets.resolve(read, stored: stored, hash: write.services.secretHash, now: write.services.now)
        application.keyCredentials = try ApplicationSecrets.resolveCertificates(read, stored: stored, read: write.services.keyCredential)
        if !read.federatedGiven { application.federatedIdentityCredentials = stored?.federatedIdentityCredentials ?? [] }
        if application.publicClient && !application.federatedIdentityCredentials.isEmpty {
            throw ValidationError(problems: [
                ValidationProblem(
                    pointer: "/publicClient", message: "a public client cannot hold federated credentials: send \"federatedIdentityCredentials\": [] with it.")
            ])
        }
        if application.publicClient && !application.keyCredentials.isEmpty {
            throw ValidationError(problems: [
                ValidationProblem(pointer: "/publicClient", message: "a public client cannot hold certificates: send \"keyCredentials\": [] with it.")
            ])
        }
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

    /// Every secret as metadata: never its hash.
    public func presented(in tenant: TenantSnapshot) -> JSONValue {
        guard case .object(var object) = JSONValue(encoding: self), case .array(let secrets)? = object["secrets"] else { return JSONValue(encoding: self) }
        object["secrets"] = .array(
            secrets.map { secret in
                guard case .object(var fields) = secret else { return secret }
                fields["secretHash"] = nil
                return .object(fields)
            })
        return .object(object)
    }

    public func checkDelete(in tenant: TenantSnapshot, force: Bool) throws(DocumentRefusal) {
        let directory = tenant.directory
        let roles = directory.appRoleAssignments.filter { assignment in
            assignment.principalId == PrincipalID(appId) || directory.resource(identifier: assignment.resource)?.appId == appId
        }
        let conditional = tenant.conditionalAccess.policies.filter { $0.refers(toApplication: appId) }.map(\.id.rawValue)
        let protection = tenant.appProtectionPolicies.filter { $0.targets.applications.contains(appId) }.map(\.id.rawValue)
        guard !roles.isEmpty || !conditional.isEmpty || !protection.isEmpty else { return }
        throw DocumentRefusal(
            .inUse,
            "The application holds or grants app roles (\(roles.count)), or is named by conditional-access policies (\(conditional.joined(separator: ", "))) or app protection policies (\(protection.joined(separator: ", "))). Remove those first."
        )
    }
}

extension RoleAssignmentDocument: AdministeredDocument {
    /// `{"principalId", "resource", "role"}`: the principal is a user or application of the tenant, the resource
    /// (identifier URI or app ID, built-in ones included) defines the role. The ID follows from the grant.
    public static func read(_ body: JSONValue, in write: DocumentWrite) async throws -> RoleAssignmentDocument {
        let directory = write.tenant.directory
        let problems = ProblemCollector()
        guard let item = JSONObjectReader(body, at: "", problems: problems) else { throw DocumentRefusal(.malformed, "The body is not a JSON object.") }
        item.rejectUnknownMembers(allowed: ["id", "principalId", "resource", "role"])
        let principal = item.string("principalId", required: true).map { PrincipalID($0) }
        let resource = item.string("resource", required: true)
        let role = item.string("role", required: true)
        if let principal, directory.user(id: ObjectID(principal)) == nil, directory.application(appId: AppID(principal)) == nil {
            problems.add("/principalId", "'\(principal)' names no user or application of this tenant.")
        }
        let target = resource.flatMap { directory.resource(identifier: $0) ?? directory.application(appId: AppID($0)) }
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
        guard let principal, let resource, let role, target != nil else { throw DocumentRefusal(.malformed, "The body is not an assignment.") }
        let stored = RoleAssignmentDocument(AppRoleAssignment(principalId: principal, resource: resource, role: role), in: directory)
        if let given = item.string("id"), PolicyID(given) != PolicyID(stored.id) {
            throw ValidationError(problems: [
                ValidationProblem(
                    pointer: "/id", message: "an assignment's ID follows from what it grants: \(stored.id) for this principal, resource and role.")
            ])
        }
        return stored
    }

    /// Removing the last holder of Portcullis.Admin would leave nobody to administer the tenant.
    public func checkDelete(in tenant: TenantSnapshot, force: Bool) throws(DocumentRefusal) {
        let admins = tenant.directory.administratorAssignments
        guard !force, admins.count == 1, let last = admins.first, tenant.directory.documentId(of: last) == id else { return }
        throw DocumentRefusal(
            .lastAdministrator,
            "This is the tenant's last \(BuiltInResources.adminRole) assignment: without it nobody can use the admin API. Assign the role to someone else first, or force it."
        )
    }
}

extension DirectoryRoleAssignment: AdministeredDocument {
    public static func read(_ body: JSONValue, in write: DocumentWrite) async throws -> DirectoryRoleAssignment {
        let problems = ProblemCollector()
        guard let item = JSONObjectReader(body, at: "", problems: problems) else { throw DocumentRefusal(.malformed, "The body is not a JSON object.") }
        let assignment = read(item, directory: write.tenant.directory)
        try problems.check()
        guard let assignment else { throw DocumentRefusal(.malformed, "The body is not an assignment.") }
        return assignment
    }
}

extension Tenant: AdministeredDocument {
    /// `displayName`, `allowedAccounts` (UPNs or object IDs; `null` lets every account enroll) and
    /// `passwordOnlyRegistration` (PROTOCOL §12.3; `null` is the default) change; `id` and `domain` do not.
    public static func read(_ body: JSONValue, in write: DocumentWrite) async throws -> Tenant {
        let problems = ProblemCollector()
        guard let reader = JSONObjectReader(body, at: "", problems: problems) else { throw DocumentRefusal(.malformed, "The body is not a JSON object.") }
        reader.rejectUnknownMembers(allowed: ["id", "domain", "displayName", "allowedAccounts", "passwordOnlyRegistration"])
        var updated = write.tenant.tenant
        if let domain = reader.string("domain"), !domain.equalsIgnoringCase(updated.domain) {
            problems.add("/domain", "cannot change (it is part of every user's UPN and of the authority URL).")
        }
        if let name = reader.string("displayName") { updated.displayName = name }
        if reader.object["passwordOnlyRegistration"] != nil {
            updated.passwordOnlyRegistration = reader.enumeration(
                "passwordOnlyRegistration", allowed: PasswordOnlyRegistration.allCases.map(\.rawValue)
            ).flatMap(PasswordOnlyRegistration.init(rawValue:))
        }
        if let accounts = reader.object["allowedAccounts"] {
            if accounts == .null {
                updated.allowedAccounts = nil
            } else if let items = reader.strings("allowedAccounts") {
                if items.count > maximumAllowedAccounts {
                    problems.add("/allowedAccounts", "holds \(items.count) accounts; at most \(maximumAllowedAccounts) (use a group-targeted policy for more).")
                }
                var seen = Set<AccountName>()
                updated.allowedAccounts = []
                for (account, pointer) in items {
                    if !(account.isGUID || (account.contains("@") && account.count <= 256 && !account.contains(" "))) {
                        problems.add(pointer, "must be a UPN (name@domain) or a user object ID.")
                    } else if seen.insert(AccountName(account)).inserted {
                        updated.allowedAccounts?.append(AccountName(account))
                    }
                }
            }
        }
        try problems.check()
        return updated
    }

    public func checkDelete(in tenant: TenantSnapshot, force: Bool) throws(DocumentRefusal) {
        throw DocumentRefusal(.notWritable, "A tenant cannot be deleted through its own admin API.")
    }
}

// MARK: B2B collaboration

extension Invitation: AdministeredDocument {
    public static func read(_ body: JSONValue, in write: DocumentWrite) async throws -> Invitation {
        try await resolve(body, in: write).invitation
    }

    /// An invitation as Graph writes it, resolved: the invitee's address names a user of another tenant of this
    /// installation (by its verified domain and the user's UPN), and the B2B collaboration user it makes here — the one
    /// the tenant already has for that home account, when it has one (a re-invitation).
    public static func resolve(_ body: JSONValue, in write: DocumentWrite) async throws -> (invitation: Invitation, user: User) {
        let tenant = write.tenant
        let asked = try parse(body)
        func refuse(_ message: String) -> ValidationError {
            ValidationError(problems: [ValidationProblem(pointer: "/invitedUserEmailAddress", message: message)])
        }
        guard !asked.domain.equalsIgnoringCase(tenant.tenant.domain) else { throw refuse("is in this tenant's own domain: invite users of other tenants.") }
        guard let home = try await write.services.tenant(segment: asked.domain), home.tenant.domain.equalsIgnoringCase(asked.domain) else {
            throw refuse("'\(asked.domain)' is the domain of no tenant of this installation (B2B collaboration is between its tenants).")
        }
        guard let homeUser = home.directory.user(principalName: asked.emailAddress), homeUser.homeAccount == nil else {
            throw refuse("names no user of \(home.tenant.displayName).")
        }
        let existing = tenant.directory.user(homeUserId: homeUser.id)
        let user = collaborationUser(asked, home: homeUser, homeTenant: home.tenant, resourceTenant: tenant.tenant, existing: existing)
        if existing == nil, let other = tenant.directory.user(principalName: user.userPrincipalName) {
            throw refuse("would make the user \(user.userPrincipalName), a UPN \(other.id) already has.")
        }
        var id = PolicyID.generate()
        if let given = body["id"]?.stringValue {
            guard let valid = PolicyID(guid: given) else { throw ValidationError(problems: [ValidationProblem(pointer: "/id", message: "must be a GUID.")]) }
            id = valid
        }
        let invitation = Invitation(
            id: id, invitedUserEmailAddress: asked.emailAddress, invitedUserDisplayName: asked.displayName, inviteRedirectUrl: asked.redirectUrl,
            invitedUserType: existing?.userType ?? asked.userType, invitedUserId: user.id)
        return (invitation, user)
    }
}

extension CrossTenantAccessPartner: AdministeredDocument {
    public static func read(_ body: JSONValue, in write: DocumentWrite) async throws -> CrossTenantAccessPartner {
        try parse(body, ownTenantId: write.tenant.tenant.id)
    }
}

// MARK: Shared Signals

extension SharedSignalsTransmitter: AdministeredDocument {
    /// What a transmitter's `Authorization` value is sealed for (the box's binding beside the tenant and the ID).
    public static let sealPurpose = "ssf-transmitter"

    public static func read(_ body: JSONValue, in write: DocumentWrite) async throws -> SharedSignalsTransmitter {
        let body = DocumentWrite.withGeneratedId(body)
        let tenant = write.tenant
        let existing = body["id"]?.stringValue.flatMap { given in tenant.contents.sharedSignalsTransmitters.first { $0.id == PolicyID(given) } }
        return try read(
            body, existing: existing, count: tenant.contents.sharedSignalsTransmitters.count, now: write.services.now
        ) { header, outgoing, id in
            (
                header.map { write.services.secretHash($0) },
                try outgoing.map { try write.services.seal($0, tenantId: tenant.tenant.id, purpose: sealPurpose, id: id.rawValue) }
            )
        }
    }

    public func presented(in tenant: TenantSnapshot) -> JSONValue { presented }
}

extension SharedSignalsStream: AdministeredDocument {
    /// Streams are created by receivers through the Shared Signals API (PROTOCOL §14.1); the admin API reads and deletes.
    public static func read(_ body: JSONValue, in write: DocumentWrite) async throws -> SharedSignalsStream {
        throw DocumentRefusal(.notWritable, "Streams are created by receivers through the Shared Signals API.")
    }

    /// Without its sealed `Authorization` value: only whether one is set.
    public func presented(in tenant: TenantSnapshot) -> JSONValue { presentedForAdmin }

    public var presentedForAdmin: JSONValue {
        var shown = self
        let hasHeader = shown.delivery.sealedAuthorizationHeader != nil
        shown.delivery.sealedAuthorizationHeader = nil
        guard case .object(var object) = JSONValue(encoding: shown) else { return JSONValue(encoding: shown) }
        if hasHeader, case .object(var delivery)? = object["delivery"] {
            delivery["authorizationHeader"] = "(set; never shown)"
            object["delivery"] = .object(delivery)
        }
        return .object(object)
    }
}
