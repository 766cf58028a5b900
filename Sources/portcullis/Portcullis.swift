import ArgumentParser
import Foundation

@main
struct Portcullis: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "portcullis",
        abstract: "A self-hosted conditional-access token broker and app-protection compliance service.",
        subcommands: [
            ServeCommand.self, PolicyCommand.self, ApplyCommand.self, TokenCommand.self, RemediateCommand.self, CallbacksCommand.self, DevCertCommand.self,
            KeysCommand.self, VerifyTokenCommand.self, GatewayCommand.self, DeviceCommand.self, AppCommand.self,
        ]
    )
}

/// Options every command that touches the server's files shares.
struct LocationOptions: ParsableArguments {
    @Option(name: .customLong("config"), help: "Configuration directory (PORTCULLIS_CONFIG; default Config/).")
    var configDirectory: String?

    @Option(name: .customLong("data"), help: "Data directory (PORTCULLIS_DATA; default .portcullis/).")
    var dataDirectory: String?

    @Option(name: .customLong("keys"), help: "Keys directory (PORTCULLIS_KEYS; default Keys/).")
    var keysDirectory: String?

    /// Settings from the configuration file, then the environment, then these flags. The configuration
    /// directory itself comes from the flag or the environment.
    func settings(environment: [String: String]) throws -> Settings {
        var settings = Settings()
        settings.configDirectory = configDirectory ?? environment["PORTCULLIS_CONFIG"].flatMap { $0.isEmpty ? nil : $0 } ?? "Config"
        try settings.apply(file: URL(fileURLWithPath: settings.configDirectory).appendingPathComponent("portcullis.json"))
        try settings.apply(environment: environment)
        if let configDirectory { settings.configDirectory = configDirectory }
        if let dataDirectory { settings.dataDirectory = dataDirectory }
        if let keysDirectory { settings.keysDirectory = keysDirectory }
        return settings
    }
}
