public import Foundation

/// The `Config/directory.json` document (PROTOCOL §6): tenants with their users, groups, applications,
/// app role assignments and named locations. Plaintext passwords and secrets are development conveniences
/// that the importer hashes; their hashed forms are accepted as they are.
public struct DirectoryDocument: Sendable {
    public struct UserEntry: Sendable {
        public var user: User
        /// A development password to hash on import; `user.passwordHash` is used when this is `nil`.
        public var plaintextPassword: String?
    }

    public struct ApplicationEntry: Sendable {
        /// The application; its `secrets` hold only the entries given as `secretHash`.
        public var application: Application
        /// The `secrets` array as written, in order; `nil` when the document has no `secrets` member (an admin
        /// API replace then keeps the stored secrets).
        public var secretEntries: [SecretEntry]?
        /// The `keyCredentials` array as written (certificates, PROTOCOL §21); `nil` when absent (a replace keeps the
        /// stored ones).
        public var keyCredentialEntries: [KeyCredentialEntry]? = nil
        /// Whether `federatedIdentityCredentials` was written (when not, a replace keeps the stored ones).
        public var federatedGiven = false
        /// Development secrets to hash on import.
        public var plaintextSecrets: [String] {
            (secretEntries ?? []).compactMap { if case .plaintext(let secret, _, _) = $0 { secret } else { nil } }
        }
    }

    /// One of an application's `keyCredentials` as written: a certificate (`key`, PEM or base64 DER, as Graph's
    /// `key`), or the `keyId` of a stored one (what answers show; its other members are ignored).
    public enum KeyCredentialEntry: Sendable, Equatable {
        case certificate(String, displayName: String?, pointer: String)
        case existing(keyId: RecordID, pointer: String)
    }

    /// One item of an application's `secrets`.
    public enum SecretEntry: Sendable, Equatable {
        /// `{"secret": "…"}`: a development secret, hashed on import (with optional `displayName`, `endDateTime`).
        case plaintext(String, displayName: String?, endDateTime: Date?)
        /// `{"secretHash": "…"}`: an already-hashed secret.
        case hashed(ClientSecret)
        /// `{"keyId": "…"}` (what the admin API shows): keep the stored secret of that key ID; its other members are ignored.
        case existing(keyId: RecordID, pointer: String)
    }

    public struct TenantEntry: Sendable {
        public var tenant: Tenant
        public var users: [UserEntry]
        public var groups: [Group]
        public var applications: [ApplicationEntry]
        public var appRoleAssignments: [AppRoleAssignment]
        public var namedLocations: [NamedLocation]
        /// Directory roles held by users and groups (Graph `unifiedRoleAssignment`, PROTOCOL §17).
        public var roleAssignments: [DirectoryRoleAssignment] = []
    }

    public var tenants: [TenantEntry]

    /// The directories this document describes, as snapshots (for validating policies before seeding).
    public func snapshots(revision: Int64) -> [DirectorySnapshot] {
        tenants.map { entry in
            DirectorySnapshot(
                tenant: entry.tenant, revision: revision, users: entry.users.map(\.user), groups: entry.groups,
                applications: entry.applications.map(\.application), appRoleAssignments: entry.appRoleAssignments,
                namedLocations: entry.namedLocations, directoryRoleAssignments: entry.roleAssignments)
        }
    }

    public static let grantTypes = GrantType.allCases.map(\.rawValue)

    /// Parses and validates the whole document, reporting every problem with its JSON Pointer.
    public static func parse(_ data: Data) throws(ValidationError) -> DirectoryDocument {
        guard let root = JSONValue.parse(data) else {
            throw ValidationError(problems: [ValidationProblem(pointer: "", message: "is not valid JSON.")])
        }
        let problems = ProblemCollector()
        var tenants: [TenantEntry] = []
        if let reader = JSONObjectReader(root, at: "", problems: problems) {
            reader.rejectUnknownMembers(allowed: ["tenants", "$schema"])
            var seenTenants = Set<String>()
            let claimed = InstallationIdentifiers()
            for (value, pointer) in reader.array("tenants", required: true) ?? [] {
                guard let entry = parseTenant(value, at: pointer, problems: problems, claimed: claimed) else { continue }
                if !seenTenants.insert(entry.tenant.id.rawValue).inserted || !seenTenants.insert("domain:" + entry.tenant.domain).inserted {
                    problems.add(pointer, "repeats the ID or domain of another tenant.")
                }
                tenants.append(entry)
            }
        }
        try problems.check()
        return DirectoryDocument(tenants: tenants)
    }

    /// Object IDs (users and groups share them) and application IDs met so far in the document, with where: they
    /// are unique across the installation (PROTOCOL §11), not only within a tenant.
    final class InstallationIdentifiers {
        var objects: [ObjectID: String] = [:]
        var applications: [AppID: String] = [:]

        /// Records `id` at `pointer`; reports where it was met first when it was.
        func claim(object id: ObjectID, at pointer: String) -> String? { claim(&objects, id, pointer) }
        func claim(application id: AppID, at pointer: String) -> String? { claim(&applications, id, pointer) }

        private func claim<Kind>(_ table: inout [Identifier<Kind>: String], _ id: Identifier<Kind>, _ pointer: String) -> String? {
            if let first = table[id] { return first }
            table[id] = pointer
            return nil
        }
    }

    private static func parseTenant(_ value: JSONValue, at pointer: String, problems: ProblemCollector, claimed: InstallationIdentifiers) -> TenantEntry? {
        guard let reader = JSONObjectReader(value, at: pointer, problems: problems) else { return nil }
        reader.rejectUnknownMembers(allowed: [
            "id", "domain", "displayName", "allowedAccounts", "passwordOnlyRegistration", "users", "groups", "applications",
            "appRoleAssignments", "namedLocations", "roleAssignments",
        ])
        let id: TenantID? = reader.guid("id", required: true)
        let domain = reader.string("domain", required: true)
        if let domain, domain.contains("/") || domain.contains(" ") || !domain.contains(".") {
            problems.add(reader.path("domain"), "must be a domain name such as contoso.example.")
        }
        let displayName = reader.string("displayName") ?? domain ?? ""
        let allowedAccounts = reader.strings("allowedAccounts")?.map { AccountName($0.value) }
        let registration = reader.enumeration("passwordOnlyRegistration", allowed: Tenant.PasswordOnlyRegistration.allCases.map(\.rawValue))

        var users: [UserEntry] = []
        var userIds = Set<ObjectID>()
        var upns = Set<String>()
        for (value, pointer) in reader.array("users") ?? [] {
            guard let entry = parseUser(value, at: pointer, problems: problems, domain: domain?.lowercased()) else { continue }
            userIds.insert(entry.user.id)
            if let first = claimed.claim(object: entry.user.id, at: JSONPointer.appending(pointer, "id")) {
                problems.add(
                    JSONPointer.appending(pointer, "id"),
                    "repeats the object ID at \(first) (object IDs are unique across the installation, users and groups of every tenant).")
            }
            if !upns.insert(entry.user.userPrincipalName.lowercased()).inserted {
                problems.add(JSONPointer.appending(pointer, "userPrincipalName"), "repeats the UPN of another user (UPNs compare case-insensitively).")
            }
            users.append(entry)
        }

        var groups: [Group] = []
        var groupIds = Set<ObjectID>()
        for (value, pointer) in reader.array("groups") ?? [] {
            guard let group = parseGroup(value, at: pointer, problems: problems, isUser: { userIds.contains($0) }) else { continue }
            groupIds.insert(group.id)
            if let first = claimed.claim(object: group.id, at: JSONPointer.appending(pointer, "id")) {
                problems.add(
                    JSONPointer.appending(pointer, "id"),
                    "repeats the object ID at \(first) (object IDs are unique across the installation, users and groups of every tenant).")
            }
            groups.append(group)
        }

        var applications: [ApplicationEntry] = []
        var applicationPointers: [String] = []
        var appIds = Set(BuiltInResources.reserved.map(\.appId))
        var identifierUris = Set(BuiltInResources.all.flatMap(\.identifierUris).map { ResourceIdentifier($0) })
        for (value, pointer) in reader.array("applications") ?? [] {
            guard let entry = parseApplication(value, at: pointer, problems: problems) else { continue }
            if !appIds.insert(entry.application.appId).inserted {
                problems.add(JSONPointer.appending(pointer, "appId"), "repeats the appId of another application (or a built-in one).")
            } else if let first = claimed.claim(application: entry.application.appId, at: JSONPointer.appending(pointer, "appId")) {
                problems.add(JSONPointer.appending(pointer, "appId"), "repeats the appId at \(first) (application IDs are unique across the installation).")
            }
            for (index, uri) in entry.application.identifierUris.enumerated() where !identifierUris.insert(ResourceIdentifier(uri)).inserted {
                problems.add(
                    JSONPointer.appending(JSONPointer.appending(pointer, "identifierUris"), index),
                    "'\(uri)' is already the identifier of another application.")
            }
            applications.append(entry)
            applicationPointers.append(pointer)
        }

        let allApps = BuiltInResources.all + applications.map(\.application)
        let byIdentifier = DirectorySnapshot.resourceIndex(allApps)
        for (entry, entryPointer) in zip(applications, applicationPointers) {
            entry.application.accessProblems(
                at: entryPointer, resource: { byIdentifier[ResourceIdentifier($0)] }, isApplication: { appIds.contains($0) }, problems: problems)
        }
        var assignments: [AppRoleAssignment] = []
        for (value, pointer) in reader.array("appRoleAssignments") ?? [] {
            guard let item = JSONObjectReader(value, at: pointer, problems: problems) else { continue }
            item.rejectUnknownMembers(allowed: ["principalId", "resource", "role"])
            let principal = item.string("principalId", required: true).map { PrincipalID($0) }
            let resource = item.string("resource", required: true)
            let role = item.string("role", required: true)
            guard let principal, let resource, let role else { continue }
            if !userIds.contains(ObjectID(principal)) && !appIds.contains(AppID(principal)) {
                problems.add(item.path("principalId"), "'\(principal)' names no user or application of this tenant.")
            }
            let target = byIdentifier[ResourceIdentifier(resource)]
            if let target {
                if !target.appRoles.contains(role) {
                    problems.add(item.path("role"), "'\(role)' is not an app role of \(resource).")
                }
            } else {
                problems.add(item.path("resource"), "'\(resource)' names no resource of this tenant.")
            }
            assignments.append(AppRoleAssignment(principalId: principal, resource: resource, role: role))
        }

        var locations: [NamedLocation] = []
        for (value, pointer) in reader.array("namedLocations") ?? [] {
            if let location = parseNamedLocation(value, at: pointer, problems: problems) { locations.append(location) }
        }

        // Directory roles: read against the users and groups just read.
        let members = DirectorySnapshot(
            tenant: Tenant(id: id ?? TenantID(""), domain: domain ?? "", displayName: displayName), revision: 0, users: users.map(\.user), groups: groups,
            applications: [], appRoleAssignments: [], namedLocations: [])
        var directoryRoles: [DirectoryRoleAssignment] = []
        for (value, pointer) in reader.array("roleAssignments") ?? [] {
            guard let item = JSONObjectReader(value, at: pointer, problems: problems),
                let assignment = DirectoryRoleAssignment.read(item, directory: members)
            else { continue }
            if directoryRoles.contains(where: { $0.id == assignment.id }) {
                problems.add(pointer, "assigns the same role to the same principal as an earlier entry.")
            } else {
                directoryRoles.append(assignment)
            }
        }

        guard let id, let domain else { return nil }
        var entry = TenantEntry(
            tenant: Tenant(
                id: id, domain: domain, displayName: displayName, allowedAccounts: allowedAccounts,
                passwordOnlyRegistration: registration.flatMap(Tenant.PasswordOnlyRegistration.init(rawValue:))),
            users: users, groups: groups, applications: applications,
            appRoleAssignments: assignments, namedLocations: locations)
        entry.roleAssignments = directoryRoles
        return entry
    }

    /// One group, as `directory.json` and the admin API write it: every member must name a user; a member listed twice is
    /// kept once.
    public static func parseGroup(_ value: JSONValue, at pointer: String, problems: ProblemCollector, isUser: (ObjectID) -> Bool) -> Group? {
        guard let group = JSONObjectReader(value, at: pointer, problems: problems) else { return nil }
        group.rejectUnknownMembers(allowed: ["id", "displayName", "members"])
        let gid: ObjectID? = group.guid("id", required: true)
        let name = group.string("displayName", required: true)
        var members: [ObjectID] = []
        for (text, memberPointer) in group.strings("members") ?? [] {
            let member = ObjectID(text)
            if isUser(member) {
                if !members.contains(member) { members.append(member) }
            } else {
                problems.add(memberPointer, "'\(text)' names no user of this tenant.")
            }
        }
        guard let gid, let name else { return nil }
        return Group(id: gid, displayName: name, members: members)
    }

    /// One user, as `directory.json` and the admin API write it: `password` (hashed on import) or `passwordHash`. The
    /// UPN's domain must be the tenant's verified `domain` (PROTOCOL §11), when known.
    public static func parseUser(_ value: JSONValue, at pointer: String, problems: ProblemCollector, domain: String?) -> UserEntry? {
        guard let user = JSONObjectReader(value, at: pointer, problems: problems) else { return nil }
        user.rejectUnknownMembers(allowed: [
            "id", "userPrincipalName", "displayName", "password", "passwordHash", "accountEnabled", "userType", "homeAccount",
        ])
        let userType = user.enumeration("userType", allowed: User.UserType.allCases.map(\.rawValue)).flatMap(User.UserType.init(rawValue:))
        let uid: ObjectID? = user.guid("id", required: true)
        let upn = user.string("userPrincipalName", required: true)
        if let upn, !upn.contains("@") || upn.count > 256 {
            problems.add(user.path("userPrincipalName"), "must look like name@domain (at most 256 characters).")
        } else if let upn, let domain, !Self.isInDomain(upn, domain) {
            problems.add(user.path("userPrincipalName"), "must be in the tenant's verified domain: name@\(domain).")
        }
        let password = user.string("password")
        let passwordHash = user.string("passwordHash")
        if password != nil && passwordHash != nil {
            problems.add(user.path("password"), "give either password or passwordHash, not both.")
        }
        if let password, password.utf8.count > 72 { problems.add(user.path("password"), "is longer than bcrypt's 72 bytes.") }
        if let passwordHash, !passwordHash.hasPrefix("$2") {
            problems.add(user.path("passwordHash"), "must be a bcrypt hash ($2b$…).")
        }
        let enabled = user.bool("accountEnabled") ?? true
        var homeAccount: User.HomeAccount?
        if let home = user.object("homeAccount") {
            home.rejectUnknownMembers(allowed: ["tenantId", "userId", "userPrincipalName"])
            let tenantId: TenantID? = home.guid("tenantId", required: true)
            let userId: ObjectID? = home.guid("userId", required: true)
            let homeName = home.string("userPrincipalName", required: true)
            if let homeName, !homeName.contains("@") || homeName.count > 256 {
                problems.add(home.path("userPrincipalName"), "must look like name@domain (at most 256 characters).")
            } else if let homeName, let domain, Self.isInDomain(homeName, domain) {
                problems.add(home.path("userPrincipalName"), "is in this tenant's own domain: a home account is another tenant's.")
            }
            if let tenantId, let userId, let homeName {
                homeAccount = User.HomeAccount(tenantId: tenantId, userId: userId, userPrincipalName: homeName)
            }
            if user.has("password") || user.has("passwordHash") {
                problems.add(user.path("password"), "a B2B collaboration user signs in with its home tenant's credentials: it has no password here.")
            }
        }
        guard let uid, let upn else { return nil }
        var parsed = User(id: uid, userPrincipalName: upn, displayName: user.string("displayName") ?? upn, passwordHash: passwordHash, accountEnabled: enabled)
        // Stored only when Guest, and always for a B2B user (a guest unless it says Member, as Graph's invitation has it):
        // members keep their exact stored form.
        parsed.homeAccount = homeAccount
        if homeAccount != nil {
            parsed.userType = userType == .member ? .member : .guest
        } else {
            parsed.userType = userType == .guest ? .guest : nil
        }
        return UserEntry(user: parsed, plaintextPassword: password)
    }

    /// Whether a UPN's domain is `domain` (domains compare case-insensitively).
    static func isInDomain(_ principalName: String, _ domain: String) -> Bool {
        principalName.split(separator: "@").last.map { $0.equalsIgnoringCase(domain) } ?? false
    }

    public static func parseApplication(_ value: JSONValue, at pointer: String, problems: ProblemCollector) -> ApplicationEntry? {
        guard let app = JSONObjectReader(value, at: pointer, problems: problems) else { return nil }
        app.rejectUnknownMembers(allowed: [
            "appId", "displayName", "publicClient", "secrets", "allowedGrantTypes", "redirectUris",
            "complianceCallbackUris", "approvedClientApp", "identifierUris", "scopes", "appRoles", "requiredResourceAccess",
            "preAuthorizedApplications", "requireDPoP", "continuousAccessEvaluation", "tags", "keyCredentials",
            "federatedIdentityCredentials",
        ])
        let appId: AppID? = app.guid("appId", required: true)
        var tags: [String] = []
        if let items = app.strings("tags") {
            if items.count > Application.maximumTags { problems.add(app.path("tags"), "holds \(items.count) tags; at most \(Application.maximumTags).") }
            for (tag, tagPointer) in items {
                if tag.isEmpty || tag.count > 256 {
                    problems.add(tagPointer, "must be 1 to 256 characters.")
                } else if !tags.contains(tag) {
                    tags.append(tag)
                }
            }
        }
        let name = app.string("displayName", required: true)
        let publicClient = app.bool("publicClient") ?? false
        var entries: [SecretEntry]?
        if let items = app.array("secrets") {
            entries = []
            if items.count > Application.maximumSecrets {
                problems.add(app.path("secrets"), "holds \(items.count) secrets; at most \(Application.maximumSecrets).")
            }
            for (value, secretPointer) in items {
                guard let secret = JSONObjectReader(value, at: secretPointer, problems: problems) else { continue }
                secret.rejectUnknownMembers(allowed: ["secret", "secretHash", "keyId", "hint", "displayName", "startDateTime", "endDateTime"])
                let plain = secret.string("secret")
                let hash = secret.string("secretHash")
                let keyId = secret.string("keyId")
                let recordId = keyId.flatMap { RecordID(guid: $0) }
                let displayName = secret.string("displayName")
                var end: Date?
                if let text = secret.string("endDateTime") {
                    end = ISO8601.date(text)
                    if end == nil { problems.add(secret.path("endDateTime"), "must be an ISO 8601 date-time such as 2027-01-31T00:00:00Z.") }
                }
                switch (plain, hash) {
                case (let plain?, nil):
                    entries?.append(.plaintext(plain, displayName: displayName, endDateTime: end))
                case (nil, let hash?):
                    if keyId != nil && recordId == nil { problems.add(secret.path("keyId"), "must be a GUID.") }
                    entries?.append(.hashed(ClientSecret(keyId: recordId, secretHash: hash, displayName: displayName, endDateTime: end)))
                case (nil, nil) where keyId != nil:
                    if let recordId {
                        entries?.append(.existing(keyId: recordId, pointer: secretPointer))
                    } else {
                        problems.add(secret.path("keyId"), "must be a GUID.")
                    }
                default:
                    problems.add(secretPointer, "give exactly one of secret or secretHash (or the keyId of a stored secret).")
                }
            }
        }
        if publicClient && !(entries ?? []).isEmpty {
            problems.add(app.path("secrets"), "a public client cannot hold secrets.")
        }
        var certificates: [KeyCredentialEntry]?
        if let items = app.array("keyCredentials") {
            certificates = []
            if items.count > KeyCredential.maximumPerApplication {
                problems.add(app.path("keyCredentials"), "holds \(items.count) certificates; at most \(KeyCredential.maximumPerApplication).")
            }
            if publicClient && !items.isEmpty { problems.add(app.path("keyCredentials"), "a public client cannot hold certificates.") }
            for (value, pointer) in items {
                guard let credential = JSONObjectReader(value, at: pointer, problems: problems) else { continue }
                credential.rejectUnknownGraphMembers(
                    allowed: ["key", "keyId", "displayName"],
                    readOnly: ["type", "usage", "customKeyIdentifier", "thumbprint", "thumbprintSHA256", "startDateTime", "endDateTime"])
                let displayName = credential.string("displayName")
                if let displayName, displayName.count > 128 { problems.add(credential.path("displayName"), "is longer than 128 characters.") }
                if let key = credential.string("key") {
                    if key.utf8.count > 16 * 1024 { problems.add(credential.path("key"), "is larger than 16 KiB.") }
                    certificates?.append(.certificate(key, displayName: displayName, pointer: credential.path("key")))
                } else if let keyId: RecordID = credential.guid("keyId") {
                    certificates?.append(.existing(keyId: keyId, pointer: pointer))
                } else if !credential.has("keyId") {
                    problems.add(pointer, "give key (the certificate, PEM or base64 DER) or the keyId of a stored certificate.")
                }
            }
        }
        var federated: [FederatedIdentityCredential]?
        if let items = app.array("federatedIdentityCredentials") {
            federated = items.compactMap { FederatedIdentityCredential.parse($0.value, at: $0.pointer, appId: appId, problems: problems) }
            if publicClient && !items.isEmpty {
                problems.add(app.path("federatedIdentityCredentials"), "a public client cannot hold federated credentials.")
            }
            if federated?.count == items.count {
                FederatedIdentityCredential.checkTogether(federated ?? [], at: app.path("federatedIdentityCredentials"), problems: problems)
            }
        }
        var grants: [String] = []
        for (grant, grantPointer) in app.strings("allowedGrantTypes") ?? [] {
            if grantTypes.contains(grant) {
                grants.append(grant)
            } else {
                problems.add(grantPointer, "'\(grant)' is not one of: \(grantTypes.joined(separator: ", ")).")
            }
        }
        if grants.contains(GrantType.clientCredentials.rawValue) && publicClient {
            problems.add(app.path("allowedGrantTypes"), "a public client cannot use client_credentials.")
        }
        if grants.contains(GrantType.onBehalfOf.rawValue) && publicClient {
            problems.add(app.path("allowedGrantTypes"), "a public client cannot use on-behalf-of (\(GrantType.onBehalfOf.rawValue)).")
        }
        for (uri, uriPointer) in app.strings("redirectUris") ?? [] where !RedirectURI.isRegistrable(uri) {
            problems.add(
                uriPointer, "must be an absolute URI without a fragment: https, http on a loopback host (any port when none is given), or an app's own scheme.")
        }
        let callbacks = app.strings("complianceCallbackUris") ?? []
        for (uri, uriPointer) in callbacks where !CallbackURI.isAcceptable(uri) {
            problems.add(uriPointer, "must be an absolute https URL, or http on a loopback host.")
        }
        let scopes = (app.strings("scopes") ?? []).map(\.value)
        for (scope, scopePointer) in app.strings("scopes") ?? [] where scope.contains(" ") || scope.contains("/") || scope == ".default" {
            problems.add(scopePointer, "a scope name cannot contain spaces or '/' and cannot be .default.")
        }
        let identifierUris = (app.strings("identifierUris") ?? []).map(\.value)
        var access: [RequiredResourceAccess] = []
        if let items = app.array("requiredResourceAccess") {
            if items.count > Application.maximumResourceAccess {
                problems.add(app.path("requiredResourceAccess"), "lists \(items.count) resources; at most \(Application.maximumResourceAccess).")
            }
            for (value, itemPointer) in items {
                // Every item keeps its position (an empty resource when unreadable), so later problems point at the right one.
                guard let item = JSONObjectReader(value, at: itemPointer, problems: problems) else {
                    access.append(RequiredResourceAccess(resourceAppId: ""))
                    continue
                }
                item.rejectUnknownMembers(allowed: ["resourceAppId", "scopes", "appRoles"])
                access.append(
                    RequiredResourceAccess(
                        resourceAppId: item.string("resourceAppId", required: true) ?? "", scopes: (item.strings("scopes") ?? []).map(\.value),
                        appRoles: (item.strings("appRoles") ?? []).map(\.value)))
            }
        }
        var preAuthorized: [AppID] = []
        if let items = app.strings("preAuthorizedApplications") {
            if items.count > Application.maximumPreAuthorized {
                problems.add(app.path("preAuthorizedApplications"), "lists \(items.count) applications; at most \(Application.maximumPreAuthorized).")
            }
            for (client, clientPointer) in items {
                // Kept when not a GUID, too (with its problem), so later problems point at the right position.
                if !client.isGUID { problems.add(clientPointer, "must be a client application's appId (a GUID).") }
                preAuthorized.append(AppID(client))
            }
        }
        guard let appId, let name else { return nil }
        var application = Application(
            appId: appId, displayName: name, publicClient: publicClient,
            secrets: (entries ?? []).compactMap { if case .hashed(let secret) = $0 { secret } else { nil } },
            allowedGrantTypes: grants, redirectUris: (app.strings("redirectUris") ?? []).map(\.value),
            complianceCallbackUris: callbacks.map(\.value), approvedClientApp: app.bool("approvedClientApp") ?? false,
            identifierUris: identifierUris, scopes: scopes, appRoles: (app.strings("appRoles") ?? []).map(\.value),
            requiredResourceAccess: access, preAuthorizedApplications: preAuthorized, requireDPoP: app.bool("requireDPoP") ?? false,
            continuousAccessEvaluation: app.bool("continuousAccessEvaluation") ?? false)
        application.tags = tags
        application.federatedIdentityCredentials = federated ?? []
        return ApplicationEntry(
            application: application, secretEntries: entries, keyCredentialEntries: certificates, federatedGiven: federated != nil)
    }

    /// Validates a named location document (shared with the admin API).
    public static func parseNamedLocation(_ value: JSONValue, at pointer: String, problems: ProblemCollector) -> NamedLocation? {
        guard let item = JSONObjectReader(value, at: pointer, problems: problems) else { return nil }
        item.rejectUnknownMembers(allowed: [
            "id", "displayName", "ipRanges", "isTrusted", "@odata.type", "countriesAndRegions", "includeUnknownCountriesAndRegions", "countryLookupMethod",
            "createdDateTime", "modifiedDateTime",
        ])
        let countryType = "#microsoft.graph.countryNamedLocation"
        let type = item.enumeration("@odata.type", allowed: [countryType, "#microsoft.graph.ipNamedLocation"])
        if type == countryType || item.has("countriesAndRegions") {
            return parseCountryLocation(item, problems: problems)
        }
        let id: PolicyID? = item.guid("id", required: true)
        let name = item.string("displayName", required: true)
        var ranges: [String] = []
        // A range is CIDR text, or Graph's `iPv4CidrRange`/`iPv6CidrRange` object (`cidrAddress`), as Graph shows and exports them.
        for (given, rangePointer) in item.array("ipRanges", required: true) ?? [] {
            var text = given.stringValue
            if case .object(let object) = given, let cidr = object["cidrAddress"]?.stringValue,
                object.keys.allSatisfy({ $0 == "cidrAddress" || $0 == "@odata.type" }),
                object["@odata.type"].map({ ["#microsoft.graph.iPv4CidrRange", "#microsoft.graph.iPv6CidrRange"].contains($0.stringValue ?? "") }) ?? true
            {
                text = cidr
            }
            guard let range = text else {
                problems.add(rangePointer, "must be a CIDR range, as text or as Graph's {\"cidrAddress\": …}.")
                continue
            }
            if IPRange(range) != nil {
                ranges.append(range)
            } else {
                problems.add(rangePointer, "'\(range)' is not a CIDR range such as 203.0.113.0/24 or 2001:db8::/32.")
            }
        }
        let trusted = item.bool("isTrusted") ?? false
        guard let id, let name else { return nil }
        return NamedLocation(id: id, displayName: name, ipRanges: ranges, isTrusted: trusted)
    }

    /// Graph's `countryNamedLocation`: `countriesAndRegions` (ISO 3166-1 alpha-2), `includeUnknownCountriesAndRegions`,
    /// `countryLookupMethod` `clientIpAddress` (the GPS of an authenticator app is not something this server has).
    static func parseCountryLocation(_ item: JSONObjectReader, problems: ProblemCollector) -> NamedLocation? {
        let id: PolicyID? = item.guid("id", required: true)
        let name = item.string("displayName", required: true)
        var countries: [String] = []
        let given = item.strings("countriesAndRegions", required: true)
        for (code, pointer) in given ?? [] {
            let upper = code.uppercased()
            if upper.count == 2, upper.unicodeScalars.allSatisfy({ ("A"..."Z").contains($0) }) {
                if !countries.contains(upper) { countries.append(upper) }
            } else {
                problems.add(pointer, "'\(code)' is not an ISO 3166-1 alpha-2 code such as NZ or DE.")
            }
        }
        let unknown = item.bool("includeUnknownCountriesAndRegions") ?? false
        if given?.isEmpty == true && !unknown {
            problems.add(item.path("countriesAndRegions"), "name at least one country or region (or include unknown ones).")
        }
        if countries.count > 250 { problems.add(item.path("countriesAndRegions"), "may name at most 250 countries and regions.") }
        if let method = item.string("countryLookupMethod"), method != "clientIpAddress" {
            problems.add(item.path("countryLookupMethod"), "only clientIpAddress is supported (the authenticator app's GPS is not known here).")
        }
        if let ranges = item.array("ipRanges"), !ranges.isEmpty { problems.add(item.path("ipRanges"), "a country location has no IP ranges.") }
        if item.bool("isTrusted") == true { problems.add(item.path("isTrusted"), "a country location cannot be trusted (as in Entra).") }
        guard let id, let name else { return nil }
        var location = NamedLocation(id: id, displayName: name, ipRanges: [], isTrusted: false)
        location.countriesAndRegions = countries
        location.includeUnknownCountriesAndRegions = unknown
        return location
    }
}

/// The rule for compliance callback URIs: absolute `https`, or `http` on a loopback host.
public enum CallbackURI {
    public static func isAcceptable(_ text: String) -> Bool {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased(), !host.isEmpty else {
            return false
        }
        if scheme == "https" { return true }
        guard scheme == "http" else { return false }
        return isLoopback(host: host)
    }

    /// `localhost` or a loopback IP literal (127.0.0.0/8, ::1) — not a name that merely starts with "127.".
    public static func isLoopback(host: String) -> Bool {
        let host = host.lowercased()
        if host == "localhost" { return true }
        return IPAddress(host)?.scope == .loopback
    }
}
