import AsyncHTTPClient
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import NIOFoundationEssentialsCompat
import NIOHTTP1
import PortcullisResourceServer
import PortcullisServer
import PortcullisTesting
import Synchronization
import Testing

/// The resource side's token validation (PROTOCOL §14.3): tokens it verified once are remembered, but never past a change
/// of the authority's keys.
@Suite("AccessTokenValidator: remembered tokens and the authority's keys")
struct AccessTokenValidatorTests {
    @Test("a token verified and remembered is refused once the authority's JWKS no longer holds its key (the next key refresh)")
    func rememberedTokensFollowTheKeys() async throws {
        try await withTestEnvironment(baseURL: "http://localhost:0") { env in
            try await withLiveServer(env) { authority in
                let client = HTTPClient(eventLoopGroupProvider: .singleton)
                do {
                    try await Self.run(authority: authority, client: client)
                } catch {
                    try? await client.shutdown()
                    throw error
                }
                try await client.shutdown()
            }
        }
    }

    static func run(authority: URL, client: HTTPClient) async throws {
        let base = "http://localhost:\(authority.port!)"
        func get(_ url: String) async throws -> ByteBuffer {
            let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(30))
            return try await response.body.collect(upTo: 1 << 20)
        }
        let discovery = try #require(
            try JSONSerialization.jsonObject(with: Data(buffer: try await get("\(authority.absoluteString)/v2.0/.well-known/openid-configuration")))
                as? [String: Any])
        let issuer = try #require(discovery["issuer"] as? String)
        let ownKeys = try await get("\(base)/\(Fixtures.domain)/discovery/v2.0/keys")
        let otherKeys = try await get("\(base)/\(Fixtures.otherDomain)/discovery/v2.0/keys")
        let token = try await Client.carolMailToken(authority, client)

        // An authority whose JWKS the test changes: the real issuer, this tenant's keys, then another tenant's.
        let rotated = Mutex(false)
        let router = Router()
        let keysURL = Mutex("")
        router.get("/t/v2.0/.well-known/openid-configuration") { _, _ in
            let body = try JSONSerialization.data(withJSONObject: ["issuer": issuer, "jwks_uri": keysURL.withLock { $0 }])
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: Array(body))))
        }
        router.get("/keys") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: rotated.withLock { $0 } ? otherKeys : ownKeys))
        }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { fake in
            let origin = "http://127.0.0.1:\(fake.port!)"
            keysURL.withLock { $0 = "\(origin)/keys" }
            let validator = AccessTokenValidator(
                authority: "\(origin)/t", audiences: [Fixtures.mailApiId, Fixtures.mailResource], client: client, keyRefresh: 1, minimumRefetch: 1,
                logger: Logger(label: "test"))
            let now = Date()
            _ = try await validator.validate(token, now: now)
            _ = try await validator.validate(token, now: now.addingTimeInterval(0.5))  // remembered: no refresh yet
            rotated.withLock { $0 = true }
            await #expect(throws: AccessTokenValidator.Rejection.self, "the key is gone from the authority's JWKS") {
                _ = try await validator.validate(token, now: now.addingTimeInterval(2))
            }
        }
    }
}
