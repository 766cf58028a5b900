import Foundation
import PortcullisCore
import Testing

@Suite("directory document")
struct DirectoryDocumentTests {
    static let tenantId = "11111111-2222-4333-8444-555555555555"

    func problems(_ json: String) -> [ValidationProblem] {
        do {
            _ = try DirectoryDocument.parse(Data(json.utf8))
            return []
        } catch {
            return error.problems
        }
    }

    @Test("a valid document parses, with plaintext credentials kept for hashing")
    func valid() throws {
        let document = try DirectoryDocument.parse(
            Data(
                """
                {"tenants":[{"id":"\(Self.tenantId)","domain":"Fabrikam.Test","displayName":"F",
                  "users":[{"id":"AAAAAAAA-0000-4000-8000-000000000001","userPrincipalName":"a@fabrikam.test","displayName":"A","password":"p"}],
                  "groups":[{"id":"0a000000-0000-4000-8000-0000000000a1","displayName":"G","members":["aaaaaaaa-0000-4000-8000-000000000001"]}],
                  "applications":[{"appId":"10000000-0000-4000-8000-000000000001","displayName":"App","secrets":[{"secret":"s"}],"allowedGrantTypes":["client_credentials"]}]
                }]}
                """.utf8))
        let tenant = try #require(document.tenants.first)
        #expect(tenant.tenant.domain == "fabrikam.test")
        #expect(tenant.users.first?.user.id == "aaaaaaaa-0000-4000-8000-000000000001")
        #expect(tenant.users.first?.plaintextPassword == "p")
        #expect(tenant.applications.first?.plaintextSecrets == ["s"])
    }

    @Test("every problem is reported with its pointer")
    func allProblems() {
        let found = problems(
            """
            {"tenants":[{"id":"not-a-guid","domain":"fabrikam.test","colour":"blue",
              "users":[{"id":"aaaaaaaa-0000-4000-8000-000000000001","userPrincipalName":"a@fabrikam.test","displayName":"A"},
                       {"id":"aaaaaaaa-0000-4000-8000-000000000002","userPrincipalName":"A@FABRIKAM.TEST","displayName":"A2"}],
              "groups":[{"id":"0a000000-0000-4000-8000-0000000000a1","displayName":"G","members":["aaaaaaaa-0000-4000-8000-000000000009"]}],
              "applications":[{"appId":"10000000-0000-4000-8000-000000000001","displayName":"App","publicClient":true,
                               "allowedGrantTypes":["implicit"],"complianceCallbackUris":["http://evil.example/cb"], "secrets":[{"secret":"s"}]}],
              "appRoleAssignments":[{"principalId":"10000000-0000-4000-8000-000000000001","resource":"api://portcullis-admin","role":"Nope"}],
              "namedLocations":[{"id":"60000000-0000-4000-8000-000000000006","displayName":"HQ","ipRanges":["203.0.113.0/33"]}]
            }]}
            """)
        let pointers = Set(found.map(\.pointer))
        #expect(pointers.contains("/tenants/0/id"))
        #expect(pointers.contains("/tenants/0/colour"))
        #expect(pointers.contains("/tenants/0/users/1/userPrincipalName"))
        #expect(pointers.contains("/tenants/0/groups/0/members/0"))
        #expect(pointers.contains("/tenants/0/applications/0/allowedGrantTypes/0"))
        #expect(pointers.contains("/tenants/0/applications/0/complianceCallbackUris/0"))
        #expect(pointers.contains("/tenants/0/applications/0/secrets"))
        #expect(pointers.contains("/tenants/0/appRoleAssignments/0/role"))
        #expect(pointers.contains("/tenants/0/namedLocations/0/ipRanges/0"))
        #expect(found.count >= 9)
    }

    @Test("object IDs and application IDs are unique across every tenant of the document; a UPN is in its tenant's domain (PROTOCOL §11)")
    func installationWideIdentifiers() {
        let found = problems(
            """
            {"tenants":[{"id":"\(Self.tenantId)","domain":"fabrikam.test",
              "users":[{"id":"aaaaaaaa-0000-4000-8000-000000000001","userPrincipalName":"a@fabrikam.test","displayName":"A"}],
              "groups":[{"id":"0a000000-0000-4000-8000-0000000000a1","displayName":"G","members":[]}],
              "applications":[{"appId":"10000000-0000-4000-8000-000000000001","displayName":"API","identifierUris":["api://mail"]}]
            }, {"id":"99999999-8888-4777-8666-555555555555","domain":"other.test",
              "users":[{"id":"AAAAAAAA-0000-4000-8000-000000000001","userPrincipalName":"a@fabrikam.test","displayName":"Impostor"},
                       {"id":"0a000000-0000-4000-8000-0000000000a1","userPrincipalName":"g@other.test","displayName":"Group's ID"},
                       {"id":"bbbbbbbb-0000-4000-8000-000000000002","userPrincipalName":"b@other.test","displayName":"B"}],
              "groups":[{"id":"bbbbbbbb-0000-4000-8000-000000000002","displayName":"User's ID","members":[]}],
              "applications":[{"appId":"10000000-0000-4000-8000-000000000001","displayName":"Impostor API","identifierUris":["api://mail"]}]
            }]}
            """)
        let pointers = Set(found.map(\.pointer))
        #expect(
            pointers == [
                "/tenants/1/users/0/id", "/tenants/1/users/0/userPrincipalName", "/tenants/1/users/1/id", "/tenants/1/groups/0/id",
                "/tenants/1/applications/0/appId",
            ], "\(found)")
        #expect(found.first { $0.pointer == "/tenants/1/users/0/id" }?.message.contains("/tenants/0/users/0/id") == true)
        #expect(found.first { $0.pointer == "/tenants/1/users/0/userPrincipalName" }?.message.contains("other.test") == true)
    }

    @Test("not JSON, wrong types")
    func shapes() {
        #expect(problems("nope").map(\.pointer) == [""])
        #expect(problems(#"{"tenants":{}}"#).map(\.pointer) == ["/tenants"])
        #expect(problems(#"{"tenants":[{"id":"\#(Self.tenantId)","domain":"f.test","users":[{"id":1}]}]}"#).map(\.pointer).contains("/tenants/0/users/0/id"))
    }

    @Test(
        "callback URIs: https anywhere, http only on loopback",
        arguments: [
            ("https://mail.contoso.example/compliance", true), ("http://127.0.0.1:9555/compliance", true),
            ("http://localhost/cb", true), ("http://[::1]:80/cb", true), ("http://10.0.0.1/cb", false),
            ("ftp://host/cb", false), ("not a url", false), ("https:///nohost", false),
        ])
    func callbacks(_ uri: String, _ ok: Bool) {
        #expect(CallbackURI.isAcceptable(uri) == ok)
    }

    @Test("the shipped demo directory is valid")
    func shippedDirectory() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Config/directory.json")
        let document = try DirectoryDocument.parse(try Data(contentsOf: url))
        #expect(document.tenants.first?.tenant.domain == "contoso.example")
    }
}
