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
    /// Locations tied to an account: exempting one (`allowedLocations`) exempts it only for the data's own account
    /// (seed 003: "OneDrive for Business of the same managed account"). The others are not anyone's.
    static func isAccountLocation(_ location: String) -> Bool {
        ["oneDriveForBusiness", "sharePoint", "accountDocument"].contains(location)
    }

    /// `isSaveToAllowedForLocation:withAccountId:` — may data owned by `account` (`nil`: unmanaged) be saved to
    /// `location`, which belongs to `owner` (the location's account, UPN or object ID; `nil` when it has none or it
    /// is unknown)? Unmanaged data is unrestricted. A policy that blocks saving allows only its exempted locations,
    /// and an account's location only when it is the data's own account. Data saved in place is not asked about.
    public func isSaveAllowed(to location: AppProtectionSettings.SaveLocation, owner: String? = nil, account: Account?) async -> Bool {
        guard let rule = await policy(for: account)?.settings.saveAs, let account else { return true }
        return Self.exempts(rule, location, location.rawValue, owner: owner, account: account)
    }

    /// `isSaveAllowed(to:owner:account:)` for the data of the identity in effect.
    public func isSaveAllowed(to location: AppProtectionSettings.SaveLocation, owner: String? = nil) async -> Bool {
        await isSaveAllowed(to: location, owner: owner, account: effectiveIdentity())
    }

    /// `isOpenFromAllowedForLocation:withAccountId:` — may data from `location`, which belongs to `owner`, be opened
    /// into the documents of `account` (the receiving identity; `nil`: unmanaged, unrestricted)?
    public func isOpenAllowed(from location: AppProtectionSettings.OpenLocation, owner: String? = nil, account: Account?) async -> Bool {
        guard let rule = await policy(for: account)?.settings.openFrom, let account else { return true }
        return Self.exempts(rule, location, location.rawValue, owner: owner, account: account)
    }

    /// `isOpenAllowed(from:owner:account:)` into the identity in effect.
    public func isOpenAllowed(from location: AppProtectionSettings.OpenLocation, owner: String? = nil) async -> Bool {
        await isOpenAllowed(from: location, owner: owner, account: effectiveIdentity())
    }

    static func exempts<L>(_ rule: AppProtectionSettings.LocationRule<L>, _ location: L, _ name: String, owner: String?, account: Account) -> Bool {
        guard rule.blocked else { return true }
        guard rule.allowedLocations.contains(location) else { return false }
        guard isAccountLocation(name) else { return true }
        return owner.map { account.matches(identity: $0) } ?? false
    }

    /// May data owned by `account` (`nil`: unmanaged) go to `target` (seed 002's send matrix)? Managed data follows its
    /// policy's `sendOrgData`: `allApps`, policy-managed apps only, or none. Unmanaged data may go anywhere except to
    /// a managed app whose account's policy, known here, takes data from policy-managed apps only.
    public func canSend(to target: DataTransferPeer, account: Account?) async -> Bool {
        if let settings = await policy(for: account)?.settings {
            switch settings.dataTransfer?.sendOrgData ?? .allApps {
            case .allApps: return true
            case .none: return false
            case .policyManagedApps: return target.isPolicyManaged
            }
        }
        guard target.isPolicyManaged, let peer = await managedAccount(matching: target.account) else { return true }
        return (await policy(for: peer)?.settings.dataTransfer?.receiveData ?? .allApps) == .allApps
    }

    /// `canSend(to:account:)` for the identity in effect.
    public func canSend(to target: DataTransferPeer) async -> Bool { await canSend(to: target, account: effectiveIdentity()) }

    /// May data from `source` be received into `account`'s documents (seed 002's import and receive matrices)?
    /// A managed account follows its policy's `receiveData`; an unmanaged one may take anything except a managed
    /// account's data whose policy sends to policy-managed apps only.
    public func canReceive(from source: DataTransferPeer, account: Account?) async -> Bool {
        if let settings = await policy(for: account)?.settings {
            switch settings.dataTransfer?.receiveData ?? .allApps {
            case .allApps: return true
            case .none: return false
            case .policyManagedApps: return source.isPolicyManaged
            }
        }
        guard source.isPolicyManaged, let peer = await managedAccount(matching: source.account) else { return true }
        return (await policy(for: peer)?.settings.dataTransfer?.sendOrgData ?? .allApps) == .allApps
    }

    /// `canReceive(from:account:)` into the identity in effect.
    public func canReceive(from source: DataTransferPeer) async -> Bool { await canReceive(from: source, account: effectiveIdentity()) }

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
