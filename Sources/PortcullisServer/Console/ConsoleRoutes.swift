import Foundation
import HTTPTypes
import Hummingbird
import Mustache
import NIOCore
import PortcullisAPI
import PortcullisCore
import PortcullisStorage
import PortcullisTokens

/// The admin console (`GET /admin`): server-rendered pages over the admin API's functions. An admin signs in through
/// the interactive sign-in (§9) with the built-in console client (authorization code + PKCE, SSO); the console
/// keeps the access token in a sealed, HttpOnly, SameSite=Strict cookie, checks it on every page as the API checks a
/// bearer token (`BearerAuthenticator.authenticate`), and calls the typed functions the API's routes call — their
/// checks (validation, ETags, audit) are the console's. No HTTP in process, no untyped documents.
/// Every form carries a CSRF token bound to the session; pages have the sign-in pages' headers (CSP
/// `default-src 'self'`, no framing, no caching) and no script.
struct ConsoleRoutes: Sendable {
    let endpoints: ServerEndpoints
    let tenants: TenantCache
    let sealer: PageSealer
    /// The admin API's functions (documents, what-if, impact, sign-ins, audit, enrollments, callbacks).
    let admin: AdminRoutes
    /// The admin API's token check, asked of the session's token on every page.
    let authenticator: BearerAuthenticator
    /// The token endpoint's function (the console redeems its authorization codes).
    let oauth: OAuthRoutes
    let clock: any WallClock
    /// Where sign-out revokes the session's access token (the cookie carries it: a copy must stop working too).
    let revocations: any RevokedAccessTokenStore
    let library: MustacheLibrary

    static let sessionCookie = "portcullis_console"
    static let pendingCookie = "portcullis_console_pending"
    static let csrfPurpose = "console"

    init(
        endpoints: ServerEndpoints, tenants: TenantCache, sealer: PageSealer, admin: AdminRoutes, authenticator: BearerAuthenticator, oauth: OAuthRoutes,
        clock: any WallClock, revocations: any RevokedAccessTokenStore
    ) {
        self.revocations = revocations
        self.endpoints = endpoints
        self.tenants = tenants
        self.sealer = sealer
        self.admin = admin
        self.authenticator = authenticator
        self.oauth = oauth
        self.clock = clock
        var library = MustacheLibrary()
        for (name, text) in ConsoleTemplates.all {
            // Part of the build; a broken template is a programming error every console test catches.
            try! library.register(text, named: name)
        }
        self.library = library
    }

    func register(on router: Router<PortcullisRequestContext>) {
        router.get("admin") { request, context in try await home(request, context) }
        router.get("admin/console.css") { _, _ in Self.stylesheet }
        router.get("admin/signin") { request, context in try await signIn(request, context) }
        router.get("admin/callback") { request, context in try await callback(request, context) }
        router.post("admin/signout") { request, context in try await signOut(request, context) }
        let pages = ConsolePages(console: self)
        pages.register(on: router)
    }

    // MARK: Session

    /// What the console cookie holds (sealed and encrypted: the browser carries it, cannot read it).
    struct Session: Codable, Sendable {
        var tenantId: String
        var tenantName: String
        var upn: String
        var token: String
        var expiresAt: Date
        /// Binds the forms' CSRF tokens to this session.
        var csrfSeed: String
        /// The token carried the Portcullis.Admin role, or its user held an administrative directory role (PROTOCOL §17);
        /// every page checks the token again, and a role holder's request against `AdminAuthorization`.
        var administrator: Bool
        /// The first page the user's rights open (`nil`: the policies): a Reports Reader's is the sign-in log.
        var landing: String?
    }

    /// The PKCE verifier, state and destination of a sign-in under way (a short-lived cookie).
    struct Pending: Codable {
        var tenantId: String
        var verifier: String
        var state: String
        var returnTo: String
        var createdAt: Date
    }

    var basePath: String { URL(string: endpoints.baseURL)?.path ?? "" }
    var cookiePath: String { basePath + "/admin" }
    var redirectUri: String { endpoints.baseURL + BuiltInResources.consoleRedirectPath }

    func cookie(_ name: String, _ value: String, maxAge: Int?) -> String {
        var text = "\(name)=\(value); Path=\(cookiePath); HttpOnly; SameSite=Strict"
        if endpoints.baseURL.hasPrefix("https://") { text += "; Secure" }
        if let maxAge { text += "; Max-Age=\(maxAge)" }
        return text
    }

    func session(_ request: Request) -> Session? {
        guard let sealed = SignInRoutes.cookies(request)[Self.sessionCookie], let data = sealer.openPrivately(sealed),
            let session = try? JSONDecoder().decode(Session.self, from: data), session.expiresAt > clock.now()
        else { return nil }
        return session
    }

    func csrfToken(_ session: Session) -> String { sealer.csrfToken(cookie: session.csrfSeed, purpose: Self.csrfPurpose) }

    /// The session of a page request, or the answer instead: back through sign-in (SSO makes it quick) to `request`'s page.
    func requireSession(_ request: Request) -> Result<Session, ConsoleAnswer> {
        if let session = session(request) { return .success(session) }
        let returnTo = request.method == .get ? request.uri.description : basePath + "/admin"
        let tenant = SignInRoutes.cookies(request)[Self.sessionCookie].flatMap { sealer.openPrivately($0) }
            .flatMap { try? JSONDecoder().decode(Session.self, from: $0) }?.tenantId
        var components = URLComponents()
        components.path = basePath + "/admin/signin"
        components.queryItems = [URLQueryItem(name: "returnTo", value: returnTo)] + (tenant.map { [URLQueryItem(name: "tenant", value: $0)] } ?? [])
        return .failure(.response(Self.redirect(components.string ?? basePath + "/admin")))
    }

    /// A POST's form, with its CSRF token checked against the session: `nil` when missing or wrong.
    func form(_ request: Request, _ context: PortcullisRequestContext, session: Session) async throws -> [String: String]? {
        let fields = try await OAuthRoutes.form(request, context).fields
        guard let token = fields["csrf"], sealer.checkCSRF(token, cookie: session.csrfSeed, purpose: Self.csrfPurpose) else { return nil }
        return fields
    }

    // MARK: Sign-in

    func home(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        if let session = session(request) { return Self.redirect(session.landing ?? basePath + "/admin/policies") }
        // One tenant: straight to its sign-in. Several: ask which organization.
        let all = try await tenants.snapshots()
        let ids = Set(all.values.map(\.tenant.id))
        if ids.count == 1, let only = all.values.first {
            return Self.redirect(
                basePath + "/admin/signin?tenant="
                    + (only.tenant.domain.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed) ?? only.tenant.id.rawValue))
        }
        return page("start", title: "Sign in to the console", session: nil, context, values: [:])
    }

    func signIn(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let query = request.uri.queryParameters
        guard let segment = query.get("tenant"), let tenant = try await tenants.snapshot(tenantSegment: segment) else {
            return page(
                "start", title: "Sign in to the console", session: nil, context, values: [:],
                error: query.get("tenant").map { "No organization '\($0.prefix(100))' here." }, status: query.get("tenant") == nil ? .ok : .notFound)
        }
        // Only a path of this console may be returned to (never another site).
        var returnTo = query.get("returnTo") ?? basePath + "/admin/policies"
        if !returnTo.hasPrefix(basePath + "/admin") || returnTo.hasPrefix("//") || returnTo.contains("\\") { returnTo = basePath + "/admin/policies" }
        let pending = Pending(
            tenantId: tenant.tenant.id.rawValue, verifier: CredentialHasher.randomToken(bytes: 32), state: CredentialHasher.randomToken(bytes: 16),
            returnTo: returnTo, createdAt: clock.now())
        var components = URLComponents(string: endpoints.baseURL + "/\(tenant.tenant.id)/oauth2/v2.0/authorize")
        components?.queryItems = [
            URLQueryItem(name: "client_id", value: BuiltInResources.consoleAppId.rawValue),
            URLQueryItem(name: "response_type", value: "code"),
            URLQueryItem(name: "redirect_uri", value: redirectUri),
            URLQueryItem(name: "scope", value: "\(BuiltInResources.adminIdentifier)/.default openid profile"),
            URLQueryItem(name: "state", value: pending.state),
            URLQueryItem(name: "code_challenge", value: PKCE.challenge(of: pending.verifier)),
            URLQueryItem(name: "code_challenge_method", value: "S256"),
        ]
        var response = Self.redirect(components?.url?.absoluteString ?? endpoints.baseURL)
        response.headers.append(
            HTTPField(name: .setCookie, value: cookie(Self.pendingCookie, sealer.sealPrivately(try JSONEncoder().encode(pending)), maxAge: 900)))
        return response
    }

    func callback(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let query = request.uri.queryParameters
        guard let sealed = SignInRoutes.cookies(request)[Self.pendingCookie], let data = sealer.openPrivately(sealed),
            let pending = try? JSONDecoder().decode(Pending.self, from: data), clock.now().timeIntervalSince(pending.createdAt) < 900,
            query.get("state") == pending.state
        else {
            return page(
                "failure", title: "Sign-in could not finish", session: nil, context,
                values: ["message": "This sign-in was not started here, or took too long. Start again.", "href": basePath + "/admin", "link": "Sign in"],
                status: .badRequest)
        }
        guard let code = query.get("code") else {
            let reason = query.get("error_description") ?? query.get("error") ?? "The sign-in did not complete."
            return page(
                "failure", title: "Sign-in did not complete", session: nil, context,
                values: ["message": String(reason.prefix(300)), "href": basePath + "/admin", "link": "Try again"], status: .forbidden)
        }
        let form = FormBody(fields: [
            "grant_type": "authorization_code", "client_id": BuiltInResources.consoleAppId.rawValue, "code": code, "redirect_uri": redirectUri,
            "code_verifier": pending.verifier,
        ])
        let inputs = TokenRequestInputs(
            tenantSegment: pending.tenantId, form: form, authorization: nil,
            clientIP: ClientAddress.resolve(
                peer: context.clientIP, forwardedFor: request.headers[.xForwardedFor], trustedProxies: oauth.configuration.trustedProxies),
            clientOS: nil, clientSKU: nil, correlationId: context.correlationId)
        let issued: TokenResponse
        do {
            issued = try await oauth.issue(inputs, logger: context.logger)
        } catch let error as TokenError {
            return page(
                "failure", title: "Sign-in did not complete", session: nil, context,
                values: ["message": String("AADSTS\(error.aadsts): \(error.message)".prefix(300)), "href": basePath + "/admin", "link": "Try again"],
                status: .forbidden)
        }
        let token = issued.accessToken
        guard let claims = Self.claims(token) else {
            return page(
                "failure", title: "Sign-in did not complete", session: nil, context,
                values: ["message": "The sign-in could not be completed.", "href": basePath + "/admin", "link": "Try again"], status: .forbidden)
        }
        let tenant = try await tenants.snapshot(tenantSegment: pending.tenantId)
        let expiresIn = issued.expiresIn
        let roles = (claims["oid"] as? String).map { tenant?.directory.roleIds(ofUser: ObjectID($0)) ?? [] } ?? []
        let appRole = ((claims["roles"] as? [String]) ?? []).contains(BuiltInResources.adminRole)
        var session = Session(
            tenantId: pending.tenantId, tenantName: tenant?.tenant.displayName ?? pending.tenantId,
            upn: (claims["upn"] as? String) ?? (claims["preferred_username"] as? String) ?? "", token: token,
            expiresAt: clock.now().addingTimeInterval(TimeInterval(max(60, expiresIn - 60))), csrfSeed: CredentialHasher.randomToken(bytes: 16),
            administrator: appRole || AdminAuthorization.isAdministrative(roles))
        // A role holder whose roles read no policies (a Reports Reader) starts at the sign-in log.
        if !appRole, !AdminAuthorization.allows(roles: roles, method: "GET", path: "conditional-access/policies"),
            AdminAuthorization.allows(roles: roles, method: "GET", path: "sign-ins")
        {
            session.landing = basePath + "/admin/sign-ins"
        }
        let defaultPages = [basePath + "/admin", basePath + "/admin/policies"]
        var response: Response
        if session.administrator {
            response = Self.redirect(defaultPages.contains(pending.returnTo) ? session.landing ?? pending.returnTo : pending.returnTo)
        } else {
            // Signed in, but not an administrator: a clear page and no data (the API would refuse every call anyway).
            response = noAccess(session, context)
        }
        response.headers.append(
            HTTPField(
                name: .setCookie,
                value: cookie(
                    Self.sessionCookie, sealer.sealPrivately(try JSONEncoder().encode(session)),
                    maxAge: Int(session.expiresAt.timeIntervalSince(clock.now())))))
        response.headers.append(HTTPField(name: .setCookie, value: cookie(Self.pendingCookie, "", maxAge: 0)))
        return response
    }

    func signOut(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        guard let session = session(request) else { return Self.redirect(basePath + "/admin") }
        guard try await form(request, context, session: session) != nil else { return csrfRefused(context) }
        // The cookie carries the admin token: a copy of it must stop working now, not when the token expires. The
        // console wrote the cookie itself (sealed), so the token's jti and exp are read from it as they are.
        if let claims = Self.claims(session.token), let jti = claims["jti"] as? String, let exp = claims["exp"] as? Int {
            try await revocations.revokeAccessToken(jti: jti, expiresAt: Date(timeIntervalSince1970: TimeInterval(exp)))
        }
        // The console's cookie goes; the sign-in session (SSO) ends at the tenant's logout page.
        var response = Self.redirect(endpoints.baseURL + "/\(session.tenantId)/oauth2/v2.0/logout")
        response.headers.append(HTTPField(name: .setCookie, value: cookie(Self.sessionCookie, "", maxAge: 0)))
        return response
    }

    func noAccess(_ session: Session, _ context: PortcullisRequestContext) -> Response {
        page(
            "noAccess", title: "No access", session: nil, context,
            values: ["upn": session.upn, "tenantName": session.tenantName, "tenantId": session.tenantId, "csrf": csrfToken(session)], status: .forbidden)
    }

    func csrfRefused(_ context: PortcullisRequestContext) -> Response {
        page(
            "failure", title: "Form expired", session: nil, context,
            values: [
                "message": "The form could not be verified (it is stale or was not sent by this console). Nothing was changed; go back, reload and try again.",
                "href": basePath + "/admin", "link": "Back to the console",
            ], status: .forbidden)
    }

    static func claims(_ token: String) -> [String: Any]? { UnverifiedClaims.payload(of: token) }

    // MARK: Pages

    static let navigation: [(label: String, path: String)] = [
        ("Policies", "/admin/policies"), ("What if", "/admin/what-if"), ("Sign-ins", "/admin/sign-ins"), ("Enrollments", "/admin/enrollments"),
        ("Callbacks", "/admin/callbacks"), ("Audit", "/admin/audit"), ("Directory", "/admin/directory"), ("App configuration", "/admin/app-configuration"),
        ("Signals", "/admin/signals"), ("Risk", "/admin/risk"),
    ]

    func page(
        _ template: String, title: String, session: Session?, _ context: PortcullisRequestContext, values: [String: Any], current: String? = nil,
        notice: String? = nil, error: String? = nil, status: HTTPResponse.Status = .ok
    ) -> Response {
        var values = Self.withoutEmpty(values)
        values["basePath"] = basePath
        if let session { values["csrf"] = csrfToken(session) }
        let content = library.render(values, withTemplate: template) ?? ""
        var frame: [String: Any] = ["title": title, "basePath": basePath, "correlationId": context.correlationId, "content": content]
        if let session {
            frame["signedIn"] = true
            frame["tenantName"] = session.tenantName
            frame["upn"] = session.upn
            frame["csrf"] = csrfToken(session)
            frame["nav"] = Self.navigation.map { ["label": $0.label, "href": basePath + $0.path, "current": $0.path == current] as [String: Any] }
        }
        if let notice { frame["notice"] = notice }
        if let error { frame["error"] = error }
        let html = library.render(frame, withTemplate: "consoleLayout") ?? ""
        var fields: HTTPFields = [:]
        Pages.secure(&fields)
        fields[.contentType] = "text/html; charset=utf-8"
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    /// Mustache renders a section for any present value, an empty string included: empty strings are left out,
    /// so that `{{#error}}…{{/error}}` means "there is an error" (an empty input value renders the same).
    static func withoutEmpty(_ values: [String: Any]) -> [String: Any] {
        var result: [String: Any] = [:]
        for (key, value) in values {
            switch value {
            case let text as String where text.isEmpty: continue
            case let object as [String: Any]: result[key] = withoutEmpty(object)
            case let rows as [[String: Any]]: result[key] = rows.map(withoutEmpty)
            default: result[key] = value
            }
        }
        return result
    }

    static func redirect(_ location: String) -> Response {
        var fields: HTTPFields = [.location: location]
        Pages.secure(&fields)
        return Response(status: .seeOther, headers: fields)
    }

    static let stylesheet = Pages.styleSheet(ConsoleTemplates.stylesheet)
}

/// What a console step answers instead of going on (a redirect to sign-in, a refusal page).
enum ConsoleAnswer: Error {
    case response(Response)
}
