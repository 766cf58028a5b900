import Foundation
public import Logging
public import PortcullisCore
public import PortcullisStorage
public import ServiceLifecycle
import Synchronization

/// Every tenant's `TenantSnapshot`, each kept until a change of *that* tenant (issue 26): a request looks its tenant
/// up in memory and never asks the store whether anything changed.
///
/// - A write through this node applies its one document to its tenant before it answers (`documentChanged`): the
///   document is read back from the store and put into a new snapshot in which only what depends on its kind is
///   rebuilt — a policy write recompiles that tenant's policy set, nothing else.
/// - On a store other nodes write too (PostgreSQL), their changes arrive through the store's change feed
///   (`LISTEN`/`NOTIFY`, the same per-document application), and every `recheck` the tenants' revisions are compared
///   (one query) as a safety net for a lost notification; a tenant whose revision moved is reloaded whole.
/// - Concurrent changes of one tenant never lose each other: each reads the document's latest committed state and
///   swaps its snapshot in only if nobody swapped meanwhile (else it applies again to the newer one).
public final class TenantCache: Service, Sendable {
    /// Who else writes the store.
    public enum Validation: Sendable {
        /// Only this node (the embedded store): its own writes are all there is.
        case onWrite
        /// Other nodes too (PostgreSQL): follow the store's change feed, and compare revisions every `recheck`.
        case changeFeed(recheck: Duration)
    }

    struct Entry: Sendable {
        let snapshot: TenantSnapshot
        /// The tenant's revision this snapshot is known to include.
        let revision: Int64
        /// Changes with every swap (compare-and-swap of concurrent changes).
        let serial: UInt64
    }

    private struct State {
        var entries: [String: Entry] = [:]
        /// Tenant ID by verified domain.
        var domains: [String: String] = [:]
        var loaded = false
        var serial: UInt64 = 0
        /// The first load is under way: later callers wait for it instead of loading too (single flight).
        var loading = false
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

    /// Long polls that follow what the snapshots hold (app configuration): woken by every change applied here.
    public let changes = ChangeBroadcast()

    /// How stored documents are read back (the encoders that wrote them use the default date strategy).
    static var decoder: JSONDecoder { TenantDocuments.decoder }

    // MARK: Lookups

    /// The snapshot of the tenant a path segment (tenant ID or domain) names, or `nil` when none does.
    public func snapshot(tenantSegment: String) async throws -> TenantSnapshot? {
        try await loadIfNeeded()
        let key = tenantSegment.lowercased()
        return state.withLock { state in (state.entries[key] ?? state.domains[key].flatMap { state.entries[$0] })?.snapshot }
    }

    /// The snapshot of the tenant with this ID, or `nil`.
    public func snapshot(id: TenantID) async throws -> TenantSnapshot? {
        try await loadIfNeeded()
        return state.withLock { $0.entries[id.rawValue]?.snapshot }
    }

    /// Whether a B2B collaboration user's home account still exists and is enabled (PROTOCOL §17): a guest whose home
    /// account is gone or disabled signs in nowhere. Every other user: yes.
    public func homeAccountUsable(_ user: User) async throws -> Bool {
        guard let home = user.homeAccount else { return true }
        guard let tenant = try await snapshot(id: home.tenantId), let account = tenant.directory.user(id: home.userId) else { return false }
        return account.accountEnabled
    }

    /// Every tenant's snapshot, keyed by tenant ID and by domain.
    public func snapshots() async throws -> [String: TenantSnapshot] {
        try await loadIfNeeded()
        return state.withLock { state in
            var all: [String: TenantSnapshot] = [:]
            for (id, entry) in state.entries {
                all[id] = entry.snapshot
                all[entry.snapshot.tenant.domain] = entry.snapshot
            }
            return all
        }
    }

    /// The tenants' revisions this cache holds.
    public func cachedRevisions() -> [String: Int64] {
        state.withLock { $0.entries.mapValues(\.revision) }
    }

    /// Which snapshot each tenant has (a number that changes whenever it is replaced): a change elsewhere leaves a
    /// tenant's snapshot alone (tests).
    public func snapshotGenerations() -> [String: UInt64] {
        state.withLock { $0.entries.mapValues(\.serial) }
    }

    // MARK: Changes

    /// A document of a tenant changed (a write through this node, or another node's through the feed): its latest
    /// committed state is read back and applied to that tenant alone. `revision` is the tenant's revision after the
    /// change, when known.
    public func documentChanged(tenantId: TenantID, kind: DocumentKind, id: String, revision: Int64?) async throws {
        guard state.withLock({ $0.loaded }) else { return }  // not loaded yet: the first load reads it
        let stored = try await store.document(tenantId: tenantId, kind: kind, id: id)
        while true {
            guard let entry = state.withLock({ $0.entries[tenantId.rawValue] }) else {
                try await reload(tenantId: tenantId.rawValue)  // a tenant this node has not seen yet
                break
            }
            let newRevision = max(entry.revision, revision ?? stored?.version ?? entry.revision)
            let next = try Self.applying(entry.snapshot, kind: kind, id: id, body: stored?.body, revision: newRevision)
            if swap(tenantId.rawValue, expected: entry.serial, with: next, revision: newRevision) { break }
        }
        changes.signal()
    }

    /// Reloads one tenant whole from the store (its revision moved and no single document says why, or it is new).
    public func reload(tenantId: String) async throws {
        let revision = try await store.tenantRevisions()[tenantId] ?? 0
        let documents = try await store.documents(tenantIds: [tenantId])
        let built = try Self.snapshot(of: tenantId, from: documents, revision: revision)
        state.withLock { state in
            guard let built else {
                state.entries[tenantId] = nil
                return
            }
            if let current = state.entries[tenantId], current.revision > revision { return }  // a newer change got here first
            state.serial += 1
            state.entries[tenantId] = Entry(snapshot: built, revision: revision, serial: state.serial)
            state.domains[built.tenant.domain] = built.tenant.id.rawValue
        }
        changes.signal()
    }

    /// Compares every tenant's revision with the store's and reloads those that moved, adds new tenants and drops
    /// removed ones: the safety net behind the change feed. Returns how many tenants it reloaded.
    @discardableResult
    public func synchronize() async throws -> Int {
        guard state.withLock({ $0.loaded }) else { return 0 }
        let revisions = try await store.tenantRevisions()
        let cached = cachedRevisions()
        var reloaded = 0
        for (tenantId, revision) in revisions where (cached[tenantId] ?? -1) < revision {
            try await reload(tenantId: tenantId)
            reloaded += 1
        }
        for tenantId in cached.keys where revisions[tenantId] == nil {
            state.withLock { state in
                if let domain = state.entries.removeValue(forKey: tenantId)?.snapshot.tenant.domain { state.domains[domain] = nil }
            }
        }
        return reloaded
    }

    /// The change feed and the safety net, for as long as the server runs (a store only this node writes has none).
    public func run() async throws {
        guard case .changeFeed(let recheck) = validation else {
            try? await gracefulShutdown()
            return
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.follow() }
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: recheck)
                    do { try await self.synchronize() } catch { self.logger.warning("tenant cache: revision check failed") }
                }
            }
            try? await gracefulShutdown()
            group.cancelAll()
        }
    }

    /// Follows the store's change feed; when it breaks, checks every revision (what was missed) and follows again.
    func follow() async {
        var delay = Duration.milliseconds(100)
        while !Task.isCancelled {
            do {
                try await store.followDocumentChanges { change in
                    do {
                        if let kind = change.kind, let id = change.id {
                            try await self.documentChanged(tenantId: TenantID(change.tenantId), kind: kind, id: id, revision: change.revision)
                        } else {
                            try await self.reload(tenantId: change.tenantId)
                        }
                    } catch {
                        self.logger.warning("tenant cache: a change could not be applied; the next revision check reloads the tenant")
                    }
                }
            } catch is CancellationError {
                return
            } catch {
                if Task.isCancelled { return }
                logger.warning("tenant cache: the change feed broke; following it again")
            }
            try? await Task.sleep(for: delay)
            delay = min(delay * 2, .seconds(5))
            _ = try? await synchronize()
        }
    }

    // MARK: Loading

    private func loadIfNeeded() async throws {
        enum Step { case done, wait, load }
        while true {
            let step = state.withLock { state -> Step in
                if state.loaded { return .done }
                if state.loading { return .wait }
                state.loading = true
                return .load
            }
            switch step {
            case .done:
                return
            case .wait:
                await withCheckedContinuation { continuation in
                    let waiting = state.withLock { state -> Bool in
                        if state.loading { state.waiters.append(continuation) }
                        return state.loading
                    }
                    if !waiting { continuation.resume() }
                }
            case .load:
                var failure: (any Error)?
                do { try await loadAll() } catch { failure = error }
                let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                    state.loading = false
                    defer { state.waiters = [] }
                    return state.waiters
                }
                for waiter in waiters { waiter.resume() }
                if let failure { throw failure }  // the next request tries again
                return
            }
        }
    }

    /// Every tenant, read in batches of 8 tenants (one query each) and built into snapshots one after another.
    private func loadAll() async throws {
        let revisions = try await store.tenantRevisions()
        let ids = revisions.keys.sorted()
        var entries: [String: Entry] = [:]
        let batch = 8
        let clock = ContinuousClock()
        var reading = Duration.zero
        let started = clock.now
        for start in stride(from: 0, to: ids.count, by: batch) {
            let chunk = Array(ids[start..<min(start + batch, ids.count)])
            let readStart = clock.now
            let documents = try await store.documents(tenantIds: chunk)
            reading += clock.now - readStart
            let byTenant = Dictionary(grouping: documents, by: \.tenantId)
            for tenantId in chunk {
                if let snapshot = try Self.snapshot(of: tenantId, from: byTenant[tenantId] ?? [], revision: revisions[tenantId] ?? 0) {
                    entries[tenantId] = Entry(snapshot: snapshot, revision: snapshot.revision, serial: 0)
                }
            }
        }
        state.withLock { state in
            guard !state.loaded else { return }
            state.entries = entries
            state.domains = Dictionary(
                entries.values.map { ($0.snapshot.tenant.domain, $0.snapshot.tenant.id.rawValue) }, uniquingKeysWith: { first, _ in first })
            state.loaded = true
        }
        logger.debug(
            "tenant cache loaded",
            metadata: [
                "portcullis.tenants": .stringConvertible(entries.count), "portcullis.read": .stringConvertible(reading),
                "portcullis.total": .stringConvertible(clock.now - started),
            ])
    }

    private func swap(_ tenantId: String, expected serial: UInt64, with snapshot: TenantSnapshot, revision: Int64) -> Bool {
        state.withLock { state in
            guard state.entries[tenantId]?.serial == serial else { return false }
            state.serial += 1
            state.entries[tenantId] = Entry(snapshot: snapshot, revision: revision, serial: state.serial)
            return true
        }
    }

    // MARK: Reading documents back into their types

    /// A tenant's snapshot from its stored documents (`nil` without its tenant document).
    static func snapshot(of tenantId: String, from documents: [StoredDocument], revision: Int64) throws -> TenantSnapshot? {
        guard let tenantDocument = documents.first(where: { $0.kind == .tenant && $0.id == tenantId }) else { return nil }
        var contents = TenantContents(tenant: try decode(Tenant.self, tenantDocument))
        // Documents come grouped by kind: each run is read into its kind's type at once.
        var start = documents.startIndex
        while start < documents.endIndex {
            let kind = documents[start].kind
            var end = start
            while end < documents.endIndex && documents[end].kind == kind { end += 1 }
            if kind != .tenant { try contents.load(kind: kind, documents[start..<end], decoder: decoder) }
            start = end
        }
        return TenantSnapshot(contents: contents, revision: revision)
    }

    static func applying(_ snapshot: TenantSnapshot, kind: DocumentKind, id: String, body: Data?, revision: Int64) throws -> TenantSnapshot {
        guard let type = TenantDocuments.byKind[kind] else { return snapshot }
        func apply<Document: TenantDocument>(_ type: Document.Type) throws -> TenantSnapshot {
            let document = try body.map { data in
                do { return try decoder.decode(Document.self, from: data) } catch {
                    throw StorageError(.corrupt, "stored \(kind.rawValue) \(id) cannot be read", underlying: error)
                }
            }
            return snapshot.applying(document, id: id, revision: revision)
        }
        return try apply(type)
    }

    static func decode<Document: TenantDocument>(_ type: Document.Type, _ document: StoredDocument) throws -> Document {
        do { return try decoder.decode(Document.self, from: document.body) } catch {
            throw StorageError(.corrupt, "stored \(document.kind.rawValue) \(document.id) cannot be read", underlying: error)
        }
    }

    /// One tenant read from the store (maintenance at start-up: re-keying role assignments).
    static func load(tenantId: String, from store: any DocumentStore) async throws -> TenantSnapshot? {
        try snapshot(of: tenantId, from: try await store.documents(tenantIds: [tenantId]), revision: try await store.tenantRevisions()[tenantId] ?? 0)
    }
}

extension TenantContents {
    /// Reads stored documents of one kind back into its type and adds them to these contents (loading a tenant; a
    /// store's collation may order IDs differently, so the list is sorted when it is not already). Kinds this build
    /// does not know are left alone.
    mutating func load(kind: DocumentKind, _ documents: ArraySlice<StoredDocument>, decoder: JSONDecoder) throws {
        guard let type = TenantDocuments.byKind[kind] else { return }
        func load<Document: TenantDocument>(_ type: Document.Type) throws {
            guard let list = Document.list else { return }
            var decoded: [Document] = []
            decoded.reserveCapacity(documents.count)
            for document in documents {
                do { decoded.append(try decoder.decode(Document.self, from: document.body)) } catch {
                    throw StorageError(.corrupt, "stored \(kind.rawValue) \(document.id) cannot be read", underlying: error)
                }
            }
            if Document.self == RoleAssignmentDocument.self {
                // Stored under their document ID (which older stores did not keep in the body).
                for (value, document) in zip(decoded, documents) { Document.apply(value, id: document.id, to: &self) }
                return
            }
            self[keyPath: list].append(contentsOf: decoded)
            TenantContents.sort(&self[keyPath: list])
        }
        try load(type)
    }
}
