import Foundation
import PortcullisAPI
import PortcullisCore
import PortcullisStorage
import PortcullisTokens

/// PKeyAuth at the token endpoint and on the sign-in page (PROTOCOL §18): the challenge, when conditional access needs to
/// know the device and the client said it can prove one, and the answer checked — a certificate from the tenant's
/// issuing CA, still the one its device record holds (a device disabled, deleted or registered again is refused at
/// once), signing a JWT whose `aud` is the submit URL, whose `iat` is now and whose nonce this installation made for
/// this tenant and this challenge's Context, and nobody used before.
struct DeviceAuthentication: Sendable {
    let authority: IssuingAuthority
    let nonces: PKeyAuth.Nonces
    let replays: any ProofReplayStore

    /// What a token request's headers say: whether the client can answer a challenge, and its answer if it gave one.
    struct Presented: Sendable {
        var supported: Bool
        /// The `Authorization: PKeyAuth …` parameters; `AuthToken` absent when the client has no device certificate.
        var answer: [String: String]?

        init(supportHeader: String?, authorization: String?) {
            answer = authorization.flatMap(PKeyAuth.parameters)
            supported = supportHeader == PKeyAuth.version || answer != nil
        }
    }

    /// A challenge: what the answer must send back (`context` — at the token endpoint a fresh identifier, on the page the
    /// sealed authorization request), a nonce made for it, the CA a device certificate must come from, where to answer.
    struct Challenge {
        var context: String
        var nonce: String
        var certAuthorities: String
        var submitURL: String

        /// The token endpoint's form: one `WWW-Authenticate` value.
        var header: String { PKeyAuth.challenge(context: context, nonce: nonce, certAuthorities: certAuthorities, submitURL: submitURL) }

        /// The page's form: the redirect MSAL's web views intercept (`urn:http-auth:PKeyAuth?…`), the parameters as a query.
        var redirect: String {
            let fields = [
                ("CertAuthorities", certAuthorities), ("Version", PKeyAuth.version), ("Context", context), ("nonce", nonce), ("SubmitUrl", submitURL),
            ]
            return PKeyAuth.redirectPrefix + FormEncoding.encode(fields)
        }
    }

    func challenge(tenant: Tenant, submitURL: String, context: String = UUID.randomIdentifierText, now: Date) throws -> Challenge {
        Challenge(
            context: context, nonce: nonces.make(tenantId: tenant.id, context: context, now: now),
            certAuthorities: try authority.subjectName(tenant: tenant, now: now), submitURL: submitURL)
    }

    /// The device an answer proves (nil: the client has no device certificate, an unregistered device), or the refusal
    /// (50097) naming the check that failed.
    func verify(_ answer: [String: String], snapshot: TenantSnapshot, submitURL: String, now: Date) async throws -> Device? {
        guard let text = answer["AuthToken"] else { return nil }  // "no device certificate": an unregistered device
        let token: PKeyAuth.AuthToken
        switch PKeyAuth.AuthToken.read(text) {
        case .success(let read): token = read
        case .failure(let failure): throw TokenError.deviceAuthenticationFailed(failure.reason)
        }
        guard let expiry = nonces.expiry(of: token.nonce, tenantId: snapshot.tenant.id, context: answer["Context"] ?? "", now: now) else {
            throw TokenError.deviceAuthenticationFailed(
                "the nonce is not one this server gave in this challenge (its Context) for this tenant, or it expired")
        }
        guard token.audience == submitURL else { throw TokenError.deviceAuthenticationFailed("the AuthToken's aud is not the challenge's SubmitUrl") }
        guard abs(token.issuedAt.timeIntervalSince(now)) <= PKeyAuth.clockSkew else {
            throw TokenError.deviceAuthenticationFailed("the AuthToken's iat is not now")
        }
        let device: Device
        switch try prove(token.token, snapshot: snapshot, now: now) {
        case .success(let proven): device = proven
        case .failure(let refusal): throw TokenError.deviceAuthenticationFailed(refusal.reason)
        }
        guard try await replays.claimProof(key: "pkeyauth:" + token.nonce, expiresAt: expiry, now: now) else {
            throw TokenError.deviceAuthenticationFailed("the nonce was used already")
        }
        return device
    }

    /// The device a page's answer proved, if it did.
    static func proven(_ proof: AuthorizationRequest.DeviceProof?) -> ProvenDevice? {
        if case .proven(let device)? = proof { device } else { nil }
    }

    /// The facts of the device a sign-in proved earlier (on the page, carried in its code; in a refresh family), as the
    /// directory has it now: still enabled, still holding the certificate that proved it — otherwise 50097.
    func current(_ proven: ProvenDevice?, snapshot: TenantSnapshot, now: Date) throws -> DeviceFacts? {
        guard let proven else { return nil }
        guard let device = snapshot.device(id: proven.objectId), device.certificate?.thumbprint == proven.thumbprint else {
            throw TokenError.deviceAuthenticationFailed("the device proven at sign-in no longer holds its certificate (deleted, or registered again)")
        }
        guard device.accountEnabled else { throw TokenError.deviceAuthenticationFailed("the device proven at sign-in is disabled") }
        return device.facts(at: now)
    }

    /// The device a token signed by a device proves: its certificate from this tenant's CA and valid now, the token signed
    /// by that certificate's key, and the certificate still the one the device's record holds, the device enabled.
    func prove(_ token: PKeyAuth.DeviceSignedToken, snapshot: TenantSnapshot, now: Date) throws -> Result<Device, PKeyAuth.Failure> {
        guard let proven = try authority.verifyDevice(certificate: token.certificate, tenant: snapshot.tenant, now: now) else {
            return .failure(PKeyAuth.Failure(reason: "the device certificate was not issued by this tenant's CA, or it is not valid now"))
        }
        guard token.isSigned(by: proven.publicKey) else {
            return .failure(PKeyAuth.Failure(reason: "the token is not signed by the device certificate's key"))
        }
        guard let device = snapshot.device(id: proven.objectId), device.deviceId == proven.deviceId,
            device.certificate?.thumbprint == proven.thumbprint
        else { return .failure(PKeyAuth.Failure(reason: "the device no longer holds this certificate (deleted, or registered again)")) }
        guard device.accountEnabled else { return .failure(PKeyAuth.Failure(reason: "the device is disabled")) }
        return .success(device)
    }
}
