import Foundation
import Logging
import PortcullisCore
import PortcullisSQLite
import PortcullisStorage
import PortcullisTesting
import PortcullisTokens

/// A many-tenant deployment for the scale benchmark (issue 26): `tenants` tenants, each with `users` users in 10
/// groups, a daemon (client credentials, one secret) holding an app role of the tenant's mail API, and `policies`
/// report-only conditional-access policies naming its users, groups and API. Tenant 0 also has an admin client
/// (for the stream of policy writes). Written straight into a SQLite store (seeding a million users through
/// `directory.json` would measure the seeder, not the server), with `tenants.txt` for the load generator:
/// one line per tenant, `tenantId clientId secret`.
enum ScaleDataset {
    static func tenantId(_ index: Int) -> String { Dataset.guid(0x7E00_0000, index) }
    static func daemon(_ index: Int) -> String { Dataset.guid(0xDA00_0000, index) }
    static func api(_ index: Int) -> String { Dataset.guid(0xA900_0000, index) }
    static func secret(_ index: Int) -> String { "scale-secret-\(index)" }
    static let adminClient = "ad000000-0000-4000-8000-000000000000"
    static let adminSecret = "scale-admin-secret"
    static let resource = "api://scale-mail"

    static func build(at root: URL, tenants: Int, users: Int, policies: Int) async throws {
        let fm = FileManager.default
        try? fm.removeItem(at: root)
        let config = root.appendingPathComponent("Config")
        try fm.createDirectory(at: config, withIntermediateDirectories: true)
        // The store is never empty, so the server seeds nothing from here.
        try Data(#"{"tenants": []}"#.utf8).write(to: config.appendingPathComponent("directory.json"))
        let keys = root.appendingPathComponent("Keys")
        let credentials = try CredentialHasher.loadOrCreate(file: keys.appendingPathComponent("credential-pepper.key"))
        var logger = Logger(label: "scale-dataset")
        logger.logLevel = .error
        let store = try await SQLiteStore.open(
            .init(path: root.appendingPathComponent("data/portcullis.sqlite").path, synchronous: "NORMAL", deadline: .seconds(600)), logger: logger)
        try await store.migrate()
        let passwordHash = "$2b$04$abcdefghijklmnopqrstuu5xZr5N8Lq2lqkV6z4Cq2pJ3H9wW3v9S"  // never checked: no password grant in this scenario
        let now = Date()
        var lines: [String] = []
        var rng = SeededGenerator(seed: 26)
        var batch: [StoredDocument] = []
        // Stored as the server stores them (`TenantDocuments.encoder`).
        func add(_ tenant: String, _ document: some TenantDocument) throws {
            batch.append(try StoredDocument(tenantId: TenantID(tenant), document: document, updatedAt: now))
        }
        for t in 0..<tenants {
            let tid = tenantId(t)
            try add(tid, Tenant(id: TenantID(tid), domain: "t\(t).scale.example", displayName: "Tenant \(t)"))
            var groupMembers = Array(repeating: [ObjectID](), count: 10)
            var tenantUsers: [User] = []
            for u in 0..<users {
                let uid = Dataset.guid(0xB000_0000 + UInt32(t), u)
                let user = User(id: ObjectID(uid), userPrincipalName: "u\(u)@t\(t).scale.example", displayName: "User \(u)", passwordHash: passwordHash)
                tenantUsers.append(user)
                try add(tid, user)
                groupMembers[u % 10].append(ObjectID(uid))
            }
            var tenantGroups: [Group] = []
            for (g, members) in groupMembers.enumerated() {
                let group = Group(id: ObjectID(Dataset.guid(0xC000_0000 + UInt32(t), g)), displayName: "Group \(g)", members: members)
                tenantGroups.append(group)
                try add(tid, group)
            }
            let apiApp = Application(
                appId: AppID(api(t)), displayName: "Scale mail API", identifierUris: [resource], scopes: ["Mail.Read"], appRoles: ["Mail.ReadAll"])
            let daemonApp = Application(
                appId: AppID(daemon(t)), displayName: "Scale daemon", secrets: [ClientSecret(secretHash: credentials.hashSecret(secret(t)))],
                allowedGrantTypes: [GrantType.clientCredentials.rawValue],
                requiredResourceAccess: [RequiredResourceAccess(resourceAppId: resource, appRoles: ["Mail.ReadAll"])])
            try add(tid, apiApp)
            try add(tid, daemonApp)
            var grants = [AppRoleAssignment(principalId: PrincipalID(daemonApp.appId), resource: resource, role: "Mail.ReadAll")]
            if t == 0 {
                let admin = Application(
                    appId: AppID(adminClient), displayName: "Scale admin", secrets: [ClientSecret(secretHash: credentials.hashSecret(adminSecret))],
                    allowedGrantTypes: [GrantType.clientCredentials.rawValue])
                try add(tid, admin)
                grants.append(
                    AppRoleAssignment(principalId: PrincipalID(adminClient), resource: BuiltInResources.adminIdentifier, role: BuiltInResources.adminRole))
            }
            let directory = DirectorySnapshot(
                tenant: Tenant(id: TenantID(tid), domain: "t\(t).scale.example", displayName: ""), revision: 0, users: tenantUsers,
                groups: tenantGroups, applications: [apiApp, daemonApp], appRoleAssignments: [], namedLocations: [])
            for grant in grants { try add(tid, RoleAssignmentDocument(grant, in: directory)) }
            for p in 0..<policies {
                let someUsers = (0..<Int.random(in: 1...5, using: &rng)).map { _ in
                    Dataset.guid(0xB000_0000 + UInt32(t), Int.random(in: 0..<max(1, users), using: &rng))
                }
                let policy: [String: Any] = [
                    "id": Dataset.guid(0xE000_0000 + UInt32(t), p), "displayName": "Report-only \(p)", "state": "enabledForReportingButNotEnforced",
                    "conditions": [
                        "users": [
                            "includeUsers": p % 3 == 0 ? ["All"] : someUsers, "excludeUsers": [],
                            "includeGroups": p % 2 == 0 ? [Dataset.guid(0xC000_0000 + UInt32(t), p % 10)] : [], "excludeGroups": [],
                        ],
                        "applications": ["includeApplications": [apiApp.appId], "excludeApplications": []],
                        "clientAppTypes": ["all"],
                    ],
                    "grantControls": ["operator": "OR", "builtInControls": [p % 4 == 0 ? "block" : "mfa"]],
                ]
                let value = try JSONSerialization.data(withJSONObject: policy, options: [.sortedKeys])
                // The stored form is what the server itself writes: parsed the way an admin write would be.
                let parsed = try ConditionalAccessPolicy.parse(try requireJSON(value), directory: directory, generatedId: "", force: true)
                try add(tid, parsed)
            }
            lines.append("\(tid) \(daemon(t)) \(secret(t))")
            if batch.count >= 50_000 {
                try await store.seed(batch)
                batch.removeAll(keepingCapacity: true)
            }
        }
        try await store.seed(batch)
        try await store.close()
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: root.appendingPathComponent("tenants.txt"))
    }

    static func requireJSON(_ data: Data) throws -> JSONValue {
        guard let value = JSONValue.parse(data) else { throw CocoaError(.coderReadCorrupt) }
        return value
    }
}
