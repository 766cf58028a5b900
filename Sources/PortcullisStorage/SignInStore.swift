public import Foundation
public import PortcullisCore

/// The sign-in log.
public protocol SignInStore: Sendable {
    /// Appends records in one transaction.
    func appendSignIns(_ records: [SignInRecord]) async throws
    /// Matching records, newest first, with their cursors.
    func signIns(_ query: SignInQuery) async throws -> [(cursor: Int64, record: SignInRecord)]
    /// Deletes records created before `before`; returns how many.
    @discardableResult
    func purgeSignIns(before: Date) async throws -> Int
}
