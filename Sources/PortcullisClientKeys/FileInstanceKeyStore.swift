// Built with the FileKeyStore trait (on by default; an app opts in with `traits: ["FileKeyStore"]`): swift-certificates
// makes its CSRs.
#if FileKeyStore
public import Crypto
public import Foundation
public import PortcullisAPI
public import PortcullisClient
public import PortcullisVocabulary
import SwiftASN1
import X509

/// An `InstanceKeyStore` that keeps each account's EC P-256 key in a file of its own (PKCS #8 PEM, mode 0600,
/// in a 0700 directory): for Linux and development. On Apple platforms keep the key in the Secure Enclave
/// instead (an `InstanceKeyStore` of your own over CryptoKit's `SecureEnclave.P256` and `HPKE`), so that it
/// cannot be copied off the device. It is also the app instance's DPoP proof key (`ProofKey`, a key of its own).
public actor FileInstanceKeyStore: InstanceKeyStore, ProofKey, DeviceKey {
    public nonisolated let directory: URL
    public static let ciphersuite = HPKE.Ciphersuite(kem: .P256_HKDF_SHA256, kdf: .HKDF_SHA256, aead: .AES_GCM_256)

    public init(directory: URL) {
        self.directory = directory
    }

    func file(_ account: Account) -> URL {
        // homeAccountId is `oid.tid`: letters, digits, '-' and '.'.
        let name = account.homeAccountId.lowercased().filter { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." }
        return directory.appendingPathComponent("instance-\(name).pem")
    }

    /// The account's key, created on first use.
    public func privateKey(for account: Account) throws -> P256.KeyAgreement.PrivateKey { try key(at: file(account)) }

    /// The key in `url`, created (0600, exclusively) on first use.
    func key(at url: URL) throws -> P256.KeyAgreement.PrivateKey {
        if let text = try? String(contentsOf: url, encoding: .utf8) {
            return try P256.KeyAgreement.PrivateKey(pemRepresentation: text)
        }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let key = P256.KeyAgreement.PrivateKey()
        let descriptor = createExclusively(url.path)
        guard descriptor >= 0 else {
            // Another process created it first: use that one.
            if errno == EEXIST, let text = try? String(contentsOf: url, encoding: .utf8) { return try P256.KeyAgreement.PrivateKey(pemRepresentation: text) }
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: url.path])
        }
        defer { close(descriptor) }
        let data = Data(key.pemRepresentation.utf8)
        let written = data.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == data.count, fsync(descriptor) == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path]) }
        return key
    }

    public func publicKey(for account: Account) throws -> AppKeyJWK {
        let raw = Array(try privateKey(for: account).publicKey.rawRepresentation)
        return AppKeyJWK(x: Base64URL.encode(raw[0..<32]), y: Base64URL.encode(raw[32..<64]))
    }

    public func open(_ sealed: SealedSecretResponse.Sealed, info: Data, for account: Account) throws -> Data {
        guard let enc = Base64URL.decode(sealed.enc), let ciphertext = Base64URL.decode(sealed.ciphertext) else { throw CryptoKitError.incorrectParameterSize }
        var recipient = try HPKE.Recipient(privateKey: try privateKey(for: account), ciphersuite: Self.ciphersuite, info: info, encapsulatedKey: Data(enc))
        return try recipient.open(Data(ciphertext), authenticating: Data())
    }

    public func certificateSigningRequest(for account: Account) throws -> String {
        let signing = try P256.Signing.PrivateKey(rawRepresentation: try privateKey(for: account).rawRepresentation)
        let subject = try DistinguishedName { CommonName(account.username.isEmpty ? account.homeAccountId : account.username) }
        return try CertificateSigningRequest(
            version: .v1, subject: subject, privateKey: Certificate.PrivateKey(signing), attributes: CertificateSigningRequest.Attributes(),
            signatureAlgorithm: .ecdsaWithSHA256
        ).serializeAsPEM().pemString
    }

    /// The key as PKCS #8 PEM, for an app that presents its device identity itself (TLS client authentication).
    public func privateKeyPEM(for account: Account) throws -> String {
        try P256.Signing.PrivateKey(rawRepresentation: try privateKey(for: account).rawRepresentation).pemRepresentation
    }

    /// The app instance's DPoP key (PROTOCOL §15): one per instance, not per account, since the first token request
    /// comes before any account is known.
    func proofSigningKey() throws -> P256.Signing.PrivateKey {
        try P256.Signing.PrivateKey(rawRepresentation: try key(at: directory.appendingPathComponent("dpop-instance.pem")).rawRepresentation)
    }

    public func proofPublicKey() throws -> AppKeyJWK {
        let raw = Array(try proofSigningKey().publicKey.rawRepresentation)
        return AppKeyJWK(x: Base64URL.encode(raw[0..<32]), y: Base64URL.encode(raw[32..<64]))
    }

    public func signProof(_ message: Data) throws -> Data {
        try proofSigningKey().signature(for: message).rawRepresentation
    }

    /// The device's key (PROTOCOL §18): one per instance's directory, as a device has one.
    func deviceSigningKey() throws -> P256.Signing.PrivateKey {
        try P256.Signing.PrivateKey(rawRepresentation: try key(at: directory.appendingPathComponent("device.pem")).rawRepresentation)
    }

    public func deviceCertificateRequest() throws -> String {
        try CertificateSigningRequest(
            version: .v1, subject: try DistinguishedName { CommonName("device") }, privateKey: Certificate.PrivateKey(try deviceSigningKey()),
            attributes: CertificateSigningRequest.Attributes(), signatureAlgorithm: .ecdsaWithSHA256
        ).serializeAsPEM().pemString
    }

    public func signAsDevice(_ message: Data) throws -> Data { try deviceSigningKey().signature(for: message).rawRepresentation }

    var registrationFile: URL { directory.appendingPathComponent("device-registration.json") }

    public func deviceRegistration() throws -> DeviceRegistration? {
        guard let data = try? Data(contentsOf: registrationFile) else { return nil }
        return try JSONDecoder().decode(DeviceRegistration.self, from: data)
    }

    public func storeDeviceRegistration(_ registration: DeviceRegistration?) throws {
        guard let registration else {
            try? FileManager.default.removeItem(at: registrationFile)
            return
        }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try JSONEncoder().encode(registration).write(to: registrationFile, options: .atomic)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: registrationFile.path)
    }

    func dataKeyFile(_ account: Account) -> URL {
        let name = file(account).lastPathComponent.replacingOccurrences(of: "instance-", with: "data-").replacingOccurrences(of: ".pem", with: ".key")
        return directory.appendingPathComponent(name)
    }

    public func dataProtectionKey(for account: Account, create: Bool) throws -> Data? {
        let url = dataKeyFile(account)
        if let key = try? Data(contentsOf: url), key.count == 32 { return key }
        guard create else { return nil }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let key = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
        let descriptor = createExclusively(url.path)
        guard descriptor >= 0 else {
            // Another process created it first: use that one.
            if errno == EEXIST, let existing = try? Data(contentsOf: url), existing.count == 32 { return existing }
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: url.path])
        }
        defer { close(descriptor) }
        let written = key.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == key.count, fsync(descriptor) == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path]) }
        return key
    }

    public func removeKey(for account: Account) throws {
        for url in [file(account), dataKeyFile(account)] where FileManager.default.fileExists(atPath: url.path) {
            try FileManager.default.removeItem(at: url)
        }
    }
}

/// `open(2)` with O_CREAT | O_EXCL, mode 0600 (outside the actor, whose `open` is the protocol's).
private func createExclusively(_ path: String) -> Int32 {
    open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
}
#endif
