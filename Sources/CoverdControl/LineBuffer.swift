/// Bytes read from a socket, cut into `\n`-terminated lines, holding at most
/// `limit` bytes of a line not yet ended: a peer that never sends a newline
/// cannot make either side grow without bound.
struct LineBuffer: Sendable {
    /// A line (or the start of one) longer than the limit.
    struct Overflow: Error, Sendable, Equatable {
        var limit: Int
    }

    let limit: Int
    private var bytes: [UInt8] = []
    /// Where the search for the next newline resumes: each byte is looked at once.
    private var scanned = 0

    init(limit: Int) {
        self.limit = limit
    }

    /// Bytes held that are not yet a whole line.
    var pendingCount: Int { bytes.count }

    mutating func append(_ chunk: some Collection<UInt8>) {
        bytes.append(contentsOf: chunk)
    }

    /// The next whole line, without its newline (and a `\r` before it); nil
    /// until one has arrived. Throws once more than `limit` bytes wait without one.
    mutating func nextLine() throws(Overflow) -> [UInt8]? {
        guard let end = bytes[scanned...].firstIndex(of: 0x0A) else {
            scanned = bytes.count
            if bytes.count > limit { throw Overflow(limit: limit) }
            return nil
        }
        guard end <= limit else { throw Overflow(limit: limit) }
        var line = Array(bytes[..<end])
        if line.last == 0x0D { line.removeLast() }
        bytes.removeSubrange(...end)
        scanned = 0
        return line
    }
}
