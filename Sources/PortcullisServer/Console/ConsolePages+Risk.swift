import Foundation
import HTTPTypes
import Hummingbird
import PortcullisCore

/// Risk in the console (PROTOCOL §19): the risky users and workload identities, each with its level, state and why, and
/// the newest detections; an admin confirms a user compromised or dismisses the risk, as in Entra's "Risky users". The
/// operations are the admin API's (`RiskEngine`, through the same decisions `identityProtection` makes).
extension ConsolePages {
    var risk: RiskEngine { console.admin.risk }

    static let detectionsShown = 50

    func registerRisk(on router: Router<PortcullisRequestContext>) {
        router.get("admin/risk") { request, context in try await signedIn(request, context) { try await riskPage(request, context, $0) } }
        router.post("admin/risk/users/:id") { request, context in try await signedIn(request, context) { try await decideUser(request, context, $0) } }
        router.post("admin/risk/service-principals/:id") { request, context in
            try await signedIn(request, context) { try await decideServicePrincipal(request, context, $0) }
        }
    }

    func riskPage(_ request: Request, _ context: PortcullisRequestContext, _ admin: Admin) async throws -> Response {
        let tenant = admin.tenant
        let users = tenant.riskyUsers.sorted {
            ($0.riskLevel, $0.riskLastUpdatedDateTime ?? .distantPast) > ($1.riskLevel, $1.riskLastUpdatedDateTime ?? .distantPast)
        }
        let principals = tenant.riskyServicePrincipals.sorted { $0.riskLevel > $1.riskLevel }
        func open(_ state: RiskState) -> Bool { state.isActive }
        let values: [String: Any] = [
            "users": users.map { user in
                [
                    "upn": user.userPrincipalName, "name": user.userDisplayName, "level": user.riskLevel.rawValue, "state": user.riskState.rawValue,
                    "detail": user.riskDetail == .none ? "" : user.riskDetail.rawValue, "updated": Self.date(user.riskLastUpdatedDateTime),
                    "action": "\(basePath)/admin/risk/users/\(Self.path(user.id.rawValue))", "open": open(user.riskState),
                    "compromised": user.riskState == .confirmedCompromised,
                ] as [String: Any]
            },
            "principals": principals.map { principal in
                [
                    "name": principal.displayName, "appId": principal.id.rawValue, "level": principal.riskLevel.rawValue, "state": principal.riskState.rawValue,
                    "updated": Self.date(principal.riskLastUpdatedDateTime),
                    "action": "\(basePath)/admin/risk/service-principals/\(Self.path(principal.id.rawValue))", "open": open(principal.riskState),
                ] as [String: Any]
            },
            "detections": (tenant.riskDetections + tenant.servicePrincipalRiskDetections).sorted {
                ($0["detectedDateTime"]?.stringValue ?? "") > ($1["detectedDateTime"]?.stringValue ?? "")
            }.prefix(Self.detectionsShown).map { detection in
                [
                    "type": detection["riskEventType"]?.stringValue ?? "", "level": detection["riskLevel"]?.stringValue ?? "",
                    "state": detection["riskState"]?.stringValue ?? "",
                    "who": detection["userPrincipalName"]?.stringValue ?? detection["servicePrincipalDisplayName"]?.stringValue ?? "",
                    "address": detection["ipAddress"]?.stringValue ?? "",
                    "detected": (detection["detectedDateTime"]?.stringValue ?? "").replacingOccurrences(of: "T", with: " ").replacingOccurrences(
                        of: "Z", with: ""),
                    "info": detection["additionalInfo"]?.stringValue ?? "",
                ] as [String: Any]
            },
        ]
        return console.page("risk", title: "Risk", session: admin.session, context, values: values, current: "/admin/risk", notice: notice(request))
    }

    /// Dismiss, or confirm compromised (which ends every session and refresh token of the user's).
    func decideUser(_ request: Request, _ context: PortcullisRequestContext, _ admin: Admin) async throws -> Response {
        let fields = try await form(request, context, admin)
        guard let user = admin.tenant.directory.user(id: ObjectID(context.parameters.get("id") ?? "")) else {
            throw ConsoleAnswer.response(notFound(context, session: admin.session))
        }
        switch fields["decision"] {
        case "dismiss": try await risk.dismiss(user, in: admin.tenant, actor: admin.actor)
        case "confirmCompromised": try await risk.confirmCompromised(user, in: admin.tenant, actor: admin.actor)
        default: return ConsoleRoutes.redirect("\(basePath)/admin/risk")
        }
        return ConsoleRoutes.redirect("\(basePath)/admin/risk?done=\(fields["decision"] == "dismiss" ? "dismissed" : "compromised")")
    }

    func decideServicePrincipal(_ request: Request, _ context: PortcullisRequestContext, _ admin: Admin) async throws -> Response {
        let fields = try await form(request, context, admin)
        guard let application = admin.tenant.directory.application(appId: AppID(context.parameters.get("id") ?? "")) else {
            throw ConsoleAnswer.response(notFound(context, session: admin.session))
        }
        switch fields["decision"] {
        case "dismiss": try await risk.decide(.dismiss, application: application, in: admin.tenant, actor: admin.actor)
        case "confirmCompromised": try await risk.decide(.confirmCompromised, application: application, in: admin.tenant, actor: admin.actor)
        default: return ConsoleRoutes.redirect("\(basePath)/admin/risk")
        }
        return ConsoleRoutes.redirect("\(basePath)/admin/risk?done=\(fields["decision"] == "dismiss" ? "dismissed" : "confirmed")")
    }
}
