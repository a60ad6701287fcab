import ArgumentParser
import CoverdConfig
import Logging

/// `--log-level`: one of swift-log's levels, in any case.
struct LogLevelArgument: ExpressibleByArgument {
    let level: Logger.Level

    init?(argument: String) {
        guard let level = Logger.Level(rawValue: argument.lowercased()) else { return nil }
        self.level = level
    }

    static var allValueStrings: [String] { Logger.Level.allCases.map(\.rawValue) }
}

extension LogTarget: ExpressibleByArgument {}
