/// OpenID Connect discovery / RFC 8414 metadata (the members Portcullis serves).
public struct DiscoveryDocument: Codable, Sendable, Equatable {
    public var issuer: String
    public var tokenEndpoint: String
    public var jwksUri: String
    public var revocationEndpoint: String
    public var introspectionEndpoint: String
    public var authorizationEndpoint: String?
    public var responseTypesSupported: [String]
    public var subjectTypesSupported: [String]
    public var idTokenSigningAlgValuesSupported: [String]
    public var tokenEndpointAuthMethodsSupported: [String]
    public var grantTypesSupported: [String]
    public var scopesSupported: [String]
    public var claimsSupported: [String]
    public var claimsParameterSupported: Bool
    public var tenantRegionScope: String?
    public var cloudInstanceName: String?
    public var complianceEndpoint: String?
    /// RFC 8628 (MSAL reads it for the device code flow).
    public var deviceAuthorizationEndpoint: String?
    /// OIDC RP-initiated logout.
    public var endSessionEndpoint: String?
    public var codeChallengeMethodsSupported: [String]?
    public var responseModesSupported: [String]?
    /// RFC 9449 §5.1: the proof algorithms the token endpoint accepts.
    public var dpopSigningAlgValuesSupported: [String]?

    public init(
        issuer: String, tokenEndpoint: String, jwksUri: String, revocationEndpoint: String, introspectionEndpoint: String,
        authorizationEndpoint: String?, responseTypesSupported: [String], subjectTypesSupported: [String],
        idTokenSigningAlgValuesSupported: [String], tokenEndpointAuthMethodsSupported: [String],
        grantTypesSupported: [String], scopesSupported: [String], claimsSupported: [String],
        claimsParameterSupported: Bool, tenantRegionScope: String?, cloudInstanceName: String?, complianceEndpoint: String?,
        deviceAuthorizationEndpoint: String? = nil, endSessionEndpoint: String? = nil, codeChallengeMethodsSupported: [String]? = nil,
        responseModesSupported: [String]? = nil
    ) {
        self.deviceAuthorizationEndpoint = deviceAuthorizationEndpoint
        self.endSessionEndpoint = endSessionEndpoint
        self.codeChallengeMethodsSupported = codeChallengeMethodsSupported
        self.responseModesSupported = responseModesSupported
        self.issuer = issuer
        self.tokenEndpoint = tokenEndpoint
        self.jwksUri = jwksUri
        self.revocationEndpoint = revocationEndpoint
        self.introspectionEndpoint = introspectionEndpoint
        self.authorizationEndpoint = authorizationEndpoint
        self.responseTypesSupported = responseTypesSupported
        self.subjectTypesSupported = subjectTypesSupported
        self.idTokenSigningAlgValuesSupported = idTokenSigningAlgValuesSupported
        self.tokenEndpointAuthMethodsSupported = tokenEndpointAuthMethodsSupported
        self.grantTypesSupported = grantTypesSupported
        self.scopesSupported = scopesSupported
        self.claimsSupported = claimsSupported
        self.claimsParameterSupported = claimsParameterSupported
        self.tenantRegionScope = tenantRegionScope
        self.cloudInstanceName = cloudInstanceName
        self.complianceEndpoint = complianceEndpoint
    }

    enum CodingKeys: String, CodingKey {
        case issuer
        case tokenEndpoint = "token_endpoint"
        case jwksUri = "jwks_uri"
        case revocationEndpoint = "revocation_endpoint"
        case introspectionEndpoint = "introspection_endpoint"
        case authorizationEndpoint = "authorization_endpoint"
        case responseTypesSupported = "response_types_supported"
        case subjectTypesSupported = "subject_types_supported"
        case idTokenSigningAlgValuesSupported = "id_token_signing_alg_values_supported"
        case tokenEndpointAuthMethodsSupported = "token_endpoint_auth_methods_supported"
        case grantTypesSupported = "grant_types_supported"
        case scopesSupported = "scopes_supported"
        case claimsSupported = "claims_supported"
        case claimsParameterSupported = "claims_parameter_supported"
        case tenantRegionScope = "tenant_region_scope"
        case cloudInstanceName = "cloud_instance_name"
        case complianceEndpoint = "portcullis_compliance_endpoint"
        case deviceAuthorizationEndpoint = "device_authorization_endpoint"
        case endSessionEndpoint = "end_session_endpoint"
        case codeChallengeMethodsSupported = "code_challenge_methods_supported"
        case responseModesSupported = "response_modes_supported"
        case dpopSigningAlgValuesSupported = "dpop_signing_alg_values_supported"
    }
}
