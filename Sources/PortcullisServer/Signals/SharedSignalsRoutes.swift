import Foundation
import HTTPTypes
import Hummingbird
import PortcullisCore
import PortcullisStorage
import PortcullisTokens

/// The Shared Signals Framework 1.0 transmitter's HTTP side (PROTOCOL §14.2): metadata, stream management, status,
/// subjects, verification and poll delivery. Receivers call with a client-credentials token for `api://portcullis-ssf`
/// carrying `SSF.Receiver`; each sees only its own streams in its own tenant.
struct SharedSignalsRoutes: Sendable {
    let transmitter: SignalTransmitter
    let tenants: TenantCache
    let signers: TenantKeyRings
    let endpoints: ServerEndpoints
    let revocations: any RevokedAccessTokenStore & ProofReplayStore & EffectStore
    /// Where pushes may go (PROTOCOL §14.2): an endpoint refused here is refused when the stream is written.
    let destinations: CallbackDestinations
    let clock: any WallClock

    func register(on router: Router<PortcullisRequestContext>) {
        // Metadata (SSF §7): at the tenant's path, and where RFC 8414's rule puts it for the tenant's issuer.
        router.get("/.well-known/ssf-configuration/:tenant") { _, context in try await metadata(context) }
        router.get("/.well-known/ssf-configuration/:tenant/v2.0") { _, context in try await metadata(context) }
        router.get("/:tenant/.well-known/ssf-configuration") { _, context in try await metadata(context) }

        let group = router.group("/:tenant/ssf").add(
            middleware: BearerAuthenticator(
                resource: BuiltInResources.sharedSignals, requiredRole: BuiltInResources.sharedSignalsReceiverRole, signers: signers,
                endpoints: endpoints, tenants: tenants, revocations: revocations, clock: clock))
        group.post("stream") { request, context in try await create(request, context) }
        group.get("stream") { request, context in try await read(request, context) }
        group.patch("stream") { request, context in try await change(request, context, replace: false) }
        group.put("stream") { request, context in try await change(request, context, replace: true) }
        group.delete("stream") { request, context in try await delete(request, context) }
        group.get("status") { request, context in try await status(request, context) }
        group.post("status") { request, context in try await setStatus(request, context) }
        group.post("subjects/add") { request, context in try await subjects(request, context, add: true) }
        group.post("subjects/remove") { request, context in try await subjects(request, context, add: false) }
        group.post("verify") { request, context in try await verify(request, context) }
        group.post("poll/:stream") { request, context in try await poll(request, context) }
    }

    // MARK: Metadata

    func metadata(_ context: PortcullisRequestContext) async throws -> Response {
        guard let tenant = try await tenants.snapshot(tenantSegment: context.parameters.get("tenant") ?? "") else {
            throw APIError.notFound("The tenant")
        }
        let id = tenant.tenant.id
        let base = "\(endpoints.baseURL)/\(id)/ssf"
        let metadata: JSONValue = [
            "spec_version": "1_0", "issuer": .string(endpoints.issuer(tenantId: id.rawValue)),
            "jwks_uri": .string("\(endpoints.baseURL)/\(id)/discovery/v2.0/keys"),
            "delivery_methods_supported": .array([.string(SharedSignalsEventType.pushDelivery), .string(SharedSignalsEventType.pollDelivery)]),
            "configuration_endpoint": .string("\(base)/stream"), "status_endpoint": .string("\(base)/status"),
            "add_subject_endpoint": .string("\(base)/subjects/add"), "remove_subject_endpoint": .string("\(base)/subjects/remove"),
            "verification_endpoint": .string("\(base)/verify"),
            "authorization_schemes": .array([["spec_urn": "urn:ietf:rfc:6749"]]),
            "default_subjects": "ALL",
        ]
        return JSONResponse.make(status: .ok, metadata, noStore: false)
    }

    // MARK: Streams

    /// The receiver's tenant (the path's, which must be its token's) and its client application.
    func receiver(_ context: PortcullisRequestContext) async throws -> (tenant: TenantSnapshot, appId: AppID) {
        let principal = try context.requirePrincipal()
        guard let tenant = try await tenants.snapshot(tenantSegment: context.parameters.get("tenant") ?? ""),
            tenant.tenant.id == TenantID(principal.tid)
        else { throw APIError(.forbidden, "forbidden", "A receiver sees only its own tenant's streams.") }
        return (tenant, AppID(principal.azp))
    }

    /// The receiver's stream named `id`; 404 for another receiver's, as for none.
    func stream(_ id: String?, tenant: TenantSnapshot, appId: AppID) async throws -> Versioned<SharedSignalsStream> {
        guard let id, !id.isEmpty else {
            throw APIError(
                .badRequest, "validationFailed", "stream_id is required.", details: [ValidationProblem(pointer: "/stream_id", message: "is required.")])
        }
        guard id.count <= 64, let found = try await transmitter.streams.read(tenant, id: id.lowercased()), found.document.receiverAppId == appId else {
            throw APIError.notFound("The stream \(id.prefix(64))")
        }
        return found
    }

    func create(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let (tenant, appId) = try await receiver(context)
        let body = try await DocumentBody.body(request, context)
        let asked: SharedSignalsStream.Request
        do { asked = try SharedSignalsStream.parseRequest(body) } catch { throw APIError.validation(error) }
        let owned = tenant.contents.sharedSignalsStreams.filter { $0.receiverAppId == appId }
        guard owned.count < SharedSignalsStream.maximumStreamsPerReceiver else {
            throw APIError(.conflict, "tooManyStreams", "A receiver holds at most \(SharedSignalsStream.maximumStreamsPerReceiver) streams; delete one first.")
        }
        let id = UUID.randomIdentifierText
        var stream = SharedSignalsStream(
            id: RecordID(id), receiverAppId: appId, audience: appId.rawValue, eventsRequested: asked.eventsRequested ?? [],
            delivery: .init(method: asked.method ?? .poll, endpointUrl: asked.method == .push ? asked.endpointUrl : nil), description: asked.description,
            createdAt: clock.now())
        if stream.delivery.method == .push, let header = asked.authorizationHeader {
            stream.delivery.sealedAuthorizationHeader = try transmitter.seal(authorizationHeader: header, tenantId: tenant.tenant.id.rawValue, streamId: id)
        }
        try await checkEndpoint(stream)
        let saved = try await transmitter.save(stream, before: nil, tenant: tenant, actor: "app \(appId)")
        return JSONResponse.make(status: .created, transmitter.configuration(saved, tenantId: tenant.tenant.id.rawValue))
    }

    /// A push endpoint must be one delivery may reach: `https` to a public address (loopback and private networks only
    /// where the operator allows them). Said in the same words whatever the reason, so that the check probes nothing.
    func checkEndpoint(_ stream: SharedSignalsStream) async throws {
        guard stream.delivery.method == .push, let endpoint = stream.delivery.endpointUrl else { return }
        do {
            try await destinations.check(endpoint)
        } catch {
            throw APIError.validation(
                ValidationError(problems: [
                    ValidationProblem(
                        pointer: "/delivery/endpoint_url",
                        message:
                            "is not a destination this server delivers to: https to a public address (loopback and private networks only where the operator allows them)."
                    )
                ]))
        }
    }

    func read(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let (tenant, appId) = try await receiver(context)
        if let id = request.uri.queryParameters.get("stream_id") {
            let found = try await stream(id, tenant: tenant, appId: appId)
            return JSONResponse.make(status: .ok, transmitter.configuration(found.document, tenantId: tenant.tenant.id.rawValue))
        }
        let owned = tenant.contents.sharedSignalsStreams.filter { $0.receiverAppId == appId }
        return JSONResponse.make(status: .ok, JSONValue.array(owned.map { transmitter.configuration($0, tenantId: tenant.tenant.id.rawValue) }))
    }

    /// PATCH changes the members sent; PUT replaces what a receiver may set (members left out go back to their defaults).
    func change(_ request: Request, _ context: PortcullisRequestContext, replace: Bool) async throws -> Response {
        let (tenant, appId) = try await receiver(context)
        let body = try await DocumentBody.body(request, context)
        let found = try await stream(body["stream_id"]?.stringValue, tenant: tenant, appId: appId)
        let asked: SharedSignalsStream.Request
        do { asked = try SharedSignalsStream.parseRequest(body) } catch { throw APIError.validation(error) }
        var stream = found.document
        if replace {
            stream.eventsRequested = asked.eventsRequested ?? []
            stream.description = asked.description
            stream.delivery = .init(method: asked.method ?? .poll, endpointUrl: asked.method == .push ? asked.endpointUrl : nil)
        } else {
            if let events = asked.eventsRequested { stream.eventsRequested = events }
            if let description = asked.description { stream.description = description }
            if let method = asked.method {
                let header = method == .push ? stream.delivery.sealedAuthorizationHeader : nil
                stream.delivery = .init(method: method, endpointUrl: method == .push ? asked.endpointUrl : nil, sealedAuthorizationHeader: header)
            }
        }
        if stream.delivery.method == .push, let header = asked.authorizationHeader {
            stream.delivery.sealedAuthorizationHeader = try transmitter.seal(
                authorizationHeader: header, tenantId: tenant.tenant.id.rawValue, streamId: stream.id.rawValue)
        }
        if stream.delivery.endpointUrl != found.document.delivery.endpointUrl { try await checkEndpoint(stream) }
        let saved = stream == found.document ? stream : try await transmitter.save(stream, before: found, tenant: tenant, actor: "app \(appId)")
        return JSONResponse.make(status: .ok, transmitter.configuration(saved, tenantId: tenant.tenant.id.rawValue))
    }

    func delete(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let (tenant, appId) = try await receiver(context)
        let found = try await stream(request.uri.queryParameters.get("stream_id"), tenant: tenant, appId: appId)
        try await transmitter.delete(found, tenant: tenant, actor: "app \(appId)")
        return Response(status: .noContent)
    }

    // MARK: Status (SSF §8.1.2)

    func statusBody(_ stream: SharedSignalsStream) -> JSONValue {
        var body: [String: JSONValue] = ["stream_id": .string(stream.id.rawValue), "status": .string(stream.status.rawValue)]
        if let reason = stream.statusReason { body["reason"] = .string(reason) }
        return .object(body)
    }

    func status(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let (tenant, appId) = try await receiver(context)
        let found = try await stream(request.uri.queryParameters.get("stream_id"), tenant: tenant, appId: appId)
        return JSONResponse.make(status: .ok, statusBody(found.document))
    }

    func setStatus(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let (tenant, appId) = try await receiver(context)
        let body = try await DocumentBody.body(request, context)
        let problems = ProblemCollector()
        guard let reader = JSONObjectReader(body, at: "", problems: problems) else { throw APIError.validation(ValidationError(problems: problems.problems)) }
        reader.rejectUnknownMembers(allowed: ["stream_id", "status", "reason"])
        let status = reader.enumeration("status", allowed: SharedSignalsStream.Status.allCases.map(\.rawValue), required: true)
        let reason = reader.string("reason", nonEmpty: false)
        if let reason, reason.count > 256 { problems.add("/reason", "may be at most 256 characters.") }
        _ = reader.string("stream_id", required: true)
        do { try problems.check() } catch { throw APIError.validation(error) }
        let found = try await stream(body["stream_id"]?.stringValue, tenant: tenant, appId: appId)
        var stream = found.document
        stream.status = status.flatMap(SharedSignalsStream.Status.init(rawValue:)) ?? stream.status
        stream.statusReason = reason
        if stream.delivery.endpointUrl != found.document.delivery.endpointUrl { try await checkEndpoint(stream) }
        let saved = stream == found.document ? stream : try await transmitter.save(stream, before: found, tenant: tenant, actor: "app \(appId)")
        return JSONResponse.make(status: .ok, statusBody(saved))
    }

    // MARK: Subjects (SSF §8.1.3) and verification (§8.1.4)

    func subjects(_ request: Request, _ context: PortcullisRequestContext, add: Bool) async throws -> Response {
        let (tenant, appId) = try await receiver(context)
        let body = try await DocumentBody.body(request, context)
        let problems = ProblemCollector()
        guard let reader = JSONObjectReader(body, at: "", problems: problems) else { throw APIError.validation(ValidationError(problems: problems.problems)) }
        reader.rejectUnknownMembers(allowed: ["stream_id", "subject", "verified"])
        _ = reader.string("stream_id", required: true)
        _ = reader.bool("verified")
        let subject = reader.object["subject"].flatMap { SignalSubject.parse($0, at: "/subject", problems: problems) }
        if reader.object["subject"] == nil { problems.add("/subject", "is required.") }
        do { try problems.check() } catch { throw APIError.validation(error) }
        let found = try await stream(body["stream_id"]?.stringValue, tenant: tenant, appId: appId)
        guard let subject else { throw APIError.validation(ValidationError(problems: [ValidationProblem(pointer: "/subject", message: "is required.")])) }
        var stream = found.document
        // Every subject is included by default (`default_subjects: ALL`): adding one undoes its removal.
        stream.removedSubjects.removeAll { $0 == subject }
        if !add {
            guard stream.removedSubjects.count < SharedSignalsStream.maximumRemovedSubjects else {
                throw APIError(
                    .tooManyRequests, "tooManySubjects", "A stream removes at most \(SharedSignalsStream.maximumRemovedSubjects) subjects.")
            }
            stream.removedSubjects.append(subject)
        }
        if stream != found.document { _ = try await transmitter.save(stream, before: found, tenant: tenant, actor: "app \(appId)") }
        return Response(status: add ? .ok : .noContent)
    }

    func verify(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let (tenant, appId) = try await receiver(context)
        let body = try await DocumentBody.body(request, context)
        let problems = ProblemCollector()
        guard let reader = JSONObjectReader(body, at: "", problems: problems) else { throw APIError.validation(ValidationError(problems: problems.problems)) }
        reader.rejectUnknownMembers(allowed: ["stream_id", "state"])
        _ = reader.string("stream_id", required: true)
        let state = reader.string("state", nonEmpty: false)
        if let state, state.count > 256 { problems.add("/state", "may be at most 256 characters.") }
        do { try problems.check() } catch { throw APIError.validation(error) }
        let found = try await stream(body["stream_id"]?.stringValue, tenant: tenant, appId: appId)
        guard found.document.status != .disabled else {
            throw APIError(.conflict, "streamDisabled", "The stream is disabled: it delivers nothing, verification included.")
        }
        try await transmitter.verify(found.document, tenantId: tenant.tenant.id.rawValue, state: state)
        return Response(status: .noContent)
    }

    // MARK: Poll delivery (RFC 8936)

    func poll(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let (tenant, appId) = try await receiver(context)
        let found = try await stream(context.parameters.get("stream"), tenant: tenant, appId: appId)
        guard found.document.delivery.method == .poll else {
            throw APIError(.badRequest, "pushStream", "The stream delivers by push (urn:ietf:rfc:8935); it is not polled.")
        }
        let body = try await DocumentBody.body(request, context)
        let problems = ProblemCollector()
        guard let reader = JSONObjectReader(body, at: "", problems: problems) else { throw APIError.validation(ValidationError(problems: problems.problems)) }
        reader.rejectUnknownMembers(allowed: ["maxEvents", "returnImmediately", "ack", "setErrs"])
        let maximum = reader.integer("maxEvents", in: 0...1000) ?? 100
        let immediately = reader.bool("returnImmediately") ?? false
        let acknowledged = (reader.strings("ack") ?? []).map(\.value)
        if acknowledged.count > 1000 { problems.add("/ack", "may list at most 1000 SETs.") }
        var errors: [String: String] = [:]
        if let setErrs = reader.object("setErrs") {
            for (jti, value) in setErrs.object.sorted(by: { $0.key < $1.key }).prefix(1000) {
                guard let error = JSONObjectReader(value, at: setErrs.path(jti), problems: problems) else { continue }
                let code = error.string("err", required: true) ?? ""
                let description = error.string("description", nonEmpty: false) ?? ""
                errors[jti] = String("\(code): \(description)".prefix(500))
            }
        }
        do { try problems.check() } catch { throw APIError.validation(error) }
        let target = found.document.outboxTarget
        let now = clock.now()
        try await transmitter.store.acknowledgeSignals(target: target, jtis: acknowledged, at: now)
        try await transmitter.store.rejectSignals(target: target, errors: errors, at: now)
        guard maximum > 0, found.document.status == .enabled else { return try await pollResponse([], more: false) }

        // A node shutting down holds no new long poll (its drain would wait for it); the receiver tries again shortly.
        if !immediately, transmitter.polls.isClosed {
            throw APIError(.serviceUnavailable, "shuttingDown", "The server is shutting down; poll again in a moment.", headers: [.retryAfter: "1"])
        }
        let deadline = ContinuousClock.now + transmitter.settings.longestPoll
        while true {
            let generation = transmitter.polls.generation(found.document.id.rawValue)
            let pending = try await transmitter.store.pendingSignals(target: target, limit: maximum + 1)
            if !pending.isEmpty || immediately || transmitter.polls.isClosed {
                return try await pollResponse(Array(pending.prefix(maximum)), more: pending.count > maximum)
            }
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { return try await pollResponse([], more: false) }
            // Events raised on this node wake the poll; with a shared store, those raised on other nodes are looked for
            // every `sharedStorePollInterval`.
            let wait = transmitter.settings.sharedStorePollInterval.map { min($0, remaining) } ?? remaining
            guard await transmitter.polls.wait(found.document.id.rawValue, after: generation, timeout: wait) else {
                throw APIError(.tooManyRequests, "tooManyPolls", "Too many polls wait on this stream at once.")
            }
            if Task.isCancelled { return try await pollResponse([], more: false) }
        }
    }

    /// The SETs, each signed now (the outbox keeps them unsigned until they are handed out).
    func pollResponse(_ messages: [OutboxMessage], more: Bool) async throws -> Response {
        var sets: [String: JSONValue] = [:]
        for message in messages { sets[message.jti] = .string(try await transmitter.signedPayload(message)) }
        return JSONResponse.make(status: .ok, JSONValue.object(["sets": .object(sets), "moreAvailable": .bool(more)]))
    }
}
