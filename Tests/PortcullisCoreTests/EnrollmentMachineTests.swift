import Foundation
import PortcullisAPI
import PortcullisCore
import Testing

@Suite("app protection policies and the enrollment state machine")
struct EnrollmentMachineTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    static func policy(_ settings: (inout AppProtectionSettings) -> Void = { _ in }) -> MergedAppProtectionPolicy {
        var s = AppProtectionSettings()
        s.offlineGracePeriodMinutes = 60
        settings(&s)
        return MergedAppProtectionPolicy.resolve(
            [AppProtectionPolicy(id: "p", displayName: "p", targets: .init(applications: ["c"], includeGroups: ["All"], excludeGroups: []), settings: s)],
            userId: "u", groupIds: [], clientId: "c")!
    }

    static func enrolled(_ policy: MergedAppProtectionPolicy) -> Enrollment {
        EnrollmentMachine.enroll(
            id: "e", tenantId: "t", userId: "U", userPrincipalName: "u@t", clientId: "C", deviceId: "D", platform: .iOS,
            osVersion: "17.0", appVersion: "3.0", sdkVersion: "1", callbackUri: nil, policy: policy, now: t0
        ).enrollment
    }

    static func report(
        _ version: String?, os: String = "17.0", app: String = "3.0", jailbroken: Bool = false, pin: Bool = true, silent: Bool = false
    ) -> CheckInReport {
        CheckInReport(appliedPolicyVersion: version, osVersion: os, appVersion: app, jailbroken: jailbroken, pinSet: pin, silent: silent)
    }

    @Test("pending → compliant only after acknowledging the current version; then lapses after the grace period; recovers")
    func lifecycle() {
        let policy = Self.policy()
        let e0 = Self.enrolled(policy)
        #expect(e0.state == .pending && e0.userId == "u" && e0.deviceId == "d")
        #expect(!e0.isCompliant(at: Self.t0))

        let noAck = EnrollmentMachine.checkIn(e0, report: Self.report(nil), policy: policy, now: Self.t0)
        #expect(noAck.enrollment.state == .pending)
        #expect(noAck.statusCode == .newPoliciesReceived && noAck.deliverPolicy)
        #expect(noAck.change == nil)

        let ack = EnrollmentMachine.checkIn(noAck.enrollment, report: Self.report(policy.version), policy: policy, now: Self.t0)
        #expect(ack.enrollment.state == .compliant)
        #expect(ack.statusCode == .policiesUnchanged && !ack.deliverPolicy)
        #expect(ack.change?.current.status == .compliant && ack.change?.complianceFlipped == true)
        #expect(ack.enrollment.isCompliant(at: Self.t0.addingTimeInterval(3599)))
        #expect(!ack.enrollment.isCompliant(at: Self.t0.addingTimeInterval(3600)))

        #expect(EnrollmentMachine.lapse(ack.enrollment, now: Self.t0.addingTimeInterval(10)) == nil)
        let lapsed = EnrollmentMachine.lapse(ack.enrollment, now: Self.t0.addingTimeInterval(3600))
        #expect(lapsed?.enrollment.state == .lapsed && lapsed?.change?.current == .lapsed)

        let back = EnrollmentMachine.checkIn(lapsed!.enrollment, report: Self.report(policy.version), policy: policy, now: Self.t0.addingTimeInterval(4000))
        #expect(back.enrollment.state == .compliant && back.change?.previous == .lapsed)
        #expect(back.enrollment.isCompliant(at: Self.t0.addingTimeInterval(4000 + 3599)))
    }

    @Test(
        "launch conditions",
        arguments: [
            ("jailbroken", Self.report(nil, jailbroken: true), ComplianceStatus.jailbroken),
            ("old OS", Self.report(nil, os: "15.7"), ComplianceStatus.osTooOld("16.0")),
            ("old app", Self.report(nil, app: "1.9.9"), ComplianceStatus.appTooOld("2.0")),
            ("no PIN, interactive", Self.report(nil, pin: false), ComplianceStatus.pinRequired),
            ("no PIN, silent", Self.report(nil, pin: false, silent: true), ComplianceStatus.pinRequiredInteractive),
        ])
    func launchConditions(_ name: String, _ report: CheckInReport, _ expected: ComplianceStatus) {
        let policy = Self.policy {
            $0.blockJailbrokenDevices = true
            $0.minimumOsVersion = "16.0"
            $0.minimumAppVersion = "2.0"
            $0.pinRequired = true
        }
        var r = report
        r.appliedPolicyVersion = policy.version
        let outcome = EnrollmentMachine.checkIn(Self.enrolled(policy), report: r, policy: policy, now: Self.t0)
        #expect(outcome.enrollment.state == .notCompliant, "\(name)")
        #expect(outcome.enrollment.complianceStatus == expected, "\(name)")
        #expect(expected.errorTitle != nil && expected.errorMessage != nil)
    }

    @Test("a policy change keeps a compliant app compliant while it applies the new version; a stricter one that fails makes it not compliant")
    func policyChange() {
        let v1 = Self.policy()
        let compliant = EnrollmentMachine.checkIn(Self.enrolled(v1), report: Self.report(v1.version), policy: v1, now: Self.t0).enrollment
        let v2 = Self.policy { $0.printingBlocked = true }
        #expect(v2.version != v1.version)
        let delivered = EnrollmentMachine.checkIn(compliant, report: Self.report(v1.version), policy: v2, now: Self.t0.addingTimeInterval(60))
        #expect(delivered.statusCode == .newPoliciesReceived && delivered.deliverPolicy && delivered.enrollment.state == .compliant)
        let v3 = Self.policy { $0.minimumOsVersion = "18.0" }
        let failed = EnrollmentMachine.checkIn(compliant, report: Self.report(v1.version), policy: v3, now: Self.t0.addingTimeInterval(60))
        #expect(failed.enrollment.state == .notCompliant && failed.change?.complianceFlipped == true)
        let untargeted = EnrollmentMachine.checkIn(compliant, report: Self.report(v1.version), policy: nil, now: Self.t0.addingTimeInterval(60))
        #expect(untargeted.statusCode == .noPolicyReceived && untargeted.enrollment.complianceStatus == .notTargeted)
    }

    @Test("wipe revokes at once, the next check-in carries the command, unenrolling acknowledges it")
    func wipe() {
        let policy = Self.policy()
        let compliant = EnrollmentMachine.checkIn(Self.enrolled(policy), report: Self.report(policy.version), policy: policy, now: Self.t0).enrollment
        let wiped = EnrollmentMachine.wipe(compliant, now: Self.t0.addingTimeInterval(1))!
        #expect(wiped.revokeTokens && wiped.enrollment.state == .wipePending && !wiped.enrollment.isCompliant(at: Self.t0.addingTimeInterval(1)))
        #expect(wiped.change?.complianceFlipped == true)
        #expect(EnrollmentMachine.wipe(wiped.enrollment, now: Self.t0) == nil)
        let next = EnrollmentMachine.checkIn(wiped.enrollment, report: Self.report(policy.version), policy: policy, now: Self.t0.addingTimeInterval(2))
        #expect(next.commands == [.wipe] && next.statusCode == .wipeReceived && next.enrollment.state == .wipePending)
        let gone = EnrollmentMachine.unenroll(next.enrollment, now: Self.t0.addingTimeInterval(3))
        #expect(gone.enrollment.state == .unenrolled && gone.statusCode == .unenrollmentSucceeded && !gone.enrollment.isActive)
    }

    @Test("merging several policies: the most restrictive value of each setting; version follows content")
    func merge() {
        var a = AppProtectionSettings()
        a.pinRequired = false
        a.minimumOsVersion = "16.2"
        a.saveAs = .init(blocked: true, allowedLocations: [.oneDriveForBusiness, .sharePoint])
        a.dataTransfer = .init(sendOrgData: .allApps, receiveData: .policyManagedApps)
        a.recheckIntervalMinutes = 60
        a.notificationPolicy = .blockOrgData
        var b = AppProtectionSettings()
        b.pinRequired = true
        b.minimumOsVersion = "16.10"
        b.saveAs = .init(blocked: true, allowedLocations: [.sharePoint, .localDrive])
        b.openFrom = .init(blocked: false, allowedLocations: [])
        b.dataTransfer = .init(sendOrgData: .none, receiveData: .allApps)
        b.recheckIntervalMinutes = 15
        let merged = AppProtectionSettings.merge([a, b])
        #expect(merged.pinRequired == true)
        #expect(merged.minimumOsVersion == "16.10")
        #expect(merged.saveAs == .init(blocked: true, allowedLocations: [.sharePoint]))
        #expect(merged.openFrom == .init(blocked: false, allowedLocations: []))
        #expect(merged.dataTransfer == .init(sendOrgData: .none, receiveData: .policyManagedApps))
        #expect(merged.recheckIntervalMinutes == 15)
        #expect(merged.offlineGracePeriodMinutes == 720)
        #expect(merged.notificationPolicy == .blockOrgData)
        #expect(AppProtectionSettings.merge([b, a]) == merged, "order does not matter")
        #expect(AppProtectionSettings.merge([b, a]).fingerprint == merged.fingerprint)
        #expect(AppProtectionSettings.merge([a]).fingerprint != merged.fingerprint)
        #expect(merged.saveAs!.allows(.sharePoint) && !merged.saveAs!.allows(.oneDriveForBusiness))
    }

    @Test("versions compare numerically", arguments: [("16.10", "16.9", 1), ("17", "17.0.0", 0), ("1.2.3", "1.10", -1), ("10.0", "9.9.9", 1)])
    func versions(_ a: String, _ b: String, _ expected: Int) { #expect(SoftwareVersion.compare(a, b) == expected) }

    @Test("targeting by app and group, exclusion wins; allowed accounts by UPN or object ID, case-insensitive")
    func targeting() {
        let p = AppProtectionPolicy(
            id: "p", displayName: "p", targets: .init(applications: ["app"], includeGroups: ["g1"], excludeGroups: ["g2"]), settings: .init())
        #expect(p.targets(userId: "u", groupIds: ["G1"], clientId: "APP"))
        #expect(!p.targets(userId: "u", groupIds: ["g1", "g2"], clientId: "app"))
        #expect(!p.targets(userId: "u", groupIds: ["g1"], clientId: "other"))
        #expect(!p.targets(userId: "u", groupIds: [], clientId: "app"))
        let tenant = Tenant(id: "t", domain: "t.test", displayName: "T", allowedAccounts: ["Alice@T.test", "BBBB-id"])
        #expect(AllowedAccounts.permits(tenant, userId: "x", userPrincipalName: "alice@t.TEST"))
        #expect(AllowedAccounts.permits(tenant, userId: "bbbb-ID", userPrincipalName: "bob@t.test"))
        #expect(!AllowedAccounts.permits(tenant, userId: "c", userPrincipalName: "carol@t.test"))
        #expect(AllowedAccounts.permits(Tenant(id: "t", domain: "t.test", displayName: "T"), userId: "c", userPrincipalName: "carol@t.test"))
    }

    @Test("app protection policy validation reports every problem with its pointer")
    func validation() {
        let value = JSONValue.parse(
            Data(
                #"""
                {"displayName": "x", "colour": 1, "targets": {"applications": ["nope"], "includeGroups": []},
                 "settings": {"pinRequired": "yes", "minimumOsVersion": "seventeen", "saveAs": {"blocked": true, "allowedLocations": ["dropbox"]},
                              "dataTransfer": {"sendOrgData": "someApps"}, "recheckIntervalMinutes": 0, "unknownSetting": true}}
                """#.utf8))!
        do {
            _ = try AppProtectionPolicy.parse(value, directory: CA.directory, generatedId: "g")
            Issue.record("must be refused")
        } catch {
            let pointers = Set(error.problems.map(\.pointer))
            for pointer in [
                "/colour", "/targets/applications/0", "/targets/includeGroups", "/settings/pinRequired", "/settings/minimumOsVersion",
                "/settings/saveAs/allowedLocations/0", "/settings/dataTransfer/sendOrgData", "/settings/recheckIntervalMinutes", "/settings/unknownSetting",
            ] {
                #expect(pointers.contains(pointer), "missing \(pointer): \(pointers.sorted())")
            }
        }
    }
}
