import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOFoundationEssentialsCompat
import PortcullisAPI
import PortcullisCore
import PortcullisServer
import PortcullisTesting
import PortcullisTokens
import SwiftASN1
import Testing
import X509
import _CryptoExtras

/// Devices through the real server (PROTOCOL §18): registration with a key the device holds and a certificate from the
/// tenant's CA, admins' devices, and the proof at sign-in (PKeyAuth) that conditional access decides on.
@Suite("devices: registration, PKeyAuth at the token endpoint, device controls")
struct DeviceTests {
    /// A device's key, as MSAL for .NET (RSA, RS256) or the SDK and CLI (P-256, ES256) hold it.
    enum Key {
        case rsa(_RSA.Signing.PrivateKey)
        case p256(P256.Signing.PrivateKey)

        static func rsa() throws -> Key { .rsa(try _RSA.Signing.PrivateKey(keySize: .bits2048)) }
        static func p256() -> Key { .p256(P256.Signing.PrivateKey()) }

        var algorithm: String { if case .rsa = self { "RS256" } else { "ES256" } }

        func csr() throws -> String {
            let (key, algorithm): (Certificate.PrivateKey, Certificate.SignatureAlgorithm) =
                switch self {
                case .rsa(let rsa): (Certificate.PrivateKey(rsa), .sha256WithRSAEncryption)
                case .p256(let p256): (Certificate.PrivateKey(p256), .ecdsaWithSHA256)
                }
            let request = try CertificateSigningRequest(
                version: .v1, subject: try DistinguishedName { CommonName("device") }, privateKey: key, attributes: .init(), signatureAlgorithm: algorithm)
            return try request.serializeAsPEM().pemString
        }

        func sign(_ input: [UInt8]) throws -> [UInt8] {
            switch self {
            case .rsa(let rsa): Array(try rsa.signature(for: input, padding: .insecurePKCS1v1_5).rawRepresentation)
            case .p256(let p256): Array(try p256.signature(for: input).rawRepresentation)
            }
        }
    }

    /// A PKeyAuth answer as MSAL for .NET writes it: the JWT (header `x5c`, `typ`, `alg`; payload `iat`, `aud`, `nonce`),
    /// then `Context` and `Version` echoed.
    static func answer(
        certificate pem: String, key: Key, challenge: [String: String], audience: String? = nil, nonce: String? = nil, iat: Date = Date()
    ) throws -> String {
        let der = try PEMDocument(pemString: pem).derBytes
        let header = try JSONSerialization.data(withJSONObject: ["x5c": [Data(der).base64EncodedString()], "typ": "JWT", "alg": key.algorithm])
        let payload = try JSONSerialization.data(withJSONObject: [
            "iat": Int(iat.timeIntervalSince1970), "aud": audience ?? challenge["SubmitUrl"] ?? "", "nonce": nonce ?? challenge["nonce"] ?? "",
        ])
        let input = Base64URL.encode(header) + "." + Base64URL.encode(payload)
        let token = input + "." + Base64URL.encode(try key.sign(Array(input.utf8)))
        return #"PKeyAuth AuthToken="\#(token)", Context="\#(challenge["Context"] ?? "")", Version="1.0""#
    }

    static let devicesScope = "\(BuiltInResources.devicesIdentifier)/\(BuiltInResources.deviceRegisterScope)"
    static let registerPath = "/\(Fixtures.domain)/devices/v1/register"

    /// The mobile app lists the device registration service in its API permissions, as a client that registers must.
    static func allowRegistration(_ client: some TestClientProtocol, admin: String) async throws {
        let current = try await client.admin(.get, "/applications/\(Fixtures.mobileClientId)", token: admin)
        var document = current.json
        document["requiredResourceAccess"] =
            (document["requiredResourceAccess"] as? [[String: Any]] ?? []) + [
                ["resourceAppId": BuiltInResources.devicesIdentifier, "scopes": [BuiltInResources.deviceRegisterScope]]
            ]
        let saved = try await client.admin(
            .put, "/applications/\(Fixtures.mobileClientId)", token: admin, json: document,
            headers: [HTTPField.Name("If-Match")!: current.headers[.eTag] ?? "*"])
        #expect(saved.status == .ok, "\(saved.text)")
    }

    static func register(
        _ client: some TestClientProtocol, token: String, key: Key, name: String = "Alice's laptop"
    ) async throws -> JSONReply {
        try await register(client, token: token, body: ["csr": try key.csr(), "displayName": name, "operatingSystem": "Windows"])
    }

    static func register(_ client: some TestClientProtocol, token: String, body: [String: Any]) async throws -> JSONReply {
        try await client.execute(
            uri: registerPath, method: .post, headers: [.authorization: "Bearer \(token)", .contentType: "application/json"],
            body: ByteBuffer(data: try JSONSerialization.data(withJSONObject: body))
        ) { JSONReply($0) }
    }

    /// Alice's device, registered with `key` (the mobile app allowed to register first): the device as Graph shows it, its
    /// object ID and its certificate.
    static func registeredDevice(
        _ client: some TestClientProtocol, admin: String, key: Key
    ) async throws -> (device: [String: Any], id: String, pem: String) {
        try await allowRegistration(client, admin: admin)
        let registered = try await register(client, token: try await userToken(client), key: key)
        let device = try #require(registered["device"] as? [String: Any], "\(registered.text)")
        return (device, try #require(device["id"] as? String), try #require(registered.string("certificate")))
    }

    static func userToken(_ client: some TestClientProtocol, scope: String = devicesScope) async throws -> String {
        let reply = try await client.token(Grants.password(scope: scope, claims: nil))
        return try #require(reply.string("access_token"), "\(reply.text)")
    }

    @Test("a user registers a device (P-256 and RSA keys): the device as Graph shows it and a certificate from the tenant's CA; bad requests refused")
    func registration() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                // Without the API permission the client cannot even ask.
                let unlisted = try await client.token(Grants.password(scope: Self.devicesScope, claims: nil))
                #expect(unlisted.status == .badRequest, "\(unlisted.text)")
                try await Self.allowRegistration(client, admin: admin)
                let token = try await Self.userToken(client)
                let ca = try await client.get("/\(Fixtures.tenantId)/pki/ca.pem")
                let caCertificate = try Certificate(pemEncoded: ca.text)
                for key in [Key.p256(), try Key.rsa()] {
                    let reply = try await Self.register(client, token: token, key: key)
                    #expect(reply.status == .created, "\(reply.text)")
                    let device = try #require(reply["device"] as? [String: Any])
                    let deviceId = try #require(device["deviceId"] as? String)
                    #expect(device["trustType"] as? String == "Workplace" && device["isCompliant"] as? Bool == false)
                    #expect(device["certificate"] == nil && device.keys.contains("approximateLastSignInDateTime"), "Graph's shape, complete")
                    let certificate = try Certificate(pemEncoded: try #require(reply.string("certificate")))
                    #expect(certificate.issuer == caCertificate.subject)
                    #expect(caCertificate.publicKey.isValidSignature(certificate.signature, for: certificate))
                    #expect(certificate.subject.description.contains("CN=\(deviceId)"))
                    let stored = try await client.admin(.get, "/devices/\(try #require(device["id"] as? String))", token: admin)
                    #expect(stored.status == .ok && (stored["registeredOwners"] as? [String]) == [Fixtures.alice.id], "\(stored.text)")
                }
                // Refusals: each a clear error, nothing stored.
                let before = try await client.admin(.get, "/devices", token: admin)
                let weak = try Certificate.PrivateKey(_RSA.Signing.PrivateKey(unsafeKeySize: .init(bitCount: 1024)))
                let weakCSR = try CertificateSigningRequest(
                    version: .v1, subject: try DistinguishedName { CommonName("d") }, privateKey: weak, attributes: .init(),
                    signatureAlgorithm: .sha256WithRSAEncryption
                ).serializeAsPEM().pemString
                for (body, pointer) in [
                    (["csr": "not a request", "displayName": "x"], "/csr"),
                    (["csr": weakCSR, "displayName": "x"], "/csr"),
                    (["csr": try Key.p256().csr()], "/displayName"),
                    (["csr": try Key.p256().csr(), "displayName": "x", "trustType": "AzureAd"], "/trustType"),
                ] as [([String: Any], String)] {
                    let refused = try await Self.register(client, token: token, body: body)
                    #expect(refused.status == .badRequest && refused.text.contains("\"\(pointer)\""), "\(pointer): \(refused.text)")
                }
                let appOnly = try await client.form(
                    TestEnvironment.tokenPath,
                    [
                        ("grant_type", "client_credentials"), ("client_id", Fixtures.daemonClientId), ("client_secret", Fixtures.daemonSecret),
                        ("scope", "\(BuiltInResources.devicesIdentifier)/.default"),
                    ])
                #expect(appOnly.string("access_token") == nil, "an app has no permission on the registration service")
                let mail = try await Self.userToken(client, scope: "\(Fixtures.mailResource)/Mail.Read")
                #expect(try await Self.register(client, token: mail, key: .p256()).status == .unauthorized, "a token for another resource")
                let after = try await client.admin(.get, "/devices", token: admin)
                #expect((after["value"] as? [Any])?.count == (before["value"] as? [Any])?.count)
            }
        }
    }

    /// Alice's mail needs a compliant device (an enabled policy, forced past the lock-out warning).
    static func requireCompliantDevice(_ client: some TestClientProtocol, admin: String) async throws {
        let policy = Policies.document(id: "a1000000-0000-4000-8000-0000000000d1", name: "Compliant device for mail", controls: ["compliantDevice"])
        let saved = try await client.admin(.post, "/conditional-access/policies?force=true", token: admin, json: policy)
        #expect(saved.status == .created, "\(saved.text)")
    }

    static let mailGrant = Grants.password(scope: "\(Fixtures.mailResource)/Mail.Read openid offline_access", claims: nil)

    static func challenge(_ client: some TestClientProtocol) async throws -> [String: String] {
        let reply = try await client.token(mailGrant, headers: [HTTPField.Name("x-ms-PKeyAuth")!: "1.0"])
        #expect(reply.status == .unauthorized && reply.errorCode == 50097, "\(reply.text)")
        let value = try #require(reply.headers[.wwwAuthenticate])
        #expect(reply.headers[values: .wwwAuthenticate].count == 1, "MSAL reads exactly one WWW-Authenticate value")
        return try #require(PKeyAuth.parameters(value), "\(value)")
    }

    @Test("PKeyAuth: a challenge when the device matters, a compliant device's answer gets tokens with deviceid; forged answers refused (50097)")
    func pkeyAuth() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                try await Self.allowRegistration(client, admin: admin)
                let token = try await Self.userToken(client)
                let key = try Key.rsa()
                let registered = try await Self.register(client, token: token, key: key)
                let device = try #require(registered["device"] as? [String: Any])
                let id = try #require(device["id"] as? String)
                let deviceId = try #require(device["deviceId"] as? String)
                let pem = try #require(registered.string("certificate"))
                try await Self.requireCompliantDevice(client, admin: admin)

                // A client that does not speak PKeyAuth is refused as from an unregistered device.
                let plain = try await client.token(Self.mailGrant)
                #expect(plain.status == .badRequest && plain.errorCode == 53000 && plain.string("error") == "interaction_required", "\(plain.text)")
                // One that does is challenged, and its answer from a device that is not compliant is refused the same way.
                var challenge = try await Self.challenge(client)
                #expect(challenge["Version"] == "1.0" && challenge["Context"] != nil && challenge["nonce"] != nil)
                #expect(challenge["SubmitUrl"] == "http://portcullis.test\(TestEnvironment.tokenPath)")
                #expect(challenge["CertAuthorities"]?.contains("Portcullis issuing CA") == true)
                let notCompliant = try await client.token(
                    Self.mailGrant, headers: [.authorization: try Self.answer(certificate: pem, key: key, challenge: challenge)])
                #expect(notCompliant.errorCode == 53000, "\(notCompliant.text)")
                // The bypass (no device certificate): unregistered.
                challenge = try await Self.challenge(client)
                let bypass = try await client.token(Self.mailGrant, headers: [.authorization: #"PKeyAuth Context="\#(challenge["Context"]!)",Version="1.0""#])
                #expect(bypass.errorCode == 53000, "\(bypass.text)")

                // The admin marks it compliant: the answer now gets tokens naming the device.
                var stored = try await client.admin(.get, "/devices/\(id)", token: admin)
                var document = stored.json
                document["isCompliant"] = true
                let marked = try await client.admin(
                    .put, "/devices/\(id)", token: admin, json: document, headers: [HTTPField.Name("If-Match")!: stored.headers[.eTag] ?? "*"])
                #expect(marked.status == .ok, "\(marked.text)")
                challenge = try await Self.challenge(client)
                let answer = try Self.answer(certificate: pem, key: key, challenge: challenge)
                let granted = try await client.token(Self.mailGrant, headers: [.authorization: answer])
                #expect(granted.status == .ok, "\(granted.text)")
                #expect(jwtClaims(granted.string("access_token") ?? "")["deviceid"] as? String == deviceId)
                #expect(jwtClaims(granted.string("id_token") ?? "")["deviceid"] as? String == deviceId)
                // The nonce is single use.
                let replayed = try await client.token(Self.mailGrant, headers: [.authorization: answer])
                #expect(replayed.errorCode == 50097 && replayed.text.contains("used already"), "\(replayed.text)")

                // Forged answers, each refused with the check that failed.
                challenge = try await Self.challenge(client)
                let otherKey = Key.p256()
                var refused = try await client.token(
                    Self.mailGrant, headers: [.authorization: try Self.answer(certificate: pem, key: otherKey, challenge: challenge)])
                #expect(refused.errorCode == 50097 && refused.text.contains("not signed by the device certificate"), "another key: \(refused.text)")
                refused = try await client.token(
                    Self.mailGrant,
                    headers: [.authorization: try Self.answer(certificate: pem, key: key, challenge: challenge, audience: "https://elsewhere/token")])
                #expect(refused.errorCode == 50097 && refused.text.contains("aud"), "\(refused.text)")
                refused = try await client.token(
                    Self.mailGrant, headers: [.authorization: try Self.answer(certificate: pem, key: key, challenge: challenge, nonce: "bm9wZQ")])
                #expect(refused.errorCode == 50097 && refused.text.contains("nonce"), "\(refused.text)")
                refused = try await client.token(
                    Self.mailGrant,
                    headers: [.authorization: try Self.answer(certificate: pem, key: key, challenge: challenge, iat: Date().addingTimeInterval(-3600))])
                #expect(refused.errorCode == 50097 && refused.text.contains("iat"), "a stale answer: \(refused.text)")
                // A certificate for the same device from another CA (another tenant's, say).
                let elsewhere = FileManager.default.temporaryDirectory.appendingPathComponent("ca-\(UUID().uuidString)")
                defer { try? FileManager.default.removeItem(at: elsewhere) }
                let foreign = try IssuingAuthority(keysDirectory: elsewhere).issueDevice(
                    IssuingAuthority.verifiedDeviceRequest(try key.csr()),
                    tenant: Tenant(id: TenantID(Fixtures.tenantId), domain: Fixtures.domain, displayName: "Fabrikam"), objectId: ObjectID(id),
                    deviceId: DeviceID(deviceId), now: Date())
                refused = try await client.token(
                    Self.mailGrant, headers: [.authorization: try Self.answer(certificate: foreign.pem, key: key, challenge: challenge)])
                #expect(refused.errorCode == 50097 && refused.text.contains("CA"), "another CA: \(refused.text)")
                // Disabled: its certificate is void at once.
                stored = try await client.admin(.get, "/devices/\(id)", token: admin)
                document = stored.json
                document["accountEnabled"] = false
                let disabled = try await client.admin(
                    .put, "/devices/\(id)", token: admin, json: document, headers: [HTTPField.Name("If-Match")!: stored.headers[.eTag] ?? "*"])
                #expect(disabled.status == .ok, "\(disabled.text)")
                refused = try await client.token(Self.mailGrant, headers: [.authorization: try Self.answer(certificate: pem, key: key, challenge: challenge)])
                #expect(refused.errorCode == 50097 && refused.text.contains("disabled"), "\(refused.text)")
                // Deleted: the same.
                let deleted = try await client.admin(.delete, "/devices/\(id)", token: admin, headers: [HTTPField.Name("If-Match")!: "*"])
                #expect(deleted.status == .noContent, "\(deleted.text)")
                challenge = try await Self.challenge(client)
                refused = try await client.token(Self.mailGrant, headers: [.authorization: try Self.answer(certificate: pem, key: key, challenge: challenge)])
                #expect(refused.errorCode == 50097 && refused.text.contains("no longer holds"), "\(refused.text)")
            }
        }
    }

    /// A check-in as the device signs it (PROTOCOL §18): a compact JWS, the certificate in `x5c`.
    static func checkIn(
        _ client: some TestClientProtocol, device: [String: Any], certificate pem: String, key: Key, now: Date, jti: String = UUID().uuidString,
        report: [String: Any]
    ) async throws -> JSONReply {
        let deviceId = device["deviceId"] as? String ?? ""
        let path = "/\(Fixtures.domain)/devices/v1/\(deviceId)/checkin"
        let der = try PEMDocument(pemString: pem).derBytes
        let header = try JSONSerialization.data(withJSONObject: ["x5c": [Data(der).base64EncodedString()], "typ": "JWT", "alg": key.algorithm])
        var claims: [String: Any] = ["aud": "http://portcullis.test\(path)", "iat": Int(now.timeIntervalSince1970), "jti": jti, "deviceId": deviceId]
        claims.merge(report) { $1 }
        let input = Base64URL.encode(header) + "." + Base64URL.encode(try JSONSerialization.data(withJSONObject: claims))
        let jws = input + "." + Base64URL.encode(try key.sign(Array(input.utf8)))
        return try await client.execute(uri: path, method: .post, headers: [.contentType: "application/jwt"], body: ByteBuffer(string: jws)) {
            JSONReply($0)
        }
    }

    @Test("check-ins: an iOS compliance policy decides, the device signs; a failed check-in refuses the next sign-in; forged check-ins refused")
    func checkIns() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let key = Key.p256()
                let (device, _, pem) = try await Self.registeredDevice(client, admin: admin, key: key)
                let policy: [String: Any] = [
                    "@odata.type": "#microsoft.graph.iosCompliancePolicy", "displayName": "iOS baseline", "osMinimumVersion": "17.0",
                    "passcodeRequired": true, "securityBlockJailbrokenDevices": true,
                ]
                let created = try await client.admin(.post, "/device-compliance/policies", token: admin, json: policy)
                #expect(created.status == .created && created.string("@odata.type") == "#microsoft.graph.iosCompliancePolicy", "\(created.text)")
                try await Self.requireCompliantDevice(client, admin: admin)
                let good: [String: Any] = [
                    "operatingSystem": "iOS", "operatingSystemVersion": "17.4", "passcodeSet": true, "storageEncrypted": true, "jailbroken": false,
                ]
                let passed = try await Self.checkIn(client, device: device, certificate: pem, key: key, now: env.clock.now(), report: good)
                #expect(passed.status == .ok && passed["isCompliant"] as? Bool == true && passed["isManaged"] as? Bool == true, "\(passed.text)")
                var challenge = try await Self.challenge(client)
                let granted = try await client.token(
                    Self.mailGrant, headers: [.authorization: try Self.answer(certificate: pem, key: key, challenge: challenge)])
                #expect(granted.status == .ok, "\(granted.text)")
                // Too soon, then a jailbroken report: not compliant (no grace), and the next sign-in is refused.
                let soon = try await Self.checkIn(client, device: device, certificate: pem, key: key, now: env.clock.now(), report: good)
                #expect(soon.status == .tooManyRequests && soon.headers[.retryAfter] != nil, "\(soon.text)")
                env.clock.advance(by: 61)
                var bad = good
                bad["jailbroken"] = true
                let jti = UUID().uuidString
                let failed = try await Self.checkIn(client, device: device, certificate: pem, key: key, now: env.clock.now(), jti: jti, report: bad)
                #expect(failed.status == .ok && failed["isCompliant"] as? Bool == false, "\(failed.text)")
                #expect((failed["complianceFailures"] as? [String])?.first?.contains("jailbroken") == true, "\(failed.text)")
                challenge = try await Self.challenge(client)
                let refused = try await client.token(
                    Self.mailGrant, headers: [.authorization: try Self.answer(certificate: pem, key: key, challenge: challenge)])
                #expect(refused.errorCode == 53000, "\(refused.text)")
                let stored = try await client.admin(.get, "/devices/\(try #require(device["id"] as? String))", token: admin)
                #expect(stored["isCompliant"] as? Bool == false && stored["lastSyncDateTime"] != nil, "\(stored.text)")
                // Forged: replayed, another key, another device's path, a stale iat, no JWS at all.
                env.clock.advance(by: 61)
                let replayed = try await Self.checkIn(client, device: device, certificate: pem, key: key, now: env.clock.now(), jti: jti, report: good)
                #expect(replayed.status == .unauthorized && replayed.text.contains("sent already"), "\(replayed.text)")
                let otherKey = try await Self.checkIn(client, device: device, certificate: pem, key: .p256(), now: env.clock.now(), report: good)
                #expect(otherKey.status == .unauthorized && otherKey.text.contains("not signed"), "\(otherKey.text)")
                var elsewhere = device
                elsewhere["deviceId"] = UUID().uuidString.lowercased()
                let wrongPath = try await Self.checkIn(client, device: elsewhere, certificate: pem, key: key, now: env.clock.now(), report: good)
                #expect(wrongPath.status == .unauthorized && wrongPath.text.contains("another device"), "\(wrongPath.text)")
                let stale = try await Self.checkIn(
                    client, device: device, certificate: pem, key: key, now: env.clock.now().addingTimeInterval(-3600), report: good)
                #expect(stale.status == .unauthorized && stale.text.contains("iat"), "\(stale.text)")
                let garbage = try await client.execute(
                    uri: "/\(Fixtures.domain)/devices/v1/\(device["deviceId"] as? String ?? "")/checkin", method: .post, body: ByteBuffer(string: "nope")
                ) { JSONReply($0) }
                #expect(garbage.status == .badRequest, "\(garbage.text)")
                // Still not compliant: none of those changed it; a good check-in brings it back.
                let back = try await Self.checkIn(client, device: device, certificate: pem, key: key, now: env.clock.now(), report: good)
                #expect(back["isCompliant"] as? Bool == true, "\(back.text)")
            }
        }
    }

    @Test("a grace period: a failing device stays compliant for its hours, is refused once they pass (before any sweep), and the sweep stores it")
    func gracePeriod() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let key = Key.p256()
                let (device, id, pem) = try await Self.registeredDevice(client, admin: admin, key: key)
                let policy: [String: Any] = [
                    "@odata.type": "#microsoft.graph.iosCompliancePolicy", "displayName": "iOS", "passcodeRequired": true,
                    "scheduledActionsForRule": [
                        ["ruleName": "PasswordRequired", "scheduledActionConfigurations": [["actionType": "block", "gracePeriodHours": 1]]]
                    ],
                ]
                #expect(try await client.admin(.post, "/device-compliance/policies", token: admin, json: policy).status == .created)
                try await Self.requireCompliantDevice(client, admin: admin)
                var report: [String: Any] = ["operatingSystem": "iOS", "operatingSystemVersion": "17.4", "passcodeSet": true]
                #expect(
                    try await Self.checkIn(client, device: device, certificate: pem, key: key, now: env.clock.now(), report: report)["isCompliant"] as? Bool
                        == true)
                env.clock.advance(by: 61)
                report["passcodeSet"] = false
                let failing = try await Self.checkIn(client, device: device, certificate: pem, key: key, now: env.clock.now(), report: report)
                #expect(
                    failing["isCompliant"] as? Bool == true && failing["complianceGracePeriodExpirationDateTime"] is String, "in its grace: \(failing.text)")
                var challenge = try await Self.challenge(client)
                let inGrace = try await client.token(
                    Self.mailGrant, headers: [.authorization: try Self.answer(certificate: pem, key: key, challenge: challenge)])
                #expect(inGrace.status == .ok, "\(inGrace.text)")
                env.clock.advance(by: 3600)
                challenge = try await Self.challenge(client)
                let answer = try Self.answer(certificate: pem, key: key, challenge: challenge, iat: env.clock.now())
                let lapsed = try await client.token(Self.mailGrant, headers: [.authorization: answer])
                #expect(lapsed.errorCode == 53000, "the grace over, before any sweep: \(lapsed.text)")
                let later = try await client.adminToken()  // the first one expired with the hour
                #expect(try await client.admin(.get, "/devices/\(id)", token: later)["isCompliant"] as? Bool == true, "not stored yet")
                await env.server.sweeper.sweep()
                let stored = try await client.admin(.get, "/devices/\(id)", token: later)
                #expect(stored["isCompliant"] as? Bool == false, "the sweep stores it: \(stored.text)")
                let audit = try await client.admin(.get, "/audit", token: later)
                #expect(audit.text.contains("grace period ended"), "\(audit.text.prefix(1500))")
            }
        }
    }

    @Test("the device in the sign-in log, in what-if (admin API and Graph's beta evaluate), and in Graph's devices")
    func visibility() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let key = Key.p256()
                let (device, id, pem) = try await Self.registeredDevice(client, admin: admin, key: key)
                try await Self.requireCompliantDevice(client, admin: admin)
                let stored = try await client.admin(.get, "/devices/\(id)", token: admin)
                var document = stored.json
                document["isCompliant"] = true
                document["isManaged"] = true
                _ = try await client.admin(
                    .put, "/devices/\(id)", token: admin, json: document, headers: [HTTPField.Name("If-Match")!: stored.headers[.eTag] ?? "*"])
                let challenge = try await Self.challenge(client)
                let granted = try await client.token(
                    Self.mailGrant, headers: [.authorization: try Self.answer(certificate: pem, key: key, challenge: challenge)])
                #expect(granted.status == .ok, "\(granted.text)")
                // The sign-in log's deviceDetail (what the decision saw).
                let log = try await client.admin(.get, "/sign-ins", token: admin)
                let records = try #require(log["value"] as? [[String: Any]], "\(log.text)")
                let detail = records.compactMap { $0["deviceDetail"] as? [String: Any] }.first
                #expect(detail?["deviceId"] as? String == device["deviceId"] as? String && detail?["isCompliant"] as? Bool == true, "\(log.text.prefix(2000))")
                // What-if: a compliant device passes, an unregistered one does not, a malformed one is refused at its pointer.
                var signIn: [String: Any] = ["userId": Fixtures.alice.upn, "clientAppId": Fixtures.mobileClientId, "resourceAppId": Fixtures.mailResource]
                let unregistered = try await client.admin(.post, "/conditional-access/evaluate", token: admin, json: ["signIn": signIn])
                #expect((unregistered["signIn"] as? [String: Any])?["errorCode"] as? Int == 53000, "\(unregistered.text)")
                signIn["device"] = ["deviceId": device["deviceId"] ?? "", "isCompliant": true, "trustType": "AzureAd"]
                let compliant = try await client.admin(.post, "/conditional-access/evaluate", token: admin, json: ["signIn": signIn])
                #expect((compliant["signIn"] as? [String: Any])?["errorCode"] == nil, "\(compliant.text)")
                signIn["device"] = ["trustType": "Cloud"]
                let bad = try await client.admin(.post, "/conditional-access/evaluate", token: admin, json: ["signIn": signIn])
                #expect(bad.status == .badRequest && bad.text.contains("/signIn/device/trustType"), "\(bad.text)")
                // Graph: the device as Graph shows it (no certificate), its owners a navigation; beta what-if reads deviceInfo.
                let graph = try await client.daemonGraphToken(
                    roles: ["Device.ReadWrite.All", "Policy.Read.All", "DeviceManagementConfiguration.ReadWrite.All"], admin: admin)
                let listed = try await client.graph(.get, "/v1.0/devices?$filter=isCompliant eq true", token: graph)
                let shown = try #require((listed["value"] as? [[String: Any]])?.first, "\(listed.text)")
                #expect(shown["id"] as? String == id && shown["certificate"] == nil && shown["registeredOwners"] == nil, "\(listed.text)")
                // Every member of Graph's device, those Portcullis does not keep null (or []); selectable; a write through Graph
                // (which merges the shown device) keeps working, and a value in one of them is refused at its pointer.
                #expect(shown.keys.contains("isRooted") && shown["isRooted"] is NSNull && shown["alternativeSecurityIds"] as? [Any] != nil, "\(listed.text)")
                let selected = try await client.graph(.get, "/v1.0/devices/\(id)?$select=deviceCategory,onPremisesSyncEnabled", token: graph)
                #expect(selected.status == .ok && selected.json.keys.contains("deviceCategory"), "\(selected.text)")
                let renamed = try await client.graph(.patch, "/v1.0/devices/\(id)", token: graph, json: ["displayName": "Alice's laptop (renamed)"])
                #expect(renamed.status == .noContent, "\(renamed.text)")
                let refused = try await client.graph(.patch, "/v1.0/devices/\(id)", token: graph, json: ["deviceCategory": "Kiosk"])
                #expect(refused.status == .badRequest && refused.text.contains("/deviceCategory"), "\(refused.text)")
                let owners = try await client.graph(.get, "/v1.0/devices/\(id)/registeredOwners", token: graph)
                #expect((owners["value"] as? [[String: Any]])?.first?["id"] as? String == Fixtures.alice.id, "\(owners.text)")
                let evaluate: [String: Any] = [
                    "signInIdentity": ["@odata.type": "#microsoft.graph.userSignIn", "userId": Fixtures.alice.id],
                    "signInContext": ["@odata.type": "#microsoft.graph.applicationContext", "includeApplications": [Fixtures.mailApiId]],
                    "signInConditions": ["deviceInfo": ["isCompliant": false, "trustType": "Workplace"]],
                ]
                // Intune's compliance policies through Graph, each in its platform's type.
                let intune = graph
                let made = try await client.graph(
                    .post, "/v1.0/deviceManagement/deviceCompliancePolicies", token: intune,
                    json: ["@odata.type": "#microsoft.graph.androidCompliancePolicy", "displayName": "Android", "passwordRequired": true])
                #expect(made.status == .created && made.string("@odata.type") == "#microsoft.graph.androidCompliancePolicy", "\(made.text)")
                let policies = try await client.graph(.get, "/v1.0/deviceManagement/deviceCompliancePolicies", token: intune)
                let android = (policies["value"] as? [[String: Any]])?.first { $0["displayName"] as? String == "Android" }
                #expect(android?["passwordRequired"] as? Bool == true && android?.keys.contains("lastModifiedDateTime") == true, "\(policies.text)")
                let wrong = try await client.graph(
                    .post, "/v1.0/deviceManagement/deviceCompliancePolicies", token: intune,
                    json: ["@odata.type": "#microsoft.graph.androidCompliancePolicy", "displayName": "x", "passcodeRequired": true])
                #expect(wrong.status == .badRequest, "iOS's member on Android: \(wrong.text)")
                let whatIf = try await client.graph(.post, "/beta/identity/conditionalAccess/evaluate", token: graph, json: evaluate)
                let results = try #require(whatIf["value"] as? [[String: Any]], "\(whatIf.text)")
                #expect(
                    results.contains { $0["id"] as? String == "a1000000-0000-4000-8000-0000000000d1" && $0["policyApplies"] as? Bool == true }, "\(whatIf.text)"
                )
            }
        }
    }

    @Test("a code is challenged before it is redeemed: the answer on the same request redeems it once, naming the device")
    func codeRedemption() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let key = Key.p256()
                let (_, id, pem) = try await Self.registeredDevice(client, admin: admin, key: key)
                let stored = try await client.admin(.get, "/devices/\(id)", token: admin)
                var document = stored.json
                document["isCompliant"] = true
                _ = try await client.admin(
                    .put, "/devices/\(id)", token: admin, json: document, headers: [HTTPField.Name("If-Match")!: stored.headers[.eTag] ?? "*"])
                try await Self.requireCompliantDevice(client, admin: admin)
                // The page issues the code (device controls are decided where the device can be proven: at redemption).
                let browser = Browser()
                let signedIn = try await browser.signIn(client)
                let location = try #require(signedIn.headers[.location], "\(signedIn.status) \(signedIn.html.prefix(300))")
                let code = try #require(URLComponents(string: location)?.queryItems?.first { $0.name == "code" }?.value, "\(location)")
                let support: HTTPFields = [HTTPField.Name("x-ms-PKeyAuth")!: "1.0"]
                let challenged = try await client.token(Authorize.redeem(code), headers: support)
                #expect(challenged.status == .unauthorized && challenged.errorCode == 50097, "\(challenged.text)")
                let challenge = try #require(challenged.headers[.wwwAuthenticate].flatMap(PKeyAuth.parameters))
                let redeemed = try await client.token(
                    Authorize.redeem(code), headers: [.authorization: try Self.answer(certificate: pem, key: key, challenge: challenge)])
                #expect(redeemed.status == .ok, "the code was not consumed by the challenge: \(redeemed.text)")
                #expect(jwtClaims(redeemed.string("access_token") ?? "")["deviceid"] != nil)
                let again = try await client.token(Authorize.redeem(code))
                #expect(again.status == .badRequest, "then it is used: \(again.text)")
            }
        }
    }

    @Test("an admin creates a joined device with the device's request and hands it the certificate; a hybrid-joined device meets domainJoinedDevice")
    func adminDevices() async throws {
        try await withTestEnvironment { env in
            try await env.application().test(.router) { client in
                let admin = try await client.adminToken()
                let key = Key.p256()
                let created = try await client.admin(
                    .post, "/devices", token: admin,
                    json: ["displayName": "Kiosk 7", "trustType": "ServerAd", "csr": try key.csr(), "registeredOwners": [Fixtures.alice.upn]])
                #expect(created.status == .created, "\(created.text)")
                let pem = try #require((created["certificate"] as? [String: Any])?["pem"] as? String, "\(created.text)")
                let policy = Policies.document(id: "a1000000-0000-4000-8000-0000000000d2", name: "Hybrid joined for mail", controls: ["domainJoinedDevice"])
                #expect(try await client.admin(.post, "/conditional-access/policies?force=true", token: admin, json: policy).status == .created)
                let challenge = try await Self.challenge(client)
                let granted = try await client.token(
                    Self.mailGrant, headers: [.authorization: try Self.answer(certificate: pem, key: key, challenge: challenge)])
                #expect(granted.status == .ok, "\(granted.text)")
                // A new key for the device (its request sent again): the certificate before is void at once.
                let id = try #require(created.string("id"))
                let stored = try await client.admin(.get, "/devices/\(id)", token: admin)
                var document = stored.json
                let newKey = Key.p256()
                document["csr"] = try newKey.csr()
                let rekeyed = try await client.admin(
                    .put, "/devices/\(id)", token: admin, json: document, headers: [HTTPField.Name("If-Match")!: stored.headers[.eTag] ?? "*"])
                #expect(rekeyed.status == .ok && (rekeyed["certificate"] as? [String: Any])?["pem"] as? String != pem, "\(rekeyed.text)")
                var next = try await Self.challenge(client)
                let old = try await client.token(Self.mailGrant, headers: [.authorization: try Self.answer(certificate: pem, key: key, challenge: next)])
                #expect(old.errorCode == 50097 && old.text.contains("no longer holds"), "\(old.text)")
                next = try await Self.challenge(client)
                let newPem = try #require((rekeyed["certificate"] as? [String: Any])?["pem"] as? String)
                let renewed = try await client.token(
                    Self.mailGrant, headers: [.authorization: try Self.answer(certificate: newPem, key: newKey, challenge: next)])
                #expect(renewed.status == .ok, "\(renewed.text)")
                // The same key's request again (a folder applied twice): the certificate stays; compliance the write does not
                // name stays as it was.
                var marked = rekeyed.json
                marked["isCompliant"] = true
                marked.removeValue(forKey: "csr")
                let compliant = try await client.admin(.put, "/devices/\(id)", token: admin, json: marked, headers: [HTTPField.Name("If-Match")!: "*"])
                #expect(compliant.status == .ok && compliant["isCompliant"] as? Bool == true, "\(compliant.text)")
                var again = compliant.json
                again.removeValue(forKey: "isCompliant")
                again["csr"] = try newKey.csr()
                let same = try await client.admin(.put, "/devices/\(id)", token: admin, json: again, headers: [HTTPField.Name("If-Match")!: "*"])
                #expect(same.status == .ok && (same["certificate"] as? [String: Any])?["pem"] as? String == newPem, "\(same.text)")
                #expect(same["isCompliant"] as? Bool == true, "\(same.text)")
                // Bad documents at their pointers.
                for (body, pointer) in [
                    (["displayName": "x", "trustType": "Cloud"], "/trustType"),
                    (["displayName": "x", "csr": "nope"], "/csr"),
                    (["displayName": "x", "registeredOwners": ["nobody@fabrikam.test"]], "/registeredOwners/0"),
                    (["displayName": "x", "extensionAttributes": ["extensionAttribute16": "a"]], "/extensionAttributes/extensionAttribute16"),
                ] as [([String: Any], String)] {
                    let refused = try await client.admin(.post, "/devices", token: admin, json: body)
                    #expect(refused.status == .badRequest && refused.text.contains("\"\(pointer)\""), "\(pointer): \(refused.text)")
                }
            }
        }
    }
}
