public import Foundation

/// The shared corpus of conditional-access policies as admins publish them (PROTOCOL §17): test data read where it
/// lies, never copied into the repository.
public enum ConditionalAccessCorpusLocation {
    /// `../shared/ca-corpus` beside the project, or `PORTCULLIS_CA_CORPUS`; `nil` when neither exists.
    public static let root: URL? = {
        if let path = ProcessInfo.processInfo.environment["PORTCULLIS_CA_CORPUS"] { return URL(fileURLWithPath: path) }
        var project = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { project.deleteLastPathComponent() }
        let shared = project.deletingLastPathComponent().appendingPathComponent("shared/ca-corpus")
        return FileManager.default.fileExists(atPath: shared.path) ? shared : nil
    }()
}
