import Foundation

#if !FUZZING
// scripts/fuzz compiles the format's sources and this file as one module; SwiftPM builds the replayer against the module.
import PortcullisWebAuthnFormat
#endif

/// One input through every WebAuthn reader. None may crash, hang or allocate what the input cannot hold; CBOR that
/// decodes must encode and decode again to the same value.
func check(_ bytes: [UInt8]) {
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
