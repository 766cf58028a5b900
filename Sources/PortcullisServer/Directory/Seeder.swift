import Foundation
import Logging
import PortcullisCore
import PortcullisStorage
import PortcullisTokens

/// Seeds an empty store from the configuration directory (PROTOCOL §6): `directory.json` and, as the
/// other areas land, their policy folders. After the first start the store is the source of truth.
public struct Seeder: Sendable {
    let store: any PortcullisStore
    let passwords: PasswordHasher
    let credentials: CredentialHasher
    let clock: any WallClock
    let logger: Logger

    public init(store: any PortcullisStore, passwords: PasswordHasher, credentials: CredentialHasher, clock: any WallClock, logger: Logger) {
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
            problems.map { "\(file):\($0.pointer.isEmpty ? "/" : $0.pointer): \($0.message)" }.joined(separator: "\n")
        }
    }

    /// Seeds when the store holds no tenant. Returns whether it seeded.
    @discardableResult
    public func seedIfEmpty(configDirectory: URL) async throws -> Bool {
        guard try await store.tenantIds().isEmpty else { return false }
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
        try await store.seed(try await documents(for: document))
        logger.info("seeded the store", metadata: ["portcullis.tenants": .stringConvertible(document.tenants.count)])
        return true
    }

    /// The stored documents of a directory, with plaintext passwords and secrets hashed.
    func documents(for document: DirectoryDocument) async throws -> [StoredDocument] {
        let now = clock.now()
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        var documents: [StoredDocument] = []
        func add(_ tenantId: String, _ kind: DocumentKind, _ id: String, _ value: some Encodable) throws {
            documents.append(StoredDocument(tenantId: tenantId, kind: kind, id: id, body: try encoder.encode(value), version: 0, updatedAt: now))
        }
        for entry in document.tenants {
            let tid = entry.tenant.id
            try add(tid, .tenant, tid, entry.tenant)
            var plaintextPasswords = 0
            for userEntry in entry.users {
                var user = userEntry.user
                if let password = userEntry.plaintextPassword {
                    user.passwordHash = try await passwords.hash(password)
                    plaintextPasswords += 1
                }
                try add(tid, .user, user.id, user)
            }
            var plaintextSecrets = 0
            for appEntry in entry.applications {
                var app = appEntry.application
                app.secretHashes += appEntry.plaintextSecrets.map(credentials.hashSecret)
                plaintextSecrets += appEntry.plaintextSecrets.count
                try add(tid, .application, app.appId, app)
            }
            if plaintextPasswords + plaintextSecrets > 0 {
                logger.warning("the directory holds plaintext credentials; they were hashed on import. Use passwordHash/secretHash outside development.", metadata: [
                    LogKeys.tenantId: .string(tid), "portcullis.passwords": .stringConvertible(plaintextPasswords),
                    "portcullis.secrets": .stringConvertible(plaintextSecrets),
                ])
            }
            for group in entry.groups { try add(tid, .group, group.id, group) }
            for (index, assignment) in entry.appRoleAssignments.enumerated() {
                try add(tid, .appRoleAssignment, "\(assignment.principalId)|\(assignment.resource.lowercased())|\(assignment.role)|\(index)", assignment)
            }
            for location in entry.namedLocations { try add(tid, .namedLocation, location.id, location) }
        }
        return documents
    }
}
