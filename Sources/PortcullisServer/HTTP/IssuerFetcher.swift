import AsyncHTTPClient
import Foundation
import JWTKit
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import PortcullisCore
import Synchronization

/// What Portcullis fetches from issuers that admins name (PROTOCOL §19, §21): Shared Signals transmitters'
/// configurations, keys, streams and polls, federated issuers' OIDC discovery and keys. Every URL passes the callback rule
/// first (`CallbackDestinations`: https; loopback and private networks only where the operator allows); no redirects;
/// connecting and reading bounded in time; bodies bounded in size; errors say what failed, never what was sent.
struct IssuerFetcher: Sendable {
    let destinations: CallbackDestinations
    let client: HTTPClient
    let logger: Logger

    /// The largest answer read.
    static let maximumBody = 256 * 1024

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// The destinations' `trustRoots` (a PEM file of roots trusted beside the system's, `callbacks.caFile`) make its
    /// client.
    init(destinations: CallbackDestinations, logger: Logger) {
        self.destinations = destinations
        self.logger = logger
        client = Self.client(trustRoots: destinations.trustRoots)
    }

    /// The HTTP clients, one per set of trust roots, for the life of the process (like `callbackHTTPClient`: never torn
    /// down under a request): redirects not followed, connecting and reading bounded.
    private static let clients = Mutex<[String: HTTPClient]>([:])

    static func client(trustRoots: String?) -> HTTPClient {
        clients.withLock { clients in
            if let made = clients[trustRoots ?? ""] { return made }
            var tls = TLSConfiguration.makeClientConfiguration()
            if let trustRoots { tls.additionalTrustRoots = [.file(trustRoots)] }
            var configuration = HTTPClient.Configuration(
                tlsConfiguration: tls, redirectConfiguration: .disallow, timeout: .init(connect: .seconds(3), read: .seconds(10)))
            configuration.httpVersion = .http1Only
            configuration.decompression = .disabled
            let made = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
            clients[trustRoots ?? ""] = made
            return made
        }
    }

    /// An issuer's configuration (SSF §7.1, OpenID Connect Discovery §3): its `issuer` must be the expected one.
    struct Configuration: Sendable {
        let jwksUri: String
        let configurationEndpoint: String?
    }

    func configuration(_ url: String, issuer: String, what: String) async throws -> Configuration {
        let object = try await json(url, method: .GET, body: nil, authorization: nil, what: what)
        guard object["issuer"]?.stringValue == issuer else { throw Failure("\(what) names another issuer") }
        guard let jwks = object["jwks_uri"]?.stringValue else { throw Failure("\(what) has no jwks_uri") }
        return Configuration(jwksUri: jwks, configurationEndpoint: object["configuration_endpoint"]?.stringValue)
    }

    /// A JSON answer (an object) from `url`.
    func json(_ url: String, method: HTTPMethod, body: JSONValue?, authorization: String?, what: String) async throws -> JSONValue {
        let data = try await fetch(url, method: method, body: body, authorization: authorization, what: what)
        guard let value = JSONValue.parse(data), value.objectValue != nil else { throw Failure("\(what) did not answer a JSON object") }
        return value
    }

    func fetch(_ url: String, method: HTTPMethod, body: JSONValue?, authorization: String?, what: String) async throws -> Data {
        do {
            try await destinations.check(url)
        } catch {
            throw Failure("\(what): \(error.description)")
        }
        var request = HTTPClientRequest(url: url)
        request.method = method
        request.headers.add(name: "Accept", value: "application/json")
        if let authorization { request.headers.add(name: "Authorization", value: authorization) }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: try TenantDocuments.encoder.encode(body)))
        }
        let response: HTTPClientResponse
        do {
            response = try await client.execute(request, timeout: .seconds(15))
        } catch {
            throw Failure("\(what) could not be reached")
        }
        guard (200..<300).contains(Int(response.status.code)) else { throw Failure("\(what) answered \(response.status.code)") }
        do {
            return Data(try await response.body.collect(upTo: Self.maximumBody).readableBytesView)
        } catch {
            throw Failure("\(what) answered more than \(Self.maximumBody) bytes")
        }
    }
}

/// Issuers' keys (transmitters', PROTOCOL §19; federated issuers', §21), cached by where they are published: fetched at
/// first use, again after an hour, and at once (at most every 10 s) when a token names a `kid` not among them — a
/// rotation. Bounded: the least recently fetched go first past `capacity`.
actor IssuerKeys {
    let fetcher: IssuerFetcher
    let capacity: Int

    /// Where an issuer publishes its keys: a JWKS URL, or a configuration (OIDC discovery, SSF configuration) whose
    /// `issuer` must be `issuer` and whose `jwks_uri` names them. `what` names the issuer in errors and logs.
    struct Source: Sendable {
        var issuer: String
        var jwksUri: String?
        var configurationUrl: String?
        var what: String
    }

    enum Refusal: Error, Equatable {
        /// The keys could not be had (unreachable, refused by the callback rule, unreadable).
        case unavailable
        /// None has the token's `kid`.
        case unknownKid
    }

    struct Entry {
        var keys: JWTKeyCollection
        var kids: Set<String>
        var fetched: Date
    }

    private var entries: [String: Entry] = [:]
    private var attempts: [String: Date] = [:]
    /// Issuers' configurations, for their `jwks_uri`; when one last failed; the fetches under way (one per URL).
    private var configured: [String: (jwksUri: String, fetched: Date)] = [:]
    private var unconfigured: [String: Date] = [:]
    private var configuring: [String: Task<String, any Error>] = [:]
    private var fetching: [String: Task<Void, any Error>] = [:]

    init(fetcher: IssuerFetcher, capacity: Int = 1000) {
        self.fetcher = fetcher
        self.capacity = capacity
    }

    /// The keys a token from `source` naming `kid` is verified with.
    func keys(from source: Source, kid: String?, now: Date) async throws(Refusal) -> JWTKeyCollection {
        let url: String
        do {
            url = try await jwksURL(of: source, now: now)
        } catch {
            throw .unavailable
        }
        if let entry = entries[url], now.timeIntervalSince(entry.fetched) < 3600, kid.map(entry.kids.contains) ?? true { return entry.keys }
        await refresh(url, what: source.what, now: now)
        guard let entry = entries[url] else { throw .unavailable }
        guard kid.map(entry.kids.contains) ?? true else { throw .unknownKid }
        return entry.keys
    }

    /// Fetches the keys at `url` again, at most every 10 s — also after a failure, so a token naming an issuer that is
    /// down costs no connection while one was tried a moment ago — and once for concurrent callers (they wait for it).
    func refresh(_ url: String, what: String, now: Date) async {
        if let running = fetching[url] {
            _ = try? await running.value
            return
        }
        guard attempts[url].map({ now.timeIntervalSince($0) >= 10 }) ?? true else { return }
        if attempts.count >= capacity { attempts = attempts.filter { entries[$0.key] != nil } }
        attempts[url] = now
        let task = Task { try await self.fetch(url, what: what, now: now) }
        fetching[url] = task
        do {
            try await task.value
        } catch {
            fetcher.logger.warning("\(what)'s keys could not be fetched", metadata: ["portcullis.error": "\(error)"])
        }
        fetching[url] = nil
    }

    func jwksURL(of source: Source, now: Date) async throws -> String {
        if let jwks = source.jwksUri { return jwks }
        guard let url = source.configurationUrl else { throw IssuerFetcher.Failure("no keys") }
        if let known = configured[url], now.timeIntervalSince(known.fetched) < 3600 { return known.jwksUri }
        if let running = configuring[url] { return try await running.value }
        // A configuration that could not be had is not asked for again for 10 s (as keys are not).
        if let failed = unconfigured[url], now.timeIntervalSince(failed) < 10 {
            throw IssuerFetcher.Failure("\(source.what)'s configuration failed a moment ago")
        }
        let task = Task { try await self.fetcher.configuration(url, issuer: source.issuer, what: "\(source.what)'s configuration").jwksUri }
        configuring[url] = task
        defer { configuring[url] = nil }
        do {
            let jwksUri = try await task.value
            if configured.count >= capacity { configured.removeAll() }
            configured[url] = (jwksUri, now)
            unconfigured[url] = nil
            return jwksUri
        } catch {
            if unconfigured.count >= capacity { unconfigured.removeAll() }
            unconfigured[url] = now
            fetcher.logger.warning("\(source.what)'s keys could not be found", metadata: ["portcullis.error": "\(error)"])
            throw error
        }
    }

    func fetch(_ url: String, what: String, now: Date) async throws {
        let data = try await fetcher.fetch(url, method: .GET, body: nil, authorization: nil, what: "\(what)'s keys")
        let jwks = try JSONDecoder().decode(JWKS.self, from: data)
        guard jwks.keys.count <= 100 else { throw IssuerFetcher.Failure("\(what) publishes more than 100 keys") }
        let collection = JWTKeyCollection()
        try await collection.add(jwks: jwks)
        if entries[url] == nil, entries.count >= capacity, let oldest = entries.min(by: { $0.value.fetched < $1.value.fetched })?.key {
            entries[oldest] = nil
            attempts[oldest] = nil
        }
        entries[url] = Entry(keys: collection, kids: Set(jwks.keys.compactMap { $0.keyIdentifier?.string }), fetched: now)
    }
}

/// A verified token's claims as they are, for Core to read (`SharedSignalsTransmitter.check`,
/// `FederatedIdentityCredential.match`): jwt-kit checks the signature only.
struct UncheckedClaims: JWTPayload {
    let value: JSONValue

    init(from decoder: any Decoder) throws { value = try JSONValue(from: decoder) }
    func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
