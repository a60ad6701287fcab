import ArgumentParser
import CoverdConfig

/// `coverd check-config`: exit 0, or 78 with file, line and key.
struct CheckConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Check the configuration file; exit 78 naming file, line and key if it is invalid.")

    @OptionGroup var config: ConfigOptions

    @Flag(name: .long, help: "Print nothing when the configuration is valid (for ExecReload=).")
    var quiet = false

    func run() throws {
        try exitingOnFailure {
            let configuration = try config.load()
            guard !quiet else { return }
            if let file = configuration.file {
                print("configuration OK: \(file)")
            } else {
                print("no configuration file at \(ConfigLoader().defaultFile); the defaults apply")
            }
            print("records: \(configuration.recordsDirectory)")
            print("cache:   \(configuration.cacheDirectory)")
        }
    }
}
