import Foundation
import Hummingbird
import PortcullisCore

/// Session controls on the page (PROTOCOL §13): `persistentBrowser: never` makes the session cookie last only as long as
/// the browser (a sign-in frequency is checked where the page completes a sign-in, `complete`).
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
}
