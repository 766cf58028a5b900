import Foundation
import PortcullisCore
public import Prometheus
import Synchronization

/// The server's Prometheus metrics, made from one registry that `/metrics` renders. No global state.
///
/// Every label value comes from a fixed set the server defines (`MetricLabels`): nothing a client sends
/// becomes a label as it is, so the number of series, and `/metrics` with it, is bounded whatever clients do.
public struct ServerMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry
    /// The request metrics' handles by (route, method, status): one dictionary read per request instead of
    /// the registry's label validation and hashing (bounded: routes, methods and statuses are fixed sets).
    private let handles = Handles()

    final class Handles: Sendable {
        struct Key: Hashable {
            let route: String
            let method: String
            let status: Int
        }
        let cache = Mutex<[Key: (Counter, DurationHistogram)]>([:])
        /// Tokens issued, by grant type (a fixed set).
        let issued = Mutex<[GrantType: Counter]>([:])
    }
    private static let buckets: [Duration] = [
        .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5),
        .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
        .milliseconds(500), .seconds(1), .seconds(2.5),
    ]

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
    }

    /// `route` is the matched route's pattern (or `unmatched`), never the request's path.
    func recordRequest(route: String, method: String, status: Int, duration: Duration) {
        let key = Handles.Key(route: route, method: MetricLabels.method(method), status: status)
        let (counter, histogram) = handles.cache.withLock { cache in
            if let found = cache[key] { return found }
            let made = (
                registry.makeCounter(
                    descriptor: MetricNames.requests,
                    labels: [("route", route), ("method", key.method), ("status", MetricLabels.status(status))]),
                registry.makeDurationHistogram(descriptor: MetricNames.requestDuration, labels: [("route", route)], buckets: Self.buckets)
            )
            cache[key] = made
            return made
        }
        counter.increment()
        histogram.record(duration)
    }

    func tokenIssued(grantType: GrantType) {
        let counter = handles.issued.withLock { issued in
            if let found = issued[grantType] { return found }
            let made = registry.makeCounter(descriptor: MetricNames.tokensIssued, labels: [("grant_type", grantType.rawValue)])
            issued[grantType] = made
            return made
        }
        counter.increment()
    }

    /// `grantType` is the raw form value; it is reduced to a known grant type, `none` or `other`.
    func tokenRefused(grantType: String?, error: TokenError) {
        registry.makeCounter(
            descriptor: MetricNames.tokenRefusals,
            labels: [("grant_type", MetricLabels.grantType(grantType)), ("error", error.code.description), ("code", String(error.aadsts))]
        ).increment()
    }

    /// The Prometheus text exposition.
    func render() -> String {
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        return String(decoding: buffer, as: UTF8.self)
    }
}

/// Label values from fixed sets. Anything else becomes `other`.
enum MetricLabels {
    static let methods: Set<String> = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

    static func method(_ raw: String) -> String { methods.contains(raw) ? raw : "other" }

    static func grantType(_ raw: String?) -> String {
        guard let raw else { return "none" }
        return GrantType(rawValue: raw)?.rawValue ?? "other"
    }

    /// A status code the server chose; anything outside 100…599 (which it never sends) is `other`.
    static func status(_ code: Int) -> String { (100...599).contains(code) ? String(code) : "other" }
}
