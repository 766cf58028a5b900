import Foundation
import HummingbirdTesting
import PortcullisAPI
import PortcullisClient
import PortcullisClientKeys
import PortcullisCore
import PortcullisSQLite
import PortcullisServer
import PortcullisStorage
import PortcullisTesting
import PortcullisTokens
import Synchronization
import Testing

/// Everything through the client SDK against a live server.
@Suite("client SDK end to end")
struct RemediationLoopTests {
    @Test("seed 004 — CA applied before enrollment: refusal carries the account; remediation; token (and .automatic does it in one retry)")
    func alwaysApplied() async throws {
        try await withTestEnvironment(baseURL: "http://localhost:0") { env in
            try await withLiveServer(env) { authority in
                try await Client.admin(authority).requireAppProtection()
                let app = Client.app(authority)
                do {
                    _ = try await app.acquireToken(username: Fixtures.alice.upn, password: Fixtures.alice.password, scopes: [Client.mailScope])
                    Issue.record("must be refused")
                } catch let error as PortcullisClientError {
                    #expect(error.kind == .protectionPolicyRequired)
                    #expect(error.errorCode == 53005)
                    let protection = try #require(error.protection)
                    #expect(protection.account.homeAccountId == "\(Fixtures.alice.id).\(Fixtures.tenantId)")
                    #expect(protection.account.objectId == Fixtures.alice.id && protection.account.tenantId == Fixtures.tenantId)
                    #expect(protection.account.username == Fixtures.alice.upn)
                    #expect(protection.remediationEndpoint?.path == "/mam/v1/remediations")
                    #expect(protection.policyIds.count == 1)
                }
                let applier = TestApplier(pinSet: false)
                let manager = Client.manager(app, applier: applier)
                let updates = manager.statusUpdates
                let account = try #require(try await app.accounts().first, "the refused sign-in still cached the account's refresh token")
                // Silent remediation cannot set the PIN: interactionRequired, with a message.
                let silent = await manager.remediate(account: account, silent: true)
                #expect(silent.status == .interactionRequired && silent.errorTitle == "PIN required")
                let interactive = await manager.remediate(account: account, silent: false)
                #expect(interactive.status == .compliant)
                let token = try await app.acquireTokenSilent(account: account, scopes: [Client.mailScope], forceRefresh: true)
                // Both sides must be there: an absent claim must not pass as equal to an absent enrollment.
                let enrolledToken = try #require(await manager.enrollmentId(for: account))
                #expect(token.claims["xms_mam_enrollment"] as? String == enrolledToken)
                #expect(token.claims["xms_cc"] as? [String] == ["protapp"])
                var seen: [ComplianceStatusValue] = []
                for await update in updates {
                    seen.append(update.status.status)
                    if seen.count == 2 { break }
                }
                #expect(seen == [.interactionRequired, .compliant])

                // A second app instance of another managed user, .automatic: one refusal, one remediation, one retry.
                let bobApp = Client.app(authority)
                _ = Client.manager(bobApp, device: "bobs-phone")
                let bob = try await bobApp.acquireToken(
                    username: Fixtures.bob.upn, password: Fixtures.bob.password, scopes: [Client.mailScope], remediation: .automatic)
                #expect(bob.account?.objectId == Fixtures.bob.id)
                await env.server.signIns.flush()
                let signIns = try await env.store.signIns(
                    SignInQuery(tenantId: TenantID(Fixtures.tenantId), userId: ObjectID(Fixtures.bob.id), resourceAppId: AppID(Fixtures.mailApiId)))
                #expect(signIns.map(\.record.conditionalAccessStatus) == [.success, .failure], "exactly one refusal then one success")
            }
        }
    }

    @Test("seed 004 — CA applied after the user already has tokens: the next refresh is refused, remediation, tokens resume")
    func appliedAfterEnrollment() async throws {
        try await withTestEnvironment(baseURL: "http://localhost:0") { env in
            try await withLiveServer(env) { authority in
                let app = Client.app(authority)
                let manager = Client.manager(app)
                let first = try await app.acquireToken(username: Fixtures.alice.upn, password: Fixtures.alice.password, scopes: [Client.mailScope])
                let account = try #require(first.account)
                try await Client.admin(authority).requireAppProtection()
                let refused = await #expect(throws: PortcullisClientError.self) {
                    _ = try await app.acquireTokenSilent(account: account, scopes: [Client.mailScope], forceRefresh: true)
                }
                #expect(
                    refused?.kind == .protectionPolicyRequired && refused?.errorCode == 53005 && refused?.protection?.account == account,
                    "\(String(describing: refused))")
                let status = await manager.remediate(account: account, silent: true)
                #expect(status.status == .compliant)
                let resumed = try await app.acquireTokenSilent(account: account, scopes: [Client.mailScope], forceRefresh: true)
                #expect(resumed.account == account)
            }
        }
    }

    @Test("seed 004 — no app protection policy targets the user: no token, a notCompliant status with its message, and no retry storm")
    func noncompliance() async throws {
        try await withTestEnvironment(baseURL: "http://localhost:0") { env in
            try await withLiveServer(env) { authority in
                try await Client.admin(authority).requireAppProtection()
                let app = Client.app(authority)
                _ = Client.manager(app)
                do {
                    _ = try await app.acquireToken(
                        username: Fixtures.carol.upn, password: Fixtures.carol.password, scopes: [Client.mailScope], remediation: .automatic)
                    Issue.record("carol must never get a token")
                } catch let error as PortcullisClientError {
                    #expect(error.kind == .complianceRequired)
                    #expect(error.complianceStatus?.status == .notCompliant)
                    #expect(error.complianceStatus?.errorTitle == "Account not protected")
                    #expect(error.complianceStatus?.errorMessage?.isEmpty == false)
                }
                await env.server.signIns.flush()
                let attempts = try await env.store.signIns(
                    SignInQuery(tenantId: TenantID(Fixtures.tenantId), userId: ObjectID(Fixtures.carol.id), resourceAppId: AppID(Fixtures.mailApiId)))
                #expect(attempts.count == 1, "remediation failed, so the token request was not retried")
            }
        }
    }

    @Test("seed 002 — one managed and one unmanaged account in one app instance; second managed refused; log-outs; restart with a persisted cache")
    func multiIdentity() async throws {
        try await withTestEnvironment(baseURL: "http://localhost:0") { env in
            let files = FileManager.default.temporaryDirectory.appendingPathComponent("portcullis-client-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: files) }
            try await withLiveServer(env) { authority in
                try await Client.admin(authority).requireAppProtection()
                let cache = FileTokenCache(url: files.appendingPathComponent("tokens.json"))
                let store = FileComplianceStateStore(url: files.appendingPathComponent("compliance.json"))
                let app = Client.app(authority, cache: cache)
                let manager = Client.manager(app, device: "shared-phone", store: store)
                // Unmanaged Carol signs in first: her tokens for unprotected resources are plain, her data unmanaged.
                let carol = try #require(
                    try await app.acquireToken(username: Fixtures.carol.upn, password: Fixtures.carol.password, scopes: ["openid"]).account)
                #expect(await manager.policy(for: carol) == nil)
                #expect(await manager.isSaveAllowed(to: .other, account: carol), "unmanaged data is unrestricted")
                // Managed Alice: protected, with a policy that restricts saving.
                let alice = try #require(
                    try await app.acquireToken(
                        username: Fixtures.alice.upn, password: Fixtures.alice.password, scopes: [Client.mailScope], remediation: .automatic
                    ).account)
                #expect(await manager.isSaveAllowed(to: .oneDriveForBusiness, owner: Fixtures.alice.upn, account: alice))
                #expect(!(await manager.isSaveAllowed(to: .oneDriveForBusiness, owner: Fixtures.bob.upn, account: alice)), "another account's OneDrive")
                #expect(!(await manager.isSaveAllowed(to: .localDrive, account: alice)))
                #expect(await manager.isOpenAllowed(from: .sharePoint, owner: Fixtures.alice.id, account: alice))
                #expect(!(await manager.isOpenAllowed(from: .photos, account: alice)))
                #expect(await manager.fileEncryptionRequired(account: alice))
                #expect(!(await manager.fileEncryptionRequired(account: carol)))
                // Which account's tokens need protection: Alice's mail tokens carry the enrollment; Carol cannot get mail tokens.
                let carolRefused = await #expect(throws: PortcullisClientError.self) {
                    _ = try await app.acquireToken(username: Fixtures.carol.upn, password: Fixtures.carol.password, scopes: [Client.mailScope])
                }
                #expect(carolRefused?.kind == .protectionPolicyRequired && carolRefused?.errorCode == 53005, "\(String(describing: carolRefused))")
                // A second managed account in the same app instance is refused (single managed account mode).
                let bob = try #require(try await app.acquireToken(username: Fixtures.bob.upn, password: Fixtures.bob.password, scopes: ["openid"]).account)
                let refused = await manager.remediate(account: bob, silent: true)
                #expect(refused.status == .notCompliant && refused.errorTitle == "Another work account is signed in")

                // "Managed death/restart": a new app object with the persisted cache and state gets protected tokens through its enrollment.
                let restarted = Client.app(authority, cache: FileTokenCache(url: files.appendingPathComponent("tokens.json")))
                let restartedManager = Client.manager(
                    restarted, device: "shared-phone", store: FileComplianceStateStore(url: files.appendingPathComponent("compliance.json")),
                    keyStore: FileInstanceKeyStore(directory: files.appendingPathComponent("keys")))
                #expect(await restartedManager.enrollmentId(for: alice) != nil)
                let aliceDraft = try await restartedManager.protect(Data("alice's draft".utf8), for: alice)
                let carolNote = try await restartedManager.protect(Data("carol's note".utf8), for: carol)
                #expect(restartedManager.protectionInfo(for: aliceDraft)?.isEncrypted == true, "managed data is encrypted")
                #expect(restartedManager.protectionInfo(for: carolNote)?.isEncrypted == false, "unmanaged data is not")
                let again = try await restarted.acquireTokenSilent(account: alice, scopes: [Client.mailScope], forceRefresh: true)
                // Both sides must be there: an absent claim must not pass as equal to an absent enrollment.
                let enrolledAgain = try #require(await restartedManager.enrollmentId(for: alice))
                #expect(again.claims["xms_mam_enrollment"] as? String == enrolledAgain)
                // Log out the unmanaged account: the managed one is intact.
                try await restarted.signOut(account: carol)
                #expect(try await restarted.accounts().contains(alice))
                #expect(try await restarted.acquireTokenSilent(account: alice, scopes: [Client.mailScope], forceRefresh: true).account == alice)
                #expect(await restartedManager.isManaged(alice), "policy still applied")
                #expect(await restartedManager.fileEncryptionRequired(account: alice))
                #expect(try await restartedManager.unprotect(aliceDraft) == Data("alice's draft".utf8))
                // Log out the managed account: unenrolled, its policy gone, the slot free for Bob; Carol's re-sign-in unaffected.
                try await restartedManager.unenroll(account: alice)
                try await restarted.signOut(account: alice)
                #expect(await restartedManager.policy(for: alice) == nil)
                let removed = await #expect(throws: PortcullisClientError.self, "the managed account's data went with it") {
                    try await restartedManager.unprotect(aliceDraft)
                }
                #expect(removed?.kind == .protectedDataUnavailable)
                #expect(try await restartedManager.unprotect(carolNote) == Data("carol's note".utf8), "the unmanaged account's data stays")
                #expect(await restartedManager.remediate(account: bob, silent: true).status == .compliant)
                _ = manager
            }
        }
    }

    @Test("selective wipe: the delegate is called, tokens stop, re-enrollment works")
    func selectiveWipe() async throws {
        try await withTestEnvironment(baseURL: "http://localhost:0") { env in
            try await withLiveServer(env) { authority in
                let admin = try await Client.admin(authority)
                try await admin.requireAppProtection()
                let app = Client.app(authority)
                let delegate = TestDelegate()
                let manager = Client.manager(app, delegate: delegate)
                let account = try #require(
                    try await app.acquireToken(
                        username: Fixtures.alice.upn, password: Fixtures.alice.password, scopes: [Client.mailScope], remediation: .automatic
                    ).account)
                let id = try #require(await manager.enrollmentId(for: account))
                let (status, _) = try await admin.send("POST", "enrollments/\(id)/wipe")
                #expect(status == 202)
                let wiped = await #expect(throws: PortcullisClientError.self) {
                    _ = try await app.acquireTokenSilent(account: account, scopes: [Client.mailScope], forceRefresh: true)
                }
                #expect(
                    wiped?.errorCode == 70008 && wiped?.oauth?.error == "invalid_grant", "a wiped app's refresh token is revoked: \(String(describing: wiped))")
                let after = await manager.checkIn(account: account)
                #expect(after.errorTitle == "Work data removed")
                #expect(delegate.wiped.withLock { $0 } == [account.homeAccountId])
                #expect(await manager.enrollmentId(for: account) == nil)
                #expect(try await app.accounts().isEmpty, "the wiped account's tokens are gone")
                // Sign in again: a new enrollment, tokens again.
                let back = try await app.acquireToken(
                    username: Fixtures.alice.upn, password: Fixtures.alice.password, scopes: [Client.mailScope], remediation: .automatic)
                let newId = try #require(await manager.enrollmentId(for: account))
                #expect(newId != id)
                #expect(back.claims["xms_mam_enrollment"] as? String == newId)
            }
        }
    }

    @Test("a policy change reaches the app at its next check-in; a change of file encryption asks the app to restart")
    func policyChange() async throws {
        try await withTestEnvironment(baseURL: "http://localhost:0") { env in
            try await withLiveServer(env) { authority in
                let admin = try await Client.admin(authority)
                try await admin.requireAppProtection()
                let app = Client.app(authority)
                let delegate = TestDelegate()
                let manager = Client.manager(app, delegate: delegate)
                let account = try #require(
                    try await app.acquireToken(
                        username: Fixtures.alice.upn, password: Fixtures.alice.password, scopes: [Client.mailScope], remediation: .automatic
                    ).account)
                #expect(await manager.fileEncryptionRequired(account: account))
                var policy = try #require(try JSONSerialization.jsonObject(with: Fixtures.salesMailPolicy) as? [String: Any])
                var settings = try #require(policy["settings"] as? [String: Any])
                settings["fileEncryptionRequired"] = false
                policy["settings"] = settings
                let (status, _) = try await admin.send("PUT", "app-protection/policies/\(Fixtures.salesMailPolicyId)", json: policy)
                #expect(status == 200)
                #expect(await manager.checkIn(account: account).status == .compliant)
                #expect(!(await manager.fileEncryptionRequired(account: account)))
                #expect(delegate.restarts.load(ordering: .relaxed) == 1)
                #expect(await manager.checkIn(account: account).status == .compliant)
                #expect(delegate.restarts.load(ordering: .relaxed) == 1, "an unchanged policy asks nothing")
            }
        }
    }

    @Test("grace period lapse and recovery on the next check-in")
    func graceLapse() async throws {
        try await withTestEnvironment(baseURL: "http://localhost:0") { env in
            try await withLiveServer(env) { authority in
                try await Client.admin(authority).requireAppProtection()
                let app = Client.app(authority)
                let manager = Client.manager(app)
                let account = try #require(
                    try await app.acquireToken(
                        username: Fixtures.alice.upn, password: Fixtures.alice.password, scopes: [Client.mailScope], remediation: .automatic
                    ).account)
                env.clock.advance(by: 61 * 60)
                do {
                    _ = try await app.acquireTokenSilent(account: account, scopes: [Client.mailScope], forceRefresh: true)
                    Issue.record("a lapsed enrollment must not satisfy app protection")
                } catch let error as PortcullisClientError {
                    #expect(error.kind == .protectionPolicyRequired)
                }
                #expect(await manager.checkIn(account: account).status == .compliant)
                #expect(try await app.acquireTokenSilent(account: account, scopes: [Client.mailScope], forceRefresh: true).account == account)
            }
        }
    }

    @Test("callbacks are delivered to the app's receiver and verify against the JWKS")
    func callbacks() async throws {
        let receiver = CallbackReceiver()
        try await receiver.application().test(.live) { receiverClient in
            let base = "http://127.0.0.1:\(receiverClient.port!)"
            try await withTestEnvironment(baseURL: "http://localhost:0", directoryJSON: Fixtures.directoryJSON(callbackBase: base)) { env in
                try await withLiveServer(env, services: true) { authority in
                    try await Client.admin(authority).requireAppProtection()
                    let app = Client.app(authority)
                    _ = Client.manager(app, callbackUri: base + Fixtures.callbackPath)
                    _ = try await app.acquireToken(
                        username: Fixtures.alice.upn, password: Fixtures.alice.password, scopes: [Client.mailScope], remediation: .automatic)
                    for _ in 0..<200 where receiver.tokens.count < 2 { try await Task.sleep(for: .milliseconds(20)) }
                    let events = try await receiver.tokens.asyncMap { try await env.signer.verifySignature($0, as: ComplianceSecurityEvent.self) }
                    #expect(events.map { $0.events.complianceStatus?.status } == [.notCompliant, .compliant])
                    #expect(events.last?.events.deviceComplianceChange?.currentStatus == "compliant")
                }
            }
        }
    }
}
