import Foundation
import Hummingbird
import JWTKit
import Logging

/// The bare stack Portcullis is measured against, in the same run (BENCHMARKS.md): Hummingbird 2 with no
/// middleware, and jwt-kit 5 signing ES256, nothing else.
///
///   portcullis-baseline PORT
///     GET  /ok     → "ok"
///     POST /sign   → one ES256 access token with a client_credentials grant's claims, as a JSON body
@main
struct Baseline {
    struct Claims: JWTPayload {
        var iss: String
        var aud: String
        var sub: String
        var tid: String
        var azp: String
        var iat: Int
        var nbf: Int
        var exp: Int
        var jti: String
        var roles: [String]
        var ver: String

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    static func main() async throws {
        let port = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 18081
        var logger = Logger(label: "baseline")
        logger.logLevel = .warning
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: ES256PrivateKey(), kid: "baseline")
        let router = Router()
        router.get("/ok") { _, _ in "ok" }
        router.post("/sign") { request, _ -> Response in
            var request = request
            _ = try await request.collectBody(upTo: 64 * 1024)
            let now = Int(Date().timeIntervalSince1970)
            let token = try await keys.sign(
                Claims(
                    iss: "http://127.0.0.1/tenant/v2.0", aud: "00000000-0000-4000-8000-000000000001", sub: "c0000000-0000-4000-8000-000000000001",
                    tid: "tenant", azp: "c0000000-0000-4000-8000-000000000001", iat: now, nbf: now, exp: now + 3600,
                    jti: UUID().uuidString.lowercased(), roles: ["Mail.ReadAll"], ver: "2.0"), kid: "baseline")
            return Response(
                status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(string: #"{"access_token":"\#(token)","token_type":"Bearer","expires_in":3600}"#)))
        }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)), logger: logger)
        try await app.runService()
    }
}
