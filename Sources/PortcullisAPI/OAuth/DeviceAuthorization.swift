import Foundation

/// The device authorization endpoint's answer (RFC 8628 §3.2), written by the server and read by the SDK.
public struct DeviceAuthorizationResponse: Codable, Sendable {
    public var deviceCode: String
    public var userCode: String
    public var verificationUri: String
    public var expiresIn: Int
    public var interval: Int
    public var message: String

    public init(deviceCode: String, userCode: String, verificationUri: String, expiresIn: Int, interval: Int, message: String) {
        self.deviceCode = deviceCode
        self.userCode = userCode
        self.verificationUri = verificationUri
        self.expiresIn = expiresIn
        self.interval = interval
        self.message = message
    }

    enum CodingKeys: String, CodingKey {
        case deviceCode = "device_code"
        case userCode = "user_code"
        case verificationUri = "verification_uri"
        case expiresIn = "expires_in"
        case interval, message
    }
}
