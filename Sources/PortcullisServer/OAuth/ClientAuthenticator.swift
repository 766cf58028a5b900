import Foundation
import JWTKit
import PortcullisAPI
import PortcullisCore
import PortcullisStorage
import PortcullisTokens
import Synchronization
import X509

/// A client that presented acceptable credentials (or, for a public client, just its ID).
struct AuthenticatedClient: Sendable {
    let application: Application
    /// How it authenticated (PROTOCOL §21): nothing (a public client), a secret, a certificate's assertion, a federated
    /// issuer's token.
    let credential: ClientCredentialType

    /// A confidential client that proved who it is.
    var isConfidential: Bool { credential != .none }
}

/// Client authentication for the token, revocation and introspection endpoints (RFC 6749 §2.3, RFC 7523 §2.2,
/// PROTOCOL §21): `client_secret_basic`, `client_secret_post`, `private_key_jwt` (an assertion signed with one of the
/// application's certificates, or a federated issuer's token), or `client_id` alone for public clients.
struct ClientAuthenticator: Sendable {
    let credentials: CredentialHasher
    let clock: any WallClock
    /// Where an assertion's `jti` is remembered, for every node.
    let replays: any ProofReplayStore
    let endpoints: ServerEndpoints
    /// Federated issuers' keys (their OIDC discovery, fetched under the callback rule).
    let federation: IssuerKeys
    let memory = AssertionMemory()

    func authenticate(form: FormBody, authorization: String?, in directory: DirectorySnapshot) async throws(TokenError) -> AuthenticatedClient {
        var basic: (id: String, secret: String)?
        if let authorization, authorization.count > 6, authorization.prefix(6).equalsIgnoringCase("basic ") {
            let encoded = String(authorization.dropFirst(6).trimmingSpaces())
            guard let data = Data(base64Encoded: encoded), let decoded = String(data: data, encoding: .utf8),
                let colon = decoded.firstIndex(of: ":"),
                let id = FormBody.decode(ArraySlice(decoded[..<colon].utf8)),
                let secret = FormBody.decode(ArraySlice(decoded[decoded.index(after: colon)...].utf8))
            else {
                throw TokenError(.invalidClient, aadsts: 7000215, "The Authorization header is not valid HTTP Basic client authentication.")
            }
            basic = (id, secret)
        }
        let assertion = form["client_assertion"]
        let asserted = assertion != nil || form["client_assertion_type"] != nil
        if (basic != nil && form["client_secret"] != nil) || (asserted && (basic != nil || form["client_secret"] != nil)) {
            throw .multipleClientAuthentications
        }
        if let basic, let bodyId = form["client_id"], AppID(bodyId) != AppID(basic.id) { throw .mismatchedClientId }
        guard let clientId = basic?.id ?? form["client_id"] else { throw .missingParameter("client_id") }
        guard let application = directory.application(appId: AppID(clientId)), !BuiltInResources.all.contains(where: { $0.appId == application.appId }) else {
            throw .unknownApplication(clientId)
        }
        let secret = basic?.secret ?? form["client_secret"]
        if application.publicClient {
            if secret != nil || asserted { throw .publicClientWithSecret }
            return AuthenticatedClient(application: application, credential: .none)
        }
        if asserted {
            guard form["client_assertion_type"] == ClientAssertionRules.type else { throw .clientAssertionType }
            guard let assertion else { throw .missingParameter("client_assertion") }
            let credential = try await verify(assertion, of: application, tenant: directory.tenant)
            return AuthenticatedClient(application: application, credential: credential)
        }
        guard let secret else { throw .missingClientCredential }
        // A secret past its endDateTime no longer authenticates (AADSTS7000222 in Entra; the same error here).
        guard credentials.verifySecret(secret, against: application.secretHashes(validAt: clock.now())) else { throw .invalidClientSecret }
        return AuthenticatedClient(application: application, credential: .clientSecret)
    }

    /// An RFC 7523 assertion of `application` (PROTOCOL §21): its claims (Core), one of the application's certificates
    /// valid now named in its header, its signature by that certificate's key, and its `jti` used in no other assertion
    /// (every node; the very same assertion again is accepted, as Entra accepts MSAL's reuse of one for ten minutes).
    /// An assertion whose `iss` is not the client, of an application with federated credentials, is a federated
    /// issuer's token instead (`verifyFederated`).
    func verify(_ text: String, of application: Application, tenant: Tenant) async throws(TokenError) -> ClientCredentialType {
        let now = clock.now()
        // This node accepted these very bytes before, for this client, with a credential it still holds (removing it ends
        // it at once): nothing else to prove again — MSAL's one assertion for ten minutes costs a digest and a lookup.
        let digest = ClientAssertion.digest(of: text)
        if let known = memory.accepted(digest, now: now), known.client == application.appId, known.credential.isHeld(by: application, at: now) {
            return known.credential.type
        }
        let assertion: ClientAssertion
        switch ClientAssertion.read(text) {
        case .success(let read): assertion = read
        case .failure(let error): throw error
        }
        if !application.federatedIdentityCredentials.isEmpty, assertion.claims["iss"]?.stringValue.map({ AppID($0) != application.appId }) ?? true {
            try await verifyFederated(text, assertion, of: application, now: now)
            return .federatedIdentityCredential
        }
        let checked = try ClientAssertionRules.check(
            assertion.claims, clientId: application.appId, audiences: ClientAssertionRules.audiences(base: endpoints.baseURL, tenant: tenant), now: now)
        guard let certificate = assertion.certificate(among: application.keyCredentials), certificate.isValid(at: now) else {
            throw .clientAssertionUnknownKey
        }
        guard let key = memory.key(of: certificate), assertion.isSigned(by: key) else { throw .clientAssertionSignature }
        let jtiKey = "client-assertion:\(application.appId):\(checked.jti)"
        let ownerKey = "\(jtiKey):\(assertion.digest)"
        let expires = checked.expires.addingTimeInterval(ClientAssertionRules.skew)
        do {
            if try await replays.claimProof(key: jtiKey, expiresAt: expires, now: now) {
                _ = try await replays.claimProof(key: ownerKey, expiresAt: expires, now: now)
            } else if try await !replays.isProofClaimed(key: ownerKey, now: now) {
                throw TokenError.clientAssertionReplayed
            }
        } catch let error as TokenError {
            throw error
        } catch {
            throw .temporarilyUnavailable
        }
        memory.remember(
            assertion.digest, as: AssertionMemory.Accepted(client: application.appId, credential: .certificate(certificate.thumbprintSHA256), expires: expires),
            now: now)
        return .certificate
    }

    /// A federated issuer's token (PROTOCOL §21): its `iss`, `sub` and `aud` those of one of the application's federated
    /// credentials and its times (Core), its signature by one of the keys the issuer publishes (OIDC discovery, fetched
    /// under the callback rule, cached). No `jti` or lifetime rules: it is the issuer's token, honoured until its `exp`.
    func verifyFederated(_ text: String, _ assertion: ClientAssertion, of application: Application, now: Date) async throws(TokenError) {
        let matched = try FederatedIdentityCredential.match(assertion.claims, among: application.federatedIdentityCredentials, now: now)
        let keys: JWTKeyCollection
        do {
            keys = try await federation.keys(
                from: IssuerKeys.Source(
                    issuer: matched.credential.issuer, jwksUri: nil, configurationUrl: matched.credential.discoveryURL, what: "the federated issuer"),
                kid: assertion.kid, now: now)
        } catch {
            throw error == .unavailable ? .federatedKeysUnavailable : .federatedSignature
        }
        do {
            _ = try await keys.verify(text, as: UncheckedClaims.self)
        } catch {
            throw .federatedSignature
        }
        memory.remember(
            assertion.digest, as: AssertionMemory.Accepted(client: application.appId, credential: .federated(matched.credential), expires: matched.expires),
            now: now)
    }
}

/// What a node remembers of client assertions: the ones it accepted, until they expire (MSAL sends one again and again
/// for ten minutes), and certificates' keys, parsed once. Both bounded.
final class AssertionMemory: Sendable {
    /// An accepted assertion: whose, by which credential, good until when.
    struct Accepted: Sendable {
        let client: AppID
        let credential: Held
        let expires: Date
    }

    /// The credential an assertion was accepted by: a certificate (its SHA-256 thumbprint), a federated credential.
    enum Held: Sendable {
        case certificate(String)
        case federated(FederatedIdentityCredential)

        var type: ClientCredentialType {
            switch self {
            case .certificate: .certificate
            case .federated: .federatedIdentityCredential
            }
        }

        /// Whether the application still holds it (a certificate also valid at `now`).
        func isHeld(by application: Application, at now: Date) -> Bool {
            switch self {
            case .certificate(let thumbprint):
                application.keyCredentials.contains { $0.thumbprintSHA256 == thumbprint && $0.isValid(at: now) }
            case .federated(let credential):
                application.federatedIdentityCredentials.contains(credential)
            }
        }
    }

    private struct State {
        var accepted: [String: Accepted] = [:]
        var keys: [String: Certificate.PublicKey] = [:]
    }

    private let state = Mutex(State())
    static let acceptedKept = 10_000
    static let keysKept = 1000

    func accepted(_ digest: String, now: Date) -> Accepted? {
        state.withLock { state in state.accepted[digest].flatMap { $0.expires > now ? $0 : nil } }
    }

    /// Remembers an accepted assertion; at the bound, the expired are forgotten first, and a new one is not kept while
    /// every kept one is live (it is then proven again, which is only slower).
    func remember(_ digest: String, as accepted: Accepted, now: Date) {
        state.withLock { state in
            if state.accepted.count >= Self.acceptedKept { state.accepted = state.accepted.filter { $0.value.expires > now } }
            if state.accepted.count < Self.acceptedKept { state.accepted[digest] = accepted }
        }
    }

    /// The certificate's public key, parsed once.
    func key(of credential: KeyCredential) -> Certificate.PublicKey? {
        if let known = state.withLock({ $0.keys[credential.thumbprintSHA256] }) { return known }
        guard let key = ClientAssertion.publicKey(of: credential) else { return nil }
        state.withLock { state in
            if state.keys.count >= Self.keysKept { state.keys.removeAll() }
            state.keys[credential.thumbprintSHA256] = key
        }
        return key
    }
}
