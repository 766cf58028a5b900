public import JWTKit
public import PortcullisAPI

/// Compliance callbacks are signed with the token key and verified with the JWKS, like any other JWT.
extension ComplianceSecurityEvent: JWTPayload {
    public func verify(using algorithm: some JWTAlgorithm) async throws {}
}

extension TokenSigner {
    /// Signs a compliance Security Event Token (`typ: secevent+jwt`, RFC 8417 §2.3).
    public func sign(securityEvent: ComplianceSecurityEvent) async throws -> String {
        try await sign(securityEvent, type: "secevent+jwt")
    }

    /// Signs a Shared Signals SET (`typ: secevent+jwt`).
    public func sign(sharedSignal event: SharedSignalsSecurityEvent) async throws -> String {
        try await sign(event, type: "secevent+jwt")
    }
}
