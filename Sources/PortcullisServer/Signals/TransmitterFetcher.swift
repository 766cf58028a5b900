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

/// What the receiver fetches from transmitters (PROTOCOL §19): their SSF configuration and keys, stream creation,
/// polls. Every URL passes the callback rule first (`CallbackDestinations`: https; loopback and private networks only
/// where the operator allows); no redirects; connecting and reading bounded in time; bodies bounded in size; errors say
/// what failed, never what was sent.
struct TransmitterFetcher: Sendable {
    let destinations: CallbackDestinations
    let client: HTTPClient
    let logger: Logger

    /// The largest answer read.
    static let maximumBody = 256 * 1024

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// `trustRoots`: a PEM file of roots trusted beside the system's (a transmitter behind a private CA).
    init(destinations: CallbackDestinations, trustRoots: String?, logger: Logger) {
        self.destinations = destinations
        self.logger = logger
        client = Self.client(trustRoots: trustRoots)
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

    /// A transmitter's SSF configuration (SSF §7.1): its `issuer` must be the registered one.
    struct Configuration: Sendable {
        let jwksUri: String
        let configurationEndpoint: String?
    }

    func configuration(_ url: String, issuer: String) async throws -> Configuration {
        let object = try await json(url, method: .GET, body: nil, authorization: nil, what: "the transmitter's configuration")
        guard object["issuer"]?.stringValue == issuer else { throw Failure("the transmitter's configuration names another issuer") }
        guard let jwks = object["jwks_uri"]?.stringValue else { throw Failure("the transmitter's configuration has no jwks_uri") }
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

/// Transmitters' keys (PROTOCOL §19), cached by where they are published: fetched at first use, again after an hour,
/// and at once (at most every 10 s) when a SET names a `kid` not among them — a rotation. Bounded: the least recently
/// fetched go first past `capacity`.
actor TransmitterKeys {
    let fetcher: TransmitterFetcher
    let capacity: Int

    struct Entry {
        var keys: JWTKeyCollection
        var kids: Set<String>
        var fetched: Date
    }

    private var entries: [String: Entry] = [:]
    private var attempts: [String: Date] = [:]
    /// Transmitters' configurations, for their `jwks_uri`.
    private var configured: [String: (jwksUri: String, fetched: Date)] = [:]

    init(fetcher: TransmitterFetcher, capacity: Int = 1000) {
        self.fetcher = fetcher
        self.capacity = capacity
    }

    /// The keys a SET of `transmitter` naming `kid` is verified with; `invalid_key` when they cannot be had or none has
    /// that `kid`.
    func keys(for transmitter: SharedSignalsTransmitter, kid: String?, now: Date) async throws(SharedSignalsRefusal) -> JWTKeyCollection {
        let url: String
        do {
            url = try await jwksURL(of: transmitter, now: now)
        } catch {
            throw SharedSignalsRefusal(.invalidKey, "the transmitter's keys could not be fetched")
        }
        if let entry = entries[url], now.timeIntervalSince(entry.fetched) < 3600, kid.map(entry.kids.contains) ?? true { return entry.keys }
        if entries[url] == nil || attempts[url].map({ now.timeIntervalSince($0) >= 10 }) ?? true {
            if attempts.count >= capacity { attempts = attempts.filter { entries[$0.key] != nil } }
            attempts[url] = now
            do {
                try await fetch(url, now: now)
            } catch {
                fetcher.logger.warning("a transmitter's keys could not be fetched", metadata: ["portcullis.error": "\(error)"])
            }
        }
        guard let entry = entries[url] else { throw SharedSignalsRefusal(.invalidKey, "the transmitter's keys could not be fetched") }
        guard kid.map(entry.kids.contains) ?? true else { throw SharedSignalsRefusal(.invalidKey, "the SET's kid is not among the transmitter's keys") }
        return entry.keys
    }

    func jwksURL(of transmitter: SharedSignalsTransmitter, now: Date) async throws -> String {
        if let jwks = transmitter.jwksUri { return jwks }
        guard let url = transmitter.configurationUrl else { throw TransmitterFetcher.Failure("no keys") }
        if let known = configured[url], now.timeIntervalSince(known.fetched) < 3600 { return known.jwksUri }
        let configuration = try await fetcher.configuration(url, issuer: transmitter.issuer)
        if configured.count >= capacity { configured.removeAll() }
        configured[url] = (configuration.jwksUri, now)
        return configuration.jwksUri
    }

    func fetch(_ url: String, now: Date) async throws {
        let data = try await fetcher.fetch(url, method: .GET, body: nil, authorization: nil, what: "the transmitter's keys")
        let jwks = try JSONDecoder().decode(JWKS.self, from: data)
        guard jwks.keys.count <= 100 else { throw TransmitterFetcher.Failure("the transmitter publishes more than 100 keys") }
        let collection = JWTKeyCollection()
        try await collection.add(jwks: jwks)
        if entries[url] == nil, entries.count >= capacity, let oldest = entries.min(by: { $0.value.fetched < $1.value.fetched })?.key {
            entries[oldest] = nil
            attempts[oldest] = nil
        }
        entries[url] = Entry(keys: collection, kids: Set(jwks.keys.compactMap { $0.keyIdentifier?.string }), fetched: now)
    }
}
