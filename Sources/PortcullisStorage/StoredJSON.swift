import Foundation
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
        String(decoding: try signInEncoder.encode(record), as: UTF8.self)
    }

    public static func signIn(from text: String) throws -> SignInRecord {
        try signInDecoder.decode(SignInRecord.self, from: Data(text.utf8))
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
