import Foundation
public import Logging
public import PortcullisCore
public import ServiceLifecycle
import Synchronization

/// The operator's IP-to-country table (PROTOCOL §13: `network.countryTable`, `PORTCULLIS_COUNTRY_TABLE`), kept current:
/// as a service it looks at the file (or MaxMind directory) every `interval` and, when its size or modification time
/// changed, reads it again. A table that does not read is refused with its line numbers in the log, and the one in use
/// keeps serving. Without a path, every address's country is unknown.
public final class CountryTableSource: Service, Sendable {
    public let path: String?
    let interval: Duration
    let logger: Logger
    private let state: Mutex<(table: CountryTable?, fingerprint: [String])>

    /// Reads the table at `path` now: a bad table at start-up is the caller's error (the server does not start with it).
    public init(path: String?, interval: Duration = .seconds(10), logger: Logger) throws(CountryTableError) {
        self.path = path
        self.interval = interval
        self.logger = logger
        guard let path else {
            state = Mutex((nil, []))
            return
        }
        let fingerprint = Self.fingerprint(path)
        let table = try CountryTable.load(path: path)
        state = Mutex((table, fingerprint))
        logger.info(
            "country table loaded",
            metadata: ["portcullis.countryTable": .string(path), "portcullis.ranges": .stringConvertible(table.rangeCount)])
    }

    /// No table: every country unknown.
    public static func none(logger: Logger) -> CountryTableSource { CountryTableSource(logger: logger) }

    private init(logger: Logger) {
        self.path = nil
        self.interval = .seconds(10)
        self.logger = logger
        state = Mutex((nil, []))
    }

    /// The country of `address` (ISO 3166-1 alpha-2), `nil` when unknown.
    public func country(of address: IPAddress?) -> String? {
        guard let address else { return nil }
        return state.withLock { $0.table }?.country(of: address)
    }

    public var rangeCount: Int { state.withLock { $0.table?.rangeCount ?? 0 } }

    /// Reads the table again if the file changed since the last look; `true` when a new table is in use. A table that
    /// does not read is logged (with its problems) and the old one kept; the same broken file is not read again until it
    /// changes once more.
    @discardableResult
    public func reloadIfChanged() -> Bool {
        guard let path else { return false }
        let fingerprint = Self.fingerprint(path)
        guard fingerprint != state.withLock({ $0.fingerprint }) else { return false }
        do {
            let table = try CountryTable.load(path: path)
            state.withLock { $0 = (table, fingerprint) }
            logger.notice(
                "country table reloaded",
                metadata: ["portcullis.countryTable": .string(path), "portcullis.ranges": .stringConvertible(table.rangeCount)])
            return true
        } catch {
            state.withLock { $0.fingerprint = fingerprint }
            logger.error(
                "country table refused; the previous one keeps serving",
                metadata: ["portcullis.countryTable": .string(path), "portcullis.problems": .string(error.description)])
            return false
        }
    }

    /// Looks at the file every `interval` until the server shuts down (without a table, just waits for that: a service
    /// that returned early would stop the server).
    public func run() async throws {
        guard path != nil else {
            try? await gracefulShutdown()
            return
        }
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try? await Task.sleep(for: self.interval)
                if Task.isCancelled { break }
                self.reloadIfChanged()
            }
        }
    }

    /// Size and modification time of the file, or of every file in a (MaxMind) directory.
    static func fingerprint(_ path: String) -> [String] {
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        guard manager.fileExists(atPath: path, isDirectory: &isDirectory) else { return ["absent"] }
        let files =
            isDirectory.boolValue
            ? ((try? manager.contentsOfDirectory(atPath: path)) ?? []).sorted().map { (path as NSString).appendingPathComponent($0) } : [path]
        return files.map { file in
            let attributes = (try? manager.attributesOfItem(atPath: file)) ?? [:]
            let size = (attributes[.size] as? NSNumber)?.int64Value ?? -1
            let modified = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
            return "\(file):\(size):\(modified)"
        }
    }
}
