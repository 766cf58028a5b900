import Foundation
public import HTTPTypes
public import Hummingbird
public import HummingbirdCore
public import PortcullisCore
import PortcullisStorage

/// An admin (and compliance) API refusal: a status, a stable code, a sentence, and for validation
/// failures every problem with its JSON Pointer. The one place these become HTTP.
public struct APIError: Error, Sendable, HTTPResponseError {
    public let status: HTTPResponse.Status
    public let code: String
    public let message: String
    public let details: [ValidationProblem]
    public let headers: HTTPFields

    public init(_ status: HTTPResponse.Status, _ code: String, _ message: String, details: [ValidationProblem] = [], headers: HTTPFields = [:]) {
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        self.headers = headers
    }

    struct Body: Codable {
        struct Inner: Codable {
            let code: String
            let message: String
            let details: [ValidationProblem]?
            let correlationId: String
        }
        let error: Inner
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        let correlation = (context as? PortcullisRequestContext)?.correlationId ?? ""
        return JSONResponse.make(
            status: status, Body(error: .init(code: code, message: message, details: details.isEmpty ? nil : details, correlationId: correlation)),
            headers: headers)
    }

    static func validation(_ error: ValidationError) -> APIError {
        APIError(.badRequest, "validationFailed", "The document is not valid: \(error.problems.count) problem(s).", details: error.problems)
    }

    /// A write or delete a document kind's rules refuse (`AdministeredDocument`).
    init(_ refusal: DocumentRefusal) {
        switch refusal.reason {
        case .inUse: self.init(.conflict, "inUse", refusal.message)
        case .lastAdministrator: self.init(.conflict, "lastAdministrator", refusal.message)
        case .notWritable: self.init(.methodNotAllowed, "methodNotAllowed", refusal.message)
        case .malformed: self = .malformedJSON()
        }
    }

    static func malformedJSON() -> APIError {
        APIError(
            .badRequest, "malformedJSON", "The request body is not a JSON document.", details: [ValidationProblem(pointer: "", message: "is not valid JSON.")])
    }

    static let preconditionRequired = APIError(
        .preconditionRequired, "preconditionRequired",
        "Replacing or deleting requires If-Match with the ETag you read (or If-Match: *; If-None-Match: * to create with PUT), so that no change is overwritten unnoticed."
    )

    static func notFound(_ what: String) -> APIError { APIError(.notFound, "notFound", "\(what) was not found.") }

    static let unauthenticated = APIError(
        .unauthorized, "unauthenticated", "A valid bearer access token is required.",
        headers: [.wwwAuthenticate: #"Bearer realm="portcullis", error="invalid_token""#])

    /// An identifier that is unique across the installation (PROTOCOL §11) and already somebody else's: a validation
    /// problem at the member that carries it (which tenant holds it is not said).
    static func identifierTaken(pointer: String) -> APIError {
        validation(
            ValidationError(problems: [
                ValidationProblem(
                    pointer: pointer,
                    message: """
                        is already used by another directory object or tenant: object IDs and application IDs are unique across the installation (leave it out to get a new one).
                        """)
            ]))
    }

    /// Storage errors that a client can act on.
    static func from(_ error: StorageError, what: String, idPointer: String = "/id") -> APIError? {
        switch error.code {
        case .identifierTaken: return .identifierTaken(pointer: idPointer)
        case .notFound: return .notFound(what)
        case .duplicate: return APIError(.conflict, "alreadyExists", "\(what) already exists.")
        case .preconditionFailed:
            return APIError(.preconditionFailed, "preconditionFailed", "\(what) has changed since you read it (If-Match is stale); read it again.")
        default: return nil
        }
    }
}

/// A validation failure anywhere in an API route is a 400 listing every problem.
extension ValidationError: HTTPResponseError {
    public var status: HTTPResponse.Status { .badRequest }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        try APIError.validation(self).response(from: request, context: context)
    }
}

/// Paging parameters of the admin lists, validated like everything else (`?top=abc` is a 400, not ignored).
enum Paging {
    /// `?top=` within `range`, else `fallback` when absent.
    static func top(_ request: Request, default fallback: Int, range: ClosedRange<Int>) throws -> Int {
        guard let text = request.uri.queryParameters.get("top") else { return fallback }
        guard let value = Int(text), range.contains(value) else {
            throw ValidationError(problems: [ValidationProblem(pointer: "?top", message: "must be an integer from \(range.lowerBound) to \(range.upperBound).")]
            )
        }
        return value
    }

    /// `?skip=`: how many to pass over (the lists that page by position), 0…100,000.
    static func skip(_ request: Request) throws -> Int {
        guard let text = request.uri.queryParameters.get("skip") else { return 0 }
        guard let value = Int(text), (0...100_000).contains(value) else {
            throw ValidationError(problems: [ValidationProblem(pointer: "?skip", message: "must be an integer from 0 to 100000.")])
        }
        return value
    }

    /// The link to the page after one of `count` items that began at `skip` (none when the page was not full).
    static func nextLink(_ request: Request, skip: Int, limit: Int, count: Int) -> String? {
        guard count == limit, skip + limit <= 100_000 else { return nil }
        var components = URLComponents()
        components.path = request.uri.path
        components.queryItems =
            request.uri.queryParameters.filter { $0.key != "skip" }.map { URLQueryItem(name: String($0.key), value: String($0.value)) }
            + [URLQueryItem(name: "skip", value: String(skip + limit))]
        return components.string
    }

    /// `?before=`: a cursor this API returned.
    static func before(_ request: Request) throws -> Int64? {
        guard let text = request.uri.queryParameters.get("before") else { return nil }
        guard let value = Int64(text), value >= 0 else {
            throw ValidationError(problems: [ValidationProblem(pointer: "?before", message: "must be a cursor this API returned.")])
        }
        return value
    }
}
