/// A tenant's conditional-access policies, compiled for evaluation: sets instead of arrays, CIDR ranges
/// parsed once, and an index by resource and by user/group (or client, for workload identities), so that
/// a sign-in only looks at the policies that could apply to it. Evaluation is pure and synchronous.
public struct CompiledPolicySet: Sendable {
    struct LocationSet: Sendable {
        var all = false
        var trusted = false
        var ranges: [IPRange] = []
        /// Countries of country locations (PROTOCOL §13), and whether an unknown country is in.
        var countries: Set<String> = []
        var unknownCountries = false

        func contains(_ ip: IPAddress?, country: String?, trustedRanges: [IPRange]) -> Bool {
            if all { return true }
            if let country { if countries.contains(country) { return true } } else if unknownCountries { return true }
            guard let ip else { return false }
            if trusted && trustedRanges.contains(where: { $0.contains(ip) }) { return true }
            return ranges.contains { $0.contains(ip) }
        }

        /// The ranges a resource checks for this set (PROTOCOL §17): countries are not carried (a resource sees
        /// addresses), so an included country widens nothing and an excluded one spares no address.
        func addressRanges(trustedRanges: [IPRange]) -> [IPRange] {
            if all { return [Self.everyAddress] }
            return (trusted ? trustedRanges : []) + ranges
        }

        static let everyAddress = IPRange("::/0")!
    }

    /// A class, so that reading one from the array costs one retain rather than one per member.
    final class Entry: Sendable {
        let policy: ConditionalAccessPolicy
        let isWorkload: Bool
        let allUsers: Bool
        let users: Set<Int32>
        let groups: Set<Int32>
        let excludedUsers: Set<Int32>
        let excludedGroups: Set<Int32>
        let allClients: Bool
        let clients: Set<Int32>
        let excludedClients: Set<Int32>
        let allApplications: Bool
        let applications: Set<Int32>
        let excludedApplications: Set<Int32>
        /// Directory roles (as symbols of `roleSymbol(_:)`) whose holders the policy includes and excludes.
        let roles: Set<Int32>
        let excludedRoles: Set<Int32>
        /// The policy's user conditions, for its guest conditions (PROTOCOL §17).
        let userConditions: ConditionalAccessPolicy.Users?
        /// Application groups (`Office365`, `MicrosoftAdminPortals`) the policy includes and excludes.
        let applicationGroups: Set<ConditionKeyword>
        let excludedApplicationGroups: Set<ConditionKeyword>
        /// The user actions the policy targets instead of applications (PROTOCOL §12.3).
        let userActions: Set<String>
        /// The authentication contexts the policy targets instead of applications (PROTOCOL §13).
        let contexts: Set<String>
        /// The transfer methods the policy is limited to (`nil`: every sign-in), PROTOCOL §13.
        let transferMethods: Set<TransferMethod>?
        let clientAppTypes: Set<SignInFacts.ClientAppType>?
        let platforms: AllOr<DevicePlatform>?
        let excludedPlatforms: Set<DevicePlatform>
        let locations: LocationSet?
        let excludedLocations: LocationSet
        let controls: [ConditionalAccessPolicy.Control]
        let controlNames: [String]
        /// The strength `authenticationStrength` names (resolved when compiled).
        let strength: AuthenticationStrengthPolicy?
        /// The agreements `termsOfUse` names (PROTOCOL §17).
        let agreements: [PolicyID]
        /// The filter for devices (PROTOCOL §18).
        let deviceFilter: DeviceFilter?
        /// The risk levels the policy is limited to, by kind (`nil`: any), PROTOCOL §19.
        let signInRisk: Set<RiskLevel>?
        let userRisk: Set<RiskLevel>?
        let servicePrincipalRisk: Set<RiskLevel>?
        let insiderRisk: Set<InsiderRiskLevel>?

        init(
            policy: ConditionalAccessPolicy, isWorkload: Bool, allUsers: Bool, users: Set<Int32>, groups: Set<Int32>, excludedUsers: Set<Int32>,
            excludedGroups: Set<Int32>, allClients: Bool, clients: Set<Int32>, excludedClients: Set<Int32>, allApplications: Bool,
            applications: Set<Int32>, excludedApplications: Set<Int32>, roles: Set<Int32> = [], excludedRoles: Set<Int32> = [],
            applicationGroups: Set<ConditionKeyword> = [], excludedApplicationGroups: Set<ConditionKeyword> = [],
            userConditions: ConditionalAccessPolicy.Users? = nil,
            userActions: Set<String>, contexts: Set<String>,
            transferMethods: Set<TransferMethod>?,
            clientAppTypes: Set<SignInFacts.ClientAppType>?,
            platforms: AllOr<DevicePlatform>?, excludedPlatforms: Set<DevicePlatform>, locations: LocationSet?, excludedLocations: LocationSet,
            controls: [ConditionalAccessPolicy.Control], controlNames: [String], strength: AuthenticationStrengthPolicy?, agreements: [PolicyID] = [],
            deviceFilter: DeviceFilter? = nil, risk conditions: ConditionalAccessPolicy.Conditions? = nil
        ) {
            self.signInRisk = conditions?.signInRiskLevels.map(Set.init)
            self.userRisk = conditions?.userRiskLevels.map(Set.init)
            self.servicePrincipalRisk = conditions?.servicePrincipalRiskLevels.map(Set.init)
            self.insiderRisk = conditions?.insiderRiskLevels?.levels
            self.policy = policy
            self.isWorkload = isWorkload
            self.allUsers = allUsers
            self.users = users
            self.groups = groups
            self.excludedUsers = excludedUsers
            self.excludedGroups = excludedGroups
            self.allClients = allClients
            self.clients = clients
            self.excludedClients = excludedClients
            self.allApplications = allApplications
            self.applications = applications
            self.excludedApplications = excludedApplications
            self.roles = roles
            self.excludedRoles = excludedRoles
            self.userConditions = userConditions
            self.applicationGroups = applicationGroups
            self.excludedApplicationGroups = excludedApplicationGroups
            self.userActions = userActions
            self.contexts = contexts
            self.transferMethods = transferMethods
            self.clientAppTypes = clientAppTypes
            self.platforms = platforms
            self.excludedPlatforms = excludedPlatforms
            self.locations = locations
            self.excludedLocations = excludedLocations
            self.controls = controls
            self.controlNames = controlNames
            self.strength = strength
            self.agreements = agreements
            self.deviceFilter = deviceFilter
        }
    }

    let entries: [Entry]
    /// Every user, group and application ID that some policy names, as a small integer (keyed by the identifiers' normal
    /// text: users, groups and applications share Entra's one GUID namespace; roles and groups of applications are
    /// prefixed).
    let symbols: [String: Int32]
    /// (resource symbol or `anyKey`) << 32 | (subject symbol or `anyKey`) → entry indices. Subjects are users
    /// and groups for user policies, client applications for workload-identity policies.
    let userIndex: [UInt64: [Int32]]
    let workloadIndex: [UInt64: [Int32]]
    let trustedRanges: [IPRange]
    /// The tenant's custom authentication strengths (the policies' references are resolved against these and the built-ins).
    public let customStrengths: [AuthenticationStrengthPolicy]
    /// The tenant's authentication contexts, and the IDs of those apps may ask for.
    public let authenticationContexts: [AuthenticationContextClassReference]
    let availableContexts: Set<String>
    /// The entries that target authentication contexts (few; looked through one by one).
    let contextEntries: [Int32]
    static let anyKey: Int32 = -1
    static let unknown: Int32 = -2

    public var count: Int { entries.count }
    public var policies: [ConditionalAccessPolicy] { entries.map(\.policy) }

    static func key(_ resource: Int32, _ subject: Int32) -> UInt64 {
        UInt64(UInt32(bitPattern: resource)) << 32 | UInt64(UInt32(bitPattern: subject))
    }

    public init(
        policies: [ConditionalAccessPolicy], namedLocations: [NamedLocation], strengths: [AuthenticationStrengthPolicy] = [],
        contexts: [AuthenticationContextClassReference] = []
    ) {
        let strengthsById = Dictionary((AuthenticationStrengthPolicy.builtIns + strengths).map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let sorted = policies.sorted { $0.id < $1.id }
        var rangesByLocation: [PolicyID: [IPRange]] = [:]
        var countriesByLocation: [PolicyID: (countries: [String], unknown: Bool)] = [:]
        var trusted: [IPRange] = []
        for location in namedLocations {
            let ranges = location.ipRanges.compactMap(IPRange.init)
            rangesByLocation[location.id] = ranges
            if let countries = location.countriesAndRegions {
                countriesByLocation[location.id] = (countries, location.includeUnknownCountriesAndRegions ?? false)
            }
            if location.isTrusted { trusted += ranges }
        }
        func locationSet(_ selection: LocationSelection?) -> LocationSet {
            var set = LocationSet()
            guard let selection else { return set }
            set.all = selection.contains(.all)
            set.trusted = selection.contains(.allTrusted)
            for id in selection.ids {
                set.ranges += rangesByLocation[id] ?? []
                if let countries = countriesByLocation[id] {
                    set.countries.formUnion(countries.countries)
                    set.unknownCountries = set.unknownCountries || countries.unknown
                }
            }
            return set
        }
        var symbols: [String: Int32] = [:]
        func intern(_ ids: [String]) -> Set<Int32> {
            Set(
                ids.map { id in
                    if let existing = symbols[id] { return existing }
                    let next = Int32(symbols.count)
                    symbols[id] = next
                    return next
                })
        }
        func intern<Kind>(_ ids: [Identifier<Kind>]) -> Set<Int32> { intern(ids.map(\.rawValue)) }

        var entries: [Entry] = []
        var userIndex: [UInt64: [Int32]] = [:]
        var workloadIndex: [UInt64: [Int32]] = [:]
        for policy in sorted {
            let c = policy.conditions
            let users = c.users
            let appTypes: Set<SignInFacts.ClientAppType>? = if case .only(let types) = c.clientAppTypes { types } else { nil }
            let entry = Entry(
                policy: policy,
                isWorkload: c.clientApplications != nil,
                allUsers: users?.includeUsers.contains(.all) ?? false,
                users: intern(users?.includeUsers.ids ?? []),
                groups: intern(users?.includeGroups ?? []),
                excludedUsers: intern(users?.excludeUsers.ids ?? []),
                excludedGroups: intern(users?.excludeGroups ?? []),
                allClients: c.clientApplications?.includeServicePrincipals.contains(.servicePrincipalsInMyTenant) ?? false,
                clients: intern(c.clientApplications?.includeServicePrincipals.ids ?? []),
                excludedClients: intern(c.clientApplications?.excludeServicePrincipals ?? []),
                allApplications: c.applications.includeApplications.contains(.all),
                applications: intern(c.applications.includeApplications.ids),
                excludedApplications: intern(c.applications.excludeApplications.ids),
                roles: intern((users?.includeRoles ?? []).map(Self.roleSymbol)),
                excludedRoles: intern((users?.excludeRoles ?? []).map(Self.roleSymbol)),
                applicationGroups: c.applications.includeApplications.keywords.intersection(Self.applicationGroupKeywords),
                excludedApplicationGroups: c.applications.excludeApplications.keywords.intersection(Self.applicationGroupKeywords),
                userConditions: users,
                userActions: Set(c.applications.includeUserActions ?? []),
                contexts: Set(c.applications.includeAuthenticationContextClassReferences ?? []),
                transferMethods: c.authenticationFlows?.transferMethods,
                clientAppTypes: appTypes,
                platforms: c.platforms?.includePlatforms,
                excludedPlatforms: c.platforms?.excludePlatforms ?? [],
                locations: c.locations.map { locationSet($0.includeLocations) },
                excludedLocations: locationSet(c.locations?.excludeLocations),
                controls: policy.grantControls.controls,
                controlNames: policy.grantControls.controls.map(\.rawValue),
                // A reference to a strength that no longer exists (a store edited by hand) is unmet: nothing satisfies it.
                strength: policy.grantControls.authenticationStrength.map {
                    strengthsById[$0.id] ?? AuthenticationStrengthPolicy(id: $0.id, displayName: "(missing strength \($0.id))", allowedCombinations: [])
                }, agreements: policy.grantControls.termsOfUse ?? [], deviceFilter: c.devices?.deviceFilter, risk: c)
            let index = Int32(entries.count)
            entries.append(entry)
            let resourceKeys =
                (entry.allApplications ? [Self.anyKey] : []) + entry.applications.sorted()
                + intern(entry.applicationGroups.map(Self.applicationGroupSymbol)).sorted()
            if entry.isWorkload {
                let clientKeys = (entry.allClients ? [Self.anyKey] : []) + entry.clients.sorted()
                for resource in resourceKeys { for client in clientKeys { workloadIndex[Self.key(resource, client), default: []].append(index) } }
            } else {
                let includesGuests =
                    entry.userConditions.map { users in
                        users.includeUsers.contains(ConditionKeyword.guestsOrExternalUsers) || users.includeGuestsOrExternalUsers != nil
                    } ?? false
                let guestKeys: [Int32] = includesGuests ? intern([Self.guestSymbol]).sorted() : []
                var subjectKeys: [Int32] = entry.allUsers ? [Self.anyKey] : []
                subjectKeys += entry.users.sorted()
                subjectKeys += entry.groups.sorted()
                subjectKeys += entry.roles.sorted()
                subjectKeys += guestKeys
                for resource in resourceKeys { for subject in subjectKeys { userIndex[Self.key(resource, subject), default: []].append(index) } }
            }
        }
        self.entries = entries
        self.symbols = symbols
        self.userIndex = userIndex
        self.workloadIndex = workloadIndex
        self.trustedRanges = trusted
        self.customStrengths = strengths
        self.authenticationContexts = contexts
        self.availableContexts = Set(contexts.filter(\.isAvailable).map(\.id))
        self.contextEntries = entries.indices.filter { !entries[$0].contexts.isEmpty }.map { Int32($0) }
        self.termsOfUseAgreements = Set(entries.filter { $0.policy.state != .disabled }.flatMap(\.agreements))
        self.usesDevices = entries.contains { entry in
            entry.policy.state != .disabled && (entry.deviceFilter != nil || !ConditionalAccessPolicy.Control.device.isDisjoint(with: entry.controls))
        }
    }

    /// Whether some policy that is not off looks at the device (a device control or a filter, PROTOCOL §18).
    public let usesDevices: Bool

    /// The agreements some policy that is not off requires (PROTOCOL §17): the only ones whose acceptances a sign-in's
    /// facts need (none, for most tenants: the token path then reads no acceptance).
    public let termsOfUseAgreements: Set<PolicyID>

    /// The agreements the policies `policyIds` require, in their order, without repeats.
    public func agreements(ofPolicies policyIds: [PolicyID]) -> [PolicyID] {
        let ids = Set(policyIds)
        var seen = Set<PolicyID>()
        return entries.filter { ids.contains($0.policy.id) }.flatMap(\.agreements).filter { seen.insert($0).inserted }
    }

    /// An authorization request's contexts (PROTOCOL §13): `acr_values` asks for the offered ones among them (the rest are
    /// voluntary, ignored) and adds them to the claims; the claims' own are essential, and a request for one the tenant
    /// does not offer is refused.
    public func resolveContexts(_ request: inout AuthorizationRequest) throws(TokenError) {
        if let values = request.acrValues {
            let offered = values.filter(availableContexts.contains)
            request.acrValues = offered.isEmpty ? nil : offered
            if !offered.isEmpty { request.claims = (request.claims ?? ClaimsRequest()).adding(authenticationContexts: offered) }
        }
        try checkRequested(contexts: request.claims?.authenticationContexts ?? [], appOnly: false)
    }

    /// Refuses a request for authentication contexts the tenant does not offer (undefined, or not available to apps), and
    /// any for an application's own token (it has no sign-in to step up). PROTOCOL §13.
    public func checkRequested(contexts requested: [String], appOnly: Bool) throws(TokenError) {
        guard !requested.isEmpty else { return }
        if appOnly { throw TokenError.malformedClaims("an application's own token (client credentials) cannot carry authentication contexts (acrs).") }
        let unavailable = requested.filter { !availableContexts.contains($0) }
        if !unavailable.isEmpty {
            throw TokenError.malformedClaims(
                "it asks for the authentication context \(unavailable.joined(separator: ", ")), which this tenant does not offer (not defined, or not available to apps)."
            )
        }
    }

    /// A sign-in's identities as symbols (`unknown` for an ID no policy names).
    struct Subject {
        let user: Int32?
        let groups: [Int32]
        let roles: [Int32]
        /// The resource's application groups, as symbols (those some policy names).
        let resourceGroups: [Int32]
        let client: Int32
        let resource: Int32
    }

    /// A directory role's symbol key: roles share the symbol table with object IDs, under a prefix of their own.
    static func roleSymbol(_ roleId: RoleID) -> String { "role:" + roleId.rawValue }

    /// The symbol under which policies that include guests are indexed, and a guest's sign-in looks.
    static let guestSymbol = "guests:any"

    /// The keywords that name application groups, and a group's symbol key.
    static let applicationGroupKeywords: Set<ConditionKeyword> = [.office365, .microsoftAdminPortals]
    static func applicationGroupSymbol(_ group: ConditionKeyword) -> String { "appgroup:" + group.rawValue }

    func subject(_ facts: SignInFacts) -> Subject {
        Subject(
            user: facts.userId.map { symbols[$0.rawValue] ?? Self.unknown },
            groups: facts.groupIds.compactMap { symbols[$0.rawValue] },
            roles: facts.roleIds.compactMap { symbols[Self.roleSymbol($0)] } + (facts.guestType == nil ? [] : [symbols[Self.guestSymbol]].compactMap { $0 }),
            resourceGroups: facts.resourceApplicationGroups.compactMap { symbols[Self.applicationGroupSymbol($0)] },
            client: symbols[facts.clientAppId.rawValue] ?? Self.unknown,
            resource: symbols[facts.resourceAppId.rawValue] ?? Self.unknown)
    }

    /// Evaluates a sign-in. With `explain`, every policy is reported (what-if); otherwise only the policies
    /// the index says could apply (every other policy did not apply, by construction).
    public func evaluate(_ facts: SignInFacts, explain: Bool = false) -> Decision {
        let subject = subject(facts)
        let indexed: [Int32] =
            if explain {
                entries.indices.map { Int32($0) }
            } else if let action = facts.userAction {
                // User-action policies are few and indexed by no application: looked for one by one.
                entries.indices.filter { entries[$0].userActions.contains(action) }.map { Int32($0) }
            } else if !facts.authenticationContexts.isEmpty && facts.userId != nil {
                // The policies of the contexts asked for are evaluated in addition to the resource's (PROTOCOL §13).
                Self.merged(candidateIndices(subject), contextEntries.filter { !entries[Int($0)].contexts.isDisjoint(with: facts.authenticationContexts) })
            } else {
                candidateIndices(subject)
            }
        let candidates =
            facts.challengedPolicies.isEmpty || facts.userId == nil || explain
            ? indexed
            : Self.merged(
                indexed,
                entries.indices.filter { !entries[$0].isWorkload && facts.challengedPolicies.contains(entries[$0].policy.id.rawValue) }.map { Int32($0) })
        var applied: [Decision.AppliedPolicy] = []
        applied.reserveCapacity(candidates.count)
        var anyEnforcedApplied = false
        var blocking: [String] = []
        var unmet: [ConditionalAccessPolicy.Control: [String]] = [:]
        var unboundPolicies: [String] = []
        var session = AppliedSessionControls()
        var constraints: [Decision.LocationConstraint] = []
        let exempt = facts.resourceAppId == BuiltInResources.complianceAppId

        for index in candidates {
            let entry = entries[Int(index)]
            let notSatisfied = unmatchedConditions(entry, subject, facts)
            let applies = notSatisfied.isEmpty
            var result: Decision.PolicyResult
            var policyUnmet: [ConditionalAccessPolicy.Control] = []
            var controlResults: [Decision.ControlResult]?
            if entry.policy.state == .disabled {
                result = .notEnabled
            } else if !applies {
                result = entry.policy.state == .reportOnly ? .reportOnlyNotApplied : .notApplied
                if entry.policy.state == .enabled, notSatisfied == [.location], let locations = entry.locations,
                    !Self.grant(entry, facts, exempt: exempt).granted
                {
                    constraints.append(
                        Decision.LocationConstraint(
                            policyId: entry.policy.id.rawValue, include: locations.addressRanges(trustedRanges: trustedRanges),
                            exclude: entry.excludedLocations.addressRanges(trustedRanges: trustedRanges)))
                }
            } else {
                let grant = Self.grant(entry, facts, exempt: exempt)
                var granted = grant.granted
                policyUnmet = grant.unmet
                var results = grant.results
                // Token protection is a session control that can fail a sign-in: a request without a proof (PROTOCOL §15).
                let unbound = entry.policy.sessionControls?.requiresTokenProtection == true && !facts.proofOfPossession
                if entry.policy.sessionControls?.requiresTokenProtection == true {
                    results.append(
                        Decision.ControlResult(
                            control: "secureSignInSession", satisfied: !unbound,
                            reason: unbound
                                ? "the request had no DPoP proof, so its tokens could not be bound" : "the tokens are bound to the request's DPoP key"))
                    if unbound { granted = false }
                }
                controlResults = results
                if entry.policy.state == .reportOnly {
                    result = granted ? .reportOnlySuccess : .reportOnlyFailure
                } else {
                    anyEnforcedApplied = true
                    result = granted ? .success : .failure
                    if let controls = entry.policy.sessionControls { session.add(controls) }
                    if policyUnmet.contains(.block) {
                        blocking.append(entry.policy.id.rawValue)
                    } else {
                        for control in policyUnmet { unmet[control, default: []].append(entry.policy.id.rawValue) }
                        if unbound { unboundPolicies.append(entry.policy.id.rawValue) }
                    }
                }
            }
            applied.append(
                Decision.AppliedPolicy(
                    id: entry.policy.id.rawValue, displayName: entry.policy.displayName, result: result,
                    enforcedGrantControls: applies && entry.policy.state != .disabled ? entry.controlNames : [],
                    conditionsNotSatisfied: entry.policy.state == .disabled ? [] : notSatisfied, grantControlResults: controlResults,
                    enforcedSessionControls: applies && entry.policy.state != .disabled ? entry.policy.sessionControls?.enforcedNames.nilIfEmpty : nil))
        }

        var refusal: Decision.Refusal?
        if !blocking.isEmpty {
            refusal = .block(policyIds: blocking)
        } else if let first = unmet.keys.min() {
            let ids = unmet[first] ?? []
            switch first {
            case .block: refusal = .block(policyIds: ids)
            case .mfa: refusal = .mfa(policyIds: ids)
            case .authenticationStrength: refusal = .authenticationStrength(policyIds: ids)
            case .approvedApplication: refusal = .approvedApplication(policyIds: ids)
            case .compliantApplication: refusal = .compliantApplication(policyIds: ids)
            case .termsOfUse: refusal = .termsOfUse(policyIds: ids)
            case .compliantDevice: refusal = .compliantDevice(policyIds: ids)
            case .domainJoinedDevice: refusal = .domainJoinedDevice(policyIds: ids)
            case .passwordChange: refusal = .passwordChange(policyIds: ids)
            case .riskRemediation: refusal = .riskRemediation(policyIds: ids)
            }
        } else if !unboundPolicies.isEmpty {
            refusal = .tokenProtection(policyIds: unboundPolicies)
        }
        let status: Decision.Status = !anyEnforcedApplied ? .notApplied : (refusal == nil ? .success : .failure)
        var contexts: [Decision.MetContext] = []
        if refusal == nil && facts.userId != nil && facts.userAction == nil {
            contexts = facts.authenticationContexts.filter(availableContexts.contains).map {
                Decision.MetContext(id: $0, requested: true, sessionControls: AppliedSessionControls())
            }
            contexts += alreadyMetContexts(facts, subject, exempt: exempt)
        }
        var decision = Decision(status: status, policies: applied, refusal: refusal, sessionControls: session, authenticationContexts: contexts)
        decision.locationConstraints = constraints
        return decision
    }

    /// The available contexts this sign-in did not ask for but already meets (PROTOCOL §13: "added unasked"): at least
    /// one enabled policy targeting the context applies to it, and every one that applies is granted. Each comes with
    /// the session controls those policies add (a context whose sign-in frequency has passed is not met).
    func alreadyMetContexts(_ facts: SignInFacts, _ subject: Subject, exempt: Bool) -> [Decision.MetContext] {
        var verdicts: [String: (met: Bool, session: AppliedSessionControls)] = [:]
        var asking = facts
        for index in contextEntries {
            let entry = entries[Int(index)]
            let unasked = entry.contexts.subtracting(facts.authenticationContexts).intersection(availableContexts)
            guard entry.policy.state == .enabled, !unasked.isEmpty else { continue }
            asking.authenticationContexts = Array(unasked)
            guard unmatchedConditions(entry, subject, asking).isEmpty else { continue }
            let granted = Self.grant(entry, facts, exempt: exempt).granted
            for context in unasked {
                var verdict = verdicts[context] ?? (true, AppliedSessionControls())
                verdict.met = verdict.met && granted
                if let controls = entry.policy.sessionControls { verdict.session.add(controls) }
                verdicts[context] = verdict
            }
        }
        return AuthenticationContextClassReference.sorted(verdicts.keys).compactMap { id in
            verdicts[id].flatMap { $0.met ? Decision.MetContext(id: id, requested: false, sessionControls: $0.session) : nil }
        }
    }

    /// Whether an applying policy's grant controls are met: each control's result, and the controls left unmet.
    static func grant(
        _ entry: Entry, _ facts: SignInFacts, exempt: Bool
    ) -> (granted: Bool, results: [Decision.ControlResult], unmet: [ConditionalAccessPolicy.Control]) {
        // A policy with session controls only grants nothing and demands nothing.
        var granted = entry.policy.grantControls.operator == .and || entry.controls.isEmpty
        var unmet: [ConditionalAccessPolicy.Control] = []
        var results: [Decision.ControlResult] = []
        for control in entry.controls {
            let (met, reason) = check(control, facts, strength: entry.strength, agreements: entry.agreements, exempt: exempt)
            results.append(Decision.ControlResult(control: control.rawValue, satisfied: met, reason: reason))
            if entry.policy.grantControls.operator == .and {
                if !met {
                    granted = false
                    unmet.append(control)
                }
            } else if met {
                granted = true
            }
        }
        if !granted && entry.policy.grantControls.operator == .or { unmet = entry.controls }
        return (granted, results, unmet)
    }

    /// Two sorted lists of indices as one, without repeats.
    static func merged(_ a: [Int32], _ b: [Int32]) -> [Int32] {
        if b.isEmpty { return a }
        return Array(Set(a).union(b)).sorted()
    }

    /// Whether a sign-in meets one grant control, and the reason in words (what-if and the sign-in log show it).
    static func check(
        _ control: ConditionalAccessPolicy.Control, _ facts: SignInFacts, strength: AuthenticationStrengthPolicy?, agreements: [PolicyID] = [],
        exempt: Bool
    ) -> (Bool, String) {
        switch control {
        case .block:
            return (false, "the policy blocks access")
        case .mfa:
            return facts.multiFactorAuthenticated
                ? (true, "the authentication included a second factor (amr mfa)")
                : (
                    false,
                    facts.userId == nil ? "an app-only sign-in has no second factor" : "the authentication did not include a second factor (password only)"
                )
        case .authenticationStrength:
            guard let strength else { return (false, "the policy names no strength") }
            guard facts.userId != nil else { return (false, "an app-only sign-in has no authentication strength") }
            let (met, reason) = strength.evaluate(facts.authentication)
            return (met, "\(strength.displayName): \(reason)")
        case .termsOfUse:
            guard facts.userId != nil else { return (false, "an app-only sign-in accepts no terms of use") }
            let missing = agreements.filter { !facts.acceptedAgreements.contains($0) }
            return missing.isEmpty
                ? (true, "the user accepted the terms of use (\(agreements.map(\.rawValue).joined(separator: ", ")))")
                : (false, "the user has not accepted the terms of use \(missing.map(\.rawValue).joined(separator: ", ")), or the acceptance has expired")
        case .approvedApplication:
            if exempt { return (true, "the compliance service is always allowed") }
            return facts.approvedClientApp ? (true, "the client app is an approved app") : (false, "the client app is not an approved app")
        case .compliantApplication:
            if exempt { return (true, "the compliance service is always allowed") }
            switch facts.appProtection {
            case .compliant: return (true, "the app instance's enrollment is compliant")
            case .notCompliant: return (false, "the app instance's enrollment is not compliant")
            case .none: return (false, "no compliant enrollment of this app for the account")
            }
        case .compliantDevice:
            if exempt { return (true, "the compliance service is always allowed") }
            guard let device = facts.device else { return (false, "the device is not registered (no device proof)") }
            return device.isCompliant ? (true, "device \(device.deviceId) is compliant") : (false, "device \(device.deviceId) is not compliant")
        case .passwordChange:
            guard facts.userId != nil else { return (false, "an app-only sign-in has no password") }
            return (false, "the user's risk (\(facts.risk.user.rawValue)) asks for a secure password change, which remediates it")
        case .riskRemediation:
            guard facts.userId != nil else { return (false, "an app-only sign-in cannot remediate user risk") }
            guard facts.multiFactorAuthenticated else { return (false, "remediating the user's risk takes a multi-factor sign-in") }
            if let raised = facts.risk.userRiskUpdated, facts.authentication.time.map({ $0 < raised }) ?? true {
                return (false, "the authentication was before the user's risk was raised; sign in again")
            }
            return (true, "a multi-factor sign-in after the user's risk was raised remediates it")
        case .domainJoinedDevice:
            if exempt { return (true, "the compliance service is always allowed") }
            guard let device = facts.device else { return (false, "the device is not registered (no device proof)") }
            return device.trustType == .serverAd
                ? (true, "device \(device.deviceId) is hybrid joined (ServerAd)")
                : (false, "device \(device.deviceId) is not hybrid joined (trust type \(device.trustType.rawValue))")
        }
    }

    /// Whether the device could change a refusal (PROTOCOL §18): a refusing policy demands a device control or filters
    /// devices. The token endpoint then challenges a client that can prove its device (PKeyAuth) before refusing.
    public func deviceMatters(_ decision: Decision) -> Bool {
        guard decision.refusal != nil else { return false }
        let refusing = Set(decision.policies.filter { $0.result == .failure }.map(\.id))
        return entries.contains { entry in
            refusing.contains(entry.policy.id.rawValue)
                && (entry.deviceFilter != nil || !ConditionalAccessPolicy.Control.device.isDisjoint(with: entry.controls))
        }
    }

    /// Whether the compliance state of the account's app matters to this sign-in: an enabled candidate policy
    /// that demands `compliantApplication` applies to it — or would apply, once the platform is known, when
    /// the client named none (the enrollment records the platform). The token path asks this before it
    /// gathers the compliance facts, so that most grants never pay for the lookup. Evaluates nothing else.
    public func needsAppProtection(_ facts: SignInFacts) -> Bool {
        guard facts.userId != nil else { return false }
        let subject = subject(facts)
        for index in candidateIndices(subject) {
            let entry = entries[Int(index)]
            guard entry.policy.state == .enabled, entry.controls.contains(.compliantApplication) else { continue }
            let unmatched = unmatchedConditions(entry, subject, facts)
            if unmatched.isEmpty || (facts.platform == nil && unmatched == [.devicePlatform]) { return true }
        }
        return false
    }

    func candidateIndices(_ subject: Subject) -> [Int32] {
        var found: [Int32] = []
        for resource in [subject.resource, Self.anyKey] + subject.resourceGroups where resource != Self.unknown {
            if let user = subject.user {
                if let hits = userIndex[Self.key(resource, Self.anyKey)] { found += hits }
                if user >= 0, let hits = userIndex[Self.key(resource, user)] { found += hits }
                for group in subject.groups + subject.roles { if let hits = userIndex[Self.key(resource, group)] { found += hits } }
            } else {
                if let hits = workloadIndex[Self.key(resource, Self.anyKey)] { found += hits }
                if subject.client >= 0, let hits = workloadIndex[Self.key(resource, subject.client)] { found += hits }
            }
        }
        if found.count > 1 {
            found.sort()
            var unique: [Int32] = []
            unique.reserveCapacity(found.count)
            for index in found where unique.last != index { unique.append(index) }
            return unique
        }
        return found
    }

    /// The conditions of `entry` that the sign-in does not meet (empty: the policy applies).
    func unmatchedConditions(_ entry: Entry, _ subject: Subject, _ facts: SignInFacts) -> [Decision.Condition] {
        var failed: [Decision.Condition] = []
        if let user = subject.user {
            if entry.isWorkload {
                failed.append(.servicePrincipals)
            } else {
                let included =
                    entry.allUsers || entry.users.contains(user) || subject.groups.contains { entry.groups.contains($0) }
                    || subject.roles.contains { entry.roles.contains($0) }
                    || (entry.userConditions?.names(guest: facts.guestType, homeTenant: facts.homeTenantId, include: true) ?? false)
                let excluded =
                    entry.excludedUsers.contains(user) || subject.groups.contains { entry.excludedGroups.contains($0) }
                    || subject.roles.contains { entry.excludedRoles.contains($0) }
                    || (entry.userConditions?.names(guest: facts.guestType, homeTenant: facts.homeTenantId, include: false) ?? false)
                if !included || excluded { failed.append(.users) }
            }
        } else {
            if !entry.isWorkload {
                failed.append(.users)
            } else {
                let included = entry.allClients || entry.clients.contains(subject.client)
                if !included || entry.excludedClients.contains(subject.client) { failed.append(.servicePrincipals) }
            }
        }
        if let action = facts.userAction {
            if !entry.userActions.contains(action) { failed.append(.application) }
        } else if !entry.contexts.isEmpty {
            if entry.contexts.isDisjoint(with: facts.authenticationContexts) { failed.append(.application) }
        } else {
            let appIncluded =
                entry.allApplications || entry.applications.contains(subject.resource)
                || !entry.applicationGroups.isDisjoint(with: facts.resourceApplicationGroups)
            let appExcluded =
                entry.excludedApplications.contains(subject.resource) || !entry.excludedApplicationGroups.isDisjoint(with: facts.resourceApplicationGroups)
            // A policy a claims challenge named applies whatever application it targets (PROTOCOL §21).
            let challenged = facts.userId != nil && !entry.isWorkload && facts.challengedPolicies.contains(entry.policy.id.rawValue)
            if (!appIncluded || appExcluded) && !challenged { failed.append(.application) }
        }
        if let types = entry.clientAppTypes, !types.contains(facts.clientAppType) { failed.append(.clientType) }
        if let methods = entry.transferMethods, !(facts.transferMethod.map(methods.contains) ?? false) { failed.append(.authenticationFlows) }
        if let platforms = entry.platforms {
            let included = platforms == .all || (facts.platform.map { platforms.contains($0) } ?? false)
            let excluded = facts.platform.map { entry.excludedPlatforms.contains($0) } ?? false
            if !included || excluded { failed.append(.devicePlatform) }
        }
        if let locations = entry.locations {
            let included = locations.contains(facts.ipAddress, country: facts.country, trustedRanges: trustedRanges)
            let excluded = entry.excludedLocations.contains(facts.ipAddress, country: facts.country, trustedRanges: trustedRanges)
            if !included || excluded { failed.append(.location) }
        }
        if let filter = entry.deviceFilter, !filter.admits(facts.device) { failed.append(.deviceState) }
        if let levels = entry.signInRisk, !levels.contains(facts.risk.signIn) { failed.append(.signInRisk) }
        if let levels = entry.userRisk, !levels.contains(facts.risk.user) { failed.append(.userRisk) }
        if let levels = entry.servicePrincipalRisk, !levels.contains(facts.risk.servicePrincipal) { failed.append(.servicePrincipalRisk) }
        if let levels = entry.insiderRisk, !(facts.risk.insider.map(levels.contains) ?? false) { failed.append(.insiderRisk) }
        return failed
    }
}

extension Array {
    fileprivate var nilIfEmpty: Self? { isEmpty ? nil : self }
}
