public import Hummingbird
import Logging
public import NIOCore
public import PortcullisTokens

/// The request context of every route: correlation identifiers, the peer address, and (behind the bearer
/// middleware) the verified access token.
public struct PortcullisRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remoteAddress: SocketAddress?
    /// The client's `client-request-id`, or one we made up; echoed as `correlation_id`.
    public var correlationId: String = ""
    /// This request's own ID (`trace_id`, `x-ms-request-id`).
    public var traceId: String = ""
    /// The verified bearer token, on routes that require one.
    public var principal: AccessTokenClaims?

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress
    }

    /// The largest body a route collects: the configuration's `maximumBodyBytes`, set by `RequestMiddleware`.
    public var maxUploadSize = 64 * 1024
}
