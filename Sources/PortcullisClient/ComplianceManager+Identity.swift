import Foundation
import PortcullisAPI
public import PortcullisVocabulary

/// The identity code runs as (seed 002's thread identity, PROTOCOL §16), scoped the way Swift scopes context: a
/// task-local that `withIdentity` sets for an operation and every task it starts. Outside any scope it is unset, and the
/// manager's `uiIdentity` (what `switchIdentity(to:)` chose) applies.
public enum CurrentIdentity {
    /// One scope's identity: `account` is `nil` for "no identity", which is unmanaged.
    public struct Scope: Sendable, Equatable {
        public var account: Account?
    }

    @TaskLocal public static var scope: Scope?
}

/// Runs `operation` as `account` (`nil`: no identity, unmanaged): the participation queries and data protection in it
/// act for that account unless told otherwise, and so does every child task it starts. The identity before it comes
/// back when it returns (`IntuneMAMSwiftContextManager.setIdentity(_:forScope:)`).
public func withIdentity<T>(_ account: Account?, isolation: isolated (any Actor)? = #isolation, operation: () async throws -> T) async rethrows -> T {
    try await CurrentIdentity.$scope.withValue(CurrentIdentity.Scope(account: account), operation: operation, isolation: isolation)
}

/// How an identity switch ended (the Intune SDK's `IntuneMAMAddIdentityResult`, with the reason for a refusal).
public enum IdentitySwitchResult: Sendable, Equatable {
    /// The app now shows this identity's data.
    case switched
    /// The launch conditions did not pass (the status says why: a PIN not set, the user cancelled, no network…), or the
    /// app declined a switch the SDK asked for (`nil`). The app keeps the identity it had and must not show the data.
    case refused(ComplianceStatus?)
}

extension ComplianceManager {
    /// The identity in effect here: the innermost `withIdentity` scope, else `uiIdentity`.
    public nonisolated func effectiveIdentity(ui: Account?) -> Account? {
        if let scope = CurrentIdentity.scope { return scope.account }
        return ui
    }

    /// The identity in effect for the calling task.
    public func effectiveIdentity() -> Account? { effectiveIdentity(ui: uiIdentity) }

    /// Whether `account` is this app instance's managed account (enrolled here); `nil` and every other account are
    /// unmanaged, and no policy restricts them (seed 002).
    public func isManaged(_ account: Account?) async -> Bool {
        guard let account else { return false }
        return (try? await stateStore.state(homeAccountId: account.homeAccountId)) != nil
    }

    /// `setUIPolicyIdentity`: the app is about to show `account`'s data. An unmanaged identity (or `nil`) switches at
    /// once; a managed one runs the launch conditions again first (a check-in that may ask the user for a PIN). On a
    /// refusal the delegate hears `identitySwitchRefused` and the identity stays what it was: the app must not open
    /// the content.
    public func switchIdentity(to account: Account?) async -> IdentitySwitchResult {
        guard let account, await isManaged(account) else {
            uiIdentity = account
            return .switched
        }
        let status = await checkIn(account: account, silent: false)
        guard status.status == .compliant else {
            await delegate?.identitySwitchRefused(to: account, status: status)
            return .refused(status)
        }
        uiIdentity = account
        return .switched
    }

    /// The SDK's side of a switch (`identitySwitchRequired`): data owned by `owner` is about to be shown while another
    /// identity is in effect. The delegate decides; if it agrees, the switch runs as `switchIdentity(to:)`.
    public func requireIdentity(_ owner: Account?) async -> IdentitySwitchResult {
        if effectiveIdentity() == owner { return .switched }
        guard let delegate, await delegate.identitySwitchRequired(to: owner) else {
            await self.delegate?.identitySwitchRefused(to: owner, status: nil)
            return .refused(nil)
        }
        return await switchIdentity(to: owner)
    }
}
