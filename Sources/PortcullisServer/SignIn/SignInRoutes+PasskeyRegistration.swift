import Foundation
import HTTPTypes
import Hummingbird
import Logging
import PortcullisAPI
import PortcullisCore
import PortcullisStorage
import PortcullisTokens
import PortcullisWebAuthnFormat

/// Registering a passkey (PROTOCOL §12.1): the ceremony's result verified and stored, from Security info or from the
/// sign-in itself — when a strength asks for a passkey the user has not got and the way they signed in lets them add one
/// (a temporary access pass; `InteractiveDecision.Step.registerPasskey`), as Entra registers the required method right
/// there and then goes on to the app.
extension SignInRoutes {
    /// Verifies a posted registration ceremony (WebAuthn §7.1) against its challenge — consumed, bound to `binding` (the
    /// browser's session) and to `user` — and stores the passkey with its events and audit record (PROTOCOL §14.1).
    func storeRegisteredPasskey(_ form: FormBody, binding: String, user: User, tenant: TenantSnapshot, now: Date) async throws -> PasskeyRecord {
        guard let relyingParty else { throw Self.passkeyRefused("this server's base URL has no host") }
        let challenge = try await consumePasskeyChallenge(form["challenge"], purpose: .register, binding: binding)
        guard challenge.userId == user.id.rawValue else { throw Self.challengeInvalid }
        guard let clientData = form["clientDataJSON"].flatMap(Base64URL.decode), let attestation = form["attestationObject"].flatMap(Base64URL.decode)
        else { throw Self.passkeyRefused("the browser's answer is incomplete") }
        let credential: RegisteredCredential
        do {
            credential = try WebAuthnVerifier(relyingParty: relyingParty).verifyRegistration(
                clientDataJSON: Array(clientData), attestationObject: Array(attestation), challenge: Array(challenge.challenge))
        } catch {
            throw Self.passkeyRefused(error.description)
        }
        // The model is known only when the chain verifies to a root this tenant trusts (PROTOCOL §12.1).
        let trusted = await AttestationTrust(metadata: configuration.passkeyMetadata, tenantRoots: tenant.contents.attestationRoots)
            .attestation(of: credential, at: now)
        let transports = (form["transports"] ?? "").split(separator: ",").map(String.init)
            .filter { ["usb", "nfc", "ble", "internal", "hybrid", "smart-card"].contains($0) }
        let name = (form["displayName"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        let passkey = PasskeyRecord(
            id: RecordID.generate(), tenantId: TenantID(tenant.tenant.id), userId: ObjectID(user.id), credentialId: Data(credential.credentialId),
            publicKey: Data(credential.publicKey), algorithm: credential.algorithm.rawValue, signCount: Int64(credential.signCount),
            aaguid: credential.aaguid, backupEligible: credential.backupEligible, backedUp: credential.backedUp, attestation: trusted,
            transports: transports, displayName: name.isEmpty ? "Passkey" : String(name.prefix(64)), createdAt: now)
        // Its events and audit record commit with it (PROTOCOL §14.1).
        let committed = try await transmitter.methodChangeEffects(
            .fido2, added: true, tenant: tenant, user: user, initiator: .user, at: now,
            audit: AuditRecord(
                tenantId: tenant.tenant.id, at: now, actor: "user:\(user.id)", action: .create, kind: .passkey, documentId: "\(user.id)/\(passkey.id)",
                before: nil, after: JSONValue(encoding: PasskeyMethod(passkey))))
        guard try await store.insertPasskey(passkey, limit: Self.passkeysPerUser, effects: committed) else {
            throw TokenError(.invalidRequest, aadsts: 50012, "This passkey is already registered, or you have the most passkeys allowed.")
        }
        transmitter.didCommit(committed)
        logger.notice("passkey registered", metadata: [LogKeys.userId: .string(user.id.rawValue)])
        return passkey
    }

    /// The `registerPasskey` step's page: why a passkey is needed, and the ceremony, bound to this browser's session and
    /// user; the pending authorization travels in its ticket.
    func passkeyRegistrationPage(
        _ authorization: AuthorizationRequest, user: User, sessionHash: String, strengths: [String], tenant: TenantSnapshot, error: TokenError?,
        request: Request, _ context: PortcullisRequestContext, status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        guard let relyingParty else { return errorPage(Self.passkeyRefused("this server's base URL has no host"), tenant: tenant, context) }
        var headers: HTTPFields = [:]
        let csrf = csrf(request, purpose: "signin", headers: &headers)
        let issued = issuePasskeyChallenge(.register, binding: sessionHash, userId: user.id.rawValue)
        let held = try await store.passkeys(tenantId: TenantID(tenant.tenant.id), userId: ObjectID(user.id))
        let what = strengths.isEmpty ? "Your organization" : strengths.joined(separator: ", ")
        var values: [String: Any] = [
            "upn": user.userPrincipalName, "appName": tenant.directory.application(appId: AppID(authorization.clientId))?.displayName ?? authorization.clientId,
            "requirement": "\(what) requires a passkey to sign in to this app, and you have none yet.",
            "action": "\(basePath)/\(tenant.tenant.id)/oauth2/v2.0/authorize/passkey/register", "ticket": sealTicket(authorization), "csrf": csrf,
            "challenge": issued.challenge, "sealedChallenge": issued.sealed, "rpId": relyingParty.id, "rpName": tenant.tenant.displayName,
            "userId": Base64URL.encode(Array(user.id.rawValue.utf8)), "userName": user.userPrincipalName, "userDisplayName": user.displayName,
            "exclude": held.map { Base64URL.encode(Array($0.credentialId)) }.joined(separator: ","),
        ]
        if let error { values["error"] = ["message": error.message, "code": String(error.aadsts)] }
        return pages.render(
            "passkeyRegistration", frame: frame("Create a passkey", tenant: tenant, context), values: values, status: status, headers: headers)
    }

    /// `POST /{tenant}/oauth2/v2.0/authorize/passkey/register`: the passkey created in the sign-in. Its session must be
    /// this browser's, the sign-in's decision must still be to register one (the way the user signed in lets them), and
    /// the ceremony must verify; then the session's authentication is the passkey's (the ceremony is a user-verified
    /// signature by the new credential over this sign-in's challenge) and the sign-in goes on to the app.
    func passkeyRegistered(_ request: Request, _ context: PortcullisRequestContext) async throws -> Response {
        try await signInPost(request, context) { tenant, form, authorization in
            guard let session = try await currentSession(request, tenant: tenant),
                let client = tenant.directory.application(appId: AppID(authorization.clientId))
            else {
                return errorPage(
                    TokenError(
                        .invalidRequest, aadsts: 50132, "This sign-in was started in another browser or has ended. Start the sign-in again from the app."),
                    tenant: tenant, context)
            }
            let user = session.user
            let resource = (try? ScopeRequest.parse(authorization.scope, in: tenant.directory))?.resource ?? client
            let facts = try await interactiveFacts(
                .authorize, user: user, client: client, resource: resource, claims: authorization.claims, platform: authorization.platform,
                authentication: AuthenticationContext(methods: session.record.methods, time: session.record.authTime), tenant: tenant, request: request,
                context, device: (try? pageDevice(authorization, client: client, tenant: tenant)) ?? PageDevice())
            guard case .registerPasskey(let strengths) = InteractiveDecision.decide(facts, policies: tenant.conditionalAccess).step else {
                return errorPage(Self.registrationRefused("A passkey cannot be added in this sign-in now."), tenant: tenant, context, status: .forbidden)
            }
            let now = clock.now()
            let passkey: PasskeyRecord
            do {
                passkey = try await storeRegisteredPasskey(form, binding: session.record.idHash, user: user, tenant: tenant, now: now)
            } catch let error as TokenError {
                return try await passkeyRegistrationPage(
                    authorization, user: user, sessionHash: session.record.idHash, strengths: strengths, tenant: tenant, error: error, request: request,
                    context, status: .badRequest)
            }
            let authentication = AuthenticationContext.passkey(model: passkey.attestedModel, at: now)
            try await store.upgradeSession(idHash: session.record.idHash, methods: authentication.methods, authTime: now, at: now)
            return try await complete(
                authorization, user: user, methods: authentication.methods, authTime: now, sessionHash: session.record.idHash, tenant: tenant,
                request: request, context)
        }
    }
}
