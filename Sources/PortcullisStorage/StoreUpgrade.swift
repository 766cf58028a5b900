/// Checks a store must pass before a migration changes what it accepts (docs/operations.md, "Upgrading").
public enum StoreUpgrade {
    /// The migration that makes object IDs and application IDs unique across the installation (PROTOCOL §11).
    public static let installationIdentifiersVersion = 7

    /// Refuses the upgrade while an identifier that must be unique across the installation is used more than once
    /// (`conflicts`: the identifier and who holds it), naming each, so the operator resolves them first: nothing is
    /// renamed or dropped behind anyone's back.
    public static func checkInstallationIdentifiers(_ conflicts: [(id: String, owners: String)]) throws {
        guard !conflicts.isEmpty else { return }
        let lines = conflicts.map { "  \($0.id): \($0.owners)" }.joined(separator: "\n")
        throw StorageError(
            .constraint,
            """
            the store cannot be upgraded: object IDs and application IDs must be unique across the installation (PROTOCOL §11), \
            and these are used more than once:
            \(lines)
            Delete or re-create all but one of each with the release you upgraded from (docs/operations.md, "Upgrading to \
            installation-wide identifiers"), then start this release again. Nothing was changed.
            """)
    }
}
