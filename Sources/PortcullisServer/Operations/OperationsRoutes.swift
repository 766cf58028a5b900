import Foundation
import Hummingbird
import Logging
import PortcullisCore
import PortcullisStorage
import PortcullisTokens

/// Liveness, readiness (the store answers and every tenant's signing key ring is loaded) and Prometheus metrics.
struct OperationsRoutes: Sendable {
    let store: any PortcullisStore
    let metrics: ServerMetrics
    let tenants: TenantCache
    let signers: TenantKeyRings
    let drain: Drain

    static let live = Data(#"{"status":"ok"}"#.utf8)

    /// The OpenAPI description, encoded once.
    /// The OpenAPI 3.1 description of every endpoint (`openapi.json` beside this file, compiled in), kept true by
    /// OpenAPITests and by schemathesis in CI.
    static let openAPI = Data(EmbeddedText.openapi_json.utf8)

    func register(on router: Router<PortcullisRequestContext>) {
        router.get("/health/live") { _, _ in
            JSONResponse.make(status: .ok, data: Self.live)
        }
        router.get("/health/ready") { _, context in
            if drain.isDraining {
                return JSONResponse.make(status: .serviceUnavailable, ["status": "draining"], headers: [.retryAfter: "1"])
            }
            do {
                try await store.ping()
            } catch {
                context.logger.warning("readiness: store unavailable")
                return JSONResponse.make(status: .serviceUnavailable, ["status": "unavailable", "store": "unreachable"], headers: [.retryAfter: "1"])
            }
            var keysLoaded = true
            do {
                // Loaded once per tenant (then a dictionary look-up): a ring that cannot be read makes the node unready.
                for tenantId in Set(try await tenants.snapshots().values.map(\.tenant.id)) { _ = try await signers.signer(tenantId: tenantId) }
            } catch {
                context.logger.warning("readiness: a tenant's signing keys cannot be loaded")
                keysLoaded = false
            }
            guard keysLoaded else {
                return JSONResponse.make(status: .serviceUnavailable, ["status": "unavailable", "keys": "missing"], headers: [.retryAfter: "1"])
            }
            return JSONResponse.make(status: .ok, ["status": "ok", "store": "ok", "keys": "ok"])
        }
        router.get("/openapi.json") { _, _ in
            JSONResponse.make(status: .ok, data: Self.openAPI, headers: [.cacheControl: "public, max-age=300"], noStore: false)
        }
        router.get("/metrics") { _, _ in
            JSONResponse.make(status: .ok, data: Data(metrics.render().utf8), contentType: "text/plain; version=0.0.4; charset=utf-8")
        }
    }
}
