public import Foundation

/// Bytes written as hexadecimal in a test vector ("0a1b…"); traps on anything else (a typo in a test).
public func hexBytes(_ hex: String) -> Data {
    var data = Data()
    var index = hex.startIndex
    while index < hex.endIndex {
        let next = hex.index(index, offsetBy: 2)
        data.append(UInt8(hex[index..<next], radix: 16)!)
        index = next
    }
    return data
}
