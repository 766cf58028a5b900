import Foundation
import PortcullisCore
import PortcullisTesting
import Testing

@testable import PortcullisStorage

/// The sign-in record's hand-written text (`StoredJSON.signInBytes`) against `SortedJSONEncoder` (itself tested against
/// `JSONEncoder`): the stored rows and the aggregation keys are that text.
@Suite struct SignInRecordJSONTests {
    func expectSame(_ record: SignInRecord, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let ours = String(decoding: try StoredJSON.signInBytes(record), as: UTF8.self)
        let encoded = String(decoding: try SortedJSONEncoder.encode(record), as: UTF8.self)
        #expect(ours == encoded, sourceLocation: sourceLocation)
    }

    @Test("every member set, every member absent that may be, the compacted and aggregated forms: the encoder's bytes")
    func sameBytes() throws {
        let full = SortedJSONEncoderTests.everyMember
        try expectSame(full)
        try expectSame(SignInAggregation.compacted(full))
        try expectSame(SignInAggregation.facts(of: full))
        try expectSame(SignInLogUpgrade.old)
        var sparse = full
        sparse.userId = nil
        sparse.userPrincipalName = nil
        sparse.resource = nil
        sparse.ipAddress = nil
        sparse.platform = nil
        sparse.errorCode = nil
        sparse.authenticationMethods = nil
        sparse.authenticationContextClassReferences = nil
        sparse.countryOrRegion = nil
        sparse.tokenProtectionStatusDetails = nil
        sparse.isInteractive = nil
        sparse.originalTransferMethod = nil
        sparse.deviceDetail = nil
        sparse.riskLevelDuringSignIn = nil
        sparse.riskLevelAggregated = nil
        sparse.riskEventTypes_v2 = nil
        sparse.aggregate = nil
        sparse.clientCredentialType = nil
        sparse.capabilities = []
        sparse.appliedConditionalAccessPolicies = []
        try expectSame(sparse)
        sparse.deviceDetail = SignInRecord.DeviceDetail(
            DeviceFacts(deviceId: "d/2", displayName: nil, trustType: .workplace, isCompliant: false, isManaged: true, operatingSystem: nil))
        sparse.riskEventTypes_v2 = []
        sparse.authenticationContextClassReferences = []
        try expectSame(sparse)
        // A date the encoder does not write is refused the same way (the store then uses JSONEncoder).
        sparse.createdDateTime = Date(timeIntervalSince1970: -1)
        #expect(throws: SortedJSONEncoder.Unsupported.self) { try StoredJSON.signInBytes(sparse) }
    }

    /// Every stored property of the record and its nested types, by reflection, appears in the text of a record with every
    /// member set: a member added to the type and not to the writer fails here.
    @Test("a member the writer leaves out fails: every property of the record and its parts is in the text")
    func everyMemberWritten() throws {
        let full = SortedJSONEncoderTests.everyMember
        let text = String(decoding: try StoredJSON.signInBytes(full), as: UTF8.self)
        func labels(_ value: Any) -> [String] {
            Mirror(reflecting: value).children.compactMap(\.label).map { $0.hasPrefix("_") ? String($0.dropFirst()) : $0 }
        }
        var expected = labels(full)
        expected += labels(try #require(full.aggregate))
        expected += labels(try #require(full.appliedConditionalAccessPolicies.first))
        expected += labels(try #require(full.appliedConditionalAccessPolicies.first?.grantControlResults?.first))
        expected += labels(try #require(full.authenticationContextClassReferences?.first))
        expected += labels(try #require(full.deviceDetail))
        expected += labels(try #require(full.tokenProtectionStatusDetails))
        #expect(expected.count > 40)
        for label in expected {
            #expect(text.contains("\"\(label)\":"), "\(label) is not written")
        }
    }

    /// The compact text as it was made before it was written without the column members: the whole record's text with
    /// those members blanked, then cut out where the encoder wrote them.
    static func compactAsCutOut(_ record: SignInRecord) throws -> String {
        var stored = SignInAggregation.compacted(record)
        stored.id = ""
        stored.correlationId = ""
        stored.tenantId = ""
        stored.createdDateTime = Date(timeIntervalSince1970: 0)
        stored.userId = nil
        stored.clientAppId = ""
        stored.resourceAppId = ""
        stored.aggregate = nil
        var text = String(decoding: try SortedJSONEncoder.encode(stored), as: UTF8.self)
        for member in StoredJSON.columnMembers(status: record.conditionalAccessStatus.rawValue) {
            if let range = text.range(of: member + ",") ?? text.range(of: "," + member) { text.removeSubrange(range) }
        }
        return text
    }

    @Test("the compact text is the whole text without the column members, and reads back with the columns")
    func compactText() throws {
        let full = SortedJSONEncoderTests.everyMember
        var minimal = full
        minimal.appliedConditionalAccessPolicies = []
        minimal.capabilities = []
        minimal.deviceDetail = nil
        minimal.riskEventTypes_v2 = nil
        minimal.authenticationContextClassReferences = nil
        for record in [full, minimal, SignInLogUpgrade.old] {
            let compact = try StoredJSON.compactText(of: record)
            #expect(compact == (try Self.compactAsCutOut(record)))
            let members = try #require(try JSONSerialization.jsonObject(with: Data(compact.utf8)) as? [String: Any]).keys
            #expect(
                Set(members).isDisjoint(with: [
                    "id", "tenantId", "createdDateTime", "correlationId", "clientAppId", "resourceAppId", "userId", "aggregate", "conditionalAccessStatus",
                ]))
            let columns = StoredJSON.SignInColumns(
                id: record.id, tenantId: record.tenantId.rawValue, createdAt: record.createdDateTime, correlationId: record.correlationId,
                userId: record.userId?.rawValue, clientAppId: record.clientAppId.rawValue, resourceAppId: record.resourceAppId.rawValue,
                status: record.conditionalAccessStatus.rawValue, count: record.aggregate?.count, lastAt: record.aggregate?.lastDateTime,
                lastCorrelationId: record.aggregate?.lastCorrelationId)
            var expected = SignInAggregation.compacted(record)
            expected.createdDateTime = Date(timeIntervalSince1970: record.createdDateTime.timeIntervalSince1970.rounded(.down))
            expected.aggregate = record.aggregate
            let read = try StoredJSON.signIn(from: compact, columns: columns)
            #expect(
                read.id == expected.id && read.tenantId == expected.tenantId
                    && read.appliedConditionalAccessPolicies == expected.appliedConditionalAccessPolicies)
            #expect(read.deviceDetail == expected.deviceDetail && read.riskEventTypes_v2 == expected.riskEventTypes_v2 && read.platform == expected.platform)
        }
    }
}
