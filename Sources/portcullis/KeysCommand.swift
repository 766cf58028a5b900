import ArgumentParser
import Foundation
import PortcullisTokens

struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Manage signing keys.",
        subcommands: [Generate.self, HashSecret.self]
    )

    struct Generate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "generate",
            abstract: "Add a new signing key; the newest key of the configured algorithm signs after the next start, older keys keep verifying until removed."
        )
        @OptionGroup var locations: LocationOptions
        @Option(help: "ES256 or RS256 (default: the configured algorithm).")
        var algorithm: String?

        func run() async throws {
            let settings = try locations.settings(environment: ProcessInfo.processInfo.environment)
            let algorithm = try algorithm.map {
                guard let value = SigningAlgorithm(rawValue: $0.uppercased()) else { throw ValidationError("--algorithm must be ES256 or RS256") }
                return value
            } ?? settings.signingAlgorithm
            let name = try SigningKeyStore(directory: URL(fileURLWithPath: settings.keysDirectory)).generate(algorithm: algorithm, now: Date())
            print("generated \(settings.keysDirectory)/\(name)")
        }
    }

    struct HashSecret: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "hash-secret",
            abstract: "Print a new client secret and its secretHash for directory.json (bound to this deployment's pepper in the keys directory)."
        )
        @OptionGroup var locations: LocationOptions

        func run() async throws {
            let settings = try locations.settings(environment: ProcessInfo.processInfo.environment)
            let hasher = try CredentialHasher.loadOrCreate(file: URL(fileURLWithPath: settings.keysDirectory).appendingPathComponent("credential-pepper.key"))
            let secret = CredentialHasher.generateSecret()
            print("secret:     \(secret)")
            print("secretHash: \(hasher.hashSecret(secret))")
        }
    }
}
