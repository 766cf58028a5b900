import Foundation
import PortcullisCore
public import PortcullisStorage

/// The behaviour every `PortcullisStore` must have, as named cases a test target runs against each backend
/// (`@Test(arguments: StoreConformance.cases)`). A failed expectation throws `ConformanceFailure`.
public struct ConformanceCase: Sendable, CustomStringConvertible {
    public let name: String
    public let run: @Sendable (any PortcullisStore) async throws -> Void
    public var description: String { name }
}

public struct ConformanceFailure: Error, CustomStringConvertible {
    public let description: String
}

func expect(_ condition: Bool, _ message: @autoclosure () -> String, line: Int = #line) throws {
    if !condition { throw ConformanceFailure(description: "StoreConformance.swift:\(line): \(message())") }
}

func unwrap<T>(_ value: T?, _ what: String, line: Int = #line) throws -> T {
    guard let value else { throw ConformanceFailure(description: "StoreConformance.swift:\(line): expected \(what), found nil") }
    return value
}

func expectError(_ code: StorageError.Code, line: Int = #line, _ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let error as StorageError {
        try expect(error.code == code, "expected \(code), got \(error.code)", line: line)
        return
    }
    throw ConformanceFailure(description: "StoreConformance.swift:\(line): expected \(code), nothing was thrown")
}

public enum StoreConformance {
    static let tenant = "t-1"
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func record(_ hash: String, family: String, user: String = "u-1", client: String = "c-1", expires: TimeInterval = 3600) -> RefreshTokenRecord {
        RefreshTokenRecord(
            tokenHash: hash, familyId: family, tenantId: TenantID(tenant), userId: ObjectID(user), clientId: AppID(client), scope: "openid offline_access",
            issuedAt: now, expiresAt: now.addingTimeInterval(expires))
    }

    public static let cases: [ConformanceCase] = [
        ConformanceCase(name: "signal queue: per stream, bounded (oldest dropped), held until released, acknowledged, rejected") { store in
            func message(_ jti: String, target: String, at offset: TimeInterval, next: Date = OutboxMessage.held) -> OutboxMessage {
                OutboxMessage(
                    id: "m-\(jti)", tenantId: tenant, enrollmentId: nil, targetUri: target, payload: "set-\(jti)", jti: jti, nextAttemptAt: next,
                    createdAt: now.addingTimeInterval(offset))
            }
            let a = "ssf:stream-a"
            let b = "ssf:stream-b"
            try expect(
                try await store.enqueueSignals([message("a1", target: a, at: 0), message("a2", target: a, at: 1)], target: a, keepingAtMost: 3) == 0,
                "nothing dropped under the bound")
            try await store.enqueueSignals([message("b1", target: b, at: 0)], target: b, keepingAtMost: 3)
            let dropped = try await store.enqueueSignals([message("a3", target: a, at: 2), message("a4", target: a, at: 3)], target: a, keepingAtMost: 3)
            try expect(dropped == 1, "one past the bound is dropped, found \(dropped)")
            try expect(try await store.pendingSignals(target: a, limit: 10).map(\.jti) == ["a2", "a3", "a4"], "the oldest went; order is kept")
            let countA = try await store.pendingSignalCount(target: a)
            let countB = try await store.pendingSignalCount(target: b)
            try expect(countA == 3 && countB == 1, "counts per stream")
            try expect(
                try await store.claimOutbox(now: now.addingTimeInterval(60), leaseUntil: now.addingTimeInterval(90), owner: "o", limit: 10).isEmpty,
                "held messages are not claimed")
            try await store.rescheduleSignals(target: a, nextAttemptAt: now)
            let claimed = try await store.claimOutbox(now: now.addingTimeInterval(1), leaseUntil: now.addingTimeInterval(90), owner: "o", limit: 10)
            try expect(claimed.map(\.jti) == ["a2"], "released: only the stream's oldest is claimed (in order), found \(claimed.map(\.jti))")
            try await store.completeOutbox(id: claimed[0].id, owner: "o", at: now)
            try expect(try await store.acknowledgeSignals(target: a, jtis: ["a3", "b1", "zz"], at: now) == 1, "only the stream's own pending are acknowledged")
            try expect(try await store.rejectSignals(target: a, errors: ["a4": "invalid_request: no"], at: now) == 1, "rejected")
            let recent = try await store.recentSignals(target: a, limit: 10)
            try expect(
                recent.map(\.jti) == ["a4", "a3", "a2"] && recent[0].state == .deadLetter && recent[0].lastError == "invalid_request: no",
                "recent, newest first")
            try expect(try await store.pendingSignals(target: a, limit: 10).isEmpty, "nothing pending on a")
            try expect(try await store.dropSignals(target: b) == 1, "dropped")
            try expect(try await store.pendingSignalCount(target: b) == 0, "nothing left on b")
        },
        ConformanceCase(name: "documents: create, read, replace with version, delete, revision grows") { store in
            let r0 = try await store.revision()
            let created = try await store.put(
                tenantId: TenantID(tenant), kind: .user, id: "u1", body: Data(#"{"a":1}"#.utf8), precondition: .mustNotExist, at: now, audit: nil)
            try expect(created.version > r0, "version must come from the growing revision")
            let read = try await store.document(tenantId: TenantID(tenant), kind: .user, id: "u1")
            try expect(read?.body == Data(#"{"a":1}"#.utf8), "body must round-trip")
            try expect(read?.version == created.version, "version must round-trip")
            let replaced = try await store.put(
                tenantId: TenantID(tenant), kind: .user, id: "u1", body: Data(#"{"a":2}"#.utf8), precondition: .version(created.version), at: now, audit: nil)
            try expect(replaced.version > created.version, "a replace must bump the version")
            try await expectError(.preconditionFailed) {
                _ = try await store.put(
                    tenantId: TenantID(tenant), kind: .user, id: "u1", body: Data("{}".utf8), precondition: .version(created.version), at: now, audit: nil)
            }
            try await expectError(.duplicate) {
                _ = try await store.put(
                    tenantId: TenantID(tenant), kind: .user, id: "u1", body: Data("{}".utf8), precondition: .mustNotExist, at: now, audit: nil)
            }
            try await expectError(.notFound) {
                _ = try await store.put(
                    tenantId: TenantID(tenant), kind: .user, id: "nope", body: Data("{}".utf8), precondition: .mustExist, at: now, audit: nil)
            }
            try await store.delete(tenantId: TenantID(tenant), kind: .user, id: "u1", precondition: .version(replaced.version), audit: nil)
            try expect(try await store.document(tenantId: TenantID(tenant), kind: .user, id: "u1") == nil, "deleted documents are gone")
            try await expectError(.notFound) { try await store.delete(tenantId: TenantID(tenant), kind: .user, id: "u1", precondition: .none, audit: nil) }
            try expect(try await store.revision() > replaced.version, "a delete bumps the revision")
        },
        ConformanceCase(name: "documents: listing is per tenant and kind; tenants are listed") { store in
            try await store.seed([
                StoredDocument(tenantId: "t-a", kind: .tenant, id: "t-a", body: Data("{}".utf8), version: 0, updatedAt: now),
                StoredDocument(tenantId: "t-a", kind: .group, id: "g2", body: Data("{}".utf8), version: 0, updatedAt: now),
                StoredDocument(tenantId: "t-a", kind: .group, id: "g1", body: Data("{}".utf8), version: 0, updatedAt: now),
                StoredDocument(tenantId: "t-b", kind: .group, id: "g3", body: Data("{}".utf8), version: 0, updatedAt: now),
            ])
            let groups = try await store.documents(tenantId: "t-a", kind: .group)
            try expect(groups.map(\.id) == ["g1", "g2"], "listing is ordered by id and scoped: \(groups.map(\.id))")
            try expect(try await store.tenantIds().contains("t-a"), "seeded tenants are listed")
            // Seeding again leaves existing documents alone.
            try await store.seed([StoredDocument(tenantId: "t-a", kind: .group, id: "g1", body: Data(#"{"changed":true}"#.utf8), version: 0, updatedAt: now)])
            try expect(try await store.document(tenantId: "t-a", kind: .group, id: "g1")?.body == Data("{}".utf8), "seed must not overwrite")
        },
        ConformanceCase(name: "documents: object IDs and application IDs are unique across the installation (PROTOCOL §11)") { store in
            func put(_ tenant: String, _ kind: DocumentKind, _ id: String, _ precondition: WritePrecondition = .mustNotExist) async throws {
                try await store.put(tenantId: TenantID(tenant), kind: kind, id: id, body: Data("{}".utf8), precondition: precondition, at: now, audit: nil)
            }
            try await put("t-x", .user, "obj-1")
            try await expectError(.identifierTaken) { try await put("t-y", .user, "obj-1") }
            let owner = try await store.identifierOwner(kind: .user, id: "obj-1", tenantId: "t-y")
            try expect(owner == IdentifierOwner(tenantId: "t-x", kind: .user), "the owner is named to the caller: \(String(describing: owner))")
            try await expectError(.identifierTaken) { try await put("t-x", .group, "obj-1") }  // users and groups share object IDs
            try await expectError(.identifierTaken) { try await put("t-y", .group, "obj-1") }
            try expect(try await store.document(tenantId: "t-y", kind: .user, id: "obj-1") == nil, "a refused write stores nothing")
            try await put("t-x", .user, "obj-1", .mustExist)  // replacing one's own is fine
            try expect(try await store.identifierOwner(kind: .user, id: "obj-1", tenantId: "t-x") == nil, "a document does not conflict with itself")
            try await put("t-y", .application, "obj-1")  // applications have their own namespace
            try await expectError(.identifierTaken) { try await put("t-z", .application, "obj-1") }
            try await put("t-y", .namedLocation, "obj-1")  // other kinds are unique within a tenant only
            try await put("t-z", .namedLocation, "obj-1")
            try await store.delete(tenantId: "t-x", kind: .user, id: "obj-1", precondition: .none, audit: nil)
            try await put("t-y", .user, "obj-1")  // free again once deleted
        },
        ConformanceCase(name: "documents: every write moves its own tenant's revision only; several tenants are read at once") { store in
            func put(_ tenant: String, _ kind: DocumentKind, _ id: String) async throws -> Int64 {
                let written = try await store.put(
                    tenantId: TenantID(tenant), kind: kind, id: id, body: Data("{}".utf8), precondition: .none, at: now, audit: nil)
                return written.version
            }
            try await store.seed([
                StoredDocument(tenantId: "t-r1", kind: .tenant, id: "t-r1", body: Data("{}".utf8), version: 0, updatedAt: now),
                StoredDocument(tenantId: "t-r2", kind: .tenant, id: "t-r2", body: Data("{}".utf8), version: 0, updatedAt: now),
            ])
            let seeded = try await store.tenantRevisions()
            try expect(seeded["t-r1"] != nil && seeded["t-r1"] == seeded["t-r2"], "seeding records each tenant's revision: \(seeded)")
            let written = try await put("t-r1", .namedLocation, "l1")
            let afterWrite = try await store.tenantRevisions()
            try expect(afterWrite["t-r1"] == written && afterWrite["t-r2"] == seeded["t-r2"], "only the written tenant moves: \(afterWrite)")
            let deleted = try await store.delete(tenantId: "t-r2", kind: .tenant, id: "t-r2", precondition: .none, audit: nil)
            let afterDelete = try await store.tenantRevisions()
            try expect(deleted > written && afterDelete["t-r2"] == deleted && afterDelete["t-r1"] == written, "a delete moves its tenant: \(afterDelete)")
            _ = try await store.put(tenantId: "t-r2", kind: .user, id: "u-r", body: Data("{}".utf8), precondition: .none, at: now, audit: nil)
            let both = try await store.documents(tenantIds: ["t-r1", "t-r2", "t-none"])
            try expect(
                both.map { "\($0.tenantId)/\($0.kind.rawValue)/\($0.id)" } == ["t-r1/namedLocation/l1", "t-r1/tenant/t-r1", "t-r2/user/u-r"],
                "all kinds of every named tenant, in order: \(both.map(\.id))")
            try expect(try await store.documents(tenantIds: []).isEmpty, "no tenants, no documents")
        },
        ConformanceCase(name: "audit: written with the change, newest first, paged") { store in
            for index in 0..<3 {
                try await store.put(
                    tenantId: "t-audit", kind: .namedLocation, id: "l\(index)", body: Data("{}".utf8), precondition: .none, at: now,
                    audit: AuditRecord(
                        tenantId: "t-audit", at: now, actor: "admin", action: .create, kind: AuditSubject(.namedLocation), documentId: "l\(index)", before: nil,
                        after: .object([:])))
            }
            let page = try await store.auditRecords(tenantId: "t-audit", limit: 2, before: nil)
            try expect(page.map(\.documentId) == ["l2", "l1"], "newest first: \(page.map(\.documentId))")
            let next = try await store.auditRecords(tenantId: "t-audit", limit: 2, before: page.last?.id)
            try expect(next.map(\.documentId) == ["l0"], "paging continues: \(next.map(\.documentId))")
            // A refused write leaves no audit record.
            _ = try? await store.put(
                tenantId: "t-audit", kind: .namedLocation, id: "l0", body: Data("{}".utf8), precondition: .mustNotExist, at: now,
                audit: AuditRecord(
                    tenantId: "t-audit", at: now, actor: "admin", action: .create, kind: AuditSubject(.namedLocation), documentId: "l0", before: nil,
                    after: .object([:])))
            try expect(try await store.auditRecords(tenantId: "t-audit", limit: 10, before: nil).count == 3, "a refused write must not be audited")
        },
        ConformanceCase(name: "refresh tokens: insert, find, rotate once, replay refused") { store in
            try await store.insert(record("h1", family: "f1"))
            let found = try await store.find(tokenHash: "h1")
            try expect(found?.familyId == "f1" && found?.usedAt == nil && found?.familyRevokedAt == nil, "a new token is found unused")
            try expect(try await store.rotate(oldHash: "h1", usedAt: now, successor: record("h2", family: "f1")), "first rotation succeeds")
            try expect(try await store.find(tokenHash: "h1")?.usedAt != nil, "the rotated token is marked used")
            try expect(try await store.find(tokenHash: "h2") != nil, "the successor exists")
            try expect(
                !(try await store.rotate(oldHash: "h1", usedAt: now, successor: record("h3", family: "f1"))), "a second rotation of the same token fails")
            try expect(try await store.find(tokenHash: "h3") == nil, "a failed rotation writes nothing")
            try expect(try await store.find(tokenHash: "nope") == nil, "unknown hashes are not found")
        },
        ConformanceCase(name: "refresh tokens: family revocation stops rotation; account revocation") { store in
            try await store.insert(record("k1", family: "fam-a", user: "u-9", client: "c-9"))
            try await store.insert(record("k2", family: "fam-b", user: "u-9", client: "c-9"))
            try await store.insert(record("k3", family: "fam-c", user: "u-9", client: "c-other"))
            try await store.revokeFamily(familyId: "fam-a", at: now)
            try expect(try await store.find(tokenHash: "k1")?.familyRevokedAt != nil, "revoked family is visible on its tokens")
            try expect(!(try await store.rotate(oldHash: "k1", usedAt: now, successor: record("k1b", family: "fam-a"))), "a revoked family cannot rotate")
            let revoked = try await store.revokeFamilies(tenantId: TenantID(tenant), userId: "U-9", clientId: "C-9", at: now)
            try expect(revoked == 1, "only the still-live family of that account and client is revoked (its IDs in any case), got \(revoked)")
            try expect(try await store.find(tokenHash: "k2")?.familyRevokedAt != nil, "account revocation reaches every family")
            try expect(try await store.find(tokenHash: "k3")?.familyRevokedAt == nil, "other clients are untouched")
            try await store.insert(record("k4", family: "fam-d", user: "u-10", client: "c-9"))
            try expect(
                try await store.revokeAllFamilies(tenantId: TenantID(tenant), userId: "U-9", at: now) == 1, "a user's families at every client (the one left)")
            try expect(try await store.find(tokenHash: "k3")?.familyRevokedAt != nil, "the other client's family too")
            try expect(try await store.find(tokenHash: "k4")?.familyRevokedAt == nil, "another user's family is untouched")
        },
        ConformanceCase(name: "refresh tokens: concurrent rotations of one token, exactly one wins") { store in
            try await store.insert(record("race", family: "fam-race"))
            let wins = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<20 {
                    group.addTask { try await store.rotate(oldHash: "race", usedAt: now, successor: record("race-\(index)", family: "fam-race")) }
                }
                var wins = 0
                for try await won in group where won { wins += 1 }
                return wins
            }
            try expect(wins == 1, "exactly one concurrent rotation may win, got \(wins)")
        },
        ConformanceCase(name: "refresh tokens: purge removes expired tokens only") { store in
            try await store.insert(record("old", family: "fam-old", expires: -10))
            try await store.insert(record("fresh", family: "fam-fresh", expires: 3600))
            let purged = try await store.purgeExpired(before: now)
            try expect(purged >= 1, "expired tokens are purged")
            try expect(try await store.find(tokenHash: "old") == nil, "the expired token is gone")
            try expect(try await store.find(tokenHash: "fresh") != nil, "the live token stays")
        },
        ConformanceCase(name: "cancelled writers leave no transaction open") { store in
            for round in 0..<30 {
                let writers = Task {
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for index in 0..<20 {
                            group.addTask { try await store.insert(record("cancel-\(round)-\(index)", family: "fam-cancel-\(round)-\(index)")) }
                        }
                        try await group.waitForAll()
                    }
                }
                // Cancel at varying points: before, during and after the transactions started.
                try? await Task.sleep(for: .microseconds(200 * (round % 10)))
                writers.cancel()
                _ = try? await writers.value
            }
            // Every write after the cancellations still works.
            try await store.insert(record("after-cancel", family: "fam-after-cancel"))
            try expect(try await store.find(tokenHash: "after-cancel") != nil, "a write after cancelled writers must succeed")
            try expect(
                try await store.rotate(oldHash: "after-cancel", usedAt: now, successor: record("after-cancel-2", family: "fam-after-cancel")),
                "a transaction after cancelled writers must succeed")
        },
        ConformanceCase(name: "concurrent writers: every success is kept, a failing one dooms no other") { store in
            let outcomes = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<40 {
                    group.addTask {
                        do {
                            // Half of them race for one ID (one wins), half write IDs of their own (all win).
                            let id = index % 2 == 0 ? "contended" : "own-\(index)"
                            try await store.put(
                                tenantId: "t-race", kind: .group, id: id, body: Data("{}".utf8), precondition: .mustNotExist, at: now, audit: nil)
                            return true
                        } catch let error as StorageError where error.code == .duplicate {
                            return false
                        }
                    }
                }
                var wins = 0
                for try await won in group where won { wins += 1 }
                return wins
            }
            try expect(outcomes == 21, "20 own IDs and one contended ID succeed, got \(outcomes)")
            try expect(try await store.documents(tenantId: "t-race", kind: .group).count == 21, "every reported success is stored")
        },
        ConformanceCase(name: "sign-ins: large batches, filters by user, status, policy and correlation ID") { store in
            func record(_ index: Int) -> SignInRecord {
                SignInRecord(
                    id: "s\(index)", createdDateTime: now.addingTimeInterval(Double(index)), correlationId: "c\(index)", tenantId: TenantID(tenant),
                    userId: index % 3 == 0 ? "u-a" : "u-b", userPrincipalName: nil, clientAppId: "app", resourceAppId: "res", resource: nil,
                    grantType: "password", clientAppType: "mobileAppsAndDesktopClients", capabilities: [], ipAddress: nil, platform: nil,
                    appProtection: "none", conditionalAccessStatus: index % 2 == 0 ? .success : .failure,
                    appliedConditionalAccessPolicies: (0..<3).map {
                        Decision.AppliedPolicy(
                            id: "p\(($0 + index) % 5)", displayName: "P", result: .success, enforcedGrantControls: [], conditionsNotSatisfied: [])
                    },
                    errorCode: nil)
            }
            try await store.appendSignIns((0..<250).map(record))
            try await store.appendSignIns((250..<260).map(record))
            let newest = try await store.signIns(SignInQuery(tenantId: TenantID(tenant), limit: 5))
            try expect(newest.map(\.record.id) == ["s259", "s258", "s257", "s256", "s255"], "newest first: \(newest.map(\.record.id))")
            let page = try await store.signIns(SignInQuery(tenantId: TenantID(tenant), limit: 5, before: newest.last?.cursor))
            try expect(page.first?.record.id == "s254", "paging continues")
            try expect(try await store.signIns(SignInQuery(tenantId: TenantID(tenant), userId: "u-a", limit: 1000)).count == 87, "by user")
            try expect(try await store.signIns(SignInQuery(tenantId: TenantID(tenant), status: .failure, limit: 1000)).count == 130, "by status")
            try expect(try await store.signIns(SignInQuery(tenantId: TenantID(tenant), policyId: "p0", limit: 1000)).count == 156, "by policy")
            try expect(
                try await store.signIns(SignInQuery(tenantId: TenantID(tenant), correlationId: "c42", limit: 10)).map(\.record.id) == ["s42"],
                "by correlation ID")
            try expect(try await store.purgeSignIns(before: now.addingTimeInterval(100)) == 100, "retention")
        },
        ConformanceCase(name: "sign-ins (issue 42): a batch of many tenants' aggregates, new and growing, in sets; new ones indexed and counted once") {
            store in
            func refresh(_ index: Int, tenantId: String, at offset: TimeInterval) -> SignInRecord {
                var record = SignInRecord(
                    id: "m\(index)", createdDateTime: now.addingTimeInterval(offset), correlationId: "mc\(index)", tenantId: TenantID(tenantId), userId: nil,
                    userPrincipalName: nil, clientAppId: "daemon", resourceAppId: "res", resource: "api://res", grantType: "client_credentials",
                    clientAppType: "mobileAppsAndDesktopClients", capabilities: [], ipAddress: "192.0.2.9", platform: nil, appProtection: "none",
                    conditionalAccessStatus: .success,
                    appliedConditionalAccessPolicies: [
                        Decision.AppliedPolicy(id: "p-m", displayName: "M", result: .success, enforcedGrantControls: [], conditionsNotSatisfied: [])
                    ], errorCode: nil)
                record.isInteractive = false
                return record
            }
            // 450 tenants in one batch (three sets of 200), then the same 450 again and 50 more.
            let first = (0..<450).map { refresh($0, tenantId: "m-\($0)", at: 1) }
            try await store.appendSignIns(SignInAggregation.aggregate(first, window: 3600) { "k-\($0.tenantId)" })
            let bytes = try await store.signInBytes()
            let second = (0..<500).map { refresh(1000 + $0, tenantId: "m-\($0)", at: 2) }
            try await store.appendSignIns(SignInAggregation.aggregate(second, window: 3600) { "k-\($0.tenantId)" })
            for tenantId in ["m-0", "m-199", "m-200", "m-449"] {
                let found = try await store.signIns(SignInQuery(tenantId: TenantID(tenantId), limit: 10))
                try expect(found.count == 1 && found.first?.record.count == 2, "\(tenantId): one aggregate of two: \(found.map(\.record.count))")
                try expect(
                    try await store.signIns(SignInQuery(tenantId: TenantID(tenantId), policyId: "p-m", limit: 10)).count == 1, "\(tenantId) indexed once")
            }
            for tenantId in ["m-450", "m-499"] {
                let found = try await store.signIns(SignInQuery(tenantId: TenantID(tenantId), policyId: "p-m", limit: 10))
                try expect(found.count == 1 && found.first?.record.count == 1, "\(tenantId): a new one, indexed")
            }
            let grown = try await store.signInBytes()
            try expect(grown > bytes && grown - bytes < (grown / 450) * 51, "only the 50 new aggregates added bytes: \(bytes) → \(grown)")
        },
        ConformanceCase(
            name:
                "sign-ins (issue 32): aggregates add up per tenant, key and window, also from concurrent writers; compact round trip; retention by last sign-in and by size"
        ) { store in
            func refresh(_ index: Int, at offset: TimeInterval, user: String = "u-a", tenantId: String = tenant) -> SignInRecord {
                var record = SignInRecord(
                    id: "r\(index)", createdDateTime: now.addingTimeInterval(offset), correlationId: "rc\(index)", tenantId: TenantID(tenantId),
                    userId: ObjectID(user),
                    userPrincipalName: "\(user)@t", clientAppId: "app", resourceAppId: "res", resource: "api://res", grantType: "refresh_token",
                    clientAppType: "mobileAppsAndDesktopClients", capabilities: ["cp1"], ipAddress: "192.0.2.1", platform: "iOS", appProtection: "none",
                    conditionalAccessStatus: .success,
                    appliedConditionalAccessPolicies: [
                        Decision.AppliedPolicy(
                            id: "p-applied", displayName: "Applied", result: .success, enforcedGrantControls: ["mfa"], conditionsNotSatisfied: []),
                        Decision.AppliedPolicy(
                            id: "p-other", displayName: "Other", result: .notApplied, enforcedGrantControls: [], conditionsNotSatisfied: [.users]),
                    ],
                    errorCode: nil, authenticationMethods: ["pwd", "mfa"])
                record.isInteractive = false
                return record
            }
            func pending(_ records: [SignInRecord], key: String = "k-1") -> [SignInAggregation.Entry] {
                SignInAggregation.aggregate(records, window: 3600) { _ in key }
            }
            // Two batches into one window add up; the first sign-in stays the record's, the last one's time and ID are kept.
            try await store.appendSignIns(pending((0..<5).map { refresh($0, at: Double($0)) }))
            try await store.appendSignIns(pending((5..<8).map { refresh($0, at: Double($0)) }))
            var found = try await store.signIns(SignInQuery(tenantId: TenantID(tenant), limit: 10))
            try expect(found.count == 1, "one aggregate, got \(found.count)")
            let aggregate = try unwrap(found.first?.record, "the aggregate")
            try expect(aggregate.count == 8 && aggregate.id == "r0" && aggregate.correlationId == "rc0", "count and first: \(aggregate)")
            try expect(aggregate.aggregate?.lastCorrelationId == "rc7" && aggregate.lastDateTime == now.addingTimeInterval(7), "last: \(aggregate)")
            // Compact: only the policy that applied, without its name; every other member as written.
            var expected = SignInAggregation.compacted(refresh(0, at: 0))
            expected.aggregate = aggregate.aggregate
            try expect(aggregate == expected, "compact round trip:\n\(aggregate)\n\(expected)")
            try expect(try await store.signIns(SignInQuery(tenantId: TenantID(tenant), policyId: "p-applied", limit: 10)).count == 1, "found by its policy")
            try expect(
                try await store.signIns(SignInQuery(tenantId: TenantID(tenant), policyId: "p-other", limit: 10)).isEmpty, "not by one that did not apply")
            try expect(
                try await store.signIns(SignInQuery(tenantId: TenantID(tenant), correlationId: "rc7", limit: 10)).count == 1, "found by its last correlation ID"
            )
            // Another window, another key, another tenant: other records.
            try await store.appendSignIns(pending([refresh(8, at: 3600)]))
            try await store.appendSignIns(pending([refresh(9, at: 10, user: "u-b")], key: "k-2"))
            try await store.appendSignIns(pending([refresh(10, at: 10, tenantId: "t-2")]))
            try expect(try await store.signIns(SignInQuery(tenantId: TenantID(tenant), limit: 10)).count == 3, "three aggregates in the tenant")
            // Writers on several nodes counting into one aggregate at once: the counts add up.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<8 {
                    group.addTask {
                        try await store.appendSignIns(pending((0..<10).map { refresh(100 + writer * 10 + $0, at: 20) }, key: "k-3"))
                    }
                }
                try await group.waitForAll()
            }
            found = try await store.signIns(SignInQuery(tenantId: TenantID(tenant), userId: "u-a", limit: 10))
            try expect(found.map(\.record.count).sorted() == [1, 8, 80], "concurrent counts add up: \(found.map(\.record.count))")
            // Individual records beside them; `from` finds an aggregate by its last sign-in.
            try await store.appendSignIns([refresh(500, at: 30)])
            try expect(
                try await store.signIns(SignInQuery(tenantId: TenantID(tenant), from: now.addingTimeInterval(6), limit: 10)).count == 5,
                "from: overlapping records")
            // Retention by age goes by the last sign-in: the aggregate whose last one is at +7 s stays past a bound of +5 s.
            try expect(try await store.purgeSignIns(before: now.addingTimeInterval(5)) == 0, "an aggregate still in use stays")
            // The size is counted and trimmed oldest first.
            let bytes = try await store.signInBytes()
            try expect(bytes > 0, "the log's size is counted")
            let before = try await store.signIns(SignInQuery(tenantId: TenantID(tenant), limit: 10)).map(\.record.id)
            let trimmed = try await store.trimSignIns(toBytes: bytes - 1, limit: 100)
            let after = try await store.signIns(SignInQuery(tenantId: TenantID(tenant), limit: 10)).map(\.record.id)
            try expect(trimmed == 1 && after == Array(before.dropLast()), "the oldest one went: \(before) → \(after)")
            try expect(try await store.signInBytes() < bytes, "its bytes went with it")
            try expect(try await store.trimSignIns(toBytes: .max, limit: 100) == 0, "nothing goes under the bound")
            try expect(try await store.trimSignIns(toBytes: 0, limit: 2) == 2, "at most `limit` at a time")
            let purged = try await store.purgeSignIns(before: now.addingTimeInterval(100_000))
            let left = try await store.signInBytes()
            try expect(purged >= 1 && left == 0, "all gone, nothing counted: \(purged), \(left) bytes")
        },
        ConformanceCase(name: "enrollments: one active per app instance, the compliant one found by account, revisions") { store in
            func enrollment(_ id: String, user: String, device: String, state: Enrollment.State, lapses: TimeInterval? = nil) -> Enrollment {
                Enrollment(
                    id: RecordID(id), tenantId: TenantID(tenant), userId: ObjectID(user), userPrincipalName: user + "@t", clientId: "C-1",
                    deviceId: DeviceID(device), platform: .iOS,
                    osVersion: "17", appVersion: "1", sdkVersion: "1", state: state, complianceStatus: state == .compliant ? .compliant : .policyNotApplied,
                    policyVersion: "v", appliedPolicyVersion: nil, callbackUri: nil, enrolledAt: now, lastCheckInAt: nil,
                    lapsesAt: lapses.map { now.addingTimeInterval($0) }, updatedAt: now)
            }
            let history = EnrollmentHistoryEntry(at: now, event: .enrolled, fromStatus: nil, toStatus: "x")
            let first = try await store.insertEnrollment(
                enrollment("e1", user: "U-1", device: "D-1", state: .pending), history: history, outbox: [], keepingAtMost: 20)
            try expect(first.revision == 1, "new enrollments start at revision 1")
            try await expectError(.duplicate) {
                _ = try await store.insertEnrollment(
                    enrollment("e2", user: "u-2", device: "d-1", state: .pending), history: history, outbox: [], keepingAtMost: 20)
            }
            try expect(try await store.hasActiveEnrollment(tenantId: TenantID(tenant), userId: "u-1", clientId: "c-1"), "found case-insensitively")
            try expect(
                try await store.compliantEnrollment(tenantId: TenantID(tenant), userId: "u-1", clientId: "c-1", now: now) == nil, "pending is not compliant")
            var compliant = first
            compliant.state = .compliant
            compliant.lapsesAt = now.addingTimeInterval(60)
            let updated = try await store.updateEnrollment(compliant, expectedRevision: 1, history: history, outbox: [])
            try expect(updated?.revision == 2, "an update bumps the revision")
            try expect(try await store.updateEnrollment(compliant, expectedRevision: 1, history: history, outbox: []) == nil, "a stale revision is refused")
            try expect(
                try await store.compliantEnrollment(tenantId: TenantID(tenant), userId: "u-1", clientId: "c-1", now: now)
                    == CompliantEnrollment(id: "e1", platform: .iOS), "compliant now, with its platform")
            try expect(
                try await store.compliantEnrollment(tenantId: TenantID(tenant), userId: "u-1", clientId: "c-1", now: now.addingTimeInterval(61)) == nil,
                "lapsed later")
            try expect(try await store.lapsingEnrollments(now: now.addingTimeInterval(61), limit: 10).map(\.id) == ["e1"], "the sweeper finds it")
            var gone = updated!
            gone.state = .unenrolled
            _ = try await store.updateEnrollment(gone, expectedRevision: 2, history: history, outbox: [])
            try expect(!(try await store.hasActiveEnrollment(tenantId: TenantID(tenant), userId: "u-1", clientId: "c-1")), "unenrolled is not active")
            _ = try await store.insertEnrollment(enrollment("e3", user: "u-2", device: "d-1", state: .pending), history: history, outbox: [], keepingAtMost: 20)
            try expect(try await store.enrollmentHistory(id: "e1").count == 3, "history kept")
        },
        ConformanceCase(name: "effects commit with a document: families and sessions by reach, void-before, replays, signals, audit") { store in
            func family(_ hash: String, _ user: String, _ client: String, methods: [String]) async throws {
                var token = record(hash, family: "f-\(hash)", user: user, client: client)
                token.methods = methods
                try await store.insert(token)
            }
            func session(_ id: String, _ user: String, methods: [String]) async throws {
                try await store.insertSession(
                    SessionRecord(
                        idHash: id, tenantId: TenantID(tenant), userId: ObjectID(user), methods: methods, authTime: now, createdAt: now, lastSeenAt: now,
                        expiresAt: now.addingTimeInterval(3600)), keepingAtMost: 10)
            }
            try await family("e-pwd", "u-e", "c-1", methods: ["pwd"])
            try await family("e-app", "u-e", "c-2", methods: ["pwd", "mfa"])
            try await family("e-fido", "u-e", "c-1", methods: ["fido", "mfa", "aaguid=00000000-0000-0000-0000-000000000000"])
            try await family("e-tap", "u-e", "c-3", methods: ["tap", "mfa", "tap=once"])
            try await family("o-pwd", "u-o", "c-1", methods: ["pwd"])
            try await session("s-pwd", "u-e", methods: ["pwd"])
            try await session("s-fido", "u-e", methods: ["fido", "mfa"])
            try await session("s-other", "u-o", methods: ["pwd"])
            let stream = "ssf:stream-e"
            try await store.enqueueSignals(
                [
                    OutboxMessage(
                        id: "old", tenantId: tenant, enrollmentId: nil, targetUri: stream, payload: "{}", jti: "old", nextAttemptAt: now, createdAt: now)
                ],
                target: stream, keepingAtMost: 10)
            let later = now.addingTimeInterval(10)
            let effects = ChangeEffects(
                tenantId: TenantID(tenant), at: later,
                revocations: [ChangeEffects.Revocation(userId: "U-E", reach: .credential(.password), voidsAccessTokens: true)],
                replays: [ChangeEffects.PolicyReplay(policyId: "P-1", before: nil)])
            let signals = (1...2).map { index in
                OutboxMessage(
                    id: "n\(index)", tenantId: tenant, enrollmentId: nil, targetUri: stream, payload: "{}", jti: "n\(index)", nextAttemptAt: later,
                    createdAt: later)
            }
            let audit = AuditRecord(
                tenantId: TenantID(tenant), at: later, actor: "admin", action: .replace, kind: .user, documentId: "u-e", before: nil, after: nil)
            let body = Data(#"{"id":"u-e"}"#.utf8)
            // A write refused on its precondition commits none of its effects.
            try await expectError(.notFound) {
                _ = try await store.put(
                    tenantId: TenantID(tenant), kind: .user, id: "u-e", body: body, precondition: .version(42), at: later, audit: nil,
                    effects: CommittedEffects(effects: effects, signals: signals, pendingPerStream: 2, audit: [audit]))
            }
            try expect(try await store.find(tokenHash: "e-pwd")?.familyRevokedAt == nil, "a refused write revokes nothing")
            try expect(try await store.pendingSignalCount(target: stream) == 1, "a refused write queues nothing")
            try expect(try await store.claimPolicyReplay(now: later, leaseUntil: later, owner: "o") == nil, "a refused write enqueues no replay")
            // A store failure in the middle of the effects (a message whose ID is taken) leaves neither the document nor any effect.
            let clash = OutboxMessage(
                id: "old", tenantId: tenant, enrollmentId: nil, targetUri: stream, payload: "{}", jti: "x", nextAttemptAt: later, createdAt: later)
            do {
                _ = try await store.put(
                    tenantId: TenantID(tenant), kind: .user, id: "u-e", body: body, precondition: .none, at: later, audit: audit,
                    effects: CommittedEffects(effects: effects, signals: [clash], audit: [audit]))
                try expect(false, "a clashing message fails the write")
            } catch is StorageError {}
            try expect(try await store.document(tenantId: TenantID(tenant), kind: .user, id: "u-e") == nil, "the failed write stored no document")
            try expect(try await store.find(tokenHash: "e-pwd")?.familyRevokedAt == nil, "nor revoked a family")
            try expect(try await store.session(idHash: "s-pwd") != nil, "nor ended a session")
            try expect(
                !(try await store.isAccessTokenVoid(jti: "j", tenantId: TenantID(tenant), userId: "u-e", issuedAt: now)), "nor set a void-before time")
            try expect(try await store.auditRecords(tenantId: TenantID(tenant), limit: 10, before: nil).isEmpty, "nor audited")
            // The write and its effects, together.
            try await store.put(
                tenantId: TenantID(tenant), kind: .user, id: "u-e", body: body, precondition: .none, at: later, audit: nil,
                effects: CommittedEffects(effects: effects, signals: signals, pendingPerStream: 2, audit: [audit]))
            try expect(try await store.find(tokenHash: "e-pwd")?.familyRevokedAt != nil, "the password's family is revoked")
            try expect(try await store.find(tokenHash: "e-app")?.familyRevokedAt != nil, "password and app code used the password too")
            try expect(try await store.find(tokenHash: "e-fido")?.familyRevokedAt == nil, "a passkey family is not")
            try expect(try await store.find(tokenHash: "e-tap")?.familyRevokedAt == nil, "a temporary access pass family is not")
            try expect(try await store.find(tokenHash: "o-pwd")?.familyRevokedAt == nil, "another user's is not")
            try expect(try await store.session(idHash: "s-pwd") == nil, "the password's session ended")
            try expect(try await store.session(idHash: "s-fido") != nil, "the passkey's session stays")
            try expect(try await store.session(idHash: "s-other") != nil, "another user's session stays")
            try expect(try await store.pendingSignals(target: stream, limit: 10).map(\.jti) == ["n1", "n2"], "signals queued within the bound")
            try expect(try await store.auditRecords(tenantId: TenantID(tenant), limit: 10, before: nil).map(\.documentId) == ["u-e"], "audited with it")
            // Void before: to the millisecond, per user; app-only tokens answer to their jti alone.
            let issuedBefore = later.addingTimeInterval(-0.001)
            let issuedAfter = Date(epochMilliseconds: later.epochMilliseconds + 1)
            try expect(try await store.isAccessTokenVoid(jti: "j1", tenantId: TenantID(tenant), userId: "u-e", issuedAt: issuedBefore), "issued before: void")
            try expect(try await store.isAccessTokenVoid(jti: "j2", tenantId: TenantID(tenant), userId: "U-E", issuedAt: later), "issued at the time: void")
            try expect(
                !(try await store.isAccessTokenVoid(jti: "j3", tenantId: TenantID(tenant), userId: "u-e", issuedAt: issuedAfter)),
                "issued a millisecond after, in the same second: honoured")
            try expect(!(try await store.isAccessTokenVoid(jti: "j4", tenantId: TenantID(tenant), userId: "u-o", issuedAt: now)), "another user: honoured")
            try await store.revokeAccessToken(jti: "app", expiresAt: later.addingTimeInterval(60))
            try expect(try await store.isAccessTokenVoid(jti: "app", tenantId: TenantID(tenant), userId: nil, issuedAt: later), "by jti")
            try expect(!(try await store.isAccessTokenVoid(jti: "app2", tenantId: TenantID(tenant), userId: nil, issuedAt: now)), "app-only: jti alone")
            // The other reaches: everything of a user, and one application's families (sessions stay).
            try await store.commit(
                CommittedEffects(
                    effects: ChangeEffects(
                        tenantId: TenantID(tenant), at: later,
                        revocations: [ChangeEffects.Revocation(userId: "u-e", reach: .application(clientId: "c-3"), voidsAccessTokens: false)])))
            try expect(try await store.find(tokenHash: "e-tap")?.familyRevokedAt != nil, "the app's family is revoked")
            try expect(try await store.find(tokenHash: "e-fido")?.familyRevokedAt == nil, "not the others")
            try expect(try await store.session(idHash: "s-fido") != nil, "sessions stay")
            try await store.commit(
                CommittedEffects(
                    effects: ChangeEffects(
                        tenantId: TenantID(tenant), at: later,
                        revocations: [ChangeEffects.Revocation(userId: "u-e", reach: .credential(.fido2), voidsAccessTokens: false)])
                ))
            try expect(try await store.find(tokenHash: "e-fido")?.familyRevokedAt != nil, "the passkey's family")
            try expect(try await store.session(idHash: "s-fido") == nil, "the passkey's session")
            try await store.commit(
                CommittedEffects(
                    effects: ChangeEffects(
                        tenantId: TenantID(tenant), at: later,
                        revocations: [ChangeEffects.Revocation(userId: "u-o", reach: .everything, voidsAccessTokens: true)])))
            try expect(try await store.find(tokenHash: "o-pwd")?.familyRevokedAt != nil, "every family")
            try expect(try await store.session(idHash: "s-other") == nil, "every session")
            try expect(try await store.isAccessTokenVoid(jti: "j5", tenantId: TenantID(tenant), userId: "u-o", issuedAt: now), "and their tokens void")
        },
        ConformanceCase(name: "conditional-access replays: one per policy (the oldest before kept), leased, completed with their effects") { store in
            let directory = DirectorySnapshot(
                tenant: Tenant(id: TenantID(tenant), domain: "t.test", displayName: "T"), revision: 1, users: [], groups: [], applications: [],
                appRoleAssignments: [], namedLocations: [])
            let text = #"""
                {"id": "a1000000-0000-4000-8000-0000000000e1", "displayName": "First", "state": "enabled",
                 "conditions": {"users": {"includeUsers": ["All"]}, "applications": {"includeApplications": ["All"]}},
                 "grantControls": {"operator": "OR", "builtInControls": ["block"]}}
                """#
            let first = try ConditionalAccessPolicy.parse(
                try unwrap(JSONValue.parse(Data(text.utf8)), "a policy"), directory: directory, generatedId: "a1000000-0000-4000-8000-0000000000e1", force: true
            )
            func change(_ before: ConditionalAccessPolicy?, at offset: TimeInterval) async throws {
                try await store.put(
                    tenantId: TenantID(tenant), kind: .conditionalAccessPolicy, id: "a1000000-0000-4000-8000-0000000000e1", body: Data("{}".utf8),
                    precondition: .none,
                    at: now.addingTimeInterval(offset), audit: nil,
                    effects: CommittedEffects(
                        effects: ChangeEffects(
                            tenantId: TenantID(tenant), at: now.addingTimeInterval(offset),
                            replays: [ChangeEffects.PolicyReplay(policyId: "a1000000-0000-4000-8000-0000000000e1", before: before)])))
            }
            try await change(first, at: 0)
            try await change(nil, at: 1)
            let due = try await store.nextPolicyReplay()
            try expect(due == now, "due at the first change, found \(String(describing: due))")
            let job = try unwrap(try await store.claimPolicyReplay(now: now.addingTimeInterval(2), leaseUntil: now.addingTimeInterval(60), owner: "a"), "a job")
            try expect(job.policyId == "a1000000-0000-4000-8000-0000000000e1" && job.generation == 1, "one job for both changes (generation \(job.generation))")
            let kept = try job.before.map { try TenantDocuments.decoder.decode(ConditionalAccessPolicy.self, from: $0) }
            try expect(kept?.displayName == "First", "the oldest before is kept")
            try expect(
                try await store.claimPolicyReplay(now: now.addingTimeInterval(3), leaseUntil: now.addingTimeInterval(60), owner: "b") == nil, "leased")
            try await family("r1")
            let found = CommittedEffects(
                effects: ChangeEffects(
                    tenantId: TenantID(tenant), at: now.addingTimeInterval(4),
                    revocations: [ChangeEffects.Revocation(userId: "u-r", reach: .application(clientId: "c-r"), voidsAccessTokens: false)]))
            // A change while it ran: its findings are not committed, and it runs again.
            try await change(nil, at: 3)
            try expect(!(try await store.completePolicyReplay(job, owner: "a", effects: found)), "a stale run does not complete")
            try expect(try await store.find(tokenHash: "r1")?.familyRevokedAt == nil, "and commits nothing")
            let again = try unwrap(
                try await store.claimPolicyReplay(now: now.addingTimeInterval(5), leaseUntil: now.addingTimeInterval(60), owner: "b"), "the job again")
            try expect(!(try await store.completePolicyReplay(again, owner: "a", effects: found)), "another owner's lease")
            try expect(try await store.completePolicyReplay(again, owner: "b", effects: found), "completed")
            try expect(try await store.find(tokenHash: "r1")?.familyRevokedAt != nil, "with its effects")
            try expect(try await store.nextPolicyReplay() == nil, "nothing waits")
            func family(_ hash: String) async throws { try await store.insert(record(hash, family: "f-\(hash)", user: "u-r", client: "c-r")) }
        },
        ConformanceCase(name: "a family keeps the flow it began with (device code)") { store in
            var token = record("dc1", family: "f-dc")
            token.transferMethod = .deviceCodeFlow
            try await store.insert(token)
            try expect(try await store.find(tokenHash: "dc1")?.transferMethod == .deviceCodeFlow, "kept")
            let successor = record("dc2", family: "f-dc")
            try expect(try await store.rotate(oldHash: "dc1", usedAt: now, successor: successor), "rotated")
            try expect(try await store.find(tokenHash: "dc2")?.transferMethod == .deviceCodeFlow, "its successors keep it")
            try await store.insert(record("plain", family: "f-plain"))
            try expect(try await store.find(tokenHash: "plain")?.transferMethod == nil, "none for others")
        },
        ConformanceCase(name: "a family keeps the device its sign-in proved; the device's effects end the families granted on it") { store in
            var token = record("dv1", family: "f-dv")
            let device = ProvenDevice(objectId: "d0000000-0000-4000-8000-000000000001", thumbprint: String(repeating: "ab", count: 32))
            token.device = device
            try await store.insert(token)
            try expect(try await store.find(tokenHash: "dv1")?.device == device, "kept")
            try expect(try await store.rotate(oldHash: "dv1", usedAt: now, successor: record("dv2", family: "f-dv")), "rotated")
            try expect(try await store.find(tokenHash: "dv2")?.device == device, "its successors keep it")
            try await store.insert(record("nodevice", family: "f-nodevice"))
            try expect(try await store.find(tokenHash: "nodevice")?.device == nil, "none for others")
            // The device falls out of compliance: the families granted on it end, whoever's, in the change's transaction.
            var shared = record("dv-other-user", family: "f-dv-other", user: "u-2")
            shared.device = device
            try await store.insert(shared)
            var elsewhere = record("dv-elsewhere", family: "f-dv-elsewhere")
            elsewhere.device = ProvenDevice(objectId: "d0000000-0000-4000-8000-000000000002", thumbprint: String(repeating: "cd", count: 32))
            try await store.insert(elsewhere)
            try await store.put(
                tenantId: TenantID(tenant), kind: .device, id: device.objectId.rawValue, body: Data("{}".utf8), precondition: .none, at: now, audit: nil,
                effects: CommittedEffects(effects: ChangeEffects(tenantId: TenantID(tenant), at: now, endsFamiliesOfDevices: [device.objectId])))
            try expect(try await store.find(tokenHash: "dv2")?.familyRevokedAt != nil, "the device's family ends")
            try expect(try await store.find(tokenHash: "dv-other-user")?.familyRevokedAt != nil, "another user's on the same device too")
            try expect(try await store.find(tokenHash: "dv-elsewhere")?.familyRevokedAt == nil, "another device's stays")
            try expect(try await store.find(tokenHash: "nodevice")?.familyRevokedAt == nil, "a family without a device stays")
        },
        ConformanceCase(name: "a wipe is one transaction: state, history, callbacks, token families and audit; a stale one writes nothing") { store in
            let enrollment = Enrollment(
                id: "w1", tenantId: TenantID(tenant), userId: "u-w", userPrincipalName: "u-w@t", clientId: "c-w", deviceId: "d-w", platform: .iOS,
                osVersion: "17", appVersion: "1", sdkVersion: "1", state: .compliant, complianceStatus: .compliant, policyVersion: "v",
                appliedPolicyVersion: "v", callbackUri: nil, enrolledAt: now, lastCheckInAt: now, lapsesAt: now.addingTimeInterval(600), updatedAt: now)
            let stored = try await store.insertEnrollment(
                enrollment, history: EnrollmentHistoryEntry(at: now, event: .enrolled, fromStatus: nil, toStatus: nil),
                outbox: [], keepingAtMost: 20)
            try await store.insert(record("tw1", family: "fw1", user: "u-w", client: "c-w"))
            try await store.insert(record("tw2", family: "fw2", user: "u-w", client: "c-w"))
            try await store.insert(record("tw3", family: "fw3", user: "u-w", client: "other"))
            var wiped = stored
            wiped.state = .wipePending
            wiped.complianceStatus = .wiped
            let message = OutboxMessage(
                id: "mw1", tenantId: tenant, enrollmentId: "w1", targetUri: "https://r.example/c", payload: "p", jti: "jw1",
                nextAttemptAt: now, createdAt: now)
            let audit = AuditRecord(
                tenantId: TenantID(tenant), at: now, actor: "admin", action: .wipe, kind: .enrollment, documentId: "w1", before: nil, after: .object([:]))
            let wipeEffects = CommittedEffects(
                effects: ChangeEffects(
                    tenantId: TenantID(tenant), at: now,
                    revocations: [ChangeEffects.Revocation(userId: "u-w", reach: .application(clientId: "c-w"), voidsAccessTokens: false)]),
                audit: [audit])
            // A stale revision changes nothing at all: no families revoked, no audit, no callback.
            try expect(
                try await store.updateEnrollment(
                    wiped, expectedRevision: 99, history: EnrollmentHistoryEntry(at: now, event: .wipeRequested, fromStatus: nil, toStatus: nil),
                    outbox: [message], effects: wipeEffects) == nil, "stale")
            try expect(try await store.find(tokenHash: "tw1")?.familyRevokedAt == nil, "a refused wipe revokes nothing")
            try expect(try await store.auditRecords(tenantId: TenantID(tenant), limit: 10, before: nil).isEmpty, "a refused wipe audits nothing")
            try expect(try await store.outboxMessages(tenantId: tenant, state: nil, limit: 10).isEmpty, "a refused wipe queues nothing")
            let done = try await store.updateEnrollment(
                wiped, expectedRevision: stored.revision,
                history: EnrollmentHistoryEntry(at: now, event: .wipeRequested, fromStatus: nil, toStatus: nil),
                outbox: [message], effects: wipeEffects)
            try expect(done?.state == .wipePending, "wiped")
            let tw1 = try await store.find(tokenHash: "tw1")
            let tw2 = try await store.find(tokenHash: "tw2")
            try expect(tw1?.familyRevokedAt != nil && tw2?.familyRevokedAt != nil, "the account's families at the client are revoked")
            try expect(try await store.find(tokenHash: "tw3")?.familyRevokedAt == nil, "other clients' families are not")
            try expect(try await store.auditRecords(tenantId: TenantID(tenant), limit: 10, before: nil).map(\.action) == [.wipe], "audited with it")
            try expect(try await store.enrollmentHistory(id: "w1").map(\.event) == [.enrolled, .wipeRequested], "history")
            try expect(try await store.outboxMessages(tenantId: tenant, state: .pending, limit: 10).map(\.id) == ["mw1"], "callback queued")
        },
        ConformanceCase(name: "the admin lists page by position: enrollments newest change first, callbacks newest first, no row twice or lost") { store in
            for index in 0..<7 {
                let at = now.addingTimeInterval(TimeInterval(index))
                let enrollment = Enrollment(
                    id: RecordID("p\(index)"), tenantId: TenantID(tenant), userId: ObjectID("u-p\(index)"), userPrincipalName: "p@t", clientId: "c-p",
                    deviceId: DeviceID("d-p\(index)"),
                    platform: .iOS,
                    osVersion: "17", appVersion: "1", sdkVersion: "1", state: .pending, complianceStatus: .policyNotApplied, policyVersion: "v",
                    appliedPolicyVersion: nil, callbackUri: nil, enrolledAt: at, lastCheckInAt: nil, lapsesAt: nil, updatedAt: at)
                let message = OutboxMessage(
                    id: "pm\(index)", tenantId: tenant, enrollmentId: "p\(index)", targetUri: "https://r.example/c", payload: "p",
                    jti: "jp\(index)", nextAttemptAt: at, createdAt: at)
                _ = try await store.insertEnrollment(
                    enrollment, history: EnrollmentHistoryEntry(at: at, event: .enrolled, fromStatus: nil, toStatus: nil),
                    outbox: [message], keepingAtMost: 20)
            }
            var seen: [String] = []
            for offset in stride(from: 0, to: 9, by: 3) {
                seen += try await store.enrollments(EnrollmentQuery(tenantId: TenantID(tenant), clientId: "c-p", limit: 3, offset: offset)).map(\.id.rawValue)
            }
            try expect(seen == (0..<7).reversed().map { "p\($0)" }, "three pages of enrollments, newest first: \(seen)")
            var messages: [String] = []
            for offset in stride(from: 0, to: 9, by: 3) {
                messages += try await store.outboxMessages(tenantId: tenant, state: .pending, limit: 3, offset: offset).map(\.id)
            }
            try expect(messages == (0..<7).reversed().map { "pm\($0)" }, "three pages of callbacks, newest first: \(messages)")
            try expect(
                try await store.enrollments(EnrollmentQuery(tenantId: TenantID(tenant), clientId: "c-p", limit: 3, offset: 7)).isEmpty, "past the end: nothing")
        },
        ConformanceCase(name: "outbox: leases, per-receiver order, back-off, dead letters, redelivery, next attempt, retention") { store in
            func enrollment(_ id: String) -> Enrollment {
                Enrollment(
                    id: RecordID(id), tenantId: TenantID(tenant), userId: ObjectID("u-\(id)"), userPrincipalName: "u@t", clientId: "c-o",
                    deviceId: DeviceID("d-\(id)"), platform: .iOS,
                    osVersion: "17", appVersion: "1", sdkVersion: "1", state: .pending, complianceStatus: .policyNotApplied, policyVersion: "v",
                    appliedPolicyVersion: nil, callbackUri: nil, enrolledAt: now, lastCheckInAt: nil, lapsesAt: nil, updatedAt: now)
            }
            func message(_ id: String, _ enrollment: String, _ target: String, at offset: TimeInterval = 0) -> OutboxMessage {
                OutboxMessage(
                    id: id, tenantId: tenant, enrollmentId: enrollment, targetUri: target, payload: id, jti: "j-\(id)",
                    nextAttemptAt: now.addingTimeInterval(offset), createdAt: now.addingTimeInterval(offset))
            }
            let history = EnrollmentHistoryEntry(at: now, event: .enrolled, fromStatus: nil, toStatus: nil)
            _ = try await store.insertEnrollment(
                enrollment("o1"), history: history, outbox: [message("a1", "o1", "https://a/c"), message("a2", "o1", "https://a/c", at: 1)], keepingAtMost: 20)
            _ = try await store.insertEnrollment(enrollment("o2"), history: history, outbox: [message("b1", "o2", "https://b/c")], keepingAtMost: 20)
            let later = now.addingTimeInterval(2)
            let first = try await store.claimOutbox(now: later, leaseUntil: later.addingTimeInterval(30), owner: "n1", limit: 10)
            try expect(Set(first.map(\.id)) == ["a1", "b1"], "only the oldest per (enrollment, receiver): \(first.map(\.id))")
            try expect(
                try await store.claimOutbox(now: later, leaseUntil: later.addingTimeInterval(30), owner: "n2", limit: 10).isEmpty,
                "leased ones are not claimed twice")
            try expect(try await store.nextOutboxAttempt(now: later) == later.addingTimeInterval(30), "next: when the leases end")
            // A node died holding the lease: after it, another node takes over.
            let takeover = try await store.claimOutbox(now: later.addingTimeInterval(31), leaseUntil: later.addingTimeInterval(61), owner: "n2", limit: 10)
            try expect(Set(takeover.map(\.id)) == ["a1", "b1"], "expired leases are claimable")
            try await store.completeOutbox(id: "a1", owner: "n1", at: later)  // the old owner's completion is ignored
            try expect(try await store.outboxMessages(tenantId: tenant, state: .delivered, limit: 10).isEmpty, "only the lease owner completes")
            try await store.completeOutbox(id: "a1", owner: "n2", at: later.addingTimeInterval(32))
            try await store.failOutbox(id: "b1", owner: "n2", attempts: 1, nextAttemptAt: later.addingTimeInterval(100), error: "HTTP 500")
            let next = try await store.claimOutbox(now: later.addingTimeInterval(33), leaseUntil: later.addingTimeInterval(63), owner: "n2", limit: 10)
            try expect(next.map(\.id) == ["a2"], "a1 done, so a2 is next; b1 backs off: \(next.map(\.id))")
            try await store.completeOutbox(id: "a2", owner: "n2", at: later.addingTimeInterval(33))
            try expect(try await store.nextOutboxAttempt(now: later.addingTimeInterval(34)) == later.addingTimeInterval(100), "next: b1's back-off")
            let retried = try await store.claimOutbox(now: later.addingTimeInterval(101), leaseUntil: later.addingTimeInterval(131), owner: "n2", limit: 10)
            try expect(retried.map(\.id) == ["b1"] && retried.first?.attempts == 1, "retried after its back-off")
            try await store.failOutbox(id: "b1", owner: "n2", attempts: 10, nextAttemptAt: nil, error: "HTTP 500")
            try expect(try await store.outboxMessages(tenantId: tenant, state: .deadLetter, limit: 10).map(\.id) == ["b1"], "dead letter")
            try expect(try await store.nextOutboxAttempt(now: later.addingTimeInterval(102)) == nil, "nothing pending")
            try expect(try await store.redeliverOutbox(id: "b1", tenantId: tenant, now: later.addingTimeInterval(200)), "redelivered")
            try expect(!(try await store.redeliverOutbox(id: "b1", tenantId: "another", now: later)), "not across tenants")
            try expect(
                try await store.claimOutbox(now: later.addingTimeInterval(200), leaseUntil: later.addingTimeInterval(230), owner: "n3", limit: 10).map(\.id)
                    == ["b1"],
                "claimable again at once")
            try expect(try await store.purgeOutbox(before: later.addingTimeInterval(300)) == 2, "delivered a1 and a2 purged; pending b1 kept")
        },
        ConformanceCase(name: "throttles: read, atomic updates from many writers, clear, purge") { store in
            let keys = ["account:t:u", "ip:203.0.113.1"]
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        _ = try await store.updateThrottles(keys: keys) { key, current in
                            ThrottleCounter(
                                key: key, failures: (current?.failures ?? 0) + 1, windowStart: now, locks: 0, lockedUntil: nil,
                                expiresAt: now.addingTimeInterval(600))
                        }
                    }
                }
                try await group.waitForAll()
            }
            let counters = try await store.throttles(keys: keys + ["ip:unknown"])
            try expect(Set(counters.map(\.key)) == Set(keys) && counters.allSatisfy { $0.failures == 20 }, "no lost update: \(counters.map(\.failures))")
            try await store.clearThrottle(key: keys[0])
            try expect(try await store.throttles(keys: keys).map(\.key) == [keys[1]], "cleared")
            try expect(try await store.purgeThrottles(before: now.addingTimeInterval(601)) == 1, "purged after expiry")
        },
        ConformanceCase(name: "sessions: insert, read, touch, per-user cap, delete, delete a user's, purge") { store in
            func session(_ id: String, user: String = "u-1", seen offset: TimeInterval = 0, lifetime: TimeInterval = 3600) -> SessionRecord {
                SessionRecord(
                    idHash: id, tenantId: TenantID(tenant), userId: ObjectID(user), methods: ["pwd"], authTime: now, createdAt: now,
                    lastSeenAt: now.addingTimeInterval(offset), expiresAt: now.addingTimeInterval(lifetime))
            }
            try await store.insertSession(session("s1", seen: 1), keepingAtMost: 2)
            try await store.insertSession(session("s2", seen: 2), keepingAtMost: 2)
            try await store.insertSession(session("s3", user: "u-2"), keepingAtMost: 2)
            try expect(try await store.session(idHash: "s1") == session("s1", seen: 1), "round-trip")
            try await store.touchSession(idHash: "s1", at: now.addingTimeInterval(10))
            try expect(try await store.session(idHash: "s1")?.lastSeenAt == now.addingTimeInterval(10), "touched")
            try await store.upgradeSession(idHash: "s1", methods: ["pwd", "mfa"], authTime: now.addingTimeInterval(11), at: now.addingTimeInterval(11))
            let upgraded = try await store.session(idHash: "s1")
            try expect(
                upgraded?.methods == ["pwd", "mfa"] && upgraded?.authTime == now.addingTimeInterval(11) && upgraded?.lastSeenAt == now.addingTimeInterval(11),
                "step-up recorded")
            try await store.insertSession(session("s4", seen: 5), keepingAtMost: 2)
            try expect(try await store.session(idHash: "s2") == nil, "the least recently seen session of the user goes beyond the cap")
            for kept in ["s1", "s3", "s4"] { try expect(try await store.session(idHash: kept) != nil, "\(kept) kept") }
            try await store.deleteSession(idHash: "s4")
            try expect(try await store.session(idHash: "s4") == nil, "deleted")
            try expect(try await store.deleteSessions(tenantId: TenantID(tenant), userId: "U-1") == 1, "a user's sessions, by ID in any case")
            try await store.insertSession(session("s5", user: "u-3", lifetime: 10), keepingAtMost: 5)
            try expect(try await store.purgeInteractive(before: now.addingTimeInterval(11)) == 1, "expired session purged")
            try expect(try await store.session(idHash: "s3") != nil, "live session kept")
        },
        ConformanceCase(name: "authorization codes: redeemed once, atomically; a replay returns what the first redemption issued") { store in
            let request = AuthorizationRequest(
                tenantId: tenant, clientId: "c-1", redirectUri: "msauth.x://auth", scope: "openid", state: "s", nonce: "n", codeChallenge: "x",
                responseMode: .query, prompt: nil, loginHint: nil, domainHint: nil, claims: ClaimsRequest(capabilities: ["protapp"]), platform: .iOS)
            let code = AuthorizationCodeRecord(
                codeHash: "h1", request: request, userId: "u-1", methods: ["pwd"], authTime: now, expiresAt: now.addingTimeInterval(60))
            try await store.insertAuthorizationCode(code)
            try expect(
                try await store.redeemAuthorizationCode(codeHash: "nope", at: now, familyId: "f", accessTokenId: "j", accessTokenExpiresAt: now) == nil,
                "unknown")
            let winners = try await withThrowingTaskGroup(of: AuthorizationCodeRecord?.self) { group in
                for index in 0..<8 {
                    group.addTask {
                        try await store.redeemAuthorizationCode(
                            codeHash: "h1", at: now.addingTimeInterval(1), familyId: "f\(index)", accessTokenId: "j\(index)",
                            accessTokenExpiresAt: now.addingTimeInterval(3600))
                    }
                }
                return try await group.reduce(into: [AuthorizationCodeRecord]()) { if let found = $1 { $0.append(found) } }
            }
            try expect(winners.count == 8 && winners.filter { $0.usedAt == nil }.count == 1, "exactly one first redemption: \(winners.map(\.usedAt))")
            let first = try unwrap(winners.first { $0.usedAt == nil }, "a first redemption")
            try expect(first.request == request && first.methods == ["pwd"] && first.authTime == now, "the request round-trips")
            let replay = try unwrap(
                try await store.redeemAuthorizationCode(
                    codeHash: "h1", at: now.addingTimeInterval(5), familyId: "g", accessTokenId: "k",
                    accessTokenExpiresAt: now), "a replay finds the code")
            try expect(
                replay.usedAt == now.addingTimeInterval(1) && replay.familyId != "g" && replay.familyId?.hasPrefix("f") == true,
                "a replay sees the first redemption's family: \(String(describing: replay.familyId))")
            try expect(try await store.purgeInteractive(before: now.addingTimeInterval(61)) == 0, "a used code is kept a day for replay detection")
            try expect(try await store.purgeInteractive(before: now.addingTimeInterval(61 + 86400)) == 1, "then purged")
        },
        ConformanceCase(name: "device codes: pending, poll pacing, decide once, consume once, count, purge") { store in
            let code = DeviceCodeRecord(
                deviceCodeHash: "d1", userCode: "BCDFGHJK", tenantId: TenantID(tenant), clientId: "c-1", scope: "openid", claims: nil,
                interval: 5, expiresAt: now.addingTimeInterval(900), clientAddress: "ip:192.0.2.1")
            let roomy = DeviceCodeLimits(perTenant: 10, perClient: 10, perAddress: 10)
            try expect(try await store.insertDeviceCode(code, limits: roomy, now: now) == nil, "inserted")
            try expect(
                try await store.insertDeviceCode(
                    DeviceCodeRecord(
                        deviceCodeHash: "d2", userCode: "LMNPQRST", tenantId: TenantID(tenant), clientId: "c-1", scope: "openid",
                        claims: nil, interval: 5, expiresAt: now.addingTimeInterval(10)), limits: roomy, now: now) == nil,
                "inserted without an address")
            try expect(try await store.pendingDeviceCodes(tenantId: tenant, now: now) == 2, "two pending")
            try expect(try await store.pendingDeviceCodes(tenantId: tenant, now: now.addingTimeInterval(11)) == 1, "expired ones do not count")
            try expect(try await store.deviceCode(userCode: "BCDFGHJK") == code, "round-trip")
            let first = try await store.pollDeviceCode(deviceCodeHash: "d1", at: now)
            try expect(first?.tooFast == false && first?.record.state == .pending, "first poll")
            try expect(try await store.pollDeviceCode(deviceCodeHash: "d1", at: now.addingTimeInterval(2))?.tooFast == true, "too fast")
            try expect(try await store.pollDeviceCode(deviceCodeHash: "d1", at: now.addingTimeInterval(8))?.tooFast == false, "paced")
            try expect(try await store.pollDeviceCode(deviceCodeHash: "nope", at: now) == nil, "unknown")
            try expect(
                try await store.decideDeviceCode(userCode: "BCDFGHJK", approve: true, userId: "u-1", methods: ["pwd"], authTime: now, now: now), "approved")
            try expect(
                !(try await store.decideDeviceCode(userCode: "BCDFGHJK", approve: false, userId: nil, methods: [], authTime: nil, now: now)), "decided once")
            try expect(
                !(try await store.decideDeviceCode(
                    userCode: "LMNPQRST", approve: true, userId: "u-1", methods: ["pwd"], authTime: now, now: now.addingTimeInterval(11))),
                "not after expiry")
            let approved = try await store.deviceCode(userCode: "BCDFGHJK")
            try expect(
                approved?.state == .approved && approved?.userId == "u-1" && approved?.methods == ["pwd"] && approved?.authTime == now, "approval recorded")
            let consumed = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<6 { group.addTask { try await store.consumeDeviceCode(deviceCodeHash: "d1") } }
                return try await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
            }
            try expect(consumed == 1, "consumed once: \(consumed)")
            try expect(try await store.purgeInteractive(before: now.addingTimeInterval(901)) == 2, "both purged after expiry")
        },
        ConformanceCase(name: "device codes: tenant, client and address quotas are exact under concurrency; expired codes free their places") { store in
            func code(_ index: Int, tenant: String = "t-q", client: String = "c-1", address: String, expires: TimeInterval = 900) -> DeviceCodeRecord {
                DeviceCodeRecord(
                    deviceCodeHash: "q\(tenant)\(index)", userCode: "Q\(tenant)\(index)", tenantId: TenantID(tenant), clientId: AppID(client), scope: "openid",
                    claims: nil, interval: 5, expiresAt: now.addingTimeInterval(expires), clientAddress: address)
            }
            func concurrently(_ codes: [DeviceCodeRecord], _ limits: DeviceCodeLimits) async throws -> [DeviceCodeQuota?] {
                try await withThrowingTaskGroup(of: DeviceCodeQuota?.self) { group in
                    for item in codes { group.addTask { try await store.insertDeviceCode(item, limits: limits, now: now) } }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
            }
            // One address asking 40 times at once gets exactly its 5.
            let byAddress = try await concurrently(
                (0..<40).map { code($0, address: "ip:203.0.113.9") }, DeviceCodeLimits(perTenant: 100, perClient: 100, perAddress: 5))
            try expect(byAddress.filter { $0 == nil }.count == 5 && byAddress.filter { $0 == .address }.count == 35, "address quota: \(byAddress)")
            // 40 addresses of one client: exactly the client's 12; then another client still gets its own, up to the tenant's 20.
            let byClient = try await concurrently(
                (100..<140).map { code($0, address: "ip:198.51.100.\($0)") }, DeviceCodeLimits(perTenant: 20, perClient: 12, perAddress: 5))
            try expect(
                byClient.filter { $0 == nil }.count == 12 - 5 && byClient.filter { $0 == .client }.count == 33, "client quota (5 pending already): \(byClient)")
            let byTenant = try await concurrently(
                (200..<240).map { code($0, client: "c-2", address: "ip:198.51.100.\($0)") }, DeviceCodeLimits(perTenant: 20, perClient: 100, perAddress: 5))
            try expect(byTenant.filter { $0 == nil }.count == 20 - 12 && byTenant.filter { $0 == .tenant }.count == 32, "tenant quota: \(byTenant)")
            try expect(try await store.pendingDeviceCodes(tenantId: "t-q", now: now) == 20, "exactly the tenant's limit is pending")
            // Another tenant is not affected; an address's codes count in every tenant together.
            try expect(
                try await store.insertDeviceCode(
                    code(1, tenant: "t-other", address: "ip:192.0.2.200"), limits: DeviceCodeLimits(perTenant: 20, perClient: 12, perAddress: 5), now: now)
                    == nil,
                "another tenant has its own places")
            try expect(
                try await store.insertDeviceCode(
                    code(2, tenant: "t-other", address: "ip:203.0.113.9"), limits: DeviceCodeLimits(perTenant: 20, perClient: 12, perAddress: 5), now: now)
                    == .address,
                "the address already has 5 pending in t-q")
            // Expired codes do not count.
            try expect(
                try await store.insertDeviceCode(
                    code(3, tenant: "t-other", address: "ip:203.0.113.9"), limits: DeviceCodeLimits(perTenant: 20, perClient: 12, perAddress: 5),
                    now: now.addingTimeInterval(901)) == nil, "the address's codes expired")
        },
        ConformanceCase(name: "second factors: one per kind per user, metadata round-trip, a step used once (also under concurrency), delete, who has one") {
            store in
            func method(_ id: String, user: String) -> AuthenticationMethodRecord {
                AuthenticationMethodRecord(
                    id: RecordID(id), tenantId: TenantID(tenant), userId: ObjectID(user), kind: .totp, sealedSecret: Data([1, 2, 3, 250]), createdAt: now)
            }
            try expect(try await store.insertAuthenticationMethod(method("M-1", user: "U-1")), "stored")
            try expect(!(try await store.insertAuthenticationMethod(method("m-2", user: "u-1"))), "a second TOTP for the same user is refused, not replacing")
            try expect(try await store.insertAuthenticationMethod(method("m-3", user: "u-2")), "another user's")
            try expect(
                try await store.authenticationMethods(tenantId: TenantID(tenant), userId: "u-1") == [method("m-1", user: "u-1")], "round-trip, IDs lower-cased")
            try expect(try await store.usersWithAuthenticationMethods(tenantId: TenantID(tenant)) == ["u-1", "u-2"], "who has one")
            try expect(try await store.useAuthenticationMethod(id: "m-1", step: 100, at: now), "first use of a step")
            try expect(!(try await store.useAuthenticationMethod(id: "m-1", step: 100, at: now)), "the same step again is a replay")
            try expect(!(try await store.useAuthenticationMethod(id: "m-1", step: 99, at: now)), "an earlier step too")
            let used = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<6 { group.addTask { try await store.useAuthenticationMethod(id: "m-1", step: 101, at: now) } }
                return try await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
            }
            try expect(used == 1, "one of six concurrent uses of a code wins: \(used)")
            let stored = try await store.authenticationMethods(tenantId: TenantID(tenant), userId: "u-1").first
            try expect(stored?.lastUsedStep == 101 && stored?.lastUsedAt == now, "last use recorded")
            try expect(!(try await store.deleteAuthenticationMethod(tenantId: TenantID(tenant), userId: "u-2", id: "m-1")), "only the owner's row")
            try expect(try await store.deleteAuthenticationMethod(tenantId: TenantID(tenant), userId: "u-1", id: "m-1"), "deleted")
            try expect(try await store.insertAuthenticationMethod(method("m-4", user: "u-1")), "registers again after a reset")
        },
        ConformanceCase(
            name: "passkeys: a credential ID once in the installation, a per-user limit (also under concurrency), the counter recorded or the passkey suspect"
        ) { store in
            func passkey(_ id: String, user: String, tenant: String = tenant, credential: UInt8, count: Int64 = 0) -> PasskeyRecord {
                PasskeyRecord(
                    id: RecordID(id), tenantId: TenantID(tenant), userId: ObjectID(user), credentialId: Data([credential, 0xfe, 0x01]),
                    publicKey: Data([0xa5, 0x01, 0x02]),
                    algorithm: -7, signCount: count, aaguid: UUID(uuidString: "ADCE0002-35BC-C60A-648B-0B25F1F05503")!, backupEligible: true, backedUp: false,
                    attestation: .none, transports: ["internal", "hybrid"], displayName: "Phone", createdAt: now)
            }
            try expect(try await store.insertPasskey(passkey("P-1", user: "U-1", credential: 1, count: 5), limit: 3), "stored")
            try expect(
                !(try await store.insertPasskey(passkey("p-2", user: "u-2", tenant: "t-elsewhere", credential: 1), limit: 3)),
                "a credential ID is registered once, in any tenant")
            try expect(
                try await store.passkeys(tenantId: TenantID(tenant), userId: "u-1") == [passkey("p-1", user: "u-1", credential: 1, count: 5)],
                "round trip, IDs lower-cased")
            try expect(try await store.passkey(credentialId: Data([1, 0xfe, 0x01]))?.id == "p-1", "found by credential ID")
            try expect(try await store.passkey(credentialId: Data([9])) == nil, "an unknown credential ID")
            try expect(try await store.usersWithAuthenticationMethods(tenantId: TenantID(tenant)).contains("u-1"), "a passkey counts as a method")
            try expect(try await store.usersWithPasskeys(tenantId: TenantID(tenant)) == ["u-1"], "who has a passkey")
            // The limit holds when registrations race.
            let stored = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<6 {
                    group.addTask { try await store.insertPasskey(passkey("r-\(index)", user: "u-race", credential: UInt8(100 + index)), limit: 3) }
                }
                return try await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
            }
            let racers = try await store.passkeys(tenantId: TenantID(tenant), userId: "u-race")
            let raced = racers.count
            try expect(stored == 3 && raced == 3, "three of six concurrent registrations: \(stored), \(raced) stored")
            // Which three won the race is the store's business: the counter checks below use one that did.
            let counterless = try unwrap(racers.first?.id, "a raced passkey")
            // The counter moves forward or the passkey becomes suspect.
            try expect(try await store.usePasskey(id: "p-1", signCount: 6, backedUp: true, at: now.addingTimeInterval(1)) == .recorded, "forward")
            var current = try await store.passkeys(tenantId: TenantID(tenant), userId: "u-1").first
            try expect(current?.signCount == 6 && current?.backedUp == true && current?.lastUsedAt == now.addingTimeInterval(1), "recorded")
            try expect(try await store.usePasskey(id: "p-1", signCount: 6, backedUp: true, at: now.addingTimeInterval(2)) == .refused, "the same count again")
            current = try await store.passkeys(tenantId: TenantID(tenant), userId: "u-1").first
            try expect(current?.suspectSince == now.addingTimeInterval(2) && current?.signCount == 6, "marked suspect, counter kept")
            try expect(
                try await store.usePasskey(id: "p-1", signCount: 50, backedUp: true, at: now.addingTimeInterval(3)) == .refused,
                "a suspect passkey stays refused")
            try expect(!(try await store.clearPasskeySuspicion(tenantId: TenantID(tenant), userId: "u-2", id: "p-1")), "only the owner's")
            try expect(try await store.clearPasskeySuspicion(tenantId: TenantID(tenant), userId: "u-1", id: "p-1"), "an admin clears it")
            try expect(try await store.usePasskey(id: "p-1", signCount: 51, backedUp: false, at: now) == .recorded, "and it signs in again")
            try expect(
                try await store.usePasskey(id: counterless, signCount: 0, backedUp: false, at: now) == .recorded, "an authenticator that never counts")
            try expect(try await store.usePasskey(id: counterless, signCount: 0, backedUp: false, at: now) == .recorded, "never counts, again")
            try expect(try await store.usePasskey(id: "nothing", signCount: 1, backedUp: false, at: now) == .unknown, "no such passkey")
            let races = try await withThrowingTaskGroup(of: PasskeyUse.self) { group in
                for _ in 0..<6 { group.addTask { try await store.usePasskey(id: "p-1", signCount: 52, backedUp: false, at: now) } }
                return try await group.reduce(into: [PasskeyUse]()) { $0.append($1) }
            }
            try expect(races.filter { $0 == .recorded }.count == 1, "one of six concurrent uses of one counter value: \(races)")
            try expect(try await store.renamePasskey(tenantId: TenantID(tenant), userId: "u-1", id: "p-1", displayName: "Laptop"), "renamed")
            try expect(try await store.passkeys(tenantId: TenantID(tenant), userId: "u-1").first?.displayName == "Laptop", "the new name")
            try expect(!(try await store.deletePasskey(tenantId: TenantID(tenant), userId: "u-2", id: "p-1")), "only the owner's")
            try expect(try await store.deletePasskey(tenantId: TenantID(tenant), userId: "u-1", id: "p-1"), "deleted")
            try expect(try await store.insertPasskey(passkey("p-3", user: "u-1", credential: 1), limit: 3), "its credential ID is free again")
        },
        ConformanceCase(name: "temporary access passes: one per user (a new one replaces the old), a one-time pass used once even when sign-ins race") {
            store in
            func pass(_ id: String, user: String, once: Bool) -> TemporaryAccessPassRecord {
                TemporaryAccessPassRecord(
                    id: RecordID(id), tenantId: TenantID(tenant), userId: ObjectID(user), passHash: "hmac-sha256:\(id.lowercased())", createdAt: now,
                    startAt: now.addingTimeInterval(60),
                    lifetimeMinutes: 60, usableOnce: once)
            }
            try expect(try await store.replaceTemporaryAccessPass(pass("T-1", user: "U-1", once: true)) == nil, "the first replaces nothing")
            try expect(try await store.temporaryAccessPass(tenantId: TenantID(tenant), userId: "u-1") == pass("t-1", user: "u-1", once: true), "round trip")
            try expect(try await store.temporaryAccessPass(tenantId: "t-elsewhere", userId: "u-1") == nil, "only in its tenant")
            let replaced = try await store.replaceTemporaryAccessPass(pass("t-2", user: "u-1", once: true))
            let current = try await store.temporaryAccessPass(tenantId: TenantID(tenant), userId: "u-1")
            try expect(replaced?.id == "t-1" && current?.id == "t-2", "replaced")
            try expect(!(try await store.useTemporaryAccessPass(id: "t-1", at: now)), "the replaced one is gone")
            let uses = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<6 { group.addTask { try await store.useTemporaryAccessPass(id: "t-2", at: now.addingTimeInterval(Double(index))) } }
                return try await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
            }
            try expect(uses == 1, "one of six concurrent sign-ins with a one-time pass: \(uses)")
            let used = try await store.temporaryAccessPass(tenantId: TenantID(tenant), userId: "u-1")
            try expect(used?.usedAt != nil && used?.usability(at: now.addingTimeInterval(120)) == .oneTimePassUsed, "used up")
            _ = try await store.replaceTemporaryAccessPass(pass("t-3", user: "u-2", once: false))
            try expect(try await store.useTemporaryAccessPass(id: "t-3", at: now), "multi-use")
            try expect(try await store.useTemporaryAccessPass(id: "t-3", at: now.addingTimeInterval(5)), "multi-use, again")
            try expect(try await store.temporaryAccessPass(tenantId: TenantID(tenant), userId: "u-2")?.usedAt == now.addingTimeInterval(5), "the last use")
            try expect(!(try await store.deleteTemporaryAccessPass(tenantId: TenantID(tenant), userId: "u-1", id: "t-3")), "only the owner's")
            try expect(try await store.deleteTemporaryAccessPass(tenantId: TenantID(tenant), userId: "u-2", id: "t-3"), "deleted")
            try expect(try await store.temporaryAccessPass(tenantId: TenantID(tenant), userId: "u-2") == nil, "gone")
        },
        ConformanceCase(name: "access token revocation by jti") { store in
            try expect(!(try await store.isAccessTokenRevoked(jti: "j1")), "not revoked before")
            try await store.revokeAccessToken(jti: "j1", expiresAt: now.addingTimeInterval(60))
            try await store.revokeAccessToken(jti: "j1", expiresAt: now.addingTimeInterval(60))
            try expect(try await store.isAccessTokenRevoked(jti: "j1"), "revoked after, idempotently")
        },
        ConformanceCase(name: "DPoP replay cache: a proof is claimed once, forgotten after it expires; a family's key is kept") { store in
            try expect(!(try await store.isProofClaimed(key: "p1", now: now)), "not claimed before")
            try expect(try await store.claimProof(key: "p1", expiresAt: now.addingTimeInterval(61), now: now), "first use")
            try expect(try await store.isProofClaimed(key: "p1", now: now), "claimed, read without claiming")
            try expect(!(try await store.isProofClaimed(key: "p1", now: now.addingTimeInterval(62))), "not live after it expires")
            try expect(!(try await store.isProofClaimed(key: "p9", now: now)), "reading claims nothing")
            try expect(try await store.claimProof(key: "p9", expiresAt: now.addingTimeInterval(61), now: now), "so p9 is still fresh")
            try expect(!(try await store.claimProof(key: "p1", expiresAt: now.addingTimeInterval(61), now: now)), "replay")
            try expect(try await store.claimProof(key: "p2", expiresAt: now.addingTimeInterval(200), now: now), "another proof")
            _ = try await store.purgeExpired(before: now.addingTimeInterval(100))
            try expect(
                try await store.claimProof(key: "p1", expiresAt: now.addingTimeInterval(161), now: now.addingTimeInterval(100)), "forgotten after it expired")
            try expect(
                !(try await store.claimProof(key: "p2", expiresAt: now.addingTimeInterval(200), now: now.addingTimeInterval(100))), "kept until it expires")
            // Concurrent claims (gathered into one statement on PostgreSQL): one of many claims of a key wins, distinct keys all do.
            let same = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<40 { group.addTask { try await store.claimProof(key: "same", expiresAt: now.addingTimeInterval(61), now: now) } }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            try expect(same == 1, "exactly one of 40 concurrent claims of one key wins (\(same))")
            let distinct = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<40 {
                    group.addTask { try await store.claimProof(key: "distinct-\(index)", expiresAt: now.addingTimeInterval(61), now: now) }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            try expect(distinct == 40, "40 concurrent claims of distinct keys all win (\(distinct))")
            let bound = RefreshTokenRecord(
                tokenHash: "dpop-h1", familyId: "dpop-f1", tenantId: "t", userId: "u", clientId: "c", scope: "openid", issuedAt: now,
                expiresAt: now.addingTimeInterval(3600), dpopThumbprint: "jkt-1")
            try await store.insert(bound)
            try expect(try await store.find(tokenHash: "dpop-h1")?.dpopThumbprint == "jkt-1", "the family's key")
            var successor = bound
            successor.tokenHash = "dpop-h2"
            try expect(try await store.rotate(oldHash: "dpop-h1", usedAt: now, successor: successor), "rotated")
            try expect(try await store.find(tokenHash: "dpop-h2")?.dpopThumbprint == "jkt-1", "the successor keeps the family's key")
            var unbound = bound
            unbound.tokenHash = "dpop-h3"
            unbound.familyId = "dpop-f2"
            unbound.dpopThumbprint = nil
            try await store.insert(unbound)
            var binding = unbound
            binding.tokenHash = "dpop-h4"
            binding.dpopThumbprint = "jkt-2"
            try expect(try await store.rotate(oldHash: "dpop-h3", usedAt: now, successor: binding), "rotated")
            try expect(try await store.find(tokenHash: "dpop-h4")?.dpopThumbprint == "jkt-2", "an unbound family is bound at a rotation with a key")
        },
    ]
}
