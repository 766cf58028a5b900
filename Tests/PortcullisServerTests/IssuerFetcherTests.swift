import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import PortcullisCore
import Synchronization
import Testing

@testable import PortcullisServer

/// What the server fetches from issuers admins name (transmitters, PROTOCOL §19; federated issuers, §21) passes the
/// callback rule before connecting: configurations, keys, streams and polls at loopback or on a private network are
/// refused unless the operator allows them, and `http` only to loopback.
@Suite("Fetching from issuers admins name (transmitters, federated issuers): where the server may connect")
struct IssuerFetcherTests {
    static func fetcher(_ destinations: CallbackDestinations) -> IssuerFetcher {
        IssuerFetcher(destinations: destinations, logger: Logger(label: "test"))
    }

    static func refusal(_ fetcher: IssuerFetcher, _ url: String) async -> String? {
        do {
            _ = try await fetcher.fetch(url, method: .GET, body: nil, authorization: "Bearer secret-value", what: "the transmitter's keys")
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test("loopback, private and link-local addresses refused by default, before connecting; the error names no secret")
    func refusedByDefault() async throws {
        let strict = Self.fetcher(CallbackDestinations())
        for url in ["https://127.0.0.1:9/jwks", "https://10.1.2.3/jwks", "https://169.254.169.254/latest", "https://[::1]:9/jwks"] {
            let refusal = await Self.refusal(strict, url)
            #expect(refusal?.contains("the transmitter's keys:") == true, "\(url): \(refusal ?? "fetched")")
            #expect(refusal?.contains("secret-value") == false)
        }
        #expect(await Self.refusal(strict, "http://192.0.2.10/jwks")?.contains("only https") == true)
        // Allowed: it connects (nothing listens on the discard port, so it fails there, not at the rule).
        let loopback = Self.fetcher(CallbackDestinations(allowLoopback: true))
        #expect(await Self.refusal(loopback, "https://127.0.0.1:9/jwks") == "the transmitter's keys could not be reached")
    }

    @Test("an issuer that cannot be reached is tried once for concurrent tokens, and not again for 10 s")
    func unreachableIssuerTriedOnce() async throws {
        // A TCP service that counts connections and closes them (no TLS: every fetch fails).
        let accepted = Mutex(0)
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                accepted.withLock { $0 += 1 }
                return channel.close()
            }
            .bind(host: "127.0.0.1", port: 0).get()
        defer { listener.close(promise: nil) }
        let port = try #require(listener.localAddress?.port)
        let keys = IssuerKeys(fetcher: Self.fetcher(CallbackDestinations(allowLoopback: true)))
        let source = IssuerKeys.Source(
            issuer: "https://127.0.0.1:\(port)", jwksUri: nil, configurationUrl: "https://127.0.0.1:\(port)/.well-known/openid-configuration",
            what: "the federated issuer")
        let start = Date()
        func attempt(at offset: TimeInterval) async -> IssuerKeys.Refusal? {
            do {
                _ = try await keys.keys(from: source, kid: "k1", now: start.addingTimeInterval(offset))
                return nil
            } catch {
                return error
            }
        }
        let first = await withTaskGroup(of: IssuerKeys.Refusal?.self) { group in
            for _ in 0..<8 { group.addTask { await attempt(at: 0) } }
            return await group.reduce(into: [IssuerKeys.Refusal?]()) { $0.append($1) }
        }
        #expect(first.allSatisfy { $0 == .unavailable })
        let once = accepted.withLock { $0 }
        #expect(once >= 1)
        #expect(await attempt(at: 5) == .unavailable)
        #expect(accepted.withLock { $0 } == once, "no connection within 10 s of the failure")
        #expect(await attempt(at: 11) == .unavailable)
        #expect(accepted.withLock { $0 } > once, "tried again after 10 s")
    }
}
