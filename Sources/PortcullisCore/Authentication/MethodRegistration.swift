/// What conditional access asks of a sign-in on the page, and whether a user may register a sign-in method
/// (PROTOCOL §10, §12.2, §12.3): the decisions the sign-in page, device login and Security info share.
extension CompiledPolicySet {
    /// The strengths the policies require (a policy without one adds nothing).
    public func strengths(ofPolicies policyIds: [String]) -> [AuthenticationStrengthPolicy] {
        let ids = Set(policyIds.map { PolicyID($0) })
        return entries.filter { ids.contains($0.policy.id) }.compactMap(\.strength)
    }

    /// Whether an authenticator-app code would meet what a refusal asks of a sign-in that has not given one: the
    /// refusal is `mfa`, or strengths that password + code meet (a `block` is decided before this; app protection and
    /// approved apps are decided at redemption).
    public func codeMissing(_ facts: SignInFacts, refusal: Decision.Refusal?) -> Bool {
        guard !facts.multiFactorAuthenticated else { return false }
        switch refusal {
        case .mfa, .riskRemediation: return true
        case .authenticationStrength(let policyIds):
            return strengths(ofPolicies: policyIds).allSatisfy { $0.allowedCombinations.contains(.passwordSoftwareOath) }
        default: return false
        }
    }

    /// Whether an address is in one of the tenant's trusted named locations.
    public func isTrusted(_ address: IPAddress?) -> Bool {
        guard let address else { return false }
        return trustedRanges.contains { $0.contains(address) }
    }
}

/// Whether a user may register a sign-in method now (PROTOCOL §12.3). Conditional access first: the policies for the
/// user action `urn:user:registersecurityinfo` (a block, `mfa`, a strength). Then the rule: a user who has a method
/// must have satisfied `mfa` (a temporary access pass does); a first method with a password alone only where the
/// tenant's `passwordOnlyRegistration` allows it (default: from a trusted named location).
public enum MethodRegistration {
    public enum Refusal: Sendable, Equatable {
        case blockedByPolicy
        case verifyFirst
        case strongerSignInRequired
        case firstMethodOutsideTrustedLocations
        case firstMethodNeedsPass

        /// In words for the page.
        public var message: String {
            switch self {
            case .blockedByPolicy:
                "Your organization does not allow adding sign-in methods from here (a conditional access policy blocks it)."
            case .verifyFirst:
                "To add a sign-in method, first verify with one you already have."
            case .strongerSignInRequired:
                "Your organization requires a stronger sign-in to add a method: sign in with a passkey, or ask your administrator for a temporary access pass."
            case .firstMethodOutsideTrustedLocations:
                "You have no sign-in method yet. A first one can be added from your organization's network, or with a temporary access pass from your administrator."
            case .firstMethodNeedsPass:
                "You have no sign-in method yet. Ask your administrator for a temporary access pass, then sign in with it to add one."
            }
        }
    }

    /// `nil` when the sign-in described by `facts` (the registering user, their authentication and address) may register.
    public static func refusal(
        _ facts: SignInFacts, policies: CompiledPolicySet, hasMethod: Bool, passwordOnly: Tenant.PasswordOnlyRegistration?
    ) -> Refusal? {
        var facts = facts
        facts.userAction = ConditionalAccessPolicy.UserAction.registerSecurityInfo
        switch policies.evaluate(facts).refusal {
        case .none: break
        case .block: return .blockedByPolicy
        case let refusal: return hasMethod && policies.codeMissing(facts, refusal: refusal) ? .verifyFirst : .strongerSignInRequired
        }
        if facts.multiFactorAuthenticated { return nil }
        if hasMethod { return .verifyFirst }
        switch passwordOnly ?? .trustedLocations {
        case .anywhere: return nil
        case .trustedLocations: return policies.isTrusted(facts.ipAddress) ? nil : .firstMethodOutsideTrustedLocations
        case .never: return .firstMethodNeedsPass
        }
    }
}
