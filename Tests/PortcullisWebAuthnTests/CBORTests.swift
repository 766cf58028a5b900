import Foundation
import PortcullisTesting
import PortcullisWebAuthnFormat
import Testing

@Suite("CBOR and WebAuthn formats")
struct CBORTests {
    let decoder = CBORDecoder()

    func hex(_ text: String) -> [UInt8] { Array(hexBytes(text)) }

    func reason(_ bytes: [UInt8]) -> CBORError.Reason? {
        do {
            _ = try decoder.decode(bytes)
            return nil
        } catch {
            return error.reason
        }
    }

    @Test("RFC 8949 appendix A examples within the subset decode to their values, and encode back to the same bytes")
    func appendixA() throws {
        let examples: [(String, CBOR)] = [
            ("00", .unsigned(0)), ("17", .unsigned(23)), ("1818", .unsigned(24)), ("1903e8", .unsigned(1000)), ("1a000f4240", .unsigned(1_000_000)),
            ("1b000000e8d4a51000", .unsigned(1_000_000_000_000)), ("1bffffffffffffffff", .unsigned(.max)), ("20", CBOR(-1)), ("3863", CBOR(-100)),
            ("3bffffffffffffffff", .negative(.max)), ("40", .bytes([])), ("4401020304", .bytes([1, 2, 3, 4])), ("60", .text("")),
            ("6161", .text("a")), ("62c3bc", .text("ü")), ("83010203", .array([CBOR(1), CBOR(2), CBOR(3)])),
            ("a201020304", .map([.init(CBOR(1), CBOR(2)), .init(CBOR(3), CBOR(4))])), ("f4", .bool(false)), ("f5", .bool(true)), ("f6", .null),
            ("f7", .undefined),
        ]
        for (text, value) in examples {
            #expect(try decoder.decode(hex(text)) == value, "\(text)")
            #expect(value.encoded == hex(text), "\(text)")
        }
        #expect(CBOR(-100).int == -100 && CBOR.unsigned(.max).int == nil)
    }

    @Test("refused: indefinite lengths, tags, floats, other simple values, reserved encodings, bad UTF-8, duplicate keys, trailing bytes")
    func refusals() {
        #expect(reason(hex("5f42010243030405ff")) == .indefiniteLength)
        #expect(reason(hex("9fff")) == .indefiniteLength)
        #expect(reason(hex("c11a514b67b0")) == .unsupportedType)  // tag 1
        #expect(reason(hex("f93c00")) == .unsupportedType)  // half-precision 1.0
        #expect(reason(hex("fb3ff199999999999a")) == .unsupportedType)
        #expect(reason(hex("f0")) == .unsupportedType)  // simple(16)
        #expect(reason(hex("1c")) == .reservedEncoding)
        #expect(reason(hex("62c328")) == .invalidText)
        #expect(reason(hex("a201020103")) == .duplicateKey)
        #expect(reason(hex("0000")) == .trailingBytes)
        #expect(reason(hex("19")) == .truncated)
        #expect(reason([]) == .truncated)
    }

    @Test("a declared length the input cannot hold is refused before anything is allocated; nesting is bounded")
    func limits() {
        #expect(reason(hex("5bffffffffffffffff")) == .tooLong)  // 2^64−1 bytes declared
        #expect(reason(hex("9bffffffffffffffff")) == .tooLong)
        #expect(reason(hex("bb7fffffffffffffff")) == .tooLong)
        #expect(reason(hex("4501020304")) == .tooLong)
        #expect(reason(hex("a3010203")) == .tooLong)  // three entries need at least six bytes
        #expect(reason(Array(repeating: 0x81, count: 9) + [0x00]) == .tooDeep)
        #expect((try? decoder.decode(Array(repeating: 0x81, count: 8) + [0x00])) != nil)
        #expect((try? CBORDecoder(maximumDepth: 100).decode(Array(repeating: 0x81, count: 50) + [0x00])) != nil)
    }

    @Test("decodePrefix reports how many bytes the first item took")
    func prefix() throws {
        let (item, length) = try decoder.decodePrefix(hex("a10102ff00"))
        #expect(item == .map([.init(CBOR(1), CBOR(2))]) && length == 3)
    }

    @Test("authenticator data: flags, counter, attested credential and extensions read strictly; trailing bytes and bad lengths refused")
    func authenticatorData() throws {
        let key: CBOR = .map([
            .init(CBOR(1), CBOR(2)), .init(CBOR(3), CBOR(-7)), .init(CBOR(-1), CBOR(1)), .init(CBOR(-2), .bytes(Array(repeating: 1, count: 32))),
            .init(CBOR(-3), .bytes(Array(repeating: 2, count: 32))),
        ])
        let head = Array(repeating: UInt8(9), count: 32)
        let counter: [UInt8] = [0, 0, 1, 2]
        func attested(flags: UInt8, idLength: Int = 4, extensions: CBOR? = nil, trailing: [UInt8] = []) -> [UInt8] {
            head + [flags] + counter + Array(repeating: 0xaa, count: 16) + [UInt8(idLength >> 8), UInt8(idLength & 0xff)]
                + Array(repeating: 0x11, count: idLength) + key.encoded + (extensions?.encoded ?? []) + trailing
        }
        let data = try AuthenticatorData(attested(flags: 0x45))
        #expect(data.flags == [.userPresent, .userVerified, .attestedCredentialData] && data.signCount == 258)
        #expect(data.attestedCredential?.credentialId == [0x11, 0x11, 0x11, 0x11] && data.attestedCredential?.publicKeyBytes == key.encoded)
        #expect(data.attestedCredential?.publicKey == .es256(x: Array(repeating: 1, count: 32), y: Array(repeating: 2, count: 32)))
        let withExtensions = try AuthenticatorData(attested(flags: 0xc5, extensions: .map([.init(.text("credProtect"), CBOR(2))])))
        #expect(withExtensions.extensions?[text: "credProtect"] == CBOR(2))
        #expect(throws: WebAuthnFormatError.self) { try AuthenticatorData(attested(flags: 0x45, trailing: [0])) }
        #expect(throws: WebAuthnFormatError.self) { try AuthenticatorData(attested(flags: 0x45, idLength: 0)) }
        #expect(throws: WebAuthnFormatError.self) { try AuthenticatorData(attested(flags: 0x45, idLength: 1024)) }
        #expect(throws: WebAuthnFormatError.self) { try AuthenticatorData(attested(flags: 0xc5, extensions: CBOR(1))) }
        #expect(throws: WebAuthnFormatError.self) { try AuthenticatorData(head + [0x15] + counter) }  // BS without BE
        #expect(throws: WebAuthnFormatError.self) { try AuthenticatorData(head + [0x05] + [0, 0]) }
        #expect(try AuthenticatorData(head + [0x1d] + counter).flags.contains(.backedUp))
        let maximal = try AuthenticatorData(attested(flags: 0x45, idLength: 1023))
        #expect(maximal.attestedCredential?.credentialId.count == 1023)
    }

    @Test("COSE keys: ES256, EdDSA, RS256 with the right curves and sizes; anything else refused")
    func coseKeys() throws {
        func key(_ entries: [(Int, CBOR)]) -> CBOR { .map(entries.map { CBOR.Entry(CBOR($0.0), $0.1) }) }
        let x = CBOR.bytes(Array(repeating: 3, count: 32))
        #expect(try COSEKey(key([(1, CBOR(1)), (3, CBOR(-8)), (-1, CBOR(6)), (-2, x)])) == .ed25519(x: Array(repeating: 3, count: 32)))
        #expect(throws: WebAuthnFormatError.self) { try COSEKey(key([(1, CBOR(2)), (3, CBOR(-7)), (-1, CBOR(2)), (-2, x), (-3, x)])) }  // P-384 curve
        #expect(throws: WebAuthnFormatError.self) { try COSEKey(key([(1, CBOR(2)), (3, CBOR(-7)), (-1, CBOR(1)), (-2, x)])) }  // no y
        #expect(throws: WebAuthnFormatError.self) { try COSEKey(key([(1, CBOR(1)), (3, CBOR(-8)), (-1, CBOR(6)), (-2, .bytes([1]))])) }
        #expect(throws: WebAuthnFormatError.self) {
            try COSEKey(key([(1, CBOR(3)), (3, CBOR(-257)), (-1, .bytes(Array(repeating: 1, count: 128))), (-2, .bytes([1, 0, 1]))]))
        }
        #expect(throws: WebAuthnFormatError.self) { try COSEKey(key([(1, CBOR(2)), (3, CBOR(-36))])) }
        #expect(throws: WebAuthnFormatError.self) { try COSEKey(.array([])) }
        let rsa = try COSEKey(key([(1, CBOR(3)), (3, CBOR(-257)), (-1, .bytes([0] + Array(repeating: 0xc1, count: 256))), (-2, .bytes([1, 0, 1]))]))
        #expect(rsa == .rs256(modulus: Array(repeating: 0xc1, count: 256), exponent: [1, 0, 1]))
    }

    @Test("the fuzzer's seed corpus replays through the fuzz entry point's readers without a crash")
    func corpusReadable() throws {
        let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Fuzz/corpus").standardized
        let files = try FileManager.default.contentsOfDirectory(at: corpus, includingPropertiesForKeys: nil)
        #expect(files.count >= 10)
        let attestation = try Data(contentsOf: corpus.appendingPathComponent("attestation-none"))
        #expect(try AttestationObject(Array(attestation)).format == "none")
        for file in files {
            let bytes = Array(try Data(contentsOf: file))
            _ = try? AttestationObject(bytes)
            _ = try? AuthenticatorData(bytes)
            if let item = try? decoder.decode(bytes) { #expect(try decoder.decode(item.encoded) == item, "\(file.lastPathComponent)") }
        }
    }
}
