// The wire vocabulary the domain is built on (statuses, app protection settings, JSON values): its own module so
// that the client SDK uses it without the evaluator (PROTOCOL §16). The domain's users see it as part of Core.
@_exported public import PortcullisVocabulary
