import Foundation
import PortcullisCore
import Testing

@Suite("Client credentials beyond secrets (PROTOCOL §21): certificates on applications, assertions' claims")
struct ClientCredentialTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let client: AppID = "d0c00000-0000-4000-8000-0000000000e2"
    static let tenant = Tenant(id: "d0c00000-0000-4000-8000-000000000001", domain: "docs.test", displayName: "Docs")
    static let audiences = ClientAssertionRules.audiences(base: "https://login.test", tenant: tenant)

    static func claims(_ edit: (inout [String: JSONValue]) -> Void = { _ in }) -> JSONValue {
        var object: [String: JSONValue] = [
            "iss": .string(client.rawValue.uppercased()), "sub": .string(client.rawValue), "aud": "https://login.test/docs.test/oauth2/v2.0/token",
            "exp": .number(now.timeIntervalSince1970 + 600), "nbf": .number(now.timeIntervalSince1970 - 0.25),
            "iat": .number(now.timeIntervalSince1970 - 0.25), "jti": "j-1",
        ]
        edit(&object)
        return .object(object)
    }

    /// The pointers of the problems of an application document read through the admin API's path, sorted.
    static func problems(_ body: String, _ write: DocumentWrite) async -> [String] {
        do {
            _ = try await Application.read(AdministeredDocumentTests.json(body), in: write)
            return []
        } catch let error as ValidationError {
            return error.problems.map(\.pointer).sorted()
        } catch {
            return ["?"]
        }
    }

    static func code(_ claims: JSONValue) -> Int? {
        do {
            _ = try ClientAssertionRules.check(claims, clientId: client, audiences: audiences, now: now)
            return nil
        } catch {
            return error.aadsts
        }
    }

    @Test("claims as Entra keeps them: iss = sub = the client, one of the tenant's audiences, exp at most 10 minutes ahead, a jti")
    func claimsChecked() throws {
        let checked = try ClientAssertionRules.check(Self.claims(), clientId: Self.client, audiences: Self.audiences, now: Self.now)
        #expect(checked.jti == "j-1" && checked.expires == Self.now.addingTimeInterval(600))
        for aud in [
            "https://login.test/\(Self.tenant.id)/oauth2/v2.0/token", "https://LOGIN.test/docs.test/oauth2/token", "https://login.test/docs.test/v2.0",
            "https://login.test/docs.test/",
        ] {
            #expect(Self.code(Self.claims { $0["aud"] = .string(aud) }) == nil, "\(aud)")
        }
        #expect(Self.code(Self.claims { $0["aud"] = ["https://other.test", "https://login.test/docs.test/v2.0"] }) == nil)
        #expect(Self.code(Self.claims { $0["aud"] = "https://login.test/other.test/oauth2/v2.0/token" }) == 700023)
        #expect(Self.code(Self.claims { $0["iss"] = "d0c00000-0000-4000-8000-0000000000e3" }) == 700021)
        #expect(Self.code(Self.claims { $0["sub"] = nil }) == 700021)
        #expect(Self.code(Self.claims { $0["exp"] = .number(Self.now.timeIntervalSince1970 + 661) }) == 700024)
        #expect(Self.code(Self.claims { $0["exp"] = .number(Self.now.timeIntervalSince1970 + 659) }) == nil)
        #expect(Self.code(Self.claims { $0["exp"] = .number(Self.now.timeIntervalSince1970 - 61) }) == 700024)
        #expect(Self.code(Self.claims { $0["exp"] = nil }) == 50027)
        #expect(Self.code(Self.claims { $0["nbf"] = .number(Self.now.timeIntervalSince1970 + 120) }) == 700024)
        #expect(Self.code(Self.claims { $0["iat"] = .number(Self.now.timeIntervalSince1970 + 120) }) == 700024)
        #expect(Self.code(Self.claims { $0["nbf"] = nil }) == nil)
        #expect(Self.code(Self.claims { $0["jti"] = nil }) == 50027)
        #expect(Self.code(.array([])) == 50027)
    }

    @Test("an application's keyCredentials: read through the server's reader, kept by keyId, one per certificate, at pointers")
    func applicationCertificates() async throws {
        let write = AdministeredDocumentTests.write(AdministeredDocumentTests.tenant())
        let base = #""appId": "d0c00000-0000-4000-8000-0000000000e2", "displayName": "Daemon", "allowedGrantTypes": ["client_credentials"]"#
        let made = try await Application.read(
            AdministeredDocumentTests.json(#"{\#(base), "keyCredentials": [{"key": "cert:a", "displayName": "A"}, {"key": "cert:a"}, {"key": "cert:b"}]}"#),
            in: write)
        #expect(made.keyCredentials.map(\.thumbprint) == ["T-cert:a", "T-cert:b"])
        #expect(made.keyCredentials[0].displayName == "A" && made.keyCredentials[0].type == "AsymmetricX509Cert")
        var known = made.keyCredentials[0]
        known.thumbprint = "00FF10"
        #expect(known.customKeyIdentifier == Data([0x00, 0xFF, 0x10]).base64EncodedString())
        // Stored, a replace naming one by keyId keeps it; without the member, all stay.
        let stored = AdministeredDocumentTests.write(AdministeredDocumentTests.tenant { $0.applications.append(made) })
        let kept = try await Application.read(
            AdministeredDocumentTests.json(#"{\#(base), "keyCredentials": [{"keyId": "\#(made.keyCredentials[1].keyId)", "type": "AsymmetricX509Cert"}]}"#),
            in: stored)
        #expect(kept.keyCredentials == [made.keyCredentials[1]])
        #expect(try await Application.read(AdministeredDocumentTests.json(#"{\#(base)}"#), in: stored).keyCredentials == made.keyCredentials)
        func problems(_ body: String) async -> [String] { await Self.problems(body, write) }
        #expect(await problems(#"{\#(base), "keyCredentials": [{"key": "junk"}]}"#) == ["/keyCredentials/0/key"])
        #expect(await problems(#"{\#(base), "keyCredentials": [{"keyId": "d0c00000-0000-4000-8000-0000000000ff"}]}"#) == ["/keyCredentials/0/keyId"])
        #expect(await problems(#"{\#(base), "keyCredentials": [{"displayName": "x"}]}"#) == ["/keyCredentials/0"])
        #expect(await problems(#"{\#(base), "keyCredentials": [{"key": "cert:a", "password": "x"}]}"#) == ["/keyCredentials/0/password"])
        let many = (0..<11).map { #"{"key": "cert:\#($0)"}"# }.joined(separator: ",")
        #expect(await problems(#"{\#(base), "keyCredentials": [\#(many)]}"#) == ["/keyCredentials"])
        #expect(
            await problems(
                #"{"appId": "d0c00000-0000-4000-8000-0000000000e2", "displayName": "App", "publicClient": true, "keyCredentials": [{"key": "cert:a"}]}"#)
                == ["/keyCredentials"])
    }

    @Test("federated credentials: Graph's rules at pointers, kept by a replace without them, IDs stable")
    func federatedCredentials() async throws {
        let write = AdministeredDocumentTests.write(AdministeredDocumentTests.tenant())
        let base = #""appId": "d0c00000-0000-4000-8000-0000000000e2", "displayName": "Daemon", "allowedGrantTypes": ["client_credentials"]"#
        let cluster = #"{"name": "cluster-1", "issuer": "https://k8s.test", "subject": "system:serviceaccount:ns:sa"}"#
        let made = try await Application.read(AdministeredDocumentTests.json(#"{\#(base), "federatedIdentityCredentials": [\#(cluster)]}"#), in: write)
        let credential = try #require(made.federatedIdentityCredentials.first)
        #expect(credential.audiences == [FederatedIdentityCredential.defaultAudience] && credential.issuer == "https://k8s.test")
        #expect(credential.id == FederatedIdentityCredential.id(appId: Self.client, name: "cluster-1"))
        #expect(credential.discoveryURL == "https://k8s.test/.well-known/openid-configuration")
        let stored = AdministeredDocumentTests.write(AdministeredDocumentTests.tenant { $0.applications.append(made) })
        #expect(try await Application.read(AdministeredDocumentTests.json(#"{\#(base)}"#), in: stored).federatedIdentityCredentials == [credential])
        #expect(
            try await Application.read(AdministeredDocumentTests.json(#"{\#(base), "federatedIdentityCredentials": []}"#), in: stored)
                .federatedIdentityCredentials.isEmpty)
        func problems(_ items: String, publicClient: Bool = false) async -> [String] {
            await Self.problems(#"{\#(base), "publicClient": \#(publicClient), "federatedIdentityCredentials": [\#(items)]}"#, write)
        }
        #expect(
            await problems(#"{"name": "ab", "issuer": "http://k8s.test", "subject": "s", "audiences": ["a", "b"]}"#)
                == ["/federatedIdentityCredentials/0/audiences", "/federatedIdentityCredentials/0/issuer", "/federatedIdentityCredentials/0/name"])
        #expect(await problems(#"{"name": "-abc", "issuer": "https://k8s.test/?q=1", "subject": "s"}"#).count == 2)
        #expect(await problems(#"{"name": "abc", "issuer": "https://k8s.test"}"#) == ["/federatedIdentityCredentials/0/subject"])
        #expect(await problems("\(cluster), \(cluster)") == ["/federatedIdentityCredentials/1/name"])
        #expect(
            await problems(#"\#(cluster), {"name": "cluster-2", "issuer": "https://k8s.test", "subject": "system:serviceaccount:ns:sa"}"#)
                == ["/federatedIdentityCredentials/1/subject"])
        #expect(await problems(cluster, publicClient: true).contains("/federatedIdentityCredentials"))
        let many = (0..<21).map { #"{"name": "c-\#($0)", "issuer": "https://k8s.test", "subject": "s\#($0)"}"# }.joined(separator: ",")
        #expect(await problems(many) == ["/federatedIdentityCredentials"])
    }

    @Test("a federated token matches a credential's issuer, subject and audience exactly, and is honoured until its exp")
    func federatedMatch() throws {
        let credentials = [
            FederatedIdentityCredential(
                id: "d0c00000-0000-4000-8000-0000000000f1", name: "a", issuer: "https://k8s.test", subject: "sa-1", audiences: ["api://AzureADTokenExchange"]),
            FederatedIdentityCredential(
                id: "d0c00000-0000-4000-8000-0000000000f2", name: "b", issuer: "https://k8s.test", subject: "sa-2", audiences: ["api://other"]),
        ]
        func token(_ edit: (inout [String: JSONValue]) -> Void = { _ in }) -> JSONValue {
            var object: [String: JSONValue] = [
                "iss": "https://k8s.test", "sub": "sa-1", "aud": ["api://AzureADTokenExchange"], "exp": .number(Self.now.timeIntervalSince1970 + 86400),
                "iat": .number(Self.now.timeIntervalSince1970 - 5),
            ]
            edit(&object)
            return .object(object)
        }
        func code(_ claims: JSONValue) -> Int? {
            do {
                _ = try FederatedIdentityCredential.match(claims, among: credentials, now: Self.now)
                return nil
            } catch {
                return error.aadsts
            }
        }
        let matched = try FederatedIdentityCredential.match(token(), among: credentials, now: Self.now)
        #expect(matched.credential.name == "a" && matched.expires == Self.now.addingTimeInterval(86400))
        #expect(
            try FederatedIdentityCredential.match(
                token {
                    $0["sub"] = "sa-2"
                    $0["aud"] = "api://other"
                }, among: credentials, now: Self.now
            ).credential.name == "b")
        #expect(code(token { $0["iss"] = "https://k8s.test/" }) == 700211)
        #expect(code(token { $0["iss"] = "https://K8S.test" }) == 700211)
        #expect(code(token { $0["sub"] = "SA-1" }) == 700213)
        #expect(code(token { $0["aud"] = "api://other" }) == 700212)
        #expect(code(token { $0["aud"] = nil }) == 700212)
        #expect(code(token { $0["exp"] = .number(Self.now.timeIntervalSince1970 - 61) }) == 700024)
        #expect(code(token { $0["exp"] = .number(Self.now.timeIntervalSince1970 - 30) }) == nil)
        #expect(code(token { $0["exp"] = nil }) == 50027)
        #expect(code(token { $0["nbf"] = .number(Self.now.timeIntervalSince1970 + 120) }) == 700024)
        #expect(code(token { $0["iat"] = "yesterday" }) == 700024)
        let long = String(repeating: "x", count: 500)
        do {
            _ = try FederatedIdentityCredential.match(token { $0["sub"] = .string(long) }, among: credentials, now: Self.now)
            Issue.record("matched")
        } catch {
            #expect(error.message.count < 400)
        }
    }
}
