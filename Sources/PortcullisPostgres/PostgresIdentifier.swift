public import NIOCore
public import PortcullisCore
public import PostgresNIO

/// Identifiers bind and decode as the text they are stored as (their normal form).
extension Identifier: PostgresNonThrowingEncodable, PostgresDecodable, PostgresEncodable {
    public static var psqlType: PostgresDataType { String.psqlType }
    public static var psqlFormat: PostgresFormat { String.psqlFormat }

    public func encode<JSONEncoder: PostgresJSONEncoder>(into byteBuffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        rawValue.encode(into: &byteBuffer, context: context)
    }

    public init<JSONDecoder: PostgresJSONDecoder>(
        from byteBuffer: inout ByteBuffer, type: PostgresDataType, format: PostgresFormat, context: PostgresDecodingContext<JSONDecoder>
    ) throws {
        self.init(try String(from: &byteBuffer, type: type, format: format, context: context))
    }
}
