import Foundation
import PortcullisCore
import Testing

/// The filter for devices' rule syntax (PROTOCOL §18): Entra's documented examples, its semantics for unregistered and
/// unmanaged devices, errors that point into the rule, and parse ∘ print = identity over generated rules.
@Suite("device filter rules")
struct DeviceFilterRuleTests {
    /// The examples of Entra's filter-for-devices documentation (one per property), its scenarios, and the corpus's rules.
    static let documented = [
        #"(device.deviceid -eq "498c4de7-1aee-4ded-8d5d-000000000000")"#,
        #"(device.displayName -contains "ABC")"#,
        #"(device.deviceOwnership -eq "Company")"#,
        #"(device.enrollmentProfileName -eq "DEMO USER")"#,
        #"(device.isCompliant -eq True)"#,
        #"(device.manufacturer -eq "Samsung")"#,
        #"(device.mdmAppId -in ["0000000a-0000-0000-c000-000000000000"])"#,
        #"(device.model -eq "Surface Pro 7")"#,
        #"(device.operatingSystem -eq "Windows")"#,
        #"(device.operatingSystemVersion -in ["10.0.18363", "10.0.19041", "10.0.19042", "10.0.22000"])"#,
        #"(device.devicePhysicalIDs -contains "[ZTDId]:value")"#,
        #"(device.profileType -eq "SecureVM")"#,
        #"(device.systemLabels -contains "M365Managed")"#,
        #"(device.trustType -eq "ServerAD")"#,
        #"(device.extensionAttribute1 -eq "SAW")"#,
        #"device.extensionAttribute1 -eq "SAW" -and device.isCompliant -eq True"#,
        #"device.model -startsWith "Surface" -and (device.trustType -eq "AzureAD" -or device.trustType -eq "ServerAD")"#,
        #"device.trustType -ne "ServerAD" -or device.isCompliant -ne True"#,
        #"device.isCompliant -eq True -and device.deviceOwnership -eq "Company""#,
        #"device.deviceOwnership -eq "Company" -or device.isCompliant -eq True"#,
    ]

    @Test("Entra's documented examples parse, and print back to a rule that parses to the same", arguments: documented)
    func documentedExamples(_ text: String) throws {
        let rule = try DeviceFilterRule.parse(text)
        #expect(try DeviceFilterRule.parse(rule.description) == rule)
        #expect(try DeviceFilterRule.parse(rule.description).description == rule.description)
    }

    @Test("the printed form: canonical names, operators and quotes; -or inside -and in parentheses")
    func printing() throws {
        #expect(try DeviceFilterRule.parse(#"(device.deviceid -EQ 'a"b')"#).description == #"device.deviceId -eq "a`"b""#)
        #expect(
            try DeviceFilterRule.parse(#"(device.devicePhysicalIDs -contains "[ZTDId]:value")"#).description == #"device.physicalIds -contains "[ZTDId]:value""#
        )
        #expect(
            try DeviceFilterRule.parse(#"device.model -eq "a" -and (device.model -eq "b" -or device.model -eq "c")"#).description
                == #"device.model -eq "a" -and (device.model -eq "b" -or device.model -eq "c")"#)
        #expect(
            try DeviceFilterRule.parse(#"(device.model -eq "a" -and device.model -eq "b") -or device.model -eq "c""#).description
                == #"device.model -eq "a" -and device.model -eq "b" -or device.model -eq "c""#, "-and binds tighter than -or")
        #expect(try DeviceFilterRule.parse(#"device.isCompliant -eq "true""#).description == "device.isCompliant -eq True")
    }

    static let registered = DeviceFacts(
        deviceId: "d1", displayName: "Alice's laptop", trustType: .azureAd, isCompliant: false, isManaged: false, operatingSystem: "Windows",
        operatingSystemVersion: "10.0.22631", manufacturer: "Contoso", model: "Surface Pro 9", deviceOwnership: "company",
        extensionAttributes: [1: "SAW"], physicalIds: ["[ZTDId]:abc"], systemLabels: ["M365Managed"])

    static let managed = DeviceFacts(
        deviceId: "d2", trustType: .workplace, isCompliant: false, isManaged: true, deviceOwnership: "Personal", extensionAttributes: [1: "SAW"])

    static func matches(_ text: String, _ device: DeviceFacts?) throws -> Bool { try DeviceFilterRule.parse(text).matches(device?.filterSubject) }

    @Test("an unregistered device: every property null — positive operators fail, negative ones hold (Entra's table)")
    func unregistered() throws {
        for op in DeviceFilterRule.Operator.allCases {
            let value = op == .in || op == .notIn ? #"["x"]"# : #""x""#
            #expect(try Self.matches("device.model \(op.rawValue) \(value)", nil) == op.isNegative, "\(op.rawValue)")
        }
        #expect(try Self.matches("device.isCompliant -eq True", nil) == false)
        #expect(try Self.matches("device.isCompliant -ne True", nil) == true)
        #expect(try Self.matches(#"device.trustType -ne "ServerAD" -or device.isCompliant -ne True"#, nil) == true)
    }

    @Test("a registered device: comparisons without regard to case; lists; labels and physical IDs")
    func registeredDevice() throws {
        let d = Self.registered
        #expect(try Self.matches(#"device.deviceOwnership -eq "Company""#, d), "a rule's Company matches company")
        #expect(try Self.matches(#"device.trustType -eq "AzureAD""#, d), "AzureAD in a rule is Graph's AzureAd")
        #expect(try !Self.matches(#"device.trustType -eq "ServerAD""#, d))
        #expect(try Self.matches(#"device.model -startsWith "surface" -and device.model -endsWith "PRO 9" -and device.model -contains "pro""#, d))
        #expect(try !Self.matches(#"device.model -notContains "Pro""#, d))
        #expect(try Self.matches(#"device.operatingSystemVersion -in ["10.0.19045", "10.0.22631"]"#, d))
        #expect(try !Self.matches(#"device.operatingSystemVersion -notIn ["10.0.19045", "10.0.22631"]"#, d))
        #expect(try Self.matches(#"device.systemLabels -contains "m365managed" -and device.physicalIds -contains "[ztdid]""#, d))
        #expect(try Self.matches(#"device.isCompliant -eq False"#, d))
        #expect(try Self.matches(#"device.enrollmentProfileName -ne "x""#, d), "a registered device's missing property is null, as Entra")
    }

    @Test("extension attributes count only on a compliant, managed or hybrid-joined device — for positive and negative operators alike")
    func extensionAttributes() throws {
        #expect(try !Self.matches(#"device.extensionAttribute1 -eq "SAW""#, Self.registered), "registered, unmanaged, not compliant")
        #expect(try !Self.matches(#"device.extensionAttribute1 -ne "Other""#, Self.registered), "not even a negative operator")
        #expect(try Self.matches(#"device.extensionAttribute1 -eq "SAW""#, Self.managed))
        #expect(try Self.matches(#"device.extensionAttribute2 -ne "x""#, Self.managed), "a managed device's unset attribute is null")
        let joined = DeviceFacts(deviceId: "d3", trustType: .serverAd, isCompliant: false, isManaged: false, extensionAttributes: [1: "SAW"])
        #expect(try Self.matches(#"device.extensionAttribute1 -eq "saw""#, joined))
        let compliant = DeviceFacts(deviceId: "d4", trustType: .azureAd, isCompliant: true, isManaged: false, extensionAttributes: [1: "SAW"])
        #expect(try Self.matches(#"device.extensionAttribute1 -eq "SAW""#, compliant))
        #expect(try Self.matches(#"device.extensionAttribute1 -eq "SAW""#, nil) == false)
        #expect(try Self.matches(#"device.extensionAttribute1 -ne "SAW""#, nil) == true)
    }

    @Test(
        "a rule that is not one is refused at the character where reading stopped",
        arguments: [
            (#"device.color -eq "red""#, 1, "is not a property"),
            (#"device.trustType -contains "Server""#, 18, "takes -eq, -ne"),
            (#"device.trustType -eq "Cloud""#, 22, "is one of AzureAD, ServerAD, Workplace"),
            (#"device.isCompliant -eq Yes"#, 24, "True or False"),
            (#"device.model -eq "a" -and"#, 26, "found the end"),
            (#"(device.model -eq "a""#, 22, "is never closed"),
            (#"device.model -eq "a"#, 20, "never closed"),
            (#"device.model -eq "a" device.model -eq "b""#, 22, "expected -and, -or"),
            (#"device.model -in "a""#, 18, "take a list"),
            (#"device.model -in ["a" "b"]"#, 23, "expected ',' or ']'"),
            (#"device.model -like "a""#, 14, "expected an operator"),
            (#"model -eq "a""#, 1, "expected a device property"),
            (#"device.model -eq a"#, 18, "expected a quoted string"),
            ("", 1, "found the end"),
        ])
    func errors(_ text: String, _ position: Int, _ message: String) {
        do {
            _ = try DeviceFilterRule.parse(text)
            Issue.record("'\(text)' was accepted")
        } catch {
            #expect(error.position == position, "\(text): \(error)")
            #expect(error.message.contains(message), "\(text): \(error)")
        }
    }

    @Test("bounds: length, nesting and list size")
    func bounds() {
        let long = #"device.model -eq ""# + String(repeating: "a", count: DeviceFilterRule.maximumLength) + "\""
        #expect(throws: DeviceFilterRule.SyntaxError.self) { try DeviceFilterRule.parse(long) }
        let deep = String(repeating: "(", count: 17) + #"device.model -eq "a""# + String(repeating: ")", count: 17)
        #expect(throws: DeviceFilterRule.SyntaxError.self) { try DeviceFilterRule.parse(deep) }
        let nested = String(repeating: "(", count: 16) + #"device.model -eq "a""# + String(repeating: ")", count: 16)
        #expect(throws: Never.self) { try DeviceFilterRule.parse(nested) }
        let many = "device.model -in [" + (0...100).map { "\"\($0)\"" }.joined(separator: ",") + "]"
        #expect(throws: DeviceFilterRule.SyntaxError.self) { try DeviceFilterRule.parse(many) }
    }

    /// A deterministic generator (SplitMix64), so that a failure reproduces.
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE5_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static func randomText(_ rng: inout Generator) -> String {
        let alphabet = Array(#"abcXYZ 09-_."'`()[],\"#) + ["é", "🙂", "\n"]
        return String((0..<Int.random(in: 0...8, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! })
    }

    static func randomComparison(_ rng: inout Generator) -> DeviceFilterRule.Comparison {
        let property = DeviceFilterRule.Property.all.randomElement(using: &rng)!
        let op = property.operators.randomElement(using: &rng)!
        func text() -> String { property.values?.randomElement(using: &rng) ?? randomText(&rng) }
        let value: DeviceFilterRule.Value =
            if op == .in || op == .notIn {
                .list((0..<Int.random(in: 1...4, using: &rng)).map { _ in text() })
            } else if property == .isCompliant {
                .bool(Bool.random(using: &rng))
            } else {
                .string(text())
            }
        return DeviceFilterRule.Comparison(property: property, operator: op, value: value)
    }

    /// A rule in the parser's normal form: `and` and `or` with two or more members, none of its own kind.
    static func randomRule(_ rng: inout Generator, depth: Int, parent: Int = 0) -> DeviceFilterRule {
        let kind = depth == 0 ? 0 : Int.random(in: 0...2, using: &rng)
        if kind == 0 || kind == parent { return .comparison(randomComparison(&rng)) }
        let members = (0..<Int.random(in: 2...3, using: &rng)).map { _ in randomRule(&rng, depth: depth - 1, parent: kind) }
        return kind == 1 ? .and(members) : .or(members)
    }

    @Test("property: parse ∘ print is the identity over 3,000 generated rules (any property, operator, value, nesting)")
    func roundTrip() throws {
        var rng = Generator(state: 18)
        for _ in 0..<3000 {
            let rule = Self.randomRule(&rng, depth: 4)
            let printed = rule.description
            let parsed = try DeviceFilterRule.parse(printed)
            #expect(parsed == rule, "\(printed)")
            if parsed != rule { break }
        }
    }

    @Test("property: a mangled rule is read or refused, never a crash, and what is read prints back to itself")
    func mangled() {
        var rng = Generator(state: 47)
        for _ in 0..<5000 {
            var characters = Array(Self.documented.randomElement(using: &rng)!)
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                let at = Int.random(in: 0..<characters.count, using: &rng)
                switch Int.random(in: 0...2, using: &rng) {
                case 0: characters.remove(at: at)
                case 1: characters.insert(Array(#"()[]"'`,- "#).randomElement(using: &rng)!, at: at)
                default: characters[at] = Array(#"()[]"'`,-aZ"#).randomElement(using: &rng)!
                }
                if characters.isEmpty { break }
            }
            if let rule = try? DeviceFilterRule.parse(String(characters)) {
                #expect((try? DeviceFilterRule.parse(rule.description)) == rule, "\(String(characters))")
            }
        }
    }
}
