#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CoverdBase

/// Deletes the temporary files a killed `coverd remove` or `undo` left in
/// `directory` (`writeFileDurably`'s `.<name>.<pid>-<random>.tmp`, whose
/// process is gone), of files named `name` or, with nil, of any file. Run
/// under the undo journal's lock, so no live remove or undo is writing one;
/// a live pid's file is left alone all the same.
func sweepDeadTemporaries(in directory: String, of name: String? = nil) {
    for entry in listDirectory(directory) ?? [] {
        guard let file = entry.name, file.hasPrefix("."), file.hasSuffix(".tmp") else { continue }
        let inner = file.dropFirst().dropLast(".tmp".count)
        // `<name>.<pid>-<random>`: the pid follows the last dot before the last dash.
        guard let dash = inner.lastIndex(of: "-"), let dot = inner[..<dash].lastIndex(of: ".") else { continue }
        if let name, inner[..<dot] != name[...] { continue }
        guard let pid = pid_t(inner[inner.index(after: dot)..<dash]), pid > 0 else { continue }
        if kill(pid, 0) != 0 && errno == ESRCH { unlink(join(directory, file)) }
    }
}
