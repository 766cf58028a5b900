import Foundation
import PortcullisCore
import Testing

/// Device compliance policies in Intune's Graph shapes, what a check-in's report fails, the grace period, and what a
/// device's fall from compliance tells receivers (PROTOCOL §18).
@Suite("device compliance: policies, check-ins, grace periods, events")
struct DeviceComplianceTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func policy(_ members: [String: Any]) throws -> DeviceCompliancePolicy {
        try DeviceCompliancePolicy.parse(CA.json(members), generatedId: "b1000000-0000-4000-8000-000000000001")
    }

    static var ios: [String: Any] {
        [
            "@odata.type": "#microsoft.graph.iosCompliancePolicy", "displayName": "iOS baseline", "osMinimumVersion": "17.0", "passcodeRequired": true,
            "securityBlockJailbrokenDevices": true,
            "scheduledActionsForRule": [["ruleName": "PasswordRequired", "scheduledActionConfigurations": [["actionType": "block", "gracePeriodHours": 24]]]],
        ]
    }

    static func report(version: String = "17.4", passcode: Bool = true, encrypted: Bool = true, jailbroken: Bool = false) -> DeviceCompliancePolicy.Report {
        DeviceCompliancePolicy.Report(
            operatingSystem: "iOS", operatingSystemVersion: version, passcodeSet: passcode, storageEncrypted: encrypted, jailbroken: jailbroken)
    }

    @Test("Graph's shapes per platform: each platform's members, others refused at their pointers; versions and grace checked")
    func parsing() throws {
        let parsed = try Self.policy(Self.ios)
        #expect(parsed.platform == .iOS && parsed.passcodeRequired && parsed.securityBlockJailbrokenDevices && parsed.gracePeriodHours == 24)
        #expect(parsed.presented["@odata.type"] == "#microsoft.graph.iosCompliancePolicy" && parsed.presented["passcodeRequired"] == .bool(true))
        #expect(try DeviceCompliancePolicy.parse(parsed.presented, generatedId: "x") == parsed, "what is shown reads back the same")
        let windows = try Self.policy([
            "@odata.type": "#microsoft.graph.windows10CompliancePolicy", "displayName": "Windows", "passwordRequired": true, "storageRequireEncryption": true,
            "osMinimumVersion": "10.0.19045",
        ])
        #expect(windows.platform == .windows && windows.passcodeRequired && windows.storageRequireEncryption)
        func pointers(_ members: [String: Any]) -> [String] {
            do {
                _ = try Self.policy(members)
                return []
            } catch let error as ValidationError {
                return error.problems.map(\.pointer)
            } catch { return ["\(error)"] }
        }
        #expect(pointers(["@odata.type": "#microsoft.graph.linuxCompliancePolicy", "displayName": "x"]) == ["/@odata.type"])
        #expect(
            pointers(["@odata.type": "#microsoft.graph.iosCompliancePolicy", "displayName": "x", "storageRequireEncryption": true]) == [
                "/storageRequireEncryption"
            ])
        #expect(pointers(["@odata.type": "#microsoft.graph.androidCompliancePolicy", "displayName": "x", "passcodeRequired": true]) == ["/passcodeRequired"])
        #expect(
            pointers(["@odata.type": "#microsoft.graph.macOSCompliancePolicy", "displayName": "x", "osMinimumVersion": "fourteen"]) == ["/osMinimumVersion"])
        #expect(
            pointers(["@odata.type": "#microsoft.graph.macOSCompliancePolicy", "displayName": "x", "osMinimumVersion": "15", "osMaximumVersion": "14"])
                == ["/osMaximumVersion"])
        #expect(
            pointers([
                "@odata.type": "#microsoft.graph.iosCompliancePolicy", "displayName": "x",
                "scheduledActionsForRule": [["scheduledActionConfigurations": [["actionType": "block", "gracePeriodHours": -1]]]],
            ]) == ["/scheduledActionsForRule/0/scheduledActionConfigurations/0/gracePeriodHours"])
    }

    @Test("what a report fails, setting by setting")
    func failures() throws {
        let policy = try Self.policy(Self.ios)
        #expect(policy.failures(Self.report()).isEmpty)
        #expect(policy.failures(Self.report(version: "16.7")).first?.contains("osMinimumVersion 17.0") == true)
        #expect(policy.failures(Self.report(passcode: false)).first?.contains("passcodeRequired") == true)
        #expect(policy.failures(Self.report(jailbroken: true)).first?.contains("jailbroken") == true)
        #expect(policy.failures(Self.report(version: "")).count == 1, "an unknown version fails a minimum")
        #expect(policy.failures(Self.report(encrypted: false)).isEmpty, "iOS storage is always encrypted")
    }

    static func device(compliant: Bool = false) -> Device {
        var device = Device(
            id: "a2000000-0000-4000-8000-000000000001", deviceId: "a3000000-0000-4000-8000-000000000001", displayName: "Phone", trustType: .workplace,
            operatingSystem: "iOS", registeredOwners: ["a0000000-0000-4000-8000-000000000001"])
        device.isCompliant = compliant
        return device
    }

    /// A device as an admin sends it back: as shown, with `changes`.
    static func presented(_ device: Device, _ changes: [String: JSONValue]) -> JSONValue {
        guard case .object(var object) = device.presented else { return .null }
        for (key, value) in changes { object[key] = value }
        return .object(object)
    }

    @Test("a check-in: managed from then on; compliant when every policy of its platform passes (none: compliant, Intune's default)")
    func checkIn() throws {
        let policy = try Self.policy(Self.ios)
        let passed = Self.device().checkedIn(Self.report(), policies: [policy], now: Self.now)
        #expect(passed.isManaged && passed.isCompliant && passed.lastSyncDateTime == Self.now && passed.complianceFailures == [])
        let android = try Self.policy(["@odata.type": "#microsoft.graph.androidCompliancePolicy", "displayName": "A", "passwordRequired": true])
        #expect(Self.device().checkedIn(Self.report(passcode: false), policies: [android], now: Self.now).isCompliant, "another platform's policy")
        #expect(Self.device().checkedIn(Self.report(passcode: false), policies: [], now: Self.now).isCompliant)
        let failed = Self.device().checkedIn(Self.report(passcode: false), policies: [policy], now: Self.now)
        #expect(!failed.isCompliant && failed.complianceFailures?.count == 1, "not compliant before: no grace")
    }

    @Test("the grace period: a compliant device that fails stays compliant for the policy's hours, counted from its first failure")
    func grace() throws {
        let policy = try Self.policy(Self.ios)
        let failing = Self.device(compliant: true).checkedIn(Self.report(jailbroken: true), policies: [policy], now: Self.now)
        #expect(failing.isCompliant && failing.complianceGracePeriodExpirationDateTime == Self.now.addingTimeInterval(24 * 3600))
        #expect(failing.isCompliant(at: Self.now.addingTimeInterval(23 * 3600)))
        #expect(!failing.isCompliant(at: Self.now.addingTimeInterval(24 * 3600)), "the grace ends without another check-in")
        #expect(!failing.facts(at: Self.now.addingTimeInterval(25 * 3600)).isCompliant, "and conditional access sees it")
        let again = failing.checkedIn(Self.report(jailbroken: true), policies: [policy], now: Self.now.addingTimeInterval(20 * 3600))
        #expect(again.complianceGracePeriodExpirationDateTime == failing.complianceGracePeriodExpirationDateTime, "a later failure does not extend it")
        let late = failing.checkedIn(Self.report(jailbroken: true), policies: [policy], now: Self.now.addingTimeInterval(25 * 3600))
        #expect(!late.isCompliant)
        // An admin renaming the device in its grace does not restart the grace; an admin's word on compliance ends it.
        let renamed = try Device.parse(
            Self.presented(failing, ["displayName": "Renamed"]), existing: failing, directory: CA.directory, generatedId: "x", now: Self.now
        ).device
        #expect(renamed.complianceGracePeriodExpirationDateTime == failing.complianceGracePeriodExpirationDateTime)
        let vouched = try Device.parse(
            Self.presented(late, ["isCompliant": true]), existing: late, directory: CA.directory, generatedId: "x", now: Self.now
        ).device
        #expect(vouched.isCompliant && vouched.complianceGracePeriodExpirationDateTime == nil)
        let fixed = late.checkedIn(Self.report(), policies: [policy], now: Self.now.addingTimeInterval(26 * 3600))
        #expect(fixed.isCompliant && fixed.complianceGracePeriodExpirationDateTime == nil)
    }

    @Test("falling out of compliance tells each owner's receivers (device-compliance-change, session-revoked) and ends the families granted on the device")
    func effects() throws {
        let compliant = Self.device(compliant: true)
        var lost = compliant
        lost.isCompliant = false
        let effects = Device.effects(before: compliant, after: lost, tenantId: "f0000000-0000-4000-8000-000000000001", at: Self.now)
        let event = try #require(effects.events.first)
        #expect(effects.events.count == 1 && event.userId == compliant.registeredOwners[0] && event.endsAccess)
        #expect(event.signals.map(\.type) == [.deviceComplianceChange, .sessionRevoked])
        #expect(event.signals.first?.members["current_status"] == "not-compliant")
        if case .complex(_, _, _, let device) = event.subject(issuer: "https://issuer") {
            #expect(device == .opaque(compliant.deviceId.rawValue))
        } else {
            Issue.record("not a complex subject")
        }
        #expect(effects.revocations.isEmpty, "no user's every family: only those granted on the device")
        #expect(effects.endsFamiliesOfDevices == [compliant.id], "the families granted on the device end (PROTOCOL §18)")
        let tenant: TenantID = "f0000000-0000-4000-8000-000000000001"
        var disabled = compliant
        disabled.accountEnabled = false
        let off = Device.effects(before: compliant, after: disabled, tenantId: tenant, at: Self.now)
        #expect(off.events.count == 1 && off.endsFamiliesOfDevices == [compliant.id])
        let gone = Device.effects(before: compliant, after: nil, tenantId: tenant, at: Self.now)
        #expect(gone.events.count == 1 && gone.endsFamiliesOfDevices == [compliant.id])
        let back = Device.effects(before: lost, after: compliant, tenantId: tenant, at: Self.now)
        #expect(back.events.first?.endsAccess == false && back.events.first?.signals.map(\.type) == [.deviceComplianceChange])
        #expect(back.endsFamiliesOfDevices.isEmpty, "back in compliance ends nothing")
        #expect(Device.effects(before: compliant, after: compliant, tenantId: tenant, at: Self.now).isEmpty)
        // Its proof void without a change of compliance: a non-compliant device disabled, or given a new certificate.
        var lostAndDisabled = lost
        lostAndDisabled.accountEnabled = false
        let voided = Device.effects(before: lost, after: lostAndDisabled, tenantId: tenant, at: Self.now)
        #expect(voided.events.isEmpty && voided.endsFamiliesOfDevices == [compliant.id])
        var rekeyed = compliant
        rekeyed.certificate = Device.Certificate(pem: "", thumbprint: "another", serialNumber: "2", notAfter: Self.now)
        #expect(Device.effects(before: compliant, after: rekeyed, tenantId: tenant, at: Self.now).endsFamiliesOfDevices == [compliant.id])
        var renamed = compliant
        renamed.displayName = "Renamed"
        #expect(Device.effects(before: compliant, after: renamed, tenantId: tenant, at: Self.now).isEmpty, "a new name ends nothing")
    }
}
