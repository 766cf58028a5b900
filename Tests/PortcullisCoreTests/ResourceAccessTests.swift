import PortcullisCore
import Testing

/// API permissions (PROTOCOL §11): which resources a client may get tokens for, decided before conditional access.
@Suite("resource access (API permissions)")
struct ResourceAccessTests {
    static let api = Application(
        appId: "40000000-0000-4000-8000-000000000004", displayName: "Mail API", identifierUris: ["api://mail"], scopes: ["Mail.Read", "Mail.Send"],
        appRoles: ["Mail.ReadAll"], preAuthorizedApplications: ["a0000000-0000-4000-8000-00000000000c"])
    static let listing = Application(
        appId: "a0000000-0000-4000-8000-00000000000a", displayName: "Mail app", publicClient: true,
        requiredResourceAccess: [RequiredResourceAccess(resourceAppId: "API://MAIL", scopes: ["mail.read"])])
    static let rolesOnly = Application(
        appId: "a0000000-0000-4000-8000-00000000000b", displayName: "Daemon",
        requiredResourceAccess: [RequiredResourceAccess(resourceAppId: "40000000-0000-4000-8000-000000000004", appRoles: ["Mail.ReadAll"])])
    static let preAuthorized = Application(appId: "a0000000-0000-4000-8000-00000000000c", displayName: "First-party app", publicClient: true)
    static let stranger = Application(appId: "a0000000-0000-4000-8000-00000000000d", displayName: "Stranger", publicClient: true)
    static let directory = DirectorySnapshot(
        tenant: Tenant(id: "11111111-2222-4333-8444-555555555555", domain: "fabrikam.test", displayName: "F"), revision: 1, users: [], groups: [],
        applications: [api, listing, rolesOnly, preAuthorized, stranger],
        appRoleAssignments: [AppRoleAssignment(principalId: PrincipalID(rolesOnly.appId), resource: "api://mail", role: "Mail.ReadAll")], namedLocations: [])

    enum Outcome: Equatable {
        case success([String])
        case failure(Int)
    }

    /// The scopes granted, or the AADSTS code of the refusal.
    func decide(_ scope: String, _ client: Application, delegated: Bool = true) -> Outcome {
        do {
            let parsed = try ScopeRequest.parse(scope, in: Self.directory)
            return .success(try ResourceAccess.authorize(parsed, client: client, delegated: delegated, in: Self.directory).resourceScopes)
        } catch {
            return .failure(error.aadsts)
        }
    }

    @Test("delegated: a listed scope, case-insensitively and by either name of the resource; .default grants exactly what is listed")
    func listed() {
        #expect(decide("api://mail/Mail.Read openid", Self.listing) == .success(["Mail.Read"]))
        #expect(decide("api://mail/.default", Self.listing) == .success(["Mail.Read"]), ".default is narrowed to the listed scopes")
        #expect(decide("\(Self.api.appId)/.default offline_access", Self.listing) == .success(["Mail.Read"]))
    }

    @Test("delegated refusals are 65001 (consent required): an unlisted resource, an unlisted scope, .default with nothing delegated listed")
    func consentRequired() throws {
        #expect(decide("api://mail/Mail.Send", Self.listing) == .failure(65001))
        #expect(decide("api://mail/Mail.Read api://mail/Mail.Send", Self.listing) == .failure(65001))
        #expect(decide("api://mail/Mail.Read", Self.stranger) == .failure(65001))
        #expect(decide("api://mail/.default", Self.rolesOnly) == .failure(65001), "app roles listed are not delegated scopes")
        #expect(decide("api://portcullis-admin/.default", Self.listing) == .failure(65001), "the admin API is not for every client")
        let error = try #require(
            { () -> TokenError? in
                do {
                    _ = try ResourceAccess.authorize(
                        try ScopeRequest.parse("api://mail/Mail.Send", in: Self.directory), client: Self.listing, delegated: true, in: Self.directory)
                } catch let error as TokenError { return error } catch { return nil }
                return nil
            }())
        #expect(error.code == TokenError.Code.invalidGrant && error.suberror == "consent_required" && error.message.contains("Mail.Send"))
    }

    @Test("pre-authorized clients and the built-ins: every scope, without listing")
    func preAuthorizedAndBuiltIn() {
        #expect(decide("api://mail/Mail.Send", Self.preAuthorized) == .success(["Mail.Send"]))
        #expect(decide("api://mail/.default", Self.preAuthorized) == .success(["Mail.Read", "Mail.Send"]))
        #expect(decide("api://portcullis-compliance/.default", Self.stranger) == .success(["Compliance.ReadWrite"]), "remediation must be able to start")
        let console = BuiltInResources.console
        #expect(decide("api://portcullis-admin/.default openid", console) == .success(["Admin.ReadWrite"]))
        #expect(decide("openid profile", Self.stranger) == .success([]), "a token for no resource needs nothing")
    }

    @Test("app-only: the client must hold an app role of the resource (650057 otherwise); a token for itself needs nothing")
    func appOnly() {
        #expect(decide("api://mail/.default", Self.rolesOnly, delegated: false) == .success(["Mail.Read", "Mail.Send"]))
        #expect(decide("api://mail/.default", Self.listing, delegated: false) == .failure(650057), "listing scopes grants no app role")
        #expect(decide("api://portcullis-admin/.default", Self.stranger, delegated: false) == .failure(650057))
        #expect(decide("api://mail/.default", Self.api, delegated: false) == .success(["Mail.Read", "Mail.Send"]))
    }

    @Test("validation: resources, scopes and roles that exist, each resource once, pre-authorized clients that exist")
    func validation() {
        let app = Application(
            appId: "a0000000-0000-4000-8000-0000000000ff", displayName: "Bad",
            requiredResourceAccess: [
                RequiredResourceAccess(resourceAppId: "api://nowhere"),
                RequiredResourceAccess(resourceAppId: "api://mail", scopes: ["Mail.Read", "Mail.Delete"], appRoles: ["Nope"]),
                RequiredResourceAccess(resourceAppId: Self.api.appId.rawValue),
            ],
            preAuthorizedApplications: [Self.stranger.appId, "a0000000-0000-4000-8000-000000000999"])
        let problems = ProblemCollector()
        app.accessProblems(
            at: "", resource: { Self.directory.resource(identifier: $0) }, isApplication: { Self.directory.application(appId: $0) != nil }, problems: problems)
        #expect(
            Set(problems.problems.map(\.pointer)) == [
                "/requiredResourceAccess/0/resourceAppId", "/requiredResourceAccess/1/scopes/1", "/requiredResourceAccess/1/appRoles/0",
                "/requiredResourceAccess/2/resourceAppId", "/preAuthorizedApplications/1",
            ], "\(problems.problems)")
    }
}
