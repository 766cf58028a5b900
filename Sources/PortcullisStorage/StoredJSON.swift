public import Foundation
public import PortcullisCore

/// How the stores serialise the records they keep as JSON (sign-ins, enrollments): one definition for
/// every backend, so that a database written by one build reads back in another.
public enum StoredJSON {
    /// Sign-in records: ISO 8601 dates (they are read by people through the admin API).
    private static let signInEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()
    private static let signInDecoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()

    /// Enrollments: dates as UNIX seconds, exact.
    private static let enrollmentEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()
    private static let enrollmentDecoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return decoder
    }()

    /// A sign-in record as the text both stores keep.
    public static func text(of record: SignInRecord) throws -> String {
        String(decoding: try bytes(of: record), as: UTF8.self)
    }

    /// The same bytes `signInEncoder` writes, member by member (`signInBytes`: a quarter of a refused grant's instructions
    /// went to `JSONEncoder` here, a seventh to `SortedJSONEncoder`); `JSONEncoder` itself for a date that one does not write.
    static func bytes(of record: SignInRecord) throws -> [UInt8] {
        do {
            return try signInBytes(record)
        } catch is SortedJSONEncoder.Unsupported {
            return Array(try signInEncoder.encode(record))
        }
    }

    public static func signIn(from text: String) throws -> SignInRecord {
        try signInDecoder.decode(SignInRecord.self, from: Data(text.utf8))
    }

    /// What a stored sign-in costs besides its text, by the stores' count (`SignInStore.signInBytes`): its row's
    /// columns and its index entries, measured on SQLite (docs/operations.md, "Sizing the sign-in log").
    public static let signInRowOverhead = 220

    /// A sign-in record as the stores keep it (issue 32): compacted (`SignInAggregation.compacted`), and without the
    /// members its row has as columns — identity, time, tenant, user, applications, status, aggregate — which
    /// `signIn(from:columns:)` puts back.
    public static func compactText(of record: SignInRecord) throws -> String {
        var stored = SignInAggregation.compacted(record)
        stored.userId = nil
        stored.aggregate = nil
        // The column members (`columnMembers`) are left out as the record is written: no dates remain, so nothing the
        // writer refuses. (Written whole and then cut out of the text by a byte search, they cost 45k instructions a record.)
        return String(decoding: try signInBytes(stored, omittingColumns: true), as: UTF8.self)
    }

    /// The top-level members of a compact record that its row's columns hold, as the encoder writes them blank.
    static func columnMembers(status: String) -> [String] {
        [
            "\"clientAppId\":\"\"", "\"conditionalAccessStatus\":\"\(status)\"", "\"correlationId\":\"\"",
            "\"createdDateTime\":\"1970-01-01T00:00:00Z\"", "\"id\":\"\"", "\"resourceAppId\":\"\"", "\"tenantId\":\"\"",
        ]
    }

    /// A sign-in row's columns.
    public struct SignInColumns: Sendable {
        public var id: String
        public var tenantId: String
        public var createdAt: Date
        public var correlationId: String
        public var userId: String?
        public var clientAppId: String
        public var resourceAppId: String
        public var status: String
        public var count: Int?
        public var lastAt: Date?
        public var lastCorrelationId: String?

        public init(
            id: String, tenantId: String, createdAt: Date, correlationId: String, userId: String?, clientAppId: String, resourceAppId: String,
            status: String, count: Int?, lastAt: Date?, lastCorrelationId: String?
        ) {
            self.id = id
            self.tenantId = tenantId
            self.createdAt = createdAt
            self.correlationId = correlationId
            self.userId = userId
            self.clientAppId = clientAppId
            self.resourceAppId = resourceAppId
            self.status = status
            self.count = count
            self.lastAt = lastAt
            self.lastCorrelationId = lastCorrelationId
        }
    }

    /// A stored sign-in read back: its text (compact, or a whole record written before issue 32) with the row's columns.
    public static func signIn(from text: String, columns: SignInColumns) throws -> SignInRecord {
        // A compact text lacks the members the columns hold (a whole one, written before issue 32, has them): they are
        // put back blank for the decoder, then filled from the columns.
        var whole = text
        if !text.contains("\"tenantId\":"), text.hasPrefix("{") {
            let status = Decision.Status(rawValue: columns.status)?.rawValue ?? Decision.Status.notApplied.rawValue
            whole = "{" + columnMembers(status: status).joined(separator: ",") + (text == "{}" ? "}" : "," + text.dropFirst())
        }
        var record = try signIn(from: whole)
        record.id = columns.id
        record.tenantId = TenantID(columns.tenantId)
        record.createdDateTime = columns.createdAt
        record.correlationId = columns.correlationId
        record.userId = columns.userId.map { ObjectID($0) }
        record.clientAppId = AppID(columns.clientAppId)
        record.resourceAppId = AppID(columns.resourceAppId)
        if let status = Decision.Status(rawValue: columns.status) { record.conditionalAccessStatus = status }
        if let count = columns.count, let lastAt = columns.lastAt {
            record.aggregate = SignInRecord.Aggregate(count: count, lastDateTime: lastAt, lastCorrelationId: columns.lastCorrelationId ?? columns.correlationId)
        }
        return record
    }

    /// An enrollment as the text both stores keep.
    public static func text(of enrollment: Enrollment) throws -> String {
        String(decoding: try enrollmentEncoder.encode(enrollment), as: UTF8.self)
    }

    public static func enrollment(from text: String) throws -> Enrollment {
        try enrollmentDecoder.decode(Enrollment.self, from: Data(text.utf8))
    }

    private static let plainEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()

    /// An authorization request, as an authorization code keeps it.
    public static func text(of request: AuthorizationRequest) throws -> String {
        String(decoding: try plainEncoder.encode(request), as: UTF8.self)
    }

    public static func authorizationRequest(from text: String) throws -> AuthorizationRequest {
        try JSONDecoder().decode(AuthorizationRequest.self, from: Data(text.utf8))
    }

    /// Authentication methods (`amr`) as one column: space-separated.
    public static func text(of methods: [String]) -> String { methods.joined(separator: " ") }
    public static func methods(from text: String?) -> [String] { (text ?? "").split(separator: " ").map(String.init) }
}
