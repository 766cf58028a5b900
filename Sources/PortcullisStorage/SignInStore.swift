public import Foundation
public import PortcullisCore

/// The sign-in log (issue 32: one record per interactive sign-in and refusal, aggregates for the rest; retention by age
/// and by size).
public protocol SignInStore: Sendable {
    /// Appends the records kept one by one, and counts each aggregate into the stored aggregate of its tenant, key and
    /// window (storing it as a new one when there is none), all in one transaction; new rows take cursors in the
    /// entries' order (the log reads newest first). Another node may count into the same aggregate at the same time: the
    /// counts add up.
    func appendSignIns(_ entries: [SignInAggregation.Entry]) async throws
    /// Matching records, newest first, with their cursors.
    func signIns(_ query: SignInQuery) async throws -> [(cursor: Int64, record: SignInRecord)]
    /// Deletes records whose last sign-in was before `before`; returns how many.
    @discardableResult
    func purgeSignIns(before: Date) async throws -> Int
    /// What the log takes in the store, as the store counts it (bytes: each record's text and a fixed cost for its row
    /// and index entries, `StoredJSON.signInRowOverhead`).
    func signInBytes() async throws -> Int64
    /// Deletes the oldest records, at most `limit`, while the log takes more than `bytes`; returns how many.
    @discardableResult
    func trimSignIns(toBytes bytes: Int64, limit: Int) async throws -> Int
}

extension SignInStore {
    /// The newest `limit` records of a tenant that overlap [from, to], page by page (a store answers at most 1,000 at a
    /// time): what impact analysis and a conditional-access change replay.
    public func newestSignIns(tenantId: TenantID, from: Date, to: Date?, limit: Int) async throws -> [SignInRecord] {
        var records: [SignInRecord] = []
        var cursor: Int64?
        while records.count < limit {
            let wanted = min(1000, limit - records.count)
            let page = try await signIns(SignInQuery(tenantId: tenantId, from: from, to: to, limit: wanted, before: cursor))
            records += page.map(\.record)
            guard page.count == wanted, let last = page.last else { break }
            cursor = last.cursor
        }
        return records
    }

    /// Appends records one by one (no aggregates).
    public func appendSignIns(_ records: [SignInRecord]) async throws { try await appendSignIns(records.map(SignInAggregation.Entry.record)) }
}
