import Foundation

#if !FUZZING
// scripts/fuzz compiles the formats' sources and this file as one module; SwiftPM builds the replayer against the modules.
import PortcullisCore
import PortcullisGatewayWire
import PortcullisWebAuthnFormat
#endif

/// One input through every reader: the WebAuthn formats, the gateway's HTTP framing and device filter rules.
func check(_ bytes: [UInt8]) {
    checkWebAuthn(bytes)
    checkWire(bytes)
    checkDeviceFilter(bytes)
}

/// One input as a rule of the filter for devices (PROTOCOL §18): read or refused, never a crash or a hang; a rule that is
/// read prints to text that reads back to the same rule, and evaluates on an unregistered and a registered device.
func checkDeviceFilter(_ bytes: [UInt8]) {
    guard let rule = try? DeviceFilterRule.parse(String(decoding: bytes, as: UTF8.self)) else { return }
    guard let again = try? DeviceFilterRule.parse(rule.description), again == rule else { fatalError("print then parse changed \(rule)") }
    _ = rule.matches(nil)
    _ = rule.matches(DeviceFilterRule.Subject(strings: [.model: ["Surface"], .extensionAttribute(1): ["SAW"]], isCompliant: true, managementCounts: true))
}

/// One input through every WebAuthn reader. None may crash, hang or allocate what the input cannot hold; CBOR that
/// decodes must encode and decode again to the same value.
func checkWebAuthn(_ bytes: [UInt8]) {
    let decoder = CBORDecoder()
    if let item = try? decoder.decode(bytes) {
        guard let again = try? decoder.decode(item.encoded), again == item else { fatalError("CBOR round trip changed \(item)") }
        _ = try? COSEKey(item)
    }
    _ = try? decoder.decodePrefix(bytes)
    _ = try? AuthenticatorData(bytes)
    _ = try? AttestationObject(bytes)
    _ = try? CollectedClientData(bytes)
}

/// One input through the gateway's framing, as a request and as an answer: a head it accepts has its parts and fields
/// inside its bytes, field values hold no CR or LF, and whatever follows the head reads as a chunked body without
/// crashing; a target it accepts has no dot segment.
func checkWire(_ bytes: [UInt8]) {
    for request in [true, false] {
        bytes.withUnsafeBytes { raw in
            guard let length = try? GatewayWire.headLength(raw),
                let head = try? GatewayWire.parseHead(raw, length: length, request: request)
            else { return }
            let all = 0..<head.bytes.count
            for range in [head.first, head.second, head.third] + head.fields.flatMap({ [$0.name, $0.value] }) {
                guard all.contains(range.lowerBound) || range.isEmpty, range.upperBound <= head.bytes.count else { fatalError("a range outside the head") }
            }
            for field in head.fields where head.bytes[field.value].contains(where: { $0 == 10 || $0 == 13 }) { fatalError("CR or LF in a value") }
            let minor = GatewayWire.minorVersion(head, request ? head.third : head.first)
            if request {
                _ = try? GatewayWire.requestFraming(head, minorVersion: minor)
                if (try? GatewayWire.checkTarget(head.bytes[head.second])) != nil {
                    let path = head.bytes[head.second].prefix { $0 != UInt8(ascii: "?") }
                    for segment in path.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) where segment.elementsEqual("..".utf8) {
                        fatalError("a dot segment passed")
                    }
                }
            } else {
                _ = try? GatewayWire.answerFraming(head, status: Int(head.string(head.second)) ?? 0, requestMethod: "GET")
            }
            var body = WireBytes(Array(bytes[length...]))
            var out = WireBytes()
            var decoder = GatewayWire.ChunkedDecoder()
            _ = try? decoder.feed(&body, into: &out)
        }
    }
}

#if FUZZING
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    check(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
#else
/// Without libFuzzer: runs the files and directories named on the command line (a corpus, a crash) through `check`.
@main
enum Replay {
    static func main() throws {
        var count = 0
        for argument in CommandLine.arguments.dropFirst() {
            let url = URL(fileURLWithPath: argument)
            let files =
                (try? FileManager.default.contentsOfDirectory(at: url, includingPropertiesForKeys: nil)).map { $0.sorted { $0.path < $1.path } } ?? [url]
            for file in files {
                check(Array(try Data(contentsOf: file)))
                count += 1
            }
        }
        print("replayed \(count) inputs")
    }
}
#endif
