#if canImport(AuthenticationServices) && (os(iOS) || os(macOS) || os(visionOS))
import AuthenticationServices
import Foundation

/// The Apple-platform presenter: the system browser through `ASWebAuthenticationSession`. It shares the
/// browser's cookies (`prefersEphemeralWebBrowserSession` is false), so the Portcullis session gives single
/// sign-on across apps, as Safari does for Entra. `redirectURI` is the app's registered custom-scheme URI
/// (`msauth.{bundle id}://auth`); `anchor` answers the window to present from.
@available(iOS 13.0, macOS 10.15, *)
public final class WebAuthenticationSessionPresenter: NSObject, AuthorizationPresenter, ASWebAuthenticationPresentationContextProviding, @unchecked Sendable {
    public let redirectURI: String
    private let anchor: @MainActor @Sendable () -> ASPresentationAnchor

    public init(redirectURI: String, anchor: @escaping @MainActor @Sendable () -> ASPresentationAnchor) {
        self.redirectURI = redirectURI
        self.anchor = anchor
    }

    public func present(authorizationURL url: @Sendable (String) throws -> URL) async throws -> AuthorizationRedirect {
        let target = try url(redirectURI)
        guard let scheme = URL(string: redirectURI)?.scheme else {
            throw PortcullisClientError(kind: .transport, message: "The redirect URI \(redirectURI) has no scheme.")
        }
        let callback = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<URL, Error>) in
            Task { @MainActor in
                let session = ASWebAuthenticationSession(url: target, callbackURLScheme: scheme) { callback, error in
                    if let callback {
                        continuation.resume(returning: callback)
                    } else {
                        let cancelled = (error as? ASWebAuthenticationSessionError)?.code == .canceledLogin
                        continuation.resume(
                            throwing: PortcullisClientError(
                                kind: cancelled ? .cancelled : .transport, message: error?.localizedDescription ?? "The sign-in did not complete."))
                    }
                }
                session.presentationContextProvider = self
                session.prefersEphemeralWebBrowserSession = false
                if !session.start() {
                    continuation.resume(throwing: PortcullisClientError(kind: .transport, message: "The sign-in session could not start."))
                }
            }
        }
        return AuthorizationRedirect(redirectURI: redirectURI, url: callback)
    }

    @MainActor
    public func presentationAnchor(for session: ASWebAuthenticationSession) -> ASPresentationAnchor { anchor() }
}
#endif
