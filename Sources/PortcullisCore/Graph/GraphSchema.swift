import Foundation

/// The members of the Microsoft Graph types Portcullis serves (PROTOCOL §20), so that a document is shown complete as
/// Graph serialises it — every member present, an absent collection `[]`, an absent value `null` (tools such as Prowler
/// drop a policy that lacks one) — and so that `$select`, `$filter` and `$orderby` can name only members the type has.
///
/// Each type is written as Graph's metadata has it, one word per member: `name` a value, `name[]` a collection of values,
/// `name:type` a complex value of that type, `name:type[]` a collection of them. Navigation properties are not members.
public enum GraphSchema {
    public struct Member: Sendable, Equatable {
        public let name: String
        public let isCollection: Bool
        /// The complex type of the member (`nil` for values).
        public let type: String?
    }

    /// The type's members in order, or `nil` for a type not described here.
    public static func members(of type: String) -> [Member]? { parsed[type] }

    /// Graph's types, as `GraphSchema.members` reads them.
    static let types: [String: String] = [
        "conditionalAccessPolicy": """
        id templateId displayName description createdDateTime modifiedDateTime deletedDateTime state \
        conditions:conditionalAccessConditionSet grantControls:conditionalAccessGrantControls \
        sessionControls:conditionalAccessSessionControls
        """,
        "conditionalAccessConditionSet": """
        userRiskLevels[] signInRiskLevels[] servicePrincipalRiskLevels[] insiderRiskLevels clientAppTypes[] \
        applications:conditionalAccessApplications users:conditionalAccessUsers platforms:conditionalAccessPlatforms \
        locations:conditionalAccessLocations devices:conditionalAccessDevices clientApplications:conditionalAccessClientApplications \
        authenticationFlows:conditionalAccessAuthenticationFlows
        """,
        "conditionalAccessApplications": """
        includeApplications[] excludeApplications[] includeUserActions[] includeAuthenticationContextClassReferences[] \
        applicationFilter:conditionalAccessFilter
        """,
        "conditionalAccessUsers": """
        includeUsers[] excludeUsers[] includeGroups[] excludeGroups[] includeRoles[] excludeRoles[] \
        includeGuestsOrExternalUsers:conditionalAccessGuestsOrExternalUsers excludeGuestsOrExternalUsers:conditionalAccessGuestsOrExternalUsers
        """,
        "conditionalAccessGuestsOrExternalUsers": "guestOrExternalUserTypes externalTenants:conditionalAccessExternalTenants",
        "conditionalAccessExternalTenants": "membershipKind members[]",
        "conditionalAccessPlatforms": "includePlatforms[] excludePlatforms[]",
        "conditionalAccessLocations": "includeLocations[] excludeLocations[]",
        "conditionalAccessDevices": "deviceFilter:conditionalAccessFilter",
        "conditionalAccessClientApplications": "includeServicePrincipals[] excludeServicePrincipals[] servicePrincipalFilter:conditionalAccessFilter",
        "conditionalAccessAuthenticationFlows": "transferMethods",
        "conditionalAccessFilter": "mode rule",
        "conditionalAccessGrantControls": """
        operator builtInControls[] customAuthenticationFactors[] termsOfUse[] authenticationStrength:authenticationStrengthPolicy
        """,
        "conditionalAccessSessionControls": """
        disableResilienceDefaults applicationEnforcedRestrictions:conditionalAccessSessionControl \
        cloudAppSecurity:cloudAppSecuritySessionControl continuousAccessEvaluation:continuousAccessEvaluationSessionControl \
        persistentBrowser:persistentBrowserSessionControl signInFrequency:signInFrequencySessionControl \
        secureSignInSession:conditionalAccessSessionControl
        """,
        "conditionalAccessSessionControl": "isEnabled",
        "cloudAppSecuritySessionControl": "isEnabled cloudAppSecurityType",
        "continuousAccessEvaluationSessionControl": "mode",
        "persistentBrowserSessionControl": "isEnabled mode",
        "signInFrequencySessionControl": "isEnabled type value authenticationType frequencyInterval",
        "authenticationStrengthPolicy": """
        id displayName description policyType requirementsSatisfied allowedCombinations[] createdDateTime modifiedDateTime \
        combinationConfigurations[]
        """,
        "authenticationContextClassReference": "id displayName description isAvailable",
        "conditionalAccessTemplate": "id name description scenarios details:conditionalAccessPolicyDetail",
        "conditionalAccessPolicyDetail": """
        conditions:conditionalAccessConditionSet grantControls:conditionalAccessGrantControls \
        sessionControls:conditionalAccessSessionControls
        """,
        "ipNamedLocation": "id displayName createdDateTime modifiedDateTime isTrusted ipRanges:ipRange[]",
        "countryNamedLocation": """
        id displayName createdDateTime modifiedDateTime countriesAndRegions[] countryLookupMethod includeUnknownCountriesAndRegions
        """,
        "ipRange": "cidrAddress",
        "riskyUser": "id isDeleted isProcessing riskLastUpdatedDateTime riskLevel riskState riskDetail userDisplayName userPrincipalName",
        "riskyUserHistoryItem": """
        id userId initiatedBy isDeleted isProcessing riskLastUpdatedDateTime riskLevel riskState riskDetail userDisplayName userPrincipalName \
        activity:riskUserActivity
        """,
        "riskUserActivity": "eventTypes[] riskEventTypes[] detail",
        "riskDetection": """
        id requestId correlationId riskType riskEventType riskState riskLevel riskDetail source detectionTimingType activity tokenIssuerType \
        ipAddress location:signInLocation activityDateTime detectedDateTime lastUpdatedDateTime userId userDisplayName userPrincipalName \
        additionalInfo
        """,
        "signInLocation": "city state countryOrRegion geoCoordinates",
        "riskyServicePrincipal": """
        id appId displayName isEnabled isProcessing servicePrincipalType riskLastUpdatedDateTime riskLevel riskState riskDetail
        """,
        "servicePrincipalRiskDetection": """
        id requestId correlationId riskEventType riskState riskLevel riskDetail source detectionTimingType activity tokenIssuerType \
        ipAddress location:signInLocation activityDateTime detectedDateTime lastUpdatedDateTime servicePrincipalId \
        servicePrincipalDisplayName appId keyIds[] additionalInfo
        """,
        "device": """
        id accountEnabled alternativeSecurityIds:alternativeSecurityId[] approximateLastSignInDateTime complianceExpirationDateTime \
        deviceCategory deviceId deviceMetadata deviceOwnership deviceVersion displayName enrollmentProfileName enrollmentType \
        extensionAttributes:onPremisesExtensionAttributes isCompliant isManaged isManagementRestricted isRooted managementType \
        manufacturer mdmAppId model onPremisesLastSyncDateTime onPremisesSecurityIdentifier onPremisesSyncEnabled operatingSystem \
        operatingSystemVersion physicalIds[] profileType registrationDateTime systemLabels[] trustType
        """,
        "alternativeSecurityId": "type identityProvider key",
        "iosCompliancePolicy": """
        id displayName description createdDateTime lastModifiedDateTime version osMinimumVersion osMaximumVersion passcodeRequired \
        securityBlockJailbrokenDevices scheduledActionsForRule:deviceComplianceScheduledActionForRule[]
        """,
        "androidCompliancePolicy": """
        id displayName description createdDateTime lastModifiedDateTime version osMinimumVersion osMaximumVersion passwordRequired \
        storageRequireEncryption securityBlockJailbrokenDevices scheduledActionsForRule:deviceComplianceScheduledActionForRule[]
        """,
        "macOSCompliancePolicy": """
        id displayName description createdDateTime lastModifiedDateTime version osMinimumVersion osMaximumVersion passwordRequired \
        storageRequireEncryption scheduledActionsForRule:deviceComplianceScheduledActionForRule[]
        """,
        "windows10CompliancePolicy": """
        id displayName description createdDateTime lastModifiedDateTime version osMinimumVersion osMaximumVersion passwordRequired \
        storageRequireEncryption scheduledActionsForRule:deviceComplianceScheduledActionForRule[]
        """,
        "deviceComplianceScheduledActionForRule": "id ruleName scheduledActionConfigurations:deviceComplianceActionItem[]",
        "deviceComplianceActionItem": "id actionType gracePeriodHours notificationTemplateId notificationMessageCCList[]",
        "onPremisesExtensionAttributes": """
        extensionAttribute1 extensionAttribute2 extensionAttribute3 extensionAttribute4 extensionAttribute5 extensionAttribute6 \
        extensionAttribute7 extensionAttribute8 extensionAttribute9 extensionAttribute10 extensionAttribute11 extensionAttribute12 \
        extensionAttribute13 extensionAttribute14 extensionAttribute15
        """,
        "user": """
        id accountEnabled businessPhones[] createdDateTime creationType displayName givenName jobTitle mail mobilePhone \
        officeLocation preferredLanguage surname userPrincipalName userType externalUserState identities:objectIdentity[] \
        otherMails[] proxyAddresses[] usageLocation onPremisesSyncEnabled
        """,
        "objectIdentity": "signInType issuer issuerAssignedId",
        "group": """
        id displayName description createdDateTime groupTypes[] mail mailEnabled mailNickname securityEnabled \
        isAssignableToRole membershipRule membershipRuleProcessingState visibility onPremisesSyncEnabled proxyAddresses[]
        """,
        "application": """
        id appId displayName description createdDateTime signInAudience identifierUris[] tags[] isFallbackPublicClient \
        publicClient:publicClientApplication web:webApplication spa:spaApplication api:apiApplication appRoles:appRole[] \
        passwordCredentials:passwordCredential[] keyCredentials[] requiredResourceAccess:requiredResourceAccess[] \
        notes publisherDomain
        """,
        "servicePrincipal": """
        id appId displayName appDisplayName accountEnabled appOwnerOrganizationId servicePrincipalType \
        servicePrincipalNames[] tags[] appRoles:appRole[] oauth2PermissionScopes:permissionScope[] \
        appRoleAssignmentRequired passwordCredentials:passwordCredential[] keyCredentials[] replyUrls[] signInAudience
        """,
        "publicClientApplication": "redirectUris[]",
        "webApplication": "redirectUris[] homePageUrl logoutUrl",
        "spaApplication": "redirectUris[]",
        "apiApplication": "requestedAccessTokenVersion oauth2PermissionScopes:permissionScope[] preAuthorizedApplications:preAuthorizedApplication[]",
        "preAuthorizedApplication": "appId delegatedPermissionIds[]",
        "appRole": "id value displayName description isEnabled allowedMemberTypes[] origin",
        "permissionScope": "id value adminConsentDisplayName adminConsentDescription isEnabled type userConsentDisplayName userConsentDescription",
        "passwordCredential": "keyId displayName hint startDateTime endDateTime secretText customKeyIdentifier",
        "federatedIdentityCredential": "id name issuer subject audiences[] description",
        "requiredResourceAccess": "resourceAppId resourceAccess:resourceAccess[]",
        "resourceAccess": "id type",
        "directoryRole": "id displayName description roleTemplateId",
        "unifiedRoleDefinition": """
        id displayName description isBuiltIn isEnabled templateId version resourceScopes[] rolePermissions:unifiedRolePermission[]
        """,
        "unifiedRolePermission": "allowedResourceActions[] excludedResourceActions[] condition",
        "unifiedRoleAssignment": "id principalId roleDefinitionId directoryScopeId appScopeId condition principalOrganizationId",
        "invitation": """
        id invitedUserDisplayName invitedUserEmailAddress invitedUserType inviteRedirectUrl inviteRedeemUrl sendInvitationMessage \
        resetRedemption status invitedUserMessageInfo invitedUser
        """,
        "agreement": """
        id displayName isPerDeviceAcceptanceRequired isViewingBeforeAcceptanceRequired userReacceptRequiredFrequency \
        termsExpiration files[]
        """,
        "organization": """
        id displayName tenantType createdDateTime countryLetterCode preferredLanguage defaultUsageLocation \
        onPremisesSyncEnabled businessPhones[] technicalNotificationMails[] marketingNotificationEmails[] \
        securityComplianceNotificationMails[] securityComplianceNotificationPhones[] assignedPlans:assignedPlan[] \
        provisionedPlans[] verifiedDomains:verifiedDomain[]
        """,
        "verifiedDomain": "name type isDefault isInitial capabilities",
        "assignedPlan": "assignedDateTime capabilityStatus service servicePlanId",
        "domain": """
        id authenticationType availabilityStatus isAdminManaged isDefault isInitial isRoot isVerified \
        passwordNotificationWindowInDays passwordValidityPeriodInDays supportedServices[] state
        """,
        "subscribedSku": """
        id accountId accountName appliesTo capabilityStatus consumedUnits skuId skuPartNumber subscriptionIds[] \
        prepaidUnits:licenseUnitsDetail servicePlans:servicePlanInfo[]
        """,
        "licenseUnitsDetail": "enabled lockedOut suspended warning",
        "iosManagedAppProtection": """
        id displayName description createdDateTime lastModifiedDateTime version isAssigned deployedAppCount pinRequired \
        minimumRequiredOsVersion minimumRequiredAppVersion periodOnlineBeforeAccessCheck periodOfflineBeforeAccessCheck \
        allowedOutboundDataTransferDestinations allowedInboundDataTransferSources saveAsBlocked allowedDataStorageLocations[] \
        printBlocked deviceComplianceRequired notificationRestriction appDataEncryptionType allowedDataIngestionLocations[]
        """,
        "androidManagedAppProtection": """
        id displayName description createdDateTime lastModifiedDateTime version isAssigned deployedAppCount pinRequired \
        minimumRequiredOsVersion minimumRequiredAppVersion periodOnlineBeforeAccessCheck periodOfflineBeforeAccessCheck \
        allowedOutboundDataTransferDestinations allowedInboundDataTransferSources saveAsBlocked allowedDataStorageLocations[] \
        printBlocked deviceComplianceRequired notificationRestriction encryptAppData screenCaptureBlocked
        """,
        "managedAppRegistration": """
        id userId deviceTag deviceType deviceName platformVersion applicationVersion managementSdkVersion createdDateTime \
        lastSyncDateTime appIdentifier version flaggedReasons[]
        """,
        "servicePlanInfo": "servicePlanId servicePlanName provisioningStatus appliesTo",
    ]

    static let parsed: [String: [Member]] = types.mapValues { text in
        text.split(whereSeparator: { $0 == " " || $0 == "\n" }).map { word in
            var text = String(word)
            let isCollection = text.hasSuffix("[]")
            if isCollection { text.removeLast(2) }
            let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
            return Member(name: parts[0], isCollection: isCollection, type: parts.count > 1 ? parts[1] : nil)
        }
    }

    /// `value` (an object of `type`) with every member of the type present: absent values `null`, absent collections `[]`,
    /// complex members completed in turn. Members the type does not have (`@odata.type`, Portcullis's own) are kept.
    public static func complete(_ value: JSONValue, type: String) -> JSONValue {
        guard case .object(var object) = value, let members = members(of: type) else { return value }
        for member in members {
            let given = object[member.name]
            switch (given, member.type, member.isCollection) {
            case (nil, _, true), (.null?, _, true): object[member.name] = .array([])
            case (nil, _, false): object[member.name] = .null
            case (.array(let items)?, let inner?, true): object[member.name] = .array(items.map { complete($0, type: inner) })
            case (.object?, let inner?, false): object[member.name] = complete(given!, type: inner)
            default: break
            }
        }
        return .object(object)
    }
}
