import Foundation
import Logging
import PortcullisCore
import PortcullisStorage
import Synchronization

/// Every tenant's `DirectorySnapshot`, built from the store and kept until a write invalidates it. Writes
/// through this node invalidate at once; other nodes' writes arrive through `invalidate()` as well (the
/// PostgreSQL store's notifications), so no node answers from a stale directory.
public final class DirectoryCache: Sendable {
    private struct State {
        var generation: Int = 0
        var snapshots: [String: DirectorySnapshot]? = nil
    }

    private let store: any DocumentStore
    private let state = Mutex(State())
    private let logger: Logger

    public init(store: any DocumentStore, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    /// Forgets every snapshot; the next lookup rebuilds from the store.
    public func invalidate() {
        state.withLock {
            $0.generation += 1
            $0.snapshots = nil
        }
    }

    /// The snapshot of the tenant a path segment (tenant ID or domain) names, or `nil` when none does.
    public func snapshot(tenantSegment: String) async throws -> DirectorySnapshot? {
        try await snapshots()[tenantSegment.lowercased()]
    }

    /// Every tenant's snapshot, keyed by tenant ID and by domain.
    public func snapshots() async throws -> [String: DirectorySnapshot] {
        let (cached, generation) = state.withLock { ($0.snapshots, $0.generation) }
        if let cached { return cached }
        let revision = try await store.revision()
        var built: [String: DirectorySnapshot] = [:]
        for tenantId in try await store.tenantIds() {
            guard let snapshot = try await Self.load(tenantId: tenantId, revision: revision, from: store) else { continue }
            built[snapshot.tenant.id] = snapshot
            built[snapshot.tenant.domain] = snapshot
        }
        state.withLock {
            if $0.generation == generation { $0.snapshots = built }
        }
        return built
    }

    static let decoder = JSONDecoder()

    static func load(tenantId: String, revision: Int64, from store: any DocumentStore) async throws -> DirectorySnapshot? {
        guard let tenantDocument = try await store.document(tenantId: tenantId, kind: .tenant, id: tenantId) else { return nil }
        func all<T: Decodable>(_ kind: DocumentKind, as type: T.Type) async throws -> [T] {
            try await store.documents(tenantId: tenantId, kind: kind).map { document in
                do {
                    return try decoder.decode(T.self, from: document.body)
                } catch {
                    throw StorageError(.corrupt, "stored \(kind.rawValue) \(document.id) cannot be read", underlying: error)
                }
            }
        }
        let tenant = try decoder.decode(Tenant.self, from: tenantDocument.body)
        return DirectorySnapshot(
            tenant: tenant, revision: revision,
            users: try await all(.user, as: User.self),
            groups: try await all(.group, as: Group.self),
            applications: try await all(.application, as: Application.self),
            appRoleAssignments: try await all(.appRoleAssignment, as: AppRoleAssignment.self),
            namedLocations: try await all(.namedLocation, as: NamedLocation.self))
    }
}
