public import Foundation

/// The outcome of conditional access for one sign-in (PROTOCOL §3): per-policy results and, when access
/// is refused, the refusal to send.
public struct Decision: Sendable, Equatable {
    public enum Status: String, Sendable, Codable {
        case success, failure, notApplied
    }

    public enum PolicyResult: String, Sendable, Codable {
        case success, failure, notApplied, notEnabled, reportOnlySuccess, reportOnlyFailure, reportOnlyNotApplied
    }

    /// A condition of a policy that a sign-in did not meet (Graph's `conditionsNotSatisfied` values).
    public enum Condition: String, Sendable, Codable, CaseIterable {
        case users, servicePrincipals, application, clientType, devicePlatform, location, authenticationFlows
        /// The filter for devices did not admit the device (PROTOCOL §18).
        case deviceState
        /// The sign-in's, the user's, the workload identity's or the insider risk is not one of the policy's levels (PROTOCOL §19).
        case signInRisk, userRisk, servicePrincipalRisk, insiderRisk
    }

    /// Whether one grant control of an applying policy was met by this sign-in, and why.
    public struct ControlResult: Sendable, Equatable, Codable {
        public var control: String
        public var satisfied: Bool
        public var reason: String

        public init(control: String, satisfied: Bool, reason: String) {
            self.control = control
            self.satisfied = satisfied
            self.reason = reason
        }
    }

    /// One policy's verdict, in the shape of Graph's `appliedConditionalAccessPolicy`.
    public struct AppliedPolicy: Sendable, Equatable, Codable {
        public var id: String
        public var displayName: String
        public var result: PolicyResult
        /// The controls the policy demands (when it applied).
        public var enforcedGrantControls: [String]
        /// The conditions that did not match (when it did not apply).
        public var conditionsNotSatisfied: [Condition]
        /// Each demanded control, met or not, with the reason (when it applied; absent in records written
        /// before it existed).
        public var grantControlResults: [ControlResult]?
        /// The session controls the policy added (Graph's names: `SignInFrequency`, `PersistentBrowserSessionMode`), when
        /// it applied and carries any.
        public var enforcedSessionControls: [String]?

        public init(
            id: String, displayName: String, result: PolicyResult, enforcedGrantControls: [String], conditionsNotSatisfied: [Condition],
            grantControlResults: [ControlResult]? = nil, enforcedSessionControls: [String]? = nil
        ) {
            self.id = id
            self.displayName = displayName
            self.result = result
            self.enforcedGrantControls = enforcedGrantControls
            self.conditionsNotSatisfied = conditionsNotSatisfied
            self.grantControlResults = grantControlResults
            self.enforcedSessionControls = enforcedSessionControls
        }
    }

    /// Why the token is refused, in report order.
    public enum Refusal: Sendable, Equatable {
        case block(policyIds: [String])
        case mfa(policyIds: [String])
        /// An authentication strength the sign-in did not meet (PROTOCOL §12.2).
        case authenticationStrength(policyIds: [String])
        case approvedApplication(policyIds: [String])
        case compliantApplication(policyIds: [String])
        /// Terms of use the user has not accepted (or whose acceptance expired), PROTOCOL §17: the page asks for them.
        case termsOfUse(policyIds: [String])
        /// A device that is not compliant, not hybrid joined, or not proven at all (PROTOCOL §18): 53000, 53001.
        case compliantDevice(policyIds: [String])
        case domainJoinedDevice(policyIds: [String])
        /// The user's risk asks for a secure password change (PROTOCOL §19): 50142 on a grant, the page asks for it.
        case passwordChange(policyIds: [String])
        /// The user's risk asks for a multi-factor sign-in made after it was raised (PROTOCOL §19).
        case riskRemediation(policyIds: [String])
        /// Token protection (`secureSignInSession`) and a request without a DPoP proof (PROTOCOL §15).
        case tokenProtection(policyIds: [String])
        /// A sign-in frequency of the applying policies that the authentication no longer meets (PROTOCOL §13): the user
        /// signs in again. Decided with the time of the grant (`GrantDecision`, `InteractiveDecision`), not by `evaluate`.
        case signInFrequency

        /// The refusal's name as impact analysis and the sign-in log show it: the control unmet (Graph's name).
        public var name: String {
            switch self {
            case .block: "block"
            case .mfa: "mfa"
            case .authenticationStrength: "authenticationStrength"
            case .approvedApplication: "approvedApplication"
            case .compliantApplication: "compliantApplication"
            case .termsOfUse: "termsOfUse"
            case .compliantDevice: "compliantDevice"
            case .domainJoinedDevice: "domainJoinedDevice"
            case .passwordChange: "passwordChange"
            case .riskRemediation: "riskRemediation"
            case .tokenProtection: "secureSignInSession"
            case .signInFrequency: "signInFrequency"
            }
        }

        /// The policies that refused (none for a sign-in frequency, decided over every applying policy).
        public var policyIds: [String] {
            switch self {
            case .block(let ids), .mfa(let ids), .authenticationStrength(let ids), .approvedApplication(let ids), .compliantApplication(let ids),
                .termsOfUse(let ids), .compliantDevice(let ids), .domainJoinedDevice(let ids), .passwordChange(let ids), .riskRemediation(let ids),
                .tokenProtection(let ids):
                ids
            case .signInFrequency: []
            }
        }
    }

    /// An authentication context a granted sign-in met (PROTOCOL §13).
    public struct MetContext: Sendable, Equatable {
        public var id: String
        /// Asked for (`acrs`, `acr_values`), or met already by this authentication and added unasked.
        public var requested: Bool
        /// For one added unasked: the session controls of its policies (a passed sign-in frequency unmeets it).
        public var sessionControls: AppliedSessionControls
    }

    public var status: Status
    public var policies: [AppliedPolicy]
    public var refusal: Refusal?
    /// The session controls of the enabled policies that applied (PROTOCOL §13).
    public var sessionControls: AppliedSessionControls
    /// The authentication contexts met (none when refused), in their natural order, asked-for ones first.
    public var authenticationContexts: [MetContext]
    /// The enabled policies this sign-in escaped only by where it came from, and would not have passed: under strict
    /// location enforcement the resource holds the token to them (PROTOCOL §17).
    public var locationConstraints: [LocationConstraint] = []

    /// One policy's location condition as a resource can check it: IP ranges only (see `StrictLocationConstraint`).
    public struct LocationConstraint: Sendable, Equatable {
        public var policyId: String
        public var include: [IPRange]
        public var exclude: [IPRange]

        public init(policyId: String, include: [IPRange], exclude: [IPRange]) {
            self.policyId = policyId
            self.include = include
            self.exclude = exclude
        }
    }

    public init(
        status: Status, policies: [AppliedPolicy], refusal: Refusal?, sessionControls: AppliedSessionControls = AppliedSessionControls(),
        authenticationContexts: [MetContext] = []
    ) {
        self.status = status
        self.policies = policies
        self.refusal = refusal
        self.sessionControls = sessionControls
        self.authenticationContexts = authenticationContexts
    }

    /// The contexts a token carries in `acrs`: every one asked for, and those added unasked whose sign-in frequency the
    /// authentication at `authTime` still meets at `now`; in their natural order.
    public func acrs(authTime: Date?, now: Date) -> [String] {
        AuthenticationContextClassReference.sorted(
            authenticationContexts.filter { $0.requested || !$0.sessionControls.requiresReauthentication(authTime: authTime, now: now) }.map(\.id))
    }

    /// Whether the compliantApplication control was among the ones demanded by applying, enforced policies.
    public var requiresAppProtection: Bool {
        policies.contains {
            $0.result == .success || $0.result == .failure
                ? $0.enforcedGrantControls.contains(ConditionalAccessPolicy.Control.compliantApplication.rawValue) : false
        }
    }
}
