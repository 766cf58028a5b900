import Foundation
import HTTPTypes
import Hummingbird
import PortcullisCore
import PortcullisStorage

/// A user's sign-in methods in the console (PROTOCOL §10, §12): the authenticator app, passkeys and the temporary
/// access pass; remove any, clear a suspect passkey, issue a pass (shown once, on the answer to the form). The
/// operations are the admin API's (`AuthenticationMethodRoutes`).
extension ConsolePages {
    var methodRoutes: AuthenticationMethodRoutes { console.admin.authenticationMethods }

    func registerMethods(on router: Router<PortcullisRequestContext>) {
        router.get("admin/users/:id/methods") { request, context in try await signedIn(request, context) { try await methods(request, context, $0) } }
        router.post("admin/users/:id/methods/remove") { request, context in
            try await signedIn(request, context) { try await changeMethod(request, context, $0, remove: true) }
        }
        router.post("admin/users/:id/methods/clear") { request, context in
            try await signedIn(request, context) { try await changeMethod(request, context, $0, remove: false) }
        }
        router.post("admin/users/:id/methods/pass") { request, context in try await signedIn(request, context) { try await issuePass(request, context, $0) } }
    }

    func methodsUser(_ context: PortcullisRequestContext, _ admin: Admin) throws -> User {
        guard let user = admin.tenant.directory.user(identity: context.parameters.get("id") ?? "") else {
            throw ConsoleAnswer.response(notFound(context, session: admin.session))
        }
        return user
    }

    func methods(_ request: Request, _ context: PortcullisRequestContext, _ admin: Admin) async throws -> Response {
        try await methodsPage(try methodsUser(context, admin), admin, context, notice: notice(request))
    }

    func methodsPage(
        _ user: User, _ admin: Admin, _ context: PortcullisRequestContext, notice: String? = nil, issued: TemporaryAccessPassMethod? = nil,
        error: String? = nil, status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let base = "\(basePath)/admin/users/\(Self.path(user.id.rawValue))/methods"
        let rows: [[String: Any]] = try await methodRoutes.methods(tenantId: admin.tenant.tenant.id.rawValue, userId: user.id.rawValue).map { id, method in
            var row: [String: Any] = ["id": id]
            switch method {
            case .totp(let totp):
                row["kind"] = "Authenticator app (TOTP)"
                row["name"] = "Authenticator app"
                row["created"] = Self.date(totp.createdDateTime)
                row["lastUsed"] = Self.date(totp.lastUsedDateTime)
                row["state"] = "Active"
            case .passkey(let passkey):
                row["kind"] = "Passkey (\(passkey.attestationLevel == "attested" ? "attested" : "not attested"), AAGUID \(passkey.aaGuid))"
                row["name"] = passkey.displayName
                row["created"] = Self.date(passkey.createdDateTime)
                row["lastUsed"] = Self.date(passkey.lastUsedDateTime)
                row["state"] = passkey.suspect ? "Suspect: its counter went backwards" : (passkey.backedUp ? "Active, synced" : "Active")
                row["suspect"] = passkey.suspect
            case .temporaryAccessPass(let pass):
                row["kind"] = "Temporary access pass (\(pass.isUsableOnce ? "one-time" : "multi-use"), \(pass.lifetimeInMinutes) min)"
                row["name"] = "Temporary access pass"
                row["created"] = Self.date(pass.createdDateTime)
                row["lastUsed"] = Self.date(pass.lastUsedDateTime)
                row["state"] = pass.isUsable ? "Usable" : pass.methodUsabilityReason
            }
            return row
        }
        var values: [String: Any] = [
            "upn": user.userPrincipalName, "methods": rows, "removeAction": "\(base)/remove", "clearAction": "\(base)/clear", "passAction": "\(base)/pass",
            "revokeAction": "\(basePath)/admin/users/\(Self.path(user.id.rawValue))/revoke",
            "defaultLifetime": String(TemporaryAccessPasses.defaultLifetime), "minimumLifetime": String(TemporaryAccessPasses.lifetimeRange.lowerBound),
            "maximumLifetime": String(TemporaryAccessPasses.lifetimeRange.upperBound), "backHref": "\(basePath)/admin/directory",
        ]
        if let issued, let pass = issued.temporaryAccessPass {
            values["issued"] = [
                "pass": pass, "until": Self.date(issued.startDateTime.addingTimeInterval(TimeInterval(issued.lifetimeInMinutes) * 60)),
                "usage": issued.isUsableOnce ? "once" : "as often as needed",
            ]
        }
        return console.page(
            "methods", title: "Sign-in methods", session: admin.session, context, values: values, current: "/admin/directory", notice: notice,
            error: error, status: status)
    }

    func changeMethod(_ request: Request, _ context: PortcullisRequestContext, _ admin: Admin, remove: Bool) async throws -> Response {
        let user = try methodsUser(context, admin)
        let fields = try await form(request, context, admin)
        let id = fields["methodId"] ?? ""
        let outcome = try await attempt {
            if remove {
                try await methodRoutes.removeMethod(tenant: admin.tenant, user: user, id: id, actor: admin.actor)
            } else {
                _ = try await methodRoutes.clearSuspicion(tenant: admin.tenant, user: user, id: id, actor: admin.actor)
            }
        }
        if case .failure(let refusal) = outcome {
            return try await methodsPage(user, admin, context, error: refusal.message, status: refusal.status)
        }
        return ConsoleRoutes.redirect("\(basePath)/admin/users/\(Self.path(user.id.rawValue))/methods?done=\(remove ? "removed" : "cleared")")
    }

    func issuePass(_ request: Request, _ context: PortcullisRequestContext, _ admin: Admin) async throws -> Response {
        let user = try methodsUser(context, admin)
        let fields = try await form(request, context, admin)
        guard let lifetime = Int(fields["lifetimeInMinutes"] ?? ""), TemporaryAccessPasses.lifetimeRange.contains(lifetime) else {
            return try await methodsPage(
                user, admin, context,
                error:
                    "The lifetime must be \(TemporaryAccessPasses.lifetimeRange.lowerBound) to \(TemporaryAccessPasses.lifetimeRange.upperBound) minutes.",
                status: .badRequest)
        }
        let outcome = try await attempt {
            try await methodRoutes.issuePass(
                tenant: admin.tenant, user: user, start: nil, lifetime: lifetime, usableOnce: fields["isUsableOnce"] == "true", actor: admin.actor)
        }
        switch outcome {
        case .success(let issued):
            return try await methodsPage(
                user, admin, context, notice: "Temporary access pass issued. It is shown this once: give it to the user now.", issued: issued)
        case .failure(let refusal):
            return try await methodsPage(user, admin, context, error: refusal.message, status: refusal.status)
        }
    }
}
