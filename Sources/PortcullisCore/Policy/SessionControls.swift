public import Foundation

/// Graph's `conditionalAccessSessionControls` (PROTOCOL §13, §15): the three this server enforces. A policy may carry
/// them with no grant controls: it then grants nothing and only adds its session controls to the sign-ins it applies to.
public struct SessionControls: Codable, Sendable, Equatable {
    public var signInFrequency: SignInFrequency?
    public var persistentBrowser: PersistentBrowser?
    /// Token protection (`secureSignInSession: {"isEnabled": true}`): tokens for what the policy targets are issued only
    /// to a request with a DPoP proof, bound to its key (PROTOCOL §15).
    public var secureSignInSession: SecureSignInSession?
    /// Graph's `applicationEnforcedRestrictions` (PROTOCOL §17): the access token says so (`xms_app_res: true`), for the
    /// resource to limit what it offers (SharePoint's and Exchange's "limited access" in Entra).
    public var applicationEnforcedRestrictions: ApplicationEnforcedRestrictions?
    /// Graph's `continuousAccessEvaluation` (PROTOCOL §17): strict location enforcement, or CAE turned off.
    public var continuousAccessEvaluation: ContinuousAccessEvaluationControl?
    /// Graph's `cloudAppSecurity`, kept only in a policy that enforces nothing (PROTOCOL §17: there is no session proxy).
    public var cloudAppSecurity: CloudAppSecurity?

    public init(
        signInFrequency: SignInFrequency? = nil, persistentBrowser: PersistentBrowser? = nil, secureSignInSession: SecureSignInSession? = nil,
        applicationEnforcedRestrictions: ApplicationEnforcedRestrictions? = nil, continuousAccessEvaluation: ContinuousAccessEvaluationControl? = nil
    ) {
        self.signInFrequency = signInFrequency
        self.persistentBrowser = persistentBrowser
        self.secureSignInSession = secureSignInSession
        self.applicationEnforcedRestrictions = applicationEnforcedRestrictions
        self.continuousAccessEvaluation = continuousAccessEvaluation
    }

    /// Graph's session controls this server does not enforce: refused unless null (or false), never ignored.
    public static let unenforced = [
        "cloudAppSecurity",
        "globalSecureAccessFilteringProfile", "networkAccessSecurity", "blockSensitiveActions",
    ]

    /// Whether the policy demands a bound (DPoP) token.
    public var requiresTokenProtection: Bool { secureSignInSession?.isEnabled == true }

    /// The names Graph's sign-in log uses in `enforcedSessionControls`.
    public var enforcedNames: [String] {
        (signInFrequency == nil ? [] : ["SignInFrequency"]) + (persistentBrowser == nil ? [] : ["PersistentBrowserSessionMode"])
            + (requiresTokenProtection ? ["SecureSignInSession"] : []) + (applicationEnforcedRestrictions == nil ? [] : ["ApplicationEnforcedRestrictions"])
            + (continuousAccessEvaluation == nil ? [] : ["ContinuousAccessEvaluation"])
    }
}

/// Graph's `cloudAppSecuritySessionControl`: read and kept, never enforced (see `SessionControls.cloudAppSecurity`).
public struct CloudAppSecurity: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable, CaseIterable {
        case mcasConfigured, monitorOnly, blockDownloads
    }

    public var isEnabled = true
    public var cloudAppSecurityType: Kind?

    public init(cloudAppSecurityType: Kind?) { self.cloudAppSecurityType = cloudAppSecurityType }
}

/// Graph's `continuousAccessEvaluationSessionControl` (PROTOCOL §17). `strictLocation` (and `strictEnforcement`, its
/// older name): the resource enforces the location policies on the address it sees, not only the token endpoint on the
/// address it saw (the token carries `xms_sle` and `ipaddr`). `disabled`: no long-lived CAE token for the sign-in, even
/// to a client that declares `cp1`.
public struct ContinuousAccessEvaluationControl: Codable, Sendable, Equatable {
    public enum Mode: String, Codable, Sendable, CaseIterable {
        case strictLocation, strictEnforcement, disabled
    }

    public var mode: Mode

    public init(mode: Mode) { self.mode = mode }

    /// Whether the mode asks resources to enforce locations.
    public var enforcesLocationStrictly: Bool { mode != .disabled }
}

/// Graph's `applicationEnforcedRestrictionsSessionControl`.
public struct ApplicationEnforcedRestrictions: Codable, Sendable, Equatable {
    public var isEnabled: Bool

    public init(isEnabled: Bool = true) { self.isEnabled = isEnabled }
}

/// Graph's `secureSignInSessionControl`.
public struct SecureSignInSession: Codable, Sendable, Equatable {
    public var isEnabled: Bool

    public init(isEnabled: Bool = true) { self.isEnabled = isEnabled }
}

/// Graph's `signInFrequencySessionControl`: re-authenticate after a time (`timeBased`: `value` hours or days) or at
/// every sign-in (`everyTime`, with 5 minutes of skew).
public struct SignInFrequency: Codable, Sendable, Equatable {
    public enum Unit: String, Codable, Sendable, CaseIterable {
        case hours, days
    }

    public enum Interval: String, Codable, Sendable, CaseIterable {
        case timeBased, everyTime
    }

    public var isEnabled: Bool
    public var type: Unit?
    public var value: Int?
    public var frequencyInterval: Interval
    public var authenticationType: String

    public init(type: Unit?, value: Int?, frequencyInterval: Interval) {
        self.isEnabled = true
        self.type = type
        self.value = value
        self.frequencyInterval = frequencyInterval
        self.authenticationType = "primaryAndSecondaryAuthentication"
    }

    /// `everyTime`'s allowance for the time between the sign-in and the grant that follows it.
    public static let everyTimeSkew: TimeInterval = 300

    /// How long an authentication stays good enough.
    public var maximumAge: TimeInterval {
        switch frequencyInterval {
        case .everyTime: return Self.everyTimeSkew
        case .timeBased: return TimeInterval(value ?? 0) * (type == .days ? 86_400 : 3_600)
        }
    }
}

/// Graph's `persistentBrowserSessionControl`: `never` makes the session cookie last only as long as the browser;
/// `always` keeps it for the session's lifetime.
public struct PersistentBrowser: Codable, Sendable, Equatable {
    public enum Mode: String, Codable, Sendable, CaseIterable {
        case always, never
    }

    public var isEnabled: Bool
    public var mode: Mode

    public init(mode: Mode) {
        self.isEnabled = true
        self.mode = mode
    }
}

/// The session controls in force for one sign-in: the strictest of every enabled policy that applied.
public struct AppliedSessionControls: Sendable, Equatable {
    /// The shortest maximum age of the authentication, if any policy set one.
    public var maximumAuthenticationAge: TimeInterval?
    /// `never` when any policy said so, else `always` when one did.
    public var persistentBrowser: PersistentBrowser.Mode?
    /// A policy that applied demands token protection (the grant went through only because the request was bound).
    public var requiresTokenProtection = false
    /// A policy that applied asks the resource to restrict itself (`xms_app_res`).
    public var applicationEnforcedRestrictions = false
    /// A policy that applied asks for strict location enforcement (`xms_sle`, PROTOCOL §17).
    public var strictLocation = false
    /// A policy that applied turned continuous access evaluation off: the token keeps the usual lifetime.
    public var continuousAccessEvaluationDisabled = false

    public init(maximumAuthenticationAge: TimeInterval? = nil, persistentBrowser: PersistentBrowser.Mode? = nil) {
        self.maximumAuthenticationAge = maximumAuthenticationAge
        self.persistentBrowser = persistentBrowser
    }

    mutating func add(_ controls: SessionControls) {
        if let frequency = controls.signInFrequency, frequency.isEnabled {
            maximumAuthenticationAge = min(maximumAuthenticationAge ?? .infinity, frequency.maximumAge)
        }
        if let browser = controls.persistentBrowser, browser.isEnabled {
            persistentBrowser = browser.mode == .never || persistentBrowser == .never ? .never : .always
        }
        if controls.requiresTokenProtection { requiresTokenProtection = true }
        if controls.applicationEnforcedRestrictions?.isEnabled == true { applicationEnforcedRestrictions = true }
        if let evaluation = controls.continuousAccessEvaluation {
            if evaluation.enforcesLocationStrictly { strictLocation = true } else { continuousAccessEvaluationDisabled = true }
        }
    }

    /// Whether an authentication at `authTime` is too old at `now` (an unknown time is too old when an age is set).
    public func requiresReauthentication(authTime: Date?, now: Date) -> Bool {
        guard let maximum = maximumAuthenticationAge else { return false }
        guard let authTime else { return true }
        return now.timeIntervalSince(authTime) > maximum
    }
}
