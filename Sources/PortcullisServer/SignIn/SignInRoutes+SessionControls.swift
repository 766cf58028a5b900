import Foundation
import Hummingbird
import PortcullisCore
import PortcullisStorage

/// Session controls on the page (PROTOCOL §13): a sign-in frequency makes the page ask again instead of single sign-on
/// once the session's authentication is older than it allows; `persistentBrowser: never` makes the session cookie last
/// only as long as the browser.
extension SignInRoutes {
    /// The session controls of the enabled policies that apply to this user signing in to this request's app.
    func sessionControls(
        _ authorization: AuthorizationRequest, user: User, methods: [String], tenant: TenantSnapshot, request: Request,
        _ context: PortcullisRequestContext
    ) -> AppliedSessionControls {
        guard let client = tenant.directory.application(appId: authorization.clientId) else { return AppliedSessionControls() }
        let facts = pageFacts(
            user: user, client: client, scope: authorization.scope, claims: authorization.claims, platform: authorization.platform,
            methods: methods, tenant: tenant, request: request, context)
        return tenant.conditionalAccess.evaluate(facts).sessionControls
    }

    /// Whether single sign-on with this session is refused by a sign-in frequency: the user signs in again.
    func sessionTooOld(
        _ authorization: AuthorizationRequest, session: (record: SessionRecord, user: User), tenant: TenantSnapshot, request: Request,
        _ context: PortcullisRequestContext
    ) -> Bool {
        sessionControls(authorization, user: session.user, methods: session.record.methods, tenant: tenant, request: request, context)
            .requiresReauthentication(authTime: session.record.authTime, now: clock.now())
    }
}
