import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import PortcullisCore
import PortcullisStorage
import Prometheus

/// The outermost middleware: gives each request its correlation and trace IDs, logs it (method, path
/// without query, status, duration: never a body, a header value or a token), counts it, and turns any
/// error nobody mapped into a bare JSON 500 (or 503 when the store is unavailable) that names the
/// correlation ID.
struct RequestMiddleware: RouterMiddleware {
    typealias Context = PortcullisRequestContext
    let metrics: ServerMetrics
    /// Whether clients reach the server over https (its base URL): then every answer carries HSTS.
    var strictTransportSecurity = false
    /// The largest request body a route accepts.
    var maximumBodyBytes = 64 * 1024

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.maxUploadSize = maximumBodyBytes
        context.correlationId = Self.correlationId(from: request.headers[.clientRequestId])
        context.traceId = RequestID.next()
        context.logger[metadataKey: LogKeys.correlationId] = .string(context.correlationId)
        let start = ContinuousClock.now
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            response = try error.response(from: request, context: context)
        } catch {
            response = Self.unexpected(error, context: context)
        }
        response.headers[.clientRequestId] = context.correlationId
        response.headers[.msRequestId] = context.traceId
        if strictTransportSecurity { response.headers[.strictTransportSecurity] = "max-age=31536000" }
        let elapsed = ContinuousClock.now - start
        let route = context.endpointPath ?? "unmatched"
        metrics.recordRequest(route: route, method: request.method.rawValue, status: response.status.code, duration: elapsed)
        context.logger.info(
            "\(request.method) \(request.uri.path) \(response.status.code)",
            metadata: [
                LogKeys.route: .string(route),
                "portcullis.duration_ms": .stringConvertible(
                    Double(elapsed.components.attoseconds / 1_000_000_000_000) / 1000 + Double(elapsed.components.seconds) * 1000),
            ])
        return response
    }

    /// Accepts a client's correlation ID when it is short and plain; otherwise makes one.
    static func correlationId(from header: String?) -> String {
        if let header, (1...64).contains(header.utf8.count),
            header.utf8.allSatisfy({
                ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x2D || $0 == 0x5F || $0 == 0x2E
            })
        {
            return header
        }
        return RequestID.next()
    }

    /// An error nobody mapped. A store that cannot answer is PROTOCOL §2.4's 503: `temporarily_unavailable`
    /// in the OAuth error shape, with `Retry-After`, on every endpoint. Anything else is a bare 500.
    static func unexpected(_ error: any Error, context: Context) -> Response {
        if (error as? StorageError)?.code == .unavailable {
            context.logger.warning("store unavailable", metadata: ["portcullis.detail": .string(Self.safeDescription(error))])
            var refusal = TokenError(
                .temporarilyUnavailable, aadsts: 90033, "The service is temporarily unavailable (its store did not answer). Please try again.")
            refusal.retryAfter = 1
            return refusal.response(correlationId: context.correlationId, traceId: context.traceId, now: Date())
        }
        context.logger.error(
            "request failed",
            metadata: [
                LogKeys.error: .string(String(describing: type(of: error))),
                "portcullis.detail": .string(Self.safeDescription(error)),
            ])
        let body = ServerErrorBody(
            error: "server_error", errorDescription: "An unexpected error occurred.", correlationId: context.correlationId, traceId: context.traceId)
        return JSONResponse.make(status: .internalServerError, body)
    }

    /// Storage errors describe themselves without data; anything else is reduced to its type.
    static func safeDescription(_ error: any Error) -> String {
        if let error = error as? StorageError { return error.description }
        return String(describing: type(of: error))
    }
}

struct ServerErrorBody: Codable, Sendable {
    let error: String
    let errorDescription: String
    let correlationId: String
    let traceId: String

    enum CodingKeys: String, CodingKey {
        case error
        case errorDescription = "error_description"
        case correlationId = "correlation_id"
        case traceId = "trace_id"
    }
}

extension HTTPField.Name {
    static let clientRequestId = Self("client-request-id")!
    static let msRequestId = Self("x-ms-request-id")!
    static let xClientOS = Self("x-client-OS")!
    /// A client that can answer a PKeyAuth challenge (PROTOCOL §18) says so.
    static let xMsPKeyAuth = Self("x-ms-PKeyAuth")!
    static let xClientSKU = Self("x-client-SKU")!
    static let xForwardedFor = Self("X-Forwarded-For")!
    static let pragma = Self("Pragma")!
    static let dpop = Self("DPoP")!
    static let dpopNonce = Self("DPoP-Nonce")!
}

/// JSON responses with the headers every API answer carries.
enum JSONResponse {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }()

    static func make(status: HTTPResponse.Status, _ value: some Encodable, headers: HTTPFields = [:], noStore: Bool = true) -> Response {
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        return make(status: status, data: data, headers: headers, noStore: noStore)
    }

    static func make(
        status: HTTPResponse.Status, data: Data, contentType: String = "application/json; charset=utf-8", headers: HTTPFields = [:], noStore: Bool = true
    ) -> Response {
        var fields = headers
        fields[.contentType] = contentType
        if noStore {
            fields[.cacheControl] = "no-store"
            fields[.pragma] = "no-cache"
        }
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
