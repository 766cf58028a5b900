import Foundation

/// How the stores serialise the records they keep as JSON (sign-ins, enrollments): one definition for
/// every backend, so that a database written by one build reads back in another.
public enum StoredJSON {
    /// Sign-in records: ISO 8601 dates (they are read by people through the admin API).
    public static let signInEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()
    public static let signInDecoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()

    /// Enrollments: dates as UNIX seconds, exact.
    public static let enrollmentEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()
    public static let enrollmentDecoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return decoder
    }()
}
