import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import PortcullisAPI
import PortcullisCore
import PortcullisStorage
import PortcullisTokens

/// `/mam/v1`: the compliance service's API. The caller presents an access token for
/// `api://portcullis-compliance`; the account and client application come from that token, never from
/// the body. Bodies with unknown members are accepted (old and new SDKs); malformed ones are a 400.
struct ComplianceRoutes: Sendable {
    let service: ComplianceService
    let configuration: ServerConfiguration
    let tenants: TenantCache
    let signers: TenantKeyRings
    let secrets: SecretDelivery
    let clock: any WallClock

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    func register(on router: Router<PortcullisRequestContext>) {
        let group = router.group("mam/v1").add(
            middleware: BearerAuthenticator(
                resource: BuiltInResources.compliance, requiredRole: nil, signers: signers, endpoints: service.endpoints, tenants: tenants,
                revocations: service.store, clock: clock))
        group.post("enrollments") { request, context in
            let caller = try await caller(context)
            let body = try await Self.decode(EnrollmentRequest.self, request, context)
            try Self.validate(deviceId: body.deviceId, platform: body.platform, appKey: body.appKey)
            let (created, response) = try await service.enroll(caller, body)
            let status: HTTPResponse.Status =
                switch response.statusCode {
                case .accountNotAllowed: .forbidden
                case .singleManagedAccountMode: .conflict
                default: created ? .created : .ok
                }
            return Self.reply(status, response, for: request, caller: caller)
        }
        group.get("enrollments/:id") { request, context in
            let caller = try await caller(context)
            return Self.reply(.ok, try await service.get(caller, id: context.parameters.get("id") ?? ""), for: request, caller: caller)
        }
        group.post("enrollments/:id/checkin") { request, context in
            let caller = try await caller(context)
            let body = try await Self.decode(CheckInRequest.self, request, context)
            return Self.reply(.ok, try await service.checkIn(caller, id: context.parameters.get("id") ?? "", body), for: request, caller: caller)
        }
        group.delete("enrollments/:id") { request, context in
            let caller = try await caller(context)
            return Self.reply(.ok, try await service.unenroll(caller, id: context.parameters.get("id") ?? ""), for: request, caller: caller)
        }
        let delivery = ConfigurationDelivery(service: service, tenants: tenants, clock: clock)
        group.get("enrollments/:id/configuration") { request, context in
            try await delivery.get(request, context, caller: try await caller(context))
        }
        group.get("enrollments/:id/secrets/:identifier") { request, context in
            try await secrets.deliver(request, context, caller: try await caller(context))
        }
        group.post("enrollments/:id/identities/:identifier") { request, context in
            try await secrets.issue(request, context, caller: try await caller(context))
        }
        // The tenant's issuing CA (device identities chain to it): public, like the signing keys.
        router.get(":tenant/pki/ca.pem") { _, context in try await secrets.caCertificate(context, tenants: tenants) }
        group.post("remediations") { request, context in
            let caller = try await caller(context)
            let body = try await Self.decode(RemediationRequest.self, request, context)
            try Self.validate(deviceId: body.deviceId, platform: body.platform, appKey: body.appKey)
            return Self.reply(.ok, try await service.remediate(caller, body), for: request, caller: caller)
        }
    }

    /// The answer, its status's title and message in the request's `Accept-Language`, with the tenant's allowed accounts
    /// (PROTOCOL §16: the SDK refuses a new account that is not allowed before asking).
    static func reply(_ status: HTTPResponse.Status, _ response: EnrollmentResponse, for request: Request, caller: ComplianceService.Caller) -> Response {
        var response = response
        response.allowedAccounts = AllowedAccountsList(accounts: caller.tenant.tenant.allowedAccounts?.map(\.rawValue))
        response.complianceStatus = response.complianceStatus.localized(MessageLanguage(acceptLanguage: request.headers[.acceptLanguage]))
        return JSONResponse.make(status: status, data: (try? encoder.encode(response)) ?? Data("{}".utf8))
    }

    /// The account and client of the bearer token; compliance calls always act for a user.
    func caller(_ context: PortcullisRequestContext) async throws -> ComplianceService.Caller {
        let principal = try context.requirePrincipal()
        guard principal.isDelegated, let oid = principal.oid else {
            throw APIError(.forbidden, "userTokenRequired", "Compliance calls act for a user: present a delegated token (not an app-only one).")
        }
        guard let tenant = try await tenants.snapshot(tenantSegment: principal.tid), let user = tenant.directory.user(id: ObjectID(oid)), user.accountEnabled,
            let client = tenant.directory.application(appId: AppID(principal.azp))
        else { throw APIError.unauthenticated }
        return ComplianceService.Caller(tenant: tenant, user: user, client: client)
    }

    static func validate(deviceId: String, platform: String?, appKey: AppKeyJWK? = nil) throws {
        var problems: [ValidationProblem] = []
        if let appKey {
            do { _ = try SecretSealing.publicKey(appKey) } catch let error as ValidationError { problems += error.problems }
        }
        let trimmed = deviceId.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.isEmpty || trimmed.count > 200 {
            problems.append(ValidationProblem(pointer: "/deviceId", message: "must be a non-empty string of at most 200 characters."))
        }
        if let platform, !DevicePlatform.detectable.contains(where: { $0.rawValue.caseInsensitiveCompare(platform) == .orderedSame }) {
            problems.append(
                ValidationProblem(
                    pointer: "/platform",
                    message: "'\(platform.prefix(40))' is not one of: \(DevicePlatform.detectable.map(\.rawValue).joined(separator: ", "))."
                ))
        }
        if !problems.isEmpty { throw ValidationError(problems: problems) }
    }

    /// Decodes a JSON body; a type mismatch or a missing member is a 400 naming the member's pointer.
    static func decode<T: Decodable>(_ type: T.Type, _ request: Request, _ context: PortcullisRequestContext) async throws -> T {
        var request = request
        let buffer = try await request.collectBody(upTo: context.maxUploadSize)
        let data = Data(buffer.readableBytesView)
        guard JSONValue.parse(data)?.objectValue != nil else { throw APIError.malformedJSON() }
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch let error as DecodingError {
            let (path, message): ([any CodingKey], String) =
                switch error {
                case .keyNotFound(let key, let context): (context.codingPath + [key], "is required.")
                case .typeMismatch(let type, let context): (context.codingPath, "has the wrong type (expected \(type)).")
                case .valueNotFound(let type, let context): (context.codingPath, "must not be null (expected \(type)).")
                case .dataCorrupted(let context): (context.codingPath, "is not valid.")
                @unknown default: ([], "is not valid.")
                }
            let pointer = path.reduce("") { JSONPointer.appending($0, $1.stringValue) }
            throw ValidationError(problems: [ValidationProblem(pointer: pointer, message: message)])
        }
    }
}
