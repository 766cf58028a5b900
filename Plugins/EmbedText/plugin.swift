import PackagePlugin

/// Compiles the text files a target keeps beside its sources (the OpenAPI description, Microsoft's conditional-access
/// templates) into it as string
/// literals (`EmbeddedText.name`): one binary to ship, the document edited as the JSON file it is.
@main
struct EmbedText: BuildToolPlugin {
    /// The files each target embeds, by the name they get.
    static let files: [String: [(name: String, path: String)]] = [
        "PortcullisServer": [("openapi_json", "Operations/openapi.json"), ("templates_json", "ConditionalAccess/templates.json")]
    ]

    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let target = target as? SourceModuleTarget, let files = Self.files[target.name] else { return [] }
        let inputs = files.map { target.directoryURL.appending(path: $0.path) }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedText.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(files.map(\.path).joined(separator: ", ")) in \(target.name)",
                executable: try context.tool(named: "portcullis-embed").url,
                arguments: [output.path] + zip(files, inputs).map { "\($0.0.name)=\($0.1.path)" },
                inputFiles: inputs,
                outputFiles: [output])
        ]
    }
}
