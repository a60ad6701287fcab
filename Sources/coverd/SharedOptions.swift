import ArgumentParser
import CoverdBase
import CoverdConfig
import Foundation

/// `--config FILE`, shared by every command that reads the configuration.
struct ConfigOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The configuration file (default: $CONFIGURATION_DIRECTORY or ~/.config/coverd/coverd.toml).", valueName: "file"))
    var config: String?

    /// Loads the file (a missing default file means defaults); exits 78 on a configuration error.
    func load() throws -> Configuration {
        do {
            return try ConfigLoader().load(file: config)
        } catch {
            throw ConfigurationFailure(error: error)
        }
    }
}

/// `--cache DIR`.
struct CacheOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The cache directory (covers and index).", valueName: "dir"))
    var cache: String?

    /// The flag, else the configuration's cache directory, as an absolute path.
    func directory(config: ConfigOptions) throws -> String {
        if let cache { return absolute(cache) }
        return try config.load().cacheDirectory
    }
}

/// `--records DIR`.
struct RecordsOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The watched directory of album records.", valueName: "dir"))
    var records: String?
}

/// A configuration error: printed with file, line and key, exit status 78 (EX_CONFIG).
struct ConfigurationFailure: Error, CustomStringConvertible {
    var error: ConfigError
    var description: String { "coverd: configuration error: \(error)" }
}

/// Paths from flags are relative to the working directory, with `~` expanded.
func absolute(_ path: String) -> String {
    resolvePath(path, relativeTo: FileManager.default.currentDirectoryPath, home: ProcessInfo.processInfo.environment["HOME"])
}

/// Runs a command body, turning coverd's own errors into the contract's exit statuses.
func exitingOnFailure(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let failure as ConfigurationFailure {
        printError(failure.description)
        throw ExitCode(78)
    }
}

func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}
