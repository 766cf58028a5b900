// What a service adopting the library uses besides its own types: the token checks (claims, DPoP, SETs) and the wire
// vocabulary (JSON values, event types), so that `import PortcullisResourceServer` is the one import it needs.
@_exported public import PortcullisTokenVerification
@_exported public import PortcullisVocabulary
