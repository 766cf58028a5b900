import Foundation
import HTTPTypes
import Hummingbird
import PortcullisCore
import PortcullisStorage

/// Continuous access evaluation in the console (PROTOCOL §14): a user's sessions ended from the sign-in methods page
/// (Graph's `revokeSignInSessions`, or `confirmCompromised`), and the tenant's Shared Signals streams — what each
/// receiver asked for, how many events wait, its last deliveries — enabled, paused, disabled or deleted. The operations
/// are the admin API's (`SignalAdminRoutes`).
extension ConsolePages {
    var signalRoutes: SignalAdminRoutes { console.admin.signals }

    static let deliveriesShown = 20

    func registerSignals(on router: Router<PortcullisRequestContext>) {
        router.post("admin/users/:id/revoke") { request, context in try await signedIn(request, context) { try await revokeSessions(request, context, $0) } }
        router.get("admin/signals") { request, context in try await signedIn(request, context) { try await streams(request, context, $0) } }
        router.get("admin/signals/:id") { request, context in try await signedIn(request, context) { try await stream(request, context, $0) } }
        router.post("admin/signals/:id/status") { request, context in
            try await signedIn(request, context) { try await setStreamStatus(request, context, $0) }
        }
        router.post("admin/signals/:id/delete") { request, context in try await signedIn(request, context) { try await deleteStream(request, context, $0) } }
    }

    /// Ends the user's refresh tokens and browser sessions now and tells the receivers; `compromised=true` in the form
    /// reports the credentials compromised as well.
    func revokeSessions(_ request: Request, _ context: PortcullisRequestContext, _ admin: Admin) async throws -> Response {
        let user = try methodsUser(context, admin)
        let fields = try await form(request, context, admin)
        let compromised = fields["compromised"] == "true"
        try await signalRoutes.revokeSessions(tenant: admin.tenant, user: user, actor: admin.actor, compromised: compromised)
        return ConsoleRoutes.redirect("\(basePath)/admin/users/\(Self.path(user.id.rawValue))/methods?done=\(compromised ? "compromised" : "revoked")")
    }

    func streams(_ request: Request, _ context: PortcullisRequestContext, _ admin: Admin) async throws -> Response {
        var rows: [[String: Any]] = []
        for stream in admin.tenant.contents.sharedSignalsStreams.sorted(by: { $0.createdAt < $1.createdAt }) {
            var row = streamValues(stream, admin)
            row["pending"] = try await signalRoutes.store.pendingSignalCount(target: stream.outboxTarget)
            rows.append(row)
        }
        return console.page(
            "signals", title: "Signals", session: admin.session, context,
            values: ["streams": rows, "metadata": "\(console.admin.endpoints.baseURL)/.well-known/ssf-configuration/\(admin.tenant.tenant.id)"],
            current: "/admin/signals", notice: notice(request))
    }

    func stream(_ request: Request, _ context: PortcullisRequestContext, _ admin: Admin) async throws -> Response {
        try await streamPage(try await found(context, admin), admin, context, notice: notice(request))
    }

    func streamPage(
        _ found: Versioned<SharedSignalsStream>, _ admin: Admin, _ context: PortcullisRequestContext, notice: String? = nil, error: String? = nil,
        status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let stream = found.document
        let base = "\(basePath)/admin/signals/\(Self.path(stream.id.rawValue))"
        var values = streamValues(stream, admin)
        values["pending"] = try await signalRoutes.store.pendingSignalCount(target: stream.outboxTarget)
        values["events"] = stream.eventsDelivered.map(\.rawValue)
        values["statusAction"] = "\(base)/status"
        values["deleteAction"] = "\(base)/delete"
        values["statuses"] = Self.options(SharedSignalsStream.Status.allCases.map { ($0.rawValue, $0.rawValue.capitalized) }, selected: stream.status.rawValue)
        values["removedSubjects"] = stream.removedSubjects.count
        values["backHref"] = "\(basePath)/admin/signals"
        values["deliveries"] = try await signalRoutes.store.recentSignals(target: stream.outboxTarget, limit: Self.deliveriesShown).map { message in
            [
                "createdAt": Self.date(message.createdAt), "event": Self.eventNames(of: message.payload), "state": Self.deliveryState(message, of: stream),
                "attempts": message.attempts, "deliveredAt": Self.date(message.deliveredAt), "lastError": message.lastError ?? "",
            ] as [String: Any]
        }
        return console.page(
            "signalStream", title: "Signal stream", session: admin.session, context, values: values, current: "/admin/signals", notice: notice,
            error: error, status: status)
    }

    func setStreamStatus(_ request: Request, _ context: PortcullisRequestContext, _ admin: Admin) async throws -> Response {
        let fields = try await form(request, context, admin)
        let found = try await found(context, admin)
        let reason = (fields["reason"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        guard let status = SharedSignalsStream.Status(rawValue: fields["status"] ?? ""), reason.count <= 256 else {
            return try await streamPage(
                found, admin, context, error: "Choose enabled, paused or disabled; a reason may be at most 256 characters.", status: .badRequest)
        }
        let outcome = try await attempt {
            try await signalRoutes.setStatus(found, to: status, reason: reason.isEmpty ? nil : reason, tenant: admin.tenant, actor: admin.actor)
        }
        if case .failure(let refusal) = outcome { return try await streamPage(found, admin, context, error: refusal.message, status: refusal.status) }
        return ConsoleRoutes.redirect("\(basePath)/admin/signals/\(Self.path(found.document.id.rawValue))?done=state")
    }

    func deleteStream(_ request: Request, _ context: PortcullisRequestContext, _ admin: Admin) async throws -> Response {
        _ = try await form(request, context, admin)
        let found = try await found(context, admin)
        let outcome = try await attempt { try await signalRoutes.transmitter.delete(found, tenant: admin.tenant, actor: admin.actor) }
        if case .failure(let refusal) = outcome { return try await streamPage(found, admin, context, error: refusal.message, status: refusal.status) }
        return ConsoleRoutes.redirect("\(basePath)/admin/signals?done=deleted")
    }

    func found(_ context: PortcullisRequestContext, _ admin: Admin) async throws -> Versioned<SharedSignalsStream> {
        do {
            return try await signalRoutes.stream(context, tenant: admin.tenant)
        } catch let error as APIError where error.status == .notFound {
            throw ConsoleAnswer.response(notFound(context, session: admin.session))
        }
    }

    /// What the list and the stream's page both show.
    func streamValues(_ stream: SharedSignalsStream, _ admin: Admin) -> [String: Any] {
        let receiver = admin.tenant.directory.application(appId: stream.receiverAppId)
        return [
            "id": stream.id, "href": "\(basePath)/admin/signals/\(Self.path(stream.id.rawValue))",
            "receiver": receiver?.displayName ?? stream.receiverAppId, "receiverAppId": stream.receiverAppId, "audience": stream.audience,
            "delivery": stream.delivery.method == .push ? "Push to \(stream.delivery.endpointUrl ?? "")" : "Poll",
            "status": stream.status.rawValue.capitalized, "statusReason": stream.statusReason ?? "", "description": stream.description ?? "",
            "eventCount": stream.eventsDelivered.count, "created": Self.date(stream.createdAt),
        ]
    }

    /// The short names of a SET's events (`session-revoked`), read from the signed token the stream carries.
    /// The event types a queued message carries: its SET's claims as queued (unsigned JSON, PROTOCOL §14.1), or — a
    /// message an earlier build queued — a signed SET's payload.
    static func eventNames(of payload: String) -> String {
        let claims =
            payload.hasPrefix("{")
            ? (try? JSONSerialization.jsonObject(with: Data(payload.utf8))) as? [String: Any] : ConsoleRoutes.claims(payload)
        guard let events = claims?["events"] as? [String: Any] else { return "" }
        return events.keys.sorted().map { $0.split(separator: "/").last.map(String.init) ?? $0 }.joined(separator: ", ")
    }

    static func deliveryState(_ message: OutboxMessage, of stream: SharedSignalsStream) -> String {
        switch message.state {
        case .pending where message.nextAttemptAt >= OutboxMessage.held:
            stream.delivery.method == .poll ? "Waiting for the receiver's poll" : "Held while the stream is not enabled"
        case .pending: "Pending (attempt \(message.attempts + 1))"
        case .delivered: "Delivered"
        case .deadLetter: "Refused"
        }
    }
}
