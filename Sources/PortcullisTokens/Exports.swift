// The token checks a resource server needs live below the issuer (PortcullisTokenVerification); the issuer's code
// and its callers see them as part of this module.
@_exported public import PortcullisTokenVerification
