import ArgumentParser
import Foundation
import JWTKit
import PortcullisAPI
import PortcullisTokens

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

struct VerifyTokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify-token",
        abstract: "Verify an access token against an authority's published JWKS (as a resource server would) and print its header and claims."
    )

    @Option(help: "Authority URL, e.g. http://127.0.0.1:8080/contoso.example")
    var authority: String

    @Option(help: "Expected audience (aud).")
    var audience: String?

    @Argument(help: "The token; '-' reads it from standard input.")
    var token: String

    func run() async throws {
        let token = (self.token == "-" ? (readLine(strippingNewline: true) ?? "") : self.token).trimmingCharacters(in: .whitespacesAndNewlines)
        let base = authority.hasSuffix("/") ? String(authority.dropLast()) : authority
        let discovery = try JSONDecoder().decode(DiscoveryDocument.self, from: try await fetch("\(base)/v2.0/.well-known/openid-configuration"))
        let jwks = try await fetch(discovery.jwksUri)
        let keys = try await JWTKeyCollection().add(jwksJSON: String(decoding: jwks, as: UTF8.self))
        let claims: AccessTokenClaims
        do {
            claims = try await keys.verify(token, as: AccessTokenClaims.self)
        } catch {
            throw ValidationError("the signature does not verify against \(discovery.jwksUri)")
        }
        let now = Int(Date().timeIntervalSince1970)
        var problems: [String] = []
        if claims.iss != discovery.issuer { problems.append("iss is \(claims.iss), expected \(discovery.issuer)") }
        if let audience, claims.aud.lowercased() != audience.lowercased() { problems.append("aud is \(claims.aud), expected \(audience)") }
        if claims.exp <= now { problems.append("expired at \(claims.exp)") }
        if claims.nbf > now { problems.append("not valid before \(claims.nbf)") }
        let header = token.split(separator: ".").first.flatMap { Base64URL.decode(String($0)) }.map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        print("header: \(header)")
        print(String(decoding: try encoder.encode(claims), as: UTF8.self))
        if problems.isEmpty {
            print("signature: valid (\(discovery.jwksUri)); issuer, time\(audience == nil ? "" : " and audience") check out")
        } else {
            throw ValidationError("signature valid, but: " + problems.joined(separator: "; "))
        }
    }

    private func fetch(_ url: String) async throws -> Data {
        guard let target = URL(string: url) else { throw ValidationError("not a URL: \(url)") }
        let (data, response) = try await URLSession.shared.data(from: target)
        guard (response as? HTTPURLResponse)?.statusCode == 200 else {
            throw ValidationError("\(url) answered \((response as? HTTPURLResponse)?.statusCode ?? 0)")
        }
        return data
    }
}
