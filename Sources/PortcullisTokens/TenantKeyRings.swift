public import Foundation
public import PortcullisCore
import Synchronization

/// Every tenant's signing key ring (PROTOCOL §11): `Keys/tenants/{tenantId}/signing-<UTC activation>-<alg>.pem`,
/// created on the tenant's first use under that directory's lock (nodes sharing `Keys/` create one ring), rotated
/// like the keys of `SigningKeyStore`. A tenant's tokens are signed only with its own ring and its JWKS lists only
/// its own keys, so one tenant can never mint a token that verifies against another tenant's JWKS.
///
/// Migration: the installation-wide `Keys/signing-*.pem` of earlier releases never sign again. Until every token
/// they signed has expired — `retiringWindow` after the first start with per-tenant rings, recorded in
/// `Keys/tenants/.rings-since` so that every node and every restart agrees — they still verify and are published
/// in each ring's JWKS; after that they are ignored and can be deleted (docs/operations.md).
public final class TenantKeyRings: Sendable {
    public let directory: URL
    public let algorithm: SigningAlgorithm
    public let accessTokenType: AccessTokenType
    private let clock: any WallClock
    private let retiring: RetiringKeys?
    private let rings = Mutex<[String: TokenSigner]>([:])

    /// Added to the longest token lifetime for the retiring window: clock skew between nodes and verifiers.
    public static let retiringAllowance: TimeInterval = 300

    /// The moment the installation-wide keys stop verifying (`nil` when there are none).
    public var retiringUntil: Date? { retiring?.until }

    /// Reads the installation-wide keys (if any) and records when per-tenant rings began. `retiringWindow` must
    /// cover the longest lifetime of an access token (and of anything else those keys signed).
    public init(
        keysDirectory: URL, algorithm: SigningAlgorithm, accessTokenType: AccessTokenType = .jwt, retiringWindow: TimeInterval,
        clock: any WallClock = SystemWallClock()
    ) throws {
        self.directory = keysDirectory.appendingPathComponent("tenants")
        self.algorithm = algorithm
        self.accessTokenType = accessTokenType
        self.clock = clock
        let legacy = try SigningKeyStore(directory: keysDirectory).existingKeys()
        if legacy.isEmpty {
            self.retiring = nil
        } else {
            let since = try Self.ringsSince(directory: directory, now: clock.now())
            self.retiring = RetiringKeys(keys: legacy, until: since.addingTimeInterval(retiringWindow))
        }
    }

    /// The moment per-tenant rings began on this keys directory: read from `.rings-since`, written (under the lock,
    /// so concurrent first starts agree) when missing.
    static func ringsSince(directory: URL, now: Date) throws -> Date {
        try PrivateFile.createDirectory(directory)
        let file = directory.appendingPathComponent(".rings-since")
        var since = now
        try SigningKeyStore.withExclusiveLock(directory.appendingPathComponent(".lock")) {
            if let text = try? String(contentsOf: file, encoding: .utf8), let seconds = TimeInterval(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
                since = Date(timeIntervalSince1970: seconds)
            } else {
                try PrivateFile.write(Data(String(Int(now.timeIntervalSince1970)).utf8), to: file)
            }
        }
        return since
    }

    /// The signer of a tenant, loading (or, on its first use, creating) its ring. `tenantId` must name a tenant
    /// the caller found in the directory; anything but a GUID is refused (it becomes a directory name).
    public func signer(tenantId id: TenantID) async throws -> TokenSigner {
        if let ring = rings.withLock({ $0[id.rawValue] }) { return ring }
        guard id.rawValue.isGUID else { throw KeyFileError(file: directory.path, problem: "'\(id.rawValue.prefix(64))' is not a tenant ID") }
        let loaded = try SigningKeyStore(directory: directory.appendingPathComponent(id.rawValue)).load(algorithm: algorithm, now: clock.now())
        let retiring = self.retiring.flatMap { clock.now() < $0.until ? $0 : nil }
        let signer = try await TokenSigner(loaded: loaded, retiring: retiring, accessTokenType: accessTokenType, clock: clock)
        return rings.withLock { rings in
            if let first = rings[id.rawValue] { return first }
            rings[id.rawValue] = signer
            return signer
        }
    }

    /// Loads (or creates) the rings of these tenants; returns the files generated, for the start-up log.
    @discardableResult
    public func preload(tenantIds: [TenantID]) async throws -> [String] {
        var generated: [String] = []
        for id in tenantIds {
            let folder = directory.appendingPathComponent(id.rawValue).path
            let before = Set((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
            _ = try await signer(tenantId: id)
            let after = Set((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
            generated += after.subtracting(before).filter { $0.hasSuffix(".pem") }.map { "tenants/\(id)/\($0)" }
        }
        return generated
    }

    /// The tenants that have a ring on disk (for `portcullis keys generate`).
    public static func tenantIds(keysDirectory: URL) -> [TenantID] {
        let directory = keysDirectory.appendingPathComponent("tenants")
        return ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).compactMap { TenantID(guid: $0) }.sorted()
    }

    /// Adds a key to a tenant's ring that starts signing at `activatesAt` (rotation); returns its path under `Keys/`.
    public static func generate(keysDirectory: URL, tenantId id: TenantID, algorithm: SigningAlgorithm, activatesAt: Date) throws -> String {
        guard id.rawValue.isGUID else { throw KeyFileError(file: keysDirectory.path, problem: "'\(id.rawValue.prefix(64))' is not a tenant ID") }
        let name = try SigningKeyStore(directory: keysDirectory.appendingPathComponent("tenants").appendingPathComponent(id.rawValue))
            .generate(algorithm: algorithm, activatesAt: activatesAt)
        return "tenants/\(id)/\(name)"
    }
}
