public import Foundation

/// A Shared Signals stream (SSF 1.0 §8, PROTOCOL §14.2): one receiver's subscription to a tenant's events, a tenant
/// document like any other (stored, audited, cached, listed by the admin API through the one pipeline).
public struct SharedSignalsStream: Codable, Sendable, Equatable {
    public enum Method: String, Codable, Sendable {
        case push, poll

        /// SSF's URI for it.
        public var uri: String { self == .push ? SharedSignalsEventType.pushDelivery : SharedSignalsEventType.pollDelivery }
    }

    public struct Delivery: Codable, Sendable, Equatable {
        public var method: Method
        /// Push: where SETs are posted.
        public var endpointUrl: String?
        /// Push: the `Authorization` value sent with each SET, sealed (`sealedAuthorizationHeader`, never shown).
        public var sealedAuthorizationHeader: Data?

        public init(method: Method, endpointUrl: String? = nil, sealedAuthorizationHeader: Data? = nil) {
            self.method = method
            self.endpointUrl = endpointUrl
            self.sealedAuthorizationHeader = sealedAuthorizationHeader
        }
    }

    /// SSF §8.1.2.
    public enum Status: String, Codable, Sendable, CaseIterable {
        /// Events are delivered.
        case enabled
        /// Events are kept (up to the stream's bound) and delivered on resume.
        case paused
        /// Events are dropped.
        case disabled
    }

    /// `stream_id`.
    public var id: RecordID
    /// The client application (`azp` of the receiver's token) that owns the stream.
    public var receiverAppId: AppID
    /// The SETs' `aud`.
    public var audience: String
    public var eventsRequested: [String]
    public var delivery: Delivery
    public var status: Status
    public var statusReason: String?
    public var description: String?
    /// Subjects the receiver removed (`default_subjects` is `ALL`: every other subject's events are delivered).
    public var removedSubjects: [SignalSubject]
    public var createdAt: Date

    public init(
        id: RecordID, receiverAppId: AppID, audience: String, eventsRequested: [String], delivery: Delivery, status: Status = .enabled,
        statusReason: String? = nil, description: String? = nil, removedSubjects: [SignalSubject] = [], createdAt: Date
    ) {
        self.id = id
        self.receiverAppId = receiverAppId
        self.audience = audience
        self.eventsRequested = eventsRequested
        self.delivery = delivery
        self.status = status
        self.statusReason = statusReason
        self.description = description
        self.removedSubjects = removedSubjects
        self.createdAt = createdAt
    }

    /// `events_delivered`: what was requested of what Portcullis sends.
    public var eventsDelivered: [SharedSignalsEventType] {
        let requested = Set(eventsRequested)
        return SharedSignalsEventType.requestable.filter { requested.contains($0.rawValue) }
    }

    /// Whether an event of `type` about `subject` goes to this stream (verification events are sent on request only).
    public func wants(_ type: SharedSignalsEventType, subject: SignalSubject, userPrincipalName: String?) -> Bool {
        guard status != .disabled, eventsDelivered.contains(type) else { return false }
        return !removedSubjects.contains { $0.covers(subject, userPrincipalName: userPrincipalName) }
    }

    /// Whether new events are pushed as they come (push delivery, enabled); otherwise they wait (polled, or paused).
    public var pushesNow: Bool { delivery.method == .push && status == .enabled }

    /// Where the outbox routes this stream's SETs: a stream's messages share it, so they are delivered in order.
    public var outboxTarget: String { Self.outboxTarget(streamId: id) }
    public static func outboxTarget(streamId: RecordID) -> String { outboxTargetPrefix + streamId.rawValue }
    static let outboxTargetPrefix = "ssf:"

    /// The stream an outbox message's target routes to, when it is a stream's (not a compliance callback URI).
    public static func streamId(ofOutboxTarget target: String) -> RecordID? {
        target.hasPrefix(outboxTargetPrefix) ? RecordID(target.dropFirst(outboxTargetPrefix.count)) : nil
    }

    // MARK: Limits

    /// A receiver holds at most this many streams in a tenant.
    public static let maximumStreamsPerReceiver = 8
    /// A stream removes at most this many subjects.
    public static let maximumRemovedSubjects = 1_000
    public static let maximumDescriptionLength = 256
    public static let maximumEndpointLength = 2_048
    public static let maximumAuthorizationHeaderLength = 4_096

    // MARK: Reading a receiver's configuration

    /// What a receiver's create, replace or update body asks for (SSF §8.1.1): the members a receiver may set. The
    /// authorization header comes back in plain text, for the caller to seal.
    public struct Request: Sendable, Equatable {
        public var eventsRequested: [String]?
        public var method: Method?
        public var endpointUrl: String?
        public var authorizationHeader: String?
        public var description: String?
    }

    /// The members a receiver may send; the transmitter-supplied ones (`iss`, `aud`, `events_supported`,
    /// `events_delivered`, `min_verification_interval`) are accepted when sent back as read, and ignored.
    static let readOnlyMembers: Set<String> = ["stream_id", "iss", "aud", "events_supported", "events_delivered", "min_verification_interval"]

    /// Reads a create, replace or update body, with JSON Pointers for every problem.
    public static func parseRequest(_ value: JSONValue) throws(ValidationError) -> Request {
        let problems = ProblemCollector()
        guard let reader = JSONObjectReader(value, at: "", problems: problems) else { throw ValidationError(problems: problems.problems) }
        reader.rejectUnknownMembers(allowed: readOnlyMembers.union(["events_requested", "delivery", "description"]))
        var request = Request()
        if let events = reader.strings("events_requested") {
            if events.count > 64 { problems.add(reader.path("events_requested"), "may list at most 64 event types.") }
            request.eventsRequested = Array(Set(events.map(\.value).filter { $0.count <= 256 })).sorted()
        }
        if let delivery = reader.object("delivery") {
            delivery.rejectUnknownMembers(allowed: ["method", "endpoint_url", "authorization_header"])
            let method = delivery.enumeration("method", allowed: [SharedSignalsEventType.pushDelivery, SharedSignalsEventType.pollDelivery], required: true)
            request.method = method.map { $0 == SharedSignalsEventType.pushDelivery ? .push : .poll }
            if let endpoint = delivery.string("endpoint_url") {
                if endpoint.count > maximumEndpointLength {
                    problems.add(delivery.path("endpoint_url"), "may be at most \(maximumEndpointLength) characters.")
                } else if let url = URL(string: endpoint), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host != nil {
                    request.endpointUrl = endpoint
                } else {
                    problems.add(delivery.path("endpoint_url"), "must be an absolute http or https URL.")
                }
            }
            if let header = delivery.string("authorization_header") {
                if header.count > maximumAuthorizationHeaderLength || header.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" }) {
                    problems.add(delivery.path("authorization_header"), "must be one line of at most \(maximumAuthorizationHeaderLength) characters.")
                } else {
                    request.authorizationHeader = header
                }
            }
            if request.method == .push, request.endpointUrl == nil, !delivery.has("endpoint_url") {
                problems.add(delivery.path("endpoint_url"), "is required for push delivery (urn:ietf:rfc:8935).")
            }
            if request.method == .poll, delivery.has("endpoint_url") {
                problems.add(delivery.path("endpoint_url"), "is set by the transmitter for poll delivery (urn:ietf:rfc:8936).")
            }
        }
        if let description = reader.string("description", nonEmpty: false) {
            if description.count > maximumDescriptionLength {
                problems.add(reader.path("description"), "may be at most \(maximumDescriptionLength) characters.")
            } else {
                request.description = description
            }
        }
        try problems.check()
        return request
    }
}
