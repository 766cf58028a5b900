import Synchronization

/// The server's public base URL and the URLs made from it (issuer, endpoints). The one piece of server
/// state known only once the listener is bound: a base URL that ends in `:0` (listening on port 0) is
/// completed with the port the listener got (`bind(port:)`). Everything that names the server in a token,
/// a document or an error reads it here.
public final class ServerEndpoints: Sendable {
    private let base: Mutex<String>

    public init(baseURL: String) {
        self.base = Mutex(baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL)
    }

    public var baseURL: String { base.withLock { $0 } }

    /// Completes a base URL that ends in `:0` with the port the listener was given.
    public func bind(port: Int) {
        base.withLock { url in
            if url.hasSuffix(":0") { url = String(url.dropLast(2)) + ":\(port)" }
        }
    }

    /// The issuer of a tenant's tokens.
    public func issuer(tenantId: String) -> String { "\(baseURL)/\(tenantId)/v2.0" }
}
