/// Everything the server persists. Backends (SQLite, PostgreSQL) implement it whole.
public protocol PortcullisStore: DocumentStore, RefreshTokenStore, RevokedAccessTokenStore, ProofReplayStore, SignInStore, EnrollmentStore, OutboxStore,
    SignalQueueStore,
    ThrottleStore,
    InteractiveStore, AuthenticationMethodStore, PasskeyStore, TemporaryAccessPassStore, EffectStore
{
    /// Runs the migrations this build needs; idempotent.
    func migrate() async throws
    /// Whether the store answers (readiness).
    func ping() async throws
    func close() async throws
}
