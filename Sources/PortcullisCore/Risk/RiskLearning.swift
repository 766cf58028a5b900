public import Foundation

/// What a recorded sign-in teaches the risk kept for its user or workload identity (PROTOCOL §19), decided here and
/// carried out by the server's risk engine after the sign-in, off the request path.
extension RiskyUser {
    /// Learns from one of the user's sign-ins; `sprayed` says whether its address sprayed wrong passwords (the throttle
    /// store's count, read by the engine). In order: a policy's secure remediation met by the sign-in closes the risk;
    /// its real-time detections become the user's (remediated when it passed with a second factor, as a sign-in risk
    /// policy's MFA does; one already active from the same address is not repeated); then, for a successful sign-in,
    /// atypical travel and password spray, and the profile learns. Returns whether anything changed.
    public mutating func learn(from record: SignInRecord, sprayed: Bool, at now: Date) -> Bool {
        let succeeded = record.succeeded
        var changed = false
        if succeeded, record.metRiskRemediation {
            changed = close(.remediated, detail: .userPassedMFADrivenByRiskBasedPolicy, at: now, initiatedBy: id.rawValue) || changed
        }
        let multiFactor = (record.authenticationMethods ?? []).contains("mfa")
        var found: [RiskDetection] = []
        func detection(_ type: RiskEventType, info: String? = nil) -> RiskDetection {
            RiskDetection(
                type: type, activity: record.createdDateTime, detected: now, requestId: record.id, correlationId: record.correlationId,
                ipAddress: record.ipAddress, countryOrRegion: record.countryOrRegion, additionalInfo: info)
        }
        func active(_ type: RiskEventType) -> Bool {
            detections.contains { $0.riskEventType == type && $0.riskState.isActive && $0.ipAddress == record.ipAddress }
        }
        for type in record.riskEventTypes_v2 ?? [] where !active(type) {
            var one = detection(type)
            if succeeded && multiFactor {
                one.riskState = .remediated
                one.riskDetail = .userPassedMFADrivenByRiskBasedPolicy
            }
            found.append(one)
        }
        if succeeded {
            let signIn = RiskDetector.SignIn(record)
            if let travel = RiskDetector.travel(signIn, profile: profile) {
                found.append(
                    detection(.unlikelyTravel, info: "from \(travel.from): \(Int(travel.kilometres)) km in \(String(format: "%.1f", travel.hours)) h"))
            }
            if sprayed, !active(.passwordSpray) { found.append(detection(.passwordSpray)) }
            if let learned = RiskDetector.learn(signIn, profile: profile, interactive: record.interactive) {
                profile = learned
                changed = true
            }
        }
        if !found.isEmpty {
            add(found, at: now, initiatedBy: nil)
            changed = true
        }
        return changed
    }
}

extension RiskyServicePrincipal {
    /// Learns from the workload identity's own successful sign-in: its network familiar, and — after its learning period —
    /// a network it had not used is `suspiciousSignins` (not repeated while one from the address is active). Returns whether
    /// anything changed.
    public mutating func learn(from record: SignInRecord, at now: Date) -> Bool {
        guard record.succeeded else { return false }
        let address = record.ipAddress.flatMap(IPAddress.init)
        let (learned, unusual) = profile.learning(address, at: record.createdDateTime)
        guard let learned else { return false }
        profile = learned
        if unusual, !detections.contains(where: { $0.riskEventType == .suspiciousSignins && $0.riskState.isActive && $0.ipAddress == record.ipAddress }) {
            add(
                [
                    RiskDetection(
                        type: .suspiciousSignins, activity: record.createdDateTime, detected: now, requestId: record.id, correlationId: record.correlationId,
                        ipAddress: record.ipAddress, countryOrRegion: record.countryOrRegion,
                        additionalInfo: address.map { "a network it had not used: \(AddressProfile.network(of: $0))" })
                ], at: now, initiatedBy: nil)
        }
        return true
    }
}

extension RiskDetector {
    /// Whether a recorded sign-in could be a sprayer's success: an interactive, successful password sign-in from an address.
    public static func mayShowSpray(_ record: SignInRecord) -> Bool {
        record.succeeded && record.interactive && (record.authenticationMethods ?? []).contains("pwd") && record.ipAddress != nil
    }
}

extension RiskDetector.SignIn {
    /// A recorded sign-in as the detections see it.
    public init(_ record: SignInRecord) {
        self.init(
            at: record.createdDateTime, ipAddress: record.ipAddress.flatMap(IPAddress.init), country: record.countryOrRegion,
            platform: record.platform.flatMap(DevicePlatform.init(caseInsensitive:)), clientAppId: record.clientAppId)
    }
}

extension SignInRecord {
    /// Granted: no error, and conditional access did not refuse.
    public var succeeded: Bool { errorCode == nil && conditionalAccessStatus != .failure }

    /// Whether an enforced policy's `riskRemediation` was met by this sign-in (it remediates the user's risk).
    public var metRiskRemediation: Bool {
        appliedConditionalAccessPolicies.contains { policy in
            policy.result == .success
                && (policy.grantControlResults ?? []).contains { $0.control == ConditionalAccessPolicy.Control.riskRemediation.rawValue && $0.satisfied }
        }
    }

    /// What the sign-in teaches the risk engine (who, with what, from where, how it ended): a batch's non-interactive
    /// sign-ins with the same key teach the same thing. Its members as they are, hashed (joined into one string it cost
    /// more than the rest of the engine's pass over a client-credentials grant).
    public struct LearningKey: Hashable, Sendable {
        let tenantId: String
        let userId: String?
        let clientAppId: String
        let ipAddress: String?
        let countryOrRegion: String?
        let platform: String?
        let errorCode: Int?
        let conditionalAccessStatus: String
        let riskEventTypes: [RiskEventType]?
    }

    public var learningKey: LearningKey {
        LearningKey(
            tenantId: tenantId.rawValue, userId: userId?.rawValue, clientAppId: clientAppId.rawValue, ipAddress: ipAddress,
            countryOrRegion: countryOrRegion, platform: platform, errorCode: errorCode, conditionalAccessStatus: conditionalAccessStatus.rawValue,
            riskEventTypes: riskEventTypes_v2)
    }
}
