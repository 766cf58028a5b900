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
    let clock: any WallClock

    func register(on router: Router<PortcullisRequestContext>) {
        let group = router.group(":tenant/devices/v1").add(middleware: authenticator)
        group.post("register") { request, context in try await register(request, context) }
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
