import Foundation
import NIOSSL
import PortcullisCore
public import PostgresNIO

/// A `postgres://user:password@host:port/database?sslmode=…` URL (libpq's form).
public struct PostgresURL: Sendable {
    public enum SSLMode: String, Sendable {
        case disable, allow, prefer, require
        case verifyCA = "verify-ca"
        case verifyFull = "verify-full"
    }

    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    public var host: String
    public var port: Int
    public var username: String
    public var password: String?
    public var database: String?
    public var sslMode: SSLMode
    public var sslRootCert: String?

    public init(_ string: String) throws {
        guard let components = URLComponents(string: string), let scheme = components.scheme, scheme == "postgres" || scheme == "postgresql" else {
            throw Invalid(description: "the PostgreSQL URL must start with postgres:// or postgresql://")
        }
        guard let user = components.user, !user.isEmpty else { throw Invalid(description: "the PostgreSQL URL names no user") }
        host = components.asciiHost.flatMap { $0.isEmpty ? nil : $0 } ?? "localhost"
        port = components.port ?? 5432
        username = user
        password = components.password
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        database = path.isEmpty ? nil : path
        let items = components.queryItems ?? []
        // Without sslmode the connection is encrypted and the server verified (libpq's default, prefer, would
        // accept any certificate, or none).
        let mode = items.first { $0.name == "sslmode" }?.value ?? "verify-full"
        guard let parsed = SSLMode(rawValue: mode) else { throw Invalid(description: "unsupported sslmode=\(mode)") }
        sslMode = parsed
        sslRootCert = items.first { $0.name == "sslrootcert" }?.value
    }

    /// Whenever TLS is used it is verified (unlike libpq, where `prefer` and `require` accept any
    /// certificate): `verify-ca` checks the chain only, every other TLS mode checks the chain and the host
    /// name. The trust roots are `sslrootcert` (or the `storage.postgres.caFile` setting), else the system's.
    func tlsConfiguration() -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        tls.certificateVerification = sslMode == .verifyCA ? .noHostnameVerification : .fullVerification
        if let path = sslRootCert { tls.trustRoots = .file(path) }
        return tls
    }

    func clientConfiguration() -> PostgresClient.Configuration {
        let tls: PostgresClient.Configuration.TLS =
            switch sslMode {
            case .disable: .disable
            case .allow, .prefer: .prefer(tlsConfiguration())
            case .require, .verifyCA, .verifyFull: .require(tlsConfiguration())
            }
        return PostgresClient.Configuration(host: host, port: port, username: username, password: password, database: database, tls: tls)
    }

    func connectionConfiguration() throws -> PostgresConnection.Configuration {
        let tls: PostgresConnection.Configuration.TLS =
            switch sslMode {
            case .disable: .disable
            case .allow, .prefer: .prefer(try NIOSSLContext(configuration: tlsConfiguration()))
            case .require, .verifyCA, .verifyFull: .require(try NIOSSLContext(configuration: tlsConfiguration()))
            }
        return PostgresConnection.Configuration(host: host, port: port, username: username, password: password, database: database, tls: tls)
    }

    /// A direct connection's configuration (tests and tools).
    public func connectionConfigurationForTests() throws -> PostgresConnection.Configuration { try connectionConfiguration() }

    /// The URL without its password, for logs.
    public var redacted: String { "postgres://\(username)@\(host):\(port)/\(database ?? "")?sslmode=\(sslMode.rawValue)" }
}
