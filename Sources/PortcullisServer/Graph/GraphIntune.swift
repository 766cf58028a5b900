import Foundation
import HTTPTypes
import PortcullisCore
import PortcullisStorage

/// §4's app protection policies and enrollments in Intune's shapes (PROTOCOL §20), what an Intune admin's tooling reads:
/// `deviceAppManagement/iosManagedAppProtections` and `androidManagedAppProtections` (every policy in both: a Portcullis
/// policy targets apps on either platform), and `managedAppRegistrations` (an enrollment each). Read-only here; the admin
/// API (`/admin/v1/app-protection/policies`) writes them.
enum GraphIntune {
    static func sets(documents: AdminDocuments, store: any PortcullisStore) -> [GraphEntitySet] {
        let policies = documents.appProtectionPolicies
        var sets: [GraphEntitySet] = []
        for platform in [Platform.iOS, .android] {
            var set = GraphEntitySet(
                path: "deviceAppManagement/\(platform.collection)", type: platform.type, permissions: GraphPermission.appManagement,
                adminPath: DocumentKind.appProtectionPolicy.adminPath ?? "app-protection/policies",
                list: { call in
                    try await policies.list(call.tenant, top: Int.max, skip: 0).map { protection($0.document, version: $0.version, platform, call.tenant) }
                })
            set.expandable = ["apps", "assignments"]
            set.below["apps"] = { call, id, rest in
                guard rest.isEmpty, let stored = try await policies.read(call.tenant, id: id) else { throw GraphError.notFound(id) }
                return .collection(call, context: "deviceAppManagement/\(platform.collection)('\(id)')/apps", apps(stored.document, platform, call.tenant))
            }
            set.below["assignments"] = { call, id, rest in
                guard rest.isEmpty, let stored = try await policies.read(call.tenant, id: id) else { throw GraphError.notFound(id) }
                return .collection(call, context: "deviceAppManagement/\(platform.collection)('\(id)')/assignments", assignments(stored.document))
            }
            sets.append(set)
        }
        let registrations = GraphEntitySet(
            path: "deviceAppManagement/managedAppRegistrations", type: "managedAppRegistration", permissions: GraphPermission.appManagement,
            adminPath: "enrollments",
            list: { call in
                // The newest 1,000 (the admin API pages through the rest).
                try await store.enrollments(EnrollmentQuery(tenantId: call.tenant.tenant.id, limit: 1000)).map { registration($0, call.tenant) }
            })
        sets.append(registrations)
        return sets
    }

    enum Platform {
        case iOS, android

        var collection: String { self == .iOS ? "iosManagedAppProtections" : "androidManagedAppProtections" }
        var type: String { self == .iOS ? "iosManagedAppProtection" : "androidManagedAppProtection" }
    }

    /// Minutes as an ISO 8601 duration (`PT30M`), as Intune's `periodOnlineBeforeAccessCheck` and its kin.
    static func duration(_ minutes: Int?) -> JSONValue { minutes.map { .string("PT\($0)M") } ?? .null }

    static func transfer(_ level: AppProtectionSettings.TransferLevel?) -> JSONValue {
        switch level {
        case .none?: "none"
        case .policyManagedApps?: "managedApps"
        case .allApps?: "allApps"
        case nil: .null
        }
    }

    /// A save location in Intune's `managedAppDataStorageLocation` (beta's members: `cameraRoll` is its `photoLibrary`);
    /// account documents and "other" have no Intune member and are left out.
    static func storage(_ location: AppProtectionSettings.SaveLocation) -> JSONValue? {
        switch location {
        case .oneDriveForBusiness: "oneDriveForBusiness"
        case .sharePoint: "sharePoint"
        case .localDrive: "localStorage"
        case .cameraRoll: "photoLibrary"
        case .accountDocument, .other: nil
        }
    }

    /// An open-from location in Intune's `managedAppDataIngestionLocation` (beta); the rest have no Intune member.
    static func ingestion(_ location: AppProtectionSettings.OpenLocation) -> JSONValue? {
        switch location {
        case .oneDriveForBusiness: "oneDriveForBusiness"
        case .sharePoint: "sharePoint"
        case .camera: "camera"
        case .photos: "photoLibrary"
        case .localStorage, .accountDocument, .other: nil
        }
    }

    static func protection(_ policy: AppProtectionPolicy, version: Int64, _ platform: Platform, _ tenant: TenantSnapshot) -> JSONValue {
        let settings = policy.settings
        var object: [String: JSONValue] = [
            "@odata.type": .string("#microsoft.graph.\(platform.type)"), "id": .string(policy.id.rawValue), "displayName": .string(policy.displayName),
            "description": .null, "version": .string(String(version)), "isAssigned": .bool(!policy.targets.applications.isEmpty),
            "deployedAppCount": .number(Double(policy.targets.applications.count)),
            "pinRequired": settings.pinRequired.map(JSONValue.bool) ?? false,
            "minimumRequiredOsVersion": settings.minimumOsVersion.map(JSONValue.string) ?? .null,
            "minimumRequiredAppVersion": settings.minimumAppVersion.map(JSONValue.string) ?? .null,
            "periodOnlineBeforeAccessCheck": duration(settings.recheckIntervalMinutes),
            "periodOfflineBeforeAccessCheck": duration(settings.offlineGracePeriodMinutes),
            "allowedOutboundDataTransferDestinations": transfer(settings.dataTransfer?.sendOrgData),
            "allowedInboundDataTransferSources": transfer(settings.dataTransfer?.receiveData),
            "saveAsBlocked": settings.saveAs.map { .bool($0.blocked) } ?? false,
            "allowedDataStorageLocations": .array((settings.saveAs?.allowedLocations ?? []).compactMap(storage)),
            "allowedDataIngestionLocations": .array((settings.openFrom?.allowedLocations ?? []).compactMap(ingestion)),
            "printBlocked": settings.printingBlocked.map(JSONValue.bool) ?? false,
            "deviceComplianceRequired": settings.blockJailbrokenDevices.map(JSONValue.bool) ?? false,
            "notificationRestriction": settings.notificationPolicy.map {
                switch $0 {
                case .allow: "allow"
                case .blockOrgData: "blockOrganizationalData"
                case .block: "block"
                }
            } ?? "allow",
        ]
        switch platform {
        case .iOS:
            object["appDataEncryptionType"] = settings.fileEncryptionRequired == true ? "whenDeviceLocked" : "useDeviceSettings"
        case .android:
            object["encryptAppData"] = .bool(settings.fileEncryptionRequired == true)
            object["screenCaptureBlocked"] = .bool(settings.screenCaptureBlocked == true)
        }
        return .object(object)
    }

    /// The policy's apps as Intune's `managedMobileApp`: an iOS bundle ID or Android package read from the app's MSAL
    /// redirect URI (`msauth.{bundle}://auth`, `msauth://{package}/…`), else its client ID.
    static func apps(_ policy: AppProtectionPolicy, _ platform: Platform, _ tenant: TenantSnapshot) -> [JSONValue] {
        policy.targets.applications.map { appId in
            let identifier = identifier(appId, platform, tenant)
            return ["id": .string("\(identifier.value)_\(appId.rawValue)"), "mobileAppIdentifier": identifier.json, "version": .null]
        }
    }

    /// An app's iOS bundle ID or Android package, read from its MSAL redirect URI (`msauth.{bundle}://auth`,
    /// `msauth://{package}/…`), else its client ID, as Intune's `mobileAppIdentifier`.
    static func identifier(_ appId: AppID, _ platform: Platform, _ tenant: TenantSnapshot) -> (value: String, json: JSONValue) {
        let redirects = tenant.directory.application(appId: appId)?.redirectUris ?? []
        var identifier = appId.rawValue
        if platform == .iOS, let uri = redirects.first(where: { $0.hasPrefix("msauth.") && $0.hasSuffix("://auth") }) {
            identifier = String(uri.dropFirst("msauth.".count).dropLast("://auth".count))
        } else if platform == .android, let uri = redirects.first(where: { $0.hasPrefix("msauth://") }) {
            identifier = String(uri.dropFirst("msauth://".count).prefix { $0 != "/" })
        }
        let json: JSONValue =
            platform == .iOS
            ? ["@odata.type": "#microsoft.graph.iosMobileAppIdentifier", "bundleId": .string(identifier)]
            : ["@odata.type": "#microsoft.graph.androidMobileAppIdentifier", "packageId": .string(identifier)]
        return (identifier, json)
    }

    static func assignments(_ policy: AppProtectionPolicy) -> [JSONValue] {
        let included: [JSONValue] =
            policy.targets.includeGroups.keywords.contains(.all)
            ? [["id": "allLicensedUsers", "target": ["@odata.type": "#microsoft.graph.allLicensedUsersAssignmentTarget"]]]
            : policy.targets.includeGroups.ids.map { group in
                ["id": .string("\(group)_incl"), "target": ["@odata.type": "#microsoft.graph.groupAssignmentTarget", "groupId": .string(group.rawValue)]]
            }
        let excluded: [JSONValue] = policy.targets.excludeGroups.map { group in
            ["id": .string("\(group)_excl"), "target": ["@odata.type": "#microsoft.graph.exclusionGroupAssignmentTarget", "groupId": .string(group.rawValue)]]
        }
        return included + excluded
    }

    /// An enrollment as Intune's `iosManagedAppRegistration`/`androidManagedAppRegistration`.
    static func registration(_ enrollment: Enrollment, _ tenant: TenantSnapshot) -> JSONValue {
        let android = enrollment.platform == .android
        return [
            "@odata.type": .string(android ? "#microsoft.graph.androidManagedAppRegistration" : "#microsoft.graph.iosManagedAppRegistration"),
            "id": .string(enrollment.id.rawValue), "userId": .string(enrollment.userId.rawValue), "deviceTag": .string(enrollment.deviceId.rawValue),
            "deviceType": .string(enrollment.platform?.rawValue ?? "unknown"),
            "platformVersion": enrollment.osVersion.map(JSONValue.string) ?? .null,
            "applicationVersion": enrollment.appVersion.map(JSONValue.string) ?? .null,
            "managementSdkVersion": enrollment.sdkVersion.map(JSONValue.string) ?? .null,
            "createdDateTime": .string(enrollment.enrolledAt.formatted(.iso8601)),
            "lastSyncDateTime": enrollment.lastCheckInAt.map { .string($0.formatted(.iso8601)) } ?? .null,
            "appIdentifier": identifier(enrollment.clientId, android ? .android : .iOS, tenant).json, "version": .string(String(enrollment.revision)),
            // Portcullis's own: where the enrollment stands (PROTOCOL §4).
            "complianceState": .string(enrollment.state.rawValue),
        ]
    }
}
