import Foundation
import PortcullisCore
import Testing

@Suite("conditional-access validation")
struct ConditionalAccessValidationTests {
    func problems(_ value: JSONValue, force: Bool = false) -> [ValidationProblem] {
        do {
            _ = try ConditionalAccessPolicy.parse(value, directory: CA.directory, generatedId: "g", force: force)
            return []
        } catch {
            return error.problems
        }
    }

    func pointers(_ value: JSONValue, force: Bool = false) -> Set<String> { Set(problems(value, force: force).map(\.pointer)) }

    @Test("a valid policy parses and normalises IDs and enum spellings")
    func valid() throws {
        let policy = try ConditionalAccessPolicy.parse(
            CA.json([
                "displayName": "x", "state": "enabled",
                "conditions": [
                    "users": ["includeUsers": [CA.u1.uppercased()]], "applications": ["includeApplications": ["all"]],
                    "platforms": ["includePlatforms": ["IOS"]],
                ],
                "grantControls": ["operator": "OR", "builtInControls": ["CompliantApplication"]],
            ]), directory: CA.directory, generatedId: "generated-id")
        #expect(policy.id == "generated-id")
        #expect(policy.conditions.users?.includeUsers == [CA.u1])
        #expect(policy.conditions.applications.includeApplications == ["All"])
        #expect(policy.conditions.applications.includeApplications.contains(.all))
        #expect(policy.conditions.platforms?.includePlatforms == .only([.iOS]))
        #expect(policy.grantControls.builtInControls == [.compliantApplication])
        #expect(policy.conditions.clientAppTypes == .all)
    }

    @Test("Graph's spelling is read: markup, read-only members, null newcomers; typos and used newcomers stay refused (PROTOCOL §17)")
    func graphSpelling() throws {
        func policy(root: [String: Any] = [:], conditions: [String: Any] = [:], grant: [String: Any] = [:]) -> JSONValue {
            var c: [String: Any] = [
                "users": ["includeUsers": [CA.u1], "includeUsers@odata.type": "#Collection(String)", "includeRoles": [], "excludeRoles": []],
                "applications": ["includeApplications": ["All"], "networkAccess": NSNull(), "globalSecureAccess": NSNull()],
                "@odata.type": "#microsoft.graph.conditionalAccessConditionSet",
            ]
            c.merge(conditions) { $1 }
            var g: [String: Any] = ["operator": "OR", "builtInControls": ["mfa"], "builtInControls@odata.type": "#Collection(String)"]
            g.merge(grant) { $1 }
            var r: [String: Any] = [
                "@odata.context": "https://graph.microsoft.com/beta/$metadata#identity/conditionalAccess/policies/$entity",
                "@odata.id": "identity/conditionalAccess/policies('x')", "displayName": "exported", "state": "enabled",
                "deletedDateTime": NSNull(), "partialEnablementStrategy": NSNull(), "createdDateTime@odata.type": "#DateTimeOffset",
                "createdDateTime": "2024-05-24T09:27:58Z", "#microsoft.graph.restore": ["title": "microsoft.graph.restore", "target": "https://x"],
                "conditions": c, "grantControls": g, "sessionControls": NSNull(),
            ]
            r.merge(root) { $1 }
            return CA.json(r)
        }
        let nulls: [String: Any] = ["deviceStates": NSNull(), "clients": NSNull(), "agents": NSNull(), "agentIdRiskLevels": NSNull()]
        let parsed = try ConditionalAccessPolicy.parse(policy(conditions: nulls), directory: CA.directory, generatedId: "g")
        #expect(parsed.grantControls.builtInControls == [.mfa])
        #expect(pointers(policy(conditions: ["clientAppTypes": ["exchangeActiveSync", "other"]])).isEmpty)
        // An expanded strength is read by its ID, whatever methods it lists.
        let strength: [String: Any] = [
            "id": "00000000-0000-0000-0000-000000000002", "@odata.type": "#microsoft.graph.authenticationStrengthPolicy",
            "allowedCombinations": ["password,sms", "federatedMultiFactor"], "policyType": "builtIn",
            "#microsoft.graph.updateAllowedCombinations": ["title": "t", "target": "https://x"],
        ]
        #expect(pointers(policy(grant: ["builtInControls": [], "authenticationStrength": strength, "authenticationStrength@odata.context": "x"])).isEmpty)
        // Strictness stays.
        #expect(pointers(policy(root: ["GrantControls": [:]])) == ["/GrantControls"])
        #expect(pointers(policy(root: ["stat@odata.type": "#x", "stat": "enabled"])) == ["/stat"])
        #expect(pointers(policy(conditions: ["deviceStates": ["includeStates": ["All"]]])) == ["/conditions/deviceStates"])
        #expect(pointers(policy(conditions: ["agents": ["includeAgentUsers": ["All"]]])) == ["/conditions/agents"])
        #expect(pointers(policy(conditions: ["clientAppTypes": ["pop3"]])) == ["/conditions/clientAppTypes/0"])
        #expect(
            pointers(policy(grant: ["authenticationStrength": ["id": "00000000-0000-0000-0000-000000000002", "allowedCombination": []]])).contains(
                "/grantControls/authenticationStrength/allowedCombination"))
    }

    @Test("typed conditions keep Graph's JSON shape: keywords first, platforms in their order, and read back equal")
    func typedRoundTrip() throws {
        let policy = try ConditionalAccessPolicy.parse(
            CA.json([
                "displayName": "x", "state": "enabled",
                "conditions": [
                    "users": ["includeUsers": [CA.u1.uppercased(), "none"], "excludeUsers": [CA.u2, CA.u2.uppercased()]],
                    "applications": ["includeApplications": ["ALL"]],
                    "clientAppTypes": ["mobileAppsAndDesktopClients", "Browser"],
                    "platforms": ["includePlatforms": ["windows", "android"], "excludePlatforms": ["IOS"]],
                    "locations": ["includeLocations": ["all"], "excludeLocations": ["alltrusted"]],
                ],
                "grantControls": ["operator": "OR", "builtInControls": ["mfa"]],
            ]), directory: CA.directory, generatedId: "g")
        let encoded = try #require(JSONValue.parse(JSONEncoder().encode(policy)))
        let conditions = encoded.objectValue?["conditions"]?.objectValue
        #expect(conditions?["users"]?.objectValue?["includeUsers"] == CA.json(["None", CA.u1]))
        #expect(conditions?["users"]?.objectValue?["excludeUsers"] == CA.json([CA.u2]))
        #expect(conditions?["applications"]?.objectValue?["includeApplications"] == CA.json(["All"]))
        #expect(conditions?["clientAppTypes"] == CA.json(["browser", "mobileAppsAndDesktopClients"]))
        #expect(conditions?["platforms"] == CA.json(["includePlatforms": ["android", "windows"], "excludePlatforms": ["iOS"]]))
        #expect(conditions?["locations"] == CA.json(["includeLocations": ["All"], "excludeLocations": ["AllTrusted"]]))
        let decoded = try JSONDecoder().decode(ConditionalAccessPolicy.self, from: JSONEncoder().encode(policy))
        #expect(decoded == policy)
        // What the validator accepts is what the evaluator reads: a parsed policy evaluates from the same values.
        let set = CompiledPolicySet(policies: [decoded], namedLocations: [])
        #expect(set.evaluate(CA.facts(user: CA.u1, platform: .windows)).policies.first?.conditionsNotSatisfied.contains(.devicePlatform) == false)
        #expect(set.evaluate(CA.facts(user: CA.u1, platform: .iOS)).policies.first?.conditionsNotSatisfied.contains(.devicePlatform) == true)
    }

    @Test("a platform or client type the evaluator could not read is refused, never dropped: 'all' cannot be excluded")
    func unreadableRefused() {
        let found = pointers(CA.policy(1, users: [CA.u1], platforms: ["all"], excludePlatforms: ["all", "tizen"], controls: ["block"]))
        #expect(found == ["/conditions/platforms/excludePlatforms/0", "/conditions/platforms/excludePlatforms/1"])
        #expect(pointers(CA.policy(1, users: [CA.u1], clientAppTypes: ["imap"], controls: ["block"])) == ["/conditions/clientAppTypes/0"])
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(AllOr<DevicePlatform>.self, from: Data(#"["iOS","symbian"]"#.utf8)) }
    }

    @Test("every kind of error, each with its pointer, all at once")
    func everyError() {
        let found = pointers(
            CA.json([
                "id": "not-a-guid", "displayName": 7, "state": "on", "colour": "blue",
                "conditions": [
                    "users": ["includeUsers": ["All", "f0000000-0000-4000-8000-00000000dead"], "excludeGroups": [42], "includeRoles": ["x"]],
                    "applications": ["includeApplications": ["nope"]],
                    "clientAppTypes": ["pop3"],
                    "platforms": ["includePlatforms": ["symbian"]],
                    "locations": ["includeLocations": ["e0000000-0000-4000-8000-0000000000ff"]],
                    "signInRiskLevels": ["severe"],
                ],
                "grantControls": ["operator": "XOR", "builtInControls": ["approve", "mfa", "magic"]],
            ]))
        for pointer in [
            "/id", "/displayName", "/state", "/colour", "/conditions/users/includeUsers/1", "/conditions/users/excludeGroups/0",
            "/conditions/users/includeRoles/0", "/conditions/applications/includeApplications/0", "/conditions/clientAppTypes/0",
            "/conditions/platforms/includePlatforms/0", "/conditions/locations/includeLocations/0", "/conditions/signInRiskLevels/0",
            "/grantControls/operator", "/grantControls/builtInControls/0", "/grantControls/builtInControls/2",
        ] {
            #expect(found.contains(pointer), "missing \(pointer) in \(found.sorted())")
        }
    }

    @Test("required members")
    func required() {
        let found = pointers(CA.json(["conditions": [:], "grantControls": ["operator": "OR"]]))
        #expect(found.isSuperset(of: ["/displayName", "/state", "/conditions/applications", "/conditions/users", "/grantControls/builtInControls"]))
        #expect(pointers(.string("x")) == [""])
    }

    @Test("block cannot be combined; workload policies can only block; session controls checked member by member (PROTOCOL §13)")
    func combinations() {
        #expect(pointers(CA.policy(1, users: [CA.u1], controls: ["block", "mfa"])).contains("/grantControls/builtInControls"))
        #expect(pointers(CA.policy(1, users: nil, servicePrincipals: [CA.daemon], controls: ["mfa"])).contains("/grantControls"))
        var withSession = CA.policy(1, users: [CA.u1], controls: ["mfa"]).objectValue!
        withSession["sessionControls"] = CA.json(["signInFrequency": ["value": 1]])
        #expect(pointers(.object(withSession)) == ["/sessionControls/signInFrequency/type", "/sessionControls/signInFrequency/isEnabled"])
        withSession["sessionControls"] = CA.json(["signInFrequency": ["value": 1, "type": "hours", "isEnabled": true, "frequencyInterval": "timeBased"]])
        #expect(pointers(.object(withSession)).isEmpty)
        withSession["sessionControls"] = CA.json(["cloudAppSecurity": ["isEnabled": true, "cloudAppSecurityType": "monitorOnly"]])
        #expect(pointers(.object(withSession)) == ["/sessionControls/cloudAppSecurity"])
        withSession["sessionControls"] = CA.json(["applicationEnforcedRestrictions": ["isEnabled": "yes"]])
        #expect(pointers(.object(withSession)) == ["/sessionControls/applicationEnforcedRestrictions/isEnabled"])
        withSession["sessionControls"] = .null
        #expect(pointers(.object(withSession)).isEmpty)
    }

    @Test("lock-out guard: blocking everyone everywhere needs an exclusion or force")
    func lockOut() {
        let everyone = CA.policy(1, controls: ["block"])
        #expect(pointers(everyone) == ["/conditions/users/excludeUsers"])
        #expect(pointers(everyone, force: true).isEmpty)
        #expect(pointers(CA.policy(1, excludeUsers: [CA.u3], controls: ["block"])).isEmpty)
        #expect(pointers(CA.policy(1, excludeGroups: [CA.gA], controls: ["block"])).isEmpty)
        #expect(pointers(CA.policy(1, state: "enabledForReportingButNotEnforced", controls: ["block"])).isEmpty)
        #expect(pointers(CA.policy(1, apps: [CA.r1], controls: ["block"])).isEmpty)
    }

    @Test("the shipped demo policies are valid against the shipped directory")
    func shippedPolicies() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let directory = try DirectoryDocument.parse(try Data(contentsOf: root.appendingPathComponent("Config/directory.json"))).snapshots(revision: 0)[0]
        let folder = root.appendingPathComponent("Config/conditional-access/contoso.example")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".json") }
        #expect(files.count >= 3)
        var states = Set<ConditionalAccessPolicy.State>()
        for file in files {
            let value = try #require(JSONValue.parse(try Data(contentsOf: folder.appendingPathComponent(file))))
            states.insert(try ConditionalAccessPolicy.parse(value, directory: directory, generatedId: "g").state)
        }
        #expect(states.contains(.reportOnly))
    }
}
