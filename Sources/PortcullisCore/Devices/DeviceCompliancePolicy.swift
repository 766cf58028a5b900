public import Foundation

/// A device compliance policy (PROTOCOL §18), in the shape of Intune's Graph types — `iosCompliancePolicy`,
/// `androidCompliancePolicy`, `macOSCompliancePolicy`, `windows10CompliancePolicy` — the subset this server evaluates:
/// OS version bounds, a passcode, storage encryption, jailbroken or rooted devices blocked, and the grace period before a
/// device that fails is marked not compliant. It applies to every device of its platform in the tenant.
public struct DeviceCompliancePolicy: Codable, Sendable, Equatable {
    public enum Platform: String, Codable, Sendable, CaseIterable {
        case iOS = "#microsoft.graph.iosCompliancePolicy"
        case android = "#microsoft.graph.androidCompliancePolicy"
        case macOS = "#microsoft.graph.macOSCompliancePolicy"
        case windows = "#microsoft.graph.windows10CompliancePolicy"

        /// The platform of a device by its `operatingSystem` (`iOS`, `iPadOS`, `Android`, `macOS`, `Windows`…).
        public init?(operatingSystem: String?) {
            guard let os = operatingSystem else { return nil }
            if os.equalsIgnoringCase("iOS") || os.equalsIgnoringCase("iPadOS") {
                self = .iOS
            } else if os.equalsIgnoringCase("Android") || os.equalsIgnoringCase("AndroidEnterprise") || os.equalsIgnoringCase("AndroidForWork") {
                self = .android
            } else if os.equalsIgnoringCase("macOS") || os.equalsIgnoringCase("MacMDM") || os.equalsIgnoringCase("Mac OS X") {
                self = .macOS
            } else if os.equalsIgnoringCase("Windows") {
                self = .windows
            } else {
                return nil
            }
        }

        /// Graph's name of the passcode setting on this platform.
        var passcodeMember: String { self == .iOS ? "passcodeRequired" : "passwordRequired" }
    }

    public var id: PolicyID
    public var displayName: String
    public var description: String?
    public var platform: Platform
    public var osMinimumVersion: String?
    public var osMaximumVersion: String?
    public var passcodeRequired: Bool
    /// Not on iOS, whose storage is always encrypted.
    public var storageRequireEncryption: Bool
    /// iOS and Android only.
    public var securityBlockJailbrokenDevices: Bool
    /// Hours a device that fails stays compliant (Graph's `scheduledActionsForRule` block action's `gracePeriodHours`).
    public var gracePeriodHours: Int

    /// A tenant holds at most this many.
    public static let maximumPerTenant = 100
    /// At most a year of grace.
    public static let maximumGraceHours = 8760

    /// What a device reports at a check-in (its signed statement, PROTOCOL §18).
    public struct Report: Sendable, Equatable {
        public var operatingSystem: String?
        public var operatingSystemVersion: String?
        public var passcodeSet: Bool
        public var storageEncrypted: Bool
        public var jailbroken: Bool

        public init(operatingSystem: String?, operatingSystemVersion: String?, passcodeSet: Bool, storageEncrypted: Bool, jailbroken: Bool) {
            self.operatingSystem = operatingSystem
            self.operatingSystemVersion = operatingSystemVersion
            self.passcodeSet = passcodeSet
            self.storageEncrypted = storageEncrypted
            self.jailbroken = jailbroken
        }
    }

    /// The settings a report fails, each in words (empty: compliant with this policy).
    public func failures(_ report: Report) -> [String] {
        var found: [String] = []
        let version = report.operatingSystemVersion ?? ""
        if let minimum = osMinimumVersion, !SoftwareVersion.isValid(version) || SoftwareVersion.compare(version, minimum) < 0 {
            found.append("\(displayName): osMinimumVersion \(minimum), the device runs \(version.isEmpty ? "an unknown version" : version)")
        }
        if let maximum = osMaximumVersion, !SoftwareVersion.isValid(version) || SoftwareVersion.compare(version, maximum) > 0 {
            found.append("\(displayName): osMaximumVersion \(maximum), the device runs \(version.isEmpty ? "an unknown version" : version)")
        }
        if passcodeRequired && !report.passcodeSet { found.append("\(displayName): \(platform.passcodeMember), no passcode is set") }
        if storageRequireEncryption && !report.storageEncrypted { found.append("\(displayName): storageRequireEncryption, storage is not encrypted") }
        if securityBlockJailbrokenDevices && report.jailbroken {
            found.append("\(displayName): securityBlockJailbrokenDevices, the device is jailbroken or rooted")
        }
        return found
    }

    /// Reads a policy in Graph's shape, every problem at its JSON Pointer.
    public static func parse(_ value: JSONValue, generatedId: @autoclosure () -> PolicyID) throws(ValidationError) -> DeviceCompliancePolicy {
        let problems = ProblemCollector()
        guard let root = JSONObjectReader(value, at: "", problems: problems) else {
            throw ValidationError(problems: [ValidationProblem(pointer: "", message: "must be a JSON object.")])
        }
        let type = value["@odata.type"]?.stringValue ?? ""
        guard let platform = Platform(rawValue: type) else {
            throw ValidationError(problems: [
                ValidationProblem(pointer: "/@odata.type", message: "must be one of: \(Platform.allCases.map(\.rawValue).joined(separator: ", ")).")
            ])
        }
        var allowed: Set<String> = [
            "id", "displayName", "description", "osMinimumVersion", "osMaximumVersion", platform.passcodeMember, "scheduledActionsForRule",
        ]
        if platform != .iOS { allowed.insert("storageRequireEncryption") }
        if platform == .iOS || platform == .android { allowed.insert("securityBlockJailbrokenDevices") }
        root.rejectUnknownGraphMembers(allowed: allowed, readOnly: ["createdDateTime", "lastModifiedDateTime", "version", "roleScopeTagIds"])
        let given: PolicyID? = root.has("id") ? root.guid("id") : nil
        let displayName = root.string("displayName", required: true)
        if let displayName, displayName.count > 256 { problems.add(root.path("displayName"), "must be at most 256 characters.") }
        let description = root.string("description", nonEmpty: false)
        if let description, description.count > 1024 { problems.add(root.path("description"), "must be at most 1024 characters.") }
        var bounds: [String: String] = [:]
        for key in ["osMinimumVersion", "osMaximumVersion"] {
            guard let version = root.string(key) else { continue }
            if SoftwareVersion.isValid(version) { bounds[key] = version } else { problems.add(root.path(key), "must be a dotted version such as 17.0.") }
        }
        if let low = bounds["osMinimumVersion"], let high = bounds["osMaximumVersion"], SoftwareVersion.compare(low, high) > 0 {
            problems.add(root.path("osMaximumVersion"), "is below osMinimumVersion \(low).")
        }
        var grace = 0
        if let actions = root.array("scheduledActionsForRule") {
            for (action, pointer) in actions.prefix(10) {
                guard let rule = JSONObjectReader(action, at: pointer, problems: problems) else { continue }
                rule.rejectUnknownGraphMembers(allowed: ["ruleName", "scheduledActionConfigurations"], readOnly: ["id"])
                for (configuration, itemPointer) in rule.array("scheduledActionConfigurations")?.prefix(10) ?? [] {
                    guard let item = JSONObjectReader(configuration, at: itemPointer, problems: problems) else { continue }
                    item.rejectUnknownGraphMembers(
                        allowed: ["actionType", "gracePeriodHours"], readOnly: ["id", "notificationTemplateId", "notificationMessageCCList"])
                    let type = item.enumeration("actionType", allowed: ["block"], required: true)
                    if type == "block", let hours = item.object["gracePeriodHours"] {
                        if case .number(let number) = hours, number >= 0, number <= Double(maximumGraceHours), number == number.rounded() {
                            grace = max(grace, Int(number))
                        } else {
                            problems.add(item.path("gracePeriodHours"), "must be a whole number of hours from 0 to \(maximumGraceHours).")
                        }
                    }
                }
            }
        }
        try problems.check()
        return DeviceCompliancePolicy(
            id: given ?? generatedId(), displayName: displayName ?? "", description: description, platform: platform,
            osMinimumVersion: bounds["osMinimumVersion"], osMaximumVersion: bounds["osMaximumVersion"],
            passcodeRequired: root.bool(platform.passcodeMember) ?? false, storageRequireEncryption: root.bool("storageRequireEncryption") ?? false,
            securityBlockJailbrokenDevices: root.bool("securityBlockJailbrokenDevices") ?? false, gracePeriodHours: grace)
    }

    /// As Graph shows it: its type, its platform's member names, the grace period as a block action.
    public var presented: JSONValue {
        var object: [String: JSONValue] = [
            "@odata.type": .string(platform.rawValue), "id": .string(id.rawValue), "displayName": .string(displayName),
            "description": description.map(JSONValue.string) ?? .null, "osMinimumVersion": osMinimumVersion.map(JSONValue.string) ?? .null,
            "osMaximumVersion": osMaximumVersion.map(JSONValue.string) ?? .null, platform.passcodeMember: .bool(passcodeRequired),
            "scheduledActionsForRule": [
                [
                    "ruleName": "PasswordRequired",
                    "scheduledActionConfigurations": [["actionType": "block", "gracePeriodHours": .number(Double(gracePeriodHours))]],
                ]
            ],
        ]
        if platform != .iOS { object["storageRequireEncryption"] = .bool(storageRequireEncryption) }
        if platform == .iOS || platform == .android { object["securityBlockJailbrokenDevices"] = .bool(securityBlockJailbrokenDevices) }
        return .object(object)
    }

    enum CodingKeys: String, CodingKey {
        case id, displayName, description, platform, osMinimumVersion, osMaximumVersion, passcodeRequired, storageRequireEncryption
        case securityBlockJailbrokenDevices, gracePeriodHours
    }
}

extension DeviceCompliancePolicy: TenantDocument {
    public static let kind = DocumentKind.deviceCompliancePolicy
    public var documentId: String { id.rawValue }
    public static var list: WritableKeyPath<TenantContents, [DeviceCompliancePolicy]>? { \.deviceCompliancePolicies }
}

extension DeviceCompliancePolicy: AdministeredDocument {
    public static func read(_ body: JSONValue, in write: DocumentWrite) async throws -> DeviceCompliancePolicy {
        let policy = try parse(body, generatedId: PolicyID.generate())
        let tenant = write.tenant
        if !tenant.contents.deviceCompliancePolicies.contains(where: { $0.id == policy.id }), tenant.contents.deviceCompliancePolicies.count >= maximumPerTenant
        {
            throw ValidationError(problems: [ValidationProblem(pointer: "", message: "this tenant holds \(maximumPerTenant) compliance policies already.")])
        }
        return policy
    }

    public func presented(in tenant: TenantSnapshot) -> JSONValue { presented }
}

extension Device {
    /// A device's compliance after a check-in (PROTOCOL §18): it is managed from now on; it is compliant when every policy
    /// of its platform passes (a platform without a policy: compliant, as Intune marks devices no policy is assigned to
    /// by default). A device that fails stays compliant for the longest grace period of the policies it fails, counted
    /// from its first failing check-in; `complianceGracePeriodExpirationDateTime` says until when.
    public func checkedIn(_ report: DeviceCompliancePolicy.Report, policies: [DeviceCompliancePolicy], now: Date) -> Device {
        var device = self
        device.isManaged = true
        device.lastSyncDateTime = now
        if let os = report.operatingSystem, !os.isEmpty { device.operatingSystem = String(os.prefix(256)) }
        if let version = report.operatingSystemVersion, !version.isEmpty { device.operatingSystemVersion = String(version.prefix(256)) }
        let platform = DeviceCompliancePolicy.Platform(operatingSystem: device.operatingSystem)
        let applying = policies.filter { $0.platform == platform }
        let failing = applying.filter { !$0.failures(report).isEmpty }
        device.complianceFailures = applying.flatMap { $0.failures(report) }
        if failing.isEmpty {
            device.isCompliant = true
            device.complianceGracePeriodExpirationDateTime = nil
            return device
        }
        let grace = TimeInterval(failing.map(\.gracePeriodHours).max() ?? 0) * 3600
        // The grace counts from the first failure after the device was last compliant (a later failure does not extend it).
        let expires = complianceGracePeriodExpirationDateTime ?? (isCompliant ? now.addingTimeInterval(grace) : now)
        device.complianceGracePeriodExpirationDateTime = expires
        device.isCompliant = now < expires
        return device
    }

    /// Whether the device counts as compliant at `now`: marked compliant and, when it is in a grace period, before its end.
    public func isCompliant(at now: Date) -> Bool {
        guard isCompliant else { return false }
        return complianceGracePeriodExpirationDateTime.map { now < $0 } ?? true
    }
}
