import Foundation
import Testing

@testable import PortcullisCore

/// A kind's own rules, in Core without a server (issue 45): reading with the server's services behind a protocol, how a
/// document is shown, and what a delete must not break. The admin API's tests cover the same rules over HTTP.
@Suite("document kinds' rules as Core conformances (AdministeredDocument)")
struct AdministeredDocumentTests {
    static let tenantId: TenantID = "d0c00000-0000-4000-8000-000000000001"
    static let alice: ObjectID = "d0c00000-0000-4000-8000-0000000000a1"
    static let group: ObjectID = "d0c00000-0000-4000-8000-0000000000c1"
    static let client: AppID = "d0c00000-0000-4000-8000-0000000000e1"

    /// The server's services as a test writes them: a fake hash that shows what was hashed, a clock, no other tenant.
    struct Services: DocumentServices {
        var now: Date { Date(timeIntervalSince1970: 1_800_000_000) }
        func passwordHash(_ password: String, keeping stored: String?) async throws -> String {
            stored == "$2b$kept-\(password)" ? stored! : "$2b$new-\(password)"
        }
        func secretHash(_ secret: String) -> String { "hashed:\(secret)" }
        func registeredMethods(tenantId: TenantID) async throws -> ConditionalAccessPolicy.RegisteredMethods { .init(anyFactor: [], passkey: []) }
        func tenant(segment: String) async throws -> TenantSnapshot? { nil }
        func keyCredential(_ text: String, displayName: String?) -> Result<KeyCredential, KeyCredentialProblem> {
            guard text.hasPrefix("cert:") else { return .failure(KeyCredentialProblem("is not a certificate.")) }
            return .success(
                KeyCredential(
                    keyId: RecordID.generate(), displayName: displayName, thumbprint: "T-\(text)", thumbprintSHA256: "S-\(text)", key: text,
                    startDateTime: now, endDateTime: now.addingTimeInterval(86400)))
        }
        func seal(_ secret: String, tenantId: TenantID, purpose: String, id: String) throws -> Data { Data("sealed:\(purpose):\(secret)".utf8) }
        func deviceCertificate(csr: String, tenant: Tenant, objectId: ObjectID, deviceId: DeviceID, current: Device.Certificate?) throws -> Device.Certificate {
            Device.Certificate(pem: "certificate for \(csr)", thumbprint: "t-\(deviceId)", serialNumber: "1", notAfter: now)
        }
    }

    static func tenant(_ edit: (inout TenantContents) -> Void = { _ in }) -> TenantSnapshot {
        var contents = TenantContents(tenant: Tenant(id: tenantId, domain: "docs.test", displayName: "Docs"))
        contents.users = [User(id: alice, userPrincipalName: "alice@docs.test", displayName: "Alice", passwordHash: "$2b$kept-old")]
        contents.groups = [Group(id: group, displayName: "Pilot", members: [alice])]
        contents.applications = [Application(appId: client, displayName: "Client", publicClient: true)]
        edit(&contents)
        return TenantSnapshot(contents: contents, revision: 1)
    }

    static func write(_ tenant: TenantSnapshot) -> DocumentWrite { DocumentWrite(tenant: tenant, services: Services()) }

    static func json(_ text: String) -> JSONValue { JSONValue.parse(Data(text.utf8)) ?? .null }

    @Test("a user: the password hashed through the services (the same one kept), the hash never shown; IDs in any case are the same user")
    func users() async throws {
        let tenant = Self.tenant()
        let same = try await User.read(
            Self.json(#"{"id": "\#(Self.alice.rawValue.uppercased())", "userPrincipalName": "alice@docs.test", "displayName": "Alice", "password": "old"}"#),
            in: Self.write(tenant))
        #expect(same.id == Self.alice && same.passwordHash == "$2b$kept-old")
        let changed = try await User.read(
            Self.json(#"{"id": "\#(Self.alice)", "userPrincipalName": "alice@docs.test", "displayName": "Alice", "password": "new"}"#), in: Self.write(tenant))
        #expect(changed.passwordHash == "$2b$new-new")
        #expect(changed.presented(in: tenant)["passwordHash"] == nil)
        await #expect(throws: ValidationError.self) {
            _ = try await User.read(Self.json(#"{"userPrincipalName": "ALICE@docs.test", "displayName": "Another"}"#), in: Self.write(tenant))
        }
    }

    @Test("delete guards: a group a policy names, a user in a group, the last administrator, the tenant itself")
    func deletes() throws {
        let policy = try ConditionalAccessPolicy.parse(
            Self.json(
                #"{"displayName": "pilot", "state": "enabled", "conditions": {"users": {"includeGroups": ["\#(Self.group)"]}, "applications": {"includeApplications": ["All"]}}, "grantControls": {"operator": "OR", "builtInControls": ["mfa"]}}"#
            ), directory: Self.tenant().directory, generatedId: PolicyID.generate(), force: true)
        let tenant = Self.tenant { $0.conditionalAccessPolicies = [policy] }
        let group = try #require(tenant.directory.group(id: Self.group))
        #expect(
            throws: DocumentRefusal(
                .inUse,
                "The group is named by conditional-access policies (\(policy.id)), app protection policies () or app configuration policies (), or holds directory roles (). Change them first."
            )
        ) {
            try group.checkDelete(in: tenant, force: false)
        }
        #expect(throws: Never.self) { try group.checkDelete(in: Self.tenant(), force: false) }
        let alice = try #require(tenant.directory.user(id: Self.alice))
        #expect(performing: { try alice.checkDelete(in: tenant, force: true) }, throws: { ($0 as? DocumentRefusal)?.reason == .inUse })
        #expect(performing: { try tenant.tenant.checkDelete(in: tenant, force: true) }, throws: { ($0 as? DocumentRefusal)?.reason == .notWritable })

        let grant = AppRoleAssignment(principalId: PrincipalID(Self.alice), resource: BuiltInResources.adminIdentifier, role: BuiltInResources.adminRole)
        let administered = Self.tenant { $0.roleAssignments = [RoleAssignmentDocument(grant, in: Self.tenant().directory)] }
        let last = RoleAssignmentDocument(grant, in: administered.directory)
        #expect(performing: { try last.checkDelete(in: administered, force: false) }, throws: { ($0 as? DocumentRefusal)?.reason == .lastAdministrator })
        #expect(throws: Never.self) { try last.checkDelete(in: administered, force: true) }
    }

    @Test("an application: a plaintext secret hashed through the services and shown without its hash; an acceptance is never written here")
    func applications() async throws {
        let tenant = Self.tenant()
        let application = try await Application.read(
            Self.json(
                #"{"appId": "D0C00000-0000-4000-8000-0000000000E2", "displayName": "Daemon", "allowedGrantTypes": ["client_credentials"], "secrets": [{"secret": "s3cret"}]}"#
            ), in: Self.write(tenant))
        #expect(application.appId == AppID("d0c00000-0000-4000-8000-0000000000e2"))
        #expect(application.secrets.map(\.secretHash) == ["hashed:s3cret"])
        #expect(application.secrets.first?.startDateTime == Services().now)
        guard case .array(let shown)? = application.presented(in: tenant)["secrets"] else {
            Issue.record("no secrets shown")
            return
        }
        #expect(shown.allSatisfy { $0["secretHash"] == nil } && shown.count == 1)
        await #expect(
            performing: { _ = try await AgreementAcceptance.read(Self.json("{}"), in: Self.write(tenant)) },
            throws: { ($0 as? DocumentRefusal)?.reason == .notWritable })
    }
}
