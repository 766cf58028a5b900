public import Foundation

/// A certificate an application authenticates with (Graph `keyCredential`, PROTOCOL §21): the client signs RFC 7523
/// assertions with its private key, which is never here.
public struct KeyCredential: Codable, Sendable, Equatable {
    public var keyId: RecordID
    public var displayName: String?
    /// Graph's `type` and `usage`: a certificate, for verifying.
    public var type: String
    public var usage: String
    /// The certificate's SHA-1 thumbprint in upper-case hex: what MSAL sends as `x5t`, Graph's `customKeyIdentifier`.
    public var thumbprint: String
    /// Its SHA-256 thumbprint (`x5t#S256`).
    public var thumbprintSHA256: String
    /// The certificate, base64 DER (Graph's `key`).
    public var key: String
    public var startDateTime: Date
    public var endDateTime: Date

    /// At most this many certificates per application.
    public static let maximumPerApplication = 10

    public init(
        keyId: RecordID, displayName: String?, thumbprint: String, thumbprintSHA256: String, key: String, startDateTime: Date, endDateTime: Date
    ) {
        self.keyId = keyId
        self.displayName = displayName
        self.type = "AsymmetricX509Cert"
        self.usage = "Verify"
        self.thumbprint = thumbprint
        self.thumbprintSHA256 = thumbprintSHA256
        self.key = key
        self.startDateTime = startDateTime
        self.endDateTime = endDateTime
    }

    /// Graph's `customKeyIdentifier`: the SHA-1 thumbprint's bytes, base64.
    public var customKeyIdentifier: String {
        let digits = Array(thumbprint.utf8)
        let bytes = stride(from: 0, to: digits.count - 1, by: 2).compactMap { UInt8(String(decoding: digits[$0...$0 + 1], as: UTF8.self), radix: 16) }
        return Data(bytes).base64EncodedString()
    }

    /// Whether the certificate authenticates at `now` (within its validity).
    public func isValid(at now: Date) -> Bool { startDateTime <= now && now < endDateTime }
}

/// How a client authenticated (Graph `signIn.clientCredentialType`, PROTOCOL §21).
public enum ClientCredentialType: String, Codable, Sendable, CaseIterable {
    /// A public client: its ID alone.
    case none
    case clientSecret
    /// An assertion signed with one of its certificates.
    case certificate
    /// A token of a federated issuer (a workload identity federation credential).
    case federatedIdentityCredential
}

/// Why a certificate cannot be registered, in words (at its pointer).
public struct KeyCredentialProblem: Error, Sendable, Equatable {
    public let message: String
    public init(_ message: String) { self.message = message }
}

/// The rules of an RFC 7523 client assertion's claims (PROTOCOL §21), as Entra keeps them, with its AADSTS codes. The
/// signature and the `jti`'s history are the server's.
public enum ClientAssertionRules {
    /// `client_assertion_type`.
    public static let type = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    /// An assertion lives at most this long (`exp` from now).
    public static let longestLifetime: TimeInterval = 600
    /// The clocks of client and server may differ by this much.
    public static let skew: TimeInterval = 60

    /// What a checked assertion says.
    public struct Checked: Sendable, Equatable {
        public var jti: String
        public var expires: Date
    }

    /// `iss` = `sub` = the client ID, `aud` one of `audiences`, `exp` in the future and at most 10 minutes ahead, `nbf`
    /// and `iat` (fractional seconds allowed) not in the future, and a `jti`.
    public static func check(_ claims: JSONValue, clientId: AppID, audiences: [String], now: Date) throws(TokenError) -> Checked {
        guard case .object(let object) = claims else { throw .malformedClientAssertion("The client assertion's payload is not a JSON object.") }
        guard let iss = object["iss"]?.stringValue, let sub = object["sub"]?.stringValue, AppID(iss) == clientId, AppID(sub) == clientId else {
            throw .clientAssertionSubject
        }
        let named = Self.audiences(in: object)
        guard named.contains(where: { aud in audiences.contains { $0.equalsIgnoringCase(aud) } }) else { throw .clientAssertionAudience }
        let expires = try Self.expiry(of: object, now: now)
        guard expires <= now.addingTimeInterval(longestLifetime + skew) else { throw .clientAssertionTime }
        guard let jti = object["jti"]?.stringValue, !jti.isEmpty, jti.utf8.count <= 256 else {
            throw .malformedClientAssertion("The client assertion has no jti (a string of at most 256 bytes).")
        }
        return Checked(jti: jti, expires: expires)
    }

    /// `aud` as a list: one string or an array of them.
    static func audiences(in object: [String: JSONValue]) -> [String] {
        switch object["aud"] {
        case .string(let one)?: [one]
        case .array(let many)?: many.compactMap(\.stringValue)
        default: []
        }
    }

    /// `exp`, in the future (a minute for clocks), with `nbf` and `iat` — when present — not ahead (fractional seconds
    /// allowed): the times every client assertion keeps, a certificate's or a federated issuer's.
    static func expiry(of object: [String: JSONValue], now: Date) throws(TokenError) -> Date {
        func time(_ name: String) -> Date? {
            guard case .number(let seconds)? = object[name], seconds.isFinite, abs(seconds) < 1e11 else { return nil }
            return Date(timeIntervalSince1970: seconds)
        }
        guard let expires = time("exp") else { throw .malformedClientAssertion("The client assertion has no exp.") }
        guard expires > now.addingTimeInterval(-skew) else { throw .clientAssertionTime }
        for name in ["nbf", "iat"] where object[name] != nil {
            guard let at = time(name), at <= now.addingTimeInterval(skew) else { throw .clientAssertionTime }
        }
        return expires
    }

    /// What a client assertion may name as `aud` at this tenant: its token endpoints (v2.0 and v1), its issuer and its
    /// authority, by tenant ID or domain (Entra's accepted spellings).
    public static func audiences(base: String, tenant: Tenant) -> [String] {
        [tenant.id.rawValue, tenant.domain].flatMap { segment in
            [
                "\(base)/\(segment)/oauth2/v2.0/token", "\(base)/\(segment)/oauth2/token", "\(base)/\(segment)/v2.0", "\(base)/\(segment)/",
                "\(base)/\(segment)",
            ]
        }
    }
}

extension TokenError {
    public static func malformedClientAssertion(_ detail: String) -> TokenError { TokenError(.invalidRequest, aadsts: 50027, detail) }
    public static let clientAssertionType = TokenError(
        .invalidRequest, aadsts: 50027, "client_assertion_type must be urn:ietf:params:oauth:client-assertion-type:jwt-bearer.")
    public static let clientAssertionSubject = TokenError(
        .invalidClient, aadsts: 700021, "Client assertion application identifier doesn't match 'client_id' parameter.")
    public static let clientAssertionAudience = TokenError(.invalidClient, aadsts: 700023, "Client assertion audience claim does not match Realm issuer.")
    public static let clientAssertionTime = TokenError(.invalidClient, aadsts: 700024, "Client assertion is not within its valid time range.")
    public static let clientAssertionUnknownKey = TokenError(
        .invalidClient, aadsts: 700027,
        "The certificate with identifier used to sign the client assertion is not registered on application, or is not valid now.")
    public static let clientAssertionSignature = TokenError(.invalidClient, aadsts: 700027, "Client assertion contains an invalid signature.")
    public static let clientAssertionReplayed = TokenError(
        .invalidClient, aadsts: 50013, "The client assertion's jti was used in another assertion: make a new one for each.")
}
