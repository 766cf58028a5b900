import Foundation

/// An app instance's public key as a JWK (RFC 7517): EC P-256, `x` and `y` base64url (32 bytes each).
/// Unknown members (`kid`, `use`, `alg`…) are ignored; whether the point is on the curve is the server's check.
public struct AppKeyJWK: Codable, Sendable, Equatable, Hashable {
    public var kty: String
    public var crv: String
    public var x: String
    public var y: String

    public init(kty: String = "EC", crv: String = "P-256", x: String, y: String) {
        self.kty = kty
        self.crv = crv
        self.x = x
        self.y = y
    }
}
