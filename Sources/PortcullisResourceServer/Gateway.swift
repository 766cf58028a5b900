public import AsyncHTTPClient
import Foundation
import HTTPTypes
public import Hummingbird
import Logging
public import NIOCore
import NIOHTTP1
public import PortcullisTokens

/// `portcullis gateway` (PROTOCOL §14.3): a reverse proxy that lets any HTTP service, in any language, rely on Portcullis
/// tokens. Every request's token is checked by `ResourceGuard` (Bearer, or DPoP with a proof); refused requests are
/// answered 401 here with the challenges; good ones go to the upstream with the token's claims in `X-Portcullis-*`
/// headers (any such header the client sent is dropped first, so the upstream can trust them) and without the
/// `Authorization` and `DPoP` headers.
public struct Gateway: Sendable {
    public struct Configuration: Sendable {
        /// The upstream's base URL (`http://127.0.0.1:9000`); the request's path and query are appended.
        public var upstream: String
        /// The public base URL clients call the gateway by, for the proofs' `htu`.
        public var publicBaseURL: String
        /// The largest request body forwarded (413 beyond).
        public var maximumBodyBytes = 10 * 1024 * 1024
        /// How long the upstream may take to answer.
        public var upstreamTimeout: TimeAmount = .seconds(30)

        public init(upstream: String, publicBaseURL: String) {
            self.upstream = upstream.hasSuffix("/") ? String(upstream.dropLast()) : upstream
            self.publicBaseURL = publicBaseURL.hasSuffix("/") ? String(publicBaseURL.dropLast()) : publicBaseURL
        }
    }

    public let configuration: Configuration
    public let guardian: ResourceGuard
    let client: HTTPClient

    public init(configuration: Configuration, guardian: ResourceGuard, client: HTTPClient) {
        self.configuration = configuration
        self.guardian = guardian
        self.client = client
    }

    /// The headers the gateway sets for the upstream; the prefix is removed from whatever the client sent.
    public static let claimHeaderPrefix = "x-portcullis-"

    /// Hop-by-hop headers (RFC 9110 §7.6.1) and the credentials, which are not forwarded.
    static let notForwarded: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade", "host", "content-length",
        "authorization", "dpop",
    ]

    public func respond(to request: Request, context: some RequestContext) async throws -> Response {
        let claims: AccessTokenClaims
        do {
            claims = try await guardian.authorize(
                authorization: request.headers[.authorization], proofs: request.headers[values: .dpop], method: request.method.rawValue,
                url: configuration.publicBaseURL + request.uri.path, now: Date())
        } catch {
            return ResourceServerMiddleware<GatewayContext>.unauthorized(error)
        }
        var outbound = HTTPClientRequest(url: configuration.upstream + request.uri.description)
        outbound.method = .init(rawValue: request.method.rawValue)
        // RFC 9110 §7.6.1: the fields the Connection field names are hop-by-hop too.
        let hopByHop = Self.notForwarded.union(Self.connectionOptions(request.headers[values: .connection]))
        for field in request.headers {
            let name = field.name.canonicalName
            if hopByHop.contains(name) || name.hasPrefix(Self.claimHeaderPrefix) { continue }
            outbound.headers.add(name: field.name.rawName, value: field.value)
        }
        for (name, value) in Self.claimHeaders(claims) { outbound.headers.add(name: name, value: value) }
        let body = request.body
        let buffer: ByteBuffer
        do {
            buffer = try await body.collect(upTo: configuration.maximumBodyBytes)
        } catch {
            return Response(status: .contentTooLarge)
        }
        if buffer.readableBytes > 0 { outbound.body = .bytes(buffer) }
        let answer: HTTPClientResponse
        do {
            answer = try await client.execute(outbound, timeout: configuration.upstreamTimeout)
        } catch {
            return Response(
                status: .badGateway, headers: [.contentType: "text/plain"], body: ResponseBody(byteBuffer: ByteBuffer(string: "The upstream did not answer.\n"))
            )
        }
        var headers = HTTPFields()
        var answerHopByHop = Self.notForwarded.union(Self.connectionOptions(answer.headers[canonicalForm: "connection"].map(String.init)))
        // A HEAD answer keeps the upstream's Content-Length (RFC 9110 §8.6): the length of what a GET would send.
        if request.method == .head { answerHopByHop.remove("content-length") }
        for (name, value) in answer.headers where !answerHopByHop.contains(name.lowercased()) {
            if let field = HTTPField.Name(name) { headers.append(HTTPField(name: field, value: value)) }
        }
        let responseBody: ByteBuffer
        do {
            responseBody = try await answer.body.collect(upTo: configuration.maximumBodyBytes)
        } catch {
            return Response(
                status: .badGateway, headers: [.contentType: "text/plain"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: "The upstream's answer was larger than the gateway forwards, or broke off.\n")))
        }
        return Response(status: .init(code: Int(answer.status.code)), headers: headers, body: ResponseBody(byteBuffer: responseBody))
    }

    /// The field names a `Connection` field lists (RFC 9110 §7.6.1), lower-cased.
    static func connectionOptions(_ values: [String]) -> Set<String> {
        guard !values.isEmpty else { return [] }
        return Set(values.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty })
    }

    /// The token's claims as the upstream sees them.
    public static func claimHeaders(_ claims: AccessTokenClaims) -> [(String, String)] {
        var headers = [
            ("X-Portcullis-Subject", claims.sub), ("X-Portcullis-Tenant-Id", claims.tid), ("X-Portcullis-Client-Id", claims.azp),
            ("X-Portcullis-Token-Id", claims.jti), ("X-Portcullis-Token-Binding", claims.cnf == nil ? "bearer" : "dpop"),
        ]
        if let oid = claims.oid { headers.append(("X-Portcullis-Object-Id", oid)) }
        if let upn = claims.upn { headers.append(("X-Portcullis-User", upn)) }
        if let scp = claims.scp { headers.append(("X-Portcullis-Scopes", scp)) }
        if let roles = claims.roles, !roles.isEmpty { headers.append(("X-Portcullis-Roles", roles.joined(separator: " "))) }
        if let acrs = claims.acrs, !acrs.isEmpty { headers.append(("X-Portcullis-Acrs", acrs.joined(separator: " "))) }
        return headers
    }

    /// The gateway as a Hummingbird responder (every path, every method).
    public var responder: some HTTPResponder<GatewayContext> {
        let gateway = self
        return CallbackResponder { request, context in try await gateway.respond(to: request, context: context) }
    }
}

/// The gateway's request context: nothing beyond Hummingbird's basics.
public struct GatewayContext: ResourceServerRequestContext {
    public var coreContext: CoreRequestContextStorage
    public var accessToken: AccessTokenClaims?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
    }
}
