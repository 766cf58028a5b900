import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import PortcullisAPI
import PortcullisCore
import PortcullisStorage
import PortcullisTokens

/// The app side of secrets (PROTOCOL §8.2), to compliant enrollments only:
/// - `GET /mam/v1/enrollments/{id}/secrets/{identifier}`: the material, opened from its at-rest sealing and
///   sealed again with HPKE to the enrollment's `appKey` (`info` binding enrollment, identifier and version);
/// - `POST /mam/v1/enrollments/{id}/identities/{identifier}`: a device identity, the tenant's issuing CA
///   certifying the `appKey` from a request signed with it;
/// - `GET /{tenant}/pki/ca.pem`: that CA's certificate.
/// Every delivery and issuance is audited (who, which secret, which version or serial — never the value).
struct SecretDelivery: Sendable {
    let service: ComplianceService
    let box: SecretMaterialBox
    let authority: IssuingAuthority
    let clock: any WallClock

    /// The RFC 7638 thumbprint of an instance key (what history lines name it by).
    static func thumbprint(_ key: AppKeyJWK) -> String {
        let canonical = #"{"crv":"\#(key.crv)","kty":"\#(key.kty)","x":"\#(key.x)","y":"\#(key.y)"}"#
        return Base64URL.encode(SHA256.hash(data: Data(canonical.utf8)))
    }

    /// The enrollment, compliant, with the provisioned secret `identifier` — or the answer instead: 403 with
    /// the status for one not compliant (wiped, lapsed, unenrolled), 404 for an identifier not provisioned to
    /// this account and app, 409 `appKeyRequired` without an instance key.
    enum Lookup {
        case refused(Response)
        case found(enrollment: Enrollment, secret: ProvisionedSecret, key: P256.KeyAgreement.PublicKey)
    }

    func provisioned(_ request: Request, _ context: PortcullisRequestContext, caller: ComplianceService.Caller) async throws -> Lookup {
        let id = context.parameters.get("id") ?? ""
        let identifier = context.parameters.get("identifier") ?? ""
        let enrollment = try await service.owned(caller, id: id)
        guard enrollment.isCompliant(at: clock.now()) else {
            return .refused(ComplianceRoutes.reply(.forbidden, try await service.get(caller, id: id), for: request, caller: caller))
        }
        let merged = caller.tenant.appConfiguration(userId: caller.user.id, clientId: caller.client.appId)
        guard let secret = merged.secret(identifier) else {
            throw APIError.notFound("The secret '\(identifier.prefix(200))' for this account and app")
        }
        guard let appKey = enrollment.appKey, let key = try? SecretSealing.publicKey(appKey) else {
            throw APIError(
                .conflict, "appKeyRequired", "Secrets are delivered only to an enrollment with an instance key: enroll again with appKey (an EC P-256 JWK).")
        }
        return .found(enrollment: enrollment, secret: secret, key: key)
    }

    func deliver(_ request: Request, _ context: PortcullisRequestContext, caller: ComplianceService.Caller) async throws -> Response {
        let found: (enrollment: Enrollment, secret: ProvisionedSecret, key: P256.KeyAgreement.PublicKey)
        switch try await provisioned(request, context, caller: caller) {
        case .refused(let answer): return answer
        case .found(let enrollment, let secret, let key): found = (enrollment, secret, key)
        }
        let secret = found.secret
        guard let version = secret.version,
            let material = caller.tenant.secretMaterials[StoredSecretMaterial.documentId(policyId: secret.policyId, identifier: secret.identifier)]
        else {
            throw APIError(
                .conflict, "deviceIdentity",
                "'\(secret.identifier)' is a device identity: request it with POST /mam/v1/enrollments/{id}/identities/\(secret.identifier) and a CSR signed by the appKey."
            )
        }
        guard let plaintext = box.open(material, tenantId: caller.tenant.tenant.id) else {
            service.logger.error(
                "secret material does not open: Keys/ is not the one it was sealed under, or the row was altered",
                metadata: [
                    "portcullis.secret": .string(material.documentId), "portcullis.version": .string(material.version),
                ])
            throw APIError(.serviceUnavailable, "secretUnavailable", "The secret cannot be delivered now; the administrator has been told.")
        }
        let info = SealedSecretResponse.info(enrollmentId: found.enrollment.id.rawValue, identifier: secret.identifier, version: version)
        let sealed = try SecretSealing.seal(plaintext, to: found.key, info: info)
        try await audit(
            caller, context, action: .deliver, secret: secret,
            detail: [
                "enrollmentId": found.enrollment.id.rawValue, "version": version,
                "appKey": Self.thumbprint(found.enrollment.appKey!),
            ])
        let body = SealedSecretResponse(identifier: secret.identifier, kind: secret.kind.rawValue, version: version, sealed: sealed)
        return JSONResponse.make(status: .ok, data: try ComplianceRoutes.encoder.encode(body), headers: [.cacheControl: "no-store"])
    }

    func issue(_ request: Request, _ context: PortcullisRequestContext, caller: ComplianceService.Caller) async throws -> Response {
        let found: (enrollment: Enrollment, secret: ProvisionedSecret, key: P256.KeyAgreement.PublicKey)
        switch try await provisioned(request, context, caller: caller) {
        case .refused(let answer): return answer
        case .found(let enrollment, let secret, let key): found = (enrollment, secret, key)
        }
        guard found.secret.kind == .identity, found.secret.issuance == .device else {
            throw APIError(
                .conflict, "notDeviceIdentity",
                "'\(found.secret.identifier)' is not a device identity: fetch it with GET /mam/v1/enrollments/{id}/secrets/\(found.secret.identifier).")
        }
        let body = try await ComplianceRoutes.decode(IdentityRequest.self, request, context)
        let csr = try IssuingAuthority.verifiedRequest(body.csr, appKey: found.key)
        let issued = try authority.issue(
            csr, tenant: caller.tenant.tenant, userPrincipalName: caller.user.userPrincipalName, userId: caller.user.id,
            enrollmentId: found.enrollment.id.rawValue,
            validityDays: found.secret.validityDays ?? SecretDeclaration.defaultValidityDays, now: clock.now())
        let notAfter = issued.notAfter.formatted(.iso8601)
        try await audit(
            caller, context, action: .issue, secret: found.secret,
            detail: [
                "enrollmentId": found.enrollment.id.rawValue, "serialNumber": issued.serialNumber,
                "notAfter": notAfter,
            ])
        let answer = IdentityResponse(certificatesPem: issued.certificatesPem, notAfter: notAfter)
        return JSONResponse.make(status: .ok, data: try ComplianceRoutes.encoder.encode(answer), headers: [.cacheControl: "no-store"])
    }

    func caCertificate(_ context: PortcullisRequestContext, tenants: TenantCache) async throws -> Response {
        guard let tenant = try await tenants.snapshot(tenantSegment: context.parameters.get("tenant") ?? "") else {
            throw APIError.notFound("The tenant")
        }
        let pem = try authority.certificatePEM(tenant: tenant.tenant, now: clock.now())
        var headers: HTTPFields = [.contentType: "application/x-pem-file"]
        headers[.cacheControl] = "public, max-age=3600"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: pem)))
    }

    func audit(
        _ caller: ComplianceService.Caller, _ context: PortcullisRequestContext, action: AuditAction, secret: ProvisionedSecret, detail: [String: String]
    ) async throws {
        try await service.store.appendAudit(
            AuditRecord(
                tenantId: caller.tenant.tenant.id, at: clock.now(), actor: context.actor, action: action, kind: AuditSubject(.appSecretMaterial),
                documentId: StoredSecretMaterial.documentId(policyId: secret.policyId, identifier: secret.identifier), before: nil,
                after: JSONValue(encoding: detail)))
    }
}
