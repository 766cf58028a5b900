import Foundation
public import HTTPTypes
public import Hummingbird
public import HummingbirdCore
import PortcullisAPI
public import PortcullisCore

/// The one place a `TokenError` becomes HTTP: 400 (401 with `WWW-Authenticate` for `invalid_client`),
/// `Cache-Control: no-store`, and the Microsoft-shaped body of PROTOCOL §2.4/§2.5.
extension TokenError: HTTPResponseError {
    public var status: HTTPResponse.Status {
        code == .invalidClient || pkeyAuthChallenge != nil ? .unauthorized : (code == .temporarilyUnavailable ? .serviceUnavailable : .badRequest)
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        let ids = context as? PortcullisRequestContext
        return response(
            correlationId: ids?.correlationId ?? UUID.randomIdentifierText,
            traceId: ids?.traceId ?? UUID.randomIdentifierText, now: Date())
    }

    func body(correlationId: String, traceId: String, now: Date) -> OAuthErrorBody {
        let timestamp = AADTimestamp.format(now)
        var body = OAuthErrorBody(
            error: code.description, suberror: suberror,
            errorDescription: "AADSTS\(aadsts): \(message)\r\nTrace ID: \(traceId)\r\nCorrelation ID: \(correlationId)\r\nTimestamp: \(timestamp)",
            errorCodes: [aadsts], timestamp: timestamp, traceId: traceId, correlationId: correlationId)
        body.claims = claims
        if let remediation {
            body.adi = remediation.userPrincipalName
            body.clientInfo = ClientInfo(uid: remediation.objectId, utid: remediation.tenantId).encoded
            body.remediation = RemediationDetails(
                homeAccountId: "\(remediation.objectId).\(remediation.tenantId)", accountId: remediation.objectId,
                tenantId: remediation.tenantId, upn: remediation.userPrincipalName, endpoint: remediation.endpoint,
                scope: "\(BuiltInResources.complianceIdentifier)/.default", policyIds: remediation.policyIds)
        }
        return body
    }

    func response(correlationId: String, traceId: String, now: Date) -> Response {
        var headers: HTTPFields = [:]
        if code == .invalidClient { headers[.wwwAuthenticate] = #"Basic realm="portcullis""# }
        if status == .serviceUnavailable || retryAfter != nil { headers[.retryAfter] = String(retryAfter ?? 1) }
        if let dpopNonce { headers[.dpopNonce] = dpopNonce }
        if let pkeyAuthChallenge { headers[.wwwAuthenticate] = pkeyAuthChallenge }
        return JSONResponse.make(status: status, data: body(correlationId: correlationId, traceId: traceId, now: now).jsonBody, headers: headers)
    }
}

extension OAuthErrorBody {
    /// The error body, written directly in `JSONEncoder`'s sorted-key form (a refused grant's encoding measured 7 % of it).
    var jsonBody: Data {
        var writer = JSONObjectWriter(capacity: errorDescription.utf8.count + 512)
        writer.string("adi", adi)
        writer.string("claims", claims)
        writer.string("client_info", clientInfo)
        writer.string("correlation_id", correlationId)
        writer.string("error", error)
        writer.integers("error_codes", errorCodes)
        writer.string("error_description", errorDescription)
        if let remediation {
            writer.object("remediation") { nested in
                nested.string("account_id", remediation.accountId)
                nested.string("endpoint", remediation.endpoint)
                nested.string("home_account_id", remediation.homeAccountId)
                nested.strings("policy_ids", remediation.policyIds)
                nested.string("scope", remediation.scope)
                nested.string("tenant_id", remediation.tenantId)
                nested.string("upn", remediation.upn)
            }
        }
        writer.string("suberror", suberror)
        writer.string("timestamp", timestamp)
        writer.string("trace_id", traceId)
        return writer.finish()
    }
}

/// The Microsoft identity platform's error timestamp: `2026-11-21 23:04:00Z`.
enum AADTimestamp {
    static func format(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }
}
