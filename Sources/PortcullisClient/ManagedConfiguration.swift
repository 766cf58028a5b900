import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import PortcullisAPI
import PortcullisCore

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
                        continuation.yield(await Self.decode(T.self, response, account: account, manager: manager))
                        yieldedOnce = true
                    case .notModified(let retryAfter):
                        // A poll the server could not hold (shutting down, too many waiting): not at once again.
                        if let retryAfter { try? await Task.sleep(for: .seconds(max(1, min(retryAfter, 60)))) }
                    case .unmanaged:
                        // Not enrolled (yet): nil, and look again later — the app may enroll the account meanwhile.
                        if !yieldedOnce || known != nil { continuation.yield(nil) }
                        known = nil
                        yieldedOnce = true
                        try? await Task.sleep(for: retryDelay)
                    case .ended:
                        if known != nil || !yieldedOnce { continuation.yield(nil) }
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
        var components = URLComponents(url: application.configuration.baseURL.appendingPathComponent("mam/v1/enrollments")
            .appendingPathComponent(state.enrollmentId).appendingPathComponent("configuration"), resolvingAgainstBaseURL: false)
        if wait > 0 { components?.queryItems = [URLQueryItem(name: "wait", value: String(wait))] }
        guard let url = components?.url else { return .unavailable }
        for forceRefresh in [false, true] {
            guard case .success(let token) = await complianceToken(account, forceRefresh: forceRefresh) else { return .unavailable }
            let reply: HTTPTransport.Reply
            do {
                reply = try await application.transport.send(
                    url, method: "GET", bearer: token, correlationId: UUID().uuidString.lowercased(),
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
                   (try? await stateStore.state(homeAccountId: account.homeAccountId))?.enrollmentId == state.enrollmentId {
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
