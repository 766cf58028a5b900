/// Log metadata and metric names, in one place.
public enum LogKeys {
    public static let correlationId = "portcullis.correlation_id"
    public static let traceId = "portcullis.trace_id"
    public static let clientId = "portcullis.client_id"
    public static let tenantId = "portcullis.tenant_id"
    public static let grantType = "portcullis.grant_type"
    public static let policyId = "portcullis.policy_id"
    public static let decision = "portcullis.decision"
    public static let status = "portcullis.status"
    public static let route = "portcullis.route"
    public static let error = "portcullis.error"
}

public enum MetricNames {
    public static let requests = "portcullis_http_requests_total"
    public static let requestDuration = "portcullis_http_request_duration_seconds"
    public static let tokensIssued = "portcullis_tokens_issued_total"
    public static let tokenRefusals = "portcullis_token_refusals_total"
}
