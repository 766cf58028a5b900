import Foundation
import Testing

@testable import PortcullisCore

/// Conditional access on devices (PROTOCOL §18): `compliantDevice`, `domainJoinedDevice` and the filter for devices,
/// decided on the proven device of a sign-in (none: unregistered), refused with Entra's codes.
@Suite("conditional access: device controls and the filter for devices")
struct DeviceConditionalAccessTests {
    static let compliant = DeviceFacts(deviceId: "c1", trustType: .azureAd, isCompliant: true, isManaged: true, deviceOwnership: "Company")
    static let notCompliant = DeviceFacts(deviceId: "n1", trustType: .workplace, isCompliant: false, isManaged: false, deviceOwnership: "Personal")
    static let joined = DeviceFacts(deviceId: "j1", trustType: .serverAd, isCompliant: false, isManaged: false, deviceOwnership: "Company")

    static func facts(_ device: DeviceFacts?, mfa: Bool = false, protection: SignInFacts.AppProtection = .none) -> SignInFacts {
        var facts = CA.facts(protection: protection, mfa: mfa)
        facts.device = device
        return facts
    }

    static func policy(_ controls: [String], op: String = "OR", filter: [String: String]? = nil, state: String = "enabled") -> JSONValue {
        var conditions: [String: Any] = [
            "users": ["includeUsers": ["All"]], "applications": ["includeApplications": ["All"]],
        ]
        if let filter { conditions["devices"] = ["deviceFilter": filter] }
        var document: [String: Any] = ["displayName": "Devices", "state": state, "conditions": conditions]
        document["grantControls"] = controls.isEmpty ? NSNull() : ["operator": op, "builtInControls": controls] as Any
        if controls.isEmpty { document["sessionControls"] = ["signInFrequency": ["isEnabled": true, "type": "hours", "value": 1]] }
        return CA.json(document)
    }

    static func decide(_ document: JSONValue, _ facts: SignInFacts) throws -> Decision {
        try CA.compile([document]).evaluate(facts, explain: true)
    }

    @Test("compliantDevice: met by a proven compliant device only; the refusal is AADSTS53000")
    func compliantDevice() throws {
        let policy = Self.policy(["compliantDevice"])
        #expect(try Self.decide(policy, Self.facts(Self.compliant)).status == .success)
        for device in [Self.notCompliant, Self.joined, nil] {
            let decision = try Self.decide(policy, Self.facts(device))
            #expect(kind(decision.refusal) == "compliantDevice", "\(String(describing: device?.deviceId))")
            let error = GrantRefusal(refusal: try #require(decision.refusal), declaresProtApp: false, user: nil, tenantId: "t").tokenError(baseURL: "")
            #expect(error.aadsts == 53000 && error.code == .interactionRequired)
        }
        let reason = try Self.decide(policy, Self.facts(nil)).policies.first?.grantControlResults?.first?.reason
        #expect(reason?.contains("not registered") == true)
    }

    @Test("domainJoinedDevice: met by a hybrid-joined (ServerAd) device; the refusal is AADSTS53001")
    func domainJoined() throws {
        let policy = Self.policy(["domainJoinedDevice"])
        #expect(try Self.decide(policy, Self.facts(Self.joined)).status == .success)
        let refused = try Self.decide(policy, Self.facts(Self.compliant))
        #expect(kind(refused.refusal) == "domainJoinedDevice")
        let error = GrantRefusal(refusal: try #require(refused.refusal), declaresProtApp: false, user: nil, tenantId: "t").tokenError(baseURL: "")
        #expect(error.aadsts == 53001)
    }

    @Test("compliant or hybrid or MFA: an unregistered device steps up to MFA; AND needs every one")
    func combinations() throws {
        let either = Self.policy(["mfa", "compliantDevice", "domainJoinedDevice"])
        #expect(kind(try Self.decide(either, Self.facts(nil)).refusal) == "mfa", "the refusal the user can act on")
        #expect(try Self.decide(either, Self.facts(nil, mfa: true)).status == .success)
        #expect(try Self.decide(either, Self.facts(Self.joined)).status == .success)
        let both = Self.policy(["mfa", "compliantDevice"], op: "AND")
        #expect(kind(try Self.decide(both, Self.facts(Self.compliant)).refusal) == "mfa")
        #expect(kind(try Self.decide(both, Self.facts(Self.notCompliant, mfa: true)).refusal) == "compliantDevice")
        #expect(try Self.decide(both, Self.facts(Self.compliant, mfa: true)).status == .success)
        // A protected app remediates (53005) where a device cannot on its own: the app's refusal comes first.
        let appOrDevice = Self.policy(["compliantDevice", "compliantApplication"])
        #expect(kind(try Self.decide(appOrDevice, Self.facts(nil)).refusal) == "compliant")
        #expect(try Self.decide(appOrDevice, Self.facts(nil, protection: .compliant(enrollmentId: "e"))).status == .success)
        #expect(try Self.decide(appOrDevice, Self.facts(Self.compliant)).status == .success)
    }

    @Test("the page: a device refusal is its own when the device is settled there, the redemption's otherwise; MFA first")
    func page() throws {
        let policies = try CA.compile([Self.policy(["compliantDevice"])])
        func step(_ device: DeviceFacts?, settled: Bool, mfa: Bool = false, silent: Bool = false) -> InteractiveDecision.Step {
            var facts = InteractiveDecision.Facts(
                flow: .authorize, signIn: Self.facts(device, mfa: mfa), now: Date(), silent: silent, methods: .init(hasAuthenticatorApp: true, passkeys: 0))
            facts.deviceSettled = settled
            return InteractiveDecision.decide(facts, policies: policies).step
        }
        #expect(step(nil, settled: true) == .deviceRefused, "the browser answered without a device, or a web app")
        #expect(step(Self.notCompliant, settled: true) == .deviceRefused)
        #expect(step(nil, settled: true, silent: true) == .deviceRefused, "prompt=none: the refusal goes to the app")
        #expect(step(nil, settled: false) == .issue, "an app on the device may still prove it when it redeems the code")
        #expect(step(Self.compliant, settled: true) == .issue)
        let either = try CA.compile([Self.policy(["mfa", "compliantDevice"])])
        var facts = InteractiveDecision.Facts(flow: .authorize, signIn: Self.facts(nil), now: Date(), methods: .init(hasAuthenticatorApp: true, passkeys: 0))
        facts.deviceSettled = true
        #expect(InteractiveDecision.decide(facts, policies: either).step == .enterCode, "compliant or MFA: the page asks for the code")
        // Who settles it: an answer on the page (a device or none), or a web app; a native app without an answer does not.
        let web = Application(appId: "a1", displayName: "Web", publicClient: false)
        let native = Application(appId: "a2", displayName: "Native", publicClient: true)
        #expect(InteractiveDecision.Facts.deviceSettled(answered: nil, client: web))
        #expect(InteractiveDecision.Facts.deviceSettled(answered: .unregistered, client: native))
        #expect(!InteractiveDecision.Facts.deviceSettled(answered: nil, client: native))
    }

    @Test("the filter for devices: include and exclude modes, deviceState when it does not admit the device")
    func filter() throws {
        let include = Self.policy(["block"], filter: ["mode": "include", "rule": #"device.trustType -ne "ServerAD" -or device.isCompliant -ne True"#])
        #expect(try Self.decide(include, Self.facts(nil)).status == .failure, "an unregistered device meets the negative operators")
        #expect(try Self.decide(include, Self.facts(Self.joined)).status == .failure)
        let both = DeviceFacts(deviceId: "b", trustType: .serverAd, isCompliant: true, isManaged: true)
        let notApplied = try Self.decide(include, Self.facts(both))
        #expect(notApplied.status == .notApplied && notApplied.policies.first?.conditionsNotSatisfied == [.deviceState])
        let exclude = Self.policy(["block"], filter: ["mode": "exclude", "rule": #"device.isCompliant -eq True -and device.deviceOwnership -eq "Company""#])
        #expect(try Self.decide(exclude, Self.facts(Self.compliant)).status == .notApplied, "a compliant company device is excluded")
        #expect(try Self.decide(exclude, Self.facts(Self.notCompliant)).status == .failure)
        #expect(try Self.decide(exclude, Self.facts(nil)).status == .failure, "an unregistered device is not excluded")
    }

    @Test("validation: device controls and filters accepted; a bad rule refused at /conditions/devices/deviceFilter/rule with the character")
    func validation() throws {
        let accepted = try ConditionalAccessPolicy.parse(
            Self.policy(["compliantDevice"], filter: ["mode": "exclude", "rule": #"device.model -eq "x""#]), directory: CA.directory, generatedId: "x",
            force: true)
        #expect(accepted.grantControls.builtInControls == [.compliantDevice])
        #expect(accepted.conditions.devices?.deviceFilter?.text == #"device.model -eq "x""#)
        // Stored and read back: the rule as written, parsed again.
        let stored = try JSONDecoder().decode(ConditionalAccessPolicy.self, from: JSONEncoder().encode(accepted))
        #expect(stored == accepted && stored.conditions.devices?.deviceFilter?.text == #"device.model -eq "x""#)
        func problems(_ document: JSONValue) -> [ValidationProblem] {
            do {
                _ = try ConditionalAccessPolicy.parse(document, directory: CA.directory, generatedId: "x", force: true)
                return []
            } catch { return error.problems }
        }
        let bad = problems(Self.policy(["block"], filter: ["mode": "include", "rule": #"device.trustType -eq "Cloud""#]))
        #expect(bad.map(\.pointer) == ["/conditions/devices/deviceFilter/rule"])
        #expect(bad.first?.message.contains("at character 22") == true)
        #expect(
            problems(Self.policy(["block"], filter: ["mode": "sometimes", "rule": #"device.model -eq "x""#])).map(\.pointer) == [
                "/conditions/devices/deviceFilter/mode"
            ])
        let states = CA.json([
            "displayName": "x", "state": "enabled",
            "conditions": [
                "users": ["includeUsers": ["All"]], "applications": ["includeApplications": ["All"]], "devices": ["excludeDevices": ["Compliant"]],
            ],
            "grantControls": ["operator": "OR", "builtInControls": ["mfa"]],
        ])
        #expect(problems(states).map(\.pointer) == ["/conditions/devices/excludeDevices"], "the deprecated device states: a filter says it")
        let workload = CA.json([
            "displayName": "x", "state": "enabled",
            "conditions": [
                "applications": ["includeApplications": ["All"]], "clientApplications": ["includeServicePrincipals": ["ServicePrincipalsInMyTenant"]],
                "devices": ["deviceFilter": ["mode": "include", "rule": #"device.model -eq "x""#]],
            ],
            "grantControls": ["operator": "OR", "builtInControls": ["block"]],
        ])
        #expect(problems(workload).map(\.pointer) == ["/conditions/devices/deviceFilter"])
    }

    @Test("the lock-out guard: a device-only policy covering every administrator warns; one that excludes an administrator does not")
    func lockout() throws {
        let admin = "a0000000-0000-4000-8000-0000000000aa"
        let base = CA.directory
        let directory = DirectorySnapshot(
            tenant: base.tenant, revision: 1, users: base.users + [User(id: ObjectID(admin), userPrincipalName: "admin@ca.test", displayName: "Admin")],
            groups: base.groups, applications: base.applications, appRoleAssignments: [], namedLocations: base.namedLocations,
            directoryRoleAssignments: [DirectoryRoleAssignment(principalId: ObjectID(admin), roleDefinitionId: DirectoryRoleDefinition.globalAdministrator)])
        func warnings(_ document: JSONValue) throws -> [ValidationProblem] {
            try ConditionalAccessPolicy.parse(document, directory: directory, generatedId: "x", force: true).lockoutWarnings(
                directory: directory, registered: .init(anyFactor: [], passkey: []), protectedApps: [])
        }
        let all = try warnings(Self.policy(["compliantDevice"]))
        #expect(all.count == 1 && all.first?.message.contains("admin@ca.test") == true && all.first?.message.contains("53000") == true)
        #expect(try warnings(Self.policy(["compliantDevice", "mfa"])).isEmpty, "an administrator can pass with MFA")
        #expect(try warnings(Self.policy(["compliantDevice"], state: "enabledForReportingButNotEnforced")).isEmpty)
        let excluding = CA.json([
            "displayName": "x", "state": "enabled",
            "conditions": ["users": ["includeUsers": ["All"], "excludeUsers": [admin]], "applications": ["includeApplications": ["All"]]],
            "grantControls": ["operator": "OR", "builtInControls": ["compliantDevice", "domainJoinedDevice"]],
        ])
        #expect(try warnings(excluding).isEmpty, "a break-glass administrator excluded")
    }
}
