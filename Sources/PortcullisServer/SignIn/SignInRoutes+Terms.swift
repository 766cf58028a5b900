import Foundation
import HTTPTypes
import Hummingbird
import PortcullisCore
import PortcullisStorage
import PortcullisTokens

/// Terms of use on the sign-in page (PROTOCOL §17): when conditional access requires agreements the user has not
/// accepted (or whose acceptance expired), the page shows the first in the user's language — a text whole, a PDF as a
/// link the user must open when the agreement says so — with Accept and Decline. The answer is recorded (Graph's
/// `agreementAcceptance`, audited as the user's act); Accept goes on with the sign-in's one decision (the next agreement,
/// or the code), Decline ends the sign-in with `access_denied`. The step travels sealed through the page, bound to the
/// browser's session (code flow) or to the device code.
extension SignInRoutes {
    struct TermsTicket: Codable {
        enum Continuation: Codable {
            case authorize(AuthorizationRequest)
            case device(userCode: String)
        }

        var continuation: Continuation
        var tenantId: String
        var userId: String
        var sessionHash: String?
        var methods: [String]
        var authTime: Date
        var agreementId: String
        var fileId: String
        var issued: Date
    }

    /// The cookie that says which agreement file this browser opened (for `isViewingBeforeAcceptanceRequired`).
    static let termsViewedCookie = "portcullis_terms_viewed"

    struct TermsViewed: Codable {
        var agreementId: String
        var userId: String
        var issued: Date
    }

    /// The languages of an `Accept-Language` header, best first (`*` says nothing about which file to show).
    static func languages(_ header: String?) -> [String] {
        MessageLanguage.tags(acceptLanguage: header).filter { $0 != "*" && $0.count <= 35 }
    }

    /// The page for the first of `agreementIds`.
    func termsPage(
        _ continuation: TermsTicket.Continuation, agreementIds: [String], user: User, methods: [String], authTime: Date, sessionHash: String?,
        tenant: TenantSnapshot, request: Request, _ context: PortcullisRequestContext, error: String? = nil, status: HTTPResponse.Status = .ok
    ) -> Response {
        guard let agreement = agreementIds.lazy.compactMap({ tenant.agreement(id: PolicyID($0)) }).first,
            let file = agreement.file(for: Self.languages(request.headers[.acceptLanguage]))
        else {
            // A policy names an agreement deleted since (a store edited by hand): nothing to accept, so nothing passes.
            return errorPage(.termsOfUseRequired, tenant: tenant, context, title: "Terms of use unavailable", status: .forbidden)
        }
        let ticket = TermsTicket(
            continuation: continuation, tenantId: tenant.tenant.id.rawValue, userId: user.id.rawValue, sessionHash: sessionHash, methods: methods,
            authTime: authTime,
            agreementId: agreement.id.rawValue, fileId: file.id.rawValue, issued: clock.now())
        var headers: HTTPFields = [:]
        let csrf = csrf(request, purpose: "terms", headers: &headers)
        let sealed = sealer.sealPrivately((try? Self.ticketCoder.0.encode(ticket)) ?? Data())
        let action = "\(basePath)/\(tenant.tenant.id)/oauth2/v2.0/authorize/terms"
        var values: [String: Any] = [
            "action": action, "ticket": sealed, "csrf": csrf, "upn": user.userPrincipalName, "name": agreement.displayName,
            "fileName": file.displayName ?? file.fileName, "language": file.language,
        ]
        if let text = file.text {
            values["text"] = text
        } else {
            values["pdf"] = ["href": "\(action)/file?ticket=\(sealed.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")"]
            if agreement.isViewingBeforeAcceptanceRequired { values["mustView"] = true }
        }
        if let error { values["error"] = ["message": error] }
        return pages.render("terms", frame: frame("Terms of use", tenant: tenant, context), values: values, status: status, headers: headers)
    }

    /// Opens a sealed terms step (valid, this tenant's, not too old, its user still enabled).
    func openTermsTicket(_ sealed: String?, tenant: TenantSnapshot) -> (TermsTicket, User)? {
        guard let sealed, let payload = sealer.openPrivately(sealed), let ticket = try? Self.ticketCoder.1.decode(TermsTicket.self, from: payload),
            ticket.tenantId == tenant.tenant.id.rawValue, clock.now().timeIntervalSince(ticket.issued) < Self.factorStepLifetime,
            let user = tenant.directory.user(id: ObjectID(ticket.userId)), user.accountEnabled
        else { return nil }
        return (ticket, user)
    }

    static let termsFormInvalid = TokenError(
        .invalidRequest, aadsts: 50132, "The terms of use form is not valid or has expired. Start the sign-in again from the app.")

    /// The agreement's file, for the step's user (a PDF opens in the browser); remembers that this browser opened it.
    func termsFile(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let segment = context.parameters.get("tenant") ?? ""
        guard let tenant = try await tenants.snapshot(tenantSegment: segment) else { return errorPage(.unknownTenant(segment), tenant: nil, context) }
        guard let (ticket, user) = openTermsTicket(request.uri.queryParameters.get("ticket").map { String($0) }, tenant: tenant),
            let agreement = tenant.agreement(id: PolicyID(ticket.agreementId)), let file = agreement.files.first(where: { $0.id.rawValue == ticket.fileId })
        else { return errorPage(Self.termsFormInvalid, tenant: tenant, context) }
        let viewed = TermsViewed(agreementId: agreement.id.rawValue, userId: user.id.rawValue, issued: clock.now())
        var headers: HTTPFields = [
            .contentType: file.contentType, .cacheControl: "no-store", .contentDisposition: "inline; filename=\"\(Self.safeFileName(file.fileName))\"",
        ]
        headers[.xContentTypeOptions] = "nosniff"
        headers.append(
            HTTPField(
                name: .setCookie,
                value: cookie(
                    Self.termsViewedCookie, sealer.sealPrivately((try? Self.ticketCoder.0.encode(viewed)) ?? Data()),
                    path: "\(basePath)/\(tenant.tenant.id)/oauth2/v2.0/authorize", maxAge: Int(Self.factorStepLifetime))))
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: file.data)))
    }

    static func safeFileName(_ name: String) -> String {
        String(name.unicodeScalars.filter { $0.isASCII && $0.value >= 0x20 && $0 != "\"" && $0 != "\\" }.prefix(100).map(Character.init))
    }

    /// Accept or Decline.
    func termsAnswered(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let segment = context.parameters.get("tenant") ?? ""
        guard let tenant = try await tenants.snapshot(tenantSegment: segment) else { return errorPage(.unknownTenant(segment), tenant: nil, context) }
        let form: FormBody
        do { form = try await OAuthRoutes.form(request, context) } catch let error as TokenError { return errorPage(error, tenant: tenant, context) }
        guard let (ticket, user) = openTermsTicket(form["ticket"], tenant: tenant), let agreement = tenant.agreement(id: PolicyID(ticket.agreementId)),
            let file = agreement.files.first(where: { $0.id.rawValue == ticket.fileId })
        else { return errorPage(Self.termsFormInvalid, tenant: tenant, context) }
        if let refused = try await refusedStep(
            request, form: form, purpose: "terms", what: "terms of use", sessionHash: ticket.sessionHash, user: user, tenant: tenant, context)
        {
            return refused
        }
        let accepted: Bool
        switch form["decision"] {
        case "accept": accepted = true
        case "decline": accepted = false
        default: return errorPage(Self.termsFormInvalid, tenant: tenant, context)
        }
        if accepted, agreement.mustBeOpened(file) {
            let viewed = Self.cookies(request)[Self.termsViewedCookie].flatMap { sealer.openPrivately($0) }.flatMap {
                try? Self.ticketCoder.1.decode(TermsViewed.self, from: $0)
            }
            guard viewed?.agreementId == agreement.id.rawValue, viewed?.userId == user.id.rawValue else {
                return termsPage(
                    ticket.continuation, agreementIds: [agreement.id.rawValue], user: user, methods: ticket.methods, authTime: ticket.authTime,
                    sessionHash: ticket.sessionHash, tenant: tenant, request: request, context,
                    error: "Open the terms of use and read them before you accept.", status: .badRequest)
            }
        }
        let now = clock.now()
        let acceptance = AgreementAcceptance(agreement: agreement, file: file, user: user, state: accepted ? .accepted : .declined, at: now)
        let updated = try await recordAcceptance(acceptance, tenant: tenant, at: now)
        switch ticket.continuation {
        case .authorize(let authorization):
            guard accepted else {
                return deliver(
                    authorization.redirectUri, mode: authorization.responseMode,
                    fields: errorFields(.termsOfUseDeclined, state: authorization.state, context), tenant: tenant, context)
            }
            return try await complete(
                authorization, user: user, methods: ticket.methods, authTime: ticket.authTime, sessionHash: ticket.sessionHash, tenant: updated,
                request: request, context)
        case .device(let userCode):
            guard let record = try await store.deviceCode(userCode: userCode), record.state == .pending, record.expiresAt > now else {
                return errorPage(
                    TokenError(.expiredToken, aadsts: 70019, "This code has expired or was already used. Start again on your device."), tenant: tenant, context)
            }
            guard accepted else {
                _ = try await store.decideDeviceCode(userCode: userCode, approve: false, userId: nil, methods: [], authTime: nil, now: now)
                return errorPage(.termsOfUseDeclined, tenant: tenant, context, title: "Sign-in declined", status: .forbidden)
            }
            return try await continueDeviceSignIn(
                record, user: user, authentication: AuthenticationContext(methods: ticket.methods, time: ticket.authTime), tenant: updated,
                request: request, context)
        }
    }

    /// Stores the user's answer through the documents' write path (audited as the user's own act), and the tenant as it
    /// is after it.
    func recordAcceptance(_ acceptance: AgreementAcceptance, tenant: TenantSnapshot, at now: Date) async throws -> TenantSnapshot {
        let before = try await acceptances.read(tenant, id: acceptance.id)
        let saved = try await acceptances.save(acceptance, before: before, precondition: .none, tenant: tenant, actor: "user:\(acceptance.userId)")
        return try await tenants.snapshot(tenantSegment: tenant.tenant.id.rawValue) ?? tenant.applying(acceptance, id: acceptance.id, revision: saved.version)
    }

    /// A sealed step's form posted back (terms of use, a password change): refused (the error page) without this browser's
    /// CSRF cookie, or — a step of a sign-in that had a session — without that session of that user; `nil` when it stands.
    func refusedStep(
        _ request: Request, form: FormBody, purpose: String, what: String, sessionHash: String?, user: User, tenant: TenantSnapshot,
        _ context: PortcullisRequestContext
    ) async throws -> Response? {
        guard checkCSRF(request, token: form["csrf"], purpose: purpose) else {
            return errorPage(
                TokenError(
                    .invalidRequest, aadsts: 90014,
                    "The \(what) form could not be verified (its cookie is missing or stale). Start the sign-in again; cookies must be allowed."),
                tenant: tenant, context)
        }
        if let hash = sessionHash {
            let session = try await currentSession(request, tenant: tenant)?.record
            guard session?.idHash == hash, session?.userId == user.id else {
                return errorPage(
                    TokenError(
                        .invalidRequest, aadsts: 50132, "This sign-in was started in another browser or has ended. Start the sign-in again from the app."),
                    tenant: tenant, context)
            }
        }
        return nil
    }
}
