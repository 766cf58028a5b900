import Foundation
import PortcullisCore
import Testing

@Suite("app configuration policies: validation and merge (PROTOCOL §8.1)")
struct AppConfigurationPolicyTests {
    static func policy(
        _ id: String, priority: Int, groups: [String] = ["All"], exclude: [String] = [], app: String = CA.approvedClient,
        _ configuration: [String: Any]
    ) throws -> AppConfigurationPolicy {
        try AppConfigurationPolicy.parse(
            CA.json([
                "id": id, "displayName": id, "priority": priority, "configuration": configuration,
                "targets": ["applications": [app], "includeGroups": groups, "excludeGroups": exclude],
            ]), directory: CA.directory, others: [], generatedId: "g")
    }

    @Test("key by key at the top level, the lowest priority number winning each key; targets by group and app; nil when nothing applies")
    func merge() throws {
        let everyone = try Self.policy(
            "a0000000-0000-4000-8000-0000000000a1", priority: 20, ["serverUrl": "https://all", "syncDays": 7, "signature": ["enabled": false]])
        let groupA = try Self.policy(
            "a0000000-0000-4000-8000-0000000000a2", priority: 10, groups: [CA.gA], ["serverUrl": "https://a", "signature": ["text": "A"]])
        let other = try Self.policy("a0000000-0000-4000-8000-0000000000a3", priority: 5, app: CA.plainClient, ["serverUrl": "https://plain"])
        let policies = [everyone, groupA, other]
        let inA = MergedAppConfiguration.resolve(policies, groupIds: [ObjectID(CA.gA)], clientId: AppID(CA.approvedClient))
        #expect(
            inA.configuration == ["serverUrl": .string("https://a"), "syncDays": .number(7), "signature": .object(["text": .string("A")])],
            "a whole top-level value wins, never merged deeper")
        #expect(inA.policyIds == [groupA.id, everyone.id])
        let inB = MergedAppConfiguration.resolve(policies, groupIds: [ObjectID(CA.gB)], clientId: AppID(CA.approvedClient))
        #expect(inB.configuration?["serverUrl"] == .string("https://all"))
        let excluded = try Self.policy("a0000000-0000-4000-8000-0000000000a4", priority: 1, exclude: [CA.gB], ["serverUrl": "https://not-b"])
        #expect(MergedAppConfiguration.resolve([excluded], groupIds: [ObjectID(CA.gB)], clientId: AppID(CA.approvedClient)).configuration == nil)
        #expect(MergedAppConfiguration.resolve(policies, groupIds: [], clientId: AppID(CA.daemon)).configuration == nil, "no policy for the app: unmanaged")
        // The canonical form (what the version fingerprints) does not depend on the order keys were written in.
        let reordered = try Self.policy("a0000000-0000-4000-8000-0000000000a5", priority: 1, ["b": 2, "a": 1])
        let again = try Self.policy("a0000000-0000-4000-8000-0000000000a5", priority: 1, ["a": 1, "b": 2])
        #expect(
            MergedAppConfiguration.resolve([reordered], groupIds: [], clientId: AppID(CA.approvedClient)).canonical
                == MergedAppConfiguration.resolve([again], groupIds: [], clientId: AppID(CA.approvedClient)).canonical)
    }

    @Test("every problem with its pointer: size, priority range and conflicts, targets, secret declarations, unknown members")
    func validation() throws {
        let existing = try Self.policy("a0000000-0000-4000-8000-0000000000b1", priority: 10, ["k": 1])
        func pointers(_ value: [String: Any]) -> Set<String> {
            do {
                _ = try AppConfigurationPolicy.parse(CA.json(value), directory: CA.directory, others: [existing], generatedId: "g")
                return []
            } catch { return Set(error.problems.map(\.pointer)) }
        }
        let targets: [String: Any] = ["applications": [CA.approvedClient], "includeGroups": ["All"]]
        #expect(pointers(["displayName": "x", "priority": 10, "configuration": [:], "targets": targets]) == ["/priority"], "equal priority on the same app")
        #expect(pointers(["displayName": "x", "priority": 11, "configuration": [:], "targets": targets]).isEmpty)
        #expect(
            pointers([
                "displayName": "x", "priority": 10, "configuration": [:],
                "targets": ["applications": [CA.plainClient], "includeGroups": ["All"]],
            ]).isEmpty, "another app may share the priority")
        #expect(
            pointers(["displayName": "x", "priority": 11, "configuration": ["big": String(repeating: "x", count: 65_536)], "targets": targets]) == [
                "/configuration"
            ])
        #expect(pointers(["displayName": "x", "priority": 11, "configuration": ["fits": String(repeating: "x", count: 60_000)], "targets": targets]).isEmpty)
        #expect(
            pointers([
                "displayName": "x", "priority": 11, "configuration": [:], "targets": targets,
                "secrets": [["identifier": "com.x", "kind": "password"]],
            ]).isEmpty)
        #expect(
            pointers([
                "displayName": "x", "priority": 11, "configuration": [:], "targets": targets,
                "secrets": [
                    ["identifier": "com.x", "kind": "password"], ["identifier": "COM.X", "kind": "certificate"], ["identifier": "-x", "kind": "password"],
                    ["identifier": "com.y", "kind": "identity", "issuance": "device", "validityDays": 400], ["identifier": "com.z", "kind": "secretSauce"],
                    ["identifier": "com.w", "kind": "identity", "issuance": "uploaded", "validityDays": 3],
                    ["identifier": "com.v", "kind": "password", "issuance": "device"],
                    ["identifier": "com.u", "kind": "password", "note": 1],
                ],
            ])
                == [
                    "/secrets/1/identifier", "/secrets/2/identifier", "/secrets/3/validityDays", "/secrets/4/kind", "/secrets/5/validityDays",
                    "/secrets/6/issuance", "/secrets/7/note",
                ],
            "duplicate identifiers (case-insensitive), bad identifiers, unknown kinds, members of another kind, unknown members")
        #expect(
            pointers([
                "displayName": "x", "priority": 11, "configuration": [:], "targets": targets,
                "secrets": (0...SecretDeclaration.maximumPerPolicy).map { ["identifier": "com.s\($0)", "kind": "password"] },
            ]) == ["/secrets/50"])
        #expect(pointers(["displayName": "x", "priority": 11, "configuration": [:], "targets": targets, "secrets": []]).isEmpty)
        #expect(
            pointers(["priority": 2_000_000, "configuration": "no", "targets": ["applications": ["nope"], "includeGroups": ["nope"]], "colour": 1])
                == ["/displayName", "/priority", "/configuration", "/targets/applications/0", "/targets/includeGroups/0", "/colour"])
    }

    @Test("an app protection policy from a newer server still decodes: unknown locations are left out, unknown levels read as the strictest")
    func tolerantSettings() throws {
        let json = Data(
            #"""
            {"saveAs": {"blocked": true, "allowedLocations": ["oneDriveForBusiness", "boxDotCom"]},
             "dataTransfer": {"sendOrgData": "managedAppsOnWeekdays", "receiveData": "allApps"},
             "notificationPolicy": "blockOnLockScreen", "pinRequired": true}
            """#.utf8)
        let settings = try JSONDecoder().decode(AppProtectionSettings.self, from: json)
        #expect(settings.saveAs?.allowedLocations == [.oneDriveForBusiness] && settings.saveAs?.blocked == true)
        #expect(settings.dataTransfer?.sendOrgData == AppProtectionSettings.TransferLevel.none && settings.dataTransfer?.receiveData == .allApps)
        #expect(settings.notificationPolicy == .block && settings.pinRequired == true)
    }
}
