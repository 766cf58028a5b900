public import Foundation
import PortcullisAPI
import PortcullisVocabulary

#if canImport(CryptoKit)
import CryptoKit
#else
import Crypto
#endif

/// Who owns protected data, and whether it is encrypted (`protectionInfo`, seed 002).
public struct ProtectionInfo: Sendable, Equatable {
    /// The owning account; `nil` for data protected for no identity.
    public var owner: Account?
    /// Managed accounts' data is encrypted; unmanaged data carries only the owner (seed 002).
    public var isEncrypted: Bool

    public init(owner: Account?, isEncrypted: Bool) {
        self.owner = owner
        self.isEncrypted = isEncrypted
    }
}

/// Data protection for an identity (PROTOCOL §16, seeds 002/003): a managed account's data is sealed with AES-256-GCM
/// under a key of its own that this app instance's `InstanceKeyStore` keeps, so that a selective wipe, which destroys
/// the key, leaves it unreadable. Unmanaged data gets the owner header only, as the Intune SDK does.
///
/// The format: `PCDP`, version 1, a flags byte (bit 0: encrypted), the owner header's length (2 bytes, big-endian), the
/// owner as JSON (`{"o":objectId,"t":tenantId,"u":username}`, `{}` for none), then the data, or AES-GCM's nonce,
/// ciphertext and tag over it with everything before it as the additional data (so the owner cannot be swapped).
enum ProtectedData {
    static let magic = Data("PCDP".utf8)
    static let version: UInt8 = 1
    static let maximumHeader = 4096

    struct Owner: Codable {
        var o: String?
        var t: String?
        var u: String?
    }

    struct Parsed {
        var info: ProtectionInfo
        var prefix: Data
        var payload: Data
    }

    static func prefix(owner: Account?, encrypted: Bool) -> Data {
        let header = (try? JSONEncoder().encode(Owner(o: owner?.objectId, t: owner?.tenantId, u: owner?.username))) ?? Data("{}".utf8)
        var prefix = magic
        prefix.append(version)
        prefix.append(encrypted ? 1 : 0)
        prefix.append(UInt8(header.count >> 8))
        prefix.append(UInt8(header.count & 0xff))
        prefix.append(header)
        return prefix
    }

    /// `nil` when `data` is not protected data (it does not start with the format's prefix).
    static func parse(_ data: Data) -> Parsed? {
        let bytes = [UInt8](data.prefix(8))
        guard bytes.count == 8, Data(bytes[0..<4]) == magic, bytes[4] == version, bytes[5] <= 1 else { return nil }
        let length = Int(bytes[6]) << 8 | Int(bytes[7])
        guard length <= maximumHeader, data.count >= 8 + length else { return nil }
        let start = data.startIndex
        guard let owner = try? JSONDecoder().decode(Owner.self, from: data[(start + 8)..<(start + 8 + length)]) else { return nil }
        let account: Account? =
            if let o = owner.o, let t = owner.t { Account(objectId: o, tenantId: t, username: owner.u ?? "") } else { nil }
        return Parsed(
            info: ProtectionInfo(owner: account, isEncrypted: bytes[5] == 1), prefix: Data(data[start..<(start + 8 + length)]),
            payload: Data(data[(start + 8 + length)...]))
    }
}

extension ComplianceManager {
    /// `protect`: `data` protected for the identity in effect (`withIdentity`, else `uiIdentity`).
    public func protect(_ data: Data) async throws -> Data { try await protect(data, for: effectiveIdentity()) }

    /// `protect`: `data` protected for `owner` (`nil`: no identity). A managed account's data is encrypted under its
    /// key; anything else is only marked with its owner.
    public func protect(_ data: Data, for owner: Account?) async throws -> Data {
        guard await isManaged(owner), let owner else { return ProtectedData.prefix(owner: owner, encrypted: false) + data }
        let key = try await dataKey(for: owner, create: true)
        let prefix = ProtectedData.prefix(owner: owner, encrypted: true)
        do {
            guard let sealed = try AES.GCM.seal(data, using: key, authenticating: prefix).combined else { throw CryptoKitError.incorrectParameterSize }
            return prefix + sealed
        } catch {
            throw PortcullisClientError(kind: .protectedDataUnavailable, message: "the data could not be encrypted")
        }
    }

    /// `unprotect`: the data as it was. Data that is not protected comes back unchanged. Encrypted data whose account's
    /// key is gone (wiped, unenrolled) throws `protectedDataUnavailable`, as does data that was altered.
    public func unprotect(_ data: Data) async throws -> Data {
        guard let parsed = ProtectedData.parse(data) else { return data }
        guard parsed.info.isEncrypted else { return parsed.payload }
        guard let owner = parsed.info.owner else {
            throw PortcullisClientError(kind: .protectedDataUnavailable, message: "encrypted data without an owner")
        }
        let key = try await dataKey(for: owner, create: false)
        do {
            return try AES.GCM.open(AES.GCM.SealedBox(combined: parsed.payload), using: key, authenticating: parsed.prefix)
        } catch {
            throw PortcullisClientError(kind: .protectedDataUnavailable, message: "the protected data was altered or is not this account's")
        }
    }

    /// `protectionInfo`: the owner of protected data, `nil` for data that is not protected.
    public nonisolated func protectionInfo(for data: Data) -> ProtectionInfo? { ProtectedData.parse(data)?.info }

    /// Writes `data` to `url` protected for `owner` (`nil`: no identity), atomically.
    public func write(_ data: Data, toProtectedFileAt url: URL, for owner: Account?) async throws {
        try await protect(data, for: owner).write(to: url, options: .atomic)
    }

    /// Writes `data` to `url` protected for the identity in effect, atomically.
    public func write(_ data: Data, toProtectedFileAt url: URL) async throws {
        try await write(data, toProtectedFileAt: url, for: effectiveIdentity())
    }

    /// The contents of a file written by `write(_:toProtectedFileAt:for:)` (or of any file, unchanged), to show. A
    /// managed account's file is shown only under its identity: when another identity is in effect, the SDK asks the
    /// delegate for a switch (`requireIdentity`, seed 002's `identitySwitchRequired`) and throws
    /// `identitySwitchRefused` unless it happens.
    public func contentsOfProtectedFile(at url: URL) async throws -> Data {
        let data = try Data(contentsOf: url)
        if let info = protectionInfo(for: data), info.isEncrypted, let owner = info.owner, effectiveIdentity() != owner {
            guard case .switched = await requireIdentity(owner) else {
                throw PortcullisClientError(kind: .identitySwitchRefused, message: "the file belongs to another identity, and the switch was refused")
            }
        }
        return try await unprotect(data)
    }

    /// The owner of a protected file, reading only its header; `nil` when it is not protected.
    public nonisolated func protectionInfo(forFileAt url: URL) -> ProtectionInfo? {
        guard let handle = try? FileHandle(forReadingFrom: url) else { return nil }
        defer { try? handle.close() }
        guard let head = try? handle.read(upToCount: 8 + ProtectedData.maximumHeader) else { return nil }
        return ProtectedData.parse(head)?.info
    }

    func dataKey(for account: Account, create: Bool) async throws -> SymmetricKey {
        guard let keyStore else {
            throw PortcullisClientError(kind: .instanceKeyRequired, message: "data protection needs an instance key store")
        }
        let bytes: Data?
        do { bytes = try await keyStore.dataProtectionKey(for: account, create: create) } catch {
            throw PortcullisClientError(kind: .protectedDataUnavailable, message: "the instance key store is unavailable")
        }
        guard let bytes, bytes.count == 32 else {
            throw PortcullisClientError(kind: .protectedDataUnavailable, message: "this account's data protection key is gone (wiped or removed)")
        }
        return SymmetricKey(data: bytes)
    }

    /// Deletes every file under `protectedFileDirectories` protected for `account` (seed 002: when the app's
    /// `wipeData` answers `false`, the SDK removes the account's files itself). `true` when none is left.
    func removeProtectedFiles(of account: Account) -> Bool {
        var complete = !protectedFileDirectories.isEmpty
        for directory in protectedFileDirectories {
            guard let files = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: [.isRegularFileKey]) else { continue }
            for case let url as URL in files {
                guard (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true,
                    protectionInfo(forFileAt: url)?.owner == account
                else { continue }
                do { try FileManager.default.removeItem(at: url) } catch { complete = false }
            }
        }
        return complete
    }
}
