public import Foundation

/// An app protection policy (PROTOCOL §4): which client applications and user groups it targets, and the
/// settings the client SDK must enforce.
public struct AppProtectionPolicy: Codable, Sendable, Equatable {
    public struct Targets: Codable, Sendable, Equatable {
        public var applications: [AppID]
        /// Groups, or `All`.
        public var includeGroups: Selection<IdentifierKind.Object>
        public var excludeGroups: [ObjectID]

        public init(applications: [AppID], includeGroups: Selection<IdentifierKind.Object>, excludeGroups: [ObjectID]) {
            self.applications = applications
            self.includeGroups = includeGroups
            self.excludeGroups = excludeGroups
        }

        /// Whether a user in these (direct) groups, signing in with this client application, is targeted.
        public func cover(groupIds groups: [ObjectID], clientId: AppID) -> Bool {
            guard applications.contains(clientId) else { return false }
            if groups.contains(where: { excludeGroups.contains($0) }) { return false }
            return includeGroups.contains(.all) || groups.contains(where: { includeGroups.contains(id: $0) })
        }
    }

    public var id: PolicyID
    public var displayName: String
    public var targets: Targets
    public var settings: AppProtectionSettings

    public init(id: PolicyID, displayName: String, targets: Targets, settings: AppProtectionSettings) {
        self.id = id
        self.displayName = displayName
        self.targets = targets
        self.settings = settings
    }

    /// Whether the policy targets this user (object ID and direct groups) in this client application.
    public func targets(userId: ObjectID, groupIds: [ObjectID], clientId: AppID) -> Bool {
        targets.cover(groupIds: groupIds, clientId: clientId)
    }

    /// Parses and validates a policy document as strictly as conditional-access policies.
    public static func parse(
        _ value: JSONValue, directory: DirectorySnapshot, generatedId: @autoclosure () -> PolicyID, pointer: String = ""
    ) throws(ValidationError) -> AppProtectionPolicy {
        let problems = ProblemCollector()
        let policy = read(value, directory: directory, generatedId: generatedId(), pointer: pointer, problems: problems)
        try problems.check()
        guard let policy else { throw ValidationError(problems: [ValidationProblem(pointer: pointer, message: "is not a valid app protection policy.")]) }
        return policy
    }

    static func read(
        _ value: JSONValue, directory: DirectorySnapshot, generatedId: PolicyID, pointer: String, problems: ProblemCollector
    ) -> AppProtectionPolicy? {
        guard let root = JSONObjectReader(value, at: pointer, problems: problems) else { return nil }
        root.rejectUnknownMembers(allowed: ["id", "displayName", "description", "targets", "settings", "version"])
        let id = root.has("id") ? root.guid("id") ?? generatedId : generatedId
        let displayName = root.string("displayName", required: true)
        let targets = readTargets(root, directory: directory)
        var settings: AppProtectionSettings?
        if let s = root.object("settings", required: true) {
            settings = readSettings(s)
        }
        guard let displayName, let targets, let settings else { return nil }
        return AppProtectionPolicy(id: id, displayName: displayName, targets: targets, settings: settings)
    }

    /// `targets` as app protection and app configuration policies write it: client applications of the tenant,
    /// groups (or All) to include, groups to exclude.
    static func readTargets(_ root: JSONObjectReader, directory: DirectorySnapshot) -> Targets? {
        let problems = root.problems
        var targets: Targets?
        if let t = root.object("targets", required: true) {
            t.rejectUnknownMembers(allowed: ["applications", "includeGroups", "excludeGroups"])
            var apps: [AppID] = []
            for (app, appPointer) in t.strings("applications", required: true) ?? [] {
                if let found = directory.application(appId: AppID(app)), !BuiltInResources.all.contains(where: { $0.appId == found.appId }) {
                    apps.append(found.appId)
                } else {
                    problems.add(appPointer, "'\(app)' names no client application of this tenant.")
                }
            }
            if t.object["applications"]?.arrayValue?.isEmpty == true { problems.add(t.path("applications"), "name at least one client application.") }
            func groups(_ key: String, allowAll: Bool) -> Selection<IdentifierKind.Object> {
                var result = Selection<IdentifierKind.Object>()
                for (group, groupPointer) in t.strings(key) ?? [] {
                    if allowAll && ConditionKeyword(caseInsensitive: group) == .all {
                        result.insert(.all)
                    } else if directory.group(id: ObjectID(group)) != nil {
                        result.insert(id: ObjectID(group))
                    } else {
                        problems.add(groupPointer, "'\(group)' names no group of this tenant\(allowAll ? " (or use All)" : "").")
                    }
                }
                return result
            }
            let include = groups("includeGroups", allowAll: true)
            if !t.has("includeGroups") || t.object["includeGroups"]?.arrayValue?.isEmpty == true {
                problems.add(t.path("includeGroups"), "name the groups the policy is for, or All.")
            }
            targets = Targets(applications: apps, includeGroups: include, excludeGroups: groups("excludeGroups", allowAll: false).ids)
        }
        return targets
    }

    static func readSettings(_ s: JSONObjectReader) -> AppProtectionSettings {
        let problems = s.problems
        s.rejectUnknownMembers(allowed: [
            "pinRequired", "minimumOsVersion", "minimumAppVersion", "blockJailbrokenDevices", "fileEncryptionRequired", "saveAs", "openFrom",
            "dataTransfer", "printingBlocked", "screenCaptureBlocked", "notificationPolicy", "recheckIntervalMinutes", "offlineGracePeriodMinutes",
        ])
        var settings = AppProtectionSettings()
        settings.pinRequired = s.bool("pinRequired")
        settings.blockJailbrokenDevices = s.bool("blockJailbrokenDevices")
        settings.fileEncryptionRequired = s.bool("fileEncryptionRequired")
        settings.printingBlocked = s.bool("printingBlocked")
        settings.screenCaptureBlocked = s.bool("screenCaptureBlocked")
        for key in ["minimumOsVersion", "minimumAppVersion"] {
            if let version = s.string(key) {
                if SoftwareVersion.isValid(version) {
                    if key == "minimumOsVersion" { settings.minimumOsVersion = version } else { settings.minimumAppVersion = version }
                } else {
                    problems.add(s.path(key), "must be a dotted version such as 17.0 or 4.2.1.")
                }
            }
        }
        func rule<L: RawRepresentable & CaseIterable & Codable & Sendable & Hashable>(_ key: String, _ type: L.Type) -> AppProtectionSettings.LocationRule<L>?
        where L.RawValue == String {
            guard let r = s.object(key) else { return nil }
            r.rejectUnknownMembers(allowed: ["blocked", "allowedLocations"])
            let blocked = r.bool("blocked", required: true)
            var allowed: [L] = []
            for (name, namePointer) in r.strings("allowedLocations") ?? [] {
                if let location = L.allCases.first(where: { $0.rawValue.equalsIgnoringCase(name) }) {
                    if !allowed.contains(location) { allowed.append(location) }
                } else {
                    problems.add(namePointer, "'\(name)' is not one of: \(L.allCases.map(\.rawValue).joined(separator: ", ")).")
                }
            }
            guard let blocked else { return nil }
            return AppProtectionSettings.LocationRule(blocked: blocked, allowedLocations: allowed)
        }
        settings.saveAs = rule("saveAs", AppProtectionSettings.SaveLocation.self)
        settings.openFrom = rule("openFrom", AppProtectionSettings.OpenLocation.self)
        if let d = s.object("dataTransfer") {
            d.rejectUnknownMembers(allowed: ["sendOrgData", "receiveData"])
            let levels = AppProtectionSettings.TransferLevel.allCases.map(\.rawValue)
            let send = d.enumeration("sendOrgData", allowed: levels).flatMap(AppProtectionSettings.TransferLevel.init(rawValue:))
            let receive = d.enumeration("receiveData", allowed: levels).flatMap(AppProtectionSettings.TransferLevel.init(rawValue:))
            settings.dataTransfer = AppProtectionSettings.DataTransfer(sendOrgData: send ?? .allApps, receiveData: receive ?? .allApps)
        }
        settings.notificationPolicy = s.enumeration("notificationPolicy", allowed: AppProtectionSettings.NotificationPolicy.allCases.map(\.rawValue))
            .flatMap(AppProtectionSettings.NotificationPolicy.init(rawValue:))
        settings.recheckIntervalMinutes = s.integer("recheckIntervalMinutes", in: 1...1440)
        settings.offlineGracePeriodMinutes = s.integer("offlineGracePeriodMinutes", in: 1...43200)
        return settings
    }
}

/// The policy an app instance must apply: the merge of every policy targeting the account in the app.
public struct MergedAppProtectionPolicy: Codable, Sendable, Equatable {
    public var version: String
    public var settings: AppProtectionSettings
    /// The policies it was merged from.
    public var policyIds: [PolicyID]

    /// `nil` when no policy targets the account in this application (the account is unmanaged there).
    public static func resolve(_ policies: [AppProtectionPolicy], userId: ObjectID, groupIds: [ObjectID], clientId: AppID) -> MergedAppProtectionPolicy? {
        let targeting = policies.filter { $0.targets(userId: userId, groupIds: groupIds, clientId: clientId) }.sorted { $0.id < $1.id }
        guard !targeting.isEmpty else { return nil }
        let settings = AppProtectionSettings.merge(targeting.map(\.settings))
        return MergedAppProtectionPolicy(version: settings.fingerprint, settings: settings, policyIds: targeting.map(\.id))
    }

    public var gracePeriod: TimeInterval { TimeInterval((settings.offlineGracePeriodMinutes ?? AppProtectionSettings.defaultOfflineGracePeriodMinutes) * 60) }
}
