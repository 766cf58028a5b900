public import AsyncHTTPClient
public import Foundation
public import Logging
import NIOCore
import NIOHTTP1
public import PortcullisTokenVerification
import PortcullisVocabulary
public import ServiceLifecycle
import Synchronization

/// The resource side's Shared Signals receiver (PROTOCOL §14.3): reads the tenant's SETs into a `RevocationView`.
/// `apply` takes one verified SET (from a push endpoint or a poll); `SharedSignalsPoller` keeps a poll stream of its own
/// and feeds `apply` with what it receives.
public struct SharedSignalsReceiver: Sendable {
    public let view: RevocationView

    public init(view: RevocationView) { self.view = view }

    /// Records the revocation a SET's events imply (`SharedSignalsEventType.endsAccess`); returns whether it revoked
    /// anything.
    @discardableResult
    public func apply(_ event: SharedSignalsSecurityEvent, now: Date) -> Bool {
        guard case .object(let subject) = event.subId, subject["format"] == "complex",
            case .object(let user)? = subject["user"], let userId = user["sub"]?.stringValue,
            case .object(let tenant)? = subject["tenant"], let tenantId = tenant["id"]?.stringValue
        else { return false }
        let clientId: String? = if case .object(let application)? = subject["application"] { application["id"]?.stringValue } else { nil }
        // A device in the subject (a device out of compliance, PROTOCOL §18): only the user's tokens from that device.
        let deviceId: String? = if case .object(let device)? = subject["device"] { device["id"]?.stringValue } else { nil }
        var revoked = false
        for (type, members) in event.events where SharedSignalsEventType.endsAccess(type: type, members: members) {
            // `event_timestamp` to the millisecond (a JSON number; PROTOCOL §14.1), else the SET's own `iat`.
            let at: Int64
            if case .number(let seconds)? = members["event_timestamp"], seconds.isFinite, abs(seconds) < 1e11 {
                at = Int64((seconds * 1000).rounded())
            } else {
                at = Int64(event.iat) * 1000
            }
            view.revoke(tenantId: tenantId, userId: userId, clientId: clientId, deviceId: deviceId, at: at, now: now)
            revoked = true
        }
        return revoked
    }

    /// The event types a resource server asks for.
    public static let eventsRequested: [String] = [
        SharedSignalsEventType.sessionRevoked, .accountDisabled, .accountPurged, .credentialCompromise, .credentialChange, .deviceComplianceChange,
    ].map(\.rawValue)
}

/// Keeps a poll stream (RFC 8936) at the authority with a receiver application's credentials — the one it made
/// earlier (by its description), or a new one — and long-polls it, applying each verified SET before acknowledging it.
/// Runs as a `Service`. Its view is current (`RevocationView.isCurrent`) from the first poll that returned after the
/// stream was set up until a failure; failed set-ups and polls (a refused credential included) back off — at most one
/// try a second, doubling up to 30 s — and are logged at error level (PROTOCOL §14.3).
public final class SharedSignalsPoller: Service, Sendable {
    public struct Configuration: Sendable {
        /// `{base}/{tenant}`.
        public var authority: String
        public var clientId: String
        public var clientSecret: String
        /// Which of the receiver's streams is this one.
        public var streamDescription: String

        public init(authority: String, clientId: String, clientSecret: String, streamDescription: String = "portcullis resource server") {
            self.authority = authority.hasSuffix("/") ? String(authority.dropLast()) : authority
            self.clientId = clientId
            self.clientSecret = clientSecret
            self.streamDescription = streamDescription
        }
    }

    let configuration: Configuration
    let receiver: SharedSignalsReceiver
    let validator: AccessTokenValidator
    let client: HTTPClient
    let logger: Logger
    private let status = StatusBox()

    public init(configuration: Configuration, receiver: SharedSignalsReceiver, validator: AccessTokenValidator, client: HTTPClient, logger: Logger) {
        self.configuration = configuration
        self.receiver = receiver
        self.validator = validator
        self.client = client
        self.logger = logger
    }

    /// Whether the poller holds a stream and its last poll did not fail (readiness).
    public var isConnected: Bool { status.connected }

    /// Why it is not connected, in a few words (`nil` while it is).
    public var problem: String? { status.problem }

    /// How long to wait after the `failures`-th failure in a row: 1 s, doubling, at most 30 s.
    static func backoff(failures: Int) -> Duration { .milliseconds(min(30_000, 1000 << min(max(failures, 1) - 1, 5))) }

    public func run() async throws {
        try await cancelWhenGracefulShutdown { try await self.loop() }
    }

    func loop() async throws {
        var failures = 0
        var acknowledged: [String] = []
        var session: (token: String, expires: Date, pollURL: String)?
        status.set(connected: false, problem: "connecting to the authority's Shared Signals stream", view: receiver.view)
        while !Task.isCancelled {
            do {
                if session == nil || session!.expires < Date().addingTimeInterval(60) {
                    let (token, expires) = try await accessToken()
                    session = (token, expires, try await pollURL(token: token))
                }
                // Current once the polls have returned everything that waited while this node was away: until then they
                // return at once; from then on they wait for news (long polls).
                let immediately = !status.connected
                guard let current = session else { continue }
                let (sets, more) = try await poll(current.pollURL, token: current.token, ack: acknowledged, immediately: immediately)
                acknowledged = []
                let now = Date()
                for (jti, set) in sets {
                    do {
                        let event = try await validator.validateSecurityEvent(set, audience: configuration.clientId, now: now)
                        receiver.apply(event, now: now)
                    } catch {
                        logger.warning(
                            "a SET did not verify; acknowledged and ignored", metadata: ["portcullis.jti": .string(jti), "portcullis.error": "\(error)"])
                    }
                    acknowledged.append(jti)
                }
                if !more { status.set(connected: true, problem: nil, view: receiver.view) }
                failures = 0
            } catch {
                // Every failure — a refused credential (401) too — waits before the next try: a gateway with wrong
                // credentials must not become a load test of its authority.
                session = nil
                failures += 1
                let problem = (error as? PollError)?.description ?? "the authority could not be reached"
                status.set(connected: false, problem: problem, view: receiver.view)
                logger.error(
                    "shared signals stream unavailable; revocations are not heard until it is back", metadata: ["portcullis.error": "\(error)"])
                do { try await Task.sleep(for: Self.backoff(failures: failures)) } catch { break }
            }
        }
    }

    struct PollError: Error, CustomStringConvertible {
        let status: Int
        let what: String
        var description: String { "\(what) answered \(status)" }
    }

    func accessToken() async throws -> (String, Date) {
        var request = HTTPClientRequest(url: "\(configuration.authority)/oauth2/v2.0/token")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        let form = [
            ("grant_type", "client_credentials"), ("client_id", configuration.clientId), ("client_secret", configuration.clientSecret),
            ("scope", "\(SharedSignalsEventType.transmitterResource)/.default"),
        ]
        request.body = .bytes(ByteBuffer(string: form.map { "\($0)=\(Self.formEncode($1))" }.joined(separator: "&")))
        let object = try await json(request, what: "the token endpoint")
        guard let token = object["access_token"] as? String else { throw PollError(status: 0, what: "the token endpoint (no access_token)") }
        let lifetime = (object["expires_in"] as? Int) ?? 3600
        return (token, Date().addingTimeInterval(TimeInterval(lifetime)))
    }

    /// The poll endpoint of this receiver's stream, made if it has none.
    func pollURL(token: String) async throws -> String {
        var metadataRequest = HTTPClientRequest(url: "\(configuration.authority)/.well-known/ssf-configuration")
        metadataRequest.method = .GET
        let metadata = try await json(metadataRequest, what: "the SSF metadata")
        guard let endpoint = metadata["configuration_endpoint"] as? String else {
            throw PollError(status: 0, what: "the SSF metadata (no configuration_endpoint)")
        }
        var list = HTTPClientRequest(url: endpoint)
        list.headers.add(name: "Authorization", value: "Bearer \(token)")
        let streams = try await jsonArray(list, what: "the stream list")
        let poll = SharedSignalsEventType.pollDelivery
        if let mine = streams.first(where: {
            ($0["description"] as? String) == configuration.streamDescription && (($0["delivery"] as? [String: Any])?["method"] as? String) == poll
        }), let url = (mine["delivery"] as? [String: Any])?["endpoint_url"] as? String {
            return url
        }
        var create = HTTPClientRequest(url: endpoint)
        create.method = .POST
        create.headers.add(name: "Authorization", value: "Bearer \(token)")
        create.headers.add(name: "Content-Type", value: "application/json")
        let body: [String: Any] = [
            "events_requested": SharedSignalsReceiver.eventsRequested, "delivery": ["method": poll], "description": configuration.streamDescription,
        ]
        create.body = .bytes(ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: body)))
        let created = try await json(create, what: "stream creation")
        guard let url = (created["delivery"] as? [String: Any])?["endpoint_url"] as? String else {
            throw PollError(status: 0, what: "stream creation (no poll endpoint)")
        }
        logger.info("created a shared signals poll stream", metadata: ["portcullis.stream_id": .string(created["stream_id"] as? String ?? "?")])
        return url
    }

    func poll(_ url: String, token: String, ack: [String], immediately: Bool = false) async throws -> (sets: [(String, String)], more: Bool) {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.headers.add(name: "Content-Type", value: "application/json")
        let body: [String: Any] = ["maxEvents": 100, "returnImmediately": immediately, "ack": ack]
        request.body = .bytes(ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: body)))
        let object = try await json(request, what: "the poll endpoint", timeout: .seconds(75))
        let sets = (object["sets"] as? [String: Any] ?? [:]).compactMap { key, value in (value as? String).map { (key, $0) } }
        return (sets.sorted { $0.0 < $1.0 }, object["moreAvailable"] as? Bool ?? false)
    }

    func json(_ request: HTTPClientRequest, what: String, timeout: TimeAmount = .seconds(15)) async throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: try await data(request, what: what, timeout: timeout)) as? [String: Any] else {
            throw PollError(status: 0, what: "\(what) (not a JSON object)")
        }
        return object
    }

    func jsonArray(_ request: HTTPClientRequest, what: String) async throws -> [[String: Any]] {
        (try JSONSerialization.jsonObject(with: try await data(request, what: what, timeout: .seconds(15))) as? [[String: Any]]) ?? []
    }

    func data(_ request: HTTPClientRequest, what: String, timeout: TimeAmount) async throws -> Data {
        let response = try await client.execute(request, timeout: timeout)
        let body = try await response.body.collect(upTo: 4 << 20)
        guard (200..<300).contains(Int(response.status.code)) else { throw PollError(status: Int(response.status.code), what: what) }
        return Data(body.readableBytesView)
    }

    static func formEncode(_ value: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
    }
}

/// The poller's connection state, read by other tasks.
private final class StatusBox: Sendable {
    private let value = Mutex<(connected: Bool, problem: String?)>((false, nil))
    var connected: Bool { value.withLock { $0.connected } }
    var problem: String? { value.withLock { $0.problem } }

    func set(connected: Bool, problem: String?, view: RevocationView) {
        value.withLock { $0 = (connected, problem) }
        view.isCurrent = connected
    }
}
