import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PortcullisServer
import PortcullisTesting
import Testing

/// One hostile request and the answer it must get.
struct HostileCase: Sendable, CustomStringConvertible {
    let name: String
    var path: String = TestEnvironment.tokenPath
    var body: String
    var contentType: String? = "application/x-www-form-urlencoded"
    var authorization: String? = nil
    let status: Int
    let error: String?
    let code: Int?

    var description: String { name }
}

let mobile = Fixtures.mobileClientId
let daemon = "client_id=\(Fixtures.daemonClientId)&client_secret=\(Fixtures.daemonSecret)"
let mailDefault = "scope=api%3A%2F%2Ffabrikam-mail%2F.default"
let alicePassword = "grant_type=password&client_id=\(mobile)&username=alice%40fabrikam.test&password=alice-pass"

let hostileCases: [HostileCase] = [
    HostileCase(name: "empty body", body: "", status: 400, error: "invalid_request", code: 900144),
    HostileCase(name: "missing grant_type", body: "\(daemon)&\(mailDefault)", status: 400, error: "invalid_request", code: 900144),
    HostileCase(name: "unknown grant_type", body: "grant_type=magic&\(daemon)", status: 400, error: "unsupported_grant_type", code: 70003),
    HostileCase(
        name: "grant not allowed for the app", body: "grant_type=client_credentials&client_id=\(mobile)&\(mailDefault)", status: 400,
        error: "unauthorized_client", code: 70003),
    HostileCase(
        name: "duplicated parameter", body: "grant_type=client_credentials&grant_type=password&\(daemon)&\(mailDefault)", status: 400, error: "invalid_request",
        code: 90014),
    HostileCase(
        name: "duplicated scope", body: "grant_type=client_credentials&\(daemon)&\(mailDefault)&\(mailDefault)", status: 400, error: "invalid_request",
        code: 90014),
    HostileCase(
        name: "wrong content type (JSON)", body: #"{"grant_type":"client_credentials"}"#, contentType: "application/json", status: 400,
        error: "invalid_request", code: 900144),
    HostileCase(
        name: "a form content type in another case, with spaces and a parameter (accepted)", body: "grant_type=client_credentials&\(daemon)&\(mailDefault)",
        contentType: " Application/X-WWW-Form-URLEncoded\t; charset=UTF-8", status: 200, error: nil, code: nil),
    HostileCase(
        name: "a content type that only begins like a form", body: "grant_type=client_credentials&\(daemon)&\(mailDefault)",
        contentType: "application/x-www-form-urlencodedx", status: 400, error: "invalid_request", code: 900144),
    HostileCase(
        name: "a content type whose media type is empty", body: "grant_type=client_credentials&\(daemon)&\(mailDefault)",
        contentType: "; application/x-www-form-urlencoded", status: 400, error: "invalid_request", code: 900144),
    HostileCase(
        name: "no content type", body: "grant_type=client_credentials&\(daemon)&\(mailDefault)", contentType: nil, status: 400, error: "invalid_request",
        code: 900144),
    HostileCase(name: "broken percent escape", body: "grant_type=client_credentials&\(daemon)&scope=%ZZ", status: 400, error: "invalid_request", code: 900144),
    HostileCase(
        name: "truncated percent escape", body: "grant_type=client_credentials&\(daemon)&scope=abc%2", status: 400, error: "invalid_request", code: 900144),
    HostileCase(name: "invalid UTF-8", body: "grant_type=client_credentials&\(daemon)&scope=%FF%FE", status: 400, error: "invalid_request", code: 900144),
    HostileCase(
        name: "unknown tenant", path: "/nowhere.test/oauth2/v2.0/token", body: "grant_type=client_credentials&\(daemon)&\(mailDefault)", status: 400,
        error: "invalid_request", code: 90002),
    HostileCase(
        name: "client of another tenant",
        body: "grant_type=client_credentials&client_id=\(Fixtures.otherTenantClientId)&client_secret=other-secret&\(mailDefault)", status: 400,
        error: "unauthorized_client", code: 700016),
    HostileCase(
        name: "unknown client", body: "grant_type=client_credentials&client_id=00000000-0000-4000-8000-000000000000&client_secret=x&\(mailDefault)",
        status: 400, error: "unauthorized_client", code: 700016),
    HostileCase(name: "missing client_id", body: "grant_type=client_credentials&\(mailDefault)", status: 400, error: "invalid_request", code: 900144),
    HostileCase(
        name: "wrong client secret", body: "grant_type=client_credentials&client_id=\(Fixtures.daemonClientId)&client_secret=nope&\(mailDefault)", status: 401,
        error: "invalid_client", code: 7000215),
    HostileCase(
        name: "confidential client without secret", body: "grant_type=client_credentials&client_id=\(Fixtures.daemonClientId)&\(mailDefault)", status: 401,
        error: "invalid_client", code: 7000218),
    HostileCase(name: "public client with a secret", body: "\(alicePassword)&client_secret=x&scope=openid", status: 401, error: "invalid_client", code: 700025),
    HostileCase(
        name: "Basic and client_secret together", body: "grant_type=client_credentials&client_secret=\(Fixtures.daemonSecret)&\(mailDefault)",
        authorization: Grants.basic(Fixtures.daemonClientId, Fixtures.daemonSecret), status: 400, error: "invalid_request", code: 90014),
    HostileCase(
        name: "Basic and a different client_id", body: "grant_type=client_credentials&client_id=\(mobile)&\(mailDefault)",
        authorization: Grants.basic(Fixtures.daemonClientId, Fixtures.daemonSecret), status: 400, error: "invalid_request", code: 90014),
    HostileCase(
        name: "garbage Basic header", body: "grant_type=client_credentials&\(mailDefault)", authorization: "Basic !!!notbase64", status: 401,
        error: "invalid_client", code: 7000215),
    HostileCase(name: "client_credentials without scope", body: "grant_type=client_credentials&\(daemon)", status: 400, error: "invalid_request", code: 900144),
    HostileCase(
        name: "client_credentials with a named scope", body: "grant_type=client_credentials&\(daemon)&scope=api%3A%2F%2Ffabrikam-mail%2FMail.Read", status: 400,
        error: "invalid_scope", code: 1002012),
    HostileCase(
        name: "unknown resource", body: "grant_type=client_credentials&\(daemon)&scope=api%3A%2F%2Fnowhere%2F.default", status: 400, error: "invalid_resource",
        code: 500011),
    HostileCase(
        name: "two resources", body: "\(alicePassword)&scope=api%3A%2F%2Ffabrikam-mail%2FMail.Read+api%3A%2F%2Fportcullis-admin%2FAdmin.ReadWrite", status: 400,
        error: "invalid_scope", code: 28000),
    HostileCase(
        name: "unknown scope on a resource", body: "\(alicePassword)&scope=api%3A%2F%2Ffabrikam-mail%2FMail.Delete", status: 400, error: "invalid_scope",
        code: 70011),
    HostileCase(name: "bare scope", body: "\(alicePassword)&scope=User.Read", status: 400, error: "invalid_scope", code: 70011),
    HostileCase(
        name: "malformed claims (not JSON)", body: "\(alicePassword)&scope=openid&claims=%7Bnot+json", status: 400, error: "invalid_request", code: 90100),
    HostileCase(name: "malformed claims (array)", body: "\(alicePassword)&scope=openid&claims=%5B%5D", status: 400, error: "invalid_request", code: 90100),
    HostileCase(
        name: "malformed claims (xms_cc values not an array)",
        body: "\(alicePassword)&scope=openid&claims=%7B%22access_token%22%3A%7B%22xms_cc%22%3A%7B%22values%22%3A%22protapp%22%7D%7D%7D", status: 400,
        error: "invalid_request", code: 90100),
    HostileCase(
        name: "password grant without password", body: "grant_type=password&client_id=\(mobile)&username=alice%40fabrikam.test&scope=openid", status: 400,
        error: "invalid_request", code: 900144),
    HostileCase(
        name: "unknown user", body: "grant_type=password&client_id=\(mobile)&username=mallory%40fabrikam.test&password=x&scope=openid", status: 400,
        error: "invalid_grant", code: 50034),
    HostileCase(
        name: "wrong password", body: "grant_type=password&client_id=\(mobile)&username=alice%40fabrikam.test&password=x&scope=openid", status: 400,
        error: "invalid_grant", code: 50126),
    HostileCase(
        name: "disabled user", body: "grant_type=password&client_id=\(mobile)&username=dora%40fabrikam.test&password=dora-pass&scope=openid", status: 400,
        error: "invalid_grant", code: 50057),
    HostileCase(
        name: "unknown refresh token", body: "grant_type=refresh_token&client_id=\(mobile)&refresh_token=abc", status: 400, error: "invalid_grant",
        code: 9002313),
    HostileCase(name: "refresh grant without token", body: "grant_type=refresh_token&client_id=\(mobile)", status: 400, error: "invalid_request", code: 900144),
    HostileCase(
        name: "very long parameter value", body: "grant_type=client_credentials&\(daemon)&scope=" + String(repeating: "a", count: 60_000), status: 400,
        error: "invalid_scope", code: 70011),
    HostileCase(
        name: "body over 64 KiB", body: "grant_type=client_credentials&\(daemon)&scope=" + String(repeating: "a", count: 70_000), status: 413, error: nil,
        code: nil),
    HostileCase(
        name: "revocation without client", path: "/\(Fixtures.domain)/oauth2/v2.0/revoke", body: "token=abc", status: 400, error: "invalid_request",
        code: 900144),
    HostileCase(
        name: "introspection by a public client", path: "/\(Fixtures.domain)/oauth2/v2.0/introspect", body: "client_id=\(mobile)&token=abc", status: 401,
        error: "invalid_client", code: 7000218),
    HostileCase(
        name: "introspection without token", path: "/\(Fixtures.domain)/oauth2/v2.0/introspect", body: daemon, status: 400, error: "invalid_request",
        code: 900144),
]

@Suite("hostile input")
struct HostileInputTests {
    @Test("every hostile request gets its OAuth error, never a 5xx", arguments: hostileCases)
    func hostile(_ hostile: HostileCase) async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                var headers: HTTPFields = [:]
                if let type = hostile.contentType { headers[.contentType] = type }
                if let authorization = hostile.authorization { headers[.authorization] = authorization }
                let reply = try await client.execute(uri: hostile.path, method: .post, headers: headers, body: ByteBuffer(string: hostile.body)) {
                    JSONReply($0)
                }
                #expect(reply.status.code == hostile.status, "\(hostile.name): \(reply.text.prefix(300))")
                #expect(reply.status.code < 500)
                if let error = hostile.error {
                    #expect(reply.string("error") == error, "\(hostile.name): \(reply.text.prefix(300))")
                    #expect(reply.errorCode == hostile.code, "\(hostile.name): \(reply.text.prefix(300))")
                    #expect(reply.headers[.cacheControl] == "no-store")
                    #expect(reply.string("correlation_id") != nil)
                }
            }
        }
    }

    @Test("the body limit is the configuration's maximumBodyBytes: a smaller one refuses what 64 KiB accepts, a larger one accepts what 64 KiB refuses")
    func configuredBodyLimit() async throws {
        let form = "grant_type=client_credentials&\(daemon)&scope=\(Fixtures.mailResource)/.default&padding="
        for (limit, padding, status) in [(4096, 5000, 413), (256 * 1024, 100_000, 200)] {
            try await withTestEnvironment(configure: { $0.maximumBodyBytes = limit }) { env in
                try await env.application().test(.router) { client in
                    let reply = try await client.execute(
                        uri: "/\(Fixtures.domain)/oauth2/v2.0/token", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
                        body: ByteBuffer(string: form + String(repeating: "a", count: padding))
                    ) { JSONReply($0) }
                    #expect(reply.status.code == status, "limit \(limit), \(padding) bytes of padding: \(reply.text.prefix(400))")
                }
            }
        }
    }

    @Test("the table is large enough")
    func size() { #expect(hostileCases.count >= 25) }
}
