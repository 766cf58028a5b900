import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import JWTKit
import PortcullisAPI
import PortcullisTesting
import PortcullisTokens
import Testing

/// Runs a program, returning its exit status and output.
func run(_ executable: String, _ arguments: [String]) async throws -> (status: Int32, stdout: String, stderr: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try await ChildProcess.launch(process)
    let outReader = PipeReader(out)
    let errReader = PipeReader(err)
    let stdout = outReader.readToEnd()
    let stderr = errReader.readToEnd()
    let status = ChildProcess.waitForExit(of: process)
    return (status, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self))
}

let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

struct InteropSetupError: Error { let message: String }

/// The libjwt verifier (Tests/Interop/jwt_verify.c), compiled once per test run (the tests that need it wait for it).
let libjwtVerifier = Task<String, any Error> {
    let output = FileManager.default.temporaryDirectory.appendingPathComponent("portcullis-jwt-verify-\(getpid())").path
    let compiled = try await run(
        "/usr/bin/gcc", ["-O1", "-Wall", "-o", output, packageRoot.appendingPathComponent("Tests/Interop/jwt_verify.c").path, "-ljwt"])
    guard compiled.status == 0 else { throw InteropSetupError(message: "gcc failed (is libjwt-dev installed?): \(compiled.stderr)") }
    return output
}

@Suite("interoperability: libjwt and jwt-kit verify our tokens from the JWKS alone")
struct InteropTests {
    @Test("libjwt 1.10 verifies access and ID tokens, and refuses tampered, wrong-audience and expired ones", arguments: [SigningAlgorithm.es256, .rs256])
    func libjwt(_ algorithm: SigningAlgorithm) async throws {
        let verifier = try await libjwtVerifier.value
        try await withTestEnvironment(algorithm: algorithm) { env in
            let (access, id) = try await env.application().test(.router) { client in
                let reply = try await client.token(Grants.password())
                return (reply.string("access_token") ?? "", reply.string("id_token") ?? "")
            }
            let dir = env.root
            let pem = dir.appendingPathComponent("public.pem")
            try Data(env.signer.active.publicKeyPEM.utf8).write(to: pem)
            func verify(
                _ token: String, aud: String, alg: String = algorithm.rawValue, now: Date = Date()
            ) async throws -> (status: Int32, stdout: String, stderr: String) {
                let file = dir.appendingPathComponent("token-\(UUID().uuidString)")
                try Data(token.utf8).write(to: file)
                return try await run(
                    verifier, [file.path, pem.path, alg, "http://portcullis.test/\(Fixtures.tenantId)/v2.0", aud, String(Int(now.timeIntervalSince1970))])
            }
            let ok = try await verify(access, aud: Fixtures.mailApiId)
            #expect(ok.status == 0, "\(ok.stderr)")
            #expect(ok.stdout.contains(Fixtures.alice.id))
            let idOk = try await verify(id, aud: Fixtures.mobileClientId)
            #expect(idOk.status == 0, "\(idOk.stderr)")

            let parts = access.split(separator: ".").map(String.init)
            var signature = Array(Base64URL.decode(parts[2]) ?? Data())
            signature[signature.count / 2] ^= 0x40
            #expect(try await verify("\(parts[0]).\(parts[1]).\(Base64URL.encode(signature))", aud: Fixtures.mailApiId).status != 0)
            #expect(try await verify(access, aud: "api://someone-else").status != 0)
            #expect(try await verify(access, aud: Fixtures.mailApiId, now: Date().addingTimeInterval(7200)).status != 0)
            let otherAlg = algorithm == .es256 ? "RS256" : "ES256"
            #expect(try await verify(access, aud: Fixtures.mailApiId, alg: otherAlg).status != 0)
        }
    }

    @Test("a fresh jwt-kit key collection built from the served JWKS verifies the token")
    func jwtKitFromJWKS() async throws {
        try await withTestEnvironment(algorithm: .rs256) { env in
            let (token, jwks) = try await env.application().test(.router) { client in
                let reply = try await client.token(Grants.clientCredentials())
                let keys = try await client.execute(uri: "/\(Fixtures.domain)/discovery/v2.0/keys", method: .get) { String(buffer: $0.body) }
                return (reply.string("access_token") ?? "", keys)
            }
            let collection = try await JWTKeyCollection().add(jwksJSON: jwks)
            let claims = try await collection.verify(token, as: AccessTokenClaims.self)
            #expect(claims.aud == Fixtures.mailApiId)
            #expect(claims.roles == ["Mail.ReadAll"])
        }
    }
}
