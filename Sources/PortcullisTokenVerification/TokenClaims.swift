import Foundation
public import JWTKit
public import PortcullisVocabulary

/// The claims of an access token (RFC 9068 plus the Microsoft identity platform's `oid`, `tid`, `scp`,
/// `roles`, `upn`, `xms_cc`). NumericDates are whole seconds.
public struct AccessTokenClaims: JWTPayload, Equatable {
    public var iss: String
    public var aud: String
    public var sub: String
    public var oid: String?
    public var tid: String
    public var azp: String
    public var clientId: String
    /// How the client authenticated: `0` public client, `1` client secret.
    public var azpacr: String
    public var iat: Int
    public var nbf: Int
    public var exp: Int
    public var jti: String
    public var scp: String?
    public var roles: [String]?
    public var upn: String?
    public var preferredUsername: String?
    public var name: String?
    /// The client capabilities the client declared on the request.
    public var xmsCC: [String]?
    /// `app` for app-only tokens, `user` for delegated ones.
    public var idtyp: String
    public var ver: String
    /// The compliance enrollment that satisfied app protection for this token, when one did.
    public var xmsMamEnrollment: String?
    /// How the user authenticated (`pwd`, `mfa`) and when (delegated tokens).
    public var amr: [String]?
    public var authTime: Int?
    /// The authentication contexts this token's sign-in met (PROTOCOL §13), absent when none.
    public var acrs: [String]?
    /// `cnf` (RFC 7800, RFC 9449 §6.1): the DPoP key the token is bound to.
    public var cnf: Confirmation?
    /// `xms_iat_ms`: when the token was issued, in milliseconds (PROTOCOL §14.1: a revocation voids what was issued up to
    /// and including its time, to the millisecond).
    public var xmsIatMs: Int64?
    /// `xms_app_res`: conditional access asked this resource to restrict what it offers (PROTOCOL §17,
    /// `applicationEnforcedRestrictions`); absent otherwise.
    public var xmsAppRes: Bool?
    /// `xms_sle`: strict location enforcement (PROTOCOL §17): where the resource may accept this token; absent when no
    /// policy asked for it.
    public var xmsSle: [StrictLocationConstraint]?
    /// `ipaddr`: the address the token was issued to (with `xms_sle`).
    public var ipaddr: String?
    /// `idp`: for a B2B collaboration user (PROTOCOL §17), the issuer of the home tenant that authenticated them.
    public var idp: String?
    /// `acct`: `1` for a guest, `0` for a member; present for B2B collaboration users and guests.
    public var acct: Int?
    /// `deviceid`: the device the sign-in proved it came from (PROTOCOL §18); absent when none was.
    public var deviceid: String?

    /// The token's issue time in milliseconds: `xms_iat_ms`, or — for a token without it — the start of its `iat` second
    /// (so that a revocation in that second voids it: the safe side).
    public var issuedAtMilliseconds: Int64 {
        if let xmsIatMs, xmsIatMs / 1000 == Int64(iat) { return xmsIatMs }
        return Int64(iat) * 1000
    }

    public struct Confirmation: Codable, Sendable, Equatable {
        public var jkt: String
        public init(jkt: String) { self.jkt = jkt }
    }

    public init(
        iss: String, aud: String, sub: String, oid: String?, tid: String, azp: String, azpacr: String,
        iat: Int, nbf: Int, exp: Int, jti: String, scp: String?, roles: [String]?, upn: String?,
        preferredUsername: String?, name: String?, xmsCC: [String]?, idtyp: String, xmsMamEnrollment: String? = nil,
        amr: [String]? = nil, authTime: Int? = nil, acrs: [String]? = nil, cnf: Confirmation? = nil
    ) {
        self.cnf = cnf
        self.acrs = acrs
        self.amr = amr
        self.authTime = authTime
        self.iss = iss
        self.aud = aud
        self.sub = sub
        self.oid = oid
        self.tid = tid
        self.azp = azp
        self.clientId = azp
        self.azpacr = azpacr
        self.iat = iat
        self.nbf = nbf
        self.exp = exp
        self.jti = jti
        self.scp = scp
        self.roles = roles
        self.upn = upn
        self.preferredUsername = preferredUsername
        self.name = name
        self.xmsCC = xmsCC
        self.idtyp = idtyp
        self.ver = "2.0"
        self.xmsMamEnrollment = xmsMamEnrollment
    }

    enum CodingKeys: String, CodingKey {
        case iss, aud, sub, oid, tid, azp, azpacr, iat, nbf, exp, jti, scp, roles, upn, name, idtyp, ver
        case clientId = "client_id"
        case preferredUsername = "preferred_username"
        case xmsCC = "xms_cc"
        case xmsMamEnrollment = "xms_mam_enrollment"
        case amr, acrs, cnf
        case authTime = "auth_time"
        case xmsIatMs = "xms_iat_ms"
        case xmsAppRes = "xms_app_res"
        case xmsSle = "xms_sle"
        case ipaddr, idp, acct, deviceid
    }

    /// Time and audience are checked by `TokenVerifier` against the injected clock, not here.
    public func verify(using algorithm: some JWTAlgorithm) async throws {}

    /// Whether this token was issued for a user (delegated) rather than for an application alone.
    public var isDelegated: Bool { idtyp == "user" }
}

/// One entry of `xms_sle` (PROTOCOL §17): an enabled conditional-access policy that did not apply to the sign-in only
/// because of where it came from, and that the sign-in would not have passed. The resource must not accept the token
/// from an address where that policy would apply: inside `in` and outside `ex` (CIDR ranges; `::/0` is every address).
/// Country locations are not carried: a resource sees addresses, not countries (as in Entra, strict location enforcement
/// is about IP ranges).
public struct StrictLocationConstraint: Codable, Sendable, Equatable {
    public var include: [String]
    public var exclude: [String]

    public init(include: [String], exclude: [String]) {
        self.include = include
        self.exclude = exclude
    }

    enum CodingKeys: String, CodingKey {
        case include = "in"
        case exclude = "ex"
    }

    /// Whether a request from `address` may use the token. A range that does not parse counts against the address (the
    /// token is ours; a range it carries that this resource cannot read must not widen what it accepts).
    public func admits(_ address: IPAddress) -> Bool {
        let inside = include.contains { IPRange($0)?.contains(address) ?? true }
        return !inside || exclude.contains { IPRange($0)?.contains(address) ?? false }
    }
}

/// The claims of an ID token (OIDC Core §2 plus `oid`, `tid`, `preferred_username`).
public struct IDTokenClaims: JWTPayload, Equatable {
    public var iss: String
    public var aud: String
    public var sub: String
    public var oid: String
    public var tid: String
    public var iat: Int
    public var nbf: Int
    public var exp: Int
    public var ver: String
    public var preferredUsername: String?
    public var name: String?
    public var email: String?
    /// The `nonce` of the authorization request (OIDC Core §2).
    public var nonce: String?
    public var authTime: Int?
    public var amr: [String]?
    /// The authentication context met of those the request's `acr_values` named (RFC 9470, PROTOCOL §13).
    public var acr: String?
    /// `idp` and `acct`, as in the access token (B2B collaboration users, PROTOCOL §17).
    public var idp: String?
    public var acct: Int?
    /// `deviceid`, as in the access token (PROTOCOL §18).
    public var deviceid: String?

    public init(
        iss: String, aud: String, sub: String, oid: String, tid: String, iat: Int, nbf: Int, exp: Int,
        preferredUsername: String?, name: String?, email: String?, nonce: String? = nil, authTime: Int? = nil, amr: [String]? = nil,
        acr: String? = nil
    ) {
        self.acr = acr
        self.nonce = nonce
        self.authTime = authTime
        self.amr = amr
        self.iss = iss
        self.aud = aud
        self.sub = sub
        self.oid = oid
        self.tid = tid
        self.iat = iat
        self.nbf = nbf
        self.exp = exp
        self.ver = "2.0"
        self.preferredUsername = preferredUsername
        self.name = name
        self.email = email
    }

    enum CodingKeys: String, CodingKey {
        case iss, aud, sub, oid, tid, iat, nbf, exp, ver, name, email, nonce, amr, acr, idp, acct, deviceid
        case preferredUsername = "preferred_username"
        case authTime = "auth_time"
    }

    public func verify(using algorithm: some JWTAlgorithm) async throws {}
}
