import Foundation
import Logging
import PortcullisAPI
import PortcullisCore
import PortcullisSQLite
import PortcullisServer
import PortcullisStorage
import PortcullisTesting
import PortcullisTokens
import SQLiteNIO

/// Builds a realistic benchmark deployment in a directory: `Config/` (1 tenant, N users in 200 groups,
/// 100 applications, P conditional-access policies, an app protection policy), `Keys/`, and a seeded
/// SQLite store with E enrollments and ready-made refresh tokens for the refresh scenarios.
enum Dataset {
    static let tenantId = "b0000000-0000-4000-8000-000000000000"
    static let domain = "bench.example"
    static let mobileClient = "c0000000-0000-4000-8000-000000000000"
    static let daemonClient = "c0000000-0000-4000-8000-000000000001"
    static let mailApi = "c0000000-0000-4000-8000-000000000002"
    static let daemonSecret = "bench-daemon-secret"
    static let mailApiSecret = "bench-mail-api-secret"
    static let appProtectionPolicyId = "a0000000-0000-4000-8000-000000000000"

    static func guid(_ prefix: UInt32, _ n: Int) -> String { String(format: "%08x-0000-4000-8000-%012x", prefix, n) }

    struct Options {
        var users = 10_000
        var applications = 100
        var policies = 1_000
        var enrollments = 100_000
        var refreshTokens = 256
    }

    static func build(at root: URL, options: Options) async throws {
        let fm = FileManager.default
        try? fm.removeItem(at: root)
        let config = root.appendingPathComponent("Config")
        try fm.createDirectory(at: config.appendingPathComponent("conditional-access"), withIntermediateDirectories: true)
        try fm.createDirectory(at: config.appendingPathComponent("app-protection"), withIntermediateDirectories: true)
        var rng = SeededGenerator(seed: 7)

        // Directory: one shared bcrypt hash for every user ("bench-password"); passwords are not on the measured paths.
        let passwords = try await PasswordHasher(cost: 4)
        let passwordHash = try await passwords.hash("bench-password")
        let groups = 200
        var members = Array(repeating: [String](), count: groups)
        var users: [[String: Any]] = []
        for index in 0..<options.users {
            let id = guid(0xA, index)
            users.append(["id": id, "userPrincipalName": "user\(index)@\(domain)", "displayName": "User \(index)", "passwordHash": passwordHash])
            for _ in 0..<Int.random(in: 1...3, using: &rng) { members[Int.random(in: 0..<groups, using: &rng)].append(id) }
        }
        var applications: [[String: Any]] = [
            [
                "appId": mobileClient, "displayName": "Bench mobile", "publicClient": true, "allowedGrantTypes": ["password", "refresh_token"],
                "approvedClientApp": true,
                "requiredResourceAccess": [["resourceAppId": "api://bench-mail", "scopes": ["Mail.Read"]]],
            ],
            ["appId": daemonClient, "displayName": "Bench daemon", "secrets": [["secret": daemonSecret]], "allowedGrantTypes": ["client_credentials"]],
            [
                "appId": mailApi, "displayName": "Bench mail API", "identifierUris": ["api://bench-mail"], "scopes": ["Mail.Read"],
                "appRoles": ["Mail.ReadAll"],
                "secrets": [["secret": mailApiSecret]], "allowedGrantTypes": ["client_credentials"],
            ],
        ]
        for index in 3..<max(3, options.applications) {
            applications.append(["appId": guid(0xC, index), "displayName": "App \(index)", "identifierUris": ["api://app\(index)"], "scopes": ["Read"]])
        }
        let directory: [String: Any] = [
            "tenants": [
                [
                    "id": tenantId, "domain": domain, "displayName": "Bench",
                    "users": users,
                    "groups": (0..<groups).map { ["id": guid(0xB, $0), "displayName": "Group \($0)", "members": members[$0]] },
                    "applications": applications,
                    "appRoleAssignments": [["principalId": daemonClient, "resource": "api://bench-mail", "role": "Mail.ReadAll"]],
                    "namedLocations": (0..<20).map {
                        ["id": guid(0xE, $0), "displayName": "Site \($0)", "ipRanges": ["10.\($0).0.0/16"], "isTrusted": $0 < 5]
                    },
                ]
            ]
        ]
        try JSONSerialization.data(withJSONObject: directory).write(to: config.appendingPathComponent("directory.json"))

        // Conditional access: app protection for the mail API on iOS/Android, plus P−1 realistic policies on the other apps.
        func write(_ document: [String: Any], _ name: String) throws {
            try JSONSerialization.data(withJSONObject: document).write(to: config.appendingPathComponent("conditional-access/\(name).json"))
        }
        try write(
            [
                "id": guid(0xD, 0), "displayName": "App protection for mail on mobile", "state": "enabled",
                "conditions": [
                    "users": ["includeUsers": ["All"]], "applications": ["includeApplications": [mailApi]],
                    "platforms": ["includePlatforms": ["iOS", "android"]],
                ],
                "grantControls": ["operator": "OR", "builtInControls": ["compliantApplication"]],
            ], "p0")
        for n in 1..<max(1, options.policies) {
            let shape = Int.random(in: 0..<10, using: &rng)
            var userCondition: [String: Any] = [:]
            switch shape {
            case 0...1: userCondition = ["includeUsers": ["All"], "excludeGroups": [guid(0xB, Int.random(in: 0..<groups, using: &rng))]]
            case 2...5:
                userCondition = ["includeGroups": (0..<Int.random(in: 1...3, using: &rng)).map { _ in guid(0xB, Int.random(in: 0..<groups, using: &rng)) }]
            default:
                userCondition = [
                    "includeUsers": (0..<Int.random(in: 1...10, using: &rng)).map { _ in guid(0xA, Int.random(in: 0..<options.users, using: &rng)) }
                ]
            }
            let apps = (0..<Int.random(in: 1...3, using: &rng)).map { _ in guid(0xC, Int.random(in: 3..<max(4, options.applications), using: &rng)) }
            var conditions: [String: Any] = ["users": userCondition, "applications": ["includeApplications": apps]]
            if Int.random(in: 0..<3, using: &rng) == 0 { conditions["platforms"] = ["includePlatforms": ["iOS", "android"]] }
            if Int.random(in: 0..<4, using: &rng) == 0 { conditions["locations"] = ["includeLocations": ["All"], "excludeLocations": ["AllTrusted"]] }
            let controls = [["compliantApplication"], ["mfa"], ["approvedApplication", "compliantApplication"], ["block"]][Int.random(in: 0..<4, using: &rng)]
            try write(
                [
                    "id": guid(0xD, n), "displayName": "Policy \(n)",
                    "state": ["enabled", "enabled", "enabledForReportingButNotEnforced", "disabled"][Int.random(in: 0..<4, using: &rng)],
                    "conditions": conditions, "grantControls": ["operator": "OR", "builtInControls": controls],
                ], "p\(n)")
        }
        try JSONSerialization.data(withJSONObject: [
            "id": appProtectionPolicyId, "displayName": "Bench mobile", "targets": ["applications": [mobileClient], "includeGroups": ["All"]],
            "settings": ["pinRequired": true, "offlineGracePeriodMinutes": 43200],
        ]).write(to: config.appendingPathComponent("app-protection/bench.json"))

        // Seed the store the way the server does, then add enrollments and refresh tokens.
        var logger = Logger(label: "bench-dataset")
        logger.logLevel = .error
        let keys = root.appendingPathComponent("Keys")
        let credentials = try CredentialHasher.loadOrCreate(file: keys.appendingPathComponent("credential-pepper.key"))
        let path = root.appendingPathComponent("data/portcullis.sqlite").path
        let store = try await SQLiteStore.open(.init(path: path, synchronous: "NORMAL"), logger: logger)
        try await store.migrate()
        try await Seeder(store: store, passwords: passwords, credentials: credentials, clock: SystemWallClock(), logger: logger)
            .seedIfEmpty(configDirectory: config)
        let policy = try require(try await TenantCacheLoader.mergedPolicy(store: store))

        // Refresh tokens: the first `refreshTokens` users have a compliant enrollment (the success scenario);
        // the next `refreshTokens` have none (the 53005 refusal scenario).
        let now = Date()
        var success: [String] = []
        var refused: [String] = []
        for index in 0..<(options.refreshTokens * 2) {
            let token = CredentialHasher.randomToken()
            try await store.insert(
                RefreshTokenRecord(
                    tokenHash: CredentialHasher.hashToken(token), familyId: UUID().uuidString.lowercased(), tenantId: TenantID(tenantId),
                    userId: ObjectID(guid(0xA, index)),
                    clientId: AppID(mobileClient), scope: "api://bench-mail/Mail.Read openid profile offline_access", issuedAt: now,
                    expiresAt: now.addingTimeInterval(86400 * 30)))
            if index < options.refreshTokens { success.append(token) } else { refused.append(token) }
        }
        try (success.joined(separator: "\n") + "\n").write(to: root.appendingPathComponent("refresh-success.txt"), atomically: true, encoding: .utf8)
        try (refused.joined(separator: "\n") + "\n").write(to: root.appendingPathComponent("refresh-refused.txt"), atomically: true, encoding: .utf8)
        try await store.close()

        // Enrollments in bulk: one app instance per enrollment; the refresh-success users' first one compliant.
        try await bulkEnrollments(
            path: path, count: options.enrollments, users: options.users, compliantUsers: options.refreshTokens,
            refusedUsers: options.refreshTokens..<(options.refreshTokens * 2), policyVersion: policy.version, now: now, logger: logger)
    }

    /// Writes enrollments straight into the SQLite file in large transactions (the store API commits one by one).
    static func bulkEnrollments(
        path: String, count: Int, users: Int, compliantUsers: Int, refusedUsers: Range<Int>, policyVersion: String, now: Date, logger: Logger
    ) async throws {
        let connection = try await SQLiteConnection.open(storage: .file(path: path), logger: logger)
        var index = 0
        while index < count {
            _ = try await connection.query("BEGIN")
            for _ in 0..<min(10_000, count - index) {
                let userIndex = index % users
                if refusedUsers.contains(userIndex) {
                    index += 1
                    continue
                }
                let compliant = userIndex < compliantUsers && index < users
                let enrollment = Enrollment(
                    id: RecordID(guid(0xF, index)), tenantId: TenantID(tenantId), userId: ObjectID(guid(0xA, userIndex)),
                    userPrincipalName: "user\(userIndex)@\(domain)",
                    clientId: AppID(mobileClient), deviceId: DeviceID("device-\(index)"), platform: .iOS, osVersion: "17.4", appVersion: "3.1", sdkVersion: "1",
                    state: compliant ? .compliant : .pending, complianceStatus: compliant ? .compliant : .policyNotApplied, policyVersion: policyVersion,
                    appliedPolicyVersion: compliant ? policyVersion : nil, callbackUri: nil, enrolledAt: now, lastCheckInAt: compliant ? now : nil,
                    lapsesAt: compliant ? now.addingTimeInterval(86400 * 30) : nil, updatedAt: now, revision: 1)
                _ = try await connection.query(
                    "INSERT INTO enrollments (id, tenant_id, user_id, client_id, device_id, state, lapses_at, updated_at, revision, document) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, ?)",
                    [
                        .text(enrollment.id.rawValue), .text(tenantId), .text(enrollment.userId.rawValue), .text(mobileClient),
                        .text(enrollment.deviceId.rawValue),
                        .text(enrollment.state.rawValue), enrollment.lapsesAt.map { .float($0.timeIntervalSince1970) } ?? .null,
                        .float(now.timeIntervalSince1970), .text(try StoredJSON.text(of: enrollment)),
                    ])
                index += 1
            }
            _ = try await connection.query("COMMIT")
        }
        try await connection.close()
    }
}

/// Reads the merged app protection policy the bench users get.
enum TenantCacheLoader {
    static func mergedPolicy(store: SQLiteStore) async throws -> MergedAppProtectionPolicy? {
        let documents = try await store.documents(tenantId: TenantID(Dataset.tenantId), kind: .appProtectionPolicy)
        let policies = try documents.map { try JSONDecoder().decode(AppProtectionPolicy.self, from: $0.body) }
        return MergedAppProtectionPolicy.resolve(policies, userId: ObjectID(Dataset.guid(0xA, 0)), groupIds: [], clientId: AppID(Dataset.mobileClient))
    }
}

struct RequireError: Error {}
func require<T>(_ value: T?) throws -> T {
    guard let value else { throw RequireError() }
    return value
}
