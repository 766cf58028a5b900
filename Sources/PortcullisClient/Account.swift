public import Foundation
import PortcullisAPI

/// A signed-in account, keyed as MSAL keys it: the home account ID `<oid>.<tid>`.
public struct Account: Codable, Sendable, Hashable {
    public var objectId: String
    public var tenantId: String
    public var username: String

    public init(objectId: String, tenantId: String, username: String) {
        self.objectId = objectId.lowercased()
        self.tenantId = tenantId.lowercased()
        self.username = username
    }

    public var homeAccountId: String { "\(objectId).\(tenantId)" }

    /// Whether `identity` (UPN or object ID) names this account, case-insensitively.
    public func matches(identity: String) -> Bool {
        identity.lowercased() == objectId || identity.lowercased() == username.lowercased() || identity.lowercased() == homeAccountId
    }
}

/// The outcome of a successful token request.
public struct AuthenticationResult: Sendable {
    public var accessToken: String
    public var expiresOn: Date
    public var scopes: [String]
    /// `nil` for app-only (client credentials) tokens.
    public var account: Account?
    public var idToken: String?
    /// The correlation ID the request carried.
    public var correlationId: String
    /// `Bearer`, or `DPoP` when the token is bound to the app's proof key (PROTOCOL §15): then a resource takes it only
    /// with a proof (`DPoPProofMaker.resourceHeaders`).
    public var tokenType = TokenResponse.bearer

    /// The access token's claims, decoded without verification (for display; resource servers verify).
    public var claims: [String: Any] { JWTClaims.decode(accessToken) }
}

/// Reads a JWT's claims without verifying it.
public enum JWTClaims {
    public static func decode(_ token: String) -> [String: Any] {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let data = base64URLDecode(String(parts[1])),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return [:] }
        return object
    }

    static func base64URLDecode(_ text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64.append("=") }
        return Data(base64Encoded: base64)
    }
}
