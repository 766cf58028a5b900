import Foundation
import PortcullisCore
import Testing

@Suite("Risk (PROTOCOL §19): detections, users' risk, conditional access")
struct RiskTests {
    static let start = Date(timeIntervalSince1970: 1_790_000_000)
    static let client = AppID(CA.approvedClient)

    static func signIn(
        _ hours: Double, country: String?, ip: String = "198.51.100.7", platform: DevicePlatform? = .iOS, client: AppID = client
    )
        -> RiskDetector.SignIn
    {
        RiskDetector.SignIn(at: start.addingTimeInterval(hours * 3600), ipAddress: IPAddress(ip), country: country, platform: platform, clientAppId: client)
    }

    static var user: User { User(id: ObjectID(CA.u1), userPrincipalName: "u1@ca.test", displayName: "U1") }

    /// A profile that learned ten sign-ins from France over six days.
    static var learned: SignInProfile {
        var profile = SignInProfile()
        for day in 0..<10 { profile = RiskDetector.learn(signIn(Double(day) * 15, country: "FR"), profile: profile) ?? profile }
        return profile
    }

    @Test("address lists: addresses and ranges of both families, comments, overlaps merged; a bad line refused with its number")
    func addressLists() throws {
        let list = try AddressList.parse(
            """
            # Tor exits
            203.0.113.5
            198.51.100.0/24
            198.51.100.128/25   # inside the /24
            2001:db8:1::/48

            """)
        #expect(list.contains(IPAddress("203.0.113.5")) && !list.contains(IPAddress("203.0.113.6")))
        #expect(list.contains(IPAddress("198.51.100.255")) && !list.contains(IPAddress("198.51.101.0")))
        #expect(list.contains(IPAddress("2001:db8:1:ffff::1")) && !list.contains(IPAddress("2001:db8:2::1")))
        #expect(!list.contains(nil) && !AddressList.empty.contains(IPAddress("203.0.113.5")))
        #expect(throws: AddressList.Problem(line: 2, text: "not-an-address")) { try AddressList.parse("10.0.0.0/8\nnot-an-address\n") }
        #expect(throws: AddressList.Problem.self) { try AddressList.parse("10.0.0.0/33") }
        // A large list is a binary search: every one of 100,000 single addresses is found, its neighbours are not.
        let many = AddressList(ranges: (0..<100_000).map { IPRange("10.\($0 >> 14).\(($0 >> 6) & 0xFF).\(($0 & 0x3F) * 4)/32")! })
        #expect(many.contains(IPAddress("10.0.0.4")) && !many.contains(IPAddress("10.0.0.5")))
        #expect(many.contains(IPAddress("10.6.26.28")) == ((6 << 14 | 26 << 6 | 7) < 100_000))
    }

    @Test("real time: a listed anonymizer is medium, a malicious address high; the sign-in's risk is the highest")
    func listedAddresses() throws {
        let lists = RiskDetector.Lists(anonymizers: try AddressList.parse("198.51.100.0/24"), malicious: try AddressList.parse("198.51.100.7"))
        let facts = RiskDetector.facts(Self.signIn(0, country: "FR"), user: nil, lists: lists)
        #expect(facts.detections == [.anonymizedIPAddress, .maliciousIPAddress])
        #expect(facts.signIn == .high)
        let anonymous = RiskDetector.facts(Self.signIn(0, country: "FR", ip: "198.51.100.8"), user: nil, lists: lists)
        #expect(anonymous.detections == [.anonymizedIPAddress] && anonymous.signIn == .medium)
        #expect(RiskDetector.facts(Self.signIn(0, country: "FR", ip: "192.0.2.1"), user: nil, lists: lists) == RiskFacts())
    }

    @Test("unfamiliar properties: only after 10 sign-ins over 5 days; a new country, platform or client is unfamiliar")
    func unfamiliar() {
        var early = SignInProfile()
        for hour in 0..<12 { early = RiskDetector.learn(Self.signIn(Double(hour), country: "FR"), profile: early) ?? early }
        #expect(RiskDetector.unfamiliar(Self.signIn(13, country: "BR"), profile: early).isEmpty, "12 sign-ins in half a day: still learning")
        let profile = Self.learned
        #expect(profile.learned(at: Self.start.addingTimeInterval(150 * 3600)))
        let at = 200.0
        #expect(RiskDetector.unfamiliar(Self.signIn(at, country: "FR"), profile: profile).isEmpty)
        #expect(RiskDetector.unfamiliar(Self.signIn(at, country: "BR"), profile: profile) == ["country BR"])
        #expect(RiskDetector.unfamiliar(Self.signIn(at, country: "FR", platform: .android), profile: profile) == ["platform android"])
        #expect(RiskDetector.unfamiliar(Self.signIn(at, country: "FR", client: AppID(CA.plainClient)), profile: profile) == ["client \(CA.plainClient)"])
        #expect(RiskDetector.realtime(Self.signIn(at, country: "BR"), profile: profile, lists: .init()) == [.unfamiliarFeatures])
    }

    @Test("learning writes only what changed, and keeps at most 16 of a kind, the oldest forgotten")
    func learning() {
        let profile = Self.learned
        #expect(RiskDetector.learn(Self.signIn(135.5, country: "FR"), profile: profile) == nil, "counted out, seen within the hour: nothing to write")
        var refreshed = SignInProfile()
        for hour in 0..<5 { refreshed = RiskDetector.learn(Self.signIn(Double(hour) / 10, country: "FR"), profile: refreshed, interactive: false) ?? refreshed }
        #expect(refreshed.signIns == 0 && refreshed.countries["FR"] != nil, "refreshes make values familiar and count nothing towards learning")
        #expect(RiskDetector.learn(Self.signIn(0.2, country: "FR"), profile: refreshed, interactive: false) == nil, "nor write again")
        #expect(RiskDetector.learn(Self.signIn(137, country: "FR"), profile: profile)?.countries["FR"] == Self.start.addingTimeInterval(137 * 3600))
        var many = profile
        for (index, code) in ["DE", "ES", "IT", "PT", "NL", "BE", "AT", "CH", "PL", "CZ", "SE", "NO", "DK", "FI", "IE", "GB", "US"].enumerated() {
            many = RiskDetector.learn(Self.signIn(200 + Double(index), country: code), profile: many) ?? many
        }
        #expect(many.countries.count == SignInProfile.maximumValues)
        #expect(many.countries["FR"] == nil && many.countries["US"] != nil)
    }

    @Test("atypical travel: France then the United States an hour later; not Germany an hour later, not the US a day later")
    func travel() throws {
        let profile = Self.learned  // last in France at hour 135
        let far = try #require(RiskDetector.travel(Self.signIn(136, country: "US"), profile: profile))
        #expect(far.from == "FR" && far.kilometres > 7_000)
        #expect(RiskDetector.travel(Self.signIn(136, country: "DE"), profile: profile) == nil, "neighbours are not atypical")
        #expect(RiskDetector.travel(Self.signIn(160, country: "US"), profile: profile) == nil, "a day is time enough to fly")
        #expect(RiskDetector.travel(Self.signIn(136, country: nil), profile: profile) == nil, "an unknown country says nothing")
        #expect(RiskDetector.travel(Self.signIn(136, country: "FR"), profile: profile) == nil)
    }

    @Test("password spray: an account counts once per address and window; 20 accounts flag a later sign-in within the hour")
    func spray() {
        let tenant = TenantID("f0000000-0000-4000-8000-000000000000")
        let address = IPAddress("203.0.113.9")
        let key = RiskDetector.sprayKey(tenantId: tenant, address: address)
        var counter: ThrottleCounter?
        var marks: [String: ThrottleCounter] = [:]
        for account in 0..<30 {
            for attempt in 0..<3 {
                let mark = RiskDetector.sprayedAccountKey(tenantId: tenant, address: address, userId: ObjectID("u\(account)"))
                let (stored, new) = RiskDetector.markSprayed(marks[mark], key: mark, now: Self.start.addingTimeInterval(Double(account * 60 + attempt)))
                marks[mark] = stored
                #expect(new == (attempt == 0))
                if new { counter = RiskDetector.countSprayed(counter, key: key, now: Self.start.addingTimeInterval(Double(account * 60))) }
            }
        }
        #expect(counter?.failures == 30)
        #expect(RiskDetector.sprayed(counter, at: Self.start.addingTimeInterval(1800)))
        #expect(!RiskDetector.sprayed(counter, at: Self.start.addingTimeInterval(2 * 3600)), "an hour later it says nothing")
        var few: ThrottleCounter?
        for _ in 0..<19 { few = RiskDetector.countSprayed(few, key: key, now: Self.start) }
        #expect(!RiskDetector.sprayed(few, at: Self.start), "19 accounts are not a spray")
        let fresh = RiskDetector.countSprayed(counter, key: key, now: Self.start.addingTimeInterval(2 * 3600))
        #expect(fresh.failures == 1, "a new window starts counting again")
    }

    @Test("a user's risk: the highest active detection; confirmed compromise stays; closing ends it; history and detections bounded")
    func riskyUser() {
        var risky = RiskyUser(user: Self.user)
        #expect(!risky.hasRisk)
        let changed1 = risky.add([RiskDetection(type: .unlikelyTravel, activity: Self.start, detected: Self.start)], at: Self.start, initiatedBy: nil)
        #expect(changed1)
        #expect(risky.riskLevel == .medium && risky.riskState == .atRisk)
        let changed2 = risky.add([RiskDetection(type: .leakedCredentials, activity: Self.start, detected: Self.start)], at: Self.start, initiatedBy: "admin")
        #expect(changed2)
        #expect(risky.riskLevel == .high)
        let changed3 = risky.add([RiskDetection(type: .anonymizedIPAddress, activity: Self.start, detected: Self.start)], at: Self.start, initiatedBy: nil)
        #expect(!changed3)
        #expect(risky.riskLevel == .high, "a lower detection does not lower the risk")
        let changed4 = risky.close(.remediated, detail: .userPerformedSecuredPasswordChange, at: Self.start, initiatedBy: CA.u1)
        #expect(changed4)
        #expect(risky.riskLevel == .none && risky.riskState == .remediated && risky.detections.allSatisfy { $0.riskState == .remediated })
        let changed5 = risky.close(.dismissed, detail: .adminDismissedAllRiskForUser, at: Self.start, initiatedBy: "admin")
        #expect(!changed5, "nothing left to close")
        risky.add(
            [RiskDetection(type: .adminConfirmedUserCompromised, state: .confirmedCompromised, activity: Self.start, detected: Self.start)], at: Self.start,
            initiatedBy: "admin")
        #expect(risky.riskState == .confirmedCompromised && risky.riskDetail == .adminConfirmedUserCompromised)
        risky.add([RiskDetection(type: .unlikelyTravel, activity: Self.start, detected: Self.start)], at: Self.start, initiatedBy: nil)
        #expect(risky.riskState == .confirmedCompromised, "a later detection does not undo an admin's confirmation")
        for _ in 0..<200 {
            risky.add([RiskDetection(type: .passwordSpray, activity: Self.start, detected: Self.start)], at: Self.start, initiatedBy: nil)
            risky.close(.dismissed, detail: .adminDismissedAllRiskForUser, at: Self.start, initiatedBy: "admin")
        }
        #expect(risky.detections.count == RiskDetection.kept && risky.history.count == RiskyUserHistoryItem.kept)
    }

    @Test("a workload identity's networks: unusual only after learning; an IPv4 /24 and an IPv6 /64 are one network; bounded")
    func addressProfile() {
        var profile = AddressProfile()
        for day in 0..<10 {
            let (next, unusual) = profile.learning(IPAddress("198.51.100.\(day)"), at: Self.start.addingTimeInterval(Double(day) * 15 * 3600))
            #expect(!unusual, "still learning")
            profile = next ?? profile
        }
        #expect(profile.networks.keys.sorted() == ["198.51.100.0/24"] && profile.learned(at: Self.start.addingTimeInterval(136 * 3600)))
        let at = Self.start.addingTimeInterval(140 * 3600)
        #expect(profile.learning(IPAddress("198.51.100.200"), at: at).unusual == false, "the same /24")
        #expect(profile.learning(IPAddress("198.51.100.200"), at: Self.start.addingTimeInterval(135.5 * 3600)).profile == nil, "seen within the hour")
        let (learned, unusual) = profile.learning(IPAddress("203.0.113.5"), at: at)
        #expect(unusual && learned?.networks["203.0.113.0/24"] == at)
        #expect(AddressProfile.network(of: IPAddress("2001:db8:1:2:3::4")!) == AddressProfile.network(of: IPAddress("2001:db8:1:2:ffff::1")!))
        var many = profile
        for index in 0..<40 { many = many.learning(IPAddress("10.\(index).0.1"), at: at.addingTimeInterval(Double(index))).profile ?? many }
        #expect(many.networks.count == AddressProfile.maximumNetworks && many.networks["198.51.100.0/24"] == nil, "the oldest forgotten")
        // A workload identity's risk: reported, confirmed (its own detail), dismissed.
        var risky = RiskyServicePrincipal(application: Application(appId: "a1", displayName: "Daemon", publicClient: false))
        let reported = risky.add([RiskDetection(type: .leakedCredentials, activity: at, detected: at)], at: at, initiatedBy: "admin")
        #expect(reported && risky.riskLevel == .high && RiskDetector.facts(servicePrincipal: risky).servicePrincipal == .high)
        risky.add(
            [RiskDetection(type: .adminConfirmedServicePrincipalCompromised, state: .confirmedCompromised, activity: at, detected: at)], at: at,
            initiatedBy: "admin")
        #expect(risky.riskState == .confirmedCompromised && risky.riskDetail == .adminConfirmedServicePrincipalCompromised)
        let dismissed = risky.close(.dismissed, detail: .adminDismissedAllRiskForServicePrincipal, at: at, initiatedBy: "admin")
        #expect(dismissed && risky.riskLevel == .none && risky.graph["riskState"] == "dismissed")
    }

    @Test("learning from records: a refused risky sign-in raises the risk, one that passed with MFA remediated its own; riskRemediation met closes it")
    func learningFromRecords() {
        func record(error: Int?, methods: [String], detections: [RiskEventType] = [], remediation: Bool = false) -> SignInRecord {
            var record = SignInRecord(
                id: "r", createdDateTime: Self.start, correlationId: "c", tenantId: "t", userId: ObjectID(CA.u1), userPrincipalName: "u1@ca.test",
                clientAppId: Self.client, resourceAppId: Self.client, resource: nil, grantType: "password", clientAppType: "mobileAppsAndDesktopClients",
                capabilities: [], ipAddress: "198.51.100.7", platform: "iOS", appProtection: "none",
                conditionalAccessStatus: error == nil ? .success : .failure,
                appliedConditionalAccessPolicies: remediation
                    ? [
                        Decision.AppliedPolicy(
                            id: "p", displayName: "p", result: .success, enforcedGrantControls: ["riskRemediation"], conditionsNotSatisfied: [],
                            grantControlResults: [Decision.ControlResult(control: "riskRemediation", satisfied: true, reason: "")])
                    ] : [], errorCode: error, authenticationMethods: methods)
            record.riskEventTypes_v2 = detections.isEmpty ? nil : detections
            return record
        }
        var risky = RiskyUser(user: Self.user)
        let learned101 = risky.learn(from: record(error: nil, methods: ["pwd", "mfa"], detections: [.anonymizedIPAddress]), sprayed: false, at: Self.start)
        #expect(learned101)
        #expect(risky.riskLevel == .none && risky.detections.map(\.riskState) == [.remediated], "passed with MFA: its own risk remediated")
        let learned102 = risky.learn(from: record(error: 50076, methods: ["pwd"], detections: [.anonymizedIPAddress]), sprayed: false, at: Self.start)
        #expect(learned102)
        #expect(risky.riskLevel == .medium && risky.riskState == .atRisk, "refused: the user's risk")
        let again = risky.learn(from: record(error: 50076, methods: ["pwd"], detections: [.anonymizedIPAddress]), sprayed: false, at: Self.start)
        #expect(!again && risky.detections.count == 2, "an active detection from the same address is not repeated")
        let learned103 = risky.learn(from: record(error: nil, methods: ["pwd"]), sprayed: true, at: Self.start)
        #expect(learned103)
        #expect(risky.riskLevel == .high && risky.detections.last?.riskEventType == .passwordSpray)
        let learned104 = risky.learn(from: record(error: nil, methods: ["pwd", "mfa"], remediation: true), sprayed: false, at: Self.start)
        #expect(learned104)
        #expect(risky.riskState == .remediated && risky.riskDetail == .userPassedMFADrivenByRiskBasedPolicy)
        #expect(RiskDetector.mayShowSpray(record(error: nil, methods: ["pwd"])) && !RiskDetector.mayShowSpray(record(error: 50126, methods: ["pwd"])))
    }

    @Test("effects: a change of level is CAEP risk-level-change; an admin's confirmation voids everything, each time; learning is nothing")
    func effects() throws {
        let tenant = TenantID("f0000000-0000-4000-8000-000000000000")
        let before = RiskyUser(user: Self.user)
        var raised = before
        raised.add([RiskDetection(type: .leakedCredentials, activity: Self.start, detected: Self.start)], at: Self.start, initiatedBy: "admin")
        let effects = RiskyUser.effects(before: before, after: raised, tenantId: tenant, at: Self.start)
        #expect(effects.revocations.isEmpty, "leaked credentials revoke nothing by themselves: policies decide")
        let signal = try #require(effects.events.first?.signals.first)
        #expect(signal.type == .riskLevelChange && signal.members["current_level"] == "HIGH" && signal.members["principal"] == "USER")
        #expect(signal.members["previous_level"] == nil && signal.members["risk_reason"] == "leakedCredentials")
        var learned = raised
        learned.profile = Self.learned
        #expect(RiskyUser.effects(before: raised, after: learned, tenantId: tenant, at: Self.start).isEmpty)
        var confirmed = raised
        confirmed.add(
            [RiskDetection(type: .adminConfirmedUserCompromised, state: .confirmedCompromised, activity: Self.start, detected: Self.start)], at: Self.start,
            initiatedBy: "admin")
        let compromise = RiskyUser.effects(before: raised, after: confirmed, tenantId: tenant, at: Self.start)
        #expect(compromise.revocations == [ChangeEffects.Revocation(userId: ObjectID(CA.u1), reach: .everything, voidsAccessTokens: true)])
        #expect(compromise.events.map(\.kind) == [.credentialCompromised], "the level stays high: no risk-level-change")
        var again = confirmed
        again.add(
            [RiskDetection(type: .adminConfirmedUserCompromised, state: .confirmedCompromised, activity: Self.start, detected: Self.start)], at: Self.start,
            initiatedBy: "admin")
        #expect(!RiskyUser.effects(before: confirmed, after: again, tenantId: tenant, at: Self.start).revocations.isEmpty)
        var remediated = confirmed
        remediated.close(.remediated, detail: .userPerformedSecuredPasswordChange, at: Self.start, initiatedBy: CA.u1)
        let lowered = RiskyUser.effects(before: confirmed, after: remediated, tenantId: tenant, at: Self.start)
        #expect(lowered.events.first?.initiator == .user && lowered.events.first?.signals.first?.members["previous_level"] == "HIGH")
    }
}

@Suite("Risk in conditional access (PROTOCOL §19)")
struct RiskConditionalAccessTests {
    static func policy(_ controls: [String], op: String = "AND", conditions extra: [String: Any] = [:], strength: String? = nil) -> JSONValue {
        var conditions: [String: Any] = ["users": ["includeUsers": ["All"]], "applications": ["includeApplications": ["All"]]]
        conditions.merge(extra) { _, new in new }
        var grant: [String: Any] = ["operator": op, "builtInControls": controls]
        if let strength { grant["authenticationStrength"] = ["id": strength] }
        return CA.json(["displayName": "Risk", "state": "enabled", "conditions": conditions, "grantControls": grant])
    }

    static func facts(
        user: RiskLevel = .none, signIn: RiskLevel = .none, insider: InsiderRiskLevel? = nil, mfa: Bool = false, authTime: Date? = nil
    )
        -> SignInFacts
    {
        var facts = CA.facts(mfa: mfa)
        facts.authentication = AuthenticationContext(methods: mfa ? ["pwd", "mfa"] : ["pwd"], time: authTime ?? RiskTests.start)
        facts.risk = RiskFacts(signIn: signIn, user: user, userRiskUpdated: RiskTests.start, insider: insider)
        return facts
    }

    static func problems(_ document: JSONValue) -> [String] {
        do {
            _ = try ConditionalAccessPolicy.parse(document, directory: CA.directory, generatedId: "d0000000-0000-4000-8000-000000000001")
            return []
        } catch {
            return error.problems.map(\.pointer)
        }
    }

    @Test("the levels: a policy applies only to sign-ins whose risk of its kind is one of its levels")
    func conditions() throws {
        let user = try CA.compile([Self.policy(["block"], op: "OR", conditions: ["userRiskLevels": ["high"]])])
        #expect(user.evaluate(Self.facts(user: .high)).refusal == .block(policyIds: [user.policies[0].id.rawValue]))
        #expect(user.evaluate(Self.facts(user: .medium)).status == .notApplied)
        #expect(user.evaluate(Self.facts(user: .medium), explain: true).policies[0].conditionsNotSatisfied == [.userRisk])
        let signIn = try CA.compile([Self.policy(["mfa"], op: "OR", conditions: ["signInRiskLevels": ["high", "medium"]])])
        #expect(kind(signIn.evaluate(Self.facts(signIn: .medium)).refusal) == "mfa")
        #expect(signIn.evaluate(Self.facts(signIn: .medium, mfa: true)).status == .success)
        #expect(signIn.evaluate(Self.facts(signIn: .low)).status == .notApplied)
        let insider = try CA.compile([Self.policy(["block"], op: "OR", conditions: ["insiderRiskLevels": "moderate,elevated"])])
        #expect(kind(insider.evaluate(Self.facts(insider: .elevated)).refusal) == "block")
        #expect(insider.evaluate(Self.facts(insider: .minor)).status == .notApplied)
        #expect(insider.evaluate(Self.facts()).status == .notApplied, "no insider level set: not an insider risk")
        #expect(insider.policies[0].conditions.insiderRiskLevels?.levels == [.moderate, .elevated])
    }

    @Test("passwordChange: after MFA, refused with 50142 interaction_required; the page asks for it last; prompt=none cannot")
    func passwordChange() throws {
        let policies = try CA.compile([Self.policy(["mfa", "passwordChange"], conditions: ["userRiskLevels": ["high"]])])
        #expect(kind(policies.evaluate(Self.facts(user: .high)).refusal) == "mfa")
        let refusal = try #require(policies.evaluate(Self.facts(user: .high, mfa: true)).refusal)
        #expect(kind(refusal) == "passwordChange")
        let error = GrantRefusal(refusal: refusal, declaresProtApp: false, user: nil, tenantId: "t").tokenError(baseURL: "")
        #expect(error.aadsts == 50142 && error.code == .interactionRequired)
        #expect(policies.evaluate(Self.facts(user: .none, mfa: true)).status == .notApplied, "remediated: the policy no longer applies")
        func step(_ facts: SignInFacts, silent: Bool = false) -> InteractiveDecision.Step {
            InteractiveDecision.decide(
                InteractiveDecision.Facts(
                    flow: .authorize, signIn: facts, now: RiskTests.start, silent: silent, methods: .init(hasAuthenticatorApp: true, passkeys: 0)),
                policies: policies
            ).step
        }
        #expect(step(Self.facts(user: .high)) == .enterCode)
        #expect(step(Self.facts(user: .high, mfa: true)) == .changePassword)
        #expect(step(Self.facts(user: .high, mfa: true), silent: true) == .interactionRequired)
    }

    @Test("riskRemediation: a multi-factor sign-in made after the risk was raised meets it; an older one signs in again")
    func riskRemediation() throws {
        let policies = try CA.compile([Self.policy(["riskRemediation"], conditions: ["userRiskLevels": ["high", "medium"]])])
        #expect(kind(policies.evaluate(Self.facts(user: .high)).refusal) == "riskRemediation")
        let old = Self.facts(user: .high, mfa: true, authTime: RiskTests.start.addingTimeInterval(-60))
        #expect(kind(policies.evaluate(old).refusal) == "riskRemediation")
        #expect(policies.evaluate(Self.facts(user: .high, mfa: true, authTime: RiskTests.start.addingTimeInterval(60))).status == .success)
        let step = { (facts: SignInFacts) in
            InteractiveDecision.decide(
                InteractiveDecision.Facts(flow: .authorize, signIn: facts, now: RiskTests.start, methods: .init(hasAuthenticatorApp: true, passkeys: 0)),
                policies: policies
            ).step
        }
        #expect(step(Self.facts(user: .high)) == .enterCode)
        #expect(step(old) == .signInAgain)
    }

    @Test("who decides risk: Security Administrators write identityProtection; Conditional Access Administrators and readers only read it")
    func authorization() {
        #expect(AdminAuthorization.area(ofPath: "identityProtection/riskyUsers/dismiss") == .risk)
        #expect(AdminAuthorization.area(ofPath: "identityProtection/servicePrincipalRiskDetections") == .risk)
        let security = DirectoryRoleDefinition.securityAdministrator
        let conditionalAccess = DirectoryRoleDefinition.conditionalAccessAdministrator
        #expect(AdminAuthorization.allows(roles: [security], method: "POST", path: "identityProtection/riskyUsers/confirmCompromised"))
        #expect(!AdminAuthorization.allows(roles: [conditionalAccess], method: "POST", path: "identityProtection/riskyUsers/dismiss"))
        #expect(AdminAuthorization.allows(roles: [conditionalAccess], method: "GET", path: "identityProtection/riskyUsers"))
        #expect(
            !AdminAuthorization.allows(roles: [DirectoryRoleDefinition.globalReader], method: "PUT", path: "identityProtection/riskyUsers/u/insiderRiskLevel"))
    }

    @Test("validation: levels spelled as Graph does; remediation only for user risk, with AND, and passwordChange with MFA")
    func validation() {
        #expect(Self.problems(Self.policy(["mfa", "passwordChange"], conditions: ["userRiskLevels": ["high"]])).isEmpty)
        #expect(Self.problems(Self.policy(["passwordChange"], conditions: ["userRiskLevels": ["high"]])) == ["/grantControls/builtInControls"])
        #expect(Self.problems(Self.policy(["mfa", "passwordChange"])) == ["/conditions/userRiskLevels"])
        #expect(Self.problems(Self.policy(["mfa", "passwordChange"], op: "OR", conditions: ["userRiskLevels": ["high"]])) == ["/grantControls/operator"])
        #expect(Self.problems(Self.policy(["riskRemediation"], conditions: ["signInRiskLevels": ["high"]])) == ["/conditions/userRiskLevels"])
        #expect(Self.problems(Self.policy(["mfa"], conditions: ["signInRiskLevels": ["severe"]])) == ["/conditions/signInRiskLevels/0"])
        #expect(Self.problems(Self.policy(["mfa"], conditions: ["insiderRiskLevels": "minor,huge"])) == ["/conditions/insiderRiskLevels"])
        #expect(Self.problems(Self.policy(["mfa"], conditions: ["servicePrincipalRiskLevels": ["high"]])) == ["/conditions/servicePrincipalRiskLevels"])
        #expect(Self.problems(Self.policy(["mfa"], conditions: ["signInRiskLevels": [], "userRiskLevels": []])).isEmpty, "empty lists: no condition")
        // The lock-out guard: blocking every user everywhere needs an exclusion, unless only risky users or sign-ins are blocked.
        #expect(Self.problems(Self.policy(["block"], op: "OR")) == ["/conditions/users/excludeUsers"])
        #expect(Self.problems(Self.policy(["block"], op: "OR", conditions: ["userRiskLevels": ["high"]])).isEmpty)
        #expect(Self.problems(Self.policy(["block"], op: "OR", conditions: ["signInRiskLevels": ["high"]])).isEmpty)
    }
}
