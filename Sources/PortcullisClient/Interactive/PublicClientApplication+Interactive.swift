public import Foundation
import PortcullisAPI

#if canImport(FoundationNetworking)
import FoundationNetworking
import PortcullisVocabulary
#endif

/// `prompt` of an interactive sign-in (PROTOCOL §9.1). MSAL's default is `selectAccount`.
public enum SignInPrompt: String, Sendable {
    case selectAccount = "select_account"
    case login
    case consent
    /// `prompt=none`: a code from the browser's session, or `interactionRequired` without one.
    case never = "none"
}

/// What the user needs to finish a device code sign-in: shown by the app (RFC 8628 §3.3).
public struct DeviceCodeInfo: Sendable {
    public var userCode: String
    public var verificationURI: URL
    /// The server's ready-made instruction ("To sign in, use a web browser to open the page … and enter the code …").
    public var message: String
    public var expiresOn: Date
}

extension PublicClientApplication {
    /// Interactive sign-in: authorization code with PKCE (S256), `state` and `nonce` checked, through the
    /// app's presenter. With `remediation: .automatic`, an app-protection refusal at redemption is remediated
    /// (the account is first cached by single sign-on for the compliance service, without a page) and the
    /// token is then acquired silently — the same loop as after the password grant.
    public func acquireTokenInteractive(
        scopes: [String], presenter: any AuthorizationPresenter, prompt: SignInPrompt? = .selectAccount, loginHint: String? = nil,
        claimsChallenge: String? = nil, remediation: RemediationMode = .none
    ) async throws -> AuthenticationResult {
        do {
            return try await authorizationCodeFlow(scopes: scopes, presenter: presenter, prompt: prompt, loginHint: loginHint, claimsChallenge: claimsChallenge)
        } catch let error as PortcullisClientError where error.kind == .protectionPolicyRequired {
            // The sign-in succeeded; only this resource's token was refused. A token for the compliance service
            // (which app protection never blocks), from the fresh session without a page, caches the account so
            // that remediation can run silently.
            _ = try? await authorizationCodeFlow(
                scopes: [ComplianceManager.complianceScope], presenter: presenter, prompt: .never,
                loginHint: error.protection?.account.username, claimsChallenge: nil)
            guard remediation == .automatic else { throw error }
            return try await remediateThenSilently(error, scopes: scopes)
        }
    }

    /// Answers a resource's claims challenge (PROTOCOL §13: step-up by authentication context; §14: a revocation's `nbf`):
    /// first silently, with the challenge's claims on the refresh; when that needs the user (the factor the context's
    /// policy demands, a new sign-in), interactively with the same claims, the account's name as the login hint.
    public func acquireToken(
        for challenge: ClaimsChallenge, account: Account, scopes: [String], presenter: any AuthorizationPresenter,
        remediation: RemediationMode = .none
    ) async throws -> AuthenticationResult {
        do {
            return try await acquireTokenSilent(account: account, scopes: scopes, claimsChallenge: challenge.claims, remediation: remediation)
        } catch let error as PortcullisClientError where error.kind == .interactionRequired {
            return try await acquireTokenInteractive(
                scopes: scopes, presenter: presenter, prompt: nil, loginHint: account.username, claimsChallenge: challenge.claims, remediation: remediation)
        }
    }

    /// The device code flow (RFC 8628): `onCode` shows the code to the user; polling follows the server's
    /// interval (slower after `slow_down`) until the user approves, denies, or the code expires. With
    /// `remediation: .automatic`, an app-protection refusal asks for one more code (for the compliance
    /// service), remediates, and acquires the token silently.
    public func acquireTokenByDeviceCode(
        scopes: [String], claimsChallenge: String? = nil, remediation: RemediationMode = .none,
        onCode: @escaping @Sendable (DeviceCodeInfo) async -> Void
    ) async throws -> AuthenticationResult {
        do {
            return try await deviceCodeFlow(scopes: scopes, claimsChallenge: claimsChallenge, onCode: onCode)
        } catch let error as PortcullisClientError where error.kind == .protectionPolicyRequired && remediation == .automatic {
            _ = try await deviceCodeFlow(scopes: [ComplianceManager.complianceScope], claimsChallenge: nil, onCode: onCode)
            return try await remediateThenSilently(error, scopes: scopes)
        }
    }

    func remediateThenSilently(_ error: PortcullisClientError, scopes: [String]) async throws -> AuthenticationResult {
        guard let remediator, let protected = error.protection?.account else { throw error }
        let status = await remediator.remediate(account: protected, silent: true)
        guard status.status == .compliant else { throw Self.complianceFailure(status, refusal: error) }
        return try await acquireTokenSilent(account: protected, scopes: scopes, forceRefresh: true)
    }

    func authorizationCodeFlow(
        scopes: [String], presenter: any AuthorizationPresenter, prompt: SignInPrompt?, loginHint: String?,
        claimsChallenge: String?
    ) async throws -> AuthenticationResult {
        let pkce = PKCEPair()
        let state = RandomText.make()
        let nonce = RandomText.make()
        let configuration = self.configuration
        let claims = try ClaimsParameter.build(capabilities: configuration.capabilities, challenge: claimsChallenge)
        let scope = (scopes + Self.oidcScopes.filter { !scopes.contains($0) }).joined(separator: " ")
        let redirect = try await presenter.present { redirectURI in
            var items = [
                ("response_type", "code"), ("client_id", configuration.clientId), ("redirect_uri", redirectURI), ("scope", scope),
                ("state", state), ("nonce", nonce), ("code_challenge", pkce.challenge), ("code_challenge_method", "S256"), ("client_info", "1"),
                ("x-client-SKU", configuration.sku), ("x-client-OS", configuration.osDescription), ("x-client-Ver", configuration.version),
            ]
            if let prompt { items.append(("prompt", prompt.rawValue)) }
            if let loginHint { items.append(("login_hint", loginHint)) }
            if let claims { items.append(("claims", claims)) }
            guard var components = URLComponents(url: configuration.authority.appendingPathComponent("oauth2/v2.0/authorize"), resolvingAgainstBaseURL: false)
            else { throw PortcullisClientError.transport("the authority is not a URL") }
            components.percentEncodedQuery = FormEncoding.encode(items)
            guard let url = components.url else { throw PortcullisClientError.transport("cannot build the authorization URL") }
            return url
        }
        let answer = Dictionary(
            (URLComponents(url: redirect.url, resolvingAgainstBaseURL: false)?.queryItems ?? []).map { ($0.name, $0.value ?? "") },
            uniquingKeysWith: { first, _ in first })
        guard answer["state"] == state else {
            throw PortcullisClientError(kind: .transport, message: "The sign-in came back with a state this request did not send; ignored.")
        }
        if let error = answer["error"] {
            let interaction = ["login_required", "interaction_required", "consent_required"].contains(error)
            var failure = PortcullisClientError(kind: interaction ? .interactionRequired : .server, message: answer["error_description"] ?? error)
            failure.correlationId = answer["correlation_id"]
            throw failure
        }
        guard let code = answer["code"] else { throw PortcullisClientError(kind: .transport, message: "The sign-in came back without a code.") }
        let result = try await request(
            [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirect.redirectURI), ("code_verifier", pkce.verifier)],
            scopes: scopes, claimsChallenge: claimsChallenge, account: nil)
        guard let idToken = result.idToken, JWTClaims.decode(idToken)["nonce"] as? String == nonce else {
            throw PortcullisClientError(kind: .transport, message: "The ID token does not carry this sign-in's nonce.")
        }
        return result
    }

    func deviceCodeFlow(scopes: [String], claimsChallenge: String?, onCode: @Sendable (DeviceCodeInfo) async -> Void) async throws -> AuthenticationResult {
        var form = [("client_id", configuration.clientId), ("scope", (scopes + Self.oidcScopes.filter { !scopes.contains($0) }).joined(separator: " "))]
        if let claims = try ClaimsParameter.build(capabilities: configuration.capabilities, challenge: claimsChallenge) { form.append(("claims", claims)) }
        let reply = try await transport.send(
            configuration.authority.appendingPathComponent("oauth2/v2.0/devicecode"), method: "POST", form: form,
            correlationId: UUID().identifierText)
        guard reply.status == 200 else {
            guard let body = try? JSONDecoder().decode(OAuthErrorBody.self, from: reply.body) else {
                throw PortcullisClientError.transport("the device authorization endpoint answered HTTP \(reply.status)")
            }
            throw PortcullisClientError.from(body, requestAccount: nil, retryAfter: reply.retryAfter)
        }
        guard let started = try? JSONDecoder().decode(DeviceAuthorizationResponse.self, from: reply.body), let uri = URL(string: started.verificationUri) else {
            throw PortcullisClientError.transport("the device authorization answer is not usable")
        }
        let expiresOn = Date().addingTimeInterval(TimeInterval(started.expiresIn))
        await onCode(DeviceCodeInfo(userCode: started.userCode, verificationURI: uri, message: started.message, expiresOn: expiresOn))
        var interval = max(1, started.interval)
        while Date() < expiresOn {
            try await Task.sleep(for: .seconds(interval))
            do {
                return try await request(
                    [("grant_type", "urn:ietf:params:oauth:grant-type:device_code"), ("device_code", started.deviceCode)],
                    scopes: scopes, claimsChallenge: claimsChallenge, account: nil)
            } catch let error as PortcullisClientError where error.oauth?.error == "authorization_pending" {
                continue
            } catch let error as PortcullisClientError where error.oauth?.error == "slow_down" {
                interval += 5  // RFC 8628 §3.5
            } catch let error as PortcullisClientError where error.oauth?.error == "access_denied" {
                throw PortcullisClientError(kind: .cancelled, message: error.message, oauth: error.oauth, correlationId: error.correlationId)
            }
        }
        throw PortcullisClientError(kind: .cancelled, message: "The device code expired before the sign-in was approved.")
    }
}
