public import PortcullisCore

/// What a grant's plan (Core's `MintPlan`) puts in each token, in one place: the token endpoint signs these.
extension AccessTokenClaims {
    /// The access token `plan` describes, issued by `issuer` under the ID `tokenId` (its `jti`, fixed before the decision
    /// so that an authorization code can record what its redemption issued).
    /// `identityProvider`: the home tenant's issuer, for a B2B collaboration user (`plan.homeTenantId`).
    public init(_ plan: MintPlan.AccessToken, issuer: String, tokenId: String, identityProvider: String? = nil) {
        self.init(
            iss: issuer, aud: plan.audience, sub: plan.subject, oid: plan.objectId, tid: plan.tenantId, azp: plan.clientId,
            azpacr: !plan.clientAuthenticated ? "0" : plan.clientCredential == .clientSecret ? "1" : "2", iat: plan.issuedAt, nbf: plan.issuedAt,
            exp: plan.expiresAt,
            jti: tokenId, scp: plan.scopes.isEmpty ? nil : plan.scopes.joined(separator: " "),
            roles: plan.roles.isEmpty ? nil : plan.roles, upn: plan.userPrincipalName, preferredUsername: plan.userPrincipalName,
            name: plan.name, xmsCC: plan.capabilities.isEmpty ? nil : plan.capabilities, idtyp: plan.delegated ? "user" : "app",
            xmsMamEnrollment: plan.enrollmentId, amr: plan.methods.isEmpty ? nil : plan.methods, authTime: plan.authTime,
            acrs: plan.authenticationContexts.isEmpty ? nil : plan.authenticationContexts, cnf: plan.confirmation.map(Confirmation.init(jkt:)))
        xmsIatMs = plan.issuedAtMilliseconds
        if plan.applicationEnforcedRestrictions { xmsAppRes = true }
        xmsSle = plan.strictLocation?.map { StrictLocationConstraint(include: $0.include, exclude: $0.exclude) }
        ipaddr = plan.ipAddress
        idp = identityProvider
        acct = plan.account
        deviceid = plan.deviceId
    }
}

extension IDTokenClaims {
    /// The ID token `plan` describes, issued by `issuer`.
    public init(_ plan: MintPlan.IDToken, issuer: String, identityProvider: String? = nil) {
        self.init(
            iss: issuer, aud: plan.audience, sub: plan.subject, oid: plan.subject, tid: plan.tenantId, iat: plan.issuedAt, nbf: plan.issuedAt,
            exp: plan.expiresAt, preferredUsername: plan.preferredUsername, name: plan.name, email: plan.email, nonce: plan.nonce,
            authTime: plan.authTime, amr: plan.methods.isEmpty ? nil : plan.methods, acr: plan.acr)
        idp = identityProvider
        acct = plan.account
        deviceid = plan.deviceId
    }
}
