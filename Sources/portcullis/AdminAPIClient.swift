import ArgumentParser
import Foundation
import PortcullisAPI

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Options for commands that call the admin API with an admin client's credentials.
struct AdminConnectionOptions: ParsableArguments {
    @Option(help: "Authority URL (e.g. http://127.0.0.1:8080/contoso.example); env PORTCULLIS_AUTHORITY.")
    var authority: String?

    @Option(name: .customLong("client-id"), help: "Admin client ID (holds Portcullis.Admin); env PORTCULLIS_ADMIN_CLIENT_ID.")
    var clientId: String?

    @Option(name: .customLong("client-secret"), help: "Admin client secret; env PORTCULLIS_ADMIN_CLIENT_SECRET.")
    var clientSecret: String?

    func client() async throws -> AdminAPIClient {
        let env = ProcessInfo.processInfo.environment
        guard let authority = authority ?? env["PORTCULLIS_AUTHORITY"] else { throw ValidationError("--authority (or PORTCULLIS_AUTHORITY) is required.") }
        guard let clientId = clientId ?? env["PORTCULLIS_ADMIN_CLIENT_ID"] else {
            throw ValidationError("--client-id (or PORTCULLIS_ADMIN_CLIENT_ID) is required.")
        }
        guard let secret = clientSecret ?? env["PORTCULLIS_ADMIN_CLIENT_SECRET"] else {
            throw ValidationError("--client-secret (or PORTCULLIS_ADMIN_CLIENT_SECRET) is required.")
        }
        return try await AdminAPIClient.connect(authority: authority, clientId: clientId, clientSecret: secret)
    }
}

/// A small client of the admin API: client-credentials token for `api://portcullis-admin`, then JSON calls.
struct AdminAPIClient {
    let baseURL: String
    let token: String

    struct Reply {
        let status: Int
        let body: Data
        let etag: String?
        var json: Any? { try? JSONSerialization.jsonObject(with: body) }
    }

    static func connect(authority: String, clientId: String, clientSecret: String) async throws -> AdminAPIClient {
        let authority = authority.hasSuffix("/") ? String(authority.dropLast()) : authority
        guard let url = URL(string: authority), let scheme = url.scheme, let host = url.host else { throw ValidationError("not a URL: \(authority)") }
        var request = URLRequest(url: URL(string: "\(authority)/oauth2/v2.0/token")!)
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(
            FormEncoding.encode([
                ("grant_type", "client_credentials"), ("client_id", clientId), ("client_secret", clientSecret), ("scope", "api://portcullis-admin/.default"),
            ]).utf8)
        let (data, response) = try await URLSession.shared.data(for: request)
        let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        guard (response as? HTTPURLResponse)?.statusCode == 200, let token = json?["access_token"] as? String else {
            throw ValidationError("cannot get an admin token: \(String(decoding: data, as: UTF8.self))")
        }
        let port = url.port.map { ":\($0)" } ?? ""
        return AdminAPIClient(baseURL: "\(scheme)://\(host)\(port)/admin/v1", token: token)
    }

    /// Every document of a list, following `nextLink` page by page.
    func list(_ path: String) async throws -> [[String: Any]] {
        var items: [[String: Any]] = []
        var next: String? = path
        while let page = next {
            let reply = try await call("GET", page)
            guard reply.status == 200, let object = reply.json as? [String: Any], let value = object["value"] as? [[String: Any]] else {
                throw ValidationError("cannot list \(path): HTTP \(reply.status) \(String(decoding: reply.body, as: UTF8.self))")
            }
            items += value
            // `nextLink` is the page's path under the server; calls take paths under /admin/v1.
            next = (object["nextLink"] as? String).map { link in link.hasPrefix("/admin/v1") ? String(link.dropFirst("/admin/v1".count)) : link }
        }
        return items
    }

    func call(_ method: String, _ path: String, body: Data? = nil, ifMatch: String? = nil, headers: [String: String] = [:]) async throws -> Reply {
        var request = URLRequest(url: URL(string: baseURL + path)!)
        request.httpMethod = method
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        if let body {
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        if let ifMatch { request.setValue(ifMatch, forHTTPHeaderField: "If-Match") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = response as? HTTPURLResponse
        return Reply(status: http?.statusCode ?? 0, body: data, etag: http?.value(forHTTPHeaderField: "ETag"))
    }
}
