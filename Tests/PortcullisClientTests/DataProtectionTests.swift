import Foundation
import PortcullisAPI
import PortcullisClientKeys
import Testing

@testable import PortcullisClient

@Suite("SDK data protection (seeds 002, 003)")
struct DataProtectionTests {
    func withKeys<T>(_ body: (FileInstanceKeyStore, URL) async throws -> T) async throws -> T {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("portcullis-dp-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        return try await body(FileInstanceKeyStore(directory: directory.appendingPathComponent("keys")), directory)
    }

    @Test("a managed account's data is AES-GCM under its own key, the owner recorded; it round-trips; the key file is 0600")
    func roundTrip() async throws {
        try await withKeys { keys, directory in
            let manager = try await managerWithPolicy(AppProtectionSettings(), keyStore: keys)
            let plain = Data("quarterly numbers: 42".utf8)
            let sealed = try await manager.protect(plain, for: Seed.alice)
            #expect(sealed.range(of: plain) == nil, "encrypted")
            #expect(manager.protectionInfo(for: sealed) == ProtectionInfo(owner: Seed.alice, isEncrypted: true))
            #expect(try await manager.unprotect(sealed) == plain)
            #expect(try await manager.protect(plain, for: Seed.alice) != sealed, "a fresh nonce each time")
            let keyFile = try #require(try FileManager.default.contentsOfDirectory(atPath: keys.directory.path).first { $0.hasPrefix("data-") })
            let mode = try FileManager.default.attributesOfItem(atPath: keys.directory.appendingPathComponent(keyFile).path)[.posixPermissions] as? Int
            #expect(mode == 0o600)
            // Files: written protected, read back, the owner read from the header alone.
            let file = directory.appendingPathComponent("report.bin")
            try await withIdentity(Seed.alice) { try await manager.write(plain, toProtectedFileAt: file) }
            #expect(manager.protectionInfo(forFileAt: file)?.owner == Seed.alice)
            #expect(try await withIdentity(Seed.alice) { try await manager.contentsOfProtectedFile(at: file) } == plain)
            // Shown under another identity, the SDK asks the app to switch; refused, the file is not opened.
            let delegate = RefusingDelegate()
            await manager.setDelegate(delegate)
            let refused = await #expect(throws: PortcullisClientError.self) {
                try await withIdentity(Seed.carol) { try await manager.contentsOfProtectedFile(at: file) }
            }
            #expect(refused?.kind == .identitySwitchRefused)
            #expect(await delegate.refusals == [Seed.alice])
        }
    }

    @Test("unmanaged data carries its owner but is not encrypted (seed 002); data that is not protected passes through")
    func unmanaged() async throws {
        try await withKeys { keys, _ in
            let manager = try await managerWithPolicy(AppProtectionSettings(), keyStore: keys)
            let plain = Data("holiday photos".utf8)
            let marked = try await manager.protect(plain, for: Seed.carol)
            #expect(marked.range(of: plain) != nil)
            #expect(manager.protectionInfo(for: marked) == ProtectionInfo(owner: Seed.carol, isEncrypted: false))
            #expect(try await manager.unprotect(marked) == plain)
            let none = try await manager.protect(plain, for: nil)
            #expect(manager.protectionInfo(for: none) == ProtectionInfo(owner: nil, isEncrypted: false))
            #expect(manager.protectionInfo(for: plain) == nil)
            #expect(try await manager.unprotect(plain) == plain)
        }
    }

    @Test("altered ciphertext, a swapped owner, or a destroyed key: protectedDataUnavailable, never the data")
    func refusals() async throws {
        try await withKeys { keys, _ in
            let manager = try await managerWithPolicy(AppProtectionSettings(), keyStore: keys)
            let sealed = try await manager.protect(Data("secret".utf8), for: Seed.alice)
            var flipped = sealed
            flipped[flipped.count - 20] ^= 0x01
            let altered = await #expect(throws: PortcullisClientError.self) { try await manager.unprotect(flipped) }
            #expect(altered?.kind == .protectedDataUnavailable)
            // The owner header is authenticated: relabelling Alice's data as Carol's (or anyone's) fails.
            let mallory = Account(objectId: "a2", tenantId: "t1", username: "Alice@contoso.example")
            _ = try await keys.dataProtectionKey(for: mallory, create: true)
            let relabelled = ProtectedData.prefix(owner: mallory, encrypted: true) + ProtectedData.parse(sealed)!.payload
            let swapped = await #expect(throws: PortcullisClientError.self) { try await manager.unprotect(relabelled) }
            #expect(swapped?.kind == .protectedDataUnavailable)
            // A selective wipe destroys the key: the data can no longer be opened, and no new key appears for it.
            try await keys.removeKey(for: Seed.alice)
            let wiped = await #expect(throws: PortcullisClientError.self) { try await manager.unprotect(sealed) }
            #expect(wiped?.kind == .protectedDataUnavailable)
            #expect(try await keys.dataProtectionKey(for: Seed.alice, create: false) == nil)
        }
    }

    @Test("without a key store, a managed account's data cannot be protected")
    func noKeyStore() async throws {
        let manager = try await managerWithPolicy(AppProtectionSettings())
        let error = await #expect(throws: PortcullisClientError.self) { try await manager.protect(Data("x".utf8), for: Seed.alice) }
        #expect(error?.kind == .instanceKeyRequired)
    }

    @Test("headers that lie about their length or are not JSON are not protected data")
    func malformedHeaders() {
        var bytes = Data("PCDP".utf8) + Data([1, 1, 0xff, 0xff])
        #expect(ProtectedData.parse(bytes) == nil)
        bytes = Data("PCDP".utf8) + Data([1, 1, 0, 3]) + Data("abc".utf8)
        #expect(ProtectedData.parse(bytes) == nil)
        bytes = Data("PCDP".utf8) + Data([2, 1, 0, 2]) + Data("{}".utf8)
        #expect(ProtectedData.parse(bytes) == nil, "an unknown version")
        #expect(ProtectedData.parse(Data()) == nil)
    }
}

@Suite("SDK messages in the seeds' languages")
struct LocalisationTests {
    @Test("every message has a title and text in English, Spanish, Portuguese, Italian and Chinese, each its own", arguments: ComplianceMessage.allCases)
    func catalogue(_ message: ComplianceMessage) {
        let english = message.text(.english, argument: "17.2")
        for language in MessageLanguage.allCases {
            let text = message.text(language, argument: "17.2")
            #expect(!text.title.isEmpty && !text.message.isEmpty, "\(message) \(language)")
            #expect(!text.message.contains("{0}"), "\(message) \(language): the argument is filled in")
            if language != .english { #expect(text.message != english.message, "\(message) \(language) is translated") }
        }
        if [.osTooOld, .appTooOld].contains(message) {
            for language in MessageLanguage.allCases { #expect(message.text(language, argument: "17.2").message.contains("17.2")) }
        }
    }

    @Test(
        "Accept-Language: weights, order, primary subtags, wildcards, junk",
        arguments: [
            ("es-ES,es;q=0.9,en;q=0.8", MessageLanguage.spanish), ("pt-BR", .portuguese), ("en;q=0.5, it", .italian),
            ("zh-Hant-TW, en;q=0.1", .chinese), ("fr-FR, de;q=0.9", .english), ("*", .english), ("", .english), (";;;,,q=", .english),
            ("fr, pt;q=0.2, es;q=0.7", .spanish), ("es;q=0, pt", .portuguese), ("IT-it", .italian),
        ])
    func acceptLanguage(_ header: String, _ expected: MessageLanguage) {
        #expect(MessageLanguage(acceptLanguage: header) == expected)
    }

    @Test("a status keeps its reason on the wire and shows it in another language; an unknown reason keeps the text it came with")
    func statusReason() throws {
        let status = ComplianceStatus.osTooOld("18.1")
        let decoded = try JSONDecoder().decode(ComplianceStatus.self, from: try JSONEncoder().encode(status))
        #expect(decoded == status)
        let italian = decoded.localized(.italian)
        #expect(italian.errorTitle == "Aggiorna il dispositivo" && italian.errorMessage?.contains("18.1") == true)
        let newer = Data(
            #"{"status":"notCompliant","errorTitle":"Later","errorMessage":"From a newer server","reason":"somethingNew","reasonArgument":"x"}"#.utf8)
        let kept = try JSONDecoder().decode(ComplianceStatus.self, from: newer).localized(.chinese)
        #expect(kept.errorTitle == "Later" && kept.reason == nil && kept.reasonArgument == nil)
        let configuration = ClientConfiguration(authority: URL(string: "https://x.example/t")!, clientId: "c", languages: ["pt-PT", "en-GB", "bad tag"])
        #expect(configuration.messageLanguage == .portuguese && configuration.acceptLanguage == "pt-PT, en-GB;q=0.9")
        let posix = ClientConfiguration(authority: URL(string: "https://x.example/t")!, clientId: "c", languages: ["zh_CN", "en_US"])
        #expect(posix.messageLanguage == .chinese && posix.acceptLanguage == "zh-CN, en-US;q=0.9")
    }
}
