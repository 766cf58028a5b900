import Foundation
import HTTPTypes
import Hummingbird
import PortcullisCore
import PortcullisStorage
import PortcullisTokens

/// `/{tenant}/devices/v1` (PROTOCOL §18): a user registers a device with a key the device holds. The caller presents a
/// user's token for `api://portcullis-devices` with `Device.Register` (a token for it is the user action
/// `urn:user:registerdevice` in conditional access) and a PKCS #10 request for the device's key; the answer is the
/// device, as Graph shows it, and its certificate from the tenant's issuing CA — stored through the devices' own write
/// path (validated, audited, versioned).
struct DeviceRoutes: Sendable {
    let devices: DocumentResource<Device>
    let authority: IssuingAuthority
    let tenants: TenantCache
    let authenticator: BearerAuthenticator
    let proofs: DeviceAuthentication
    let endpoints: ServerEndpoints
    let clock: any WallClock

    func register(on router: Router<PortcullisRequestContext>) {
        let group = router.group(":tenant/devices/v1").add(middleware: authenticator)
        group.post("register") { request, context in try await register(request, context) }
        // A check-in is signed by the device's key: no bearer token.
        router.post(":tenant/devices/v1/:deviceId/checkin") { request, context in try await checkIn(request, context) }
    }

    /// A device checks in at most once a minute (each check-in is a stored, audited change).
    static let checkInInterval: TimeInterval = 60

    /// `POST /{tenant}/devices/v1/{deviceId}/checkin` (PROTOCOL §18): a compact JWS signed with the device's key, its
    /// certificate in `x5c`, the payload `{aud: this URL, iat, jti, deviceId, operatingSystem, operatingSystemVersion,
    /// passcodeSet, storageEncrypted, jailbroken}` (`jti` single use). The tenant's compliance policies of the device's
    /// platform decide `isCompliant` (with their grace period); the device is managed from now on. The change is stored
    /// through the devices' write path, with its effects (CAEP `device-compliance-change` when compliance changes).
    func checkIn(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        guard let segment = context.parameters.get("tenant"), let tenant = try await tenants.snapshot(tenantSegment: segment) else {
            throw APIError.notFound("The tenant")
        }
        let pathDevice = context.parameters.get("deviceId") ?? ""
        var request = request
        let buffer = try await request.collectBody(upTo: Self.maximumBody)
        let text = String(decoding: buffer.readableBytesView, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        func refused(_ reason: String) -> APIError { APIError(.unauthorized, "deviceAuthenticationFailed", "The check-in proves no device: \(reason).") }
        let token: PKeyAuth.DeviceSignedToken
        switch PKeyAuth.DeviceSignedToken.read(text) {
        case .success(let read): token = read
        case .failure(let failure): throw APIError(.badRequest, "invalidCheckIn", "The body must be a compact JWS signed by the device: \(failure.reason).")
        }
        let now = clock.now()
        let device: Device
        switch try proofs.prove(token, snapshot: tenant, now: now) {
        case .success(let proven): device = proven
        case .failure(let failure): throw refused(failure.reason)
        }
        let payload = token.payload
        let url = "\(endpoints.baseURL)/\(segment)/devices/v1/\(pathDevice)/checkin"
        let reported = payload["deviceId"]?.stringValue.map { DeviceID($0) }
        guard DeviceID(pathDevice) == device.deviceId, reported == device.deviceId else {
            throw refused("the certificate is another device's")
        }
        guard payload["aud"]?.stringValue == url else { throw refused("aud is not this check-in URL") }
        guard let iat = token.issuedAt, abs(iat.timeIntervalSince(now)) <= PKeyAuth.clockSkew else { throw refused("iat is not now") }
        guard let jti = payload["jti"]?.stringValue, !jti.isEmpty, jti.utf8.count <= 128 else { throw refused("jti is missing") }
        // The store's record, not this node's copy, is what the check-in changes: still this certificate's, still enabled.
        guard let before = try await devices.read(tenant, id: device.id.rawValue), before.document.certificate == device.certificate,
            before.document.accountEnabled
        else { throw refused("the device no longer holds this certificate, or is disabled") }
        if let last = before.document.lastSyncDateTime, now.timeIntervalSince(last) < Self.checkInInterval {
            let wait = Int((Self.checkInInterval - now.timeIntervalSince(last)).rounded(.up))
            throw APIError(
                .tooManyRequests, "checkInTooSoon", "A device checks in at most once a minute; try again in \(wait) s.",
                headers: [.retryAfter: String(wait)])
        }
        guard
            try await proofs.replays.claimProof(
                key: "checkin:\(device.deviceId.rawValue):\(jti)", expiresAt: iat.addingTimeInterval(2 * PKeyAuth.clockSkew), now: now)
        else { throw refused("this check-in (its jti) was sent already") }
        func flag(_ key: String) -> Bool { payload[key]?.boolValue ?? false }
        let report = DeviceCompliancePolicy.Report(
            operatingSystem: payload["operatingSystem"]?.stringValue, operatingSystemVersion: payload["operatingSystemVersion"]?.stringValue,
            passcodeSet: flag("passcodeSet"), storageEncrypted: flag("storageEncrypted"), jailbroken: flag("jailbroken"))
        let updated = before.document.checkedIn(report, policies: tenant.contents.deviceCompliancePolicies, now: now)
        do {
            _ = try await devices.save(
                updated, before: before, precondition: .version(before.version), tenant: tenant, actor: "device \(device.deviceId.rawValue) (check-in)")
        } catch let error as StorageError where error.code == .preconditionFailed {
            throw APIError(.conflict, "checkInConflict", "The device changed while it checked in (another check-in, an admin); check in again.")
        }
        var answer: [String: JSONValue] = [
            "deviceId": .string(updated.deviceId.rawValue), "isCompliant": .bool(updated.isCompliant(at: now)), "isManaged": .bool(updated.isManaged),
            "complianceFailures": JSONValue(encoding: updated.complianceFailures ?? []),
        ]
        answer["complianceGracePeriodExpirationDateTime"] = updated.complianceGracePeriodExpirationDateTime.map { .string(ISO8601.string($0)) } ?? .null
        return JSONResponse.make(status: .ok, JSONValue.object(answer))
    }

    static let maximumBody = 32 * 1024

    func register(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        let principal = try context.requirePrincipal()
        guard principal.isDelegated, let oid = principal.oid else {
            throw APIError(.forbidden, "userTokenRequired", "A device is registered by a user: present a delegated token (not an app-only one).")
        }
        guard (principal.scp ?? "").split(separator: " ").contains(Substring(BuiltInResources.deviceRegisterScope)) else {
            throw APIError(.forbidden, "insufficientScope", "The token does not carry \(BuiltInResources.deviceRegisterScope).")
        }
        guard let tenant = try await tenants.snapshot(tenantSegment: principal.tid), let user = tenant.directory.user(id: ObjectID(oid)), user.accountEnabled,
            let segment = context.parameters.get("tenant"), try await tenants.snapshot(tenantSegment: segment)?.tenant.id == tenant.tenant.id
        else { throw APIError.unauthenticated }
        var request = request
        let buffer = try await request.collectBody(upTo: Self.maximumBody)
        guard let body = JSONValue.parse(Data(buffer.readableBytesView)), body.objectValue != nil else { throw APIError.malformedJSON() }
        let problems = ProblemCollector()
        let reader = JSONObjectReader(body, at: "", problems: problems)
        reader?.rejectUnknownMembers(allowed: ["csr", "displayName", "operatingSystem", "operatingSystemVersion"])
        let csr = reader?.string("csr", required: true)
        let displayName = reader?.string("displayName", required: true)
        if let displayName, displayName.count > 256 { problems.add("/displayName", "must be at most 256 characters.") }
        let operatingSystem = reader?.string("operatingSystem")
        let version = reader?.string("operatingSystemVersion")
        for (key, value) in [("operatingSystem", operatingSystem), ("operatingSystemVersion", version)] where (value?.count ?? 0) > 256 {
            problems.add("/\(key)", "must be at most 256 characters.")
        }
        try problems.check()
        guard let csr, let displayName else { throw APIError.malformedJSON() }
        let owned = tenant.contents.devices.filter { $0.registeredOwners.contains(user.id) }.count
        guard owned < Device.maximumPerUser else {
            throw APIError(
                .forbidden, "deviceLimitReached",
                "\(user.userPrincipalName) has registered \(owned) devices, the most a user may; an administrator deletes one first.")
        }
        guard tenant.contents.devices.count < Device.maximumPerTenant else {
            throw APIError(.forbidden, "deviceLimitReached", "This tenant holds \(Device.maximumPerTenant) devices, the most it may.")
        }
        let now = clock.now()
        var device = Device(
            id: ObjectID.generate(), deviceId: DeviceID.generate(), displayName: displayName, trustType: .workplace, operatingSystem: operatingSystem,
            operatingSystemVersion: version, registeredOwners: [user.id], registrationDateTime: now)
        let certificate = try authority.issueDevice(
            IssuingAuthority.verifiedDeviceRequest(csr), tenant: tenant.tenant, objectId: device.id, deviceId: device.deviceId, now: now)
        device.certificate = certificate
        let saved = try await devices.save(device, before: nil, precondition: .mustNotExist, tenant: tenant, actor: principal.actor)
        let shown = GraphSchema.complete(Directory.device(saved.document.presented), type: "device")
        return JSONResponse.make(status: .created, ["device": shown, "certificate": JSONValue.string(certificate.pem)] as JSONValue)
    }
}
