import ArgumentParser
import Foundation
import HTTPTypes
import Hummingbird
import JWTKit
import Logging
import NIOConcurrencyHelpers
import NIOCore
import PortcullisAPI
import PortcullisClient
import PortcullisTokens

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

struct CallbacksCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "callbacks", abstract: "Compliance callbacks.", subcommands: [Listen.self])

    struct Listen: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Receive compliance callbacks (RFC 8935 push of RFC 8417 SETs), verify each, print it, answer 202.",
            discussion: """
                Each event must verify against the authority's JWKS, have typ secevent+jwt, the authority's issuer, this app \
                as audience (--audience), an iat no older than --max-age seconds, and a jti not seen before (a repeat is \
                acknowledged with 202 and not printed twice). A refused event is answered 400 with the reason, printed too. \
                Output is flushed per event, so it can be followed through a pipe or a file.
                """)

        @Option(help: "Port to listen on (127.0.0.1).") var port: Int = 9555
        @Option(help: "Authority whose JWKS signs the events, e.g. http://127.0.0.1:8080/contoso.example") var authority: String
        @Option(help: "The client application ID the events are for (the SET's aud).") var audience: String
        @Option(help: "Refuse events whose iat is older than this many seconds.") var maxAge: Int = 3600
        @Option(help: "Stop after this many events (0: run until interrupted).") var count: Int = 0

        func run() async throws {
            let base = authority.hasSuffix("/") ? String(authority.dropLast()) : authority
            guard let discoveryURL = URL(string: "\(base)/v2.0/.well-known/openid-configuration") else { throw ValidationError("--authority is not a URL") }
            let (discoveryData, _) = try await URLSession.shared.data(from: discoveryURL)
            let discovery = try JSONDecoder().decode(DiscoveryDocument.self, from: discoveryData)
            guard let jwksURL = URL(string: discovery.jwksUri) else { throw ValidationError("discovery names no usable jwks_uri") }
            let (jwks, _) = try await URLSession.shared.data(from: jwksURL)
            let keys = try await JWTKeyCollection().add(jwksJSON: String(decoding: jwks, as: UTF8.self))
            let checks = SecurityEventChecks(issuer: discovery.issuer, audience: audience, maximumAge: TimeInterval(maxAge))
            let received = Counter()
            let limit = count
            var logger = Logger(label: "portcullis-callbacks")
            logger.logLevel = .warning
            let router = Router()
            router.post("**") { request, _ -> Response in
                var request = request
                let body = String(buffer: try await request.collectBody(upTo: 64 * 1024))
                func refuse(_ status: HTTPResponse.Status, _ reason: String) -> Response {
                    say("refused: \(reason)")
                    return Response(
                        status: status, headers: [.contentType: "application/json"],
                        body: .init(
                            byteBuffer: ByteBuffer(string: #"{"err":"invalid_request","description":"\#(reason.replacingOccurrences(of: "\"", with: "'"))"}"#)))
                }
                guard request.headers[.contentType]?.lowercased().hasPrefix(SecurityEventTypes.mediaType) == true else {
                    return refuse(.unsupportedMediaType, "Content-Type is not \(SecurityEventTypes.mediaType)")
                }
                let event: ComplianceSecurityEvent
                do {
                    event = try await keys.verify(body, as: ComplianceSecurityEvent.self)
                } catch {
                    return refuse(.badRequest, "the SET does not verify against \(discovery.jwksUri)")
                }
                switch checks.check(header: SecurityEventChecks.header(of: body) ?? [:], event: event, now: Date()) {
                case .reject(let reason):
                    return refuse(.badRequest, reason)
                case .duplicate:
                    say("duplicate SET \(event.jti) acknowledged (already received)")
                    return Response(status: .accepted)
                case .accept:
                    let encoder = JSONEncoder()
                    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
                    say(
                        "verified SET \(event.jti) (signature checked against \(discovery.jwksUri)):\n"
                            + String(decoding: try encoder.encode(event), as: UTF8.self))
                    if limit > 0 && received.increment() >= limit { Foundation.exit(0) }
                    return Response(status: .accepted)
                }
            }
            let audience = self.audience
            let app = Application(
                router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)),
                onServerRunning: { channel in
                    // Printed once the socket listens, so that whoever waits for this line can connect at once.
                    say("listening for compliance callbacks for \(audience) on http://127.0.0.1:\(channel.localAddress?.port ?? port)/ (any path)")
                },
                logger: logger)
            try await app.runService()
        }
    }
}

/// Prints and flushes at once: the output is followed through pipes and files as it happens (the C
/// library buffers standard output fully when it is not a terminal).
func say(_ text: String) {
    print(text)
    fflush(nil)
}

/// A thread-safe counter.
final class Counter: Sendable {
    private let box = NIOLockedValueBox(0)
    func increment() -> Int {
        box.withLockedValue {
            $0 += 1
            return $0
        }
    }
}
