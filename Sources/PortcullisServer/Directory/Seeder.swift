public import Foundation
public import Logging
public import PortcullisCore
public import PortcullisStorage
public import PortcullisTokens

/// Seeds an empty store from the configuration directory (PROTOCOL §6): `directory.json` and, as the
/// other areas land, their policy folders. After the first start the store is the source of truth.
public struct Seeder: Sendable {
    let store: any PortcullisStore
    let passwords: PasswordHasher
    let credentials: CredentialHasher
    let clock: any WallClock
    let logger: Logger
    /// Whether `password` / `secret` values in plain text may be seeded. The CLI allows them only on a
    /// loopback listener or with `PORTCULLIS_DEMO=1`: anyone who read the README knows the demo's.
    let plaintextCredentialsAllowed: Bool

    public init(
        store: any PortcullisStore, passwords: PasswordHasher, credentials: CredentialHasher, clock: any WallClock, logger: Logger,
        plaintextCredentialsAllowed: Bool = true
    ) {
        self.plaintextCredentialsAllowed = plaintextCredentialsAllowed
        self.store = store
        self.passwords = passwords
        self.credentials = credentials
        self.clock = clock
        self.logger = logger
    }

    public struct SeedError: Error, CustomStringConvertible {
        public let file: String
        public let problems: [ValidationProblem]
        public var description: String {
            problems.map { problem in
                // Problems gathered from several files already carry "file:pointer".
                problem.pointer.contains(".json:")
                    ? "\(problem.pointer): \(problem.message)" : "\(file):\(problem.pointer.isEmpty ? "/" : problem.pointer): \(problem.message)"
            }.joined(separator: "\n")
        }
    }

    /// Seeds when the store holds no tenant. Everything is validated before anything is written, and
    /// written in one transaction. Returns whether it seeded.
    @discardableResult
    public func seedIfEmpty(configDirectory: URL) async throws -> Bool {
        guard try await store.tenantIds().isEmpty else {
            try await rekeyRoleAssignments()
            return false
        }
        let file = configDirectory.appendingPathComponent("directory.json")
        guard let data = try? Data(contentsOf: file) else {
            logger.warning("no directory to seed from", metadata: ["portcullis.file": .string(file.path)])
            return false
        }
        let document: DirectoryDocument
        do {
            document = try DirectoryDocument.parse(data)
        } catch {
            throw SeedError(file: file.path, problems: error.problems)
        }
        if !plaintextCredentialsAllowed {
            let passwords = document.tenants.reduce(0) { $0 + $1.users.filter { $0.plaintextPassword != nil }.count }
            let secrets = document.tenants.reduce(0) { $0 + $1.applications.reduce(0) { $0 + $1.plaintextSecrets.count } }
            if passwords + secrets > 0 {
                throw SeedError(
                    file: file.path,
                    problems: [
                        ValidationProblem(
                            pointer: "",
                            message: """
                                holds \(passwords) plaintext password(s) and \(secrets) plaintext secret(s), development credentials that anyone who \
                                read the README may know. They are seeded only when the server listens on loopback, or when the operator asks \
                                for the demo with PORTCULLIS_DEMO=1. Otherwise give passwordHash/secretHash values (or start with an empty directory).
                                """)
                    ])
            }
        }
        var documents = try await documents(for: document)
        let snapshots = document.snapshots(revision: 0)
        // What policies may name comes first: custom authentication strengths and authentication contexts, per tenant.
        var strengths: [TenantID: [AuthenticationStrengthPolicy]] = [:]
        let strengthDocuments = try PolicyFiles.load(
            directory: configDirectory.appendingPathComponent("authentication-strengths"), tenants: snapshots, now: clock.now()
        ) { value, directory throws(ValidationError) in
            let strength = try AuthenticationStrengthPolicy.parse(
                value, others: strengths[directory.tenant.id] ?? [], generatedId: PolicyID.generate())
            strengths[directory.tenant.id, default: []].append(strength)
            return strength
        }
        var contexts: [TenantID: [AuthenticationContextClassReference]] = [:]
        let contextDocuments = try PolicyFiles.load(
            directory: configDirectory.appendingPathComponent("authentication-contexts"), tenants: snapshots, now: clock.now()
        ) { value, directory throws(ValidationError) in
            let context = try AuthenticationContextClassReference.parse(value, others: contexts[directory.tenant.id] ?? [])
            contexts[directory.tenant.id, default: []].append(context)
            return context
        }
        let conditionalAccess = try PolicyFiles.load(
            directory: configDirectory.appendingPathComponent("conditional-access"), tenants: snapshots, now: clock.now()
        ) { value, directory throws(ValidationError) in
            try ConditionalAccessPolicy.parse(
                value, directory: directory, strengths: strengths[directory.tenant.id] ?? [], contexts: contexts[directory.tenant.id] ?? [],
                generatedId: PolicyID.generate())
        }
        let appProtection = try PolicyFiles.load(
            directory: configDirectory.appendingPathComponent("app-protection"), tenants: snapshots, now: clock.now()
        ) { value, directory throws(ValidationError) in
            try AppProtectionPolicy.parse(value, directory: directory, generatedId: PolicyID.generate())
        }
        // App configuration policies are checked against each other too (equal priorities on one app are refused).
        var configurationPolicies: [TenantID: [AppConfigurationPolicy]] = [:]
        let appConfiguration = try PolicyFiles.load(
            directory: configDirectory.appendingPathComponent("app-configuration"), tenants: snapshots, now: clock.now()
        ) { value, directory throws(ValidationError) in
            let policy = try AppConfigurationPolicy.parse(
                value, directory: directory, others: configurationPolicies[directory.tenant.id] ?? [], generatedId: PolicyID.generate())
            configurationPolicies[directory.tenant.id, default: []].append(policy)
            return policy
        }
        let deviceCompliance = try PolicyFiles.load(
            directory: configDirectory.appendingPathComponent("device-compliance"), tenants: snapshots, now: clock.now()
        ) { value, _ throws(ValidationError) in
            try DeviceCompliancePolicy.parse(value, generatedId: PolicyID.generate())
        }
        // Devices need the running server's issuing CA for their certificates: `portcullis apply` creates them.
        if !PolicyFiles.list(directory: configDirectory.appendingPathComponent("devices")).isEmpty {
            logger.notice("devices/ is not seeded (a device's certificate comes from the running server's CA): `portcullis apply` creates them")
        }
        documents += strengthDocuments + contextDocuments + conditionalAccess + appProtection + appConfiguration + deviceCompliance
        try await StoreDeadline.forMaintenance { try await store.seed(documents) }
        logger.info(
            "seeded the store",
            metadata: [
                "portcullis.tenants": .stringConvertible(document.tenants.count),
                "portcullis.conditional_access_policies": .stringConvertible(conditionalAccess.count),
                "portcullis.app_protection_policies": .stringConvertible(appProtection.count),
                "portcullis.app_configuration_policies": .stringConvertible(appConfiguration.count),
                "portcullis.device_compliance_policies": .stringConvertible(deviceCompliance.count),
            ])
        return true
    }

    /// The stored documents of a directory, with plaintext passwords and secrets hashed.
    func documents(for document: DirectoryDocument) async throws -> [StoredDocument] {
        let now = clock.now()
        var documents: [StoredDocument] = []
        func add(_ tenantId: TenantID, _ document: some TenantDocument) throws {
            documents.append(try StoredDocument(tenantId: tenantId, document: document, updatedAt: now))
        }
        for entry in document.tenants {
            let tid = entry.tenant.id
            try add(tid, entry.tenant)
            var plaintextPasswords = 0
            for userEntry in entry.users {
                var user = userEntry.user
                if let password = userEntry.plaintextPassword {
                    user.passwordHash = try await passwords.hash(password)
                    plaintextPasswords += 1
                }
                try add(tid, user)
            }
            var plaintextSecrets = 0
            for appEntry in entry.applications {
                var app: Application
                do {
                    app = try ApplicationSecrets.resolve(appEntry, stored: nil, hash: credentials.hashSecret, now: now)
                    app.keyCredentials = try ApplicationSecrets.resolveCertificates(appEntry, stored: nil) {
                        KeyCredential.reading($0, keyId: RecordID.generate(), displayName: $1)
                    }
                } catch {
                    throw SeedError(file: "directory.json", problems: error.problems)
                }
                plaintextSecrets += appEntry.plaintextSecrets.count
                try add(tid, app)
            }
            if plaintextPasswords + plaintextSecrets > 0 {
                logger.warning(
                    "the directory holds plaintext credentials; they were hashed on import. Use passwordHash/secretHash outside development.",
                    metadata: [
                        LogKeys.tenantId: .string(tid.rawValue), "portcullis.passwords": .stringConvertible(plaintextPasswords),
                        "portcullis.secrets": .stringConvertible(plaintextSecrets),
                    ])
            }
            for group in entry.groups { try add(tid, group) }
            let directory = DirectorySnapshot(
                tenant: entry.tenant, revision: 0, users: [], groups: [], applications: entry.applications.map(\.application),
                appRoleAssignments: [], namedLocations: [])
            for assignment in entry.appRoleAssignments {
                let stored = RoleAssignmentDocument(assignment, in: directory)
                if !documents.contains(where: { $0.kind == .appRoleAssignment && $0.tenantId == tid.rawValue && $0.id == stored.id }) {
                    try add(tid, stored)
                }
            }
            for location in entry.namedLocations { try add(tid, location) }
            for assignment in entry.roleAssignments { try add(tid, assignment) }
        }
        return documents
    }
}

extension Seeder {
    /// Stores seeded before role assignments had GUIDs named them `principal|resource|role|index`, which no URL
    /// path can carry; at start-up each is stored again under its GUID (`RoleAssignmentDocument`) and the old
    /// one removed. Interrupted, the next start finishes it.
    func rekeyRoleAssignments() async throws {
        for tenantId in try await store.tenantIds().map({ TenantID($0) }) {
            let legacy = try await store.documents(tenantId: tenantId, kind: .appRoleAssignment).filter { !$0.id.isGUID }
            guard !legacy.isEmpty else { continue }
            guard let snapshot = try await TenantCache.load(tenantId: tenantId.rawValue, from: store) else { continue }
            for document in legacy {
                let assignment = try JSONDecoder().decode(AppRoleAssignment.self, from: document.body)
                let stored = RoleAssignmentDocument(assignment, in: snapshot.directory)
                if try await store.document(tenantId: tenantId, kind: .appRoleAssignment, id: stored.id) == nil {
                    let body = try TenantDocuments.encoder.encode(stored)
                    _ = try await store.put(
                        tenantId: tenantId, kind: .appRoleAssignment, id: stored.id, body: body, precondition: .mustNotExist, at: clock.now(), audit: nil)
                }
                try await store.delete(tenantId: tenantId, kind: .appRoleAssignment, id: document.id, precondition: .none, audit: nil)
            }
            logger.notice(
                "role assignments stored under GUIDs",
                metadata: [LogKeys.tenantId: .string(tenantId.rawValue), "portcullis.count": .stringConvertible(legacy.count)])
        }
    }
}

/// Conditional-access policy files (`Config/conditional-access`): `*.json` at the top level belong to the
/// only tenant of the directory; with several tenants, put them in a subfolder named by tenant ID or domain.
public enum PolicyFiles {
    /// Every `.json` file under `directory`, with the tenant it belongs to (`nil` for top-level files).
    public static func list(directory: URL) -> [(file: URL, tenantSegment: String?)] {
        let fm = FileManager.default
        guard let entries = try? fm.contentsOfDirectory(at: directory, includingPropertiesForKeys: [.isDirectoryKey]) else { return [] }
        var result: [(URL, String?)] = []
        for entry in entries.sorted(by: { $0.lastPathComponent < $1.lastPathComponent }) {
            if (try? entry.resourceValues(forKeys: [.isDirectoryKey]).isDirectory) == true {
                let files = ((try? fm.contentsOfDirectory(at: entry, includingPropertiesForKeys: nil)) ?? [])
                    .filter { $0.pathExtension == "json" }.sorted { $0.lastPathComponent < $1.lastPathComponent }
                result += files.map { ($0, entry.lastPathComponent) }
            } else if entry.pathExtension == "json" {
                result.append((entry, nil))
            }
        }
        return result
    }

    /// Parses and validates every policy file of one kind against its tenant's directory; throws every
    /// problem of every file. Returns the documents to store.
    public static func load<Document: TenantDocument>(
        directory: URL, tenants: [DirectorySnapshot], now: Date,
        parse: (JSONValue, DirectorySnapshot) throws(ValidationError) -> Document
    ) throws -> [StoredDocument] {
        var documents: [StoredDocument] = []
        var problems: [Seeder.SeedError] = []
        var ids = Set<String>()
        for (file, segment) in list(directory: directory) {
            let tenant: DirectorySnapshot?
            if let segment {
                tenant = tenants.first { $0.matches(tenantSegment: segment) }
            } else {
                tenant = tenants.count == 1 ? tenants.first : nil
            }
            guard let tenant else {
                problems.append(
                    Seeder.SeedError(
                        file: file.path,
                        problems: [
                            ValidationProblem(
                                pointer: "",
                                message: segment == nil
                                    ? "with several tenants, put policy files in a folder named by tenant ID or domain."
                                    : "the folder '\(segment!)' names no tenant of the directory.")
                        ]))
                continue
            }
            guard let data = try? Data(contentsOf: file), let value = JSONValue.parse(data) else {
                problems.append(Seeder.SeedError(file: file.path, problems: [ValidationProblem(pointer: "", message: "is not valid JSON.")]))
                continue
            }
            do {
                let document = try parse(value, tenant)
                if !ids.insert("\(tenant.tenant.id)/\(document.documentId)").inserted {
                    problems.append(
                        Seeder.SeedError(file: file.path, problems: [ValidationProblem(pointer: "/id", message: "another file has the same policy ID.")]))
                }
                documents.append(try StoredDocument(tenantId: tenant.tenant.id, document: document, updatedAt: now))
            } catch let error as ValidationError {
                problems.append(Seeder.SeedError(file: file.path, problems: error.problems))
            }
        }
        if !problems.isEmpty {
            throw Seeder.SeedError(
                file: directory.path,
                problems: problems.flatMap { error in
                    error.problems.map { ValidationProblem(pointer: "\(error.file):\($0.pointer)", message: $0.message) }
                })
        }
        return documents
    }
}
