import AsyncHTTPClient
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import NIOHTTP1
import PortcullisAPI
import PortcullisClient
import PortcullisClientKeys
import PortcullisServer
import PortcullisTesting
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An app's policy applier whose user can cancel (the PIN prompt, say).
final class CancellableApplier: PolicyApplier, Sendable {
    let cancels = Atomic<Bool>(false)
    func apply(_ policy: PolicyDocument, for account: Account, interactive: Bool) async -> PolicyApplication {
        if interactive && cancels.load(ordering: .relaxed) { return .cancelled }
        return PolicyApplication(applied: true, pinSet: true)
    }
}

/// A delegate that agrees to switches, hears refusals, and leaves the files of a wipe to the SDK (`false`, seed 002).
final class AppDelegate: ComplianceDelegate, Sendable {
    let refusals = Mutex<[ComplianceStatusValue?]>([])
    let wipes = Atomic<Int>(0)
    func wipeData(for account: Account) async -> Bool {
        wipes.add(1, ordering: .relaxed)
        return false
    }
    func identitySwitchRequired(to account: Account?) async -> Bool { true }
    func identitySwitchRefused(to account: Account?, status: ComplianceStatus?) async { refusals.withLock { $0.append(status?.status) } }
}

/// The SDK's participation features (PROTOCOL §16, seeds 002/003) against the real server.
@Suite("SDK participation through the server")
struct AppParticipationTests {
    static func manager(
        _ app: PublicClientApplication, applier: any PolicyApplier, delegate: (any ComplianceDelegate)?, store: any ComplianceStateStore,
        keys: (any InstanceKeyStore)? = nil, files: [URL] = []
    ) -> ComplianceManager {
        ComplianceManager(
            application: app, device: DeviceInfo(deviceId: "phone-1", platform: "iOS", osVersion: "18.1", appVersion: "3.1"), applier: applier,
            delegate: delegate, stateStore: store, keyStore: keys, protectedFileDirectories: files)
    }

    @Test("seed 002 — switching to the managed identity re-runs the launch conditions: a cancelled PIN refuses it (userCancelled), then it switches")
    func identitySwitch() async throws {
        try await withTestEnvironment(baseURL: "http://localhost:0") { env in
            try await withLiveServer(env) { authority in
                try await Client.admin(authority).requireAppProtection()
                let app = Client.app(authority)
                let applier = CancellableApplier()
                let delegate = AppDelegate()
                let manager = Self.manager(app, applier: applier, delegate: delegate, store: InMemoryComplianceStateStore())
                let alice = try #require(
                    try await app.acquireToken(
                        username: Fixtures.alice.upn, password: Fixtures.alice.password, scopes: [Client.mailScope], remediation: .automatic
                    ).account)
                let carol = try #require(
                    try await app.acquireToken(username: Fixtures.carol.upn, password: Fixtures.carol.password, scopes: ["openid"]).account)
                #expect(await manager.switchIdentity(to: carol) == .switched, "unmanaged: no launch conditions")
                applier.cancels.store(true, ordering: .relaxed)
                let refused = await manager.switchIdentity(to: alice)
                guard case .refused(let status) = refused else {
                    Issue.record("the cancelled PIN must refuse the switch: \(refused)")
                    return
                }
                #expect(status?.status == .userCancelled && status?.errorTitle == "Setup cancelled")
                #expect(delegate.refusals.withLock { $0 } == [.userCancelled])
                #expect(await manager.uiIdentity == carol, "the identity stays what it was")
                applier.cancels.store(false, ordering: .relaxed)
                // The SDK asks for the switch (data owned by Alice is opened); the delegate agrees; the check-in passes.
                #expect(await manager.requireIdentity(alice) == .switched)
                #expect(await manager.uiIdentity == alice)
                #expect(await withIdentity(carol) { await manager.effectiveIdentity() } == carol)
            }
        }
    }

    @Test("seeds 002/003 — protected files: a wipe destroys the key and the SDK removes the files the app left; an unmanaged account's stay")
    func dataProtectionAndWipe() async throws {
        try await withTestEnvironment(baseURL: "http://localhost:0") { env in
            let root = FileManager.default.temporaryDirectory.appendingPathComponent("portcullis-app-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: root) }
            let documents = root.appendingPathComponent("Documents")
            try FileManager.default.createDirectory(at: documents, withIntermediateDirectories: true)
            try await withLiveServer(env) { authority in
                let admin = try await Client.admin(authority)
                try await admin.requireAppProtection()
                let app = Client.app(authority)
                let keys = FileInstanceKeyStore(directory: root.appendingPathComponent("keys"))
                let delegate = AppDelegate()  // the manager holds its delegate weakly, as UIKit does
                let manager = Self.manager(
                    app, applier: CancellableApplier(), delegate: delegate, store: InMemoryComplianceStateStore(), keys: keys, files: [documents])
                let alice = try #require(
                    try await app.acquireToken(
                        username: Fixtures.alice.upn, password: Fixtures.alice.password, scopes: [Client.mailScope], remediation: .automatic
                    ).account)
                let carol = try #require(
                    try await app.acquireToken(username: Fixtures.carol.upn, password: Fixtures.carol.password, scopes: ["openid"]).account)
                let report = documents.appendingPathComponent("alice-report.docx")
                let photo = documents.appendingPathComponent("carol-photo.jpg")
                try await manager.write(Data("Q3 revenue".utf8), toProtectedFileAt: report, for: alice)
                try await withIdentity(carol) { try await manager.write(Data("beach".utf8), toProtectedFileAt: photo) }
                let memo = try await manager.protect(Data("memo".utf8), for: alice)
                #expect(manager.protectionInfo(forFileAt: report) == ProtectionInfo(owner: alice, isEncrypted: true))
                // Opened with no identity in effect: the SDK asks for a switch to Alice, the app agrees, her check-in passes.
                #expect(await manager.uiIdentity == nil)
                #expect(try await manager.contentsOfProtectedFile(at: report) == Data("Q3 revenue".utf8))
                #expect(await manager.uiIdentity == alice)

                let id = try #require(await manager.enrollmentId(for: alice))
                #expect(try await admin.send("POST", "enrollments/\(id)/wipe").0 == 202)
                let after = await manager.checkIn(account: alice)
                #expect(after.reason == .wiped, "the SDK removed what the app left, so nothing remains: \(after)")
                #expect(!FileManager.default.fileExists(atPath: report.path), "the SDK deleted Alice's file (the delegate answered false)")
                #expect(try await manager.contentsOfProtectedFile(at: photo) == Data("beach".utf8), "Carol's unmanaged file is untouched")
                let gone = await #expect(throws: PortcullisClientError.self) { try await manager.unprotect(memo) }
                #expect(gone?.kind == .protectedDataUnavailable, "the key went with the wipe")
                #expect(!(await manager.isManaged(alice)))
                #expect(delegate.wipes.load(ordering: .relaxed) == 1)
            }
        }
    }

    @Test("the tenant's allowed accounts arrive with the policy and as a stream; the SDK then refuses another account before asking")
    func allowedAccounts() async throws {
        try await withTestEnvironment(baseURL: "http://localhost:0") { env in
            let files = FileManager.default.temporaryDirectory.appendingPathComponent("portcullis-allowed-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: files) }
            try await withLiveServer(env) { authority in
                let admin = try await Client.admin(authority)
                try await admin.requireAppProtection()
                let (_, tenant) = try await admin.send("GET", "tenant")
                var updated = tenant
                updated["allowedAccounts"] = [Fixtures.alice.upn.uppercased()]
                #expect(try await admin.send("PUT", "tenant", json: updated).0 == 200)
                let store = FileComplianceStateStore(url: files.appendingPathComponent("compliance.json"))
                let app = Client.app(authority)
                let manager = Self.manager(app, applier: CancellableApplier(), delegate: nil, store: store)
                let changes = manager.allowedAccountsUpdates
                let alice = try #require(
                    try await app.acquireToken(
                        username: Fixtures.alice.upn, password: Fixtures.alice.password, scopes: [Client.mailScope], remediation: .automatic
                    ).account)
                // The server keeps allowed accounts lower-cased; the SDK compares case-insensitively either way.
                #expect(await manager.allowedAccounts(tenantId: alice.tenantId) == [Fixtures.alice.upn.lowercased()])
                var iterator = changes.makeAsyncIterator()
                let change = await iterator.next()
                #expect(change == AllowedAccountsChange(tenantId: alice.tenantId, accounts: [Fixtures.alice.upn.lowercased()]))
                // The app restarts with no network: the delivered list is kept, and Bob is refused by the SDK itself.
                let offline = PublicClientApplication(
                    configuration: ClientConfiguration(
                        authority: URL(string: "http://127.0.0.1:9/\(Fixtures.domain)")!, clientId: Fixtures.mobileClientId, capabilities: ["protapp"],
                        languages: ["en"]))
                let restarted = Self.manager(offline, applier: CancellableApplier(), delegate: nil, store: store)
                let bob = Account(objectId: Fixtures.bob.id, tenantId: Fixtures.tenantId, username: Fixtures.bob.upn)
                let refused = await restarted.remediate(account: bob, silent: true)
                #expect(refused.status == .notCompliant && refused.reason == .accountNotAllowed, "refused before any request: \(refused)")
                let unreachable = await restarted.remediate(account: alice, silent: true)
                #expect(
                    unreachable.status == .interactionRequired && unreachable.reason == .signInAgain,
                    "Alice is allowed, so the SDK goes on (and needs her to sign in on this new cache): \(unreachable)")
                // The restriction lifted: the next response delivers "no restriction".
                updated["allowedAccounts"] = NSNull()
                #expect(try await admin.send("PUT", "tenant", json: updated).0 == 200)
                #expect(await manager.checkIn(account: alice).status == .compliant)
                #expect(await iterator.next() == AllowedAccountsChange(tenantId: alice.tenantId, accounts: nil))
                #expect(await manager.allowedAccounts(tenantId: alice.tenantId) == nil)
            }
        }
    }

    @Test("networkFailure from a server that is down, serviceFailure from one answering 5xx; messages in the user's language, from server and SDK")
    func failuresAndLanguages() async throws {
        try await withTestEnvironment(baseURL: "http://localhost:0") { env in
            try await withLiveServer(env) { authority in
                try await Client.admin(authority).requireAppProtection()
                // Portuguese on the device: the SDK's own statuses, and the server's (sent with their reason).
                let app = PublicClientApplication(
                    configuration: ClientConfiguration(
                        authority: authority, clientId: Fixtures.mobileClientId, capabilities: ["protapp"], languages: ["pt-BR", "en"]),
                    cache: InMemoryTokenCache())
                let applier = TestApplier(pinSet: false)
                let manager = Client.manager(app, applier: applier)
                _ = try? await app.acquireToken(username: Fixtures.alice.upn, password: Fixtures.alice.password, scopes: [Client.mailScope])
                let alice = try #require(try await app.accounts().first)
                let silent = await manager.remediate(account: alice, silent: true)
                #expect(silent.status == .interactionRequired && silent.errorTitle == "PIN obrigatório", "\(silent)")

                // The server itself answers in the Accept-Language it is sent (another client, no SDK re-wording).
                let token = try await app.acquireTokenSilent(account: alice, scopes: [ComplianceManager.complianceScope]).accessToken
                let id = try #require(await manager.enrollmentId(for: alice))
                for (header, title) in [("it-IT, en;q=0.5", "PIN obbligatorio"), ("zh-CN", "需要 PIN"), ("es", "PIN obligatorio"), ("fr", "PIN required")] {
                    var request = URLRequest(url: authority.deletingLastPathComponent().appendingPathComponent("mam/v1/enrollments/\(id)"))
                    request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
                    request.setValue(header, forHTTPHeaderField: "Accept-Language")
                    let (data, _) = try await URLSession.shared.data(for: request)
                    let body = try JSONDecoder().decode(EnrollmentResponse.self, from: data)
                    #expect(body.complianceStatus.errorTitle == title, "\(header): \(body.complianceStatus)")
                    #expect(body.complianceStatus.reason == .pinRequiredInteractive || body.complianceStatus.reason == .pinRequired)
                }

                // Down: nothing listens.
                let down = PublicClientApplication(
                    configuration: ClientConfiguration(
                        authority: URL(string: "http://127.0.0.1:9/\(Fixtures.domain)")!, clientId: Fixtures.mobileClientId, languages: ["it"]),
                    cache: app.cache)
                let offline = await Client.manager(down, store: manager.stateStore).remediate(account: alice, silent: true)
                #expect(offline.status == .networkFailure && offline.errorTitle == "Nessuna connessione", "\(offline)")

                // 5xx: tokens pass through to the real server, the compliance API answers 500.
                try await Self.withFailingCompliance(upstream: authority) { proxied in
                    let failing = PublicClientApplication(
                        configuration: ClientConfiguration(authority: proxied, clientId: Fixtures.mobileClientId, languages: ["es"]), cache: app.cache)
                    let status = await Client.manager(failing, store: manager.stateStore).checkIn(account: alice)
                    #expect(status.status == .serviceFailure && status.errorTitle == "Servicio no disponible", "\(status)")
                    #expect(status.errorMessage?.contains("HTTP 500") == true)
                }
            }
        }
    }

    /// A proxy in front of `upstream` that passes everything through but answers `/mam/v1/…` with 500.
    static func withFailingCompliance(upstream: URL, _ body: @Sendable (URL) async throws -> Void) async throws {
        let origin = "http://localhost:\(upstream.port!)"
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        let router = Router()
        let forward: @Sendable (Request, BasicRequestContext) async throws -> Response = { request, _ in
            if request.uri.path.hasPrefix("/mam/") {
                return Response(status: .internalServerError, body: .init(byteBuffer: ByteBuffer(string: "<html>upstream error</html>")))
            }
            var outgoing = HTTPClientRequest(url: origin + request.uri.description)
            outgoing.method = .RAW(value: request.method.rawValue)
            for field in request.headers { outgoing.headers.add(name: field.name.rawName, value: field.value) }
            outgoing.body = .bytes(try await request.body.collect(upTo: 1 << 20))
            let answer = try await client.execute(outgoing, timeout: .seconds(30))
            var headers = HTTPFields()
            if let type = answer.headers.first(name: "Content-Type") { headers[.contentType] = type }
            return Response(
                status: .init(code: Int(answer.status.code)), headers: headers, body: .init(byteBuffer: try await answer.body.collect(upTo: 1 << 20)))
        }
        router.get("**", use: forward)
        router.post("**", use: forward)
        let proxy = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        do {
            try await proxy.test(.live) { live in try await body(URL(string: "http://127.0.0.1:\(live.port!)/\(Fixtures.domain)")!) }
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }
}
