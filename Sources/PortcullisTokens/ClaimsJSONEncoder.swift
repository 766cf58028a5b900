import Foundation
import JWTKit
import PortcullisCore

/// jwt-kit's JSON encoder with the token path written by hand: access-token and ID-token payloads and
/// all-string headers (`alg`, `kid`, `typ`) skip `JSONEncoder`, which measured 7 % of a
/// client_credentials grant's CPU (and the ID token 3.6 % of a refresh's instructions). Everything else
/// (Security Event Tokens) goes to jwt-kit's default encoder. The output is the same JSON object
/// (member order and `\/` aside).
struct ClaimsJSONEncoder: JWTJSONEncoder {
    private let fallback: any JWTJSONEncoder = .defaultForJWT

    func encode<T: Encodable>(_ value: T) throws -> Data {
        if let claims = value as? AccessTokenClaims { return claims.jsonPayload }
        if let claims = value as? IDTokenClaims { return claims.jsonPayload }
        if let header = value as? JWTHeader, let json = header.stringsOnlyJSON { return json }
        return try fallback.encode(value)
    }
}

extension AccessTokenClaims {
    /// The payload JSON, members in `CodingKeys` order; absent optionals are left out as `JSONEncoder` does.
    var jsonPayload: Data {
        var writer = JSONObjectWriter(capacity: 512)
        writer.string("iss", iss)
        writer.string("aud", aud)
        writer.string("sub", sub)
        writer.string("oid", oid)
        writer.string("tid", tid)
        writer.string("azp", azp)
        writer.string("azpacr", azpacr)
        writer.integer("iat", iat)
        writer.integer("nbf", nbf)
        writer.integer("exp", exp)
        writer.string("jti", jti)
        writer.string("scp", scp)
        writer.strings("roles", roles)
        writer.string("upn", upn)
        writer.string("name", name)
        writer.string("idtyp", idtyp)
        writer.string("ver", ver)
        writer.string("client_id", clientId)
        writer.string("preferred_username", preferredUsername)
        writer.strings("xms_cc", xmsCC)
        writer.string("xms_mam_enrollment", xmsMamEnrollment)
        writer.strings("amr", amr)
        writer.integer("auth_time", authTime)
        writer.strings("acrs", acrs)
        writer.object("cnf", strings: cnf.map { [("jkt", $0.jkt)] })
        writer.integer("xms_iat_ms", xmsIatMs.map(Int.init))
        if xmsAppRes == true { writer.bool("xms_app_res", true) }
        writer.objects("xms_sle", xmsSle) { entry, constraint in
            entry.strings("in", constraint.include)
            entry.strings("ex", constraint.exclude)
        }
        writer.string("ipaddr", ipaddr)
        writer.string("idp", idp)
        writer.integer("acct", acct)
        writer.string("deviceid", deviceid)
        return writer.finish()
    }
}

extension IDTokenClaims {
    /// The payload JSON, members in `CodingKeys` order; absent optionals are left out as `JSONEncoder` does.
    var jsonPayload: Data {
        var writer = JSONObjectWriter(capacity: 384)
        writer.string("iss", iss)
        writer.string("aud", aud)
        writer.string("sub", sub)
        writer.string("oid", oid)
        writer.string("tid", tid)
        writer.integer("iat", iat)
        writer.integer("nbf", nbf)
        writer.integer("exp", exp)
        writer.string("ver", ver)
        writer.string("name", name)
        writer.string("email", email)
        writer.string("nonce", nonce)
        writer.strings("amr", amr)
        writer.string("acr", acr)
        writer.string("idp", idp)
        writer.integer("acct", acct)
        writer.string("deviceid", deviceid)
        writer.string("preferred_username", preferredUsername)
        writer.integer("auth_time", authTime)
        return writer.finish()
    }
}

extension JWTHeader {
    /// The header JSON when every field is a string (ours always are), else nil.
    var stringsOnlyJSON: Data? {
        var writer = JSONObjectWriter(capacity: 128)
        for (name, field) in fields.sorted(by: { $0.key < $1.key }) {
            guard case .string(let value) = field else { return nil }
            writer.string(name, value)
        }
        return writer.finish()
    }
}
