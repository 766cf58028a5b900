/// A tenant's conditional-access policies, compiled for evaluation: sets instead of arrays, CIDR ranges
/// parsed once, and an index by resource and by user/group (or client, for workload identities), so that
/// a sign-in only looks at the policies that could apply to it. Evaluation is pure and synchronous.
public struct CompiledPolicySet: Sendable {
    struct LocationSet: Sendable {
        var all = false
        var trusted = false
        var ranges: [IPRange] = []

        func contains(_ ip: IPAddress?, trustedRanges: [IPRange]) -> Bool {
            if all { return true }
            guard let ip else { return false }
            if trusted && trustedRanges.contains(where: { $0.contains(ip) }) { return true }
            return ranges.contains { $0.contains(ip) }
        }
    }

    struct Entry: Sendable {
        let policy: ConditionalAccessPolicy
        let isWorkload: Bool
        let allUsers: Bool
        let users: Set<String>
        let groups: Set<String>
        let excludedUsers: Set<String>
        let excludedGroups: Set<String>
        let allClients: Bool
        let clients: Set<String>
        let excludedClients: Set<String>
        let allApplications: Bool
        let applications: Set<String>
        let excludedApplications: Set<String>
        let clientAppTypes: Set<SignInFacts.ClientAppType>?
        let allPlatforms: Bool
        let platforms: Set<DevicePlatform>?
        let excludedPlatforms: Set<DevicePlatform>
        let locations: LocationSet?
        let excludedLocations: LocationSet
        let controls: [ConditionalAccessPolicy.Control]
    }

    let entries: [Entry]
    /// resource key ("*" = All) → subject key ("*" = All, user ID, "g:" + group ID) → entry indices.
    let userIndex: [String: [String: [Int]]]
    /// resource key → client key ("*" = every service principal, or a client app ID) → entry indices.
    let workloadIndex: [String: [String: [Int]]]
    let trustedRanges: [IPRange]

    public var count: Int { entries.count }
    public var policies: [ConditionalAccessPolicy] { entries.map(\.policy) }

    public init(policies: [ConditionalAccessPolicy], namedLocations: [NamedLocation]) {
        let sorted = policies.sorted { $0.id < $1.id }
        var rangesByLocation: [String: [IPRange]] = [:]
        var trusted: [IPRange] = []
        for location in namedLocations {
            let ranges = location.ipRanges.compactMap(IPRange.init)
            rangesByLocation[location.id] = ranges
            if location.isTrusted { trusted += ranges }
        }
        func locationSet(_ ids: [String]) -> LocationSet {
            var set = LocationSet()
            for id in ids {
                switch id {
                case ConditionalAccessPolicy.all: set.all = true
                case ConditionalAccessPolicy.allTrusted: set.trusted = true
                default: set.ranges += rangesByLocation[id] ?? []
                }
            }
            return set
        }

        var entries: [Entry] = []
        var userIndex: [String: [String: [Int]]] = [:]
        var workloadIndex: [String: [String: [Int]]] = [:]
        for policy in sorted {
            let c = policy.conditions
            let users = c.users
            let appTypes = c.clientAppTypes.contains("all") ? nil : Set(c.clientAppTypes.compactMap(SignInFacts.ClientAppType.init(rawValue:)))
            let includePlatforms = c.platforms?.includePlatforms ?? []
            let entry = Entry(
                policy: policy,
                isWorkload: c.clientApplications != nil,
                allUsers: users?.includeUsers.contains(ConditionalAccessPolicy.all) ?? false,
                users: Set((users?.includeUsers ?? []).filter { $0 != ConditionalAccessPolicy.all && $0 != ConditionalAccessPolicy.none }),
                groups: Set(users?.includeGroups ?? []),
                excludedUsers: Set(users?.excludeUsers ?? []),
                excludedGroups: Set(users?.excludeGroups ?? []),
                allClients: c.clientApplications?.includeServicePrincipals.contains(ConditionalAccessPolicy.servicePrincipalsInMyTenant) ?? false,
                clients: Set((c.clientApplications?.includeServicePrincipals ?? []).filter { $0 != ConditionalAccessPolicy.servicePrincipalsInMyTenant }),
                excludedClients: Set(c.clientApplications?.excludeServicePrincipals ?? []),
                allApplications: c.applications.includeApplications.contains(ConditionalAccessPolicy.all),
                applications: Set(c.applications.includeApplications.filter { $0 != ConditionalAccessPolicy.all && $0 != ConditionalAccessPolicy.none }),
                excludedApplications: Set(c.applications.excludeApplications),
                clientAppTypes: appTypes,
                allPlatforms: includePlatforms.contains("all"),
                platforms: c.platforms == nil ? nil : Set(includePlatforms.compactMap(DevicePlatform.init(rawValue:))),
                excludedPlatforms: Set((c.platforms?.excludePlatforms ?? []).compactMap(DevicePlatform.init(rawValue:))),
                locations: c.locations.map { locationSet($0.includeLocations) },
                excludedLocations: locationSet(c.locations?.excludeLocations ?? []),
                controls: policy.grantControls.builtInControls)
            let index = entries.count
            entries.append(entry)
            let resourceKeys = (entry.allApplications ? ["*"] : []) + entry.applications.sorted()
            if entry.isWorkload {
                let clientKeys = (entry.allClients ? ["*"] : []) + entry.clients.sorted()
                for resource in resourceKeys { for client in clientKeys { workloadIndex[resource, default: [:]][client, default: []].append(index) } }
            } else {
                let subjectKeys = (entry.allUsers ? ["*"] : []) + entry.users.sorted() + entry.groups.sorted().map { "g:" + $0 }
                for resource in resourceKeys { for subject in subjectKeys { userIndex[resource, default: [:]][subject, default: []].append(index) } }
            }
        }
        self.entries = entries
        self.userIndex = userIndex
        self.workloadIndex = workloadIndex
        self.trustedRanges = trusted
    }

    /// Evaluates a sign-in. With `explain`, every policy is reported (what-if); otherwise only the policies
    /// the index says could apply (every other policy did not apply, by construction).
    public func evaluate(_ facts: SignInFacts, explain: Bool = false) -> Decision {
        let candidates = explain ? Array(entries.indices) : candidateIndices(facts)
        var applied: [Decision.AppliedPolicy] = []
        applied.reserveCapacity(candidates.count)
        var anyEnforcedApplied = false
        var blocking: [String] = []
        var unmet: [ConditionalAccessPolicy.Control: [String]] = [:]
        let exempt = facts.resourceAppId == BuiltInResources.complianceAppId

        for index in candidates {
            let entry = entries[index]
            let policy = entry.policy
            let notSatisfied = unmatchedConditions(entry, facts)
            let applies = notSatisfied.isEmpty
            var result: Decision.PolicyResult
            var policyUnmet: [ConditionalAccessPolicy.Control] = []
            if policy.state == .disabled {
                result = .notEnabled
            } else if !applies {
                result = policy.state == .reportOnly ? .reportOnlyNotApplied : .notApplied
            } else {
                let satisfied = entry.controls.map { control -> Bool in
                    switch control {
                    case .block: false
                    case .mfa: facts.multiFactorAuthenticated
                    case .approvedApplication: exempt || facts.approvedClientApp
                    case .compliantApplication: exempt || facts.appProtection.isCompliant
                    }
                }
                let granted = policy.grantControls.operator == .and ? !satisfied.contains(false) : satisfied.contains(true)
                if !granted {
                    policyUnmet = policy.grantControls.operator == .and
                        ? zip(entry.controls, satisfied).filter { !$0.1 }.map(\.0)
                        : entry.controls
                }
                if policy.state == .reportOnly {
                    result = granted ? .reportOnlySuccess : .reportOnlyFailure
                } else {
                    anyEnforcedApplied = true
                    result = granted ? .success : .failure
                    if policyUnmet.contains(.block) {
                        blocking.append(policy.id)
                    } else {
                        for control in policyUnmet { unmet[control, default: []].append(policy.id) }
                    }
                }
            }
            applied.append(Decision.AppliedPolicy(
                id: policy.id, displayName: policy.displayName, result: result,
                enforcedGrantControls: applies && policy.state != .disabled ? entry.controls.map(\.rawValue) : [],
                conditionsNotSatisfied: policy.state == .disabled ? [] : notSatisfied))
        }

        var refusal: Decision.Refusal?
        if !blocking.isEmpty {
            refusal = .block(policyIds: blocking)
        } else if let first = unmet.keys.min() {
            let ids = unmet[first] ?? []
            switch first {
            case .block: refusal = .block(policyIds: ids)
            case .mfa: refusal = .mfa(policyIds: ids)
            case .approvedApplication: refusal = .approvedApplication(policyIds: ids)
            case .compliantApplication: refusal = .compliantApplication(policyIds: ids)
            }
        }
        let status: Decision.Status = !anyEnforcedApplied ? .notApplied : (refusal == nil ? .success : .failure)
        return Decision(status: status, policies: applied, refusal: refusal)
    }

    func candidateIndices(_ facts: SignInFacts) -> [Int] {
        var found: [Int] = []
        for resource in [facts.resourceAppId, "*"] {
            if let userId = facts.userId {
                guard let bySubject = userIndex[resource] else { continue }
                if let hits = bySubject["*"] { found += hits }
                if let hits = bySubject[userId] { found += hits }
                for group in facts.groupIds { if let hits = bySubject["g:" + group] { found += hits } }
            } else {
                guard let byClient = workloadIndex[resource] else { continue }
                if let hits = byClient["*"] { found += hits }
                if let hits = byClient[facts.clientAppId] { found += hits }
            }
        }
        if found.count > 1 {
            found.sort()
            var unique: [Int] = []
            unique.reserveCapacity(found.count)
            for index in found where unique.last != index { unique.append(index) }
            return unique
        }
        return found
    }

    /// The conditions of `entry` that the sign-in does not meet (empty: the policy applies).
    func unmatchedConditions(_ entry: Entry, _ facts: SignInFacts) -> [String] {
        var failed: [String] = []
        if let userId = facts.userId {
            if entry.isWorkload {
                failed.append("servicePrincipals")
            } else {
                let included = entry.allUsers || entry.users.contains(userId) || facts.groupIds.contains { entry.groups.contains($0) }
                let excluded = entry.excludedUsers.contains(userId) || facts.groupIds.contains { entry.excludedGroups.contains($0) }
                if !included || excluded { failed.append("users") }
            }
        } else {
            if !entry.isWorkload {
                failed.append("users")
            } else {
                let included = entry.allClients || entry.clients.contains(facts.clientAppId)
                if !included || entry.excludedClients.contains(facts.clientAppId) { failed.append("servicePrincipals") }
            }
        }
        let appIncluded = entry.allApplications || entry.applications.contains(facts.resourceAppId)
        if !appIncluded || entry.excludedApplications.contains(facts.resourceAppId) { failed.append("application") }
        if let types = entry.clientAppTypes, !types.contains(facts.clientAppType) { failed.append("clientType") }
        if let platforms = entry.platforms {
            let included = entry.allPlatforms || (facts.platform.map { platforms.contains($0) } ?? false)
            let excluded = facts.platform.map { entry.excludedPlatforms.contains($0) } ?? false
            if !included || excluded { failed.append("devicePlatform") }
        }
        if let locations = entry.locations {
            let included = locations.contains(facts.ipAddress, trustedRanges: trustedRanges)
            let excluded = entry.excludedLocations.contains(facts.ipAddress, trustedRanges: trustedRanges)
            if !included || excluded { failed.append("location") }
        }
        return failed
    }
}
