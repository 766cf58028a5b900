public import Foundation

/// The impact of draft policies (PROTOCOL §11): stored sign-ins are replayed — their recorded facts — through
/// the same evaluation as the token endpoint, once with the tenant's current policies ("before") and once
/// with the drafts applied ("after"), and the outcomes compared. Pure: nothing is issued, recorded or
/// enforced. Group membership and whether the client is an approved app are today's (the directory of the
/// moment of the replay); everything else is what the sign-in recorded.
public enum ImpactAnalysis {
    /// One side of a comparison: what conditional access decided.
    public struct Outcome: Codable, Sendable, Equatable {
        public var status: Decision.Status
        /// `block`, `mfa`, `authenticationStrength`, `termsOfUse`, `approvedApplication` or `compliantApplication` when refused.
        public var refusal: String?
        public var policyIds: [String]

        init(_ decision: Decision) {
            status = decision.status
            refusal = decision.refusal?.name
            policyIds = decision.refusal?.policyIds ?? []
        }

        var refused: Bool { refusal != nil }
    }

    public struct Change: Codable, Sendable, Equatable {
        public var signInId: String
        public var createdDateTime: Date
        public var userId: String?
        public var userPrincipalName: String?
        public var clientAppId: String
        public var resourceAppId: String
        public var before: Outcome
        public var after: Outcome
        /// How many sign-ins the record stands for (an aggregate's count; 1 otherwise).
        public var count: Int
    }

    public struct Summary: Codable, Sendable, Equatable {
        /// Allowed before, refused with the drafts.
        public var newlyRefused = 0
        /// Refused before, allowed with the drafts.
        public var newlyAllowed = 0
        /// Refused both ways, for another reason (another control or other policies).
        public var changed = 0
        public var unchanged = 0
    }

    public struct Report: Codable, Sendable, Equatable {
        /// Sign-ins replayed: an aggregate counts as many as it stands for (the summary's counts too).
        public var evaluated: Int
        public var summary: Summary
        /// The changed sign-ins, newest first, at most `changesLimit`.
        public var changes: [Change]
        /// More changes than listed.
        public var truncated: Bool
    }

    /// The facts a record kept, as the evaluation takes them.
    public static func facts(of record: SignInRecord, directory: DirectorySnapshot) -> SignInFacts {
        let client = directory.application(appId: AppID(record.clientAppId))
        let protection: SignInFacts.AppProtection =
            switch record.appProtection {
            case "compliant": .compliant(enrollmentId: "recorded")
            case "notCompliant": .notCompliant
            default: .none
            }
        var input = SignInFacts.Input(
            userId: record.userId.map { ObjectID($0) }, clientAppId: AppID(record.clientAppId), resourceAppId: AppID(record.resourceAppId),
            authentication: AuthenticationContext(methods: record.authenticationMethods ?? [], time: nil),
            capabilities: ClaimsRequest(
                capabilities: record.capabilities,
                authenticationContexts: (record.authenticationContextClassReferences ?? []).filter { $0.detail == .required }.map(\.id)))
        input.clientAppType = SignInFacts.ClientAppType(rawValue: record.clientAppType) ?? .mobileAppsAndDesktopClients
        input.platform = record.platform.flatMap(DevicePlatform.init(caseInsensitive:))
        input.ipAddress = record.ipAddress.flatMap(IPAddress.init)
        input.appProtection = protection
        input.approvedClientApp = client?.approvedClientApp ?? false
        input.transferMethod = record.originalTransferMethod ?? (record.grantType == GrantType.deviceCode.rawValue ? .deviceCodeFlow : nil)
        input.country = record.countryOrRegion
        input.proofOfPossession = record.tokenProtectionStatusDetails?.signInSessionStatus == .bound
        input.device = record.deviceDetail?.facts
        input.risk = record.risk
        let facts = SignInFacts(input, directory: directory)
        return facts
    }

    /// The current policies with the drafts applied: a draft replaces the policy with its ID, or is added.
    public static func applying(_ drafts: [ConditionalAccessPolicy], to current: [ConditionalAccessPolicy]) -> [ConditionalAccessPolicy] {
        let draftIds = Set(drafts.map(\.id))
        return current.filter { !draftIds.contains($0.id) } + drafts
    }

    public static func replay(
        _ records: [SignInRecord], directory: DirectorySnapshot, current: CompiledPolicySet, drafted: CompiledPolicySet,
        changesLimit: Int = 100
    ) -> Report {
        var summary = Summary()
        var changes: [Change] = []
        var truncated = false
        var evaluated = 0
        for record in records {
            let facts = facts(of: record, directory: directory)
            let before = Outcome(current.evaluate(facts))
            let after = Outcome(drafted.evaluate(facts))
            let count = record.count
            evaluated += count
            switch (before.refused, after.refused) {
            case (false, true): summary.newlyRefused += count
            case (true, false): summary.newlyAllowed += count
            case (true, true) where before != after: summary.changed += count
            default:
                summary.unchanged += count
                continue
            }
            guard changes.count < changesLimit else {
                truncated = true
                continue
            }
            changes.append(
                Change(
                    signInId: record.id, createdDateTime: record.createdDateTime, userId: record.userId?.rawValue, userPrincipalName: record.userPrincipalName,
                    clientAppId: record.clientAppId.rawValue, resourceAppId: record.resourceAppId.rawValue, before: before, after: after, count: count))
        }
        return Report(evaluated: evaluated, summary: summary, changes: changes, truncated: truncated)
    }
}
