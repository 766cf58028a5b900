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
            correlationId: ids?.correlationId ?? UUID().identifierText,
            traceId: ids?.traceId ?? UUID().identifierText, now: Date())
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
        return JSONResponse.make(status: status, body(correlationId: correlationId, traceId: traceId, now: now), headers: headers)
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
