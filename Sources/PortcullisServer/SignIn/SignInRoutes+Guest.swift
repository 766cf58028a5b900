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

/// B2B collaboration at the page (PROTOCOL §17): a user of another tenant of this installation signs in at the resource
/// tenant's endpoints. The page sends them home — the home tenant's page checks the home tenant's credentials (its
/// lock-outs, its session) — and back, where the resource tenant continues as its B2B collaboration user: its own
/// conditional access, with the home tenant's multifactor authentication counted only when the partner setting trusts it.
extension SignInRoutes {
    /// A B2B sign-in on its way home (`home`) and back (`back`, with how the home tenant authenticated the user): sealed
    /// and encrypted, bound to the browser that began it, short-lived.
    struct GuestTicket: Codable {
        enum Leg: String, Codable { case home, back }
        var leg: Leg
        var request: AuthorizationRequest
        var resourceTenantId: String
        var homeTenantId: String
        /// What the user typed at the resource tenant.
        var username: String
        /// A CSRF token of the browser (purpose `b2b`): the ticket works only in the browser that began the sign-in.
        var browser: String
        var issued: Date
        var homeUserId: String?
        var methods: [String]?
        var authTime: Date?
    }

    static let guestPurpose = "b2b"

    /// The home tenant of a user name typed at `tenant`: another tenant of this installation whose verified domain it is.
    func homeTenant(ofUsername username: String, at tenant: TenantSnapshot) async throws -> TenantSnapshot? {
        guard let domain = username.split(separator: "@").last, username.contains("@") else { return nil }
        guard let home = try await tenants.snapshot(tenantSegment: String(domain)), home.tenant.id != tenant.tenant.id,
            home.tenant.domain == domain.lowercased()
        else { return nil }
        return home
    }

    func sealGuestTicket(_ ticket: GuestTicket) -> String {
        sealer.sealPrivately((try? Self.ticketCoder.0.encode(ticket)) ?? Data())
    }

    /// The ticket of this leg for `tenant` (home: the home tenant; back: the resource tenant), intact, fresh and this browser's.
    func openGuestTicket(_ sealed: String?, leg: GuestTicket.Leg, tenant: TenantSnapshot, request: Request) -> GuestTicket? {
        guard let sealed, let payload = sealer.openPrivately(sealed), let ticket = try? Self.ticketCoder.1.decode(GuestTicket.self, from: payload),
            ticket.leg == leg, (leg == .home ? ticket.homeTenantId : ticket.resourceTenantId) == tenant.tenant.id.rawValue,
            clock.now().timeIntervalSince(ticket.issued) < configuration.signIn.formLifetime,
            checkCSRF(request, token: ticket.browser, purpose: Self.guestPurpose)
        else { return nil }
        return ticket
    }

    static let guestTicketInvalid = TokenError(.invalidRequest, aadsts: 900144, "The sign-in could not be continued. Start the sign-in again from the app.")

    /// From the resource tenant's page to the home tenant's: the user name's tenant authenticates the user.
    func sendHome(
        _ authorization: AuthorizationRequest, username: String, home: TenantSnapshot, tenant: TenantSnapshot, request: Request
    ) -> Response {
        var headers: HTTPFields = [:]
        let ticket = GuestTicket(
            leg: .home, request: authorization, resourceTenantId: tenant.tenant.id.rawValue, homeTenantId: home.tenant.id.rawValue, username: username,
            browser: csrf(request, purpose: Self.guestPurpose, headers: &headers), issued: clock.now())
        headers[.location] = "\(basePath)/\(home.tenant.id)/oauth2/v2.0/authorize/home?\(FormEncoding.encode([("ticket", sealGuestTicket(ticket))]))"
        Pages.secure(&headers)
        return Response(status: .found, headers: headers)
    }

    /// The home tenant's page for a B2B sign-in: its live session for the same user goes straight back; otherwise the
    /// home tenant's sign-in form.
    func homeSignIn(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let segment = context.parameters.get("tenant") ?? ""
        guard let home = try await tenants.snapshot(tenantSegment: segment) else { return errorPage(.unknownTenant(segment), tenant: nil, context) }
        guard let ticket = openGuestTicket(Self.queryValue(request, "ticket"), leg: .home, tenant: home, request: request) else {
            return errorPage(Self.guestTicketInvalid, tenant: home, context)
        }
        if let session = try await currentSession(request, tenant: home),
            session.user.userPrincipalName.caseInsensitiveCompare(ticket.username) == .orderedSame
        {
            try await store.touchSession(idHash: session.record.idHash, at: clock.now())
            return sendBack(ticket, user: session.user, methods: session.record.methods, authTime: session.record.authTime, cookies: [:])
        }
        return try await homePage(ticket, home: home, error: nil, request: request, context)
    }

    func homePage(
        _ ticket: GuestTicket, home: TenantSnapshot, error: TokenError?, request: Request, _ context: PortcullisRequestContext,
        status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        var headers: HTTPFields = [:]
        let resource = try await tenants.snapshot(tenantSegment: ticket.resourceTenantId)
        let resourceName = resource?.tenant.displayName ?? ticket.resourceTenantId
        let app = resource?.directory.application(appId: AppID(ticket.request.clientId))?.displayName ?? ticket.request.clientId
        var values: [String: Any] = [
            "action": "\(basePath)/\(home.tenant.id)/oauth2/v2.0/authorize/home", "ticket": sealGuestTicket(ticket),
            "csrf": csrf(request, purpose: "signin", headers: &headers), "appName": "\(app) at \(resourceName)", "loginHint": ticket.username,
            "focusUsername": false, "submitLabel": "Sign in", "basePath": basePath,
            "note": "You are signing in to \(resourceName) as a guest, with your \(home.tenant.displayName) account.",
        ]
        if let error { values["error"] = ["message": error.message, "code": String(error.aadsts)] }
        return pages.render("signin", frame: frame("Sign in", tenant: home, context), values: values, status: status, headers: headers)
    }

    /// The home tenant's form posted: its credentials checked as any sign-in there (lock-outs, disabled accounts), a home
    /// session started (single sign-on at home), and back to the resource tenant.
    func homeSignInPosted(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let segment = context.parameters.get("tenant") ?? ""
        guard let home = try await tenants.snapshot(tenantSegment: segment) else { return errorPage(.unknownTenant(segment), tenant: nil, context) }
        let form: FormBody
        do { form = try await OAuthRoutes.form(request, context) } catch let error as TokenError { return errorPage(error, tenant: home, context) }
        guard var ticket = openGuestTicket(form["ticket"], leg: .home, tenant: home, request: request),
            checkCSRF(request, token: form["csrf"], purpose: "signin")
        else { return errorPage(Self.guestTicketInvalid, tenant: home, context) }
        let username = (form["username"] ?? "").trimmingCharacters(in: .whitespaces)
        guard !username.isEmpty, let password = form["password"], !password.isEmpty else {
            return try await homePage(
                ticket, home: home, error: TokenError(.invalidRequest, aadsts: 900144, "Enter your user name and password."), request: request, context,
                status: .badRequest)
        }
        ticket.username = username
        let now = clock.now()
        let signedIn: (user: User, authentication: AuthenticationContext)
        do {
            signedIn = try await firstFactor(username: username, secret: password, tenant: home, request: request, context, now: now)
        } catch let error as TokenError {
            return try await homePage(ticket, home: home, error: error, request: request, context, status: .badRequest)
        }
        let token = CredentialHasher.randomToken()
        try await store.insertSession(
            SessionRecord(
                idHash: CredentialHasher.hashToken(token), tenantId: home.tenant.id, userId: signedIn.user.id,
                methods: signedIn.authentication.methods,
                authTime: now, createdAt: now, lastSeenAt: now, expiresAt: now.addingTimeInterval(configuration.signIn.sessionLifetime)),
            keepingAtMost: configuration.signIn.sessionsPerUser)
        var cookies: HTTPFields = [:]
        // A browser-session cookie: no resource tenant's policy decided how long the home session may persist.
        for path in sessionPaths(home) { cookies.append(HTTPField(name: .setCookie, value: cookie(Self.sessionCookie, token, path: path, maxAge: nil))) }
        return sendBack(ticket, user: signedIn.user, methods: signedIn.authentication.methods, authTime: now, cookies: cookies)
    }

    func sendBack(_ ticket: GuestTicket, user: User, methods: [String], authTime: Date, cookies: HTTPFields) -> Response {
        var back = ticket
        back.leg = .back
        back.issued = clock.now()
        back.homeUserId = user.id.rawValue
        back.methods = methods
        back.authTime = authTime
        var headers = cookies
        headers[.location] =
            "\(basePath)/\(ticket.resourceTenantId)/oauth2/v2.0/authorize/guest?\(FormEncoding.encode([("ticket", sealGuestTicket(back))]))"
        Pages.secure(&headers)
        return Response(status: .found, headers: headers)
    }

    /// Back at the resource tenant: the B2B collaboration user of the home account (none: AADSTS50020, as Entra answers
    /// a user who is no guest here), the home authentication counted as the partner setting says, a session here, and
    /// the sign-in's one decision.
    func guestReturned(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let segment = context.parameters.get("tenant") ?? ""
        guard let tenant = try await tenants.snapshot(tenantSegment: segment) else { return errorPage(.unknownTenant(segment), tenant: nil, context) }
        guard let ticket = openGuestTicket(Self.queryValue(request, "ticket"), leg: .back, tenant: tenant, request: request),
            let homeUserId = ticket.homeUserId, let methods = ticket.methods, let authTime = ticket.authTime
        else { return errorPage(Self.guestTicketInvalid, tenant: tenant, context) }
        guard let guest = tenant.directory.user(homeUserId: ObjectID(homeUserId)), guest.homeAccount?.tenantId == TenantID(ticket.homeTenantId) else {
            return errorPage(Self.notInvited(tenant), tenant: tenant, context, status: .forbidden)
        }
        guard guest.accountEnabled else { return errorPage(.userDisabled, tenant: tenant, context, status: .forbidden) }
        let trust = tenant.crossTenantAccess(partner: TenantID(ticket.homeTenantId))?.inboundTrust
        let counted = CrossTenantAccessPartner.counted(AuthenticationContext(methods: methods, time: authTime), trust: trust)
        return try await startSession(ticket.request, user: guest, authentication: counted, tenant: tenant, request: request, context)
    }

    static func notInvited(_ tenant: TenantSnapshot) -> TokenError {
        TokenError(
            .invalidRequest, aadsts: 50020,
            "User account from identity provider does not exist in tenant '\(tenant.tenant.displayName)' and cannot access the application. The account needs to be added as an external user in the tenant first."
        )
    }
}
