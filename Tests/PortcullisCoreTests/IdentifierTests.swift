import Foundation
import PortcullisCore
import Testing

/// Typed identifiers (issue 45): normalised once, where they enter; equal, hashed and stored in that one form.
@Suite("typed identifiers")
struct IdentifierTests {
    @Test("an identifier in any case is the same identifier; its text is the lower-case form, however it was made")
    func normalForm() throws {
        let upper = ObjectID("AAAAAAAA-0000-4000-8000-00000000000A")
        let lower: ObjectID = "aaaaaaaa-0000-4000-8000-00000000000a"
        #expect(upper == lower && upper.hashValue == lower.hashValue && upper.rawValue == "aaaaaaaa-0000-4000-8000-00000000000a")
        #expect(Set([upper, lower]).count == 1 && [lower: 1][upper] == 1, "one key in sets and dictionaries")
        #expect(TenantID(rawValue: "T-1") == TenantID("t-1") && "\(TenantID("T-1"))" == "t-1")
        #expect(ObjectID(ObjectID("X").rawValue) == ObjectID("x"), "normalising twice changes nothing")
        // Non-ASCII text is lowered as Swift lowers it (identifiers here are ASCII; nothing is lost either way).
        #expect(RecordID("ÄBC").rawValue == "äbc")
    }

    @Test("JSON is the plain string; decoding normalises, so a stored document in another case reads as the same ID")
    func codable() throws {
        struct Holder: Codable, Equatable { var id: AppID }
        let data = try JSONEncoder().encode(Holder(id: "C0FFEE00-1111-4A2B-8C3D-4E5F6A7B8C01"))
        #expect(String(decoding: data, as: UTF8.self) == #"{"id":"c0ffee00-1111-4a2b-8c3d-4e5f6a7b8c01"}"#)
        let read = try JSONDecoder().decode(Holder.self, from: Data(#"{"id":"C0FFEE00-1111-4A2B-8C3D-4E5F6A7B8C01"}"#.utf8))
        #expect(read.id == AppID("c0ffee00-1111-4a2b-8c3d-4e5f6a7b8c01"))
    }

    @Test("new identifiers are random lower-case UUIDs")
    func generated() {
        let made = (0..<100).map { _ in RecordID.generate() }
        #expect(Set(made).count == 100)
        #expect(made.allSatisfy { UUID(uuidString: $0.rawValue) != nil && $0.rawValue == $0.rawValue.lowercased() })
        #expect(UUID(uuidString: "ADCE0002-35BC-C60A-648B-0B25F1F05503")!.identifierText == "adce0002-35bc-c60a-648b-0b25f1f05503")
    }
}
