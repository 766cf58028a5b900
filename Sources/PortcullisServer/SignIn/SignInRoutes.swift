import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import PortcullisAPI
import PortcullisCore
import PortcullisStorage
import PortcullisTokens

/// Interactive sign-in (PROTOCOL §9): the authorization endpoint and its sign-in page, the session (SSO)
/// and sign-out, and the device code flow's endpoint and pages. Codes and device codes are redeemed at the
/// token endpoint (`TokenService`).
struct SignInRoutes: Sendable {
    let configuration: ServerConfiguration
    let endpoints: ServerEndpoints
    let tenants: TenantCache
    let store: any PortcullisStore
    let signers: TenantKeyRings
    let clients: ClientAuthenticator
    let passwords: PasswordVerifier
    let sealer: PageSealer
    let factorBox: FactorSecretBox
    let pages: Pages
    let countries: CountryTableSource
    /// Tells Shared Signals receivers when a user adds or removes a method (PROTOCOL §12.1, §14.2).
    let transmitter: SignalTransmitter
    /// The sign-in log: a sign-in the page ends (a block) is recorded there; one that gets its code is recorded when the
    /// code is redeemed.
    let recorder: SignInRecorder
    /// Users' answers to terms of use (PROTOCOL §17), stored through the tenant documents' one write path.
    let acceptances: DocumentResource<AgreementAcceptance>
    /// Users, written through their one write path when a user changes their password on the page (PROTOCOL §19).
    let users: DocumentResource<User>
    /// PKeyAuth on the page (PROTOCOL §18): the challenge a web view that offers it gets, and its answer checked.
    let devices: DeviceAuthentication
    /// Risk (PROTOCOL §19): the sign-in's detections and the user's risk; a password change remediates it.
    let risk: RiskEngine
    let clock: any WallClock
    let logger: Logger

    static let sessionCookie = "portcullis_session"
    static let csrfCookie = "portcullis_csrf"

    func register(on router: Router<PortcullisRequestContext>) {
        router.get("/:tenant/oauth2/v2.0/authorize") { request, context in try await authorize(request, context, parameters: Self.query(request)) }
        router.post("/:tenant/oauth2/v2.0/authorize") { request, context in
            try await authorize(request, context, parameters: try await Self.formParameters(request, context))
        }
        router.get("/:tenant/oauth2/v2.0/authorize/pkeyauth") { request, context in try await pkeyAuthAnswered(request, context) }
        router.post("/:tenant/oauth2/v2.0/authorize/signin") { request, context in try await signIn(request, context) }
        router.get("/:tenant/oauth2/v2.0/authorize/home") { request, context in try await homeSignIn(request, context) }
        router.post("/:tenant/oauth2/v2.0/authorize/home") { request, context in try await homeSignInPosted(request, context) }
        router.get("/:tenant/oauth2/v2.0/authorize/guest") { request, context in try await guestReturned(request, context) }
        router.post("/:tenant/oauth2/v2.0/authorize/mfa") { request, context in try await factorSubmitted(request, context) }
        router.post("/:tenant/oauth2/v2.0/authorize/terms") { request, context in try await termsAnswered(request, context) }
        router.post("/:tenant/oauth2/v2.0/authorize/password") { request, context in try await passwordChanged(request, context) }
        router.get("/:tenant/oauth2/v2.0/authorize/terms/file") { request, context in try await termsFile(request, context) }
        router.post("/:tenant/oauth2/v2.0/authorize/passkey") { request, context in try await passkeySignIn(request, context) }
        router.post("/:tenant/oauth2/v2.0/authorize/passkey/register") { request, context in try await passkeyRegistered(request, context) }
        router.get("/:tenant/oauth2/v2.0/logout") { request, context in try await logout(request, context) }
        router.post("/:tenant/oauth2/v2.0/devicecode") { request, context in try await deviceAuthorization(request, context) }
        router.get("/devicelogin") { request, context in deviceLoginPage(request, context) }
        router.post("/devicelogin") { request, context in try await deviceCodeEntered(request, context) }
        router.post("/devicelogin/signin") { request, context in try await deviceSignIn(request, context) }
        router.get("/:tenant/securityinfo") { request, context in try await securityInfo(request, context) }
        router.post("/:tenant/securityinfo/passkeys") { request, context in try await registerPasskey(request, context) }
        router.post("/:tenant/securityinfo/methods") { request, context in try await changeMethod(request, context) }
        router.post("/:tenant/securityinfo/verify") { request, context in try await securityInfoVerify(request, context) }
        router.get("/static/portcullis.css") { _, _ in Pages.stylesheet }
        router.get("/static/passkey.js") { _, _ in Pages.script(PasskeyScript.text) }
    }

    // MARK: Parameters and cookies

    /// Query parameters, decoded as a form (`+` is a space: MSAL for Python encodes scopes so); a repeated
    /// one is reported, not silently resolved.
    static func query(_ request: Request) -> Result<[String: String], TokenError> {
        do {
            return .success(try FormBody(Array((request.uri.query ?? "").utf8)).fields)
        } catch {
            return .failure(error)
        }
    }

    /// One query parameter (for pages that tolerate a malformed query: it is then absent).
    static func queryValue(_ request: Request, _ name: String) -> String? {
        (try? FormBody(Array((request.uri.query ?? "").utf8)))?[name]
    }

    static func formParameters(_ request: Request, _ context: PortcullisRequestContext) async throws -> Result<[String: String], TokenError> {
        do {
            return .success(try await OAuthRoutes.form(request, context).fields)
        } catch let error as TokenError {
            return .failure(error)
        }
    }

    static func cookies(_ request: Request) -> [String: String] {
        var found: [String: String] = [:]
        for header in request.headers[values: .cookie] {
            for pair in header.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2 else { continue }
                let name = parts[0].trimmingCharacters(in: .whitespaces)
                if found[name] == nil { found[name] = parts[1].trimmingCharacters(in: .whitespaces) }
            }
        }
        return found
    }

    var secureCookies: Bool { endpoints.baseURL.hasPrefix("https://") }

    func cookie(_ name: String, _ value: String, path: String, maxAge: Int?, sameSite: String = "Lax") -> String {
        var text = "\(name)=\(value); Path=\(path); HttpOnly; SameSite=\(sameSite)"
        if secureCookies { text += "; Secure" }
        if let maxAge { text += "; Max-Age=\(maxAge)" }
        return text
    }

    /// The CSRF cookie of this browser (what identifies it before it has a session), made when it has none.
    func browserKey(_ request: Request, headers: inout HTTPFields) -> String {
        var value = Self.cookies(request)[Self.csrfCookie] ?? ""
        if value.count < 20 {
            value = CredentialHasher.randomToken(bytes: 16)
            headers.append(HTTPField(name: .setCookie, value: cookie(Self.csrfCookie, value, path: "/", maxAge: nil, sameSite: "Strict")))
        }
        return value
    }

    /// The form token bound to this browser's CSRF cookie (made when it has none).
    func csrf(_ request: Request, purpose: String, headers: inout HTTPFields) -> String {
        sealer.csrfToken(cookie: browserKey(request, headers: &headers), purpose: purpose)
    }

    func checkCSRF(_ request: Request, token: String?, purpose: String) -> Bool {
        guard let token, let value = Self.cookies(request)[Self.csrfCookie] else { return false }
        return sealer.checkCSRF(token, cookie: value, purpose: purpose)
    }

    var basePath: String { URL(string: endpoints.baseURL)?.path ?? "" }

    func frame(_ title: String, tenant: TenantSnapshot?, _ context: PortcullisRequestContext) -> Pages.Frame {
        Pages.Frame(title: title, tenantName: tenant?.tenant.displayName, correlationId: context.correlationId, basePath: basePath)
    }

    func errorPage(
        _ error: TokenError, tenant: TenantSnapshot?, _ context: PortcullisRequestContext, title: String = "Sign-in failed",
        status: HTTPResponse.Status = .badRequest,
        detail: String = "Go back to the app and start again. If it keeps happening, give your administrator the correlation ID below."
    ) -> Response {
        var headers: HTTPFields = [:]
        if error.code == .temporarilyUnavailable { headers[.retryAfter] = String(error.retryAfter ?? 1) }
        return pages.render(
            "message", frame: frame(title, tenant: tenant, context),
            values: [
                "alert": ["text": error.message, "code": String(error.aadsts)],
                "detail": detail,
            ],
            status: error.code == .temporarilyUnavailable ? .serviceUnavailable : status, headers: headers)
    }
}
