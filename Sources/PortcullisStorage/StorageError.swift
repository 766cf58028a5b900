/// A failure of a store, translated from the backend at its boundary.
public struct StorageError: Error, Sendable, CustomStringConvertible {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable {
            case notFound, duplicate, preconditionFailed, unavailable, corrupt, constraint, identifierTaken
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The thing does not exist.
        public static let notFound = Code(.notFound)
        /// A unique key is already taken.
        public static let duplicate = Code(.duplicate)
        /// An optimistic-concurrency check (`If-Match`) failed.
        public static let preconditionFailed = Code(.preconditionFailed)
        /// The backend cannot be reached or refused to work.
        public static let unavailable = Code(.unavailable)
        /// Stored data cannot be read back.
        public static let corrupt = Code(.corrupt)
        /// An identifier unique across the installation (a directory object ID, an application ID) belongs to
        /// another tenant, or to another kind of directory object (PROTOCOL §11).
        public static let identifierTaken = Code(.identifierTaken)
        /// Another constraint of the store refused the write.
        public static let constraint = Code(.constraint)

        public var description: String { base.rawValue }
    }

    public let code: Code
    public let message: String
    public let underlying: (any Error)?

    public init(_ code: Code, _ message: String, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    public var description: String { "\(code): \(message)" }
}
