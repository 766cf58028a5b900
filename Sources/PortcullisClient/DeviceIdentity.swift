public import Foundation
import PortcullisAPI
public import PortcullisVocabulary

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The key a device proves itself with (PROTOCOL §18): EC P-256, ES256, and the registration the tenant's CA gave it.
/// On Apple platforms implement it over CryptoKit's `SecureEnclave.P256.Signing.PrivateKey` and the Keychain, so that the
/// key cannot leave the device; `FileInstanceKeyStore` (PortcullisClientKeys) keeps one in a 0600 file.
public protocol DeviceKey: Sendable {
    /// A PEM PKCS #10 request for the device key (ECDSA, SHA-256), the key created on first use.
    func deviceCertificateRequest() async throws -> String
    /// An ES256 signature of `message` with the device key: the 64-byte `r || s`.
    func signAsDevice(_ message: Data) async throws -> Data
    /// The device's registration, when it has one.
    func deviceRegistration() async throws -> DeviceRegistration?
    /// Keeps (or, `nil`, forgets) the device's registration.
    func storeDeviceRegistration(_ registration: DeviceRegistration?) async throws
}

/// What registering a device gave it: its IDs and its certificate.
public struct DeviceRegistration: Codable, Sendable, Equatable {
    /// The device's own ID (tokens carry it in `deviceid`).
    public var deviceId: String
    /// The directory object's ID.
    public var objectId: String
    /// The certificate from the tenant's issuing CA, DER.
    public var certificate: Data

    public init(deviceId: String, objectId: String, certificate: Data) {
        self.deviceId = deviceId
        self.objectId = objectId
        self.certificate = certificate
    }
}

/// What a device says of itself at a check-in (PROTOCOL §18).
public struct DeviceCheckInReport: Sendable, Equatable {
    public var operatingSystem: String
    public var operatingSystemVersion: String
    public var passcodeSet: Bool
    public var storageEncrypted: Bool
    public var jailbroken: Bool

    public init(operatingSystem: String, operatingSystemVersion: String, passcodeSet: Bool, storageEncrypted: Bool, jailbroken: Bool) {
        self.operatingSystem = operatingSystem
        self.operatingSystemVersion = operatingSystemVersion
        self.passcodeSet = passcodeSet
        self.storageEncrypted = storageEncrypted
        self.jailbroken = jailbroken
    }
}

/// What a check-in decided.
public struct DeviceCheckInResult: Decodable, Sendable, Equatable {
    public var isCompliant: Bool
    public var isManaged: Bool
    public var complianceFailures: [String]?
}

/// Entra's PKeyAuth as the SDK answers it: a challenge's parameters read, the answer signed with the device key.
enum PKeyAuthAnswer {
    /// The challenge's parameters, read as MSAL reads them.
    static func parameters(_ value: String) -> [String: String]? { PKeyAuthParameters.parse(value) }

    /// A JWS the device signs: its certificate in `x5c`, ES256.
    static func signed(_ claims: [String: Any], device: any DeviceKey, registration: DeviceRegistration) async throws -> String {
        let header = try JSONSerialization.data(
            withJSONObject: ["x5c": [registration.certificate.base64EncodedString()], "typ": "JWT", "alg": "ES256"], options: [.sortedKeys])
        let payload = try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys, .withoutEscapingSlashes])
        let input = Base64URL.encode(header) + "." + Base64URL.encode(payload)
        let signature = try await device.signAsDevice(Data(input.utf8))
        guard signature.count == 64 else { throw PortcullisClientError.transport("the device key's signature is not a 64-byte ES256 signature") }
        return input + "." + Base64URL.encode(signature)
    }

    /// The `Authorization` value answering `challenge`: signed when the device is registered, MSAL's bypass otherwise.
    static func answer(_ challenge: [String: String], endpoint: URL, device: any DeviceKey, now: Date = Date()) async throws -> String {
        let context = challenge["Context"] ?? ""
        let version = challenge["Version"] ?? "1.0"
        guard let registration = try await device.deviceRegistration(), let nonce = challenge["nonce"] else {
            return #"PKeyAuth Context="\#(context)",Version="\#(version)""#
        }
        let token = try await signed(
            ["iat": Int(now.timeIntervalSince1970), "aud": challenge["SubmitUrl"] ?? endpoint.absoluteString, "nonce": nonce], device: device,
            registration: registration)
        return #"PKeyAuth AuthToken="\#(token)", Context="\#(context)", Version="\#(version)""#
    }
}

extension PublicClientApplication {
    /// The device registration service's scope: a token for it is the user action `urn:user:registerdevice`.
    public static let deviceRegistrationScope = "api://portcullis-devices/Device.Register"

    /// Registers this device for `account` (PROTOCOL §18): a request for the configuration's device key, the account's
    /// token for the registration service (silently; the client lists the service in its API permissions), and the
    /// certificate the tenant's CA answers with, kept by the device key. Token requests then answer PKeyAuth challenges
    /// with it.
    public func registerDevice(
        account: Account, displayName: String, operatingSystem: String? = nil, operatingSystemVersion: String? = nil
    ) async throws -> DeviceRegistration {
        guard let device = configuration.device else {
            throw PortcullisClientError(kind: .transport, message: "The configuration has no device key (ClientConfiguration.device).")
        }
        let token = try await acquireTokenSilent(account: account, scopes: [Self.deviceRegistrationScope])
        var body: [String: Any] = ["csr": try await device.deviceCertificateRequest(), "displayName": displayName]
        if let operatingSystem { body["operatingSystem"] = operatingSystem }
        if let operatingSystemVersion { body["operatingSystemVersion"] = operatingSystemVersion }
        let reply = try await transport.send(
            configuration.authority.appendingPathComponent("devices/v1/register"), method: "POST", json: try JSONSerialization.data(withJSONObject: body),
            bearer: token.accessToken, correlationId: UUID().identifierText)
        guard reply.status == 201, let answer = try? JSONSerialization.jsonObject(with: reply.body) as? [String: Any],
            let created = answer["device"] as? [String: Any], let deviceId = created["deviceId"] as? String, let objectId = created["id"] as? String,
            let pem = answer["certificate"] as? String, let der = Self.der(pem)
        else {
            throw PortcullisClientError.transport(
                "device registration answered HTTP \(reply.status): \(String(decoding: reply.body.prefix(300), as: UTF8.self))")
        }
        let registration = DeviceRegistration(deviceId: deviceId, objectId: objectId, certificate: der)
        try await device.storeDeviceRegistration(registration)
        return registration
    }

    /// A signed check-in (PROTOCOL §18): the tenant's compliance policies decide whether the device is compliant.
    public func checkInDevice(_ report: DeviceCheckInReport) async throws -> DeviceCheckInResult {
        guard let device = configuration.device, let registration = try await device.deviceRegistration() else {
            throw PortcullisClientError(kind: .transport, message: "This device is not registered (registerDevice).")
        }
        let url = configuration.authority.appendingPathComponent("devices/v1").appendingPathComponent(registration.deviceId).appendingPathComponent("checkin")
        let claims: [String: Any] = [
            "aud": url.absoluteString, "iat": Int(Date().timeIntervalSince1970), "jti": UUID().identifierText, "deviceId": registration.deviceId,
            "operatingSystem": report.operatingSystem, "operatingSystemVersion": report.operatingSystemVersion, "passcodeSet": report.passcodeSet,
            "storageEncrypted": report.storageEncrypted, "jailbroken": report.jailbroken,
        ]
        let jws = try await PKeyAuthAnswer.signed(claims, device: device, registration: registration)
        let reply = try await transport.send(
            url, method: "POST", correlationId: UUID().identifierText, headers: ["Content-Type": "application/jwt"], body: Data(jws.utf8))
        guard reply.status == 200, let result = try? JSONDecoder().decode(DeviceCheckInResult.self, from: reply.body) else {
            throw PortcullisClientError.transport("the check-in answered HTTP \(reply.status): \(String(decoding: reply.body.prefix(300), as: UTF8.self))")
        }
        return result
    }

    /// The DER of a PEM certificate.
    static func der(_ pem: String) -> Data? {
        let base64 = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        return Data(base64Encoded: base64)
    }
}
