import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import NIOPosix
import PortcullisAPI
import PortcullisCore
import PortcullisSQLite
import PortcullisServer
import PortcullisStorage
import PortcullisTesting
import Testing

/// Shared Signals delivery against a hostile tenant (issue 44 item 2, PROTOCOL §14.2): no pushes to loopback unless the
/// operator allows it, verification throttled per stream, delivery errors in words that probe nothing.
@Suite("Shared Signals delivery: loopback, verification throttle, coarse errors (PROTOCOL §14.2)")
struct SignalDeliveryHardeningTests {
    static func receiverToken(_ client: some TestClientProtocol) async throws -> String {
        let reply = try await client.token([
            ("grant_type", "client_credentials"), ("client_id", Fixtures.signalReceiver.appId), ("client_secret", Fixtures.signalReceiver.secret),
            ("scope", "api://portcullis-ssf/.default"),
        ])
        return try #require(reply.string("access_token"), "\(reply.text)")
    }

    static func ssf(
        _ client: some TestClientProtocol, _ method: HTTPRequest.Method, _ path: String, token: String, json: Any
    ) async throws -> (HTTPResponse.Status, JSONReply, String?) {
        let body = try JSONSerialization.data(withJSONObject: json)
        return try await client.execute(
            uri: "/\(Fixtures.domain)/ssf/\(path)", method: method, headers: [.authorization: "Bearer \(token)", .contentType: "application/json"],
            body: ByteBuffer(bytes: Array(body))
        ) { ($0.status, JSONReply($0), $0.headers[.retryAfter]) }
    }

    @Test("loopback push endpoints are refused unless the operator allows them (callbacks.allowLoopback), and compliance callbacks to loopback too")
    func loopbackRefused() async throws {
        try await withTestEnvironment(
            directoryJSON: try Fixtures.directoryJSONWithSignalReceivers(), configure: { $0.outbox.destinations.allowLoopback = false }
        ) { env in
            try await env.application().test(.router) { client in
                let token = try await Self.receiverToken(client)
                for endpoint in ["http://127.0.0.1:9/events", "https://localhost:9/events", "https://[::1]/events", "http://example.com/events"] {
                    let (status, reply, _) = try await Self.ssf(
                        client, .post, "stream", token: token, json: ["delivery": ["method": "urn:ietf:rfc:8935", "endpoint_url": endpoint]])
                    #expect(status == .badRequest && reply.text.contains("/delivery/endpoint_url"), "\(endpoint): \(status) \(reply.text)")
                }
                let (poll, _, _) = try await Self.ssf(client, .post, "stream", token: token, json: ["delivery": ["method": "urn:ietf:rfc:8936"]])
                #expect(poll == .created, "a poll stream needs no destination")
            }
        }
        try await withTestEnvironment(
            directoryJSON: Fixtures.directoryJSON(callbackBase: "http://127.0.0.1:9"), configure: { $0.outbox.destinations.allowLoopback = false }
        ) { env in
            try await env.application().test(.router) { client in
                try await client.createAppProtectionCA()
                try await client.becomeCompliant()
            }
            #expect(try await env.server.dispatcher.deliverDue() == 1)
            let tried = try await env.store.outboxMessages(tenantId: Fixtures.tenantId, state: .pending, limit: 10).filter { $0.attempts == 1 }
            #expect(tried.first?.lastError == "the destination is not allowed (it must be https to a public address) or does not resolve", "\(tried)")
        }
    }

    @Test("verification: at most once per min_verification_interval per stream (429 with Retry-After), 100 calls send one event")
    func verificationThrottled() async throws {
        try await withTestEnvironment(directoryJSON: try Fixtures.directoryJSONWithSignalReceivers()) { env in
            try await env.application().test(.router) { client in
                let token = try await Self.receiverToken(client)
                let (created, stream, _) = try await Self.ssf(client, .post, "stream", token: token, json: ["delivery": ["method": "urn:ietf:rfc:8936"]])
                #expect(created == .created && stream["min_verification_interval"] as? Double == 10, "\(stream.text)")
                let id = try #require(stream.string("stream_id"))
                let (first, _, _) = try await Self.ssf(client, .post, "verify", token: token, json: ["stream_id": id, "state": "1"])
                #expect(first == .noContent)
                var refused = 0
                var retryAfter: String?
                for index in 0..<100 {
                    let (status, _, retry) = try await Self.ssf(client, .post, "verify", token: token, json: ["stream_id": id, "state": "x\(index)"])
                    if status == .tooManyRequests { refused += 1 }
                    retryAfter = retry
                }
                #expect(refused == 100 && retryAfter.flatMap(Int.init).map { (1...10).contains($0) } == true, "\(refused) \(String(describing: retryAfter))")
                let pollPath = try #require(((stream["delivery"] as? [String: Any])?["endpoint_url"] as? String).flatMap { URL(string: $0)?.path })
                let polled = try await client.execute(
                    uri: pollPath, method: .post, headers: [.authorization: "Bearer \(token)", .contentType: "application/json"],
                    body: ByteBuffer(string: #"{"returnImmediately": true, "maxEvents": 100}"#)
                ) { JSONReply($0) }
                #expect((polled["sets"] as? [String: String])?.count == 1, "one verification event: \(polled.text)")
                env.clock.advance(by: 10)
                let (later, _, _) = try await Self.ssf(client, .post, "verify", token: token, json: ["stream_id": id, "state": "2"])
                #expect(later == .noContent, "after the interval")
            }
        }
    }

    @Test("delivery errors in coarse words: a closed port and a service that does not speak HTTP read the same to the tenant")
    func coarseErrors() async throws {
        // A TCP service that answers anything with bytes that are not HTTP, and a port nobody listens on.
        let garbage = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    _ = channel.writeAndFlush(ByteBuffer(string: "SSH-2.0-OpenSSH_9.6\r\n")).flatMap { channel.close() }
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let closed = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
        let closedPort = try #require(closed.localAddress?.port)
        try await closed.close()
        defer { garbage.close(promise: nil) }
        try await withTestEnvironment(directoryJSON: try Fixtures.directoryJSONWithSignalReceivers()) { env in
            try await env.application().test(.router) { client in
                let token = try await Self.receiverToken(client)
                for port in [closedPort, try #require(garbage.localAddress?.port)] {
                    let (status, stream, _) = try await Self.ssf(
                        client, .post, "stream", token: token,
                        json: ["delivery": ["method": "urn:ietf:rfc:8935", "endpoint_url": "http://127.0.0.1:\(port)/events"]])
                    #expect(status == .created, "\(stream.text)")
                    let (verified, _, _) = try await Self.ssf(
                        client, .post, "verify", token: token, json: ["stream_id": try #require(stream.string("stream_id"))])
                    #expect(verified == .noContent)
                }
            }
            _ = try await env.server.dispatcher.deliverDue()
            _ = try await env.server.dispatcher.deliverDue()
            let tried = try await env.store.outboxMessages(tenantId: Fixtures.tenantId, state: nil, limit: 10).filter { $0.attempts > 0 }
            #expect(
                tried.count == 2 && Set(tried.map { $0.lastError ?? "" }) == ["the receiver could not be reached (no HTTP answer)"],
                "\(tried.map { $0.lastError ?? "-" })")
        }
    }
}
