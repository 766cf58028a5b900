import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import PortcullisAPI
import PortcullisCore
import PortcullisStorage

/// `GET /mam/v1/enrollments/{id}/configuration` (PROTOCOL §8.2): the merged app configuration for the
/// enrollment's account and app, to a compliant enrollment only. `ETag` is the version; `If-None-Match` with it
/// answers 304; `?wait=N` (≤ 60 s) holds a request whose `If-None-Match` is current until the version changes
/// — woken at once by a write through this node, and within `recheck` by a write through another (the tenant
/// cache compares the store's revision) — so an app can follow its configuration as a stream.
struct ConfigurationDelivery: Sendable {
    let service: ComplianceService
    let tenants: TenantCache
    let clock: any WallClock
    /// How often a long poll re-reads the store when nothing on this node woke it (other nodes' writes).
    var recheck: Duration = .seconds(1)

    static let maximumWait = 60

    /// A version: a fingerprint of the merged configuration (its canonical JSON), 128 bits in hex.
    static func version(_ merged: MergedAppConfiguration) -> String {
        SHA256.hash(data: merged.canonical).prefix(16).map { String(format: "%02x", $0) }.joined()
    }

    func get(_ request: Request, _ context: PortcullisRequestContext, caller: ComplianceService.Caller) async throws -> Response {
        let id = context.parameters.get("id") ?? ""
        var wait = 0
        if let text = request.uri.queryParameters.get("wait") {
            guard let seconds = Int(text), (0...Self.maximumWait).contains(seconds) else {
                throw APIError.validation(
                    ValidationError(problems: [ValidationProblem(pointer: "/wait", message: "must be a whole number of seconds from 0 to \(Self.maximumWait).")]
                    ))
            }
            wait = seconds
        }
        let known = request.headers[.ifNoneMatch].map { $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
        let deadline = ContinuousClock.now + .seconds(wait)
        var caller = caller
        while true {
            let enrollment = try await service.owned(caller, id: id)
            guard enrollment.isCompliant(at: clock.now()) else {
                // Never configuration to an enrollment that is not compliant (wiped, lapsed, unenrolled): its status instead.
                return ComplianceRoutes.reply(.forbidden, try await service.get(caller, id: id), for: request, caller: caller)
            }
            let merged = caller.tenant.appConfiguration(userId: caller.user.id, clientId: caller.client.appId)
            let version = Self.version(merged)
            if known != version {
                try await service.recordDelivery(enrollment, version: version)
                let body = ManagedConfigurationResponse(
                    version: version, configuration: merged.configuration,
                    secrets: merged.secrets.map {
                        ManagedConfigurationResponse.Secret(
                            identifier: $0.identifier, kind: $0.kind.rawValue, version: $0.version, issuance: $0.issuance?.rawValue)
                    })
                return JSONResponse.make(status: .ok, data: try ComplianceRoutes.encoder.encode(body), headers: [.eTag: "\"\(version)\""])
            }
            let remaining = deadline - ContinuousClock.now
            let waited = remaining > .zero ? await tenants.changes.wait(for: min(remaining, recheck)) : false
            guard waited else {
                var headers: HTTPFields = [.eTag: "\"\(version)\""]
                headers[.cacheControl] = "no-store"
                // Asked to wait but could not (shutting down, or too many waiting): say when to come back.
                if remaining > .zero { headers[.retryAfter] = "1" }
                return Response(status: .notModified, headers: headers)
            }
            // Woken or due: read the tenant (and the enrollment) again.
            guard let tenant = try await tenants.snapshot(tenantSegment: caller.tenant.tenant.id.rawValue) else { throw APIError.unauthenticated }
            guard let user = tenant.directory.user(id: caller.user.id), user.accountEnabled,
                let client = tenant.directory.application(appId: caller.client.appId)
            else { throw APIError.unauthenticated }
            caller = ComplianceService.Caller(tenant: tenant, user: user, client: client)
        }
    }
}
