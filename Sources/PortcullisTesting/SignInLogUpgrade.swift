public import Foundation
public import PortcullisCore
public import PortcullisStorage

/// Migration 13 (issue 32) on either store: a sign-in record in the whole form stores wrote before it must read back as
/// it was, count in the log's size and go by age. Each store's test takes its database back to before the migration
/// (`downgrade`), writes `old` as it was written then, migrates, and runs `check`.
public enum SignInLogUpgrade {
    public static let old = SignInRecord(
        id: "old-1", createdDateTime: Date(timeIntervalSince1970: 1_800_000_000), correlationId: "c-old", tenantId: "t-1", userId: "u-1",
        userPrincipalName: "u@t", clientAppId: "app", resourceAppId: "res", resource: "api://res", grantType: "refresh_token",
        clientAppType: "mobileAppsAndDesktopClients", capabilities: ["protapp"], ipAddress: "192.0.2.1", platform: "iOS", appProtection: "compliant",
        conditionalAccessStatus: .success,
        appliedConditionalAccessPolicies: [
            Decision.AppliedPolicy(id: "p-1", displayName: "Applied then", result: .success, enforcedGrantControls: ["mfa"], conditionsNotSatisfied: []),
            Decision.AppliedPolicy(id: "p-2", displayName: "Not applied", result: .notApplied, enforcedGrantControls: [], conditionsNotSatisfied: [.users]),
        ],
        errorCode: nil, authenticationMethods: ["pwd", "mfa"])

    /// The statements (the same on both stores) that undo migration 13.
    public static let downgrade = [
        "DROP INDEX sign_ins_aggregate", "DROP TABLE sign_in_usage", "ALTER TABLE sign_ins DROP COLUMN count", "ALTER TABLE sign_ins DROP COLUMN last_at",
        "ALTER TABLE sign_ins DROP COLUMN last_correlation_id", "ALTER TABLE sign_ins DROP COLUMN aggregate_key",
        "ALTER TABLE sign_ins DROP COLUMN window_start", "ALTER TABLE sign_ins DROP COLUMN size", "ALTER TABLE authorization_codes DROP COLUMN silent",
        "DELETE FROM schema_migrations WHERE version = 13",
    ]

    /// `old` as the stores wrote it before.
    public static var oldText: String { (try? StoredJSON.text(of: old)) ?? "" }

    /// After the migration: `old` reads back whole (names and all), is found by its policy, counts in the log's size, sorts
    /// before a new record and goes by age.
    public static func check(_ store: any PortcullisStore) async throws {
        let read = try await store.signIns(SignInQuery(tenantId: "t-1", limit: 10))
        try expect(read.map(\.record) == [old], "read back whole: \(read.map(\.record))")
        try expect(read.first?.record.interactive == false, "a refresh, by its grant type")
        try expect(try await store.signIns(SignInQuery(tenantId: "t-1", policyId: "p-1", limit: 10)).count == 1, "found by its policy")
        let bytes = try await store.signInBytes()
        try expect(bytes == Int64(oldText.utf8.count + StoredJSON.signInRowOverhead), "counted in the log's size: \(bytes)")
        var new = old
        new.id = "new-1"
        new.createdDateTime = new.createdDateTime.addingTimeInterval(60)
        try await store.appendSignIns([new])
        try expect(try await store.signIns(SignInQuery(tenantId: "t-1", limit: 10)).map(\.record.id) == ["new-1", "old-1"], "newest first")
        try expect(try await store.purgeSignIns(before: old.createdDateTime.addingTimeInterval(1)) == 1, "goes by age")
        try expect(try await store.signIns(SignInQuery(tenantId: "t-1", limit: 10)).map(\.record.id) == ["new-1"], "the new one stays")
    }
}
