public import Foundation
public import PortcullisAPI
public import PortcullisVocabulary

/// What went wrong with a token or compliance request. Recognises the app-protection refusal the way MSAL
/// does: `error == "unauthorized_client"` and `suberror == "protection_policy_required"`, case-insensitively.
public struct PortcullisClientError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The token was refused until app protection is remediated for `protection.account`.
        case protectionPolicyRequired
        /// Remediation ran but did not end compliant; `complianceStatus` says why (with the user-facing title and message).
        case complianceRequired
        /// Any other OAuth error from the server.
        case server
        /// No cached account or refresh token to use silently.
        case interactionRequired
        /// The user closed the sign-in (or it timed out) before it came back to the app.
        case cancelled
        /// The network or the server's answer was not usable.
        case transport
        /// The server could not answer now (503 `temporarily_unavailable`, e.g. its store is away) and changed
        /// nothing: try the same request again after `retryAfter`.
        case temporarilyUnavailable
        /// The secret is not provisioned to this account in this app (no policy declares it, or no material yet), or the account is unmanaged.
        case notProvisioned
        /// Secrets and data protection need an instance key: the manager has no key store, or the enrollment registered no key.
        case instanceKeyRequired
        /// Protected data cannot be opened: its account's key is gone (a selective wipe destroys it) or the data was altered.
        case protectedDataUnavailable
        /// The data belongs to another identity, and switching to it was refused (by the app or the launch conditions).
        case identitySwitchRefused
    }

    /// Who must remediate and where (from `adi`, `client_info` and Portcullis's `remediation` member).
    public struct ProtectionRequirement: Sendable, Equatable {
        public var account: Account
        public var remediationEndpoint: URL?
        public var policyIds: [String]
    }

    public var kind: Kind
    public var message: String
    /// The OAuth error body, when the server sent one.
    public var oauth: OAuthErrorBody?
    public var protection: ProtectionRequirement?
    public var complianceStatus: ComplianceStatus?
    public var correlationId: String?
    /// For `temporarilyUnavailable`: when to try again (the server's `Retry-After`).
    public var retryAfter: TimeInterval?
    /// The compliance API's error code (`appKeyRequired`, `deviceIdentity`…), when it sent one.
    public var code: String?

    public var description: String {
        var text = "\(kind): \(message)"
        if let oauth { text += " [\(oauth.error)\(oauth.suberror.map { "/\($0)" } ?? "") \(oauth.errorCodes.map(String.init).joined(separator: ","))]" }
        return text
    }

    /// The AADSTS code, when there is one.
    public var errorCode: Int? { oauth?.errorCodes.first }

    static func transport(_ message: String) -> PortcullisClientError { PortcullisClientError(kind: .transport, message: message) }

    /// Classifies an OAuth error body. `requestAccount` is the account the request was for, used when the
    /// body does not name one.
    /// The answers MSAL turns into "UI required": the app must go interactive (a second factor the silent
    /// grant cannot give — 50076 with `basic_action` — or no session for `prompt=none`).
    static func needsInteraction(_ body: OAuthErrorBody) -> Bool {
        switch body.error.lowercased() {
        case "interaction_required", "login_required", "consent_required": return true
        case "invalid_grant": return ["basic_action", "additional_action", "message_only"].contains(body.suberror?.lowercased() ?? "")
        default: return false
        }
    }

    static func from(_ body: OAuthErrorBody, requestAccount: Account?, retryAfter: TimeInterval? = nil) -> PortcullisClientError {
        if body.error == "temporarily_unavailable" {
            return PortcullisClientError(
                kind: .temporarilyUnavailable, message: body.errorDescription, oauth: body,
                correlationId: body.correlationId, retryAfter: retryAfter ?? 1)
        }
        let isProtection = body.error.lowercased() == "unauthorized_client" && body.suberror?.lowercased() == "protection_policy_required"
        var error = PortcullisClientError(
            kind: isProtection ? .protectionPolicyRequired : (Self.needsInteraction(body) ? .interactionRequired : .server),
            message: body.errorDescription, oauth: body, correlationId: body.correlationId)
        if isProtection {
            var account = requestAccount
            if let info = body.clientInfo.flatMap(ClientInfo.init(encoded:)) {
                account = Account(objectId: info.uid, tenantId: info.utid, username: body.adi ?? requestAccount?.username ?? "")
            } else if let remediation = body.remediation {
                account = Account(objectId: remediation.accountId, tenantId: remediation.tenantId, username: remediation.upn)
            }
            if let account {
                error.protection = ProtectionRequirement(
                    account: account, remediationEndpoint: body.remediation.flatMap { URL(string: $0.endpoint) },
                    policyIds: body.remediation?.policyIds ?? [])
            }
        }
        return error
    }
}
