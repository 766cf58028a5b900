import Foundation

/// What conditional access knows of the device a sign-in came from (PROTOCOL §18): a registered device and its state, in
/// the members of Graph's `deviceInfo`. A sign-in without one (`SignInFacts.device == nil`) is from an unregistered
/// device: every property null, `compliantDevice` and `domainJoinedDevice` unmet.
public struct DeviceFacts: Sendable, Equatable {
    /// Graph's `device.trustType`: joined to the directory, joined to an on-premises domain (hybrid), or registered.
    public enum TrustType: String, Sendable, Codable, CaseIterable {
        case azureAd = "AzureAd"
        case serverAd = "ServerAd"
        case workplace = "Workplace"

        /// Any case; filter rules write `AzureAD`, `ServerAD`.
        public init?(caseInsensitive text: String) {
            guard let found = Self.allCases.first(where: { $0.rawValue.equalsIgnoringCase(text) }) else { return nil }
            self = found
        }
    }

    public let deviceId: String
    public let displayName: String?
    public let trustType: TrustType
    public let isCompliant: Bool
    public let isManaged: Bool
    public let operatingSystem: String?
    public let operatingSystemVersion: String?
    public let manufacturer: String?
    public let model: String?
    public let mdmAppId: String?
    public let profileType: String?
    public let enrollmentProfileName: String?
    /// Graph's `deviceOwnership` (`Company`, `Personal`); `ownership` in `deviceInfo`.
    public let deviceOwnership: String?
    /// `extensionAttribute1` … `extensionAttribute15` by number.
    public let extensionAttributes: [Int: String]
    public let physicalIds: [String]
    public let systemLabels: [String]
    /// The properties as filter rules compare them, folded once.
    public let filterSubject: DeviceFilterRule.Subject

    public init(
        deviceId: String, displayName: String? = nil, trustType: TrustType, isCompliant: Bool, isManaged: Bool, operatingSystem: String? = nil,
        operatingSystemVersion: String? = nil, manufacturer: String? = nil, model: String? = nil, mdmAppId: String? = nil, profileType: String? = nil,
        enrollmentProfileName: String? = nil, deviceOwnership: String? = nil, extensionAttributes: [Int: String] = [:], physicalIds: [String] = [],
        systemLabels: [String] = []
    ) {
        self.deviceId = deviceId
        self.displayName = displayName
        self.trustType = trustType
        self.isCompliant = isCompliant
        self.isManaged = isManaged
        self.operatingSystem = operatingSystem
        self.operatingSystemVersion = operatingSystemVersion
        self.manufacturer = manufacturer
        self.model = model
        self.mdmAppId = mdmAppId
        self.profileType = profileType
        self.enrollmentProfileName = enrollmentProfileName
        self.deviceOwnership = deviceOwnership
        self.extensionAttributes = extensionAttributes.filter { (1...15).contains($0.key) }
        self.physicalIds = physicalIds
        self.systemLabels = systemLabels
        var strings: [DeviceFilterRule.Property: [String]] = [
            .deviceId: [deviceId], .trustType: [trustType.rawValue], .physicalIds: physicalIds, .systemLabels: systemLabels,
        ]
        let optional: [(DeviceFilterRule.Property, String?)] = [
            (.displayName, displayName), (.operatingSystem, operatingSystem), (.operatingSystemVersion, operatingSystemVersion),
            (.manufacturer, manufacturer), (.model, model), (.mdmAppId, mdmAppId), (.profileType, profileType),
            (.enrollmentProfileName, enrollmentProfileName), (.deviceOwnership, deviceOwnership),
        ]
        for (property, value) in optional { if let value { strings[property] = [value] } }
        for (n, value) in self.extensionAttributes { strings[.extensionAttribute(n)] = [value] }
        filterSubject = DeviceFilterRule.Subject(
            strings: strings, isCompliant: isCompliant, managementCounts: isCompliant || isManaged || trustType == .serverAd)
    }

    public static func == (a: DeviceFacts, b: DeviceFacts) -> Bool {
        a.deviceId == b.deviceId && a.displayName == b.displayName && a.trustType == b.trustType && a.isCompliant == b.isCompliant
            && a.isManaged == b.isManaged && a.operatingSystem == b.operatingSystem && a.operatingSystemVersion == b.operatingSystemVersion
            && a.manufacturer == b.manufacturer && a.model == b.model && a.mdmAppId == b.mdmAppId && a.profileType == b.profileType
            && a.enrollmentProfileName == b.enrollmentProfileName && a.deviceOwnership == b.deviceOwnership
            && a.extensionAttributes == b.extensionAttributes && a.physicalIds == b.physicalIds && a.systemLabels == b.systemLabels
    }
}

/// Graph's `conditionalAccessDevices` as this server enforces it: the filter for devices (PROTOCOL §18).
public struct DeviceFilter: Codable, Sendable, Equatable {
    public enum Mode: String, Codable, Sendable, CaseIterable {
        case include, exclude
    }

    public var mode: Mode
    /// The rule as the admin wrote it (shown back unchanged), and parsed.
    public var text: String
    public let rule: DeviceFilterRule

    public init(mode: Mode, rule: DeviceFilterRule, text: String? = nil) {
        self.mode = mode
        self.rule = rule
        self.text = text ?? rule.description
    }

    /// Whether a sign-in from `device` (`nil`: unregistered) is in the policy's scope.
    public func admits(_ device: DeviceFacts?) -> Bool { rule.matches(device?.filterSubject) == (mode == .include) }

    enum CodingKeys: String, CodingKey { case mode, rule }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        mode = try container.decode(Mode.self, forKey: .mode)
        text = try container.decode(String.self, forKey: .rule)
        do {
            rule = try DeviceFilterRule.parse(text)
        } catch {
            throw DecodingError.dataCorruptedError(forKey: .rule, in: container, debugDescription: error.description)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(mode, forKey: .mode)
        try container.encode(text, forKey: .rule)
    }

    public static func == (a: DeviceFilter, b: DeviceFilter) -> Bool { a.mode == b.mode && a.rule == b.rule }
}

extension DeviceFacts {
    /// The members of Graph's `deviceInfo` (what-if's `signInConditions.deviceInfo`), and `isManaged`.
    public static let infoMembers: Set<String> = Set(
        [
            "deviceId", "displayName", "enrollmentProfileName", "isCompliant", "isManaged", "manufacturer", "mdmAppId", "model", "operatingSystem",
            "operatingSystemVersion", "ownership", "physicalIds", "profileType", "systemLabels", "trustType",
        ] + (1...15).map { "extensionAttribute\($0)" })

    /// A device described in Graph's `deviceInfo` shape (what-if): `nil` when it describes none (absent, null or `{}`:
    /// an unregistered device); otherwise a registered one, `Workplace` unless `trustType` says otherwise. Problems at
    /// their pointers.
    public static func read(info reader: JSONObjectReader) -> DeviceFacts? {
        reader.rejectUnknownGraphMembers(allowed: infoMembers)
        guard reader.object.keys.contains(where: { !JSONObjectReader.isGraphMarkup($0) && reader.object[$0] != .null }) else { return nil }
        var trustType = TrustType.workplace
        if let text = reader.string("trustType") {
            if let found = TrustType(caseInsensitive: text) {
                trustType = found
            } else {
                reader.problems.add(reader.path("trustType"), "'\(text)' is not one of: \(TrustType.allCases.map(\.rawValue).joined(separator: ", ")).")
            }
        }
        var attributes: [Int: String] = [:]
        for n in 1...15 { if let value = reader.string("extensionAttribute\(n)", nonEmpty: false) { attributes[n] = value } }
        return DeviceFacts(
            deviceId: reader.string("deviceId") ?? "00000000-0000-0000-0000-000000000000", displayName: reader.string("displayName"),
            trustType: trustType, isCompliant: reader.bool("isCompliant") ?? false, isManaged: reader.bool("isManaged") ?? false,
            operatingSystem: reader.string("operatingSystem"), operatingSystemVersion: reader.string("operatingSystemVersion"),
            manufacturer: reader.string("manufacturer"), model: reader.string("model"), mdmAppId: reader.string("mdmAppId"),
            profileType: reader.string("profileType"), enrollmentProfileName: reader.string("enrollmentProfileName"),
            deviceOwnership: reader.string("ownership"), extensionAttributes: attributes,
            physicalIds: (reader.strings("physicalIds") ?? []).map(\.value), systemLabels: (reader.strings("systemLabels") ?? []).map(\.value))
    }
}
