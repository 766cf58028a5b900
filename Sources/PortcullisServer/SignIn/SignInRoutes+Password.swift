import Foundation
import HTTPTypes
import Hummingbird
import PortcullisCore
import PortcullisStorage
import PortcullisTokens

/// The secure password change (PROTOCOL §19): when a policy for the user's risk requires `passwordChange`, the page asks
/// for a new password after every other control (the second factor first, as Entra). The new password is stored through
/// the users' one write path as the user's own act — which ends the sessions and refresh families the old one signed in
/// (PROTOCOL §14.1) — and remediates the user's risk (`userPerformedSecuredPasswordChange`); then the sign-in goes on in a
/// new session with its one decision, which the policy no longer applies to. The step travels sealed through the page,
/// bound to the browser's session.
extension SignInRoutes {
    struct PasswordTicket: Codable {
        var authorization: AuthorizationRequest
        var tenantId: String
        var userId: String
        var sessionHash: String?
        var methods: [String]
        var issued: Date
    }

    /// The shortest and longest password the page accepts.
    static let passwordLength = 8...256

    static let passwordFormInvalid = TokenError(
        .invalidRequest, aadsts: 50132, "The password change form is not valid or has expired. Start the sign-in again from the app.")

    func passwordChangePage(
        _ authorization: AuthorizationRequest, user: User, methods: [String], sessionHash: String?, tenant: TenantSnapshot, request: Request,
        _ context: PortcullisRequestContext, error: String? = nil, status: HTTPResponse.Status = .ok
    ) -> Response {
        let ticket = PasswordTicket(
            authorization: authorization, tenantId: tenant.tenant.id.rawValue, userId: user.id.rawValue, sessionHash: sessionHash, methods: methods,
            issued: clock.now())
        var headers: HTTPFields = [:]
        let csrf = csrf(request, purpose: "password", headers: &headers)
        var values: [String: Any] = [
            "action": "\(basePath)/\(tenant.tenant.id)/oauth2/v2.0/authorize/password", "csrf": csrf, "upn": user.userPrincipalName,
            "ticket": sealer.sealPrivately((try? Self.ticketCoder.0.encode(ticket)) ?? Data()), "minimum": Self.passwordLength.lowerBound,
        ]
        if let error { values["error"] = ["message": error] }
        return pages.render("changePassword", frame: frame("Update your password", tenant: tenant, context), values: values, status: status, headers: headers)
    }

    /// The new password, twice.
    func passwordChanged(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let segment = context.parameters.get("tenant") ?? ""
        guard let tenant = try await tenants.snapshot(tenantSegment: segment) else { return errorPage(.unknownTenant(segment), tenant: nil, context) }
        let form: FormBody
        do { form = try await OAuthRoutes.form(request, context) } catch let error as TokenError { return errorPage(error, tenant: tenant, context) }
        guard let sealed = form["ticket"], let payload = sealer.openPrivately(sealed),
            let ticket = try? Self.ticketCoder.1.decode(PasswordTicket.self, from: payload), ticket.tenantId == tenant.tenant.id.rawValue,
            clock.now().timeIntervalSince(ticket.issued) < Self.factorStepLifetime, let user = tenant.directory.user(id: ObjectID(ticket.userId)),
            user.accountEnabled
        else { return errorPage(Self.passwordFormInvalid, tenant: tenant, context) }
        if let refused = try await refusedStep(
            request, form: form, purpose: "password", what: "password change", sessionHash: ticket.sessionHash, user: user, tenant: tenant, context)
        {
            return refused
        }
        // Only a sign-in that met a second factor gets here (the policy's other controls come first); checked again.
        guard AuthenticationContext(methods: ticket.methods, time: nil).includesSecondFactor else {
            return errorPage(Self.passwordFormInvalid, tenant: tenant, context)
        }
        func again(_ message: String) -> Response {
            passwordChangePage(
                ticket.authorization, user: user, methods: ticket.methods, sessionHash: ticket.sessionHash, tenant: tenant, request: request, context,
                error: message, status: .badRequest)
        }
        let password = form["password"] ?? ""
        guard Self.passwordLength.contains(password.count) else {
            return again("Choose a password of \(Self.passwordLength.lowerBound) to \(Self.passwordLength.upperBound) characters.")
        }
        guard password == form["confirm"] else { return again("The two passwords are not the same.") }
        if try await passwords.hasher.verify(password, hash: user.passwordHash) {
            return again("Choose a password you have not used here: the old one may be known to someone else.")
        }
        let now = clock.now()
        var changed = user
        changed.passwordHash = try await passwords.hasher.hash(password)
        let before = try await users.read(tenant, id: user.id.rawValue)
        _ = try await users.save(changed, before: before, precondition: before.map { .version($0.version) } ?? .none, tenant: tenant, actor: "user:\(user.id)")
        var updated = try await tenants.snapshot(id: tenant.tenant.id) ?? tenant
        try await risk.change(user: changed, in: updated, actor: "user:\(user.id)", action: .remediateRisk) { risky, at in
            risky.close(.remediated, detail: .userPerformedSecuredPasswordChange, at: at, initiatedBy: user.id.rawValue)
        }
        updated = try await tenants.snapshot(id: tenant.tenant.id) ?? updated
        // The old password's session ended with it; the user proved themselves just now, with the same methods.
        return try await startSession(
            ticket.authorization, user: changed, authentication: AuthenticationContext(methods: ticket.methods, time: now), tenant: updated,
            request: request, context)
    }
}
