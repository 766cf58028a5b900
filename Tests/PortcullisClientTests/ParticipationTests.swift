import Foundation
import PortcullisAPI
import PortcullisClientKeys
import Testing

@testable import PortcullisClient

/// A manager whose state store already holds Alice's enrollment under `settings` (no server: these are the SDK's
/// own answers to the app's questions).
func managerWithPolicy(_ settings: AppProtectionSettings, keyStore: (any InstanceKeyStore)? = nil) async throws -> ComplianceManager {
    let store = InMemoryComplianceStateStore()
    await store.store(EnrollmentState(account: Seed.alice, enrollmentId: "e1", policy: PolicyDocument(version: "1", settings: settings), status: .compliant))
    let app = PublicClientApplication(
        configuration: ClientConfiguration(authority: URL(string: "http://127.0.0.1:9/contoso.example")!, clientId: "app", languages: ["en"]))
    return ComplianceManager(
        application: app, device: DeviceInfo(deviceId: "d", platform: "iOS", osVersion: "18", appVersion: "1"), applier: NoApplier(), stateStore: store,
        keyStore: keyStore)
}

struct NoApplier: PolicyApplier {
    func apply(_ policy: PolicyDocument, for account: Account, interactive: Bool) async -> PolicyApplication {
        PolicyApplication(applied: true, pinSet: true)
    }
}

enum Seed {
    static let alice = Account(objectId: "a1", tenantId: "t1", username: "Alice@contoso.example")
    static let carol = Account(objectId: "c3", tenantId: "t1", username: "carol@gmail.example")
}

@Suite("SDK participation (seeds 002, 003)")
struct ParticipationTests {
    struct LocationCase: Sendable, CustomTestStringConvertible {
        var name: String
        var blocked: Bool
        var exempt: [String]
        var location: String
        var owner: String?
        var allowed: Bool
        var testDescription: String { name }
    }

    /// Seed 003's save-to matrix (V1–V3), each against OneDrive for Business of the same managed account, a different
    /// cloud location, and OneDrive of another account.
    static let saveCases: [LocationCase] = [
        .init(
            name: "V1 allow: OneDrive of the same account", blocked: false, exempt: [], location: "oneDriveForBusiness", owner: "alice@contoso.example",
            allowed: true),
        .init(name: "V1 allow: another cloud location", blocked: false, exempt: [], location: "other", owner: nil, allowed: true),
        .init(
            name: "V2 exempted: OneDrive of the same account", blocked: true, exempt: ["oneDriveForBusiness"], location: "oneDriveForBusiness",
            owner: "ALICE@contoso.example", allowed: true),
        .init(name: "V2 exempted: by object ID", blocked: true, exempt: ["oneDriveForBusiness"], location: "oneDriveForBusiness", owner: "A1", allowed: true),
        .init(
            name: "V2 exempted: a different cloud location", blocked: true, exempt: ["oneDriveForBusiness"], location: "other", owner: "alice@contoso.example",
            allowed: false),
        .init(
            name: "V2 exempted: OneDrive of another account", blocked: true, exempt: ["oneDriveForBusiness"], location: "oneDriveForBusiness",
            owner: "mallory@contoso.example", allowed: false),
        .init(
            name: "V2 exempted: OneDrive whose account is unknown", blocked: true, exempt: ["oneDriveForBusiness"], location: "oneDriveForBusiness", owner: nil,
            allowed: false),
        .init(
            name: "V3 blocked: OneDrive of the same account", blocked: true, exempt: [], location: "oneDriveForBusiness", owner: "alice@contoso.example",
            allowed: false),
        .init(name: "V3 blocked: a different cloud location", blocked: true, exempt: [], location: "other", owner: nil, allowed: false),
        .init(name: "exempted local drive belongs to no account", blocked: true, exempt: ["localDrive"], location: "localDrive", owner: nil, allowed: true),
        .init(name: "exempted camera roll takes nil only", blocked: true, exempt: ["cameraRoll"], location: "cameraRoll", owner: nil, allowed: true),
    ]

    @Test("seed 003 save-to: allowed, exempted (same managed account only), blocked", arguments: saveCases)
    func saveTo(_ row: LocationCase) async throws {
        var settings = AppProtectionSettings()
        settings.saveAs = .init(blocked: row.blocked, allowedLocations: row.exempt.compactMap(AppProtectionSettings.SaveLocation.init(rawValue:)))
        let manager = try await managerWithPolicy(settings)
        let location = try #require(AppProtectionSettings.SaveLocation(rawValue: row.location))
        #expect(await manager.isSaveAllowed(to: location, owner: row.owner, account: Seed.alice) == row.allowed)
        // The same question asked for the identity in effect.
        #expect(await withIdentity(Seed.alice) { await manager.isSaveAllowed(to: location, owner: row.owner) } == row.allowed)
        // Unmanaged data (another account, or no identity) is never restricted.
        #expect(await manager.isSaveAllowed(to: location, owner: row.owner, account: Seed.carol))
        #expect(await withIdentity(nil) { await manager.isSaveAllowed(to: location, owner: row.owner) })
    }

    static let openCases: [LocationCase] = [
        .init(
            name: "V4 allow: OneDrive of the same account", blocked: false, exempt: [], location: "oneDriveForBusiness", owner: "alice@contoso.example",
            allowed: true),
        .init(
            name: "V5 exempted: OneDrive of the same account", blocked: true, exempt: ["oneDriveForBusiness"], location: "oneDriveForBusiness",
            owner: "alice@contoso.example", allowed: true),
        .init(
            name: "V5 exempted: a different cloud location", blocked: true, exempt: ["oneDriveForBusiness"], location: "other", owner: "alice@contoso.example",
            allowed: false),
        .init(
            name: "V5 exempted: SharePoint of another account", blocked: true, exempt: ["oneDriveForBusiness", "sharePoint"], location: "sharePoint",
            owner: "bob@contoso.example", allowed: false),
        .init(
            name: "V6 blocked: OneDrive of the same account", blocked: true, exempt: [], location: "oneDriveForBusiness", owner: "alice@contoso.example",
            allowed: false),
        .init(name: "V6 blocked: a different cloud location", blocked: true, exempt: [], location: "other", owner: nil, allowed: false),
        .init(name: "exempted camera (new photos)", blocked: true, exempt: ["camera"], location: "camera", owner: nil, allowed: true),
        .init(name: "photos not exempted", blocked: true, exempt: ["camera"], location: "photos", owner: nil, allowed: false),
    ]

    @Test("seed 003 open-from: allowed, exempted (same managed account only), blocked", arguments: openCases)
    func openFrom(_ row: LocationCase) async throws {
        var settings = AppProtectionSettings()
        settings.openFrom = .init(blocked: row.blocked, allowedLocations: row.exempt.compactMap(AppProtectionSettings.OpenLocation.init(rawValue:)))
        let manager = try await managerWithPolicy(settings)
        let location = try #require(AppProtectionSettings.OpenLocation(rawValue: row.location))
        #expect(await manager.isOpenAllowed(from: location, owner: row.owner, account: Seed.alice) == row.allowed)
        #expect(await withIdentity(Seed.alice) { await manager.isOpenAllowed(from: location, owner: row.owner) } == row.allowed)
        #expect(await manager.isOpenAllowed(from: location, owner: row.owner, account: nil))
    }

    struct TransferCase: Sendable, CustomTestStringConvertible {
        var name: String
        var managedIdentity: Bool
        var peer: DataTransferPeer
        var allowed: Bool
        var testDescription: String { name }
    }

    static let managedApp = DataTransferPeer.managedApp(account: "alice@contoso.example")

    /// Seed 002's send matrix (S1–S4) under "Send org data: policy managed apps".
    static let sendCases: [TransferCase] = [
        .init(name: "S1 managed → unmanaged app: blocked", managedIdentity: true, peer: .unmanagedApp, allowed: false),
        .init(name: "S2 managed → managed app (managed account): allowed", managedIdentity: true, peer: managedApp, allowed: true),
        .init(name: "S3 unmanaged → managed app (managed account): blocked", managedIdentity: false, peer: managedApp, allowed: false),
        .init(name: "S4 unmanaged → unmanaged app: always allowed", managedIdentity: false, peer: .unmanagedApp, allowed: true),
    ]

    /// Seed 002's active-import (I1–I4) and passive-receive (R1–R4) matrices under "Receive data: policy managed apps".
    static let receiveCases: [TransferCase] = [
        .init(name: "I1/R1 managed ← unmanaged app: blocked", managedIdentity: true, peer: .unmanagedApp, allowed: false),
        .init(name: "I2/R2 managed ← managed app (managed account): allowed", managedIdentity: true, peer: managedApp, allowed: true),
        .init(name: "I3/R3 unmanaged ← managed app (managed account): blocked", managedIdentity: false, peer: managedApp, allowed: false),
        .init(name: "I4/R4 unmanaged ← unmanaged app: always allowed", managedIdentity: false, peer: .unmanagedApp, allowed: true),
    ]

    static func policyManagedOnly() -> AppProtectionSettings {
        var settings = AppProtectionSettings()
        settings.dataTransfer = .init(sendOrgData: .policyManagedApps, receiveData: .policyManagedApps)
        return settings
    }

    @Test("seed 002 sharing: send", arguments: sendCases)
    func send(_ row: TransferCase) async throws {
        let manager = try await managerWithPolicy(Self.policyManagedOnly())
        let identity = row.managedIdentity ? Seed.alice : Seed.carol
        #expect(await manager.canSend(to: row.peer, account: identity) == row.allowed)
        #expect(await withIdentity(identity) { await manager.canSend(to: row.peer) } == row.allowed)
    }

    @Test("seed 002 sharing: import and receive", arguments: receiveCases)
    func receive(_ row: TransferCase) async throws {
        let manager = try await managerWithPolicy(Self.policyManagedOnly())
        let identity = row.managedIdentity ? Seed.alice : Seed.carol
        #expect(await manager.canReceive(from: row.peer, account: identity) == row.allowed)
        #expect(await withIdentity(identity) { await manager.canReceive(from: row.peer) } == row.allowed)
    }

    @Test("transfer levels: all apps allows everything, none blocks even managed apps; no policy restricts nothing")
    func transferLevels() async throws {
        var open = AppProtectionSettings()
        open.dataTransfer = .init(sendOrgData: .allApps, receiveData: .allApps)
        let permissive = try await managerWithPolicy(open)
        #expect(await permissive.canSend(to: .unmanagedApp, account: Seed.alice))
        #expect(await permissive.canReceive(from: .unmanagedApp, account: Seed.alice))
        #expect(await permissive.canSend(to: Self.managedApp, account: Seed.carol), "the managed account takes data from any app")
        var closed = AppProtectionSettings()
        closed.dataTransfer = .init(sendOrgData: .none, receiveData: .none)
        let strict = try await managerWithPolicy(closed)
        #expect(!(await strict.canSend(to: Self.managedApp, account: Seed.alice)))
        #expect(!(await strict.canReceive(from: Self.managedApp, account: Seed.alice)))
        #expect(await strict.canSend(to: .managedApp(account: "someone@else.example"), account: Seed.carol), "a managed account not known here")
    }

    @Test("withIdentity scopes the identity in effect: nested, inherited by child tasks, restored after; uiIdentity outside")
    func identityScope() async throws {
        let manager = try await managerWithPolicy(AppProtectionSettings())
        #expect(await manager.effectiveIdentity() == nil)
        #expect(await manager.switchIdentity(to: Seed.carol) == .switched, "an unmanaged identity switches without checks")
        #expect(await manager.uiIdentity == Seed.carol)
        #expect(await manager.effectiveIdentity() == Seed.carol)
        await withIdentity(Seed.alice) {
            #expect(await manager.effectiveIdentity() == Seed.alice)
            await withIdentity(nil) { #expect(await manager.effectiveIdentity() == nil, "an explicit no-identity scope is unmanaged") }
            let child = await withTaskGroup(of: Account?.self) { group in
                group.addTask { await manager.effectiveIdentity() }
                return await group.next() ?? nil
            }
            #expect(child == Seed.alice, "a child task inherits the scope")
            #expect(await manager.effectiveIdentity() == Seed.alice, "the inner scope ended")
        }
        #expect(await manager.effectiveIdentity() == Seed.carol)
        #expect(await manager.isManaged(Seed.alice))
        #expect(!(await manager.isManaged(Seed.carol)))
        #expect(!(await manager.isManaged(nil)))
    }

    @Test("a delivered allowed-accounts list refuses another account without a request while it is recent, then the server is asked again")
    func allowedAccountsFreshness() async throws {
        let manager = try await managerWithPolicy(AppProtectionSettings())
        let bob = Account(objectId: "b2", tenantId: "t1", username: "bob@contoso.example")
        var response = EnrollmentResponse(enrollmentId: nil, statusCode: .accountNotAllowed, policy: nil, complianceStatus: .accountNotAllowed)
        response.allowedAccounts = AllowedAccountsList(accounts: ["alice@contoso.example"])
        await manager.noteAllowedAccounts(response, tenantId: "T1", now: Date())
        let refused = await manager.remediate(account: bob, silent: true)
        #expect(refused.reason == .accountNotAllowed, "refused locally (nothing listens at the authority): \(refused)")
        #expect(await manager.remediate(account: Seed.alice, silent: true).reason != .accountNotAllowed, "Alice is on the list")
        await manager.noteAllowedAccounts(response, tenantId: "t1", now: Date().addingTimeInterval(-ComplianceManager.allowedAccountsTrusted - 1))
        let asked = await manager.remediate(account: bob, silent: true)
        #expect(asked.reason != .accountNotAllowed, "a stale list is not trusted to refuse: the SDK asks (and the network fails): \(asked)")
        #expect(await manager.allowedAccounts(tenantId: "t1") == ["alice@contoso.example"], "still reported as delivered")
    }

    @Test("an identity switch the SDK asks for: the delegate refuses by default, and is told")
    func requiredSwitchRefused() async throws {
        let manager = try await managerWithPolicy(AppProtectionSettings())
        let delegate = RefusingDelegate()
        await manager.setDelegate(delegate)
        #expect(await manager.requireIdentity(Seed.carol) == .refused(nil))
        #expect(await delegate.refusals.count == 1)
        #expect(await manager.uiIdentity == nil)
        #expect(await manager.requireIdentity(nil) == .switched, "already in effect")
    }
}

final actor RefusingDelegate: ComplianceDelegate {
    var refusals: [Account?] = []
    func wipeData(for account: Account) async -> Bool { true }
    func identitySwitchRefused(to account: Account?, status: ComplianceStatus?) async { refusals.append(account) }
}
