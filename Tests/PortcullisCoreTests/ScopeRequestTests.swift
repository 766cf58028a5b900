import PortcullisCore
import Testing

let mail = Application(appId: "40000000-0000-4000-8000-000000000004", displayName: "Mail", identifierUris: ["api://mail"], scopes: ["Mail.Read", "Mail.Send"])
let files = Application(appId: "50000000-0000-4000-8000-000000000005", displayName: "Files", identifierUris: ["api://files"], scopes: ["Files.Read"])
let snapshot = DirectorySnapshot(
    tenant: Tenant(id: "11111111-2222-4333-8444-555555555555", domain: "fabrikam.test", displayName: "F"), revision: 1,
    users: [], groups: [], applications: [mail, files], appRoleAssignments: [], namedLocations: [])

@Suite("scope parameter")
struct ScopeRequestTests {
    @Test("named scopes, case-insensitively, with OIDC scopes")
    func named() throws {
        let request = try ScopeRequest.parse("api://mail/mail.read  openid Profile offline_access", in: snapshot)
        #expect(request.resource?.appId == mail.appId)
        #expect(request.audience == "api://mail")
        #expect(request.resourceScopes == ["Mail.Read"])
        #expect(request.oidc == [.openid, .profile, .offlineAccess])
        #expect(request.grantedScopeString == "api://mail/Mail.Read openid profile offline_access")
        #expect(try ScopeRequest.parse("OpenID EMAIL Offline_Access", in: snapshot).oidc == [.openid, .email, .offlineAccess])
        #expect(throws: TokenError.self) { try ScopeRequest.parse("openid/x", in: snapshot) }
    }

    @Test("/.default grants every scope of the resource, by URI or by app ID")
    func defaultScope() throws {
        let byURI = try ScopeRequest.parse("api://mail/.default", in: snapshot)
        #expect(byURI.isDefault && byURI.resourceScopes == ["Mail.Read", "Mail.Send"])
        let byAppId = try ScopeRequest.parse("\(mail.appId)/.default", in: snapshot)
        #expect(byAppId.resource?.appId == mail.appId && byAppId.audience == mail.appId.rawValue)
    }

    @Test("only OIDC scopes name no resource")
    func oidcOnly() throws {
        let request = try ScopeRequest.parse("openid profile", in: snapshot)
        #expect(request.resource == nil)
        #expect(request.grantedScopeString == "openid profile")
    }

    @Test(
        "refusals",
        arguments: [
            ("api://mail/Mail.Delete", 70011),
            ("api://nowhere/.default", 500011),
            ("api://mail/Mail.Read api://files/Files.Read", 28000),
            ("api://mail/.default api://mail/Mail.Read", 70011),
            ("User.Read", 70011),
            ("api://mail/", 70011),
        ])
    func refusals(_ scope: String, _ code: Int) {
        do {
            _ = try ScopeRequest.parse(scope, in: snapshot)
            Issue.record("\(scope) must be refused")
        } catch {
            #expect(error.aadsts == code)
        }
    }

    @Test("built-in resources exist in every tenant")
    func builtIn() throws {
        let request = try ScopeRequest.parse("api://portcullis-compliance/.default", in: snapshot)
        #expect(request.resource?.appId == BuiltInResources.complianceAppId)
    }
}
