import Foundation
public import Logging
public import PortcullisCore
public import ServiceLifecycle
import Synchronization

/// The operator's address lists for risk (PROTOCOL §19: `risk.anonymizerList`, `PORTCULLIS_ANONYMIZER_LIST`;
/// `risk.maliciousList`, `PORTCULLIS_MALICIOUS_LIST`), kept current as the country table is: looked at every `interval`,
/// read again when a file's size or modification time changed; a list that does not read is refused with its line in the
/// log and the one in use keeps serving. Without a path, a list is empty.
public final class RiskListSource: Service, Sendable {
    public let anonymizerPath: String?
    public let maliciousPath: String?
    let interval: Duration
    let logger: Logger
    private let state: Mutex<(lists: RiskDetector.Lists, fingerprints: [[String]])>

    /// Reads the lists now: one that does not read at start-up is the caller's error (the server does not start with it).
    public init(anonymizerPath: String?, maliciousPath: String?, interval: Duration = .seconds(10), logger: Logger) throws(AddressList.Problem) {
        self.anonymizerPath = anonymizerPath
        self.maliciousPath = maliciousPath
        self.interval = interval
        self.logger = logger
        let anonymizers = try Self.load(anonymizerPath)
        let malicious = try Self.load(maliciousPath)
        state = Mutex(
            (RiskDetector.Lists(anonymizers: anonymizers, malicious: malicious), [anonymizerPath, maliciousPath].map(Self.fingerprint)))
    }

    /// No lists.
    public static func none(logger: Logger) -> RiskListSource {
        // Reading no file cannot fail.
        try! RiskListSource(anonymizerPath: nil, maliciousPath: nil, logger: logger)
    }

    public var lists: RiskDetector.Lists { state.withLock { $0.lists } }

    static func load(_ path: String?) throws(AddressList.Problem) -> AddressList {
        guard let path else { return .empty }
        guard let data = FileManager.default.contents(atPath: path) else { throw AddressList.Problem(line: 0, text: "\(path) cannot be read") }
        return try AddressList.parse(String(decoding: data, as: UTF8.self))
    }

    static func fingerprint(_ path: String?) -> [String] {
        guard let path else { return [] }
        return CountryTableSource.fingerprint(path)
    }

    /// Reads a list again if its file changed since the last look; `true` when new lists are in use.
    @discardableResult
    public func reloadIfChanged() -> Bool {
        let paths = [anonymizerPath, maliciousPath]
        let fingerprints = paths.map(Self.fingerprint)
        let before = state.withLock { $0.fingerprints }
        guard fingerprints != before else { return false }
        var lists = self.lists
        var changed = false
        for (index, path) in paths.enumerated() where fingerprints[index] != before[index] {
            do {
                let list = try Self.load(path)
                if index == 0 { lists.anonymizers = list } else { lists.malicious = list }
                changed = true
                logger.notice("risk address list reloaded", metadata: ["portcullis.list": .string(path ?? ""), "portcullis.ranges": "\(list.count)"])
            } catch {
                logger.error(
                    "risk address list refused; the previous one keeps serving",
                    metadata: ["portcullis.list": .string(path ?? ""), "portcullis.problems": .string(error.description)])
            }
        }
        state.withLock { $0 = (lists, fingerprints) }
        return changed
    }

    public func run() async throws {
        guard anonymizerPath != nil || maliciousPath != nil else {
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
}
