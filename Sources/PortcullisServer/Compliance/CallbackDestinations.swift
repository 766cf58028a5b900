import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix
import PortcullisCore

/// Where compliance callbacks and Shared Signals pushes may be sent (delivery connects out on a tenant admin's say-so,
/// so it must not become a way into the server's own network, PROTOCOL §14.2): `https`, or `http` to loopback; every
/// address the host resolves to must be global — loopback only when the operator allows it (`callbacks.allowLoopback`,
/// for development and the project's own tests), private and link-local networks only when the operator allows them
/// (`callbacks.allowPrivateNetworks`); unspecified, multicast and reserved addresses never. Delivery does not follow
/// redirects (a 3xx is a failed attempt).
///
/// The addresses are checked before each attempt; the HTTP client resolves the name again when it
/// connects, so a name whose records change between the two (DNS rebinding with a zero TTL) is a residual
/// risk, stated in docs/operations.md.
public struct CallbackDestinations: Sendable {
    public var allowPrivateNetworks: Bool
    public var allowLoopback: Bool
    /// A PEM file of roots trusted beside the system's when fetching from issuers admins name — Shared Signals
    /// transmitters, federated issuers (`callbacks.caFile`; for hosts behind a private CA).
    public var trustRoots: String?

    public init(allowPrivateNetworks: Bool = false, allowLoopback: Bool = false, trustRoots: String? = nil) {
        self.allowPrivateNetworks = allowPrivateNetworks
        self.allowLoopback = allowLoopback
        self.trustRoots = trustRoots
    }

    /// Why a destination is refused.
    public struct Refusal: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    /// Checks the URL's form and every address its host resolves to.
    public func check(_ text: String) async throws(Refusal) {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty else {
            throw Refusal(description: "not an absolute URL")
        }
        guard scheme == "https" || (scheme == "http" && CallbackURI.isLoopback(host: host)) else {
            throw Refusal(description: "only https, or http to loopback, is allowed")
        }
        let addresses: [IPAddress]
        if let literal = IPAddress(host) {
            addresses = [literal]
        } else {
            addresses = await Self.resolve(host)
            guard !addresses.isEmpty else { throw Refusal(description: "the host name does not resolve") }
        }
        for address in addresses {
            switch address.scope {
            case .global:
                continue
            case .loopback:
                if allowLoopback { continue }
                throw Refusal(description: "the host resolves to a loopback address (set callbacks.allowLoopback to allow)")
            case .privateNetwork, .linkLocal:
                if allowPrivateNetworks { continue }
                throw Refusal(
                    description:
                        "the host resolves to a \(address.scope == .linkLocal ? "link-local" : "private") address (set callbacks.allowPrivateNetworks to allow)"
                )
            case .unroutable:
                throw Refusal(description: "the host resolves to an unroutable address")
            }
        }
    }

    /// `getaddrinfo` on the blocking-work pool.
    static func resolve(_ host: String) async -> [IPAddress] {
        (try? await NIOThreadPool.singleton.runIfActive { () -> [IPAddress] in
            var hints = addrinfo()
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            var result: UnsafeMutablePointer<addrinfo>?
            guard getaddrinfo(host, nil, &hints, &result) == 0, let first = result else { return [] }
            defer { freeaddrinfo(first) }
            var addresses: [IPAddress] = []
            var cursor: UnsafeMutablePointer<addrinfo>? = first
            while let entry = cursor {
                var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
                if getnameinfo(entry.pointee.ai_addr, entry.pointee.ai_addrlen, &buffer, socklen_t(buffer.count), nil, 0, NI_NUMERICHOST) == 0,
                    let address = IPAddress(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
                {
                    addresses.append(address)
                }
                cursor = entry.pointee.ai_next
            }
            return addresses
        }) ?? []
    }
}

/// The HTTP client of callback delivery, for the life of the process (like `HTTPClient.shared`, so it is
/// never torn down under a dispatcher): redirects are not followed, connecting and reading are bounded.
let callbackHTTPClient: HTTPClient = {
    var configuration = HTTPClient.Configuration(
        redirectConfiguration: .disallow,
        timeout: .init(connect: .seconds(3), read: .seconds(5)))
    configuration.httpVersion = .http1Only
    configuration.decompression = .disabled
    return HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
}()
