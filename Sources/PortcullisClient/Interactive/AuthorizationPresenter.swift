public import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
public import Musl
#elseif canImport(Darwin)
public import Darwin
#endif

/// Shows the sign-in page to the user and brings back where the server redirected: the app provides one
/// (`acquireTokenInteractive`). On Apple platforms `WebAuthenticationSessionPresenter` (the system browser
/// through `ASWebAuthenticationSession`, sharing its cookies, so single sign-on works); on Linux and in the
/// CLI `LoopbackPresenter` (a redirect listener on 127.0.0.1, RFC 8252 §7.3).
public protocol AuthorizationPresenter: Sendable {
    /// Decides the redirect URI (it must be registered for the client), asks `url(redirectURI)` for the
    /// authorization URL, shows it, and returns where the browser was redirected (with `code` and `state`,
    /// or `error`). Throws `PortcullisClientError` of kind `.cancelled` when the user gives up.
    func present(authorizationURL url: @Sendable (_ redirectURI: String) throws -> URL) async throws -> AuthorizationRedirect
}

/// Where the sign-in came back: the redirect URI the request named, and the URL the browser was sent to.
public struct AuthorizationRedirect: Sendable {
    public var redirectURI: String
    public var url: URL

    public init(redirectURI: String, url: URL) {
        self.redirectURI = redirectURI
        self.url = url
    }
}

/// A one-shot HTTP listener on the loopback interface that receives the authorization redirect
/// (`http://localhost:{port}/`, which matches a registered `http://localhost` on any port), answers the
/// browser with a short page, and returns the redirect URL. `open` shows the authorization URL: the CLI
/// prints it and tries the desktop's browser.
public struct LoopbackPresenter: AuthorizationPresenter {
    public let port: UInt16
    public let timeout: Duration
    let open: @Sendable (URL) async -> Void

    /// `port` 0 picks a free one.
    public init(port: UInt16 = 0, timeout: Duration = .seconds(300), open: @escaping @Sendable (URL) async -> Void) {
        self.port = port
        self.timeout = timeout
        self.open = open
    }

    public func present(authorizationURL url: @Sendable (String) throws -> URL) async throws -> AuthorizationRedirect {
        let listener = try LoopbackListener(port: port)
        defer { listener.close() }
        let redirectURI = "http://localhost:\(listener.port)/"
        let target = try url(redirectURI)
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        // Accept before showing the URL: a browser (or `open` itself) may come back before `open` returns.
        let waiting = Task { try await listener.awaitRedirect(deadline: Date().addingTimeInterval(seconds)) }
        await open(target)
        let path = try await waiting.value
        guard let redirect = URL(string: "http://localhost:\(listener.port)\(path)") else {
            throw PortcullisClientError(kind: .transport, message: "The browser came back with an unreadable redirect.")
        }
        return AuthorizationRedirect(redirectURI: redirectURI, url: redirect)
    }
}

/// The socket under `LoopbackPresenter`: POSIX, Foundation only (no server framework in the SDK).
final class LoopbackListener: @unchecked Sendable {
    private let descriptor: Int32
    let port: UInt16
    private let lock = NSLock()
    private var closed = false

    init(port requested: UInt16) throws {
        #if canImport(Darwin)
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #else
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #endif
        guard fd >= 0 else { throw PortcullisClientError(kind: .transport, message: "Cannot open a loopback socket (errno \(errno)).") }
        var yes: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = requested.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 8) == 0 else {
            let code = errno
            _ = systemClose(fd)
            throw PortcullisClientError(kind: .transport, message: "Cannot listen on 127.0.0.1:\(requested) for the redirect (errno \(code)).")
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        self.descriptor = fd
        self.port = UInt16(bigEndian: actual.sin_port)
    }

    func close() {
        lock.lock()
        defer { lock.unlock() }
        guard !closed else { return }
        closed = true
        _ = systemClose(descriptor)
    }

    /// Waits (on its own thread) for the request that carries `code` or `error`; other requests (a
    /// favicon) get 404. Returns the request target (`/?code=…&state=…`).
    func awaitRedirect(deadline: Date) async throws -> String {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<String, Error>) in
            let thread = Thread { [self] in
                continuation.resume(with: Result { try self.serve(until: deadline) })
            }
            thread.start()
        }
    }

    private func serve(until deadline: Date) throws -> String {
        while Date() < deadline {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, 250)
            if ready < 0 && errno != EINTR { break }
            guard ready > 0 else { continue }
            let client = accept(descriptor, nil, nil)
            guard client >= 0 else { continue }
            defer { _ = systemClose(client) }
            guard let target = Self.readTarget(client) else { continue }
            let query = target.split(separator: "?", maxSplits: 1).dropFirst().first.map(String.init) ?? ""
            let items = URLComponents(string: "http://localhost/?\(query)")?.queryItems ?? []
            let names = Set(items.map(\.name))
            guard names.contains("code") || names.contains("error") else {
                Self.respond(client, status: "404 Not Found", body: "Not found.")
                continue
            }
            let failed = names.contains("error")
            Self.respond(
                client, status: "200 OK",
                body: failed
                    ? "Sign-in did not complete. You can close this window and return to the app."
                    : "Signed in. You can close this window and return to the app.")
            return target
        }
        throw PortcullisClientError(kind: .cancelled, message: "No sign-in came back to the loopback redirect before the timeout.")
    }

    /// The request line's target, from at most 16 KiB of request head.
    private static func readTarget(_ client: Int32) -> String? {
        var head: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        var waited = 0
        while head.count < 16384 {
            var poller = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 1000) > 0 else {
                waited += 1
                if waited > 5 { return nil }
                continue
            }
            let count = recv(client, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            head.append(contentsOf: buffer[0..<count])
            if head.count >= 4, String(decoding: head, as: UTF8.self).contains("\r\n\r\n") { break }
        }
        let text = String(decoding: head, as: UTF8.self)
        guard let line = text.split(separator: "\r\n", maxSplits: 1).first else { return nil }
        let parts = line.split(separator: " ")
        guard parts.count == 3, parts[0] == "GET", parts[1].hasPrefix("/") else { return nil }
        return String(parts[1])
    }

    private static func respond(_ client: Int32, status: String, body: String) {
        let page = "<!doctype html><html lang=\"en\"><meta charset=\"utf-8\"><title>Portcullis</title><p>\(body)</p></html>"
        let response =
            "HTTP/1.1 \(status)\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: \(page.utf8.count)\r\n"
            + "Cache-Control: no-store\r\nConnection: close\r\n\r\n\(page)"
        let bytes = Array(response.utf8)
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { send(client, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return }
            sent += count
        }
    }
}

private func systemClose(_ descriptor: Int32) -> Int32 {
    #if canImport(Darwin)
    Darwin.close(descriptor)
    #elseif canImport(Musl)
    Musl.close(descriptor)
    #else
    Glibc.close(descriptor)
    #endif
}
