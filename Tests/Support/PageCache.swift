import CLinux
import Foundation

/// Pages of the file at `path` that are in the page cache now, by mincore(2)
/// on a mapping of it (mapping a file does not read it in).
public func residentPages(_ path: String) throws -> Int {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    let length = Int(info.st_size)
    guard length > 0 else { return 0 }
    guard let mapping = mmap(nil, length, PROT_READ, MAP_SHARED, fd, 0), mapping != MAP_FAILED else {
        throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
    }
    defer { munmap(mapping, length) }
    let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
    var vector = [UInt8](repeating: 0, count: (length + pageSize - 1) / pageSize)
    guard mincore(mapping, length, &vector) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    return vector.filter { $0 & 1 != 0 }.count
}

/// Whether files under the temporary directory can leave the page cache:
/// not on tmpfs, whose pages have no disk to go to (a test of dropped pages
/// has nothing to see there).
public let temporaryFilesCanLeavePageCache: Bool = coverd_filesystem_type(NSTemporaryDirectory()) != 0x0102_1994
