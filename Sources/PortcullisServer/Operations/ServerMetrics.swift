import Foundation
import Prometheus

/// The server's Prometheus metrics, made from one registry that `/metrics` renders. No global state.
public struct ServerMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry
    private static let buckets: [Duration] = [
        .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5),
        .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
        .milliseconds(500), .seconds(1), .seconds(2.5),
    ]

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
    }

    func recordRequest(route: String, method: String, status: Int, duration: Duration) {
        registry.makeCounter(
            descriptor: MetricNames.requests,
            labels: [("route", route), ("method", method), ("status", String(status))]
        ).increment()
        registry.makeDurationHistogram(descriptor: MetricNames.requestDuration, labels: [("route", route)], buckets: Self.buckets)
            .record(duration)
    }

    func tokenIssued(grantType: String) {
        registry.makeCounter(descriptor: MetricNames.tokensIssued, labels: [("grant_type", grantType)]).increment()
    }

    func tokenRefused(grantType: String, error: String, code: Int) {
        registry.makeCounter(
            descriptor: MetricNames.tokenRefusals,
            labels: [("grant_type", grantType), ("error", error), ("code", String(code))]
        ).increment()
    }

    /// The Prometheus text exposition.
    func render() -> String {
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        return String(decoding: buffer, as: UTF8.self)
    }
}
