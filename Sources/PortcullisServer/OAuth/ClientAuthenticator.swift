import Foundation
import PortcullisAPI
import PortcullisCore
import PortcullisTokens

/// A client that presented acceptable credentials (or, for a public client, just its ID).
struct AuthenticatedClient: Sendable {
    let application: Application
    /// `client_secret_basic` / `client_secret_post` vs a public client's bare `client_id`.
    let usedSecret: Bool
}

/// Client authentication for the token, revocation and introspection endpoints (RFC 6749 §2.3):
/// `client_secret_basic`, `client_secret_post`, or `client_id` alone for public clients.
struct ClientAuthenticator: Sendable {
    let credentials: CredentialHasher
    let clock: any WallClock

    func authenticate(form: FormBody, authorization: String?, in directory: DirectorySnapshot) throws(TokenError) -> AuthenticatedClient {
        var basic: (id: String, secret: String)?
        if let authorization, authorization.lowercased().hasPrefix("basic ") {
            let encoded = authorization.dropFirst(6).trimmingCharacters(in: .whitespaces)
            guard let data = Data(base64Encoded: encoded), let decoded = String(data: data, encoding: .utf8),
                let colon = decoded.firstIndex(of: ":"),
                let id = FormBody.decode(ArraySlice(decoded[..<colon].utf8)),
                let secret = FormBody.decode(ArraySlice(decoded[decoded.index(after: colon)...].utf8))
            else {
                throw TokenError(.invalidClient, aadsts: 7000215, "The Authorization header is not valid HTTP Basic client authentication.")
            }
            basic = (id, secret)
        }
        if basic != nil && form["client_secret"] != nil { throw .multipleClientAuthentications }
        if let basic, let bodyId = form["client_id"], bodyId.lowercased() != basic.id.lowercased() { throw .mismatchedClientId }
        guard let clientId = basic?.id ?? form["client_id"] else { throw .missingParameter("client_id") }
        guard let application = directory.application(appId: AppID(clientId)), !BuiltInResources.all.contains(where: { $0.appId == application.appId }) else {
            throw .unknownApplication(clientId)
        }
        let secret = basic?.secret ?? form["client_secret"]
        if application.publicClient {
            if secret != nil { throw .publicClientWithSecret }
            return AuthenticatedClient(application: application, usedSecret: false)
        }
        guard let secret else { throw .missingClientCredential }
        // A secret past its endDateTime no longer authenticates (AADSTS7000222 in Entra; the same error here).
        guard credentials.verifySecret(secret, against: application.secretHashes(validAt: clock.now())) else { throw .invalidClientSecret }
        return AuthenticatedClient(application: application, usedSecret: true)
    }
}
