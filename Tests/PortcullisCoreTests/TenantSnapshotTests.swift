import Foundation
import PortcullisCore
import Testing

/// A tenant snapshot follows one document's change (issue 26): lists stay sorted by ID, and only what depends on the
/// changed kind is rebuilt.
@Suite("tenant snapshot")
struct TenantSnapshotTests {
    static let tenant = Tenant(id: "11111111-2222-4333-8444-555555555555", domain: "fabrikam.test", displayName: "F")

    static func user(_ n: Int) -> User {
        User(id: ObjectID(String(format: "aaaaaaaa-0000-4000-8000-%012d", n)), userPrincipalName: "u\(n)@fabrikam.test", displayName: "U\(n)")
    }

    @Test("upsert keeps a list sorted by ID: inserts in place, replaces, removes, ignores removing what is absent")
    func upsert() {
        var users: [User] = []
        for n in [5, 1, 9, 3] { TenantContents.upsert(Self.user(n), id: Self.user(n).id.rawValue, in: &users) }
        #expect(users.map(\.displayName) == ["U1", "U3", "U5", "U9"])
        var renamed = Self.user(5)
        renamed.displayName = "Five"
        TenantContents.upsert(renamed, id: renamed.id.rawValue, in: &users)
        TenantContents.upsert(User?.none, id: Self.user(3).id.rawValue, in: &users)
        TenantContents.upsert(User?.none, id: Self.user(7).id.rawValue, in: &users)
        #expect(users.map(\.displayName) == ["U1", "Five", "U9"])
    }

    @Test("a policy change recompiles the policy set and keeps the directory; a user change rebuilds the directory and keeps the policies")
    func applying() throws {
        var contents = TenantContents(tenant: Self.tenant)
        contents.users = (0..<3).map(Self.user)
        let snapshot = TenantSnapshot(contents: contents, revision: 1)
        let policy = try ConditionalAccessPolicy.parse(
            JSONValue.parse(
                Data(
                    """
                    {"id": "a1000000-0000-4000-8000-000000000001", "displayName": "Block", "state": "enabled",
                     "conditions": {"users": {"includeUsers": ["All"]}, "applications": {"includeApplications": ["All"]}, "clientAppTypes": ["all"]},
                     "grantControls": {"operator": "OR", "builtInControls": ["block"]}}
                    """.utf8))!, directory: snapshot.directory, generatedId: "", force: true)
        let withPolicy = snapshot.applying(policy, id: policy.id.rawValue, revision: 2)
        #expect(withPolicy.conditionalAccess.count == 1 && snapshot.conditionalAccess.count == 0)
        #expect(withPolicy.directory.users == snapshot.directory.users && withPolicy.revision == 2)
        let withUser = withPolicy.applying(Self.user(7), id: Self.user(7).id.rawValue, revision: 3)
        #expect(withUser.directory.user(id: Self.user(7).id) != nil && withUser.conditionalAccess.count == 1)
        let without = withUser.applying(ConditionalAccessPolicy?.none, id: policy.id.rawValue, revision: 4)
        #expect(without.conditionalAccess.count == 0 && without.directory.users.count == 4 && without.revision == 4)
        #expect(snapshot.directory.users.count == 3, "a snapshot never changes: each change makes a new one")
    }
}
