public import Foundation

/// A workload identity federation credential of an application (Graph `federatedIdentityCredential`, PROTOCOL §21): a
/// token that `issuer` signs for `subject` with one of `audiences` authenticates the application in place of a secret or
/// a certificate — a Kubernetes service account, a CI system's OIDC token, another Portcullis tenant.
public struct FederatedIdentityCredential: Codable, Sendable, Equatable {
    /// Graph's `id`: named after the application and `name` unless given, so re-applying a folder changes nothing.
    public var id: RecordID
    /// Unique in the application; Graph's rules: 3 to 120 letters, digits, `-` and `_`, starting with a letter or digit.
    public var name: String
    /// The issuer's URL (https), exactly as its tokens' `iss`; its OIDC discovery publishes its keys.
    public var issuer: String
    /// The tokens' `sub`, exactly.
    public var subject: String
    /// What the tokens' `aud` must hold (one value, as Entra allows).
    public var audiences: [String]
    public var description: String?

    /// Graph's default audience.
    public static let defaultAudience = "api://AzureADTokenExchange"
    /// At most this many per application (Entra's limit).
    public static let maximumPerApplication = 20
    /// The longest issuer, subject, audience and description (Entra's).
    public static let maximumLength = 600

    public init(id: RecordID, name: String, issuer: String, subject: String, audiences: [String], description: String? = nil) {
        self.id = id
        self.name = name
        self.issuer = issuer
        self.subject = subject
        self.audiences = audiences
        self.description = description
    }

    /// The ID a credential named `name` of `appId` has when none is given.
    public static func id(appId: AppID, name: String) -> RecordID {
        RecordID(StableGUID.make(from: "federated:\(appId.rawValue):\(name)"))
    }

    /// Reads one credential of application `appId` (the admin API, `directory.json`, Graph), its problems at their
    /// pointers.
    public static func parse(_ value: JSONValue, at pointer: String, appId: AppID?, problems: ProblemCollector) -> FederatedIdentityCredential? {
        guard let item = JSONObjectReader(value, at: pointer, problems: problems) else { return nil }
        item.rejectUnknownGraphMembers(
            allowed: ["id", "name", "issuer", "subject", "audiences", "description"], ignoredWhenEmpty: ["claimsMatchingExpression"])
        let id: RecordID? = item.guid("id")
        let name = item.string("name", required: true)
        if let name, !isName(name) {
            problems.add(item.path("name"), "must be 3 to 120 letters, digits, '-' or '_', starting with a letter or digit.")
        }
        let issuer = item.string("issuer", required: true)
        if let issuer {
            if issuer.count > maximumLength {
                problems.add(item.path("issuer"), "is longer than \(maximumLength) characters.")
            } else if !isIssuer(issuer) {
                problems.add(item.path("issuer"), "must be an https URL without a query or fragment (the tokens' iss, exactly).")
            }
        }
        let subject = item.string("subject", required: true)
        if let subject, subject.count > maximumLength { problems.add(item.path("subject"), "is longer than \(maximumLength) characters.") }
        var audiences = [defaultAudience]
        if let given = item.strings("audiences") {
            audiences = given.map(\.value)
            if given.count != 1 { problems.add(item.path("audiences"), "must hold exactly one audience.") }
            for (audience, audiencePointer) in given where audience.count > maximumLength {
                problems.add(audiencePointer, "is longer than \(maximumLength) characters.")
            }
        }
        let description = item.string("description", nonEmpty: false)
        if let description, description.count > maximumLength {
            problems.add(item.path("description"), "is longer than \(maximumLength) characters.")
        }
        guard let name, let issuer, let subject else { return nil }
        return FederatedIdentityCredential(
            id: id ?? appId.map { Self.id(appId: $0, name: name) } ?? RecordID.generate(), name: name, issuer: issuer, subject: subject,
            audiences: audiences, description: description)
    }

    /// Problems of an application's credentials together: names and issuer-subject pairs unique, the bound.
    public static func checkTogether(_ credentials: [FederatedIdentityCredential], at pointer: String, problems: ProblemCollector) {
        if credentials.count > maximumPerApplication {
            problems.add(pointer, "holds \(credentials.count) federated credentials; at most \(maximumPerApplication).")
        }
        for (index, credential) in credentials.enumerated() {
            let earlier = credentials[..<index]
            if earlier.contains(where: { $0.name == credential.name }) {
                problems.add(JSONPointer.appending(JSONPointer.appending(pointer, index), "name"), "'\(credential.name)' is the name of another credential.")
            } else if earlier.contains(where: { $0.id == credential.id }) {
                problems.add(JSONPointer.appending(JSONPointer.appending(pointer, index), "id"), "is the id of another credential.")
            } else if earlier.contains(where: { $0.issuer == credential.issuer && $0.subject == credential.subject }) {
                problems.add(
                    JSONPointer.appending(JSONPointer.appending(pointer, index), "subject"), "another credential has this issuer and subject already.")
            }
        }
    }

    static func isName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        func alphanumeric(_ byte: UInt8) -> Bool { (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte) }
        guard (3...120).contains(bytes.count), let first = bytes.first, alphanumeric(first) else { return false }
        return bytes.allSatisfy { alphanumeric($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }
    }

    static func isIssuer(_ issuer: String) -> Bool {
        guard issuer.hasPrefix("https://"), let url = URL(string: issuer), let host = url.host, !host.isEmpty else { return false }
        return url.query == nil && url.fragment == nil && url.user == nil
    }

    /// Where the issuer's OIDC discovery document is (OpenID Connect Discovery §4: the issuer, without a trailing slash,
    /// then `/.well-known/openid-configuration`).
    public var discoveryURL: String {
        (issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer) + "/.well-known/openid-configuration"
    }

    /// What a federated token's claims must be (PROTOCOL §21): issued by a registered credential's `issuer` for its
    /// `subject` (both exactly, as Entra compares them) with one of its `audiences`, `exp` in the future (however far: it
    /// is the issuer's own token), `nbf`/`iat` not ahead. The credential it matches, and until when. Entra's codes:
    /// 700211 (no credential has the issuer), 700213 (none the subject), 700212 (none the audience), 700024 (time).
    public static func match(
        _ claims: JSONValue, among credentials: [FederatedIdentityCredential], now: Date
    ) throws(TokenError) -> (
        credential: FederatedIdentityCredential, expires: Date
    ) {
        guard case .object(let object) = claims else { throw .malformedClientAssertion("The client assertion's payload is not a JSON object.") }
        let iss = object["iss"]?.stringValue ?? ""
        let sub = object["sub"]?.stringValue ?? ""
        let aud = ClientAssertionRules.audiences(in: object)
        let issued = credentials.filter { $0.issuer == iss }
        guard !issued.isEmpty else { throw .federatedIssuer(iss) }
        let subjects = issued.filter { $0.subject == sub }
        guard !subjects.isEmpty else { throw .federatedSubject(sub) }
        guard let credential = subjects.first(where: { registered in aud.contains { registered.audiences.contains($0) } }) else {
            throw .federatedAudience(aud.first ?? "")
        }
        return (credential, try ClientAssertionRules.expiry(of: object, now: now))
    }
}

extension TokenError {
    /// A federated token's claim named in an answer: what the client sent, cut short.
    static func quoted(_ value: String) -> String { value.count <= 200 ? value : String(value.prefix(200)) + "…" }

    public static func federatedIssuer(_ issuer: String) -> TokenError {
        TokenError(.invalidClient, aadsts: 700211, "No matching federated identity record found for presented assertion issuer '\(quoted(issuer))'.")
    }
    public static func federatedSubject(_ subject: String) -> TokenError {
        TokenError(.invalidClient, aadsts: 700213, "No matching federated identity record found for presented assertion subject '\(quoted(subject))'.")
    }
    public static func federatedAudience(_ audience: String) -> TokenError {
        TokenError(.invalidClient, aadsts: 700212, "No matching federated identity record found for presented assertion audience '\(quoted(audience))'.")
    }
    /// The issuer's keys could not be had (its discovery or JWKS unreachable, refused by the callback rule, unreadable).
    public static let federatedKeysUnavailable = TokenError(
        .invalidClient, aadsts: 50166, "Request to External OIDC endpoint failed: the federated issuer's signing keys could not be fetched.")
    public static let federatedSignature = TokenError(
        .invalidClient, aadsts: 700027, "Client assertion failed signature validation with the federated issuer's published keys.")
}
