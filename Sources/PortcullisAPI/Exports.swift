// Base64URL and the other words on the wire live in the vocabulary; code that imports the API types sees them too.
@_exported public import PortcullisVocabulary
