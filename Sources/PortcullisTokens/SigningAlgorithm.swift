/// The algorithms Portcullis signs with.
public enum SigningAlgorithm: String, Sendable, Codable, CaseIterable {
    case es256 = "ES256"
    case rs256 = "RS256"
}

/// The JOSE `typ` header of access tokens.
public enum AccessTokenType: String, Sendable, Codable {
    /// What the Microsoft identity platform emits and libjwt 1.10 accepts.
    case jwt = "JWT"
    /// RFC 9068 §2.1, for resource servers that check it.
    case atJWT = "at+jwt"
}
