import Foundation
import Hummingbird
import PortcullisStorage

/// Liveness, readiness (the store answers and the signing keys are loaded) and Prometheus metrics.
struct OperationsRoutes: Sendable {
    let store: any PortcullisStore
    let metrics: ServerMetrics
    let signingKeysLoaded: Bool
    let drain: Drain

    static let live = Data(#"{"status":"ok"}"#.utf8)

    /// The OpenAPI description, encoded once.
    static let openAPI = Data(OpenAPIDocument.json.utf8)

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
            guard signingKeysLoaded else {
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
