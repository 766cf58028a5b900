import Foundation

extension ConditionalAccessPolicy {
    /// What a write does with a control this server cannot enforce but an admin may keep (PROTOCOL §17:
    /// `cloudAppSecurity`, which needs a session proxy): refuse it at its pointer (the default), or keep it in a policy
    /// that enforces nothing — an enabled one becomes report-only (`portcullis apply --unenforceable report-only`).
    public enum UnenforceableControls: String, Sendable, CaseIterable {
        case refuse
        case reportOnly
    }

    /// Parses and validates a policy document against a tenant's directory. Reports every problem with its
    /// JSON Pointer. `generatedId` names a policy that came without an `id`; `force` lets a policy that
    /// blocks everyone on everything through the lock-out guard. `strengths` are the tenant's custom authentication
    /// strengths (a policy may name those and the built-in ones); `contexts` its authentication contexts.
    public static func parse(
        _ value: JSONValue, directory: DirectorySnapshot, strengths: [AuthenticationStrengthPolicy] = [],
        contexts: [AuthenticationContextClassReference] = [], agreements: [Agreement]? = [], generatedId: @autoclosure () -> PolicyID,
        force: Bool = false, unenforceable: UnenforceableControls = .refuse, pointer: String = ""
    ) throws(ValidationError) -> ConditionalAccessPolicy {
        let problems = ProblemCollector()
        let policy = read(
            value, directory: directory, strengths: strengths, contexts: contexts, agreements: agreements, generatedId: generatedId(), force: force,
            unenforceable: unenforceable, pointer: pointer, problems: problems)
        try problems.check()
        guard let policy else { throw ValidationError(problems: [ValidationProblem(pointer: pointer, message: "is not a valid policy.")]) }
        return policy
    }

    public static func read(
        _ value: JSONValue, directory: DirectorySnapshot, strengths: [AuthenticationStrengthPolicy] = [],
        contexts: [AuthenticationContextClassReference] = [], agreements: [Agreement]? = [], generatedId: PolicyID, force: Bool,
        unenforceable: UnenforceableControls = .refuse, pointer: String, problems: ProblemCollector
    ) -> ConditionalAccessPolicy? {
        guard let root = JSONObjectReader(value, at: pointer, problems: problems) else { return nil }
        // Graph's spelling (PROTOCOL §17): markup ignored everywhere, and what Graph computes ignored here.
        root.rejectUnknownGraphMembers(
            allowed: ["id", "displayName", "state", "conditions", "grantControls", "sessionControls", "description"],
            readOnly: ["createdDateTime", "modifiedDateTime", "deletedDateTime", "templateId", "partialEnablementStrategy"])
        let problemsBeforeSession = problems.problems.count
        let session = root.object("sessionControls").flatMap { readSessionControls($0, unenforceable: unenforceable) }
        let sessionRefused = problems.problems.count > problemsBeforeSession
        // Graph's description: a string, accepted and not stored (what-if and the sign-in log show displayName).
        if let description = root.string("description", nonEmpty: false), description.count > 1024 {
            problems.add(root.path("description"), "must be at most 1024 characters.")
        }
        let id = root.has("id") ? root.guid("id") ?? generatedId : generatedId
        let displayName = root.string("displayName", required: true)
        var state = root.enumeration("state", allowed: State.allCases.map(\.rawValue), required: true).flatMap(State.init(rawValue:))
        // Kept although it cannot be enforced (`unenforceable: .reportOnly`): the policy enforces nothing.
        if session?.cloudAppSecurity != nil, state == .enabled { state = .reportOnly }

        var conditions: Conditions?
        if let reader = root.object("conditions", required: true) {
            conditions = readConditions(reader, directory: directory, contexts: contexts)
        }
        var grant: GrantControls?
        if (session != nil || sessionRefused) && !root.has("grantControls") {
            // Graph's `grantControls: null`: a policy of session controls only (when those were refused, their
            // problems say why; "grantControls is required" would only add noise).
            grant = GrantControls(operator: .or, builtInControls: [], authenticationStrength: nil)
        } else if let reader = root.object("grantControls", required: true) {
            reader.rejectUnknownGraphMembers(allowed: ["operator", "builtInControls", "customAuthenticationFactors", "termsOfUse", "authenticationStrength"])
            if let items = reader.array("customAuthenticationFactors"), !items.isEmpty {
                problems.add(reader.path("customAuthenticationFactors"), "cannot be enforced by this server.")
            }
            // Terms of use (PROTOCOL §17): agreements of this tenant (`agreements` `nil`: not known here, as offline).
            var terms: [PolicyID] = []
            for (id, itemPointer) in reader.strings("termsOfUse") ?? [] {
                let normalized = PolicyID(id)
                if let agreements, !agreements.contains(where: { $0.id == normalized }) {
                    problems.add(itemPointer, "'\(id)' names no agreement (terms of use) of this tenant.")
                } else if !id.isGUID {
                    problems.add(itemPointer, "must be an agreement's ID (a GUID).")
                } else if !terms.contains(normalized) {
                    terms.append(normalized)
                }
            }
            var strength: StrengthReference?
            if let s = reader.object("authenticationStrength") {
                // Graph shows the strength expanded on read; a document read back and re-applied carries those members.
                // Read by its ID alone: an export expands it, and may list methods this server does not offer.
                s.rejectUnknownGraphMembers(
                    allowed: ["id"],
                    readOnly: [
                        "displayName", "description", "policyType", "requirementsSatisfied", "allowedCombinations", "combinationConfigurations",
                        "createdDateTime", "modifiedDateTime",
                    ])
                if let id = s.string("id", required: true) {
                    let known = AuthenticationStrengthPolicy.builtIns + strengths
                    if let found = known.first(where: { $0.id == PolicyID(id) }) {
                        strength = StrengthReference(id: found.id)
                    } else {
                        problems.add(
                            s.path("id"),
                            "'\(id)' names no authentication strength of this tenant (built-in: \(AuthenticationStrengthPolicy.builtIns.map(\.id.rawValue).joined(separator: ", ")))."
                        )
                    }
                }
            }
            let op = reader.enumeration("operator", allowed: GrantOperator.allCases.map(\.rawValue), required: true).flatMap(GrantOperator.init(rawValue:))
            var controls: [Control] = []
            if let items = reader.strings("builtInControls", required: true) {
                if items.isEmpty && !reader.has("authenticationStrength") && session == nil && terms.isEmpty {
                    problems.add(reader.path("builtInControls"), "must name at least one control (or set authenticationStrength or termsOfUse).")
                }
                for (name, itemPointer) in items {
                    if let control = Control.builtIn.first(where: { $0.rawValue.equalsIgnoringCase(name) }) {
                        if !controls.contains(control) { controls.append(control) }
                    } else if name.equalsIgnoringCase("termsOfUse") {
                        problems.add(itemPointer, "terms of use are not a built-in control: list the agreements' IDs in grantControls.termsOfUse.")
                    } else {
                        problems.add(itemPointer, "'\(name)' is not one of: \(Control.builtIn.map(\.rawValue).joined(separator: ", ")).")
                    }
                }
                if controls.contains(.block) && controls.count > 1 {
                    problems.add(reader.path("builtInControls"), "block cannot be combined with other controls.")
                }
            }
            if controls.contains(.block) && strength != nil {
                problems.add(reader.path("authenticationStrength"), "block cannot be combined with an authentication strength.")
            }
            if controls.contains(.mfa) && strength != nil {
                problems.add(
                    reader.path("authenticationStrength"),
                    "mfa and an authentication strength cannot both be required (as in Entra); the built-in strength 00000000-0000-0000-0000-000000000002 is mfa."
                )
            }
            if let remediation = controls.first(where: Control.remediation.contains) {
                if op == .or {
                    problems.add(reader.path("operator"), "\(remediation.rawValue) is required with the other controls (AND), as in Entra.")
                }
                if remediation == .passwordChange && !controls.contains(.mfa) && strength == nil {
                    problems.add(
                        reader.path("builtInControls"),
                        "passwordChange needs mfa (or an authentication strength) beside it: a password change is secure only after a second factor, as in Entra."
                    )
                }
                if controls.contains(.passwordChange) && controls.contains(.riskRemediation) {
                    problems.add(reader.path("builtInControls"), "riskRemediation already covers a password change; use one of them.")
                }
            }
            if controls.contains(.block) && !terms.isEmpty {
                problems.add(reader.path("termsOfUse"), "block cannot be combined with terms of use.")
            }
            if let op {
                grant = GrantControls(operator: op, builtInControls: controls, authenticationStrength: strength, termsOfUse: terms.isEmpty ? nil : terms)
            }
        }

        if let conditions, let grant {
            if conditions.applications.includeUserActions != nil
                && !grant.controls.allSatisfy({ [.block, .mfa, .authenticationStrength].contains($0) })
            {
                problems.add(
                    JSONPointer.appending(pointer, "grantControls"),
                    "a policy for user actions can require block, mfa or an authentication strength; app controls have no app to check.")
            }
            if conditions.applications.includeAuthenticationContextClassReferences != nil
                && !grant.controls.allSatisfy({ [.block, .mfa, .authenticationStrength].contains($0) })
            {
                problems.add(
                    JSONPointer.appending(pointer, "grantControls"),
                    "a policy for authentication contexts can require block, mfa or an authentication strength (app controls are the resource's policies' to demand)."
                )
            }
            if conditions.applications.includeAuthenticationContextClassReferences != nil && conditions.clientApplications != nil {
                problems.add(
                    JSONPointer.appending(pointer, "conditions/clientApplications"),
                    "an authentication context is asked for by a user's sign-in; a policy for one cannot target workload identities.")
            }
            if conditions.applications.includeUserActions != nil && conditions.clientApplications != nil {
                problems.add(
                    JSONPointer.appending(pointer, "conditions/clientApplications"),
                    "user actions are a user's; a policy for them cannot target workload identities.")
            }
            if let remediation = grant.controls.first(where: Control.remediation.contains), conditions.userRiskLevels == nil {
                problems.add(
                    pointer + "/conditions/userRiskLevels",
                    "\(remediation.rawValue) remediates user risk, so the policy must be for user risk (userRiskLevels), as in Entra.")
            }
            if conditions.clientApplications != nil && grant.controls != [.block] {
                problems.add(
                    JSONPointer.appending(pointer, "grantControls"),
                    "a policy for workload identities (conditions.clientApplications) can only block.")
            }
            let usersAll = conditions.users?.includeUsers.contains(.all) ?? false
            let appsAll = conditions.applications.includeApplications.contains(.all)
            let noExclusions =
                (conditions.users?.excludeUsers.isEmpty ?? true) && (conditions.users?.excludeGroups.isEmpty ?? true)
                && (conditions.users?.excludeRoles.isEmpty ?? true) && conditions.users?.excludeGuestsOrExternalUsers == nil
            // A policy for transferred sign-ins only (Microsoft's "block device code flow") leaves every other way in.
            // So does a policy for risky sign-ins or users (PROTOCOL §19).
            let everySignIn =
                conditions.authenticationFlows == nil && conditions.signInRiskLevels == nil && conditions.userRiskLevels == nil
                && conditions.insiderRiskLevels == nil
            if usersAll && appsAll && noExclusions && everySignIn && grant.builtInControls.contains(.block) && state == .enabled && !force {
                problems.add(
                    pointer + "/conditions/users/excludeUsers",
                    "this policy would block every user from every application, the administrators who could undo it included; exclude at least one account (a break-glass administrator), or force it."
                )
            }
        }
        if let conditions, session?.persistentBrowser != nil,
            !conditions.applications.includeApplications.contains(.all) || !conditions.applications.excludeApplications.isEmpty
        {
            problems.add(
                pointer + "/sessionControls/persistentBrowser",
                "applies to the browser session, so only to a policy for All applications with none excluded (as in Entra).")
        }
        if let conditions, session != nil, conditions.clientApplications != nil {
            problems.add(pointer + "/sessionControls", "workload identities have no sign-in session; remove the session controls or the clientApplications.")
        }
        guard let displayName, let state, let conditions, let grant else { return nil }
        return ConditionalAccessPolicy(
            id: id, displayName: displayName, state: state, conditions: conditions, grantControls: grant, sessionControls: session)
    }

    /// Graph's `conditionalAccessSessionControls`: the controls of PROTOCOL §13, §15 and §17 read, those this server cannot
    /// enforce (`SessionControls.unenforced`) refused unless null. `nil` when nothing is enabled.
    private static func readSessionControls(_ reader: JSONObjectReader, unenforceable: UnenforceableControls) -> SessionControls? {
        let problems = reader.problems
        reader.rejectUnknownGraphMembers(
            allowed: Set(
                SessionControls.unenforced + [
                    "signInFrequency", "persistentBrowser", "secureSignInSession", "disableResilienceDefaults", "applicationEnforcedRestrictions",
                    "continuousAccessEvaluation",
                ]))
        for key in SessionControls.unenforced where reader.has(key) {
            if key == "cloudAppSecurity" && unenforceable == .reportOnly { continue }
            problems.add(
                reader.path(key),
                key == "cloudAppSecurity"
                    ? "cannot be enforced by this server (it needs a session proxy); remove it or set null, or import the policy report-only (`--unenforceable report-only`)."
                    : "cannot be enforced by this server; remove it or set null.")
        }
        // Entra's backup authentication service keeps sign-ins going while Entra is down; Portcullis has none to
        // disable (PROTOCOL §17): read (its type checked) and without effect.
        _ = reader.bool("disableResilienceDefaults")
        var controls = SessionControls()
        if unenforceable == .reportOnly, let c = reader.object("cloudAppSecurity") {
            c.rejectUnknownGraphMembers(allowed: ["isEnabled", "cloudAppSecurityType"])
            let enabled = c.bool("isEnabled", required: true) ?? false
            let kind = c.enumeration("cloudAppSecurityType", allowed: CloudAppSecurity.Kind.allCases.map(\.rawValue)).flatMap(
                CloudAppSecurity.Kind.init(rawValue:))
            if enabled { controls.cloudAppSecurity = CloudAppSecurity(cloudAppSecurityType: kind) }
        }
        if let f = reader.object("signInFrequency") {
            f.rejectUnknownGraphMembers(allowed: ["isEnabled", "type", "value", "frequencyInterval", "authenticationType"])
            let enabled = f.bool("isEnabled", required: true) ?? false
            let interval =
                f.enumeration("frequencyInterval", allowed: SignInFrequency.Interval.allCases.map(\.rawValue)).flatMap(SignInFrequency.Interval.init(rawValue:))
                ?? .timeBased
            if let type = f.string("authenticationType"), type != "primaryAndSecondaryAuthentication" {
                problems.add(f.path("authenticationType"), "only primaryAndSecondaryAuthentication is enforced (a second-factor-only frequency is not).")
            }
            let unit = f.enumeration("type", allowed: SignInFrequency.Unit.allCases.map(\.rawValue)).flatMap(SignInFrequency.Unit.init(rawValue:))
            // Entra's ranges: 1–24 hours, 1–365 days.
            var value: Int?
            if interval == .timeBased {
                if unit == nil && !f.has("type") { problems.add(f.path("type"), "is required for a timeBased frequency (hours or days).") }
                value = f.integer("value", in: unit == .days ? 1...365 : 1...24, required: true)
            } else if f.has("value") || f.has("type") {
                problems.add(f.path(f.has("value") ? "value" : "type"), "must be null for everyTime.")
            }
            if enabled { controls.signInFrequency = SignInFrequency(type: interval == .timeBased ? unit : nil, value: value, frequencyInterval: interval) }
        }
        if let b = reader.object("persistentBrowser") {
            b.rejectUnknownGraphMembers(allowed: ["isEnabled", "mode"])
            let enabled = b.bool("isEnabled", required: true) ?? false
            let mode = b.enumeration("mode", allowed: PersistentBrowser.Mode.allCases.map(\.rawValue), required: true).flatMap(
                PersistentBrowser.Mode.init(rawValue:))
            if enabled, let mode { controls.persistentBrowser = PersistentBrowser(mode: mode) }
        }
        if let r = reader.object("applicationEnforcedRestrictions") {
            r.rejectUnknownGraphMembers(allowed: ["isEnabled"])
            if r.bool("isEnabled", required: true) == true { controls.applicationEnforcedRestrictions = ApplicationEnforcedRestrictions() }
        }
        if let e = reader.object("continuousAccessEvaluation") {
            e.rejectUnknownGraphMembers(allowed: ["mode"])
            let mode = e.enumeration("mode", allowed: ContinuousAccessEvaluationControl.Mode.allCases.map(\.rawValue), required: true)
            if let mode = mode.flatMap(ContinuousAccessEvaluationControl.Mode.init(rawValue:)) {
                controls.continuousAccessEvaluation = ContinuousAccessEvaluationControl(mode: mode)
            }
        }
        if let t = reader.object("secureSignInSession") {
            t.rejectUnknownGraphMembers(allowed: ["isEnabled"])
            if t.bool("isEnabled", required: true) == true { controls.secureSignInSession = SecureSignInSession() }
        }
        return controls == SessionControls() ? nil : controls
    }

    /// Graph's keywords that name something this server does not have, each refused with what it means.
    static let unsupportedKeywords = [
        "AllAgentIdUsers": "Entra Agent ID's agent users",
        "AllAgentIdResources": "Entra Agent ID's agent resources",
    ]

    private static func readConditions(
        _ reader: JSONObjectReader, directory: DirectorySnapshot, contexts: [AuthenticationContextClassReference]
    ) -> Conditions? {
        let problems = reader.problems
        // `deviceStates` is Graph's deprecated spelling of `devices`; `clients`, `agents`… are members Graph added
        // that exports leave null.
        reader.rejectUnknownGraphMembers(
            allowed: [
                "users", "applications", "clientApplications", "clientAppTypes", "platforms", "locations",
                "signInRiskLevels", "userRiskLevels", "servicePrincipalRiskLevels", "devices", "times", "insiderRiskLevels", "authenticationFlows",
            ],
            ignoredWhenEmpty: ["deviceStates", "clients", "agents", "agentIdRiskLevels", "agentContext"])
        if let value = reader.object["times"], value != .null { problems.add(reader.path("times"), "this condition cannot be evaluated by this server.") }
        /// A list of risk levels (PROTOCOL §19), `nil` when absent or empty (no condition).
        func riskLevels(_ key: String) -> [RiskLevel]? {
            var found: [RiskLevel] = []
            for (item, itemPointer) in reader.strings(key) ?? [] {
                guard let level = RiskLevel.allCases.first(where: { $0.rawValue.equalsIgnoringCase(item) }) else {
                    problems.add(itemPointer, "'\(item)' is not a risk level; one of: \(RiskLevel.allCases.map(\.rawValue).joined(separator: ", ")).")
                    continue
                }
                if !found.contains(level) { found.append(level) }
            }
            return found.isEmpty ? nil : RiskLevel.allCases.filter(found.contains)
        }
        let signInRisk = riskLevels("signInRiskLevels")
        let userRisk = riskLevels("userRiskLevels")
        let servicePrincipalRisk = riskLevels("servicePrincipalRiskLevels")
        var insiderRisk: InsiderRiskLevels?
        if let text = reader.string("insiderRiskLevels", nonEmpty: false), !text.isEmpty {
            var levels = Set<InsiderRiskLevel>()
            for name in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !name.equalsIgnoringCase("unknownFutureValue") {
                if let level = InsiderRiskLevel.allCases.first(where: { $0.rawValue.equalsIgnoringCase(name) }) {
                    levels.insert(level)
                } else {
                    problems.add(
                        reader.path("insiderRiskLevels"),
                        "'\(name)' is not an insider risk level; a comma-separated list of: \(InsiderRiskLevel.allCases.map(\.rawValue).joined(separator: ", "))."
                    )
                }
            }
            if !levels.isEmpty { insiderRisk = InsiderRiskLevels(levels: levels) }
        }

        /// A list of keywords (those `keywords` allows) and IDs that `exists` knows.
        func selection<Kind>(
            _ list: JSONObjectReader, _ key: String, keywords: [ConditionKeyword], exists: (Identifier<Kind>) -> Bool, noun: String
        ) -> Selection<Kind> {
            var found = Selection<Kind>()
            for (item, itemPointer) in list.strings(key) ?? [] {
                if let keyword = ConditionKeyword(caseInsensitive: item), keywords.contains(keyword) {
                    found.insert(keyword)
                } else if exists(Identifier(item)) {
                    found.insert(id: Identifier(item))
                } else if let meaning = unsupportedKeywords.first(where: { $0.key.equalsIgnoringCase(item) })?.value {
                    problems.add(itemPointer, "'\(item)' is Graph's keyword for \(meaning), which this server does not support.")
                } else {
                    let or = keywords.isEmpty ? "" : " (or use \(keywords.map(\.rawValue).joined(separator: ", ")))"
                    problems.add(itemPointer, "'\(item)' names no \(noun) of this tenant\(or).")
                }
            }
            return found
        }
        func ids<Kind>(_ list: JSONObjectReader, _ key: String, exists: (Identifier<Kind>) -> Bool, noun: String) -> [Identifier<Kind>] {
            selection(list, key, keywords: [], exists: exists, noun: noun).ids
        }

        var users: Users?
        if let u = reader.object("users") {
            u.rejectUnknownGraphMembers(allowed: [
                "includeUsers", "excludeUsers", "includeGroups", "excludeGroups", "includeRoles", "excludeRoles", "includeGuestsOrExternalUsers",
                "excludeGuestsOrExternalUsers",
            ])
            func roles(_ key: String) -> [RoleID] {
                var found: [RoleID] = []
                for (item, itemPointer) in u.strings(key) ?? [] {
                    if let role = DirectoryRoleDefinition.builtIn(id: RoleID(item)) {
                        if !found.contains(role.id) { found.append(role.id) }
                    } else {
                        problems.add(
                            itemPointer, "'\(item)' is not the template ID of a directory role (GET /role-management/directory/role-definitions lists them).")
                    }
                }
                return found
            }
            let includeRoles = roles("includeRoles")
            let excludeRoles = roles("excludeRoles")
            func guests(_ key: String) -> GuestsOrExternalUsers? {
                guard let g = u.object(key) else { return nil }
                g.rejectUnknownGraphMembers(allowed: ["guestOrExternalUserTypes", "externalTenants"])
                var types = Set<GuestOrExternalUserType>()
                if let text = g.string("guestOrExternalUserTypes", required: true) {
                    for name in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
                        if let type = GuestOrExternalUserType.allCases.first(where: { $0.rawValue.equalsIgnoringCase(name) }) {
                            types.insert(type)
                        } else {
                            problems.add(
                                g.path("guestOrExternalUserTypes"),
                                "'\(name)' is not a guest or external user type; a comma-separated list of: \(GuestOrExternalUserType.allCases.map(\.rawValue).joined(separator: ", "))."
                            )
                        }
                    }
                }
                var tenants: [TenantID]?
                if let t = g.object("externalTenants") {
                    t.rejectUnknownGraphMembers(allowed: ["membershipKind", "members"])
                    if t.enumeration("membershipKind", allowed: ["all", "enumerated"], required: true) == "enumerated" {
                        var members: [TenantID] = []
                        for (member, memberPointer) in t.strings("members", required: true) ?? [] {
                            if let id = TenantID(guid: member) { members.append(id) } else { problems.add(memberPointer, "must be a tenant ID (a GUID).") }
                        }
                        if members.isEmpty { problems.add(t.path("members"), "name at least one tenant (or membershipKind all).") }
                        tenants = members
                    } else if let members = t.array("members"), !members.isEmpty {
                        problems.add(t.path("members"), "must be empty when membershipKind is all.")
                    }
                }
                return types.isEmpty ? nil : GuestsOrExternalUsers(guestOrExternalUserTypes: types, externalTenants: tenants)
            }
            let includeGuests = guests("includeGuestsOrExternalUsers")
            let excludeGuests = guests("excludeGuestsOrExternalUsers")
            let userExists = { (id: ObjectID) in directory.user(id: id) != nil }
            let groupExists = { (id: ObjectID) in directory.group(id: id) != nil }
            users = Users(
                includeUsers: selection(u, "includeUsers", keywords: [.all, .none, .guestsOrExternalUsers], exists: userExists, noun: "user"),
                excludeUsers: selection(u, "excludeUsers", keywords: [.guestsOrExternalUsers], exists: userExists, noun: "user"),
                includeGroups: ids(u, "includeGroups", exists: groupExists, noun: "group"),
                excludeGroups: ids(u, "excludeGroups", exists: groupExists, noun: "group"), includeRoles: includeRoles, excludeRoles: excludeRoles,
                includeGuestsOrExternalUsers: includeGuests, excludeGuestsOrExternalUsers: excludeGuests)
            // A policy for roles or guests names its users there (those members' own problems say if they were refused).
            let namesOthers = ["includeUsers", "includeRoles", "includeGuestsOrExternalUsers"].contains { u.object[$0].map { !$0.isNullOrEmpty } ?? false }
            if let users, users.includeUsers.isEmpty && users.includeGroups.isEmpty && !namesOthers {
                problems.add(u.path("includeUsers"), "name the users the policy is for (All, None, user IDs) or include groups.")
            }
        }

        var applications: Applications?
        if let a = reader.object("applications", required: true) {
            a.rejectUnknownGraphMembers(
                allowed: [
                    "includeApplications", "excludeApplications", "includeUserActions", "includeAuthenticationContextClassReferences", "applicationFilter",
                ], ignoredWhenEmpty: ["networkAccess", "globalSecureAccess"])
            if let value = a.object["applicationFilter"], value != .null { problems.add(a.path("applicationFilter"), "cannot be evaluated by this server.") }
            var userActions: [String] = []
            for (action, actionPointer) in a.strings("includeUserActions") ?? [] {
                // User actions are URNs, compared case-insensitively (RFC 8141 §3.1 for the namespace; Entra for the rest).
                guard let known = UserAction.all.first(where: { $0.equalsIgnoringCase(action) }) else {
                    problems.add(actionPointer, "is not a user action this server knows; known: \(UserAction.all.sorted().joined(separator: ", ")).")
                    continue
                }
                if !userActions.contains(known) { userActions.append(known) }
            }
            var contextIds: [String] = []
            for (context, contextPointer) in a.strings("includeAuthenticationContextClassReferences") ?? [] {
                guard let known = contexts.first(where: { $0.id.equalsIgnoringCase(context) }) else {
                    let known = contexts.isEmpty ? "it has none" : "it has " + contexts.map(\.id).joined(separator: ", ")
                    problems.add(contextPointer, "names no authentication context of this tenant (\(known)); create it first.")
                    continue
                }
                if !contextIds.contains(known.id) { contextIds.append(known.id) }
            }
            let appExists = { (id: AppID) in directory.application(appId: id) != nil }
            let include = selection(
                a, "includeApplications", keywords: [.all, .none, .office365, .microsoftAdminPortals], exists: appExists, noun: "application")
            let exclude = selection(a, "excludeApplications", keywords: [.office365, .microsoftAdminPortals], exists: appExists, noun: "application")
            let namesApplications = a.object["includeApplications"]?.arrayValue?.isEmpty == false
            // What the policy means to target, whether or not each item was valid (so that a bad one is not also "no target").
            let namesActions = a.object["includeUserActions"]?.arrayValue?.isEmpty == false
            let namesContexts = a.object["includeAuthenticationContextClassReferences"]?.arrayValue?.isEmpty == false
            // As in Entra: a policy targets applications, user actions or authentication contexts — one of them.
            if namesActions && namesContexts {
                problems.add(
                    a.path("includeAuthenticationContextClassReferences"), "a policy targets user actions or authentication contexts, not both.")
            }
            if namesActions || namesContexts {
                let target = !namesActions ? "authentication contexts (includeAuthenticationContextClassReferences)" : "user actions (includeUserActions)"
                if namesApplications || !exclude.isEmpty {
                    problems.add(a.path(namesApplications ? "includeApplications" : "excludeApplications"), "must be empty in a policy for \(target).")
                }
            } else if !a.has("includeApplications") {
                problems.add(
                    a.path("includeApplications"),
                    "is required (All, None, or application IDs), or includeUserActions, or includeAuthenticationContextClassReferences.")
            } else if !namesApplications {
                problems.add(a.path("includeApplications"), "name at least one application (All, None, or application IDs).")
            }
            applications = Applications(
                includeApplications: include, excludeApplications: exclude, includeUserActions: userActions.isEmpty ? nil : userActions,
                includeAuthenticationContextClassReferences: contextIds.isEmpty ? nil : contextIds)
        }

        var clientApplications: ClientApplications?
        if let c = reader.object("clientApplications") {
            c.rejectUnknownGraphMembers(
                allowed: ["includeServicePrincipals", "excludeServicePrincipals", "servicePrincipalFilter"],
                ignoredWhenEmpty: ["includeAgentIdServicePrincipals", "excludeAgentIdServicePrincipals", "agentIdServicePrincipalFilter"])
            if let value = c.object["servicePrincipalFilter"], value != .null {
                problems.add(c.path("servicePrincipalFilter"), "cannot be evaluated by this server.")
            }
            let appExists = { (id: AppID) in directory.application(appId: id) != nil }
            let include = selection(c, "includeServicePrincipals", keywords: [.servicePrincipalsInMyTenant], exists: appExists, noun: "application")
            let namesAgents = c.object["includeAgentIdServicePrincipals"].map { !$0.isNullOrEmpty } ?? false
            if include.isEmpty && !namesAgents {
                problems.add(c.path("includeServicePrincipals"), "name the client applications (or ServicePrincipalsInMyTenant).")
            }
            clientApplications = ClientApplications(
                includeServicePrincipals: include, excludeServicePrincipals: ids(c, "excludeServicePrincipals", exists: appExists, noun: "application"))
        }
        if users == nil && clientApplications == nil {
            problems.add(reader.path("users"), "is required (or conditions.clientApplications for workload identities).")
        }

        /// `all` or a set of cases (case-insensitive); nil for an empty or absent list. Exclusions take no `all`.
        func allOr<Element>(_ list: JSONObjectReader, _ key: String, allowAll: Bool = true) -> AllOr<Element>? {
            let names = (allowAll ? [AllOr<Element>.keyword] : []) + Element.allCases.map(\.rawValue)
            var all = false
            var found = Set<Element>()
            for (item, itemPointer) in list.strings(key) ?? [] {
                if allowAll && item.equalsIgnoringCase(AllOr<Element>.keyword) {
                    all = true
                } else if let element = Element.allCases.first(where: { $0.rawValue.equalsIgnoringCase(item) }) {
                    found.insert(element)
                } else {
                    problems.add(itemPointer, "'\(item)' is not one of: \(names.joined(separator: ", ")).")
                }
            }
            return all ? .all : (found.isEmpty ? nil : .only(found))
        }

        let clientAppTypes: AllOr<SignInFacts.ClientAppType> = allOr(reader, "clientAppTypes") ?? .all

        var platforms: Platforms?
        if let p = reader.object("platforms") {
            p.rejectUnknownGraphMembers(allowed: ["includePlatforms", "excludePlatforms"])
            let include: AllOr<DevicePlatform>? = allOr(p, "includePlatforms")
            if include == nil { problems.add(p.path("includePlatforms"), "name at least one platform (or all).") }
            var excluded = Set<DevicePlatform>()
            if case .only(let set) = allOr(p, "excludePlatforms", allowAll: false) as AllOr<DevicePlatform>? { excluded = set }
            platforms = Platforms(includePlatforms: include ?? .only([]), excludePlatforms: excluded)
        }

        var locations: Locations?
        if let l = reader.object("locations") {
            l.rejectUnknownGraphMembers(allowed: ["includeLocations", "excludeLocations"])
            let locationExists = { (id: PolicyID) in directory.namedLocation(id: id) != nil }
            let include = selection(l, "includeLocations", keywords: [.all, .allTrusted], exists: locationExists, noun: "named location")
            if include.isEmpty { problems.add(l.path("includeLocations"), "name at least one location (All, AllTrusted, or named location IDs).") }
            locations = Locations(
                includeLocations: include,
                excludeLocations: selection(l, "excludeLocations", keywords: [.allTrusted], exists: locationExists, noun: "named location"))
        }

        var authenticationFlows: AuthenticationFlows?
        if let f = reader.object("authenticationFlows") {
            f.rejectUnknownGraphMembers(allowed: ["transferMethods"])
            var methods = Set<TransferMethod>()
            if let text = f.string("transferMethods", required: true) {
                for name in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
                    if let method = TransferMethod.allCases.first(where: { $0.rawValue.equalsIgnoringCase(name) }) {
                        methods.insert(method)
                    } else {
                        problems.add(
                            f.path("transferMethods"),
                            "'\(name)' is not a transfer method; a comma-separated list of: \(TransferMethod.allCases.map(\.rawValue).joined(separator: ", "))."
                        )
                    }
                }
            }
            if clientApplications != nil {
                problems.add(f.path("transferMethods"), "a sign-in transferred between devices is a user's; a workload-identity policy cannot match it.")
            }
            authenticationFlows = AuthenticationFlows(transferMethods: methods)
        }

        var devices: Devices?
        if let d = reader.object("devices") {
            // Graph beta's device states (`excludeDevices: ["Compliant", "DomainJoined"]`) are the deprecated form of a filter.
            d.rejectUnknownGraphMembers(
                allowed: ["deviceFilter"], ignoredWhenEmpty: ["includeDevices", "excludeDevices", "includeDeviceStates", "excludeDeviceStates"])
            if let f = d.object("deviceFilter") {
                f.rejectUnknownGraphMembers(allowed: ["mode", "rule"])
                let mode = f.enumeration("mode", allowed: DeviceFilter.Mode.allCases.map(\.rawValue), required: true).flatMap(DeviceFilter.Mode.init(rawValue:))
                var rule: DeviceFilterRule?
                let text = f.string("rule", required: true)
                if let text {
                    do {
                        rule = try DeviceFilterRule.parse(text)
                    } catch {
                        problems.add(f.path("rule"), "\(error.description) (the rule: \(text.prefix(200)))")
                    }
                }
                if clientApplications != nil {
                    problems.add(d.path("deviceFilter"), "a workload identity signs in from no device; a workload-identity policy cannot filter devices.")
                }
                if let mode, let rule, let text { devices = Devices(deviceFilter: DeviceFilter(mode: mode, rule: rule, text: text)) }
            }
        }

        guard let applications else { return nil }
        var conditions = Conditions(
            users: users, applications: applications, clientApplications: clientApplications,
            clientAppTypes: clientAppTypes, platforms: platforms, locations: locations, authenticationFlows: authenticationFlows)
        conditions.devices = devices
        conditions.signInRiskLevels = signInRisk
        conditions.userRiskLevels = userRisk
        conditions.servicePrincipalRiskLevels = servicePrincipalRisk
        conditions.insiderRiskLevels = insiderRisk
        // A workload identity has its own risk and no user's; a user's sign-in has no service principal risk.
        if clientApplications != nil {
            for key in ["signInRiskLevels", "userRiskLevels"] where reader.array(key)?.isEmpty == false {
                problems.add(reader.path(key), "a workload identity has no user or sign-in risk; use servicePrincipalRiskLevels.")
            }
            if insiderRisk != nil { problems.add(reader.path("insiderRiskLevels"), "a workload identity has no insider risk.") }
        } else if servicePrincipalRisk != nil {
            problems.add(reader.path("servicePrincipalRiskLevels"), "is for workload identities (conditions.clientApplications), not users.")
        }
        return conditions
    }

    /// Who has registered what (the lock-out guard's facts): user IDs with any factor (TOTP or passkey), and with a passkey.
    public struct RegisteredMethods: Sendable {
        public var anyFactor: Set<ObjectID>
        public var passkey: Set<ObjectID>

        public init(anyFactor: Set<ObjectID>, passkey: Set<ObjectID>) {
            self.anyFactor = anyFactor
            self.passkey = passkey
        }
    }

    /// The lock-out guard for the `mfa` control and authentication strengths (PROTOCOL §10, §12.2): an enabled policy
    /// for All users whose only way through is a factor, while some of the users it covers have none that meets it,
    /// would make every non-interactive sign-in of theirs fail (50076) until they register. `strength` is the one the
    /// policy names. A warning that `force` passes.
    public func factorLockoutWarning(
        directory: DirectorySnapshot, registered: RegisteredMethods, strength: AuthenticationStrengthPolicy? = nil
    ) -> ValidationProblem? {
        let policy = self
        let grant = policy.grantControls
        let all = grant.controls
        let factorControls = all.filter { $0 == .mfa || $0 == .authenticationStrength }
        let factorOnly = !factorControls.isEmpty && (grant.operator == .and || factorControls.count == all.count)
        // A policy for authentication contexts touches only the sign-ins that ask for one, on the page where a factor
        // can be registered: it locks nobody out of anything else.
        // Nor does a policy for risk (PROTOCOL §19): it touches only the risky sign-ins and users, whom a page must see anyway.
        let c = policy.conditions
        let forRisk = c.signInRiskLevels != nil || c.userRiskLevels != nil || c.insiderRiskLevels != nil
        guard policy.state == .enabled, factorOnly, !forRisk, let users = c.users, users.includeUsers.contains(.all),
            c.applications.includeAuthenticationContextClassReferences == nil
        else { return nil }
        // A strength that a password and code cannot meet needs a passkey (temporary passes are not a way to live).
        let passkeyOnly = strength.map { !$0.allowedCombinations.contains(.passwordSoftwareOath) } ?? false
        let registered = passkeyOnly ? registered.passkey : registered.anyFactor
        let excludedUsers = Set(users.excludeUsers.ids)
        let excludedGroups = Set(users.excludeGroups)
        let excludedRoles = Set(users.excludeRoles)
        let covered = directory.users.filter { user in
            user.accountEnabled && !excludedUsers.contains(user.id)
                && directory.groupIds(ofUser: user.id).allSatisfy { !excludedGroups.contains($0) }
                && directory.roleIds(ofUser: user.id).allSatisfy { !excludedRoles.contains($0) }
                && !users.names(guest: user.guestType, homeTenant: nil, include: false)
        }
        let without = covered.filter { !registered.contains($0.id) }
        guard !without.isEmpty else { return nil }
        let names = without.prefix(3).map(\.userPrincipalName).joined(separator: ", ") + (without.count > 3 ? ", …" : "")
        return ValidationProblem(
            pointer: grant.authenticationStrength == nil ? "/grantControls/builtInControls" : "/grantControls/authenticationStrength",
            message:
                "\(without.count) of the \(covered.count) users this policy covers have no \(passkeyOnly ? "passkey" : "second factor") registered (\(names)): every sign-in of theirs without a page (the password grant, scripts) will fail with AADSTS50076 until they register on the sign-in page. Target a group, use report-only first, or force it."
        )
    }

    /// The lock-out guard beyond `block` (PROTOCOL §11): the warnings an enabled policy for All users and All
    /// applications earns when its controls are ones most sign-ins cannot meet — a second factor users have not
    /// registered (`factorLockoutWarning`), or an approved / protected app on platforms and clients that have
    /// none. `protectedApps` are the client app IDs some app protection policy targets (no other client can
    /// ever hold a compliant enrollment). Each is a warning that `force` passes.
    public func lockoutWarnings(
        directory: DirectorySnapshot, registered: RegisteredMethods, strength: AuthenticationStrengthPolicy? = nil, protectedApps: Set<AppID>
    ) -> [ValidationProblem] {
        var warnings: [ValidationProblem] = []
        if let factor = factorLockoutWarning(directory: directory, registered: registered, strength: strength) { warnings.append(factor) }
        if let app = appLockoutWarning(directory: directory, protectedApps: protectedApps) { warnings.append(app) }
        if let binding = tokenProtectionLockoutWarning() { warnings.append(binding) }
        if let device = deviceLockoutWarning(directory: directory) { warnings.append(device) }
        return warnings
    }

    /// An enabled policy whose only way through is a device (`compliantDevice`, `domainJoinedDevice`, PROTOCOL §18) on
    /// every application, covering administrators (users holding a directory role) on every platform: each of them is
    /// refused (53000, 53001) everywhere, the admin console included, until a device of theirs is registered and proven.
    func deviceLockoutWarning(directory: DirectorySnapshot) -> ValidationProblem? {
        let grant = grantControls
        let deviceControls = grant.controls.filter(Control.device.contains)
        let deviceOnly = !deviceControls.isEmpty && (grant.operator == .and || deviceControls.count == grant.controls.count)
        let apps = conditions.applications
        guard state == .enabled, deviceOnly, let users = conditions.users, conditions.platforms == nil,
            apps.includeApplications.contains(.all) || apps.includeApplications.contains(.microsoftAdminPortals)
        else { return nil }
        let admins = directory.users.filter { user in
            let roles = directory.roleIds(ofUser: user.id)
            let groups = directory.groupIds(ofUser: user.id)
            guard user.accountEnabled, !roles.isEmpty else { return false }
            let included =
                users.includeUsers.contains(.all) || users.includeUsers.ids.contains(user.id) || groups.contains(where: users.includeGroups.contains)
                || roles.contains(where: users.includeRoles.contains)
            let excluded =
                users.excludeUsers.ids.contains(user.id) || groups.contains(where: users.excludeGroups.contains)
                || roles.contains(where: users.excludeRoles.contains)
            return included && !excluded
        }
        guard !admins.isEmpty, admins.count == directory.users.filter({ $0.accountEnabled && !directory.roleIds(ofUser: $0.id).isEmpty }).count else {
            return nil
        }
        let names = admins.prefix(3).map(\.userPrincipalName).joined(separator: ", ") + (admins.count > 3 ? ", …" : "")
        let what = deviceControls.map(\.rawValue).joined(separator: grant.operator == .and ? " and " : " or ")
        return ValidationProblem(
            pointer: "/grantControls/builtInControls",
            message:
                "this policy requires \(what) of every administrator of the tenant (\(names)) on every application: each would be refused (AADSTS53000, 53001), the admin console included, until a device of theirs is registered and proven at sign-in. Exclude a break-glass administrator, use report-only first, or force it."
        )
    }

    /// An enabled token-protection policy (PROTOCOL §15) for All users and All applications: every client that cannot
    /// send DPoP proofs — MSAL, browsers' sign-in to the admin console — would be refused (530084), the admins' included.
    func tokenProtectionLockoutWarning() -> ValidationProblem? {
        guard state == .enabled, sessionControls?.requiresTokenProtection == true, let users = conditions.users, users.includeUsers.contains(.all),
            conditions.applications.includeApplications.contains(.all)
        else { return nil }
        return ValidationProblem(
            pointer: "/sessionControls/secureSignInSession",
            message:
                "this policy requires DPoP-bound tokens of every user on every application: every client that cannot send DPoP proofs (MSAL, the admin console's sign-in) would be refused with AADSTS530084, the admins' included. Target the applications whose clients hold a key, use report-only first, or force it."
        )
    }

    /// An enabled All-users, All-applications policy whose only way through is `approvedApplication` or
    /// `compliantApplication`, on every platform, while some client apps users sign in with can never meet it.
    func appLockoutWarning(directory: DirectorySnapshot, protectedApps: Set<AppID>) -> ValidationProblem? {
        let grant = grantControls
        let appControls = grant.builtInControls.filter { $0 == .approvedApplication || $0 == .compliantApplication }
        let mandatory = grant.operator == .and ? appControls : (grant.builtInControls.count == appControls.count ? appControls : [])
        guard state == .enabled, !mandatory.isEmpty, let users = conditions.users, users.includeUsers.contains(.all),
            conditions.applications.includeApplications.contains(.all)
        else { return nil }
        if let platforms = conditions.platforms {
            let reach = DevicePlatform.detectable.filter { platforms.includePlatforms.contains($0) && !platforms.excludePlatforms.contains($0) }
            if Set(reach).isSubset(of: [.iOS, .android]) { return nil }
        }
        let interactive: Set<String> = [GrantType.password.rawValue, GrantType.authorizationCode.rawValue, GrantType.deviceCode.rawValue]
        let excluded = Set(conditions.applications.excludeApplications.ids)
        let clients = directory.applications.filter { app in
            !BuiltInResources.all.contains { $0.appId == app.appId } && !excluded.contains(app.appId)
                && !interactive.isDisjoint(with: app.allowedGrantTypes)
        }
        let unable = clients.filter { app in
            mandatory.contains { control in control == .approvedApplication ? !app.approvedClientApp : !protectedApps.contains(app.appId) }
        }
        guard !unable.isEmpty else { return nil }
        let names = unable.prefix(3).map(\.displayName).joined(separator: ", ") + (unable.count > 3 ? ", …" : "")
        let what = mandatory.map(\.rawValue).joined(separator: " and ")
        return ValidationProblem(
            pointer: "/grantControls/builtInControls",
            message:
                "this policy requires \(what) of every user's sign-in on every platform, and \(unable.count) of the \(clients.count) client apps users sign in with can never meet it (\(names)): every sign-in through them, the admins' included, would be refused. Limit platforms to iOS and android, exclude those apps, use report-only first, or force it."
        )
    }

    /// Whether this policy names the application, as a resource or as a workload identity (deleting it would break the policy).
    public func refers(toApplication id: AppID) -> Bool {
        let apps = conditions.applications
        let clients = conditions.clientApplications.map { $0.includeServicePrincipals.ids + $0.excludeServicePrincipals } ?? []
        return (apps.includeApplications.ids + apps.excludeApplications.ids + clients).contains(id)
    }

    /// Whether this policy refers to the group (deleting it would break the policy).
    public func refers(toGroup id: ObjectID) -> Bool {
        guard let users = conditions.users else { return false }
        return (users.includeGroups + users.excludeGroups).contains(id)
    }

    /// Whether this policy requires the authentication strength (deleting it would break the policy).
    public func refers(toStrength id: PolicyID) -> Bool { grantControls.authenticationStrength?.id == id }

    /// Whether the policy requires the agreement (terms of use) `id`.
    public func refers(toAgreement id: PolicyID) -> Bool { grantControls.termsOfUse?.contains(id) ?? false }

    /// Whether the policy targets the authentication context `id`.
    public func refers(toContext id: String) -> Bool {
        conditions.applications.includeAuthenticationContextClassReferences?.contains { $0.equalsIgnoringCase(id) } ?? false
    }

    /// Whether this policy refers to the named location (deleting it would break the policy).
    public func refers(toLocation id: PolicyID) -> Bool {
        guard let locations = conditions.locations else { return false }
        return locations.includeLocations.contains(id: id) || locations.excludeLocations.contains(id: id)
    }
}
