import ArgumentParser
import Foundation
import PortcullisAPI
import PortcullisClient
import PortcullisClientKeys
import PortcullisCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Options shared by the client commands (they use the client SDK, like an app would).
struct ClientOptions: ParsableArguments {
    @Option(help: "Authority URL, e.g. http://127.0.0.1:8080/contoso.example")
    var authority: String

    @Option(name: .customLong("client-id"), help: "The client application's ID.")
    var clientId: String

    @Option(name: .customLong("capability"), help: "Client capability to declare (repeatable), e.g. protapp.")
    var capabilities: [String] = []

    @Option(help: "Platform this client reports (x-client-SKU): iOS, android, windows, macOS or linux.")
    var platform: String = "linux"

    @Option(help: "Where the client keeps its token cache and enrollment state between runs.")
    var state: String = ".portcullis-client"

    var stateURL: URL { URL(fileURLWithPath: state) }

    /// `dpop`: bind the tokens to this client's instance key (`<state>/keys/dpop-instance.pem`).
    func application(dpop: Bool = false) throws -> PublicClientApplication {
        guard let url = URL(string: authority) else { throw ValidationError("--authority is not a URL") }
        var configuration = ClientConfiguration(
            authority: url, clientId: clientId, capabilities: capabilities, sku: "PortcullisClient.\(platform)",
            osDescription: platform)
        let keys = FileInstanceKeyStore(directory: stateURL.appendingPathComponent("keys"))
        if dpop { configuration.dpop = DPoPProofMaker(key: keys) }
        // The instance's device key (PROTOCOL §18): token requests answer PKeyAuth with it once `device register` ran.
        configuration.device = keys
        return PublicClientApplication(configuration: configuration, cache: FileTokenCache(url: stateURL.appendingPathComponent("tokens.json")))
    }
}

/// The app side of remediation for the CLI: applies the policy by printing it.
struct PrintingApplier: PolicyApplier {
    let pinSet: Bool

    func apply(_ policy: PolicyDocument, for account: Account, interactive: Bool) async -> PolicyApplication {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let settings = (try? encoder.encode(policy.settings)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        FileHandle.standardError.write(Data("applying policy \(policy.version) for \(account.username): \(settings)\n".utf8))
        return PolicyApplication(applied: true, pinSet: pinSet || (interactive && policy.settings.pinRequired == true))
    }
}

func printJSON(_ object: Any) {
    let data = (try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
    print(String(decoding: data, as: UTF8.self))
}

func describe(_ error: PortcullisClientError) -> [String: Any] {
    var body: [String: Any] = ["kind": "\(error.kind)", "message": error.message]
    if let oauth = error.oauth {
        body["error"] = oauth.error
        body["suberror"] = oauth.suberror
        body["error_codes"] = oauth.errorCodes
        body["correlation_id"] = oauth.correlationId
    }
    if let protection = error.protection {
        body["account"] = ["home_account_id": protection.account.homeAccountId, "upn": protection.account.username]
        body["remediation_endpoint"] = protection.remediationEndpoint?.absoluteString
        body["policy_ids"] = protection.policyIds
    }
    if let code = error.code { body["code"] = code }
    if let status = error.complianceStatus {
        body["compliance_status"] = ["status": status.status.rawValue, "errorTitle": status.errorTitle ?? "", "errorMessage": status.errorMessage ?? ""]
    }
    return body
}

struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Request a token through the client SDK; print its claims, or the refusal as JSON (exit 1)."
    )

    @OptionGroup var client: ClientOptions

    @Option(help: "Resource scope (repeatable), e.g. api://contoso-mail/Mail.Read")
    var scope: [String]

    @Option(help: "User name: for the password grant; the login_hint with --interactive; without --password, the cached account is used silently.")
    var username: String?

    @Option(help: "Password (password grant).")
    var password: String?

    @Flag(help: "On protection_policy_required, remediate once and retry (like acquireToken(remediation: .automatic)).")
    var remediate = false

    @Option(name: .customLong("device-id"), help: "This app instance (used when remediating).")
    var deviceId: String = "cli-device"

    @Flag(
        help:
            "Sign in interactively: authorization code + PKCE through the sign-in page in a browser, redirected back to a loopback listener (http://localhost:PORT)."
    )
    var interactive = false

    @Option(name: .customLong("redirect-port"), help: "Port of the loopback listener for --interactive (0: any free port; the app registers http://localhost).")
    var redirectPort: UInt16 = 0

    @Flag(name: .customLong("device-code"), help: "Sign in with the device code flow: a code to enter at /devicelogin on any device.")
    var deviceCode = false

    @Option(
        name: .customLong("claims-challenge"),
        help: ArgumentHelp(
            "A resource's claims challenge: its WWW-Authenticate value (Bearer …, error=\"insufficient_claims\", claims=\"…\") or the claims JSON.",
            discussion:
                "With a cached account the token is asked for silently with these claims and, when that needs the user (step-up), in the browser as with --interactive."
        ))
    var claimsChallenge: String?

    @Flag(help: "Bind the tokens to this client's instance key with DPoP proofs (RFC 9449; the key is kept under --state).")
    var dpop = false

    @Flag(name: .customLong("show-token"), help: "Print the access token itself too (it is a credential: keep it out of logs).")
    var showToken = false

    @Option(
        name: .customLong("call"),
        help: "Then GET this resource URL with the token (Bearer, or DPoP with a proof for the URL) and print its status and body.")
    var call: String?

    func validate() throws {
        if let claimsChallenge, Self.challenge(claimsChallenge) == nil {
            throw ValidationError(
                "--claims-challenge is neither a WWW-Authenticate claims challenge (error=\"insufficient_claims\", claims=\"…\") nor a claims JSON object")
        }
        if interactive && deviceCode { throw ValidationError("--interactive and --device-code are two ways to sign in; choose one") }
        if (interactive || deviceCode) && password != nil {
            throw ValidationError("--password is for the password grant; the interactive flows ask on the page")
        }
    }

    func run() async throws {
        let app = try client.application(dpop: dpop)
        if let call, URL(string: call)?.host == nil { throw ValidationError("--call is not a URL") }
        _ = ComplianceManager(
            application: app, device: DeviceInfo(deviceId: deviceId, platform: client.platform, osVersion: "17.4", appVersion: "3.1"),
            applier: PrintingApplier(pinSet: true), stateStore: FileComplianceStateStore(url: client.stateURL.appendingPathComponent("compliance.json")))
        do {
            let result: AuthenticationResult
            let mode: RemediationMode = remediate ? .automatic : .none
            let challenge = claimsChallenge.flatMap(Self.challenge)
            let presenter = LoopbackPresenter(port: redirectPort) { url in
                FileHandle.standardError.write(Data("Sign in in your browser:\n  \(url.absoluteString)\n".utf8))
                BrowserOpener.open(url)
            }
            if interactive {
                result = try await app.acquireTokenInteractive(
                    scopes: scope, presenter: presenter, loginHint: username, claimsChallenge: challenge?.claims, remediation: mode)
            } else if deviceCode {
                result = try await app.acquireTokenByDeviceCode(scopes: scope, claimsChallenge: challenge?.claims, remediation: mode) { info in
                    FileHandle.standardError.write(Data((info.message + "\n").utf8))
                }
            } else if let username, let password {
                result = try await app.acquireToken(
                    username: username, password: password, scopes: scope, claimsChallenge: challenge?.claims, remediation: mode)
            } else {
                guard let account = try await app.accounts().first(where: { username == nil || $0.matches(identity: username!) }) else {
                    throw ValidationError("no cached account\(username.map { " for \($0)" } ?? ""); pass --username and --password")
                }
                if let challenge {
                    // Step-up: silently if this authentication meets it, else in the browser with the same claims.
                    result = try await app.acquireToken(for: challenge, account: account, scopes: scope, presenter: presenter, remediation: mode)
                } else {
                    result = try await app.acquireTokenSilent(account: account, scopes: scope, forceRefresh: true, remediation: mode)
                }
            }
            var output: [String: Any] = [
                "claims": result.claims, "expires_on": result.expiresOn.formatted(.iso8601), "scope": result.scopes, "token_type": result.tokenType,
            ]
            if showToken { output["access_token"] = result.accessToken }
            if let call, let url = URL(string: call) { output["call"] = try await Self.call(url, with: result, dpop: app.configuration.dpop) }
            printJSON(output)
        } catch let error as PortcullisClientError {
            printJSON(["refused": describe(error)])
            throw ExitCode(1)
        }
    }
}

extension TokenCommand {
    /// `--call`: the resource's answer to the token, presented as its type requires.
    static func call(_ url: URL, with result: AuthenticationResult, dpop: DPoPProofMaker?) async throws -> [String: Any] {
        var request = URLRequest(url: url)
        let headers = try await dpop?.resourceHeaders(for: result, method: "GET", url: url) ?? ["Authorization": "Bearer \(result.accessToken)"]
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = response as? HTTPURLResponse
        var answer: [String: Any] = ["status": http?.statusCode ?? 0, "body": String(decoding: data.prefix(4096), as: UTF8.self)]
        if let challenge = http?.value(forHTTPHeaderField: "WWW-Authenticate") { answer["www_authenticate"] = challenge }
        return answer
    }

    /// `--claims-challenge`: a WWW-Authenticate value, else claims JSON.
    static func challenge(_ text: String) -> ClaimsChallenge? {
        ClaimsChallenge(wwwAuthenticate: text) ?? ClaimsChallenge(claims: text)
    }
}

/// Opens a URL in the desktop's browser when there is one (`xdg-open` on Linux, `open` on macOS); the URL is
/// printed either way, so a headless machine's user copies it.
enum BrowserOpener {
    static func open(_ url: URL) {
        #if os(macOS)
        let candidates = ["/usr/bin/open"]
        #else
        let candidates = ["/usr/bin/xdg-open", "/usr/local/bin/xdg-open"]
        #endif
        guard ProcessInfo.processInfo.environment["PORTCULLIS_NO_BROWSER"] == nil,
            let tool = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) })
        else { return }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = [url.absoluteString]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try? process.run()
    }
}

struct RemediateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remediate",
        abstract: "Remediate app protection for a cached account (enroll, apply the policy, check in) and print the compliance status."
    )

    @OptionGroup var client: ClientOptions

    @Option(help: "The account (UPN or object ID) to remediate; default: the only cached one.")
    var account: String?

    @Option(name: .customLong("device-id"), help: "This app instance.")
    var deviceId: String = "cli-device"

    @Option(name: .customLong("os-version")) var osVersion: String = "17.4"
    @Option(name: .customLong("app-version")) var appVersion: String = "3.1"
    @Flag(help: "Report a jailbroken device.") var jailbroken = false
    @Flag(name: .customLong("no-pin"), help: "Report that no app PIN is set.") var noPin = false
    @Flag(help: "Allow user interaction (silent: false): the PIN can be set.") var interactive = false
    @Option(name: .customLong("callback-uri"), help: "One of the app's registered complianceCallbackUris.") var callbackUri: String?
    @Flag(help: "Unenroll the account instead (log out the managed account).") var unenroll = false
    @Flag(name: .customLong("show-configuration"), help: "Once compliant, print the organization's configuration for this app (PROTOCOL §8.2).")
    var showConfiguration = false
    @Flag(help: "With --show-configuration: keep printing each change until interrupted (long polling).") var follow = false
    @Option(help: "Once compliant, fetch the secret with this identifier (repeatable), open it with this instance's key and print it (PROTOCOL §8.2).")
    var secret: [String] = []
    @Option(
        help:
            "Once compliant, request the device identity with this identifier (repeatable): a CSR for this instance's key, certified by the tenant's CA; prints the chain."
    )
    var identity: [String] = []

    func validate() throws {
        if follow && !showConfiguration { throw ValidationError("--follow goes with --show-configuration") }
        if follow && !(secret.isEmpty && identity.isEmpty) {
            throw ValidationError("--follow prints configuration until interrupted; fetch secrets in another run")
        }
    }

    func run() async throws {
        let app = try client.application()
        // The instance key (one per account, in a 0600 file under the state directory) is registered at
        // remediation; secrets are sealed to it.
        let manager = ComplianceManager(
            application: app,
            device: DeviceInfo(deviceId: deviceId, platform: client.platform, osVersion: osVersion, appVersion: appVersion, jailbroken: jailbroken),
            applier: PrintingApplier(pinSet: !noPin), stateStore: FileComplianceStateStore(url: client.stateURL.appendingPathComponent("compliance.json")),
            callbackUri: callbackUri, keyStore: FileInstanceKeyStore(directory: client.stateURL.appendingPathComponent("keys")))
        let accounts = try await app.accounts()
        guard let target = accounts.first(where: { account == nil || $0.matches(identity: account!) }) else {
            throw ValidationError("no cached account\(account.map { " \($0)" } ?? ""); sign in with `portcullis token` first")
        }
        if unenroll {
            try await manager.unenroll(account: target)
            printJSON(["account": target.username, "unenrolled": true])
            return
        }
        let status = await manager.remediate(account: target, silent: !interactive)
        var body: [String: Any] = ["account": target.username, "status": status.status.rawValue]
        if let title = status.errorTitle { body["errorTitle"] = title }
        if let message = status.errorMessage { body["errorMessage"] = message }
        if let id = await manager.enrollmentId(for: target) { body["enrollmentId"] = id }
        printJSON(body)
        if status.status != .compliant { throw ExitCode(1) }
        let provider = ManagedAppConfigurationProvider(manager: manager)
        do {
            for identifier in secret {
                let material = try await provider.secret(identifier, for: target)
                var shown: [String: Any] = [:]
                if let password = material.password { shown["password"] = password }
                if let certificates = material.certificatesPem { shown["certificatesPem"] = certificates }
                if let key = material.privateKeyPem { shown["privateKeyPem"] = key }
                printJSON(["account": target.username, "identifier": identifier, "secret": shown])
            }
            for identifier in identity {
                let issued = try await provider.identity(identifier, for: target)
                var shown: [String: Any] = ["certificatesPem": issued.certificatesPem]
                if let notAfter = issued.notAfter { shown["notAfter"] = notAfter.formatted(.iso8601) }
                shown["key"] = issued.privateKeyPem == nil ? "this instance's key (\(client.stateURL.appendingPathComponent("keys").path))" : "uploaded"
                printJSON(["account": target.username, "identifier": identifier, "identity": shown])
            }
        } catch let error as PortcullisClientError {
            printJSON(describe(error))
            throw ExitCode(1)
        }
        guard showConfiguration else { return }
        for await configuration in provider.configurations(of: JSONValue.self, for: target) {
            let shown: Any = configuration.flatMap { try? JSONSerialization.jsonObject(with: JSONEncoder().encode($0)) } ?? NSNull()
            printJSON(["account": target.username, "configuration": shown])
            if !follow { break }
        }
    }
}
