import Crypto
import Foundation
import HTTPTypes
import PortcullisCore
import PortcullisStorage

/// The Graph API's collections (PROTOCOL §20), each one registration over what `/admin/v1` already serves: the kinds of
/// tenant documents through their `DocumentResource`, and the read-only views (applications, service principals, roles,
/// the organization, its domain and licence).
enum GraphCatalogue {
    /// `devices` (PROTOCOL §18): the tenant's devices, their owners as a navigation; a write through Graph keeps the
    /// owners and the certificate the device has.
    static func devices(documents: AdminDocuments) -> GraphEntitySet {
        let resource = documents.devices
        var set = GraphEntitySet.documents(
            resource, path: "devices", type: "device", permissions: GraphPermission.devices, toGraph: { value, _ in Directory.device(value) },
            fromGraph: { value, tenant in
                guard case .object(var object) = value, let id = object["id"]?.stringValue, let stored = tenant.device(id: ObjectID(id)) else { return value }
                object["registeredOwners"] = JSONValue(encoding: stored.registeredOwners)
                return .object(object)
            })
        set.isDirectoryObject = true
        set.below["registeredOwners"] = { call, id, rest in
            guard rest.isEmpty, call.method == .get else {
                throw GraphError(.methodNotAllowed, "Request_BadRequest", "A device's owners are read here; they are the users who registered it.")
            }
            guard let device = call.tenant.device(id: ObjectID(id)) else { throw GraphError.notFound(id) }
            return .collection(call, context: "directoryObjects", device.registeredOwners.compactMap { Directory.object($0, tenant: call.tenant) })
        }
        return set
    }

    static func sets(
        documents: AdminDocuments, admin: AdminRoutes, store: any PortcullisStore
    ) -> [GraphEntitySet] {
        let signals = admin.signals
        let methods = admin.authenticationMethods
        // The read-only views' admin API paths (a delegated caller's roles are checked against them), from the kinds they show.
        let tenantPath = DocumentKind.tenant.adminPath ?? "tenant"
        let applicationsPath = DocumentKind.application.adminPath ?? "applications"
        let roleAssignmentsPath = DocumentKind.directoryRoleAssignment.adminPath ?? "role-management/directory/role-assignments"
        var sets: [GraphEntitySet] = [
            .documents(
                documents.conditionalAccessPolicies, path: "identity/conditionalAccess/policies", type: "conditionalAccessPolicy",
                permissions: GraphPermission.conditionalAccess),
            .documents(
                documents.namedLocations, path: "identity/conditionalAccess/namedLocations", type: "ipNamedLocation",
                permissions: GraphPermission.conditionalAccess, typeOf: NamedLocations.type,
                toGraph: { value, _ in NamedLocations.graph(value) }),
            .documents(
                documents.authenticationContexts, path: "identity/conditionalAccess/authenticationContextClassReferences",
                type: "authenticationContextClassReference", permissions: GraphPermission.conditionalAccess),
            GraphEntitySet(
                path: "identity/conditionalAccess/templates", type: "conditionalAccessTemplate", permissions: GraphPermission.conditionalAccess,
                adminPath: "conditional-access/templates", list: { _ in TemplateRoutes.catalogue.map(\.document) }),
            .documents(
                documents.directoryRoleAssignments, path: "roleManagement/directory/roleAssignments", type: "unifiedRoleAssignment",
                permissions: GraphPermission.roles),
            GraphEntitySet(
                path: "roleManagement/directory/roleDefinitions", type: "unifiedRoleDefinition", permissions: GraphPermission.roles,
                adminPath: "role-management/directory/role-definitions",
                list: { _ in DirectoryRoleDefinition.builtIns.map(Roles.definition) }),
            .documents(
                documents.invitations, path: "invitations", type: "invitation", permissions: GraphPermission.invitations),
            .documents(
                documents.agreements, path: "identityGovernance/termsOfUse/agreements", type: "agreement", permissions: GraphPermission.agreements),
            GraphEntitySet(
                path: "organization", type: "organization", permissions: GraphPermission.organization, adminPath: tenantPath,
                list: { call in [Organization.organization(call.tenant)] }),
            GraphEntitySet(
                path: "domains", type: "domain", permissions: GraphPermission.organization, adminPath: tenantPath,
                list: { call in [Organization.domain(call.tenant)] }),
            GraphEntitySet(
                path: "subscribedSkus", type: "subscribedSku", permissions: GraphPermission.organization, adminPath: tenantPath,
                list: { call in [Organization.sku(call.tenant)] }),
        ]
        // Authentication strengths: `policies/authenticationStrengthPolicies` in v1.0, under conditional access in beta.
        for path in ["policies/authenticationStrengthPolicies", "identity/conditionalAccess/authenticationStrength/policies"] {
            sets.append(
                .documents(
                    documents.authenticationStrengths, path: path, type: "authenticationStrengthPolicy", permissions: GraphPermission.authenticationStrengths))
        }
        sets.append(users(documents: documents, signals: signals, methods: methods))
        sets.append(groups(documents: documents))
        var applications = GraphEntitySet(
            path: "applications", type: "application", permissions: GraphPermission.applications, adminPath: applicationsPath,
            list: { call in call.tenant.directory.applications.map(Applications.application) })
        applications.isDirectoryObject = true
        applications.read = { call, key in
            let id = AppID(key)
            return call.tenant.directory.applications.first { $0.appId == id || AppID(Applications.objectId($0)) == id }.map {
                (Applications.application($0), nil)
            }
        }
        applications.expandable = ["federatedIdentityCredentials"]
        applications.below["federatedIdentityCredentials"] = Applications.federatedNavigation(documents.applications)
        sets.append(applications)
        var principals = GraphEntitySet(
            path: "servicePrincipals", type: "servicePrincipal", permissions: GraphPermission.applications, adminPath: applicationsPath,
            list: { call in (BuiltInResources.all + call.tenant.directory.applications).map(Applications.servicePrincipal) })
        principals.isDirectoryObject = true
        principals.read = { call, key in
            let id = AppID(key)
            return (BuiltInResources.all + call.tenant.directory.applications).first { $0.appId == id || AppID(Applications.principalId($0)) == id }
                .map { (Applications.servicePrincipal($0), nil) }
        }
        sets.append(principals)
        sets.append(devices(documents: documents))
        // Intune's device compliance policies: each is its platform's type (#microsoft.graph.iosCompliancePolicy…).
        sets.append(
            .documents(
                documents.deviceCompliancePolicies, path: "deviceManagement/deviceCompliancePolicies", type: "deviceCompliancePolicy",
                permissions: GraphPermission.deviceConfiguration,
                typeOf: { value in value["@odata.type"]?.stringValue.map { String($0.dropFirst("#microsoft.graph.".count)) } ?? "deviceCompliancePolicy" }))
        var roles = GraphEntitySet(
            path: "directoryRoles", type: "directoryRole", permissions: GraphPermission.roles, adminPath: roleAssignmentsPath,
            list: { call in Roles.activated(call.tenant) })
        roles.isDirectoryObject = true
        roles.below["members"] = { call, id, rest in
            guard rest.isEmpty, call.method == .get else {
                throw GraphError(
                    .methodNotAllowed, "Request_BadRequest", "Role members are read here; assign roles through roleManagement/directory/roleAssignments.")
            }
            let members = call.tenant.contents.directoryRoleAssignments.filter { $0.roleDefinitionId == RoleID(id) }.map(\.principalId)
            return .collection(call, context: "directoryObjects", members.compactMap { Directory.object($0, tenant: call.tenant) })
        }
        sets.append(roles)
        sets += GraphIntune.sets(documents: documents, store: store)
        sets.append(WhatIf.set(admin: admin))
        sets += risk(admin: admin)
        return sets
    }

    // MARK: Identity protection

    /// `identityProtection/riskyUsers` (with `history`, and the actions `confirmCompromised` and `dismiss`, which take
    /// `{"userIds": […]}` and answer 204) and `identityProtection/riskDetections` (PROTOCOL §19): the admin API's, in Graph's shape.
    static func risk(admin: AdminRoutes) -> [GraphEntitySet] {
        let engine = admin.risk
        var users = GraphEntitySet(
            path: "identityProtection/riskyUsers", type: "riskyUser", permissions: GraphPermission.riskyUsers,
            adminPath: "identityProtection/riskyUsers", list: { call in call.tenant.riskyUsers.map(\.graph) })
        users.below["history"] = { call, id, rest in
            guard rest.isEmpty, call.method == .get else { throw GraphError(.methodNotAllowed, "Request_BadRequest", "A risky user's history is read here.") }
            guard let risky = call.tenant.riskyUser(id: ObjectID(id)), risky.hasRisk else { throw GraphError.notFound(id) }
            return .collection(call, context: "identityProtection/riskyUsers('\(id)')/history", risky.graphHistory)
        }
        func action(_ name: String, _ decide: @escaping @Sendable (User, TenantSnapshot, String) async throws -> Void) -> GraphEntitySet {
            var set = GraphEntitySet(
                path: "identityProtection/riskyUsers/\(name)", type: "riskyUser", permissions: GraphPermission.riskyUsers,
                adminPath: "identityProtection/riskyUsers/\(name)", list: { _ in [] })
            set.action = { call in
                guard let ids = call.body?["userIds"]?.arrayValue, !ids.isEmpty, ids.count <= RiskRoutes.maximumUserIds else {
                    throw GraphError(.badRequest, "BadRequest", "\(name) takes {\"userIds\": [...]}, 1 to \(RiskRoutes.maximumUserIds) user IDs.")
                }
                var users: [User] = []
                for id in ids {
                    guard let text = id.stringValue, let user = call.tenant.directory.user(identity: text) else {
                        throw GraphError(.badRequest, "BadRequest", "\(id.stringValue?.prefix(64) ?? "A userIds item") names no user of this tenant.")
                    }
                    users.append(user)
                }
                for user in users { try await decide(user, call.tenant, call.caller.actor) }
                return GraphRoutes.Answer(status: .noContent, body: nil)
            }
            return set
        }
        let detections = GraphEntitySet(
            path: "identityProtection/riskDetections", type: "riskDetection", permissions: GraphPermission.riskEvents,
            adminPath: "identityProtection/riskDetections", list: { call in call.tenant.riskDetections })
        // Workload identities: `servicePrincipalIds` are Graph's service principal IDs (app IDs are accepted too).
        let principals = GraphEntitySet(
            path: "identityProtection/riskyServicePrincipals", type: "riskyServicePrincipal", permissions: GraphPermission.riskyServicePrincipals,
            adminPath: "identityProtection/riskyServicePrincipals", list: { call in call.tenant.riskyServicePrincipals.map(\.graph) })
        func principalAction(_ name: String, _ decision: RiskEngine.ServicePrincipalDecision) -> GraphEntitySet {
            var set = GraphEntitySet(
                path: "identityProtection/riskyServicePrincipals/\(name)", type: "riskyServicePrincipal", permissions: GraphPermission.riskyServicePrincipals,
                adminPath: "identityProtection/riskyServicePrincipals/\(name)", list: { _ in [] })
            set.action = { call in
                guard let ids = call.body?["servicePrincipalIds"]?.arrayValue, !ids.isEmpty, ids.count <= RiskRoutes.maximumUserIds else {
                    throw GraphError(.badRequest, "BadRequest", "\(name) takes {\"servicePrincipalIds\": [...]}, 1 to \(RiskRoutes.maximumUserIds) IDs.")
                }
                let applications = try ids.map { id in
                    guard let text = id.stringValue, let application = RiskRoutes.application(text, in: call.tenant) else {
                        throw GraphError(
                            .badRequest, "BadRequest",
                            "\(id.stringValue?.prefix(64) ?? "A servicePrincipalIds item") names no service principal of this tenant.")
                    }
                    return application
                }
                for application in applications { try await engine.decide(decision, application: application, in: call.tenant, actor: call.caller.actor) }
                return GraphRoutes.Answer(status: .noContent, body: nil)
            }
            return set
        }
        let principalDetections = GraphEntitySet(
            path: "identityProtection/servicePrincipalRiskDetections", type: "servicePrincipalRiskDetection",
            permissions: GraphPermission.riskyServicePrincipals, adminPath: "identityProtection/servicePrincipalRiskDetections",
            list: { call in call.tenant.servicePrincipalRiskDetections })
        return [
            users, detections,
            action("confirmCompromised") { user, tenant, actor in try await engine.confirmCompromised(user, in: tenant, actor: actor) },
            action("dismiss") { user, tenant, actor in try await engine.dismiss(user, in: tenant, actor: actor) },
            principals, principalDetections, principalAction("confirmCompromised", .confirmCompromised), principalAction("dismiss", .dismiss),
        ]
    }

    // MARK: Users

    static func users(documents: AdminDocuments, signals: SignalAdminRoutes, methods: AuthenticationMethodRoutes) -> GraphEntitySet {
        var set = GraphEntitySet.documents(
            documents.users, path: "users", type: "user", permissions: GraphPermission.users,
            toGraph: { value, _ in Directory.user(value) },
            fromGraph: { value, _ in try Directory.userFromGraph(value) })
        set.isDirectoryObject = true
        set.resolveKey = { call, key in call.tenant.directory.user(identity: key)?.id.rawValue ?? key }
        set.below["revokeSignInSessions"] = { call, id, rest in
            guard rest.isEmpty, call.method == .post else { throw GraphError(.methodNotAllowed, "Request_BadRequest", "revokeSignInSessions is a POST.") }
            guard let user = call.tenant.directory.user(identity: id) else { throw GraphError.notFound(id) }
            try await signals.revokeSessions(tenant: call.tenant, user: user, actor: call.caller.actor, compromised: false)
            return .json(.ok, .object(["@odata.context": .string("\(call.root)/$metadata#Edm.Boolean"), "value": .bool(true)]))
        }
        set.below["authentication"] = { call, id, rest in
            guard rest == ["methods"], call.method == .get else {
                throw GraphError(.badRequest, "BadRequest", "authentication/methods is read here; the admin API issues and removes methods.")
            }
            guard let user = call.tenant.directory.user(identity: id) else { throw GraphError.notFound(id) }
            let found = try await methods.methods(tenantId: call.tenant.tenant.id.rawValue, userId: user.id.rawValue).map { JSONValue(encoding: $0.method) }
            // Every user has a password method in Graph's list (its fixed ID), when they have a password.
            let password: [JSONValue] =
                user.passwordHash == nil
                ? [] : [["@odata.type": "#microsoft.graph.passwordAuthenticationMethod", "id": "28c10230-6103-485e-b985-444c60001490", "password": .null]]
            return .collection(call, context: "users('\(user.id)')/authentication/methods", password + found)
        }
        set.belowPermissions = ["revokeSignInSessions": GraphPermission.sessions, "authentication": GraphPermission.authenticationMethods]
        return set
    }

    // MARK: Groups

    static func groups(documents: AdminDocuments) -> GraphEntitySet {
        let resource = documents.groups
        var set = GraphEntitySet.documents(
            resource, path: "groups", type: "group", permissions: GraphPermission.groups,
            toGraph: { value, _ in Directory.group(value) },
            fromGraph: { value, _ in try Directory.groupFromGraph(value) })
        set.isDirectoryObject = true
        set.expandable = ["members"]
        set.below["members"] = { call, id, rest in
            guard let stored = try await resource.read(call.tenant, id: id) else { throw GraphError.notFound(id) }
            var group = stored.document
            switch (call.method, rest) {
            case (.get, []):
                let query = try ODataQuery.read(type: nil) { call.query[$0] }
                let all = group.members.compactMap { Directory.object($0, tenant: call.tenant) }
                let page = query.page(all, pageSize: 100)
                var body: [String: JSONValue] = [
                    "@odata.context": .string("\(call.root)/$metadata#directoryObjects"), "value": .array(page.value.map(query.selected)),
                ]
                if query.count { body["@odata.count"] = .number(Double(page.count)) }
                return .json(.ok, .object(body))
            case (.post, ["$ref"]):
                guard let reference = call.body?["@odata.id"]?.stringValue, let member = GraphBody.objectId(reference) else {
                    throw GraphError(.badRequest, "BadRequest", "Add a member with {\"@odata.id\": \"…/directoryObjects/{id}\"}.")
                }
                guard !group.members.contains(ObjectID(member)) else {
                    throw GraphError(
                        .badRequest, "Request_BadRequest", "One or more added object references already exist for the following modified properties: 'members'."
                    )
                }
                group.members.append(ObjectID(member))
            case (.delete, let path) where path.count == 2 && path[1] == "$ref":
                let member = path[0]
                guard group.members.contains(ObjectID(member)) else { throw GraphError.notFound(member) }
                group.members.removeAll { $0 == ObjectID(member) }
            default:
                throw GraphError(
                    .methodNotAllowed, "Request_BadRequest",
                    "Group members are listed (GET members), added (POST members/$ref) and removed (DELETE members/{id}/$ref).")
            }
            _ = try await resource.write(
                group.presented(in: call.tenant), pathId: group.id.rawValue, precondition: .version(stored.version), options: WriteOptions(),
                dryRun: false, tenant: call.tenant, actor: call.caller.actor)
            return .noContent
        }
        return set
    }
}

/// Directory objects in Graph's shapes.
enum Directory {
    static func user(_ value: JSONValue) -> JSONValue {
        guard case .object(var object) = value else { return value }
        if object["userType"] == nil { object["userType"] = "Member" }
        return .object(object)
    }

    /// A Graph `user` body as the admin API reads it: `passwordProfile.password` is the password; `mailNickname` (which
    /// Graph requires) and members Graph shows empty are read and ignored.
    static func userFromGraph(_ value: JSONValue) throws -> JSONValue {
        guard case .object(var object) = value else { return value }
        if let profile = object.removeValue(forKey: "passwordProfile") {
            if let password = profile["password"], password != .null { object["password"] = password }
        }
        object.removeValue(forKey: "mailNickname")
        return .object(droppingEmpty(object, type: "user", keeping: ["id", "userPrincipalName", "displayName", "accountEnabled", "userType", "password"]))
    }

    static func group(_ value: JSONValue) -> JSONValue {
        guard case .object(var object) = value else { return value }
        object.removeValue(forKey: "members")
        object["securityEnabled"] = .bool(true)
        object["mailEnabled"] = .bool(false)
        object["groupTypes"] = .array([])
        return .object(object)
    }

    /// A Graph `group` body as the admin API reads it: a security group (`securityEnabled` true, `mailEnabled` false, no
    /// `groupTypes`), `members@odata.bind` its members; `mailNickname` read and ignored.
    static func groupFromGraph(_ value: JSONValue) throws -> JSONValue {
        guard case .object(var object) = value else { return value }
        var problems: [ValidationProblem] = []
        if let enabled = object.removeValue(forKey: "securityEnabled"), enabled != .bool(true) {
            problems.append(ValidationProblem(pointer: "/securityEnabled", message: "must be true: the directory keeps security groups only."))
        }
        if let mail = object.removeValue(forKey: "mailEnabled"), mail != .bool(false) {
            problems.append(ValidationProblem(pointer: "/mailEnabled", message: "must be false: the directory keeps security groups only."))
        }
        if let types = object.removeValue(forKey: "groupTypes"), types != .array([]), types != .null {
            problems.append(ValidationProblem(pointer: "/groupTypes", message: "must be empty: Microsoft 365 and dynamic groups are not kept here."))
        }
        object.removeValue(forKey: "mailNickname")
        if let binds = object.removeValue(forKey: "members@odata.bind") {
            var members = object["members"]?.arrayValue ?? []
            for (index, reference) in (binds.arrayValue ?? []).enumerated() {
                if let id = reference.stringValue.flatMap(GraphBody.objectId) {
                    members.append(.string(id))
                } else {
                    problems.append(ValidationProblem(pointer: "/members@odata.bind/\(index)", message: "must be a …/directoryObjects/{id} URL."))
                }
            }
            object["members"] = .array(members)
        }
        if !problems.isEmpty { throw ValidationError(problems: problems) }
        return .object(droppingEmpty(object, type: "group", keeping: ["id", "displayName", "members"]))
    }

    /// Members of `type` that a Graph body leaves empty (`null`, `[]`, `""`) and the admin API does not keep: read and ignored.
    static func droppingEmpty(_ object: [String: JSONValue], type: String, keeping: Set<String>) -> [String: JSONValue] {
        let graphOnly = Set((GraphSchema.members(of: type) ?? []).map(\.name)).subtracting(keeping)
        return object.filter { key, value in
            guard graphOnly.contains(key) else { return true }
            return !(value == .null || value == .array([]) || value == .string(""))
        }
    }

    /// A user or group as a `directoryObject` (group members, role members), or `nil` when it is neither.
    /// Graph's `device`: the stored device without what only Portcullis keeps (its certificate); `registeredOwners` is
    /// a navigation, as in Graph.
    static func device(_ value: JSONValue) -> JSONValue {
        guard case .object(var object) = value else { return value }
        object.removeValue(forKey: "certificate")
        object.removeValue(forKey: "registeredOwners")
        return .object(object)
    }

    static func object(_ id: ObjectID, tenant: TenantSnapshot) -> JSONValue? {
        if let found = tenant.directory.user(id: id), case .object(var object) = Directory.user(JSONValue(encoding: found)) {
            object.removeValue(forKey: "passwordHash")
            object["@odata.type"] = "#microsoft.graph.user"
            return .object(object)
        }
        if let group = tenant.directory.group(id: id) {
            return ["@odata.type": "#microsoft.graph.group", "id": .string(group.id.rawValue), "displayName": .string(group.displayName)]
        }
        return nil
    }
}

/// Named locations in Graph's shape: `@odata.type` says which, IP ranges are `iPv4CidrRange`/`iPv6CidrRange` objects.
enum NamedLocations {
    static func type(_ value: JSONValue) -> String { value["countriesAndRegions"] != nil ? "countryNamedLocation" : "ipNamedLocation" }

    static func graph(_ value: JSONValue) -> JSONValue {
        guard case .object(var object) = value else { return value }
        object["@odata.type"] = .string("#microsoft.graph.\(type(value))")
        if let ranges = object["ipRanges"]?.arrayValue {
            object["ipRanges"] = .array(
                ranges.map { range in
                    let text = range.stringValue ?? ""
                    return [
                        "@odata.type": .string(text.contains(":") ? "#microsoft.graph.iPv6CidrRange" : "#microsoft.graph.iPv4CidrRange"), "cidrAddress": range,
                    ]
                })
        }
        if type(value) == "countryNamedLocation" {
            object.removeValue(forKey: "ipRanges")
            object.removeValue(forKey: "isTrusted")
            if object["countryLookupMethod"] == nil { object["countryLookupMethod"] = "clientIpAddress" }
        }
        return .object(object)
    }
}

/// Applications and service principals, read-only views of the directory's applications in Graph's shapes. Their object
/// IDs, and the IDs of app roles and scopes, are derived from the app ID and the value's name (stable, never stored).
enum Applications {
    static func uuid(_ parts: String...) -> String {
        var bytes = Array(Insecure.SHA1.hash(data: Data(parts.joined(separator: "\u{0}").utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x50
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let hex = bytes.map { String(format: "%02x", $0) }.joined()
        let characters = Array(hex)
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(characters[$0]) }.joined(separator: "-")
    }

    static func objectId(_ app: PortcullisCore.Application) -> String { uuid("application", app.appId.rawValue) }
    static func principalId(_ app: PortcullisCore.Application) -> String { uuid("servicePrincipal", app.appId.rawValue) }

    static func appRoles(_ app: PortcullisCore.Application) -> JSONValue {
        .array(
            app.appRoles.map { role in
                [
                    "id": .string(uuid("appRole", app.appId.rawValue, role)), "value": .string(role), "displayName": .string(role),
                    "description": .string(role), "isEnabled": true, "allowedMemberTypes": ["Application", "User"], "origin": "Application",
                ]
            })
    }

    static func scopes(_ app: PortcullisCore.Application) -> JSONValue {
        .array(
            app.scopes.map { scope in
                [
                    "id": .string(uuid("scope", app.appId.rawValue, scope)), "value": .string(scope), "adminConsentDisplayName": .string(scope),
                    "adminConsentDescription": .string(scope), "isEnabled": true, "type": "Admin",
                ]
            })
    }

    static func passwords(_ app: PortcullisCore.Application) -> JSONValue {
        .array(
            app.secrets.map { secret in
                [
                    "keyId": .string(secret.keyId.rawValue), "displayName": secret.displayName.map(JSONValue.string) ?? .null,
                    "hint": secret.hint.map(JSONValue.string) ?? .null, "startDateTime": secret.startDateTime.map { .string($0.formatted(.iso8601)) } ?? .null,
                    "endDateTime": secret.endDateTime.map { .string($0.formatted(.iso8601)) } ?? .null,
                ]
            })
    }

    /// Graph's `keyCredential`s: the certificates (their `key` left out, as Graph lists them; `customKeyIdentifier` the
    /// SHA-1 thumbprint's bytes, base64).
    static func certificates(_ app: PortcullisCore.Application) -> JSONValue {
        .array(
            app.keyCredentials.map { credential in
                [
                    "keyId": .string(credential.keyId.rawValue), "displayName": credential.displayName.map(JSONValue.string) ?? .null,
                    "type": .string(credential.type), "usage": .string(credential.usage),
                    "customKeyIdentifier": .string(credential.customKeyIdentifier), "key": .null,
                    "startDateTime": .string(credential.startDateTime.formatted(.iso8601)),
                    "endDateTime": .string(credential.endDateTime.formatted(.iso8601)),
                ]
            })
    }

    /// Graph's `federatedIdentityCredential`.
    static func federated(_ credential: FederatedIdentityCredential) -> JSONValue {
        [
            "id": .string(credential.id.rawValue), "name": .string(credential.name), "issuer": .string(credential.issuer),
            "subject": .string(credential.subject), "audiences": .array(credential.audiences.map(JSONValue.string)),
            "description": credential.description.map(JSONValue.string) ?? .null,
        ]
    }

    /// `applications/{id}/federatedIdentityCredentials` (PROTOCOL §21): listed, read by ID or name, created, updated (its
    /// name stays) and deleted, each a write of the application through the admin API's path (validation, audit).
    static func federatedNavigation(
        _ resource: DocumentResource<PortcullisCore.Application>
    ) -> @Sendable (GraphRoutes.Call, String, [String]) async throws -> GraphRoutes.Answer {
        { call, key, rest in
            let id = AppID(key)
            guard let app = call.tenant.directory.applications.first(where: { $0.appId == id || AppID(objectId($0)) == id }),
                let stored = try await resource.read(call.tenant, id: app.appId.rawValue)
            else { throw GraphError.notFound(key) }
            let context = "applications('\(objectId(app))')/federatedIdentityCredentials"
            var credentials = stored.document.federatedIdentityCredentials
            func index(_ name: String) throws -> Int {
                guard let found = credentials.firstIndex(where: { $0.id == RecordID(name) || $0.name == name }) else { throw GraphError.notFound(name) }
                return found
            }
            func entity(_ credential: FederatedIdentityCredential) -> JSONValue {
                guard case .object(var object) = federated(credential) else { return federated(credential) }
                object["@odata.context"] = .string("\(call.root)/$metadata#\(context)/$entity")
                return .object(object)
            }
            func read(_ body: JSONValue?) throws -> FederatedIdentityCredential {
                let problems = ProblemCollector()
                let credential = FederatedIdentityCredential.parse(body ?? .null, at: "", appId: app.appId, problems: problems)
                try problems.check()
                guard let credential else { throw GraphError(.badRequest, "BadRequest", "The request needs a federatedIdentityCredential.") }
                return credential
            }
            let answer: GraphRoutes.Answer
            switch (call.method, rest.count) {
            case (.get, 0):
                return .collection(call, context: context, credentials.map(federated))
            case (.get, 1):
                return .json(.ok, entity(credentials[try index(rest[0])]))
            case (.post, 0):
                let credential = try read(call.body)
                if credentials.contains(where: { $0.name == credential.name }) {
                    throw ValidationError(problems: [ValidationProblem(pointer: "/name", message: "'\(credential.name)' is the name of another credential.")])
                }
                credentials.append(credential)
                answer = .json(.created, entity(credential))
            case (.patch, 1):
                let at = try index(rest[0])
                guard case .object(var merged) = federated(credentials[at]), case .object(let changes)? = call.body else {
                    throw GraphError(.badRequest, "BadRequest", "PATCH takes a JSON object.")
                }
                if let given = changes["name"], given != .string(credentials[at].name) {
                    throw ValidationError(problems: [ValidationProblem(pointer: "/name", message: "cannot be changed; create another credential.")])
                }
                merged.merge(changes) { $1 }
                credentials[at] = try read(.object(merged))
                answer = .noContent
            case (.delete, 1):
                credentials.remove(at: try index(rest[0]))
                answer = .noContent
            default:
                throw GraphError(.methodNotAllowed, "Request_BadRequest", "\(call.method.rawValue) is not supported on federatedIdentityCredentials.")
            }
            var application = stored.document
            application.federatedIdentityCredentials = credentials
            _ = try await resource.write(
                application.presented(in: call.tenant), pathId: app.appId.rawValue, precondition: .version(stored.version), options: WriteOptions(),
                dryRun: false, tenant: call.tenant, actor: call.caller.actor)
            return answer
        }
    }

    static func application(_ app: PortcullisCore.Application) -> JSONValue {
        let access: [JSONValue] = app.requiredResourceAccess.map { entry in
            [
                "resourceAppId": .string(entry.resourceAppId),
                "resourceAccess": .array(
                    entry.scopes.map { ["id": .string(uuid("scope", entry.resourceAppId, $0)), "type": "Scope"] }
                        + entry.appRoles.map { ["id": .string(uuid("appRole", entry.resourceAppId, $0)), "type": "Role"] }),
            ]
        }
        return [
            "id": .string(objectId(app)), "appId": .string(app.appId.rawValue), "displayName": .string(app.displayName),
            "signInAudience": "AzureADMyOrg", "identifierUris": .array(app.identifierUris.map(JSONValue.string)),
            "tags": .array(app.tags.map(JSONValue.string)), "isFallbackPublicClient": .bool(app.publicClient),
            "publicClient": ["redirectUris": .array(app.publicClient ? app.redirectUris.map(JSONValue.string) : [])],
            "web": ["redirectUris": .array(app.publicClient ? [] : app.redirectUris.map(JSONValue.string))],
            "api": ["requestedAccessTokenVersion": 2, "oauth2PermissionScopes": scopes(app)], "appRoles": appRoles(app),
            "passwordCredentials": passwords(app), "keyCredentials": certificates(app), "requiredResourceAccess": .array(access),
        ]
    }

    static func servicePrincipal(_ app: PortcullisCore.Application) -> JSONValue {
        [
            "id": .string(principalId(app)), "appId": .string(app.appId.rawValue), "displayName": .string(app.displayName),
            "appDisplayName": .string(app.displayName), "accountEnabled": true, "servicePrincipalType": "Application",
            "servicePrincipalNames": .array(([app.appId.rawValue] + app.identifierUris).map(JSONValue.string)),
            "tags": .array(app.tags.map(JSONValue.string)), "appRoles": appRoles(app), "oauth2PermissionScopes": scopes(app),
            "appRoleAssignmentRequired": false, "passwordCredentials": passwords(app), "keyCredentials": certificates(app),
            "signInAudience": "AzureADMyOrg",
        ]
    }
}

/// Directory roles in Graph's shapes: Entra's built-in definitions (`unifiedRoleDefinition`) and the roles held in this
/// tenant (`directoryRole`, "activated" by their first assignment; their ID the template's).
enum Roles {
    static func definition(_ role: DirectoryRoleDefinition) -> JSONValue {
        var value = JSONValue(encoding: role)
        if case .object(var object) = value {
            object["rolePermissions"] = .array([])
            object["resourceScopes"] = ["/"]
            value = .object(object)
        }
        return value
    }

    static func activated(_ tenant: TenantSnapshot) -> [JSONValue] {
        let held = Set(tenant.contents.directoryRoleAssignments.map(\.roleDefinitionId))
        return DirectoryRoleDefinition.builtIns.filter { held.contains($0.id) }.map { role in
            [
                "id": .string(role.id.rawValue), "displayName": .string(role.displayName), "roleTemplateId": .string(role.id.rawValue),
                "description": definition(role)["description"] ?? .null,
            ]
        }
    }
}

/// The tenant as Graph's `organization`, its domain, and its one licence (Entra ID P1 and P2's service plans, so that
/// tools checking licences before reading conditional access run, PROTOCOL §20).
enum Organization {
    static func organization(_ tenant: TenantSnapshot) -> JSONValue {
        [
            "id": .string(tenant.tenant.id.rawValue), "displayName": .string(tenant.tenant.displayName), "tenantType": "AAD",
            "verifiedDomains": [["name": .string(tenant.tenant.domain), "type": "Managed", "isDefault": true, "isInitial": true, "capabilities": "None"]],
            "assignedPlans": .array(
                sku(tenant)["servicePlans"]?.arrayValue?.map { plan in
                    [
                        "assignedDateTime": "2026-01-01T00:00:00Z", "capabilityStatus": "Enabled", "service": "AADPremiumService",
                        "servicePlanId": plan["servicePlanId"] ?? .null,
                    ]
                } ?? []),
        ]
    }

    static func domain(_ tenant: TenantSnapshot) -> JSONValue {
        [
            "id": .string(tenant.tenant.domain), "authenticationType": "Managed", "isAdminManaged": true, "isDefault": true, "isInitial": true,
            "isRoot": true, "isVerified": true, "supportedServices": ["Email", "OrgIdAuthentication"],
        ]
    }

    /// Microsoft Entra ID P2 (`AAD_PREMIUM_P2`), whose service plans include P1's: as many seats as users.
    static func sku(_ tenant: TenantSnapshot) -> JSONValue {
        let users = Double(tenant.directory.users.count)
        return [
            "id": .string("\(tenant.tenant.id.rawValue)_84a661c4-e949-4bd2-a560-ed7766fcaf2b"), "accountId": .string(tenant.tenant.id.rawValue),
            "accountName": .string(tenant.tenant.displayName), "appliesTo": "User", "capabilityStatus": "Enabled", "consumedUnits": .number(users),
            "skuId": "84a661c4-e949-4bd2-a560-ed7766fcaf2b", "skuPartNumber": "AAD_PREMIUM_P2",
            "prepaidUnits": ["enabled": .number(max(users, 1_000_000)), "lockedOut": 0, "suspended": 0, "warning": 0],
            "servicePlans": [
                [
                    "servicePlanId": "41781fb2-bc02-4b7c-bd55-b576c07bb09d", "servicePlanName": "AAD_PREMIUM", "provisioningStatus": "Success",
                    "appliesTo": "User",
                ],
                [
                    "servicePlanId": "eec0eb4f-6444-4f95-aba0-50c24d67f998", "servicePlanName": "AAD_PREMIUM_P2", "provisioningStatus": "Success",
                    "appliesTo": "User",
                ],
            ],
        ]
    }
}

/// Graph's what-if (`identity/conditionalAccess/evaluate`, beta): its sign-in described in Graph's terms, decided exactly
/// as the admin API's what-if decides it (the token endpoint's decision; nothing issued), and every policy answered as a
/// `whatIfAnalysisResult`: the policy, whether it applies, and which conditions it did not match.
enum WhatIf {
    static func set(admin: AdminRoutes) -> GraphEntitySet {
        var set = GraphEntitySet(
            path: "identity/conditionalAccess/evaluate", type: "conditionalAccessPolicy", permissions: GraphPermission.conditionalAccess,
            adminPath: "conditional-access/evaluate", list: { _ in [] })
        set.postIsRead = true
        let policies = admin.documents.conditionalAccessPolicies
        set.action = { call in
            let (signIn, onlyApplied) = try read(call.body ?? .null)
            let answer = try admin.whatIf(signIn, drafts: nil, tenant: call.tenant, correlationId: RecordID.generate().rawValue)
            var results: [JSONValue] = []
            for applied in answer.signIn.appliedConditionalAccessPolicies {
                let applies = [.success, .failure, .reportOnlySuccess, .reportOnlyFailure].contains(applied.result)
                if onlyApplied && !applies { continue }
                guard let stored = try await policies.read(call.tenant, id: applied.id), case .object(var object) = stored.document.presented(in: call.tenant)
                else { continue }
                object["policyApplies"] = .bool(applies)
                let reasons = applied.result == .notEnabled ? ["policyNotEnabled"] : applied.conditionsNotSatisfied.map(reason)
                object["analysisReasons"] = .string(reasons.isEmpty ? "notSet" : reasons.joined(separator: ","))
                results.append(GraphSchema.complete(.object(object), type: "conditionalAccessPolicy"))
            }
            return .collection(call, context: "Collection(microsoft.graph.whatIfAnalysisResult)", results)
        }
        return set
    }

    static func reason(_ condition: Decision.Condition) -> String {
        switch condition {
        case .users: "users"
        case .servicePrincipals: "workloadIdentities"
        case .application: "application"
        case .clientType: "clientApps"
        case .devicePlatform: "devicePlatform"
        case .location: "location"
        case .authenticationFlows: "authenticationFlow"
        case .deviceState: "devices"
        case .signInRisk: "signInRisk"
        case .userRisk: "userRisk"
        case .servicePrincipalRisk: "servicePrincipalRisk"
        case .insiderRisk: "insiderRisk"
        }
    }

    /// Graph's evaluate body: `signInIdentity` (`userSignIn` or `servicePrincipalSignIn`), `signInContext`
    /// (`applicationContext` or `authContext`), `signInConditions` (platform, client app type, IP address, authentication
    /// flow, `deviceInfo`), `appliedPoliciesOnly`. Conditions this server cannot know yet (risk) are refused at their pointers.
    static func read(_ body: JSONValue) throws -> (WhatIfSignIn, Bool) {
        let problems = ProblemCollector()
        guard let root = JSONObjectReader(body, at: "", problems: problems) else { throw ValidationError(problems: problems.problems) }
        root.rejectUnknownMembers(allowed: ["signInIdentity", "signInContext", "signInConditions", "appliedPoliciesOnly"])
        let identity = root.object("signInIdentity", required: true)
        identity?.rejectUnknownMembers(allowed: ["@odata.type", "userId", "servicePrincipalId", "externalTenantId", "externalUserType"])
        let userId = identity?.string("userId")
        let principalId = identity?.string("servicePrincipalId")
        if identity != nil, (userId == nil) == (principalId == nil) {
            problems.add("/signInIdentity", "names a user (userId, #microsoft.graph.userSignIn) or a service principal (servicePrincipalId).")
        }
        let context = root.object("signInContext", required: true)
        context?.rejectUnknownMembers(allowed: ["@odata.type", "includeApplications", "authenticationContextValue"])
        let applications = (context?.strings("includeApplications") ?? []).map(\.value)
        let authenticationContext = context?.string("authenticationContextValue")
        if context != nil, applications.count != 1, authenticationContext == nil {
            problems.add("/signInContext/includeApplications", "names the one application signed in to (#microsoft.graph.applicationContext).")
        }
        let conditions = root.object("signInConditions")
        conditions?.rejectUnknownMembers(allowed: [
            "@odata.type", "devicePlatform", "clientAppType", "ipAddress", "country", "authenticationFlow", "deviceInfo", "signInRiskLevel", "userRiskLevel",
            "servicePrincipalRiskLevel", "insiderRiskLevel",
        ])
        let device = conditions?.object("deviceInfo").flatMap(DeviceFacts.read(info:))
        let platform = conditions?.string("devicePlatform")
        let type = conditions?.enumeration("clientAppType", allowed: SignInFacts.ClientAppType.modern.map(\.rawValue)).flatMap(
            SignInFacts.ClientAppType.init(rawValue:))
        let address = conditions?.string("ipAddress")
        let flow = conditions?.object("authenticationFlow")
        flow?.rejectUnknownMembers(allowed: ["@odata.type", "transferMethod"])
        let transfer = flow?.enumeration("transferMethod", allowed: TransferMethod.allCases.map(\.rawValue)).flatMap(TransferMethod.init(rawValue:))
        let onlyApplied = root.bool("appliedPoliciesOnly") ?? false
        try problems.check()
        // The application signed in to is the resource; Graph's what-if names no separate client, so it is its own client.
        let application = applications.first ?? BuiltInResources.graphAppId.rawValue
        var signIn = WhatIfSignIn(
            userId: userId, clientAppId: application, resourceAppId: application, platform: platform, ipAddress: address,
            clientAppType: type ?? .mobileAppsAndDesktopClients)
        signIn.transferMethod = transfer
        signIn.device = device
        if let conditions { signIn.readRisk(conditions) }
        if let principalId { signIn.clientAppId = principalId }
        if let authenticationContext { signIn.authenticationContexts = [authenticationContext] }
        return (signIn, onlyApplied)
    }
}
