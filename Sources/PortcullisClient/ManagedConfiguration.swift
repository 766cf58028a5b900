public import Foundation
public import PortcullisAPI
public import PortcullisVocabulary

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The organization's configuration for this app (PROTOCOL §8.2), after Apple's
/// `ManagedAppConfigurationProvider`: the current configuration decoded into the app's own type, then every
/// change, as an `AsyncSequence` of optionals. `nil` means: the account is not managed in this app, no
/// configuration applies to it, or the configuration could not be decoded (reported to the delegate's
/// `configurationDecodingFailed`, never a crash). Long polling under the hood; the stream ends when the
/// account's enrollment ends (wipe, unenrollment) or the consuming task is cancelled.
///
/// Decode into types that ignore keys they do not know (the default for `Decodable` structs), so that an
/// organization adding a key never breaks an app that does not use it.
public struct ManagedAppConfigurationProvider: Sendable {
    public let manager: ComplianceManager
    /// How long one long poll waits for a change (seconds, at most 60).
    public var wait: Int
    /// How long to wait before retrying after a network failure.
    public var retryDelay: Duration

    public init(manager: ComplianceManager, wait: Int = 60, retryDelay: Duration = .seconds(5)) {
        self.manager = manager
        self.wait = min(max(wait, 1), 60)
        self.retryDelay = retryDelay
    }

    public func configurations<T: Decodable & Sendable>(of type: T.Type, for account: Account) -> AsyncStream<T?> {
        let manager = manager
        return follow(account) { response in
            guard let response else { return nil }
            return await Self.decode(T.self, response, account: account, manager: manager)
        }
    }

    /// The identifiers of the secrets of `kind` provisioned to the account in this app (PROTOCOL §8.2), now and
    /// at every change: `[]` when unmanaged or none. Look each one up with `password`, `certificates` or
    /// `identity` when needed; the SDK keeps no secret.
    public func identifiers(of kind: ManagedSecretKind, for account: Account) -> AsyncStream<[String]> {
        follow(account) { response in
            (response?.secrets ?? []).filter { $0.kind == kind.rawValue }.map(\.identifier)
        }
    }

    /// Follows the account's configuration: `transform` of the current answer, then of each change (`nil` when
    /// unmanaged or ended). Long polls; ends on wipe/unenrollment or when the consumer stops.
    func follow<T: Sendable>(_ account: Account, _ transform: @escaping @Sendable (ManagedConfigurationResponse?) async -> T) -> AsyncStream<T> {
        let manager = manager
        let wait = wait
        let retryDelay = retryDelay
        return AsyncStream { continuation in
            let task = Task {
                var known: String?
                var yieldedOnce = false
                while !Task.isCancelled {
                    switch await manager.fetchConfiguration(account: account, knownVersion: known, wait: yieldedOnce ? wait : 0) {
                    case .changed(let response):
                        known = response.version
                        continuation.yield(await transform(response))
                        yieldedOnce = true
                    case .notModified(let retryAfter):
                        // A poll the server could not hold (shutting down, too many waiting): not at once again.
                        if let retryAfter { try? await Task.sleep(for: .seconds(max(1, min(retryAfter, 60)))) }
                    case .unmanaged:
                        // Not enrolled (yet): nil, and look again later — the app may enroll the account meanwhile.
                        if !yieldedOnce || known != nil { continuation.yield(await transform(nil)) }
                        known = nil
                        yieldedOnce = true
                        try? await Task.sleep(for: retryDelay)
                    case .ended:
                        if known != nil || !yieldedOnce { continuation.yield(await transform(nil)) }
                        continuation.finish()
                        return
                    case .unavailable:
                        try? await Task.sleep(for: retryDelay)
                    }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    // MARK: Secrets (looked up each time they are needed, never cached: seed 000)

    /// The material of secret `identifier` whatever its kind (`password`, or `certificatesPem` with an uploaded
    /// identity's `privateKeyPem`), opened with the instance key. A device identity is `identity(_:for:)`'s.
    public func secret(_ identifier: String, for account: Account) async throws -> SecretMaterial {
        try await manager.secret(identifier, account: account)
    }

    /// The password `identifier`, opened with the instance key.
    public func password(_ identifier: String, for account: Account) async throws -> String {
        guard let password = try await manager.secret(identifier, account: account).password else {
            throw PortcullisClientError(kind: .notProvisioned, message: "'\(identifier)' is not a password")
        }
        return password
    }

    /// The certificate(s) `identifier`, PEM, the first one the leaf.
    public func certificates(_ identifier: String, for account: Account) async throws -> String {
        guard let pem = try await manager.secret(identifier, account: account).certificatesPem else {
            throw PortcullisClientError(kind: .notProvisioned, message: "'\(identifier)' holds no certificate")
        }
        return pem
    }

    /// The identity `identifier`: an uploaded one with its private key (PKCS #8 PEM); a device identity is
    /// certified for the instance key on each call (a fresh certificate; the key never leaves the key store, so
    /// `privateKeyPem` is `nil` and the app signs through its `InstanceKeyStore`).
    public func identity(_ identifier: String, for account: Account) async throws -> ManagedIdentity {
        do {
            let material = try await manager.secret(identifier, account: account)
            guard let certificates = material.certificatesPem, let key = material.privateKeyPem else {
                throw PortcullisClientError(kind: .notProvisioned, message: "'\(identifier)' is not an identity")
            }
            return ManagedIdentity(certificatesPem: certificates, privateKeyPem: key, notAfter: nil)
        } catch let error as PortcullisClientError where error.code == "deviceIdentity" {
            return try await manager.issueIdentity(identifier, account: account)
        }
    }

    static func decode<T: Decodable>(_ type: T.Type, _ response: ManagedConfigurationResponse, account: Account, manager: ComplianceManager) async -> T? {
        guard let configuration = response.configuration else { return nil }
        do {
            return try JSONDecoder().decode(T.self, from: JSONEncoder().encode(configuration))
        } catch {
            await manager.reportDecodingFailure(error, account: account)
            return nil
        }
    }
}

/// An identity: its certificates (PEM, the leaf first) and, when uploaded by the organization, its private key.
public struct ManagedIdentity: Sendable, Equatable {
    public var certificatesPem: String
    /// PKCS #8 PEM; `nil` for a device identity (its key is the instance key, kept by the key store).
    public var privateKeyPem: String?
    /// A device identity's expiry (renew by asking again).
    public var notAfter: Date?
}

/// Where an app instance keeps its key (PROTOCOL §8.2): one EC P-256 key per account, created on first use,
/// registered at enrollment; secrets are sealed to it (HPKE, RFC 9180) and device identities certify it.
/// Keep it where it cannot be exported (the Secure Enclave on Apple platforms); `FileInstanceKeyStore` in
/// `PortcullisClientKeys` keeps it in a 0600 file (Linux, development).
public protocol InstanceKeyStore: Sendable {
    /// The account's public key as a JWK, creating the key on first use.
    func publicKey(for account: Account) async throws -> AppKeyJWK
    /// Opens material sealed to the account's key: HPKE base mode, DHKEM(P-256, HKDF-SHA256), HKDF-SHA256,
    /// AES-256-GCM, empty AAD.
    func open(_ sealed: SealedSecretResponse.Sealed, info: Data, for account: Account) async throws -> Data
    /// A PEM PKCS #10 request for the account's key, signed with it (ECDSA, SHA-256).
    func certificateSigningRequest(for account: Account) async throws -> String
    /// The account's data protection key: 32 random bytes for AES-256-GCM (PROTOCOL §16), created when `create` is set
    /// and there is none; `nil` when there is none and `create` is not set (after a wipe).
    func dataProtectionKey(for account: Account, create: Bool) async throws -> Data?
    /// Destroys the account's keys, its data protection key included (wipe, unenrollment).
    func removeKey(for account: Account) async throws
}

/// One answer of `GET …/configuration`, as the provider acts on it.
enum ConfigurationFetch: Sendable {
    case changed(ManagedConfigurationResponse)
    /// Unchanged; with the server's `Retry-After` when it answered without waiting.
    case notModified(retryAfter: TimeInterval?)
    /// The account has no enrollment in this app.
    case unmanaged
    /// The enrollment is not compliant, was wiped or is gone: no more configuration.
    case ended
    /// A network or service failure: try again later.
    case unavailable
}

extension ComplianceManager {
    func fetchConfiguration(account: Account, knownVersion: String?, wait: Int) async -> ConfigurationFetch {
        guard let state = try? await stateStore.state(homeAccountId: account.homeAccountId) else { return .unmanaged }
        var components = URLComponents(
            url: application.configuration.baseURL.appendingPathComponent("mam/v1/enrollments")
                .appendingPathComponent(state.enrollmentId).appendingPathComponent("configuration"), resolvingAgainstBaseURL: false)
        if wait > 0 { components?.queryItems = [URLQueryItem(name: "wait", value: String(wait))] }
        guard let url = components?.url else { return .unavailable }
        for forceRefresh in [false, true] {
            guard case .success(let token) = await complianceToken(account, forceRefresh: forceRefresh) else { return .unavailable }
            let reply: HTTPTransport.Reply
            do {
                reply = try await application.transport.send(
                    url, method: "GET", bearer: token, correlationId: UUID().identifierText,
                    headers: knownVersion.map { ["If-None-Match": "\"\($0)\""] } ?? [:], timeout: TimeInterval(wait + 30))
            } catch {
                return .unavailable
            }
            switch reply.status {
            case 200:
                guard let response = try? JSONDecoder().decode(ManagedConfigurationResponse.self, from: reply.body) else { return .unavailable }
                return .changed(response)
            case 304: return .notModified(retryAfter: reply.retryAfter)
            case 401 where !forceRefresh: continue
            case 403, 404, 410:
                // Its status instead of configuration: a wipe is carried out as a check-in would.
                // (Only while the enrollment is still this account's here: a check-in may have carried it out meanwhile.)
                if let response = try? JSONDecoder().decode(EnrollmentResponse.self, from: reply.body), response.commands?.contains("wipe") == true,
                    (try? await stateStore.state(homeAccountId: account.homeAccountId))?.enrollmentId == state.enrollmentId
                {
                    _ = await wipe(account: account, enrollmentId: state.enrollmentId)
                }
                return .ended
            default: return .unavailable
            }
        }
        return .unavailable
    }

    func reportDecodingFailure(_ error: any Error, account: Account) async {
        await delegate?.configurationDecodingFailed(error, for: account)
    }
}

extension ComplianceManager {
    /// `GET …/secrets/{identifier}`, opened with the instance key. Never cached.
    func secret(_ identifier: String, account: Account) async throws -> SecretMaterial {
        guard let keyStore else { throw PortcullisClientError(kind: .instanceKeyRequired, message: "this ComplianceManager has no InstanceKeyStore") }
        let (enrollmentId, reply) = try await secretCall(account, path: "secrets/\(identifier)", method: "GET", body: nil)
        let response = try Self.decodeSecretReply(SealedSecretResponse.self, reply, identifier: identifier)
        let info = SealedSecretResponse.info(enrollmentId: enrollmentId, identifier: response.identifier, version: response.version)
        let plaintext = try await keyStore.open(response.sealed, info: info, for: account)
        return try JSONDecoder().decode(SecretMaterial.self, from: plaintext)
    }

    /// `POST …/identities/{identifier}` with a request for the instance key.
    func issueIdentity(_ identifier: String, account: Account) async throws -> ManagedIdentity {
        guard let keyStore else { throw PortcullisClientError(kind: .instanceKeyRequired, message: "this ComplianceManager has no InstanceKeyStore") }
        let csr = try await keyStore.certificateSigningRequest(for: account)
        let (_, reply) = try await secretCall(
            account, path: "identities/\(identifier)", method: "POST", body: try JSONEncoder().encode(IdentityRequest(csr: csr)))
        let response = try Self.decodeSecretReply(IdentityResponse.self, reply, identifier: identifier)
        return ManagedIdentity(certificatesPem: response.certificatesPem, privateKeyPem: nil, notAfter: ISO8601DateFormatter().date(from: response.notAfter))
    }

    func secretCall(_ account: Account, path: String, method: String, body: Data?) async throws -> (String, HTTPTransport.Reply) {
        guard let state = try? await stateStore.state(homeAccountId: account.homeAccountId) else {
            throw PortcullisClientError(kind: .notProvisioned, message: "the account is not managed in this app")
        }
        let url = application.configuration.baseURL.appendingPathComponent("mam/v1/enrollments").appendingPathComponent(state.enrollmentId)
            .appendingPathComponent(path)
        for forceRefresh in [false, true] {
            guard case .success(let token) = await complianceToken(account, forceRefresh: forceRefresh) else {
                throw PortcullisClientError(kind: .interactionRequired, message: "no compliance token for the account")
            }
            let reply: HTTPTransport.Reply
            do {
                reply = try await application.transport.send(url, method: method, json: body, bearer: token, correlationId: UUID().identifierText)
            } catch {
                throw PortcullisClientError.transport("cannot reach the compliance service")
            }
            if reply.status == 401 && !forceRefresh { continue }
            if reply.status == 403, let status = try? JSONDecoder().decode(EnrollmentResponse.self, from: reply.body) {
                if status.commands?.contains("wipe") == true,
                    (try? await stateStore.state(homeAccountId: account.homeAccountId))?.enrollmentId == state.enrollmentId
                {
                    _ = await wipe(account: account, enrollmentId: state.enrollmentId)
                }
                var error = PortcullisClientError(kind: .complianceRequired, message: status.complianceStatus.errorMessage ?? "not compliant")
                error.complianceStatus = status.complianceStatus
                throw error
            }
            return (state.enrollmentId, reply)
        }
        throw PortcullisClientError.transport("the compliance service refused the token")
    }

    static func decodeSecretReply<T: Decodable>(_ type: T.Type, _ reply: HTTPTransport.Reply, identifier: String) throws -> T {
        if reply.status == 200, let value = try? JSONDecoder().decode(T.self, from: reply.body) { return value }
        let problem = (try? JSONDecoder().decode(APIProblem.self, from: reply.body))?.error
        let kind: PortcullisClientError.Kind =
            switch (reply.status, problem?.code) {
            case (404, _): .notProvisioned
            case (409, "appKeyRequired"): .instanceKeyRequired
            case (503, _): .temporarilyUnavailable
            default: .server
            }
        var error = PortcullisClientError(kind: kind, message: problem?.message ?? "HTTP \(reply.status) for '\(identifier)'")
        error.code = problem?.code
        throw error
    }
}

/// The compliance API's error body: `{"error": {"code", "message"}}`.
struct APIProblem: Decodable {
    struct Detail: Decodable {
        let code: String
        let message: String
    }
    let error: Detail
}
