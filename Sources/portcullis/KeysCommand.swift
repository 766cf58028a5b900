import ArgumentParser
import Foundation
import PortcullisCore
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
            abstract:
                "Add a signing key to every tenant's key ring (or one tenant's) that starts signing at its activation time; it is published (and verifies) as soon as a node loads it. Restart every node before that time; older keys keep verifying until you delete them."
        )
        @Option(help: "Only this tenant's ring (its ID); default every ring under Keys/tenants/.")
        var tenant: String?
        @OptionGroup var locations: LocationOptions
        @Option(help: "ES256 or RS256 (default: the configured algorithm).")
        var algorithm: String?
        @Option(name: .customLong("activate-in"), help: "Seconds from now until the key starts signing (default 3600).")
        var activateIn: Int = 3600

        func run() async throws {
            let settings = try locations.settings(environment: ProcessInfo.processInfo.environment)
            let algorithm =
                try algorithm.map {
                    guard let value = SigningAlgorithm(rawValue: $0.uppercased()) else { throw ValidationError("--algorithm must be ES256 or RS256") }
                    return value
                } ?? settings.signingAlgorithm
            let activation = Date().addingTimeInterval(TimeInterval(max(0, activateIn)))
            let keys = URL(fileURLWithPath: settings.keysDirectory)
            let tenants = tenant.map { [TenantID($0)] } ?? TenantKeyRings.tenantIds(keysDirectory: keys)
            guard !tenants.isEmpty else {
                throw ValidationError(
                    "no tenant key ring under \(settings.keysDirectory)/tenants yet: each tenant's ring is created when the server first starts with it")
            }
            for id in tenants {
                guard id.rawValue.isGUID else { throw ValidationError("--tenant must be a tenant ID (a GUID)") }
                let name = try TenantKeyRings.generate(keysDirectory: keys, tenantId: id, algorithm: algorithm, activatesAt: activation)
                print(
                    "generated \(settings.keysDirectory)/\(name); it signs from \(activation.formatted(.iso8601)) on every node restarted before then"
                )
            }
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
