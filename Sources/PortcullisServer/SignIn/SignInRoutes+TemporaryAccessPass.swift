import Foundation
import Hummingbird
import PortcullisCore
import PortcullisStorage

extension SignInRoutes {
    /// The first step of a page sign-in (the sign-in page, device login): the password field holds the user's password
    /// or their temporary access pass (PROTOCOL §12.3). A pass signs in with `mfa` met (`amr: ["tap", "mfa"]`) and is
    /// audited; either is counted against §9.6. Throws the page's `TokenError`.
    func firstFactor(
        username: String, secret: String, tenant: TenantSnapshot, request: Request, _ context: PortcullisRequestContext, now: Date
    ) async throws -> (user: User, authentication: AuthenticationContext) {
        let (user, pass) = try await passwords.verifyOnPage(
            username: username, secret: secret, in: tenant.directory, clientIP: clientIP(request, context), now: now)
        guard user.accountEnabled else { throw TokenError.userDisabled }
        guard let pass else { return (user, .password(at: now)) }
        try await store.appendAudit(
            AuditRecord(
                tenantId: tenant.tenant.id, at: now, actor: "user:\(user.id)", action: .signIn, kind: .temporaryAccessPass,
                documentId: "\(user.id)/\(pass.id)", before: nil,
                after: .object(["isUsableOnce": .bool(pass.usableOnce), "ipAddress": clientIP(request, context).map { .string($0.description) } ?? .null])))
        return (user, .temporaryAccessPass(usableOnce: pass.usableOnce, at: now))
    }
}
