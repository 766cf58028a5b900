import ArgumentParser
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Hummingbird
import JWTKit
import Logging
import NIOConcurrencyHelpers
import PortcullisAPI
import PortcullisTokens

struct CallbacksCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "callbacks", abstract: "Compliance callbacks.", subcommands: [Listen.self])

    struct Listen: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Receive compliance callbacks (RFC 8935 push of RFC 8417 SETs), verify each against the authority's JWKS, print it, answer 202.")

        @Option(help: "Port to listen on (127.0.0.1).") var port: Int = 9555
        @Option(help: "Authority whose JWKS signs the events, e.g. http://127.0.0.1:8080/contoso.example") var authority: String
        @Option(help: "Stop after this many events (0: run until interrupted).") var count: Int = 0

        func run() async throws {
            let base = authority.hasSuffix("/") ? String(authority.dropLast()) : authority
            guard let discoveryURL = URL(string: "\(base)/v2.0/.well-known/openid-configuration") else { throw ValidationError("--authority is not a URL") }
            let (discoveryData, _) = try await URLSession.shared.data(from: discoveryURL)
            let discovery = try JSONDecoder().decode(DiscoveryDocument.self, from: discoveryData)
            let (jwks, _) = try await URLSession.shared.data(from: URL(string: discovery.jwksUri)!)
            let keys = try await JWTKeyCollection().add(jwksJSON: String(decoding: jwks, as: UTF8.self))
            let received = Counter()
            let limit = count
            var logger = Logger(label: "portcullis-callbacks")
            logger.logLevel = .warning
            let router = Router()
            router.post("**") { request, _ -> Response in
                var request = request
                let body = String(buffer: try await request.collectBody(upTo: 64 * 1024))
                guard request.headers[.contentType]?.lowercased().hasPrefix(SecurityEventTypes.mediaType) == true else {
                    print("refused: Content-Type is not \(SecurityEventTypes.mediaType)")
                    return Response(status: .unsupportedMediaType)
                }
                do {
                    let event = try await keys.verify(body, as: ComplianceSecurityEvent.self)
                    guard event.iss == discovery.issuer else {
                        print("refused: issuer \(event.iss) is not \(discovery.issuer)")
                        return Response(status: .badRequest)
                    }
                    let encoder = JSONEncoder()
                    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
                    print("verified SET \(event.jti) (signature checked against \(discovery.jwksUri)):")
                    print(String(decoding: try encoder.encode(event), as: UTF8.self))
                    if limit > 0 && received.increment() >= limit {
                        fflush(nil)
                        Foundation.exit(0)
                    }
                    return Response(status: .accepted)
                } catch {
                    print("refused: the SET does not verify against \(discovery.jwksUri)")
                    return Response(status: .badRequest)
                }
            }
            let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)), logger: logger)
            print("listening for compliance callbacks on http://127.0.0.1:\(port)/ (any path)")
            fflush(nil)
            try await app.runService()
        }
    }
}

/// A thread-safe counter.
final class Counter: Sendable {
    private let box = NIOLockedValueBox(0)
    func increment() -> Int { box.withLockedValue { $0 += 1; return $0 } }
}
