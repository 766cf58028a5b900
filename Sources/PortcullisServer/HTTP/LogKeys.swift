public import Prometheus

/// Log metadata and metric names, in one place.
public enum LogKeys {
    public static let correlationId = "portcullis.correlation_id"
    public static let traceId = "portcullis.trace_id"
    public static let clientId = "portcullis.client_id"
    public static let tenantId = "portcullis.tenant_id"
    public static let userId = "portcullis.user_id"
    public static let grantType = "portcullis.grant_type"
    public static let policyId = "portcullis.policy_id"
    public static let decision = "portcullis.decision"
    public static let status = "portcullis.status"
    public static let route = "portcullis.route"
    public static let error = "portcullis.error"
}

/// The server's metrics (namespace `portcullis`).
public enum MetricNames {
    public static var requests: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "portcullis", metricName: "http_requests", unitName: "total", helpText: "HTTP requests by route, method and status.")
    }
    public static var requestDuration: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "portcullis", metricName: "http_request_duration", unitName: "seconds", helpText: "HTTP request latency by route.")
    }
    public static var tokensIssued: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "portcullis", metricName: "tokens_issued", unitName: "total", helpText: "Access tokens issued by grant type.")
    }
    public static var tokenRefusals: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "portcullis", metricName: "token_refusals", unitName: "total", helpText: "Token requests refused, by grant type, error and AADSTS code.")
    }
}
