import Foundation

/// The settings an app protection policy holds and the client SDK enforces (PROTOCOL §4).
/// Every member is optional in a policy document; the merged policy fills in the defaults.
public struct AppProtectionSettings: Codable, Sendable, Equatable {
    public enum SaveLocation: String, Codable, Sendable, CaseIterable {
        case oneDriveForBusiness, sharePoint, localDrive, cameraRoll, accountDocument, other
    }

    public enum OpenLocation: String, Codable, Sendable, CaseIterable {
        case oneDriveForBusiness, sharePoint, camera, photos, localStorage, accountDocument, other
    }

    /// Which apps org data may go to / come from; ordered from most to least restrictive.
    public enum TransferLevel: String, Codable, Sendable, CaseIterable {
        case none, policyManagedApps, allApps
        public var restrictiveness: Int {
            switch self {
            case .none: 2
            case .policyManagedApps: 1
            case .allApps: 0
            }
        }

        /// A level this version does not know (a newer server) reads as the most restrictive one, `none`.
        public init(from decoder: any Decoder) throws {
            self = TransferLevel(rawValue: try decoder.singleValueContainer().decode(String.self)) ?? .none
        }

        /// Whether data may go to (or come from) an app at this level: any app, a policy-managed one, or none.
        public func allows(peerIsPolicyManaged: Bool) -> Bool {
            switch self {
            case .allApps: true
            case .policyManagedApps: peerIsPolicyManaged
            case .none: false
            }
        }
    }

    public enum NotificationPolicy: String, Codable, Sendable, CaseIterable {
        case allow, blockOrgData, block
        public var restrictiveness: Int {
            switch self {
            case .allow: 0
            case .blockOrgData: 1
            case .block: 2
            }
        }

        /// A policy this version does not know (a newer server) reads as the most restrictive one, `block`.
        public init(from decoder: any Decoder) throws {
            self = NotificationPolicy(rawValue: try decoder.singleValueContainer().decode(String.self)) ?? .block
        }
    }

    public struct LocationRule<Location: Codable & Sendable & Equatable & Hashable>: Codable, Sendable, Equatable {
        /// When `true`, only `allowedLocations` are permitted; when `false`, every location is.
        public var blocked: Bool
        public var allowedLocations: [Location]

        public init(blocked: Bool, allowedLocations: [Location]) {
            self.blocked = blocked
            self.allowedLocations = allowedLocations
        }

        public func allows(_ location: Location) -> Bool { !blocked || allowedLocations.contains(location) }

        enum CodingKeys: String, CodingKey { case blocked, allowedLocations }

        /// A location this version does not know (a newer server added one) is left out of `allowedLocations`
        /// instead of failing the whole policy: the app simply never offers it, the restrictive reading.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            blocked = try container.decode(Bool.self, forKey: .blocked)
            allowedLocations = try container.decodeIfPresent([Tolerant<Location>].self, forKey: .allowedLocations)?.compactMap(\.value) ?? []
        }
    }

    /// Exempting a location that belongs to an account (OneDrive for Business, SharePoint, an account document) exempts
    /// it only for the data's own account (seed 003: "OneDrive for Business of the same managed account"); the other
    /// locations are nobody's.
    public protocol DataLocation: Codable, Sendable, Hashable {
        var belongsToAnAccount: Bool { get }
    }

    /// One element of a list that may hold values this version does not know: `nil` for those.
    struct Tolerant<Value: Decodable>: Decodable {
        let value: Value?
        init(from decoder: any Decoder) throws { value = try? Value(from: decoder) }
    }

    public struct DataTransfer: Codable, Sendable, Equatable {
        public var sendOrgData: TransferLevel
        public var receiveData: TransferLevel

        public init(sendOrgData: TransferLevel, receiveData: TransferLevel) {
            self.sendOrgData = sendOrgData
            self.receiveData = receiveData
        }
    }

    public var pinRequired: Bool?
    public var minimumOsVersion: String?
    public var minimumAppVersion: String?
    public var blockJailbrokenDevices: Bool?
    public var fileEncryptionRequired: Bool?
    public var saveAs: LocationRule<SaveLocation>?
    public var openFrom: LocationRule<OpenLocation>?
    public var dataTransfer: DataTransfer?
    public var printingBlocked: Bool?
    public var screenCaptureBlocked: Bool?
    public var notificationPolicy: NotificationPolicy?
    public var recheckIntervalMinutes: Int?
    public var offlineGracePeriodMinutes: Int?

    public init() {}

    public static let defaultRecheckIntervalMinutes = 30
    public static let defaultOfflineGracePeriodMinutes = 720
}

extension AppProtectionSettings.SaveLocation: AppProtectionSettings.DataLocation {
    public var belongsToAnAccount: Bool { self == .oneDriveForBusiness || self == .sharePoint || self == .accountDocument }
}

extension AppProtectionSettings.OpenLocation: AppProtectionSettings.DataLocation {
    public var belongsToAnAccount: Bool { self == .oneDriveForBusiness || self == .sharePoint || self == .accountDocument }
}

extension AppProtectionSettings.LocationRule where Location: AppProtectionSettings.DataLocation {
    /// `allows(_:)` knowing whose the location is: a blocking rule's exemption of an account's location holds only when
    /// that account is the data's own (`ownedByTheDataAccount`).
    public func allows(_ location: Location, ownedByTheDataAccount: Bool) -> Bool {
        allows(location) && (!blocked || !location.belongsToAnAccount || ownedByTheDataAccount)
    }
}
