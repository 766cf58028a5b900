/// The grant types the token endpoint understands.
public enum GrantType: String, Sendable, CaseIterable, Codable {
    case clientCredentials = "client_credentials"
    case password
    case refreshToken = "refresh_token"
    case authorizationCode = "authorization_code"
    case deviceCode = "urn:ietf:params:oauth:grant-type:device_code"
}
