public import Foundation

/// A small, fixed directory for tests: one tenant, users in two groups, a public mobile client, a
/// confidential daemon, an admin client and a mail API.
public enum Fixtures {
    public static let tenantId = "11111111-2222-4333-8444-555555555555"
    public static let domain = "fabrikam.test"
    public static let otherTenantId = "99999999-8888-4777-8666-555555555555"
    public static let otherDomain = "other.test"

    public struct Account: Sendable {
        public let id: String
        public let upn: String
        public let password: String

        public init(id: String, upn: String, password: String) {
            self.id = id
            self.upn = upn
            self.password = password
        }
    }

    public static let alice = Account(id: "aaaaaaaa-0000-4000-8000-000000000001", upn: "alice@fabrikam.test", password: "alice-pass")
    public static let bob = Account(id: "bbbbbbbb-0000-4000-8000-000000000002", upn: "bob@fabrikam.test", password: "bob-pass")
    public static let carol = Account(id: "cccccccc-0000-4000-8000-000000000003", upn: "carol@fabrikam.test", password: "carol-pass")
    public static let disabled = Account(id: "dddddddd-0000-4000-8000-000000000004", upn: "dora@fabrikam.test", password: "dora-pass")
    public static let admin = Account(id: "eeeeeeee-0000-4000-8000-000000000005", upn: "erin@fabrikam.test", password: "erin-pass")
    /// A user of the other tenant (B2B collaboration's guest, PROTOCOL §17).
    public static let olga = Account(id: "0f000000-0000-4000-8000-000000000007", upn: "olga@other.test", password: "olga-pass")

    public static let salesGroupId = "0a000000-0000-4000-8000-0000000000a1"
    public static let engineeringGroupId = "0b000000-0000-4000-8000-0000000000b2"

    public static let mobileClientId = "10000000-0000-4000-8000-000000000001"
    /// The mobile app's registered custom-scheme redirect URI (MSAL for iOS's form).
    public static let mobileRedirectUri = "msauth.com.fabrikam.mail://auth"
    public static let secondMobileClientId = "10000000-0000-4000-8000-000000000006"
    public static let daemonClientId = "20000000-0000-4000-8000-000000000002"
    public static let daemonSecret = "daemon-secret-value"
    public static let adminClientId = "30000000-0000-4000-8000-000000000003"
    public static let adminSecret = "admin-secret-value"
    public static let mailApiId = "40000000-0000-4000-8000-000000000004"
    public static let mailApiSecret = "mail-api-secret-value"
    public static let mailResource = "api://fabrikam-mail"
    public static let otherTenantClientId = "50000000-0000-4000-8000-000000000005"
    public static let hqLocationId = "60000000-0000-4000-8000-000000000006"
    public static let callbackPath = "/compliance"

    public static let salesMailPolicyId = "70000000-0000-4000-8000-000000000001"

    /// The app protection policy of the fixtures: the mobile mail client, for Sales (Alice, Bob), PIN required,
    /// minimum OS 16.0, jailbreak blocked, saving only to OneDrive for Business. Carol (Engineering) is unmanaged.
    public static let salesMailPolicy = Data(
        """
        {"id": "\(salesMailPolicyId)", "displayName": "Mail for Sales",
         "targets": {"applications": ["\(mobileClientId)"], "includeGroups": ["\(salesGroupId)"], "excludeGroups": []},
         "settings": {"pinRequired": true, "minimumOsVersion": "16.0", "blockJailbrokenDevices": true, "fileEncryptionRequired": true,
                      "saveAs": {"blocked": true, "allowedLocations": ["oneDriveForBusiness"]},
                      "openFrom": {"blocked": true, "allowedLocations": ["oneDriveForBusiness", "sharePoint"]},
                      "recheckIntervalMinutes": 30, "offlineGracePeriodMinutes": 60}}
        """.utf8)

    /// Configuration files seeded besides the directory (path under Config/ → contents).
    public static let configFiles: [String: Data] = ["app-protection/\(domain)/mail-sales.json": salesMailPolicy]

    /// The fixture directory. `callbackBase` (e.g. `http://127.0.0.1:PORT`) sets the mobile clients' callback URI. Like
    /// the development Config/, the tenant lets a user register a first factor with a password alone from anywhere
    /// (`passwordOnlyRegistration`), so that the MFA tests register from loopback; the tests of the default set it back.
    public static func directoryJSON(callbackBase: String = "http://127.0.0.1:9", allowedAccounts: [String]? = nil) -> Data {
        let allowed = allowedAccounts.map { "[" + $0.map { "\"\($0)\"" }.joined(separator: ",") + "]" } ?? "null"
        return Data(
            """
            {"tenants": [{
              "id": "\(tenantId)", "domain": "\(domain)", "displayName": "Fabrikam", "allowedAccounts": \(allowed),
              "passwordOnlyRegistration": "anywhere",
              "users": [
                {"id": "\(alice.id)", "userPrincipalName": "\(alice.upn)", "displayName": "Alice", "password": "\(alice.password)"},
                {"id": "\(bob.id)", "userPrincipalName": "\(bob.upn)", "displayName": "Bob", "password": "\(bob.password)"},
                {"id": "\(carol.id)", "userPrincipalName": "\(carol.upn)", "displayName": "Carol", "password": "\(carol.password)"},
                {"id": "\(disabled.id)", "userPrincipalName": "\(disabled.upn)", "displayName": "Dora", "password": "\(disabled.password)", "accountEnabled": false},
                {"id": "\(admin.id)", "userPrincipalName": "\(admin.upn)", "displayName": "Erin", "password": "\(admin.password)"}
              ],
              "groups": [
                {"id": "\(salesGroupId)", "displayName": "Sales", "members": ["\(alice.id)", "\(bob.id)"]},
                {"id": "\(engineeringGroupId)", "displayName": "Engineering", "members": ["\(carol.id)"]}
              ],
              "applications": [
                {"appId": "\(mobileClientId)", "displayName": "Fabrikam Mail mobile", "publicClient": true,
                 "allowedGrantTypes": ["authorization_code", "urn:ietf:params:oauth:grant-type:device_code", "password", "refresh_token"],
                 "redirectUris": ["\(mobileRedirectUri)", "http://localhost", "https://app.fabrikam.test/signed-out"], "approvedClientApp": true,
                 "complianceCallbackUris": ["\(callbackBase)\(callbackPath)"],
                 "requiredResourceAccess": [{"resourceAppId": "\(mailResource)", "scopes": ["Mail.Read", "Mail.Send"]}]},
                {"appId": "\(secondMobileClientId)", "displayName": "Fabrikam Notes mobile", "publicClient": true,
                 "allowedGrantTypes": ["password", "refresh_token"],
                 "requiredResourceAccess": [{"resourceAppId": "\(mailResource)", "scopes": ["Mail.Read"]}]},
                {"appId": "\(daemonClientId)", "displayName": "Daemon", "secrets": [{"secret": "\(daemonSecret)"}],
                 "allowedGrantTypes": ["client_credentials"]},
                {"appId": "\(adminClientId)", "displayName": "Admin tool", "secrets": [{"secret": "\(adminSecret)"}],
                 "allowedGrantTypes": ["client_credentials", "password", "refresh_token"],
                 "requiredResourceAccess": [{"resourceAppId": "api://portcullis-admin", "scopes": ["Admin.ReadWrite"], "appRoles": ["Portcullis.Admin"]},
                                            {"resourceAppId": "\(mailResource)", "scopes": ["Mail.Read"]}]},
                {"appId": "\(mailApiId)", "displayName": "Mail API", "identifierUris": ["\(mailResource)"],
                 "scopes": ["Mail.Read", "Mail.Send"], "appRoles": ["Mail.ReadAll"],
                 "secrets": [{"secret": "\(mailApiSecret)"}], "allowedGrantTypes": ["client_credentials"]}
              ],
              "appRoleAssignments": [
                {"principalId": "\(daemonClientId)", "resource": "\(mailResource)", "role": "Mail.ReadAll"},
                {"principalId": "\(adminClientId)", "resource": "api://portcullis-admin", "role": "Portcullis.Admin"},
                {"principalId": "\(admin.id)", "resource": "api://portcullis-admin", "role": "Portcullis.Admin"}
              ],
              "namedLocations": [
                {"id": "\(hqLocationId)", "displayName": "HQ", "ipRanges": ["203.0.113.0/24", "2001:db8::/32"], "isTrusted": true}
              ]
            }, {
              "id": "\(otherTenantId)", "domain": "\(otherDomain)", "displayName": "Other",
              "users": [
                {"id": "\(olga.id)", "userPrincipalName": "\(olga.upn)", "displayName": "Olga", "password": "\(olga.password)"}
              ],
              "applications": [
                {"appId": "\(otherTenantClientId)", "displayName": "Other tenant's app", "secrets": [{"secret": "other-secret"}],
                 "allowedGrantTypes": ["client_credentials"]}
              ]
            }]}
            """.utf8)
    }
}
