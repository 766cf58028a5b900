import Foundation
import PortcullisCore
import PortcullisTesting
import Testing

@testable import PortcullisStorage

/// `SortedJSONEncoder` writes what `JSONEncoder` (`.sortedKeys`, `.iso8601`) writes, byte for byte: the sign-in log's
/// stored text and its aggregation key are that text, so a difference would split aggregates and change stored rows.
@Suite struct SortedJSONEncoderTests {
    static let reference: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()

    func expectSame<Value: Encodable>(_ value: Value, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let ours = String(decoding: try SortedJSONEncoder.encode(value), as: UTF8.self)
        let theirs = String(decoding: try Self.reference.encode(value), as: UTF8.self)
        #expect(ours == theirs, sourceLocation: sourceLocation)
    }

    static var everyMember: SignInRecord {
        var record = SignInRecord(
            id: "id/1", createdDateTime: Date(timeIntervalSince1970: 1_800_000_000.75), correlationId: "c\"1", tenantId: "t-1", userId: "u-1",
            userPrincipalName: "erin@contoso.example", clientAppId: "app", resourceAppId: "res", resource: "https://graph.microsoft.com/",
            grantType: "urn:ietf:params:oauth:grant-type:jwt-bearer", clientAppType: "mobileAppsAndDesktopClients", capabilities: ["protapp", "cp1"],
            ipAddress: "2001:db8::1", platform: "iOS", appProtection: "compliant", conditionalAccessStatus: .failure,
            appliedConditionalAccessPolicies: [
                Decision.AppliedPolicy(
                    id: "p-1", displayName: "Require MFA — \"all\"\n users", result: .failure, enforcedGrantControls: ["mfa", "compliantApplication"],
                    conditionsNotSatisfied: [], grantControlResults: [Decision.ControlResult(control: "mfa", satisfied: false, reason: "no factor\tyet")],
                    enforcedSessionControls: ["SignInFrequency"]),
                Decision.AppliedPolicy(
                    id: "p-2", displayName: "", result: .notApplied, enforcedGrantControls: [],
                    conditionsNotSatisfied: Array(Decision.Condition.allCases.prefix(2))),
            ],
            errorCode: 53_005, authenticationMethods: ["pwd", "mfa"], authenticationContexts: ["c1", "c2"], met: ["c3"])
        record.countryOrRegion = "NL"
        record.tokenProtectionStatusDetails = SignInRecord.TokenProtectionStatus(bound: true)
        record.isInteractive = false
        record.originalTransferMethod = TransferMethod.allCases.first
        record.deviceDetail = SignInRecord.DeviceDetail(
            DeviceFacts(
                deviceId: "d-1", displayName: "Erin's iPhone", trustType: DeviceFacts.TrustType.allCases.last!, isCompliant: true, isManaged: false,
                operatingSystem: "iOS"))
        record.riskLevelDuringSignIn = RiskLevel.allCases.last
        record.riskLevelAggregated = RiskLevel.allCases.first
        record.riskEventTypes_v2 = Array(RiskEventType.allCases.prefix(3))
        record.aggregate = SignInRecord.Aggregate(count: 12, lastDateTime: Date(timeIntervalSince1970: 1_800_000_059.999), lastCorrelationId: "c-12")
        record.clientCredentialType = ClientCredentialType.allCases.last
        return record
    }

    @Test func signInRecordsAsJSONEncoderWritesThem() throws {
        try expectSame(Self.everyMember)
        try expectSame(SignInLogUpgrade.old)
        try expectSame(SignInAggregation.facts(of: Self.everyMember))
        try expectSame(SignInAggregation.compacted(Self.everyMember))
        // What the stores keep and what aggregation keys on.
        #expect(try StoredJSON.text(of: Self.everyMember) == String(decoding: try Self.reference.encode(Self.everyMember), as: UTF8.self))
    }

    @Test func stringsEscapedAsJSONEncoderEscapesThem() throws {
        let everyASCII = String(decoding: (0..<0x80).map { UInt8($0) }, as: UTF8.self)
        let texts = [everyASCII, "", "plain", "a/b", "é", "日本語", "👩‍👩‍👧", "\u{2028}\u{2029}", "\u{7F}\u{80}", "tail\\"]
        try expectSame(texts)
        try expectSame(Dictionary(uniqueKeysWithValues: texts.enumerated().map { ($0.element, $0.offset) }))
    }

    @Test func keysSortedAsJSONEncoderSortsThem() throws {
        let keys = ["b", "B", "a_b", "aB", "ab", "a", "", "10", "9", "Z", "é", "riskEventTypes_v2", "riskLevelAggregated", "appProtection", "applied"]
        try expectSame(Dictionary(uniqueKeysWithValues: keys.map { ($0, $0.count) }))
    }

    @Test func datesAsISO8601WholeSeconds() throws {
        let instants: [Double] = [
            0, 0.999, 59.5, 951_782_400, 951_868_799.25, 1_234_567_890.999_999, 1_800_000_000.5, 4_102_444_800, 4_107_542_399, 253_402_300_799,
        ]
        try expectSame(instants.map { Date(timeIntervalSince1970: $0) })
    }

    struct Shapes: Codable {
        var small: Int8 = -128
        var minimum = Int.min
        var maximum = Int.max
        var unsigned = UInt64.max
        var zero = 0
        var yes = true
        var no = false
        var absent: String? = nil
        var nulls: [String?] = [nil, "x", nil]
        var nested: [[Int]] = [[], [1, 2], [-3]]
        var objects: [[String: [Int]]] = [[:], ["k": [1]], ["b": [], "a": [2, 3]]]
        var empty: [String] = []
        var integerKeys: [Int: String] = [10: "ten", 2: "two", -1: "minus one"]
    }

    @Test func integersNullsAndNesting() throws {
        try expectSame(Shapes())
    }

    struct Floating: Encodable { var value = 1.5 }
    struct Bytes: Encodable { var value = Data([1, 2]) }
    struct Address: Encodable { var value = URL(string: "https://example.com/")! }
    struct Early: Encodable { var value = Date(timeIntervalSince1970: -1) }

    /// What it does not write the same way, it refuses, and the stores encode with `JSONEncoder`.
    @Test func refusesWhatItDoesNotWrite() {
        #expect(throws: SortedJSONEncoder.Unsupported.self) { try SortedJSONEncoder.encode(Floating()) }
        #expect(throws: SortedJSONEncoder.Unsupported.self) { try SortedJSONEncoder.encode(Bytes()) }
        #expect(throws: SortedJSONEncoder.Unsupported.self) { try SortedJSONEncoder.encode(Address()) }
        #expect(throws: SortedJSONEncoder.Unsupported.self) { try SortedJSONEncoder.encode(Early()) }
        #expect(throws: SortedJSONEncoder.Unsupported.self) { try SortedJSONEncoder.encode([Date(timeIntervalSince1970: 253_402_300_800)]) }
    }
}
