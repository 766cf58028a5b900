import Foundation
public import HTTPTypes
public import Hummingbird
public import PortcullisResourceServer
public import PortcullisTokenVerification

/// A request context that can carry the verified token of a request.
public protocol ResourceServerRequestContext: RequestContext {
    var accessToken: AccessTokenClaims? { get set }
    /// The address the request came from, for tokens under strict location enforcement (PROTOCOL §17): a context that is
    /// also a `RemoteAddressRequestContext` answers its `remoteAddress`; others answer `nil`, and such tokens are refused.
    var clientAddress: String? { get }
}

extension ResourceServerRequestContext {
    public var clientAddress: String? { nil }
}

extension ResourceServerRequestContext where Self: RemoteAddressRequestContext {
    public var clientAddress: String? { remoteAddress?.ipAddress }
}

/// Hummingbird middleware for a resource server: every request needs a valid token for this resource, presented as
/// PROTOCOL §15 says (`ResourceGuard`); refused ones get 401 with the challenges, accepted ones reach the routes with the
/// claims in `context.accessToken`.
public struct ResourceServerMiddleware<Context: ResourceServerRequestContext>: RouterMiddleware {
    public let guardian: ResourceGuard
    /// The public base URL clients call (`https://api.example`), for the proofs' `htu`.
    public let publicBaseURL: String

    public init(guardian: ResourceGuard, publicBaseURL: String) {
        self.guardian = guardian
        self.publicBaseURL = publicBaseURL.hasSuffix("/") ? String(publicBaseURL.dropLast()) : publicBaseURL
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        do {
            context.accessToken = try await guardian.authorize(
                authorization: request.headers[.authorization], proofs: request.headers[values: .dpop], method: request.method.rawValue,
                url: publicBaseURL + request.uri.path, clientAddress: context.clientAddress, now: Date())
        } catch {
            return Self.unauthorized(error)
        }
        return try await next(request, context)
    }

    /// 401 with the refusal's challenges and a small JSON body.
    public static func unauthorized(_ refusal: ResourceGuard.Refusal) -> Response {
        var headers: HTTPFields = [.contentType: "application/json", .cacheControl: "no-store"]
        for challenge in refusal.challenges { headers.append(HTTPField(name: .wwwAuthenticate, value: challenge)) }
        return Response(status: .unauthorized, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: refusal.body)))
    }
}

/// A request context with nothing beyond Hummingbird's basics and the request's verified token.
public struct ResourceServerContext: ResourceServerRequestContext {
    public var coreContext: CoreRequestContextStorage
    public var accessToken: AccessTokenClaims?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
    }
}

extension HTTPField.Name {
    /// RFC 9449's proof header.
    public static let dpop = Self("DPoP")!
}
