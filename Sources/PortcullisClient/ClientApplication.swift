import Foundation
import PortcullisAPI
public import PortcullisVocabulary
import Synchronization

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// What the token client asks the compliance side: the enrollment to name in `microsoft_enrollment_id`,
/// and remediation when a token is refused for app protection.
public protocol ComplianceRemediator: AnyObject, Sendable {
    func enrollmentId(for account: Account) async -> String?
    func enrollmentId(forUsername username: String) async -> String?
    func remediate(account: Account, silent: Bool) async -> ComplianceStatus
}

/// What to do when a token is refused with `protection_policy_required`.
public enum RemediationMode: Sendable {
    /// Throw the refusal; the app remediates itself.
    case none
    /// Remediate once (silently) and retry once; throw the compliance status if it does not end compliant.
    case automatic
}

/// A public client (mobile, desktop, CLI): password grant and silent refresh, with client capabilities,
/// a token cache keyed by home account ID, and app-protection remediation.
public final class PublicClientApplication: Sendable {
    public let configuration: ClientConfiguration
    public let cache: any TokenCache
    let transport: HTTPTransport
    private let remediatorBox = Mutex<(any ComplianceRemediator)?>(nil)

    public init(configuration: ClientConfiguration, cache: any TokenCache = InMemoryTokenCache(), session: URLSession = .shared) {
        self.configuration = configuration
        self.cache = cache
        self.transport = HTTPTransport(session: session, configuration: configuration)
    }

    /// The compliance manager that remediates for this application (set by `ComplianceManager`).
    public var remediator: (any ComplianceRemediator)? {
        get { remediatorBox.withLock { $0 } }
        set { remediatorBox.withLock { $0 = newValue } }
    }

    static let oidcScopes = ["openid", "profile", "offline_access"]

    /// Resource Owner Password Credentials grant (for tests, tools and legacy apps).
    public func acquireToken(
        username: String, password: String, scopes: [String], claimsChallenge: String? = nil, remediation: RemediationMode = .none
    ) async throws -> AuthenticationResult {
        try await withRemediation(remediation, account: nil) {
            var form = [("grant_type", "password"), ("username", username), ("password", password)]
            if let id = await self.remediator?.enrollmentId(forUsername: username) { form.append(("microsoft_enrollment_id", id)) }
            do {
                return try await self.request(form, scopes: scopes, claimsChallenge: claimsChallenge, account: nil)
            } catch let error as PortcullisClientError where error.kind == .protectionPolicyRequired {
                // The sign-in itself succeeded; only this resource's token was refused. Establish the session
                // with a token for the compliance service (which app protection never blocks), so that the
                // account is cached and remediation can run silently, as it does with MSAL's session.
                _ = try? await self.request(
                    [("grant_type", "password"), ("username", username), ("password", password)],
                    scopes: [ComplianceManager.complianceScope], claimsChallenge: nil, account: nil)
                throw error
            }
        }
    }

    /// A token from the cache, or by refreshing. Throws `interactionRequired` when there is nothing to refresh with.
    public func acquireTokenSilent(
        account: Account, scopes: [String], forceRefresh: Bool = false, claimsChallenge: String? = nil, remediation: RemediationMode = .none
    ) async throws -> AuthenticationResult {
        guard let entry = try await cache.entry(homeAccountId: account.homeAccountId) else {
            throw PortcullisClientError(kind: .interactionRequired, message: "No cached tokens for \(account.username).")
        }
        let key = Self.scopeKey(scopes)
        if !forceRefresh, claimsChallenge == nil, let cached = entry.accessTokens[key], cached.expiresOn > Date().addingTimeInterval(300) {
            var result = AuthenticationResult(
                accessToken: cached.token, expiresOn: cached.expiresOn, scopes: cached.scopes, account: entry.account,
                idToken: entry.idToken, correlationId: "cache")
            result.tokenType = cached.tokenType ?? TokenResponse.bearer
            return result
        }
        return try await withRemediation(remediation, account: account) {
            guard let refreshToken = try await self.cache.entry(homeAccountId: account.homeAccountId)?.refreshToken else {
                throw PortcullisClientError(kind: .interactionRequired, message: "No refresh token for \(account.username).")
            }
            var form = [("grant_type", "refresh_token"), ("refresh_token", refreshToken)]
            if let id = await self.remediator?.enrollmentId(for: account) { form.append(("microsoft_enrollment_id", id)) }
            return try await self.request(form, scopes: scopes, claimsChallenge: claimsChallenge, account: account)
        }
    }

    public func accounts() async throws -> [Account] { try await cache.entries().map(\.account) }

    /// Forgets an account's tokens here and revokes its refresh token at the server.
    public func signOut(account: Account) async throws {
        if let refreshToken = try await cache.entry(homeAccountId: account.homeAccountId)?.refreshToken {
            _ = try? await transport.send(
                configuration.authority.appendingPathComponent("oauth2/v2.0/revoke"), method: "POST",
                form: [("client_id", configuration.clientId), ("token", refreshToken), ("token_type_hint", "refresh_token")],
                correlationId: UUID().identifierText)
        }
        try await cache.remove(homeAccountId: account.homeAccountId)
    }

    func withRemediation(
        _ mode: RemediationMode, account: Account?, _ attempt: @Sendable () async throws -> AuthenticationResult
    ) async throws -> AuthenticationResult {
        do {
            return try await attempt()
        } catch let error as PortcullisClientError where error.kind == .protectionPolicyRequired && mode == .automatic {
            guard let remediator, let protected = error.protection?.account ?? account else { throw error }
            let status = await remediator.remediate(account: protected, silent: true)
            guard status.status == .compliant else { throw Self.complianceFailure(status, refusal: error) }
            return try await attempt()  // once; a second refusal is thrown as it is
        }
    }

    /// Remediation ran and did not end compliant: the status (with its user-facing title and message) and the refusal.
    static func complianceFailure(_ status: ComplianceStatus, refusal: PortcullisClientError) -> PortcullisClientError {
        var failure = PortcullisClientError(kind: .complianceRequired, message: status.errorMessage ?? "The app could not become compliant.")
        failure.complianceStatus = status
        failure.protection = refusal.protection
        failure.oauth = refusal.oauth
        return failure
    }

    static func scopeKey(_ scopes: [String]) -> String { scopes.map { $0.lowercased() }.sorted().joined(separator: " ") }

    func request(_ grant: [(String, String)], scopes: [String], claimsChallenge: String?, account: Account?) async throws -> AuthenticationResult {
        var form =
            grant + [
                ("client_id", configuration.clientId), ("client_info", "1"),
                ("scope", (scopes + Self.oidcScopes.filter { !scopes.contains($0) }).joined(separator: " ")),
            ]
        if let claims = try ClaimsParameter.build(capabilities: configuration.capabilities, challenge: claimsChallenge) { form.append(("claims", claims)) }
        let correlationId = UUID().identifierText
        let reply = try await transport.token(form: form, correlationId: correlationId)
        guard reply.status == 200 else {
            guard let body = try? JSONDecoder().decode(OAuthErrorBody.self, from: reply.body) else {
                throw PortcullisClientError.transport("token endpoint answered HTTP \(reply.status) without an OAuth error body")
            }
            throw PortcullisClientError.from(body, requestAccount: account, retryAfter: reply.retryAfter)
        }
        guard let response = try? JSONDecoder().decode(TokenResponse.self, from: reply.body) else {
            throw PortcullisClientError.transport("the token response is not valid JSON")
        }
        let expiresOn = Date().addingTimeInterval(TimeInterval(response.expiresIn))
        var resolved = account
        if let info = response.clientInfo.flatMap(ClientInfo.init(encoded:)) {
            let username = response.idToken.map(JWTClaims.decode)?["preferred_username"] as? String ?? account?.username ?? ""
            resolved = Account(objectId: info.uid, tenantId: info.utid, username: username)
        }
        if let resolved {
            var entry = try await cache.entry(homeAccountId: resolved.homeAccountId) ?? CachedAccount(account: resolved, refreshToken: nil, idToken: nil)
            if !resolved.username.isEmpty { entry.account = resolved }
            entry.refreshToken = response.refreshToken ?? entry.refreshToken
            entry.idToken = response.idToken ?? entry.idToken
            entry.accessTokens[Self.scopeKey(scopes)] = .init(
                token: response.accessToken, expiresOn: expiresOn, scopes: scopes,
                tokenType: response.tokenType == TokenResponse.dpop ? TokenResponse.dpop : nil)
            try await cache.store(entry)
        }
        var result = AuthenticationResult(
            accessToken: response.accessToken, expiresOn: expiresOn, scopes: response.scope.split(separator: " ").map(String.init),
            account: resolved, idToken: response.idToken, correlationId: correlationId)
        result.tokenType = response.tokenType
        return result
    }
}

/// A confidential client (daemon, service): client credentials with a client secret.
public final class ConfidentialClientApplication: Sendable {
    public let configuration: ClientConfiguration
    let secret: String
    let transport: HTTPTransport
    private let cached = Mutex<[String: AuthenticationResult]>([:])

    public init(configuration: ClientConfiguration, clientSecret: String, session: URLSession = .shared) {
        self.configuration = configuration
        self.secret = clientSecret
        self.transport = HTTPTransport(session: session, configuration: configuration)
    }

    /// An app-only token for `scopes` (`{resource}/.default`), from the cache while it is fresh.
    public func acquireToken(scopes: [String], forceRefresh: Bool = false) async throws -> AuthenticationResult {
        let key = PublicClientApplication.scopeKey(scopes)
        if !forceRefresh, let hit = cached.withLock({ $0[key] }), hit.expiresOn > Date().addingTimeInterval(300) { return hit }
        var form = [
            ("grant_type", "client_credentials"), ("client_id", configuration.clientId), ("client_secret", secret), ("scope", scopes.joined(separator: " ")),
        ]
        if let claims = try ClaimsParameter.build(capabilities: configuration.capabilities, challenge: nil) { form.append(("claims", claims)) }
        let correlationId = UUID().identifierText
        let reply = try await transport.token(form: form, correlationId: correlationId)
        guard reply.status == 200, let response = try? JSONDecoder().decode(TokenResponse.self, from: reply.body) else {
            if let body = try? JSONDecoder().decode(OAuthErrorBody.self, from: reply.body) {
                throw PortcullisClientError.from(body, requestAccount: nil, retryAfter: reply.retryAfter)
            }
            throw PortcullisClientError.transport("token endpoint answered HTTP \(reply.status)")
        }
        var result = AuthenticationResult(
            accessToken: response.accessToken, expiresOn: Date().addingTimeInterval(TimeInterval(response.expiresIn)),
            scopes: scopes, account: nil, idToken: nil, correlationId: correlationId)
        result.tokenType = response.tokenType
        cached.withLock { $0[key] = result }
        return result
    }
}
