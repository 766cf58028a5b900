import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import PortcullisClient
import PortcullisClientKeys
import PortcullisResourceServer
import PortcullisResourceServerHummingbird
import PortcullisTesting
import PortcullisTokens
import Testing

/// The SDK's DPoP (PROTOCOL §15) against a live server, and the resource-server library checking what it sends.
@Suite("DPoP: the SDK binds its tokens; the resource-server library checks them")
struct DPoPClientTests {
    @Test("a proof key makes every grant bound (nonce retry included), silent refreshes stay bound, and ResourceGuard accepts only proper presentations")
    func boundEndToEnd() async throws {
        try await withTestEnvironment(baseURL: "http://localhost:0") { env in
            try await withLiveServer(env) { authority in
                let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dpop-sdk-\(UUID().uuidString)")
                defer { try? FileManager.default.removeItem(at: directory) }
                let maker = DPoPProofMaker(key: FileInstanceKeyStore(directory: directory))
                var configuration = ClientConfiguration(authority: authority, clientId: Fixtures.mobileClientId)
                configuration.dpop = maker
                let app = PublicClientApplication(configuration: configuration, cache: InMemoryTokenCache())

                // The first request has no nonce: the SDK retries with the server's, transparently.
                let signedIn = try await app.acquireToken(username: Fixtures.carol.upn, password: Fixtures.carol.password, scopes: [Client.mailScope])
                let thumbprint = try await maker.thumbprint()
                #expect(signedIn.tokenType == "DPoP")
                #expect((signedIn.claims["cnf"] as? [String: Any])?["jkt"] as? String == thumbprint, "\(signedIn.claims)")
                let account = try #require(signedIn.account)
                let refreshed = try await app.acquireTokenSilent(account: account, scopes: [Client.mailScope], forceRefresh: true)
                #expect(refreshed.tokenType == "DPoP" && refreshed.accessToken != signedIn.accessToken)
                #expect(try await app.acquireTokenSilent(account: account, scopes: [Client.mailScope]).tokenType == "DPoP", "a cache hit keeps the type")

                // The same key file is the same key (another instance of the store reads it back).
                #expect(try await DPoPProofMaker(key: FileInstanceKeyStore(directory: directory)).thumbprint() == thumbprint)

                // The resource side, with the live server as its authority.
                let client = HTTPClient(eventLoopGroupProvider: .singleton)
                let validator = AccessTokenValidator(
                    authority: authority.absoluteString, audiences: [Fixtures.mailApiId, Fixtures.mailResource], client: client,
                    logger: Logger(label: "test"))
                let guardian = ResourceGuard(validator: validator, replays: ProofReplayCache(capacity: 1000))
                let url = URL(string: "https://mail.fabrikam.test/messages")!
                do {
                    let headers = try await maker.resourceHeaders(for: refreshed, method: "GET", url: url)
                    #expect(headers["Authorization"]?.hasPrefix("DPoP ") == true && headers["DPoP"] != nil)
                    let claims = try await guardian.authorize(
                        authorization: headers["Authorization"], proofs: [headers["DPoP"] ?? ""], method: "GET", url: url.absoluteString, now: Date())
                    #expect(claims.cnf?.jkt == thumbprint && claims.oid == Fixtures.carol.id)
                    await #expect(throws: ResourceGuard.Refusal.self, "a replayed proof") {
                        _ = try await guardian.authorize(
                            authorization: headers["Authorization"], proofs: [headers["DPoP"] ?? ""], method: "GET", url: url.absoluteString, now: Date())
                    }
                    do {
                        _ = try await guardian.authorize(
                            authorization: "Bearer \(refreshed.accessToken)", proofs: [], method: "GET", url: url.absoluteString, now: Date())
                        Issue.record("a stolen bound token presented as Bearer was accepted")
                    } catch let error as ResourceGuard.Refusal {
                        #expect(error.challenges.first?.hasPrefix(#"DPoP error="invalid_token""#) == true, "\(error.challenges)")
                    }
                    // The gateway's path that does not wait (the token is remembered now): the stolen bound token is refused
                    // the same way; a DPoP presentation is left to `authorize`, whose replay cache must see its proof.
                    let remembered = guardian.authorizeRemembered(
                        authorization: "Bearer \(refreshed.accessToken)", proofs: [], method: "GET", url: url.absoluteString, now: Date())
                    guard case .failure(let refusal)? = remembered else {
                        Issue.record("a stolen bound token presented as Bearer was accepted without waiting: \(String(describing: remembered))")
                        return
                    }
                    #expect(refusal.challenges.first?.hasPrefix(#"DPoP error="invalid_token""#) == true, "\(refusal.challenges)")
                    let fresh = try await maker.resourceHeaders(for: refreshed, method: "GET", url: url)
                    #expect(
                        guardian.authorizeRemembered(
                            authorization: fresh["Authorization"], proofs: [fresh["DPoP"] ?? ""], method: "GET", url: url.absoluteString, now: Date()) == nil,
                        "a proof is never decided without its replay check")
                    let other = try await maker.resourceHeaders(for: refreshed, method: "GET", url: URL(string: "https://mail.fabrikam.test/other")!)
                    await #expect(throws: ResourceGuard.Refusal.self, "a proof for another URL") {
                        _ = try await guardian.authorize(
                            authorization: other["Authorization"], proofs: [other["DPoP"] ?? ""], method: "GET", url: url.absoluteString, now: Date())
                    }
                    do {
                        _ = try await guardian.authorize(authorization: nil, proofs: [], method: "GET", url: url.absoluteString, now: Date())
                        Issue.record("no token was accepted")
                    } catch let error as ResourceGuard.Refusal {
                        #expect(error.challenges.count == 2 && error.challenges[0].hasPrefix("Bearer realm") && error.challenges[1].hasPrefix("DPoP algs="))
                    }
                }
                // The same checks as Hummingbird middleware in front of a resource's routes.
                let router = Router(context: ResourceServerContext.self)
                router.add(middleware: ResourceServerMiddleware(guardian: guardian, publicBaseURL: "https://mail.fabrikam.test"))
                router.get("/messages") { _, context in context.accessToken?.oid ?? "none" }
                try await Application(router: router).test(.router) { resource in
                    let url = URL(string: "https://mail.fabrikam.test/messages")!
                    let fresh = try await app.acquireTokenSilent(account: account, scopes: [Client.mailScope], forceRefresh: true)
                    var headers = HTTPFields()
                    for (name, value) in try await maker.resourceHeaders(for: fresh, method: "GET", url: url) {
                        headers.append(HTTPField(name: HTTPField.Name(name)!, value: value))
                    }
                    try await resource.execute(uri: "/messages", method: .get, headers: headers) { response in
                        #expect(response.status == .ok && String(buffer: response.body) == Fixtures.carol.id)
                    }
                    try await resource.execute(uri: "/messages", method: .get, headers: [.authorization: "Bearer \(fresh.accessToken)"]) { response in
                        #expect(response.status == .unauthorized)
                        #expect(response.headers[values: .wwwAuthenticate].first?.hasPrefix(#"DPoP error="invalid_token""#) == true)
                    }
                    try await resource.execute(uri: "/messages", method: .get) { response in
                        #expect(response.status == .unauthorized && response.headers[values: .wwwAuthenticate].count == 2)
                    }
                }
                try await client.shutdown()
            }
        }
    }

    @Test("the resource's replay cache is bounded: full of live proofs it refuses (fail closed), and takes new ones as they expire")
    func replayCacheBound() async {
        let cache = ProofReplayCache(capacity: 2)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(await cache.claim("a", expiresAt: now.addingTimeInterval(121), now: now) == .fresh)
        #expect(await cache.claim("a", expiresAt: now.addingTimeInterval(121), now: now) == .replayed)
        #expect(await cache.claim("b", expiresAt: now.addingTimeInterval(130), now: now) == .fresh)
        #expect(await cache.claim("c", expiresAt: now.addingTimeInterval(121), now: now) == .full)
        #expect(await cache.claim("c", expiresAt: now.addingTimeInterval(250), now: now.addingTimeInterval(122)) == .fresh, "a expired")
        #expect(await cache.count == 2)
        #expect(await cache.claim("a", expiresAt: now.addingTimeInterval(400), now: now.addingTimeInterval(300)) == .fresh, "all expired")
        #expect(await cache.count == 1)
    }
}
