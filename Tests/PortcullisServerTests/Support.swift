import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PortcullisAPI
import PortcullisStorage
import PortcullisTesting

/// A decoded JSON response.
struct JSONReply {
    let status: HTTPResponse.Status
    let headers: HTTPFields
    let json: [String: Any]
    let text: String

    subscript(key: String) -> Any? { json[key] }
    var string: (String) -> String? { { json[$0] as? String } }
    var errorCode: Int? { (json["error_codes"] as? [Int])?.first }
}

extension TestClientProtocol {
    func form(_ path: String, _ fields: [(String, String)], headers: HTTPFields = [:]) async throws -> JSONReply {
        var all = Form.headers
        for field in headers { all[field.name] = field.value }
        return try await self.execute(uri: path, method: .post, headers: all, body: Form.encode(fields)) { response in
            JSONReply(response)
        }
    }

    func get(_ path: String, headers: HTTPFields = [:]) async throws -> JSONReply {
        try await self.execute(uri: path, method: .get, headers: headers) { JSONReply($0) }
    }

    func token(_ fields: [(String, String)], headers: HTTPFields = [:]) async throws -> JSONReply {
        try await form(TestEnvironment.tokenPath, fields, headers: headers)
    }
}

extension JSONReply {
    init(_ response: TestResponse) {
        let text = String(buffer: response.body)
        self.status = response.status
        self.headers = response.headers
        self.text = text
        self.json = (try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]) ?? [:]
    }
}

/// The claims of a JWT, unverified (tests verify separately).
func jwtClaims(_ token: String) -> [String: Any] {
    let parts = token.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count == 3, let data = Base64URL.decode(String(parts[1])),
        let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
    else { return [:] }
    return object
}

enum Grants {
    static let protAppClaims = #"{"access_token": {"xms_cc": {"values": ["protapp"]}}}"#

    static func password(
        _ account: Fixtures.Account = Fixtures.alice, client: String = Fixtures.mobileClientId,
        scope: String = "\(Fixtures.mailResource)/Mail.Read openid profile offline_access",
        claims: String? = protAppClaims
    ) -> [(String, String)] {
        var fields = [
            ("grant_type", "password"), ("client_id", client), ("username", account.upn), ("password", account.password),
            ("scope", scope), ("client_info", "1"),
        ]
        if let claims { fields.append(("claims", claims)) }
        return fields
    }

    /// A user's token for the admin API through the admin tool, the fixture client whose API permissions list it.
    static func adminPassword(_ account: Fixtures.Account) -> [(String, String)] {
        password(account, client: Fixtures.adminClientId, scope: "api://portcullis-admin/.default", claims: nil) + [("client_secret", Fixtures.adminSecret)]
    }

    static func refresh(_ token: String, client: String = Fixtures.mobileClientId, claims: String? = protAppClaims) -> [(String, String)] {
        var fields = [("grant_type", "refresh_token"), ("client_id", client), ("refresh_token", token)]
        if let claims { fields.append(("claims", claims)) }
        return fields
    }

    static func clientCredentials(scope: String = "\(Fixtures.mailResource)/.default") -> [(String, String)] {
        [("grant_type", "client_credentials"), ("client_id", Fixtures.daemonClientId), ("client_secret", Fixtures.daemonSecret), ("scope", scope)]
    }

    static func basic(_ id: String, _ secret: String) -> String {
        "Basic " + Data("\(id):\(secret)".utf8).base64EncodedString()
    }
}

/// Runs `body` for 0..<count with at most `width` in flight at once: requests that really overlap at the server,
/// without queueing more than a client connection pool holds (AsyncHTTPClient's default is 8 per host).
func concurrently<T: Sendable>(_ count: Int, width: Int = 8, _ body: @escaping @Sendable (Int) async throws -> T) async throws -> [T] {
    try await withThrowingTaskGroup(of: T.self) { group in
        var results: [T] = []
        var next = 0
        while next < min(width, count) {
            let index = next
            group.addTask { try await body(index) }
            next += 1
        }
        while let result = try await group.next() {
            results.append(result)
            if next < count {
                let index = next
                group.addTask { try await body(index) }
                next += 1
            }
        }
        return results
    }
}

extension AuditRecord {
    /// The record's documents as the stores keep them (JSON text), for looking for a value anywhere in them.
    var beforeText: String { AuditRecord.text(of: before) ?? "" }
    var afterText: String { AuditRecord.text(of: after) ?? "" }
}
