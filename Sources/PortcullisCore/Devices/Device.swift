public import Foundation

/// A device of the tenant (Graph's `device`, PROTOCOL §18): registered by a user with a key it holds, or created by an
/// admin as joined and handed to the device. Its certificate, from the tenant's issuing CA, is what it proves itself with
/// at sign-in (PKeyAuth); only the certificate recorded here counts, so disabling or deleting the device, or registering
/// it again, voids the one before at once.
public struct Device: Codable, Sendable, Equatable {
    /// The certificate the device proves itself with: the leaf only (the CA is the tenant's).
    public struct Certificate: Codable, Sendable, Equatable {
        /// The leaf in PEM.
        public var pem: String
        /// SHA-256 of the leaf's DER, lower-case hex.
        public var thumbprint: String
        public var serialNumber: String
        public var notAfter: Date

        public init(pem: String, thumbprint: String, serialNumber: String, notAfter: Date) {
            self.pem = pem
            self.thumbprint = thumbprint
            self.serialNumber = serialNumber
            self.notAfter = notAfter
        }
    }

    /// The directory object's ID (Graph `id`).
    public var id: ObjectID
    /// The device's own ID (Graph `deviceId`): its certificate's subject, what tokens carry in `deviceid`.
    public var deviceId: DeviceID
    public var displayName: String
    public var operatingSystem: String?
    public var operatingSystemVersion: String?
    public var trustType: DeviceFacts.TrustType
    public var isCompliant: Bool
    public var isManaged: Bool
    public var mdmAppId: String?
    public var manufacturer: String?
    public var model: String?
    public var profileType: String?
    public var enrollmentProfileName: String?
    public var deviceOwnership: String?
    /// `extensionAttribute1` … `extensionAttribute15` (Graph's `onPremisesExtensionAttributes`): only those set.
    public var extensionAttributes: [String: String]
    public var physicalIds: [String]
    public var systemLabels: [String]
    /// The users who registered the device (a joined device created by an admin may have none).
    public var registeredOwners: [ObjectID]
    public var accountEnabled: Bool
    public var registrationDateTime: Date?
    public var certificate: Certificate?
    /// The last signed check-in (Intune's `lastSyncDateTime`).
    public var lastSyncDateTime: Date?
    /// A device that failed a compliance policy stays compliant until then (Intune's
    /// `complianceGracePeriodExpirationDateTime`); `nil` when it is not in a grace period.
    public var complianceGracePeriodExpirationDateTime: Date?
    /// What the last check-in failed, in words (the admin API shows it; Graph's device does not have it).
    public var complianceFailures: [String]?

    public init(
        id: ObjectID, deviceId: DeviceID, displayName: String, trustType: DeviceFacts.TrustType, operatingSystem: String? = nil,
        operatingSystemVersion: String? = nil, registeredOwners: [ObjectID] = [], registrationDateTime: Date? = nil
    ) {
        self.id = id
        self.deviceId = deviceId
        self.displayName = displayName
        self.trustType = trustType
        self.operatingSystem = operatingSystem
        self.operatingSystemVersion = operatingSystemVersion
        self.isCompliant = false
        self.isManaged = false
        self.extensionAttributes = [:]
        self.physicalIds = []
        self.systemLabels = []
        self.registeredOwners = registeredOwners
        self.accountEnabled = true
        self.registrationDateTime = registrationDateTime
    }

    /// A user may register at most this many devices (Entra's default device limit per user).
    public static let maximumPerUser = 50
    /// A tenant holds at most this many (every node keeps them in memory).
    public static let maximumPerTenant = 100_000

    /// What conditional access sees of the device at `now`, once it is proven (compliance as of `now`: a grace period may
    /// have ended since the last check-in).
    public func facts(at now: Date) -> DeviceFacts {
        var attributes: [Int: String] = [:]
        for (name, value) in extensionAttributes {
            if let n = Int(name.dropFirst("extensionAttribute".count)) { attributes[n] = value }
        }
        return DeviceFacts(
            deviceId: deviceId.rawValue, displayName: displayName, trustType: trustType, isCompliant: isCompliant(at: now), isManaged: isManaged,
            operatingSystem: operatingSystem, operatingSystemVersion: operatingSystemVersion, manufacturer: manufacturer, model: model, mdmAppId: mdmAppId,
            profileType: profileType, enrollmentProfileName: enrollmentProfileName, deviceOwnership: deviceOwnership, extensionAttributes: attributes,
            physicalIds: physicalIds, systemLabels: systemLabels)
    }

    /// The members an admin writes; `certificate` and `registrationDateTime` are the server's (read-only), `csr` asks for
    /// a certificate for the device's key.
    static let writable: Set<String> = [
        "id", "deviceId", "displayName", "operatingSystem", "operatingSystemVersion", "trustType", "isCompliant", "isManaged", "mdmAppId", "manufacturer",
        "model", "profileType", "enrollmentProfileName", "deviceOwnership", "extensionAttributes", "physicalIds", "systemLabels", "registeredOwners",
        "accountEnabled", "csr",
    ]

    /// Graph `device` members Portcullis does not keep (shown null, or `[]`): a Graph write, which merges the shown device,
    /// may send them back as they were shown; a value in one is refused, not dropped.
    static let graphOnly: Set<String> = [
        "alternativeSecurityIds", "deviceCategory", "deviceMetadata", "deviceVersion", "enrollmentType", "isManagementRestricted", "isRooted",
        "managementType", "onPremisesLastSyncDateTime", "onPremisesSecurityIdentifier", "onPremisesSyncEnabled",
    ]

    /// Reads a device an admin writes (Graph's `device` members), every problem at its JSON Pointer. `existing` is the
    /// stored device of the same `id` (a replace keeps its certificate and registration time unless `csr` asks anew).
    public static func parse(
        _ value: JSONValue, existing: Device?, directory: DirectorySnapshot, generatedId: @autoclosure () -> ObjectID, now: Date
    ) throws(ValidationError) -> (device: Device, csr: String?) {
        let problems = ProblemCollector()
        guard let root = JSONObjectReader(value, at: "", problems: problems) else {
            throw ValidationError(problems: [ValidationProblem(pointer: "", message: "must be a JSON object.")])
        }
        root.rejectUnknownGraphMembers(
            allowed: writable,
            readOnly: [
                "certificate", "registrationDateTime", "approximateLastSignInDateTime", "deletedDateTime", "complianceExpirationDateTime", "lastSyncDateTime",
                "complianceGracePeriodExpirationDateTime", "complianceFailures",
            ], ignoredWhenEmpty: graphOnly)
        let given: ObjectID? = root.has("id") ? root.guid("id") : nil
        let id = given ?? generatedId()
        var deviceId = existing?.deviceId ?? DeviceID.generate()
        if let given: DeviceID = root.guid("deviceId") {
            if let existing, given != existing.deviceId {
                problems.add(root.path("deviceId"), "a device's ID does not change (it is its certificate's subject); delete the device and create another.")
            }
            deviceId = given
        }
        let displayName = root.string("displayName", required: true)
        if let displayName, displayName.count > 256 { problems.add(root.path("displayName"), "must be at most 256 characters.") }
        var trustType = DeviceFacts.TrustType.workplace
        if let text = root.string("trustType") {
            if let found = DeviceFacts.TrustType(caseInsensitive: text) {
                trustType = found
            } else {
                problems.add(root.path("trustType"), "'\(text)' is not one of: \(DeviceFacts.TrustType.allCases.map(\.rawValue).joined(separator: ", ")).")
            }
        }
        func text(_ key: String) -> String? {
            guard let value = root.string(key, nonEmpty: false) else { return nil }
            if value.count > 256 { problems.add(root.path(key), "must be at most 256 characters.") }
            return value.isEmpty ? nil : value
        }
        var device = Device(
            id: id, deviceId: deviceId, displayName: displayName ?? "", trustType: trustType, operatingSystem: text("operatingSystem"),
            operatingSystemVersion: text("operatingSystemVersion"), registrationDateTime: existing?.registrationDateTime ?? now)
        // Compliance is the check-ins' (or an admin's explicit word): a write that does not name it keeps it.
        device.isCompliant = root.bool("isCompliant") ?? existing?.isCompliant ?? false
        device.isManaged = root.bool("isManaged") ?? existing?.isManaged ?? false
        device.accountEnabled = root.bool("accountEnabled") ?? true
        device.mdmAppId = text("mdmAppId")
        device.manufacturer = text("manufacturer")
        device.model = text("model")
        device.enrollmentProfileName = text("enrollmentProfileName")
        if let ownership = root.enumeration("deviceOwnership", allowed: ["Company", "Personal", "unknown"]) {
            device.deviceOwnership = ownership == "unknown" ? nil : ownership
        }
        if let profile = root.enumeration("profileType", allowed: ["RegisteredDevice", "SecureVM", "Printer", "Shared", "IoT"]) {
            device.profileType = profile
        }
        if let attributes = root.object("extensionAttributes") {
            let names = Set((1...15).map { "extensionAttribute\($0)" })
            attributes.rejectUnknownGraphMembers(allowed: names)
            for name in names.sorted() {
                guard let value = attributes.string(name, nonEmpty: false) else { continue }
                if value.count > 1024 { problems.add(attributes.path(name), "must be at most 1024 characters.") }
                if !value.isEmpty { device.extensionAttributes[name] = value }
            }
        }
        for (key, path) in [("physicalIds", \Device.physicalIds), ("systemLabels", \Device.systemLabels)] {
            let items = root.strings(key) ?? []
            if items.count > 100 { problems.add(root.path(key), "holds at most 100 values.") }
            device[keyPath: path] = items.prefix(100).map(\.value)
        }
        for (owner, pointer) in root.strings("registeredOwners") ?? [] {
            if let user = directory.user(identity: owner) {
                if !device.registeredOwners.contains(user.id) { device.registeredOwners.append(user.id) }
            } else {
                problems.add(pointer, "'\(owner)' names no user of this tenant.")
            }
        }
        if device.registeredOwners.count > 10 { problems.add(root.path("registeredOwners"), "names at most 10 users.") }
        let csr = root.string("csr")
        device.certificate = existing?.certificate
        device.lastSyncDateTime = existing?.lastSyncDateTime
        device.complianceFailures = existing?.complianceFailures
        // An admin's word on compliance holds until the next check-in, with no grace period running under it; a write that
        // leaves compliance as it was (a new name) leaves a running grace period as it was too.
        if let existing, device.isCompliant == existing.isCompliant {
            device.complianceGracePeriodExpirationDateTime = existing.complianceGracePeriodExpirationDateTime
        }
        try problems.check()
        return (device, csr)
    }

    /// As Graph and the admin API show a device: its members with `extensionAttributes` complete (unset ones null).
    public var presented: JSONValue {
        guard case .object(var object) = JSONValue(encoding: self) else { return .null }
        var attributes: [String: JSONValue] = [:]
        for n in 1...15 {
            let name = "extensionAttribute\(n)"
            attributes[name] = extensionAttributes[name].map(JSONValue.string) ?? .null
        }
        object["extensionAttributes"] = .object(attributes)
        return .object(object)
    }
}

extension Device: TenantDocument {
    public static let kind = DocumentKind.device
    public var documentId: String { id.rawValue }
    public static var list: WritableKeyPath<TenantContents, [Device]>? { \.devices }

    /// A device that stops being compliant — a failed check-in past its grace, a grace period that ran out (the sweep), an
    /// admin's word, disabled or deleted while compliant — raises CAEP `device-compliance-change` (and `session-revoked`)
    /// for each of its owners: resource servers end the tokens they hold. The refresh families granted on its proof end
    /// with the change (PROTOCOL §18), and so do they when its proof is void (deleted, disabled, re-keyed); browser
    /// sessions stay, since the page proves the device again. Back in compliance: the event says so.
    public static func effects(before: Device?, after: Device?, tenantId: TenantID, at: Date) -> ChangeEffects {
        // The stored marks, not compliance as of `at`: a grace period that ended is stored (a check-in, the sweep) and raises
        // the event then.
        let was = before.map { $0.accountEnabled && $0.isCompliant } ?? false
        let now = after.map { $0.accountEnabled && $0.isCompliant } ?? false
        guard let device = after ?? before else { return .none(tenantId: tenantId, at: at) }
        var effects = ChangeEffects.none(tenantId: tenantId, at: at)
        if was != now {
            effects.events = device.registeredOwners.map {
                CriticalEvent(.deviceComplianceChanged(deviceId: device.deviceId, compliant: now), tenantId: tenantId, userId: $0, at: at, initiator: .system)
            }
        }
        // The families granted on the device's proof end when it falls out of compliance, or when its proof is void (deleted,
        // disabled, given a new certificate): PROTOCOL §18, whoever's they are (a shared or joined device has several users).
        if let before {
            let proofVoid =
                after == nil || (before.accountEnabled && after?.accountEnabled == false)
                || after?.certificate?.thumbprint != before.certificate?.thumbprint
            if (was && !now) || proofVoid { effects.endsFamiliesOfDevices = [device.id] }
        }
        return effects
    }
}

extension Device: AdministeredDocument {
    /// An admin's write: a `csr` asks the tenant's issuing CA for the device's certificate (the answer carries it); the
    /// certificate of a device written without one, or with a request for the key it already holds, stays as it was.
    public static func read(_ body: JSONValue, in write: DocumentWrite) async throws -> Device {
        let tenant = write.tenant
        let existing = body["id"]?.stringValue.flatMap { tenant.device(id: ObjectID($0)) }
        var (device, csr) = try parse(body, existing: existing, directory: tenant.directory, generatedId: ObjectID.generate(), now: write.services.now)
        if existing == nil, tenant.contents.devices.count >= maximumPerTenant {
            throw ValidationError(problems: [ValidationProblem(pointer: "", message: "this tenant holds \(maximumPerTenant) devices already, the most it may.")]
            )
        }
        if let other = tenant.device(deviceId: device.deviceId), other.id != device.id {
            throw ValidationError(problems: [ValidationProblem(pointer: "/deviceId", message: "device \(other.id) has this device ID already.")])
        }
        if let csr {
            device.certificate = try write.services.deviceCertificate(
                csr: csr, tenant: tenant.tenant, objectId: device.id, deviceId: device.deviceId, current: existing?.certificate)
        }
        return device
    }

    public func presented(in tenant: TenantSnapshot) -> JSONValue { presented }
}

/// A device a sign-in proved (PROTOCOL §18): its object ID and the SHA-256 thumbprint of the certificate that proved it.
/// A code and a refresh family carry it; each later use finds the device as the directory has it then (still enabled,
/// still holding that certificate), and its compliance as of that moment.
public struct ProvenDevice: Sendable, Equatable, Codable {
    public var objectId: ObjectID
    public var thumbprint: String

    public init(objectId: ObjectID, thumbprint: String) {
        self.objectId = objectId
        self.thumbprint = thumbprint
    }

    /// The device a certificate of this device's proved, when it holds one.
    public init?(_ device: Device) {
        guard let certificate = device.certificate else { return nil }
        self.init(objectId: device.id, thumbprint: certificate.thumbprint)
    }

    /// As a store keeps it: two columns, both set or neither.
    public init?(objectId: String?, thumbprint: String?) {
        guard let objectId, let thumbprint else { return nil }
        self.init(objectId: ObjectID(objectId), thumbprint: thumbprint)
    }
}
