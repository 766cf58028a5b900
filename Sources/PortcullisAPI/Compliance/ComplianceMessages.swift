public import Foundation
public import PortcullisVocabulary

/// `POST /mam/v1/enrollments`.
public struct EnrollmentRequest: Codable, Sendable, Equatable {
    public var deviceId: String
    public var platform: String?
    public var osVersion: String?
    public var appVersion: String?
    public var sdkVersion: String?
    /// The instance key secrets are sealed to (PROTOCOL §8.2); registering another replaces it.
    public var appKey: AppKeyJWK?

    public init(deviceId: String, platform: String?, osVersion: String?, appVersion: String?, sdkVersion: String?, appKey: AppKeyJWK? = nil) {
        self.deviceId = deviceId
        self.platform = platform
        self.osVersion = osVersion
        self.appVersion = appVersion
        self.sdkVersion = sdkVersion
        self.appKey = appKey
    }
}

/// `POST /mam/v1/enrollments/{id}/checkin`.
public struct CheckInRequest: Codable, Sendable, Equatable {
    public var appliedPolicyVersion: String?
    public var osVersion: String?
    public var appVersion: String?
    public var jailbroken: Bool?
    public var pinSet: Bool?
    public var silent: Bool?

    public init(appliedPolicyVersion: String?, osVersion: String?, appVersion: String?, jailbroken: Bool?, pinSet: Bool?, silent: Bool? = nil) {
        self.appliedPolicyVersion = appliedPolicyVersion
        self.osVersion = osVersion
        self.appVersion = appVersion
        self.jailbroken = jailbroken
        self.pinSet = pinSet
        self.silent = silent
    }
}

/// `POST /mam/v1/remediations`: the server side of `remediateCompliance(accountId, silent)`.
public struct RemediationRequest: Codable, Sendable, Equatable {
    public var deviceId: String
    public var platform: String?
    public var osVersion: String?
    public var appVersion: String?
    public var sdkVersion: String?
    public var silent: Bool?
    public var callbackUri: String?
    public var appKey: AppKeyJWK?

    public init(
        deviceId: String, platform: String?, osVersion: String?, appVersion: String?, sdkVersion: String? = nil, silent: Bool?, callbackUri: String? = nil,
        appKey: AppKeyJWK? = nil
    ) {
        self.deviceId = deviceId
        self.platform = platform
        self.osVersion = osVersion
        self.appVersion = appVersion
        self.sdkVersion = sdkVersion
        self.silent = silent
        self.callbackUri = callbackUri
        self.appKey = appKey
    }
}

/// The merged app protection policy the app must apply.
public struct PolicyDocument: Codable, Sendable, Equatable {
    public var version: String
    public var settings: AppProtectionSettings

    public init(version: String, settings: AppProtectionSettings) {
        self.version = version
        self.settings = settings
    }
}

/// A tenant's allowed accounts: `accounts` is `nil` when every account may enroll, otherwise the UPNs and object IDs
/// that may (case-insensitive). Wrapped so that "no restriction" differs from "not delivered".
public struct AllowedAccountsList: Codable, Sendable, Equatable {
    public var accounts: [String]?

    public init(accounts: [String]?) { self.accounts = accounts }

    enum CodingKeys: String, CodingKey { case accounts }

    /// `accounts` is always written, `null` included, so that a reader tells "no restriction" from "not delivered".
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(accounts, forKey: .accounts)
    }
}

/// The answer of every `/mam/v1` call about an enrollment.
public struct EnrollmentResponse: Codable, Sendable, Equatable {
    /// `nil` when the account could not be enrolled (unmanaged, not allowed, another managed account).
    public var enrollmentId: String?
    public var statusCode: EnrollmentStatusCode
    public var policy: PolicyDocument?
    public var complianceStatus: ComplianceStatus
    public var commands: [String]?
    /// Remediation: what still stands between this app instance and compliance (`policyAcknowledgement`,
    /// `pin`, `osVersion`, `appVersion`, `jailbreak`, `policyAssignment`, `allowedAccount`, `singleManagedAccount`).
    public var missing: [String]?
    /// The account, as the server knows it.
    public var accountId: String?
    public var tenantId: String?
    public var upn: String?
    public var recheckIntervalMinutes: Int?
    /// The tenant's allowed accounts (PROTOCOL §4, §16); absent from a server that does not deliver them.
    public var allowedAccounts: AllowedAccountsList?

    public init(
        enrollmentId: String?, statusCode: EnrollmentStatusCode, policy: PolicyDocument?, complianceStatus: ComplianceStatus,
        commands: [String]? = nil, missing: [String]? = nil, accountId: String? = nil, tenantId: String? = nil, upn: String? = nil,
        recheckIntervalMinutes: Int? = nil
    ) {
        self.enrollmentId = enrollmentId
        self.statusCode = statusCode
        self.policy = policy
        self.complianceStatus = complianceStatus
        self.commands = commands
        self.missing = missing
        self.accountId = accountId
        self.tenantId = tenantId
        self.upn = upn
        self.recheckIntervalMinutes = recheckIntervalMinutes
    }
}

/// The events a compliance callback Security Event Token (RFC 8417) carries.
public enum SecurityEventTypes {
    public static let deviceComplianceChange = "https://schemas.openid.net/secevent/caep/event-type/device-compliance-change"
    public static let complianceStatus = "urn:portcullis:secevent:compliance-status"
    public static let configurationChanged = "urn:portcullis:secevent:configuration-changed"
    /// The media type of a SET delivered by push (RFC 8935).
    public static let mediaType = "application/secevent+jwt"
}

/// CAEP 1.0 device-compliance-change.
public struct DeviceComplianceChangeEvent: Codable, Sendable, Equatable {
    public var subject: SubjectIdentifier
    /// `compliant` or `not-compliant`.
    public var previousStatus: String
    public var currentStatus: String
    public var eventTimestamp: Int

    public init(subject: SubjectIdentifier, previousStatus: String, currentStatus: String, eventTimestamp: Int) {
        self.subject = subject
        self.previousStatus = previousStatus
        self.currentStatus = currentStatus
        self.eventTimestamp = eventTimestamp
    }

    enum CodingKeys: String, CodingKey {
        case subject
        case previousStatus = "previous_status"
        case currentStatus = "current_status"
        case eventTimestamp = "event_timestamp"
    }
}

/// RFC 9493 subject identifier (`opaque` format: the enrollment ID).
public struct SubjectIdentifier: Codable, Sendable, Equatable {
    public var format: String
    public var id: String

    public init(format: String = "opaque", id: String) {
        self.format = format
        self.id = id
    }
}

/// The Intune SDK's `hasComplianceStatus` callback, as an event.
public struct ComplianceStatusEvent: Codable, Sendable, Equatable {
    public var enrollmentId: String
    public var accountId: String
    public var tenantId: String
    public var upn: String
    public var status: ComplianceStatusValue
    public var errorTitle: String?
    public var errorMessage: String?
    /// The catalogue's name for the message (English above), so that the SDK shows it in the device's language.
    public var reason: String?
    public var reasonArgument: String?

    public init(
        enrollmentId: String, accountId: String, tenantId: String, upn: String, status: ComplianceStatusValue, errorTitle: String?, errorMessage: String?,
        reason: ComplianceMessage? = nil, reasonArgument: String? = nil
    ) {
        self.enrollmentId = enrollmentId
        self.accountId = accountId
        self.tenantId = tenantId
        self.upn = upn
        self.status = status
        self.errorTitle = errorTitle
        self.errorMessage = errorMessage
        self.reason = reason?.rawValue
        self.reasonArgument = reasonArgument
    }

    /// The status this event reports, its message in `language` when the event names one this version knows.
    public func complianceStatus(in language: MessageLanguage) -> ComplianceStatus {
        var status = ComplianceStatus(status: status, errorTitle: errorTitle, errorMessage: errorMessage)
        status.reason = reason.flatMap(ComplianceMessage.init(rawValue:))
        status.reasonArgument = status.reason == nil ? nil : reasonArgument
        return status.localized(language)
    }
}

/// The app's managed configuration changed (PROTOCOL §8.2): fetch `GET …/configuration` again.
public struct ConfigurationChangedEvent: Codable, Sendable, Equatable {
    public var enrollmentId: String
    public var version: String

    public init(enrollmentId: String, version: String) {
        self.enrollmentId = enrollmentId
        self.version = version
    }
}

/// `GET /mam/v1/enrollments/{id}/configuration` (PROTOCOL §8.2).
public struct ManagedConfigurationResponse: Codable, Sendable, Equatable {
    public struct Secret: Codable, Sendable, Equatable {
        public var identifier: String
        /// `password`, `certificate` or `identity`.
        public var kind: String
        /// The material's version; none for a device identity (issued on request).
        public var version: String?
        /// Identities: `uploaded` or `device`.
        public var issuance: String?

        public init(identifier: String, kind: String, version: String?, issuance: String? = nil) {
            self.identifier = identifier
            self.kind = kind
            self.version = version
            self.issuance = issuance
        }
    }
    public var version: String
    /// `nil` when no policy targets the account and app (unmanaged).
    public var configuration: [String: JSONValue]?
    public var secrets: [Secret]

    public init(version: String, configuration: [String: JSONValue]?, secrets: [Secret] = []) {
        self.version = version
        self.configuration = configuration
        self.secrets = secrets
    }

    enum CodingKeys: String, CodingKey { case version, configuration, secrets }

    // `configuration: null` is written out (an unmanaged app reads null, not a missing member).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(version, forKey: .version)
        if let configuration { try container.encode(configuration, forKey: .configuration) } else { try container.encodeNil(forKey: .configuration) }
        try container.encode(secrets, forKey: .secrets)
    }
}

/// `GET /mam/v1/enrollments/{id}/secrets/{identifier}` (PROTOCOL §8.2): the material sealed with HPKE to the
/// enrollment's `appKey`.
public struct SealedSecretResponse: Codable, Sendable, Equatable {
    public struct Sealed: Codable, Sendable, Equatable {
        /// The encapsulated key and the ciphertext, base64url.
        public var enc: String
        public var ciphertext: String
        public init(enc: String, ciphertext: String) {
            self.enc = enc
            self.ciphertext = ciphertext
        }
    }
    public var identifier: String
    public var kind: String
    public var version: String
    public var sealed: Sealed

    public init(identifier: String, kind: String, version: String, sealed: Sealed) {
        self.identifier = identifier
        self.kind = kind
        self.version = version
        self.sealed = sealed
    }

    /// The HPKE `info` a secret is sealed with: `portcullis-secret-v1:{enrollmentId}:{identifier}:{version}`.
    public static func info(enrollmentId: String, identifier: String, version: String) -> Data {
        Data("portcullis-secret-v1:\(enrollmentId):\(identifier):\(version)".utf8)
    }
}

/// The opened material of a sealed secret (its plaintext is this JSON object).
public struct SecretMaterial: Codable, Sendable, Equatable {
    public var password: String?
    /// PEM certificates, the leaf first.
    public var certificatesPem: String?
    /// PKCS #8 PEM (uploaded identities).
    public var privateKeyPem: String?

    public init(password: String? = nil, certificatesPem: String? = nil, privateKeyPem: String? = nil) {
        self.password = password
        self.certificatesPem = certificatesPem
        self.privateKeyPem = privateKeyPem
    }
}

/// `POST /mam/v1/enrollments/{id}/identities/{identifier}`.
public struct IdentityRequest: Codable, Sendable, Equatable {
    /// A PEM PKCS #10 request signed by the enrollment's `appKey`.
    public var csr: String
    public init(csr: String) { self.csr = csr }
}

public struct IdentityResponse: Codable, Sendable, Equatable {
    /// The issued certificate, then the issuing CA's.
    public var certificatesPem: String
    public var notAfter: String
    public init(certificatesPem: String, notAfter: String) {
        self.certificatesPem = certificatesPem
        self.notAfter = notAfter
    }
}

/// The claims of a compliance callback SET.
public struct ComplianceSecurityEvent: Codable, Sendable, Equatable {
    public struct Events: Codable, Sendable, Equatable {
        public var deviceComplianceChange: DeviceComplianceChangeEvent?
        public var complianceStatus: ComplianceStatusEvent?
        public var configurationChanged: ConfigurationChangedEvent?

        public init(
            deviceComplianceChange: DeviceComplianceChangeEvent?, complianceStatus: ComplianceStatusEvent?,
            configurationChanged: ConfigurationChangedEvent? = nil
        ) {
            self.deviceComplianceChange = deviceComplianceChange
            self.complianceStatus = complianceStatus
            self.configurationChanged = configurationChanged
        }

        enum CodingKeys: String, CodingKey {
            case deviceComplianceChange = "https://schemas.openid.net/secevent/caep/event-type/device-compliance-change"
            case complianceStatus = "urn:portcullis:secevent:compliance-status"
            case configurationChanged = "urn:portcullis:secevent:configuration-changed"
        }
    }

    public var iss: String
    /// The client application the event is for.
    public var aud: String
    public var iat: Int
    public var jti: String
    public var events: Events

    public init(iss: String, aud: String, iat: Int, jti: String, events: Events) {
        self.iss = iss
        self.aud = aud
        self.iat = iat
        self.jti = jti
        self.events = events
    }
}
