import CoverdBase
import CoverdConfig
import CoverdImages
import CoverdTestSupport
import Foundation
import Testing

@Suite("Configuration")
struct ConfigLoaderTests {
    let environment = ["HOME": "/home/u"]

    func load(_ text: String, file: String = "/etc/coverd/coverd.toml") throws(ConfigError) -> Configuration {
        var configuration = Configuration.defaults(environment: environment)
        try ConfigLoader(environment: environment).apply(text: text, file: file, to: &configuration)
        return configuration
    }

    func error(_ text: String) -> ConfigError? {
        do {
            _ = try load(text)
            return nil
        } catch {
            return error
        }
    }

    @Test("Given no environment overrides, when defaults are computed, then they follow XDG under HOME")
    func defaults() {
        let paths = DefaultPaths(environment: environment)
        #expect(paths.records == "/home/u/.local/share/coverd/albums")
        #expect(paths.cache == "/home/u/.cache/coverd")
        #expect(paths.configFile == "/home/u/.config/coverd/coverd.toml")
    }

    @Test("Given systemd and XDG variables, when defaults are computed, then systemd's directories win")
    func systemdDirectories() {
        let paths = DefaultPaths(environment: [
            "HOME": "/home/u", "XDG_DATA_HOME": "/data", "XDG_CACHE_HOME": "/xc",
            "CACHE_DIRECTORY": "/var/cache/coverd:/other", "CONFIGURATION_DIRECTORY": "/etc/coverd",
        ])
        #expect(paths.records == "/data/coverd/albums")
        #expect(paths.cache == "/var/cache/coverd")
        #expect(paths.configFile == "/etc/coverd/coverd.toml")
    }

    @Test("Given every section, when loaded, then values apply and relative paths resolve against the file")
    func fullFile() throws {
        let configuration = try load("""
            records = "albums"
            cache = "~/c"
            log_level = "debug"
            [fetch]
            concurrency = 32
            per_host = 8
            connect_timeout = 2.5
            max_bytes = 1048576
            [retry]
            initial_delay = 0.5
            failed_interval = 60
            [images]
            max_side = 4096
            max_dimension = 1200
            png_compression = 9
            """)
        #expect(configuration.recordsDirectory == "/etc/coverd/albums")
        #expect(configuration.cacheDirectory == "/home/u/c")
        #expect(configuration.logLevel == .debug)
        #expect(configuration.fetch.concurrency == 32)
        #expect(configuration.fetch.perHost == 8)
        #expect(configuration.fetch.connectTimeout == .milliseconds(2500))
        #expect(configuration.fetch.maxBytes == 1_048_576)
        #expect(configuration.retry.initialDelay == .milliseconds(500))
        #expect(configuration.retry.failedInterval == .seconds(60))
        #expect(configuration.images.maxSide == 4096)
        #expect(configuration.imageOutput == ImageOutput(maxDimension: 1200, compressionLevel: 9))
    }

    @Test("Given image output settings, when max_dimension is 0 or png_compression out of range, then 0 means off and 10 is refused")
    func imageOutput() throws {
        #expect(try load("[images]\nmax_dimension = 0\n").imageOutput.maxDimension == nil)
        #expect(try load("").imageOutput == ImageOutput(maxDimension: nil, compressionLevel: 6))
        let failure = error("[images]\npng_compression = 10\n")
        #expect(failure?.line == 2)
        #expect(failure?.message == "must be between 0 and 9, found 10")
    }

    @Test("Given a wrong type, when loaded, then the error names file, line and key")
    func wrongType() {
        let failure = error("# comment\n[fetch]\nper_host = 2\nconcurrency = \"many\"\n")
        #expect(failure == ConfigError(file: "/etc/coverd/coverd.toml", line: 4, key: "fetch.concurrency", message: "must be an integer, found the string \"many\""))
        #expect(failure?.description == "/etc/coverd/coverd.toml:4: fetch.concurrency: must be an integer, found the string \"many\"")
    }

    @Test("Given an out-of-range value, when loaded, then the range is explained")
    func outOfRange() {
        let failure = error("[fetch]\nconcurrency = 0\n")
        #expect(failure?.line == 2)
        #expect(failure?.message == "must be between 1 and 1024, found 0")
    }

    @Test("Given an unknown key, when loaded, then it is an error with a suggestion")
    func unknownKey() {
        let failure = error("\n\nconcurrency = 4\n")
        #expect(failure?.line == 3)
        #expect(failure?.key == "concurrency")
        #expect(failure?.message == "unknown setting (did you mean 'fetch.concurrency'?)")
    }

    @Test("Given invalid TOML, when loaded, then the parser's line is reported")
    func invalidTOML() {
        let failure = error("[fetch]\nconcurrency = = 3\n")
        #expect(failure?.line == 2)
        #expect(failure?.key == nil)
        #expect(failure?.message.hasPrefix("invalid TOML") == true)
    }

    @Test("Given a bad log level, when loaded, then the allowed values are listed")
    func badLogLevel() {
        #expect(error("log_level = \"loud\"")?.message.contains("trace, debug, info") == true)
    }

    @Test("Given a missing file named explicitly, when loaded, then it is an error; a missing default file is not")
    func missingFiles() throws {
        let directory = TestDirectory()
        #expect(throws: ConfigError.self) {
            try ConfigLoader(environment: ["HOME": directory.path]).load(file: directory.file("nope.toml"))
        }
        let configuration = try ConfigLoader(environment: ["HOME": directory.path]).load(file: nil)
        #expect(configuration.file == nil)
        #expect(configuration.cacheDirectory == directory.path + "/.cache/coverd")
    }

    @Test("Given the shipped example configuration, when loaded, then it is valid and matches the defaults")
    func shippedExample() throws {
        let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("config/coverd.toml").path
        let configuration = try ConfigLoader(environment: environment).load(file: example)
        var expected = Configuration.defaults(environment: environment)
        expected.file = configuration.file
        #expect(configuration == expected)
    }

    @Test("Given two bad keys, when loaded, then the first in the file is reported")
    func firstProblemInFileOrder() {
        let failure = error("[retry]\ninitial_delay = \"soon\"\n[fetch]\nconcurrency = \"many\"\n")
        #expect(failure?.key == "retry.initial_delay")
        #expect(failure?.line == 2)
    }

    @Test("Given an inline table and a multi-line string, when a key inside is bad, then the right line is named")
    func inlineTablesAndStrings() {
        let failure = error("log_target = \"auto\"\n\n\nfetch = { per_host = \"six\" }\n")
        #expect(failure?.line == 4)
        #expect(failure?.key == "fetch.per_host")
    }

    @Test("Given a [sources] section, when loaded, then lookups ask where it says, with its contact and score, and max_dimension picks the thumbnail")
    func sourcesSection() throws {
        let configuration = try load("""
            [sources]
            musicbrainz_url = "http://127.0.0.1:5000/"
            coverartarchive_url = "https://caa.example"
            contact = "me@example.org"
            min_score = 95
            recheck_interval = 86400
            lookup = false
            [images]
            max_dimension = 400
            """)
        #expect(configuration.lookup.musicBrainzURL == "http://127.0.0.1:5000")
        #expect(configuration.lookup.coverArtArchiveURL == "https://caa.example")
        #expect(configuration.lookup.minScore == 95)
        #expect(configuration.lookup.thumbnail == 500)
        #expect(configuration.fetch.contact == "me@example.org")
        #expect(configuration.retry.lookupRecheck == .seconds(86_400))
        #expect(configuration.records.coverURLRequired)
    }

    @Test("Given no [sources], when loaded, then lookups are on, ask musicbrainz.org and coverartarchive.org, and take scores of 90 and over")
    func sourcesDefaults() throws {
        let configuration = try load("")
        #expect(configuration.lookup.musicBrainzURL == "https://musicbrainz.org")
        #expect(configuration.lookup.coverArtArchiveURL == "https://coverartarchive.org")
        #expect(configuration.lookup.minScore == 90)
        #expect(configuration.lookup.thumbnail == nil)
        #expect(configuration.retry.lookupRecheck == .seconds(604_800))
        #expect(!configuration.records.coverURLRequired)
        #expect(configuration.fetch.contact.isEmpty)
    }

    @Test("Given a bad [sources] value, when loaded, then the error names the line and key", arguments: [
        ("[sources]\nmusicbrainz_url = \"ftp://mb\"\n", "sources.musicbrainz_url", "absolute http or https URL"),
        ("[sources]\ncontact = \"me\\nX-Evil: 1\"\n", "sources.contact", "without control characters"),
        ("[sources]\nmin_score = 101\n", "sources.min_score", "between 0 and 100"),
        ("[sources]\nlookup = \"yes\"\n", "sources.lookup", "true or false"),
    ])
    func badSources(text: String, key: String, message: String) throws {
        let failure = try #require(error(text))
        #expect(failure.line == 2 && failure.key == key && failure.message.contains(message), "\(failure)")
    }

    @Test("Given a [cache] section, when loaded, then its directory resolves against the file and keep_removed is in seconds; the top-level cache key still works")
    func cacheSection() throws {
        let loaded = try load("[cache]\ndirectory = \"covers-cache\"\nkeep_removed = 60\n")
        #expect(loaded.cacheDirectory == "/etc/coverd/covers-cache")
        #expect(loaded.keepRemoved == .seconds(60))
        #expect(try load("cache = \"/var/c\"\n").cacheDirectory == "/var/c")
        #expect(try load("[cache]\nkeep_removed = 0\n").keepRemoved == .zero)
        #expect(Configuration.defaults(environment: environment).keepRemoved == .seconds(604_800))
    }

    @Test("Given a keep_removed below zero, over ten years, or not a number, when loaded, then the line and key are named", arguments: [
        "keep_removed = -1", "keep_removed = 315360001", "keep_removed = \"week\"",
    ])
    func badKeepRemoved(line: String) {
        let failure = error("[cache]\n\(line)\n")
        #expect(failure?.line == 2)
        #expect(failure.map { "\($0)".contains("keep_removed") } == true, "\(String(describing: failure))")
    }
}
