import Foundation
import Logging
import NIOHTTP1
import PortcullisCore
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
}
