public import Foundation
import PortcullisAPI
public import PortcullisVocabulary

/// The other end of a transfer of data between apps (seed 002's sharing matrices): an app the organization's policy
/// manages, and for which account, or any other app.
public struct DataTransferPeer: Sendable, Equatable {
    /// The app is managed by an app protection policy.
    public var isPolicyManaged: Bool
    /// The account the data is for (send) or from (receive) in that app: its UPN or object ID; `nil` when unknown.
    public var account: String?

    public init(isPolicyManaged: Bool, account: String? = nil) {
        self.isPolicyManaged = isPolicyManaged
        self.account = account
    }

    public static let unmanagedApp = DataTransferPeer(isPolicyManaged: false)
    public static func managedApp(account: String?) -> DataTransferPeer { DataTransferPeer(isPolicyManaged: true, account: account) }
}

/// A tenant's allowed accounts as the server delivered them, and when (kept with an enrollment's state).
public struct DeliveredAllowedAccounts: Codable, Sendable, Equatable {
    /// `nil`: every account may enroll.
    public var accounts: [String]?
    public var deliveredAt: Date
}

/// A tenant's allowed accounts as the server delivered them (PROTOCOL §16): `accounts` `nil` is no restriction.
public struct AllowedAccountsChange: Sendable, Equatable {
    public var tenantId: String
    public var accounts: [String]?

    public init(tenantId: String, accounts: [String]?) {
        self.tenantId = tenantId
        self.accounts = accounts
    }
}

extension ComplianceManager {
    /// `isSaveToAllowedForLocation:withAccountId:` — may data owned by `account` (`nil`: unmanaged) be saved to
    /// `location`, which belongs to `owner` (the location's account, UPN or object ID; `nil` when it has none or it
    /// is unknown)? Unmanaged data is unrestricted. A policy that blocks saving allows only its exempted locations,
    /// and an account's location only when it is the data's own account. Data saved in place is not asked about.
    public func isSaveAllowed(to location: AppProtectionSettings.SaveLocation, owner: String? = nil, account: Account?) async -> Bool {
        guard let rule = await policy(for: account)?.settings.saveAs, let account else { return true }
        return rule.allows(location, ownedByTheDataAccount: owner.map(account.matches(identity:)) ?? false)
    }

    /// `isSaveAllowed(to:owner:account:)` for the data of the identity in effect.
    public func isSaveAllowed(to location: AppProtectionSettings.SaveLocation, owner: String? = nil) async -> Bool {
        await isSaveAllowed(to: location, owner: owner, account: effectiveIdentity())
    }

    /// `isOpenFromAllowedForLocation:withAccountId:` — may data from `location`, which belongs to `owner`, be opened
    /// into the documents of `account` (the receiving identity; `nil`: unmanaged, unrestricted)?
    public func isOpenAllowed(from location: AppProtectionSettings.OpenLocation, owner: String? = nil, account: Account?) async -> Bool {
        guard let rule = await policy(for: account)?.settings.openFrom, let account else { return true }
        return rule.allows(location, ownedByTheDataAccount: owner.map(account.matches(identity:)) ?? false)
    }

    /// `isOpenAllowed(from:owner:account:)` into the identity in effect.
    public func isOpenAllowed(from location: AppProtectionSettings.OpenLocation, owner: String? = nil) async -> Bool {
        await isOpenAllowed(from: location, owner: owner, account: effectiveIdentity())
    }

    /// May data owned by `account` (`nil`: unmanaged) go to `target` (seed 002's send matrix)? Managed data follows its
    /// policy's `sendOrgData`: `allApps`, policy-managed apps only, or none. Unmanaged data may go anywhere except to
    /// a managed app whose account's policy, known here, takes data from policy-managed apps only.
    public func canSend(to target: DataTransferPeer, account: Account?) async -> Bool {
        await transferAllowed(account, peer: target, own: \.sendOrgData, peers: \.receiveData)
    }

    /// `canSend(to:account:)` for the identity in effect.
    public func canSend(to target: DataTransferPeer) async -> Bool { await canSend(to: target, account: effectiveIdentity()) }

    /// May data from `source` be received into `account`'s documents (seed 002's import and receive matrices)?
    /// A managed account follows its policy's `receiveData`; an unmanaged one may take anything except a managed
    /// account's data whose policy sends to policy-managed apps only.
    public func canReceive(from source: DataTransferPeer, account: Account?) async -> Bool {
        await transferAllowed(account, peer: source, own: \.receiveData, peers: \.sendOrgData)
    }

    /// `canReceive(from:account:)` into the identity in effect.
    public func canReceive(from source: DataTransferPeer) async -> Bool { await canReceive(from: source, account: effectiveIdentity()) }

    /// A transfer between `account`'s data and `peer`: a managed account's `own` level decides; for unmanaged data, a
    /// managed peer account known here refuses it unless its `peers` level takes any app's.
    func transferAllowed(
        _ account: Account?, peer: DataTransferPeer, own: KeyPath<AppProtectionSettings.DataTransfer, AppProtectionSettings.TransferLevel>,
        peers: KeyPath<AppProtectionSettings.DataTransfer, AppProtectionSettings.TransferLevel>
    ) async -> Bool {
        if let settings = await policy(for: account)?.settings {
            return (settings.dataTransfer?[keyPath: own] ?? .allApps).allows(peerIsPolicyManaged: peer.isPolicyManaged)
        }
        guard peer.isPolicyManaged, let managed = await managedAccount(matching: peer.account) else { return true }
        return (await policy(for: managed)?.settings.dataTransfer?[keyPath: peers] ?? .allApps) == .allApps
    }

    /// The managed account here that `identity` (UPN or object ID) names, if any.
    func managedAccount(matching identity: String?) async -> Account? {
        guard let identity else { return nil }
        return (try? await stateStore.states())?.first { $0.account.matches(identity: identity) }?.account
    }

    // MARK: Allowed accounts

    /// The tenant's allowed accounts as the server last delivered them: `nil` when it delivered none yet or they are
    /// not restricted.
    public func allowedAccounts(tenantId: String) async -> [String]? {
        await deliveredAllowedAccounts(tenantId: tenantId)?.accounts
    }

    /// How long a delivered list is trusted to refuse an account without asking: the server's answer to that account
    /// (or any enrolled account's next check-in) brings the current list, so an account the admin has just allowed is
    /// refused locally for at most this long.
    public static let allowedAccountsTrusted: TimeInterval = 30 * 60

    func deliveredAllowedAccounts(tenantId: String) async -> DeliveredAllowedAccounts? {
        if let known = tenantAllowedAccounts[tenantId.lowercased()] { return known }
        return (try? await stateStore.states())?.compactMap { $0.account.tenantId == tenantId.lowercased() ? $0.tenantAllowedAccounts : nil }
            .max { $0.deliveredAt < $1.deliveredAt }
    }

    /// The tenant's list when it is recent enough to refuse by (`allowedAccountsTrusted`), else `nil`.
    func trustedAllowedAccounts(tenantId: String, now: Date) async -> [String]? {
        guard let delivered = await deliveredAllowedAccounts(tenantId: tenantId), now.timeIntervalSince(delivered.deliveredAt) < Self.allowedAccountsTrusted
        else { return nil }
        return delivered.accounts
    }

    /// Remembers the list a response delivered and announces a change.
    func noteAllowedAccounts(_ response: EnrollmentResponse, tenantId: String, now: Date = Date()) {
        guard let delivered = response.allowedAccounts else { return }
        let tenant = tenantId.lowercased()
        let previous = tenantAllowedAccounts[tenant]
        if previous == nil, tenantAllowedAccounts.count >= 64 { tenantAllowedAccounts.removeAll() }  // an app has a few tenants
        tenantAllowedAccounts[tenant] = DeliveredAllowedAccounts(accounts: delivered.accounts, deliveredAt: now)
        if previous.map({ $0.accounts != delivered.accounts }) ?? true {
            allowedContinuation.yield(AllowedAccountsChange(tenantId: tenant, accounts: delivered.accounts))
        }
    }
}
