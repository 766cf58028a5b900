import Foundation
import PortcullisAPI
import PortcullisCore
import PortcullisServer
import PortcullisTesting
import PortcullisTokens
import Synchronization
import Testing

@testable import PortcullisClient

/// A browser for tests: curl with a cookie jar, following redirects the way a browser does (a 302 after the
/// sign-in form becomes a GET to the app's loopback listener). Runs curl as a child process, off the
/// cooperative thread pool.
final class CurlBrowser: Sendable {
    let jar: URL
    /// The authenticator app's clock: the server's (a test environment's clock stands still), so that a code is for the
    /// step the server checks however long the run has taken to get here.
    let now: @Sendable () -> Date

    init(now: @escaping @Sendable () -> Date = { Date() }) {
        jar = FileManager.default.temporaryDirectory.appendingPathComponent("portcullis-jar-\(UUID().uuidString).txt")
        self.now = now
    }

    deinit { try? FileManager.default.removeItem(at: jar) }

    struct Answer {
        var status: Int
        var body: String
        var finalURL: String
    }

    func fetch(_ url: String, form: [(String, String)]? = nil) async throws -> Answer {
        var arguments = ["-s", "-L", "--max-redirs", "5", "-c", jar.path, "-b", jar.path, "-w", "\n%{http_code} %{url_effective}"]
        for (name, value) in form ?? [] { arguments += ["--data-urlencode", "\(name)=\(value)"] }
        arguments.append(url)
        let output = try await Self.run(arguments)
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false)
        let trailer = lines.last.map(String.init) ?? ""
        let parts = trailer.split(separator: " ", maxSplits: 1)
        return Answer(status: Int(parts.first ?? "") ?? 0, body: lines.dropLast().joined(separator: "\n"), finalURL: parts.count > 1 ? String(parts[1]) : "")
    }

    /// The TOTP secret this browser's user registered on the page (the authenticator app's memory).
    let factorSecret = Mutex<[UInt8]?>(nil)

    /// Opens the authorization URL; when the sign-in page shows, signs in as `account` — and when the page then
    /// asks for a second factor, registers one (or enters its code) like a user with an authenticator app.
    func signIn(_ url: URL, as account: Fixtures.Account) async throws -> Answer {
        let page = try await fetch(url.absoluteString)
        let form = HTMLForm(html: page.body)
        guard let action = form.action, form.fields["ticket"] != nil else { return page }  // SSO: already back at the app
        let origin = "\(url.scheme!)://\(url.host!):\(url.port!)"
        var fields = form.fields.map { ($0.key, $0.value) }
        fields.removeAll { $0.0 == "username" || $0.0 == "password" }
        var answer = page
        if !page.body.contains(#"name="otp""#) {  // the sign-in form or the account picker: credentials
            answer = try await fetch(origin + action, form: fields + [("username", account.upn), ("password", account.password)])
        }
        guard answer.body.contains(#"name="otp""#) else { return answer }
        let factorForm = HTMLForm(html: answer.body)
        if let range = answer.body.range(of: #"id="secret"[^>]*>[A-Z2-7 ]+<"#, options: .regularExpression) {
            let text = answer.body[range].split(separator: ">").last.map { String($0.dropLast()) } ?? ""
            factorSecret.withLock { $0 = Base32.decode(text) }
        }
        guard let secret = factorSecret.withLock({ $0 }) else { return answer }
        let code = TOTP.code(secret: secret, step: TOTP.step(at: now()))
        return try await fetch(
            origin + (factorForm.action ?? ""), form: [("ticket", factorForm.fields["ticket"] ?? ""), ("csrf", factorForm.fields["csrf"] ?? ""), ("otp", code)])
    }

    /// The device page: the code, then the credentials, then "allow".
    func approveDevice(_ info: DeviceCodeInfo, as account: Fixtures.Account) async throws -> Answer {
        let entry = try await fetch(info.verificationURI.absoluteString)
        let origin = "\(info.verificationURI.scheme!)://\(info.verificationURI.host!):\(info.verificationURI.port!)"
        let codeForm = HTMLForm(html: entry.body)
        let signIn = try await fetch(origin + (codeForm.action ?? ""), form: [("csrf", codeForm.fields["csrf"] ?? ""), ("user_code", info.userCode)])
        let form = HTMLForm(html: signIn.body)
        return try await fetch(
            origin + (form.action ?? ""),
            form: [
                ("ticket", form.fields["ticket"] ?? ""), ("csrf", form.fields["csrf"] ?? ""), ("username", account.upn), ("password", account.password),
                ("decision", "allow"),
            ])
    }

    static func run(_ arguments: [String]) async throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try await ChildProcess.launch(process)
        let reader = PipeReader(pipe)
        return await withCheckedContinuation { (continuation: CheckedContinuation<String, Never>) in
            // The whole output once curl closes it (read(2) on a thread: see docs/quirks.md).
            Thread { continuation.resume(returning: String(decoding: reader.readToEnd(), as: UTF8.self)) }.start()
        }
    }
}

@Suite("client SDK: interactive sign-in and device code, end to end")
struct InteractiveClientTests {
    @Test(
        "acquireTokenInteractive through the loopback presenter and a browser: code + PKCE, then silent; prompt=none by SSO; without a session, interactionRequired"
    )
    func loopback() async throws {
        try await withTestEnvironment(baseURL: "http://localhost:0") { env in
            try await withLiveServer(env) { authority in
                let app = Client.app(authority)
                let browser = CurlBrowser()
                let landed = Mutex<[String]>([])
                let presenter = LoopbackPresenter { url in
                    let answer = try? await browser.signIn(url, as: Fixtures.alice)
                    landed.withLock { $0.append(answer?.finalURL ?? "") }
                }
                let result = try await app.acquireTokenInteractive(scopes: [Client.mailScope], presenter: presenter, prompt: nil, loginHint: Fixtures.alice.upn)
                #expect(result.account?.objectId == Fixtures.alice.id)
                #expect(result.claims["amr"] as? [String] == ["pwd"])
                #expect(landed.withLock { $0.first?.hasPrefix("http://localhost:") } == true, "the browser ended at the loopback listener")
                let account = try #require(result.account)
                let silent = try await app.acquireTokenSilent(account: account, scopes: [Client.mailScope], forceRefresh: true)
                #expect(silent.account == account)

                let again = try await app.acquireTokenInteractive(scopes: [Client.mailScope], presenter: presenter, prompt: .never)
                #expect(again.account == account, "prompt=none: the browser's session answered without a page")

                let stranger = CurlBrowser()
                let fresh = LoopbackPresenter { url in _ = try? await stranger.fetch(url.absoluteString) }
                await #expect(throws: PortcullisClientError.self) {
                    do {
                        _ = try await app.acquireTokenInteractive(scopes: [Client.mailScope], presenter: fresh, prompt: .never)
                    } catch let error as PortcullisClientError {
                        #expect(error.kind == .interactionRequired, "\(error)")
                        throw error
                    }
                }
            }
        }
    }

    @Test("protapp: the code is issued, redemption refused (53005); .automatic remediates (compliance token by SSO) and gets the token silently")
    func protectionAfterInteractive() async throws {
        try await withTestEnvironment(baseURL: "http://localhost:0") { env in
            try await withLiveServer(env) { authority in
                try await Client.admin(authority).requireAppProtection()
                let app = Client.app(authority)
                let manager = Client.manager(app)
                let browser = CurlBrowser()
                let pages = Mutex(0)
                let presenter = LoopbackPresenter { url in
                    let answer = try? await browser.signIn(url, as: Fixtures.alice)
                    if answer?.finalURL.contains("/authorize") == false { pages.withLock { $0 += 1 } }
                }
                do {
                    _ = try await app.acquireTokenInteractive(scopes: [Client.mailScope], presenter: presenter)
                    Issue.record("without remediation the token must be refused")
                } catch let error as PortcullisClientError {
                    #expect(error.kind == .protectionPolicyRequired && error.errorCode == 53005, "\(error)")
                    #expect(error.protection?.account.objectId == Fixtures.alice.id)
                }
                #expect(try await app.accounts().first?.objectId == Fixtures.alice.id, "the compliance-service token (by SSO) cached the account")

                let result = try await app.acquireTokenInteractive(scopes: [Client.mailScope], presenter: presenter, remediation: .automatic)
                #expect(result.claims["xms_cc"] as? [String] == ["protapp"])
                let account = try #require(result.account)
                // Both sides must be there: an absent claim must not pass as equal to an absent enrollment.
                let enrolledResult = try #require(await manager.enrollmentId(for: account))
                #expect(result.claims["xms_mam_enrollment"] as? String == enrolledResult)
            }
        }
    }

    @Test(
        "MFA: the password grant answers interactionRequired (50076); acquireTokenInteractive registers the factor on the page; amr pwd+mfa; silent refresh keeps it"
    )
    func secondFactor() async throws {
        try await withTestEnvironment(baseURL: "http://localhost:0") { env in
            try await withLiveServer(env) { authority in
                try await Client.admin(authority).requireFactor(for: Fixtures.bob.id)
                let app = Client.app(authority)
                do {
                    _ = try await app.acquireToken(username: Fixtures.bob.upn, password: Fixtures.bob.password, scopes: [Client.mailScope])
                    Issue.record("the password grant cannot satisfy mfa")
                } catch let error as PortcullisClientError {
                    #expect(error.kind == .interactionRequired && error.errorCode == 50076 && error.oauth?.suberror == "basic_action", "\(error)")
                }
                let browser = CurlBrowser(now: { [clock = env.clock] in clock.now() })
                let presenter = LoopbackPresenter { url in _ = try? await browser.signIn(url, as: Fixtures.bob) }
                let result = try await app.acquireTokenInteractive(scopes: [Client.mailScope], presenter: presenter, loginHint: Fixtures.bob.upn)
                #expect(result.claims["amr"] as? [String] == ["pwd", "mfa"])
                #expect(browser.factorSecret.withLock { $0 } != nil, "the factor was registered on the page")
                let silent = try await app.acquireTokenSilent(account: try #require(result.account), scopes: [Client.mailScope], forceRefresh: true)
                #expect(silent.claims["amr"] as? [String] == ["pwd", "mfa"])
            }
        }
    }

    @Test(
        "step-up: a resource's claims challenge (acrs c1) — acquireToken(for:) tries silently, then signs in with the factor c1 needs; the token carries acrs"
    )
    func stepUp() async throws {
        try await withTestEnvironment(baseURL: "http://localhost:0") { env in
            try await withLiveServer(env) { authority in
                let admin = try await Client.admin(authority)
                let (contextStatus, _) = try await admin.send(
                    "POST", "authentication-context-class-references", json: ["displayName": "Sensitive", "isAvailable": true])
                #expect(contextStatus == 201)
                let (policyStatus, policyBody) = try await admin.send(
                    "POST", "conditional-access/policies",
                    json: [
                        "displayName": "mfa for c1", "state": "enabled",
                        "conditions": [
                            "users": ["includeUsers": [Fixtures.bob.id]],
                            "applications": ["includeApplications": [], "includeAuthenticationContextClassReferences": ["c1"]],
                        ],
                        "grantControls": ["operator": "OR", "builtInControls": ["mfa"]],
                    ])
                #expect(policyStatus == 201, "\(policyBody)")
                let app = Client.app(authority)
                let first = try await app.acquireToken(username: Fixtures.bob.upn, password: Fixtures.bob.password, scopes: [Client.mailScope])
                #expect(first.claims["acrs"] == nil)
                let claims = Data(#"{"access_token":{"acrs":{"essential":true,"value":"c1"}}}"#.utf8).base64EncodedString()
                let challenge = try #require(
                    ClaimsChallenge(
                        wwwAuthenticate:
                            #"Bearer realm="", authorization_uri="\#(authority)/oauth2/v2.0/authorize", error="insufficient_claims", claims="\#(claims)""#))
                let browser = CurlBrowser(now: { [clock = env.clock] in clock.now() })
                let pages = Mutex(0)
                let presenter = LoopbackPresenter { url in
                    pages.withLock { $0 += 1 }
                    _ = try? await browser.signIn(url, as: Fixtures.bob)
                }
                let stepped = try await app.acquireToken(for: challenge, account: try #require(first.account), scopes: [Client.mailScope], presenter: presenter)
                #expect(stepped.claims["acrs"] as? [String] == ["c1"] && stepped.claims["amr"] as? [String] == ["pwd", "mfa"], "\(stepped.claims)")
                #expect(pages.withLock { $0 } == 1 && browser.factorSecret.withLock { $0 } != nil, "one page, where the factor was registered")
                // Met now: the same challenge is answered silently.
                let again = try await app.acquireToken(for: challenge, account: try #require(stepped.account), scopes: [Client.mailScope], presenter: presenter)
                #expect(again.claims["acrs"] as? [String] == ["c1"] && pages.withLock { $0 } == 1)
            }
        }
    }

    @Test("acquireTokenByDeviceCode: the code shown, the user approves on /devicelogin, polling ends with tokens")
    func deviceCode() async throws {
        try await withTestEnvironment(baseURL: "http://localhost:0", configure: { $0.signIn.deviceCodeInterval = 1 }) { env in
            try await withLiveServer(env) { authority in
                let app = Client.app(authority)
                let browser = CurlBrowser()
                let shown = Mutex<DeviceCodeInfo?>(nil)
                let result = try await app.acquireTokenByDeviceCode(scopes: [Client.mailScope]) { info in
                    shown.withLock { $0 = info }
                    Task.detached { _ = try? await browser.approveDevice(info, as: Fixtures.bob) }
                }
                #expect(result.account?.objectId == Fixtures.bob.id)
                let info = try #require(shown.withLock { $0 })
                #expect(info.message.contains(info.userCode) && info.verificationURI.path == "/devicelogin")
            }
        }
    }
}
