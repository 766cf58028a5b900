import Foundation

/// A conditional-access policy in the shape of Microsoft Graph's `conditionalAccessPolicy` (the members
/// Portcullis enforces). Built only through `ConditionalAccessPolicy.parse`, which validates strictly.
public struct ConditionalAccessPolicy: Codable, Sendable, Equatable {
    public enum State: String, Codable, Sendable, CaseIterable {
        case enabled, disabled
        case reportOnly = "enabledForReportingButNotEnforced"
    }

    public enum GrantOperator: String, Codable, Sendable, CaseIterable {
        case and = "AND"
        case or = "OR"
    }

    /// The grant controls this server can enforce: the built-in controls, and `authenticationStrength` (which a
    /// policy names in its own member, `grantControls.authenticationStrength`, never in `builtInControls`).
    public enum Control: String, Codable, Sendable, CaseIterable, Comparable {
        case block, mfa, authenticationStrength, approvedApplication, compliantApplication
        /// Terms of use (`grantControls.termsOfUse`, PROTOCOL §17): every named agreement accepted and current.
        case termsOfUse
        /// A proven device that is compliant; a proven device joined to an on-premises domain (hybrid, `ServerAd`). PROTOCOL §18.
        case compliantDevice, domainJoinedDevice
        /// A secure password change (PROTOCOL §19): only in a policy for user risk; never met by a sign-in as such — the
        /// page asks for a new password after the other controls, and the change remediates the risk the policy is for.
        case passwordChange
        /// Secure remediation (PROTOCOL §19): a multi-factor sign-in made after the user's risk was raised; it remediates it.
        case riskRemediation

        /// The values `builtInControls` takes.
        public static let builtIn: [Control] = [
            .block, .mfa, .approvedApplication, .compliantApplication, .compliantDevice, .domainJoinedDevice, .passwordChange, .riskRemediation,
        ]

        /// The controls that remediate user risk, and so only mean something in a policy for it (`userRiskLevels`).
        public static let remediation: Set<Control> = [.passwordChange, .riskRemediation]

        /// The controls only a device meets.
        public static let device: Set<Control> = [.compliantDevice, .domainJoinedDevice]

        /// Unmet controls are reported in this order (PROTOCOL §3).
        var reportOrder: Int {
            switch self {
            case .block: 0
            case .mfa: 1
            case .authenticationStrength: 2
            case .riskRemediation: 3
            case .termsOfUse: 4
            case .approvedApplication: 5
            case .compliantApplication: 6
            // After the app's controls: a client that can enroll its app (53005) remediates, a device cannot on its own.
            case .compliantDevice: 7
            case .domainJoinedDevice: 8
            // Last, as Entra asks for it: after every other control the page asks for the new password.
            case .passwordChange: 9
            }
        }
        public static func < (a: Control, b: Control) -> Bool { a.reportOrder < b.reportOrder }
    }

    public struct Users: Codable, Sendable, Equatable {
        /// `All`, `None`, user IDs.
        public var includeUsers: UserSelection
        /// User IDs, and `GuestsOrExternalUsers`.
        public var excludeUsers: UserSelection
        public var includeGroups: [ObjectID]
        public var excludeGroups: [ObjectID]
        /// Directory roles (Entra's template IDs, PROTOCOL §17): the users holding them.
        public var includeRoles: [RoleID]
        public var excludeRoles: [RoleID]
        /// Graph's `conditionalAccessGuestsOrExternalUsers` (PROTOCOL §17).
        public var includeGuestsOrExternalUsers: GuestsOrExternalUsers?
        public var excludeGuestsOrExternalUsers: GuestsOrExternalUsers?

        public init(
            includeUsers: UserSelection, excludeUsers: UserSelection, includeGroups: [ObjectID], excludeGroups: [ObjectID], includeRoles: [RoleID] = [],
            excludeRoles: [RoleID] = [], includeGuestsOrExternalUsers: GuestsOrExternalUsers? = nil, excludeGuestsOrExternalUsers: GuestsOrExternalUsers? = nil
        ) {
            self.includeGuestsOrExternalUsers = includeGuestsOrExternalUsers
            self.excludeGuestsOrExternalUsers = excludeGuestsOrExternalUsers
            self.includeUsers = includeUsers
            self.excludeUsers = excludeUsers
            self.includeGroups = includeGroups
            self.excludeGroups = excludeGroups
            self.includeRoles = includeRoles
            self.excludeRoles = excludeRoles
        }

        enum CodingKeys: String, CodingKey {
            case includeUsers, excludeUsers, includeGroups, excludeGroups, includeRoles, excludeRoles, includeGuestsOrExternalUsers
            case excludeGuestsOrExternalUsers
        }

        /// Policies stored before roles have none.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            includeUsers = try container.decode(UserSelection.self, forKey: .includeUsers)
            excludeUsers = try container.decode(UserSelection.self, forKey: .excludeUsers)
            includeGroups = try container.decode([ObjectID].self, forKey: .includeGroups)
            excludeGroups = try container.decode([ObjectID].self, forKey: .excludeGroups)
            includeRoles = try container.decodeIfPresent([RoleID].self, forKey: .includeRoles) ?? []
            excludeRoles = try container.decodeIfPresent([RoleID].self, forKey: .excludeRoles) ?? []
            includeGuestsOrExternalUsers = try container.decodeIfPresent(GuestsOrExternalUsers.self, forKey: .includeGuestsOrExternalUsers)
            excludeGuestsOrExternalUsers = try container.decodeIfPresent(GuestsOrExternalUsers.self, forKey: .excludeGuestsOrExternalUsers)
        }

        /// Whether a user of this guest type (`nil`: a member) from `homeTenant` is among the guests these conditions name,
        /// by the keyword or the guest conditions; `include` chooses which side.
        public func names(guest type: GuestOrExternalUserType?, homeTenant: TenantID?, include: Bool) -> Bool {
            guard let type else { return false }
            if (include ? includeUsers : excludeUsers).contains(.guestsOrExternalUsers) { return true }
            return (include ? includeGuestsOrExternalUsers : excludeGuestsOrExternalUsers)?.contains(type, homeTenant: homeTenant) ?? false
        }
    }

    public struct Applications: Codable, Sendable, Equatable {
        /// `All`, `None`, application IDs.
        public var includeApplications: ApplicationSelection
        /// Application IDs, and the groups `Office365` and `MicrosoftAdminPortals`.
        public var excludeApplications: ApplicationSelection
        /// User actions instead of applications (PROTOCOL §12.3): `urn:user:registersecurityinfo`. A policy targets
        /// applications or user actions, never both.
        public var includeUserActions: [String]?
        /// Authentication contexts instead of applications (PROTOCOL §13): the policy applies to a sign-in that asks for
        /// one of them (`acrs`), on top of the resource's policies.
        public var includeAuthenticationContextClassReferences: [String]?

        public init(
            includeApplications: ApplicationSelection, excludeApplications: ApplicationSelection, includeUserActions: [String]? = nil,
            includeAuthenticationContextClassReferences: [String]? = nil
        ) {
            self.includeApplications = includeApplications
            self.excludeApplications = excludeApplications
            self.includeUserActions = includeUserActions
            self.includeAuthenticationContextClassReferences = includeAuthenticationContextClassReferences
        }
    }

    /// The user actions a policy can target.
    public enum UserAction {
        /// Registering a sign-in method (a passkey, a TOTP authenticator) on the sign-in page or Security info.
        public static let registerSecurityInfo = "urn:user:registersecurityinfo"
        /// Registering a device (PROTOCOL §18): a token for the device registration service (`api://portcullis-devices`).
        public static let registerDevice = "urn:user:registerdevice"
        public static let all: Set<String> = [registerSecurityInfo, registerDevice]
    }

    /// Workload identities (app-only sign-ins): client app IDs or `ServicePrincipalsInMyTenant`.
    public struct ClientApplications: Codable, Sendable, Equatable {
        public var includeServicePrincipals: ApplicationSelection
        public var excludeServicePrincipals: [AppID]
    }

    public struct Platforms: Codable, Sendable, Equatable {
        public var includePlatforms: AllOr<DevicePlatform>
        public var excludePlatforms: Set<DevicePlatform>

        public init(includePlatforms: AllOr<DevicePlatform>, excludePlatforms: Set<DevicePlatform>) {
            self.includePlatforms = includePlatforms
            self.excludePlatforms = excludePlatforms
        }

        enum CodingKeys: String, CodingKey { case includePlatforms, excludePlatforms }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            includePlatforms = try container.decode(AllOr<DevicePlatform>.self, forKey: .includePlatforms)
            excludePlatforms = try container.decode(Set<DevicePlatform>.self, forKey: .excludePlatforms)
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(includePlatforms, forKey: .includePlatforms)
            try container.encode(DevicePlatform.allCases.filter(excludePlatforms.contains), forKey: .excludePlatforms)
        }
    }

    public struct Locations: Codable, Sendable, Equatable {
        /// `All`, `AllTrusted`, named location IDs.
        public var includeLocations: LocationSelection
        /// `AllTrusted`, named location IDs.
        public var excludeLocations: LocationSelection
    }

    public struct Conditions: Codable, Sendable, Equatable {
        public var users: Users?
        public var applications: Applications
        public var clientApplications: ClientApplications?
        public var clientAppTypes: AllOr<SignInFacts.ClientAppType>
        public var platforms: Platforms?
        public var locations: Locations?
        /// How the sign-in was transferred (PROTOCOL §13): a policy with it applies only to those sign-ins.
        public var authenticationFlows: AuthenticationFlows?
        /// The filter for devices (PROTOCOL §18): a policy with it applies only to the devices it admits.
        public var devices: Devices?
        /// Risk (PROTOCOL §19): a policy with a list applies only to sign-ins whose risk of that kind is one of its levels.
        public var signInRiskLevels: [RiskLevel]?
        public var userRiskLevels: [RiskLevel]?
        public var servicePrincipalRiskLevels: [RiskLevel]?
        public var insiderRiskLevels: InsiderRiskLevels?
    }

    /// Graph's `insiderRiskLevels`: one comma-separated string of `conditionalAccessInsiderRiskLevels` (a flags enumeration).
    public struct InsiderRiskLevels: Codable, Sendable, Equatable {
        public var levels: Set<InsiderRiskLevel>

        public init(levels: Set<InsiderRiskLevel>) { self.levels = levels }

        public init(from decoder: any Decoder) throws {
            levels = InsiderRiskLevel.set(from: try decoder.singleValueContainer().decode(String.self))
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(InsiderRiskLevel.text(of: levels))
        }
    }

    /// Graph's `conditionalAccessDevices`: the filter for devices.
    public struct Devices: Codable, Sendable, Equatable {
        public var deviceFilter: DeviceFilter?

        public init(deviceFilter: DeviceFilter?) { self.deviceFilter = deviceFilter }
    }

    /// Graph's `conditionalAccessAuthenticationFlows`: `transferMethods` is one string of comma-separated values
    /// (a Graph flags enumeration), kept in that shape on the wire.
    public struct AuthenticationFlows: Codable, Sendable, Equatable {
        public var transferMethods: Set<TransferMethod>

        public init(transferMethods: Set<TransferMethod>) { self.transferMethods = transferMethods }

        enum CodingKeys: String, CodingKey { case transferMethods }

        public init(from decoder: any Decoder) throws {
            let text = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .transferMethods)
            transferMethods = Set(text.split(separator: ",").compactMap { TransferMethod(rawValue: String($0.filter { $0 != " " })) })
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(TransferMethod.allCases.filter(transferMethods.contains).map(\.rawValue).joined(separator: ","), forKey: .transferMethods)
        }
    }
    /// Graph's `authenticationStrength` member of grant controls, as stored: the strength's ID (reads show it expanded).
    public struct StrengthReference: Codable, Sendable, Equatable {
        public var id: PolicyID
    }

    public struct GrantControls: Codable, Sendable, Equatable {
        public var `operator`: GrantOperator
        public var builtInControls: [Control]
        public var authenticationStrength: StrengthReference?
        /// Graph's `termsOfUse`: the IDs of agreements the user must have accepted (`nil` or empty: none).
        public var termsOfUse: [PolicyID]?

        /// Every control the policy demands: the built-in ones, then the strength, then the terms of use.
        public var controls: [Control] {
            builtInControls + (authenticationStrength == nil ? [] : [.authenticationStrength]) + (termsOfUse?.isEmpty == false ? [.termsOfUse] : [])
        }
    }

    public var id: PolicyID
    public var displayName: String
    public var state: State
    public var conditions: Conditions
    /// No controls at all when the policy only carries session controls (Graph's `grantControls: null`).
    public var grantControls: GrantControls
    /// PROTOCOL §13; `nil` (absent or Graph's `null`) in most policies.
    public var sessionControls: SessionControls?

}

/// Graph's `conditionalAccessGuestOrExternalUserTypes` (a flags enumeration).
public enum GuestOrExternalUserType: String, Codable, Sendable, CaseIterable {
    case internalGuest, b2bCollaborationGuest, b2bCollaborationMember, b2bDirectConnectUser, otherExternalUser, serviceProvider
}

/// Graph's `conditionalAccessGuestsOrExternalUsers`: which kinds of guest, from which tenants. On the wire the types are
/// one comma-separated string; `externalTenants` is `{"membershipKind": "all"}` or `{"membershipKind": "enumerated",
/// "members": [tenant IDs]}` (absent or null: all).
public struct GuestsOrExternalUsers: Codable, Sendable, Equatable {
    public var guestOrExternalUserTypes: Set<GuestOrExternalUserType>
    /// `nil`: every external tenant; otherwise the home tenants named.
    public var externalTenants: [TenantID]?

    public init(guestOrExternalUserTypes: Set<GuestOrExternalUserType>, externalTenants: [TenantID]? = nil) {
        self.guestOrExternalUserTypes = guestOrExternalUserTypes
        self.externalTenants = externalTenants
    }

    /// Whether a user of `type` from `homeTenant` is named. An internal guest has no other home tenant, so the tenant list
    /// does not apply to it (as in Entra).
    public func contains(_ type: GuestOrExternalUserType, homeTenant: TenantID?) -> Bool {
        guard guestOrExternalUserTypes.contains(type) else { return false }
        guard type != .internalGuest, let externalTenants else { return true }
        return homeTenant.map { externalTenants.contains($0) } ?? false
    }

    enum CodingKeys: String, CodingKey { case guestOrExternalUserTypes, externalTenants }
    enum TenantKeys: String, CodingKey { case membershipKind, members }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let text = try container.decode(String.self, forKey: .guestOrExternalUserTypes)
        guestOrExternalUserTypes = Set(text.split(separator: ",").compactMap { GuestOrExternalUserType(rawValue: String($0.filter { $0 != " " })) })
        if container.contains(.externalTenants), try !container.decodeNil(forKey: .externalTenants) {
            let tenants = try container.nestedContainer(keyedBy: TenantKeys.self, forKey: .externalTenants)
            externalTenants =
                try tenants.decode(String.self, forKey: .membershipKind) == "enumerated" ? try tenants.decode([TenantID].self, forKey: .members) : nil
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(
            GuestOrExternalUserType.allCases.filter(guestOrExternalUserTypes.contains).map(\.rawValue).joined(separator: ","), forKey: .guestOrExternalUserTypes
        )
        var tenants = container.nestedContainer(keyedBy: TenantKeys.self, forKey: .externalTenants)
        if let externalTenants {
            try tenants.encode("enumerated", forKey: .membershipKind)
            try tenants.encode(externalTenants, forKey: .members)
        } else {
            try tenants.encode("all", forKey: .membershipKind)
        }
    }
}

/// A device platform, as Entra conditional access names it.
public enum DevicePlatform: String, Codable, Sendable, CaseIterable {
    case android, iOS, windows, macOS, linux
    /// Named by policies (Microsoft's "Block access for unknown or unsupported device platform" excludes it); only a
    /// browser's User-Agent can say it (no MSAL runs there any more, PROTOCOL §17).
    case windowsPhone

    /// The platforms an enrollment (and MSAL's telemetry) can have.
    public static let detectable: [DevicePlatform] = [.android, .iOS, .windows, .macOS, .linux]

    /// The platform MSAL's telemetry headers reveal: `x-client-SKU` (`MSAL.iOS`, `MSAL.Android`, `MSAL.Python`,
    /// `MSAL.NetCore`, `PortcullisClient.iOS`…) and `x-client-OS` (`17.4`, `linux`, `win32`, `Microsoft Windows 10…`).
    /// Compared in any ASCII case, as bytes.
    public static func detect(sku: String?, os: String?) -> DevicePlatform? {
        guard sku != nil || os != nil else { return nil }
        let sku = sku ?? ""
        let os = os ?? ""
        if sku.containsIgnoringCase("ios") || os.hasPrefixIgnoringCase("ios") || os.hasPrefixIgnoringCase("ipados") { return .iOS }
        if sku.containsIgnoringCase("android") || os.hasPrefixIgnoringCase("android") { return .android }
        if sku.containsIgnoringCase("osx") || sku.containsIgnoringCase("macos") { return .macOS }
        if os.containsIgnoringCase("darwin") || sku.containsIgnoringCase("darwin") { return .macOS }
        if os.containsIgnoringCase("mac") || sku.containsIgnoringCase("mac") { return .macOS }
        if os.containsIgnoringCase("win") || sku.containsIgnoringCase("win") { return .windows }
        if os.containsIgnoringCase("linux") || sku.containsIgnoringCase("linux") { return .linux }
        return nil
    }

    /// The platform a browser's `User-Agent` names, read as Entra reads it when MSAL's `x-client-OS` is absent (PROTOCOL
    /// §17): Windows Phone before the Android and iPhone tokens it carries for compatibility, iPhone/iPad/iPod before
    /// the "like Mac OS X" they carry, Android before Linux; Chrome OS and anything else stays unknown.
    public static func detect(userAgent: String?) -> DevicePlatform? {
        guard let agent = userAgent?.prefix(1024).lowercased(), !agent.isEmpty else { return nil }
        if agent.contains("windows phone") { return .windowsPhone }
        if agent.contains("iphone") || agent.contains("ipad") || agent.contains("ipod") { return .iOS }
        if agent.contains("android") { return .android }
        if agent.contains("cros") { return nil }
        if agent.contains("windows nt") || agent.contains("windows") { return .windows }
        if agent.contains("macintosh") || agent.contains("mac os x") { return .macOS }
        if agent.contains("linux") { return .linux }
        return nil
    }

    public init?(caseInsensitive text: String) {
        guard let match = DevicePlatform.allCases.first(where: { $0.rawValue.equalsIgnoringCase(text) }) else { return nil }
        self = match
    }
}
