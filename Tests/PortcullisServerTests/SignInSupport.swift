import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import PortcullisTesting

/// RFC 7636 Appendix B's verifier and its S256 challenge: an independent check of our PKCE arithmetic.
enum PKCEVector {
    static let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    static let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
}

/// One HTML page (or redirect) from the sign-in endpoints.
struct Page {
    let status: HTTPResponse.Status
    let headers: HTTPFields
    let html: String

    var location: URLComponents? { headers[.location].flatMap(URLComponents.init(string:)) }

    /// The value of the input named `name` in the page's first form, unescaped.
    func input(_ name: String) -> String? { HTMLForm(html: html).fields[name] }

    /// The first form's action.
    var formAction: String? { HTMLForm(html: html).action }

    /// The AADSTS code shown in the page's alert, if any.
    var shownCode: Int? {
        guard let range = html.range(of: #"AADSTS[0-9]+"#, options: .regularExpression) else { return nil }
        return Int(html[range].dropFirst(6))
    }

    /// The parameters delivered to the redirect URI (query or fragment).
    var delivered: [String: String] {
        guard let location else { return [:] }
        var items = location.queryItems ?? []
        if let fragment = location.percentEncodedFragment {
            var parser = URLComponents()
            parser.percentEncodedQuery = fragment
            items += parser.queryItems ?? []
        }
        return Dictionary(items.map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { first, _ in first })
    }
}

/// A cookie jar and the requests a browser makes (cookie paths are honoured: the session cookie is scoped
/// to the tenant's paths).
final class Browser: @unchecked Sendable {
    struct Cookie {
        var name: String
        var value: String
        var path: String
    }

    var cookies: [Cookie] = []
    /// The `User-Agent` the browser sends (none by default).
    var userAgent: String?
    /// The `Accept-Language` the browser sends (none by default).
    var acceptLanguage: String?

    init(userAgent: String? = nil) { self.userAgent = userAgent }

    func absorb(_ headers: HTTPFields) {
        for header in headers[values: .setCookie] {
            let parts = header.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let pair = parts.first, let equals = pair.firstIndex(of: "=") else { continue }
            let name = String(pair[..<equals])
            let value = String(pair[pair.index(after: equals)...])
            let path = parts.first(where: { $0.hasPrefix("Path=") }).map { String($0.dropFirst(5)) } ?? "/"
            let expired = parts.contains("Max-Age=0")
            cookies.removeAll { $0.name == name && $0.path == path }
            if !expired { cookies.append(Cookie(name: name, value: value, path: path)) }
        }
    }

    func cookieHeader(for uri: String) -> String? {
        let path = String(uri.split(separator: "?", maxSplits: 1).first ?? "")
        let matching = cookies.filter { path == $0.path || path.hasPrefix($0.path.hasSuffix("/") ? $0.path : $0.path + "/") }
        return matching.isEmpty ? nil : matching.map { "\($0.name)=\($0.value)" }.joined(separator: "; ")
    }

    func value(_ name: String) -> String? { cookies.first { $0.name == name }?.value }

    func get(_ client: some TestClientProtocol, _ uri: String) async throws -> Page {
        var headers: HTTPFields = [:]
        if let cookie = cookieHeader(for: uri) { headers[.cookie] = cookie }
        if let userAgent { headers[.userAgent] = userAgent }
        if let acceptLanguage { headers[.acceptLanguage] = acceptLanguage }
        let page = try await client.execute(uri: uri, method: .get, headers: headers) {
            Page(status: $0.status, headers: $0.headers, html: String(buffer: $0.body))
        }
        absorb(page.headers)
        return page
    }

    func post(_ client: some TestClientProtocol, _ uri: String, _ fields: [(String, String)]) async throws -> Page {
        var headers = Form.headers
        if let cookie = cookieHeader(for: uri) { headers[.cookie] = cookie }
        if let userAgent { headers[.userAgent] = userAgent }
        if let acceptLanguage { headers[.acceptLanguage] = acceptLanguage }
        let page = try await client.execute(uri: uri, method: .post, headers: headers, body: Form.encode(fields)) {
            Page(status: $0.status, headers: $0.headers, html: String(buffer: $0.body))
        }
        absorb(page.headers)
        return page
    }

    /// Submits the page's form with its hidden fields plus `fields`.
    func submit(_ client: some TestClientProtocol, _ page: Page, _ fields: [(String, String)]) async throws -> Page {
        var all: [(String, String)] = []
        for name in ["ticket", "csrf"] { if let value = page.input(name) { all.append((name, value)) } }
        return try await post(client, page.formAction ?? "/", all + fields)
    }
}

enum Authorize {
    static let path = "/\(Fixtures.domain)/oauth2/v2.0/authorize"

    static func query(
        client: String = Fixtures.mobileClientId, redirect: String = Fixtures.mobileRedirectUri,
        scope: String = "\(Fixtures.mailResource)/Mail.Read openid profile offline_access", state: String? = "state-123",
        nonce: String? = "nonce-456", challenge: String? = PKCEVector.challenge, method: String? = "S256",
        extra: [(String, String)] = []
    ) -> String {
        var items = [("response_type", "code"), ("client_id", client), ("redirect_uri", redirect), ("scope", scope)]
        if let state { items.append(("state", state)) }
        if let nonce { items.append(("nonce", nonce)) }
        if let challenge { items.append(("code_challenge", challenge)) }
        if let method { items.append(("code_challenge_method", method)) }
        items += extra
        var components = URLComponents()
        components.queryItems = items.map { URLQueryItem(name: $0.0, value: $0.1) }
        let encoded = (components.percentEncodedQuery ?? "").replacingOccurrences(of: "+", with: "%2B")
        return "\(path)?\(encoded)"
    }

    static func redeem(
        _ code: String, redirect: String = Fixtures.mobileRedirectUri, verifier: String? = PKCEVector.verifier,
        client: String = Fixtures.mobileClientId, claims: String? = nil
    ) -> [(String, String)] {
        var fields = [("grant_type", "authorization_code"), ("client_id", client), ("code", code), ("redirect_uri", redirect), ("client_info", "1")]
        if let verifier { fields.append(("code_verifier", verifier)) }
        if let claims { fields.append(("claims", claims)) }
        return fields
    }
}

extension Browser {
    /// Authorize → sign-in page → submit the password: the page that comes back (a redirect on success).
    func signIn(
        _ client: some TestClientProtocol, _ query: String = Authorize.query(), account: Fixtures.Account = Fixtures.alice,
        password: String? = nil
    ) async throws -> Page {
        let page = try await get(client, query)
        guard page.status == .ok, page.input("ticket") != nil else { return page }
        return try await submit(client, page, [("username", account.upn), ("password", password ?? account.password)])
    }
}
