// An app imports PortcullisClient alone: the wire types (PortcullisAPI) and the vocabulary they are made of
// (statuses, messages, app protection settings) come with it.
@_exported public import PortcullisAPI
@_exported public import PortcullisVocabulary
