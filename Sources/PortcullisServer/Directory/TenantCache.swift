import Foundation
import Logging
import PortcullisCore
import PortcullisStorage
import Synchronization

/// Every tenant's `TenantSnapshot` (directory + compiled conditional-access policies), built from the store
/// and kept until a write invalidates it. Writes through this node invalidate at once; other nodes' writes
/// arrive through `invalidate()` as well, so no node answers from a stale directory or policy set.
public final class TenantCache: Sendable {
    /// How the cache learns that the store changed.
    public enum Validation: Sendable {
        /// Only this node writes (the embedded store): its own writes invalidate.
        case onWrite
        /// Other nodes write too (PostgreSQL): every lookup compares the store-wide revision, one indexed
        /// single-row read, so a change made through any node is seen by the very next request.
        case everyRequest
    }

    private struct State {
        var generation: Int = 0
        var revision: Int64 = -1
        var snapshots: [String: TenantSnapshot]? = nil
        /// A build in progress: later callers wait for it instead of building too (single flight).
        var building = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let store: any DocumentStore
    private let state = Mutex(State())
    private let logger: Logger
    private let validation: Validation

    public init(store: any DocumentStore, validation: Validation = .onWrite, logger: Logger) {
        self.store = store
        self.validation = validation
        self.logger = logger
    }

    /// Long polls that follow what the snapshots hold (app configuration): woken by every invalidation here.
    public let changes = ChangeBroadcast()

    /// Forgets every snapshot; the next lookup rebuilds from the store.
    public func invalidate() {
        state.withLock {
            $0.generation += 1
            $0.snapshots = nil
        }
        changes.signal()
    }

    /// The snapshot of the tenant a path segment (tenant ID or domain) names, or `nil` when none does.
    public func snapshot(tenantSegment: String) async throws -> TenantSnapshot? {
        try await snapshots()[tenantSegment.lowercased()]
    }

    /// Every tenant's snapshot, keyed by tenant ID and by domain.
    public func snapshots() async throws -> [String: TenantSnapshot] {
        while true {
            let (cached, generation, cachedRevision) = state.withLock { ($0.snapshots, $0.generation, $0.revision) }
            var current: Int64?
            if validation == .everyRequest { current = try await store.revision() }
            if let cached, current == nil || current == cachedRevision { return cached }
            // One build at a time: a burst of requests after a change must not build the same snapshot N times.
            let mustWait = state.withLock { state -> Bool in
                if state.building { return true }
                state.building = true
                return false
            }
            if mustWait {
                await withCheckedContinuation { continuation in
                    let stillBuilding = state.withLock { state -> Bool in
                        if state.building { state.waiters.append(continuation) }
                        return state.building
                    }
                    if !stillBuilding { continuation.resume() }
                }
                continue
            }
            do {
                let built = try await build(revision: current)
                let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                    if state.generation == generation {
                        state.snapshots = built.snapshots
                        state.revision = built.revision
                    }
                    state.building = false
                    defer { state.waiters = [] }
                    return state.waiters
                }
                for waiter in waiters { waiter.resume() }
                return built.snapshots
            } catch {
                let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                    state.building = false
                    defer { state.waiters = [] }
                    return state.waiters
                }
                for waiter in waiters { waiter.resume() }
                throw error
            }
        }
    }

    private func build(revision current: Int64?) async throws -> (snapshots: [String: TenantSnapshot], revision: Int64) {
        let revision: Int64
        if let current { revision = current } else { revision = try await store.revision() }
        var built: [String: TenantSnapshot] = [:]
        for tenantId in try await store.tenantIds() {
            guard let snapshot = try await Self.load(tenantId: tenantId, revision: revision, from: store) else { continue }
            built[snapshot.tenant.id] = snapshot
            built[snapshot.tenant.domain] = snapshot
        }
        return (built, revision)
    }

    static let decoder = JSONDecoder()

    static func decodeAll<T: Decodable>(_ kind: DocumentKind, as type: T.Type, tenantId: String, from store: any DocumentStore) async throws -> [T] {
        try await store.documents(tenantId: tenantId, kind: kind).map { document in
            do {
                return try decoder.decode(T.self, from: document.body)
            } catch {
                throw StorageError(.corrupt, "stored \(kind.rawValue) \(document.id) cannot be read", underlying: error)
            }
        }
    }

    static func load(tenantId: String, revision: Int64, from store: any DocumentStore) async throws -> TenantSnapshot? {
        guard let tenantDocument = try await store.document(tenantId: tenantId, kind: .tenant, id: tenantId) else { return nil }
        let tenant = try decoder.decode(Tenant.self, from: tenantDocument.body)
        let locations = try await decodeAll(.namedLocation, as: NamedLocation.self, tenantId: tenantId, from: store)
        let directory = DirectorySnapshot(
            tenant: tenant, revision: revision,
            users: try await decodeAll(.user, as: User.self, tenantId: tenantId, from: store),
            groups: try await decodeAll(.group, as: Group.self, tenantId: tenantId, from: store),
            applications: try await decodeAll(.application, as: Application.self, tenantId: tenantId, from: store),
            appRoleAssignments: try await decodeAll(.appRoleAssignment, as: AppRoleAssignment.self, tenantId: tenantId, from: store),
            namedLocations: locations)
        let policies = try await decodeAll(.conditionalAccessPolicy, as: ConditionalAccessPolicy.self, tenantId: tenantId, from: store)
        let appProtection = try await decodeAll(.appProtectionPolicy, as: AppProtectionPolicy.self, tenantId: tenantId, from: store)
        let appConfiguration = try await decodeAll(.appConfigurationPolicy, as: AppConfigurationPolicy.self, tenantId: tenantId, from: store)
        let materials = try await decodeAll(.appSecretMaterial, as: StoredSecretMaterial.self, tenantId: tenantId, from: store)
        return TenantSnapshot(
            directory: directory, conditionalAccess: CompiledPolicySet(policies: policies, namedLocations: locations),
            appProtectionPolicies: appProtection, appConfigurationPolicies: appConfiguration, secretMaterials: materials)
    }
}
