/// The grant types the token endpoint understands.
public enum GrantType: String, Sendable, CaseIterable, Codable {
    case clientCredentials = "client_credentials"
    case password
    case refreshToken = "refresh_token"
    case authorizationCode = "authorization_code"
    case deviceCode = "urn:ietf:params:oauth:grant-type:device_code"
    /// On-behalf-of (PROTOCOL §21): a JWT bearer grant with `requested_token_use=on_behalf_of`.
    case onBehalfOf = "urn:ietf:params:oauth:grant-type:jwt-bearer"
}
