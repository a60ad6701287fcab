import CoverdBase
import Foundation
import Testing

@Suite("System errors")
struct SystemErrorTests {
    /// Describing it clobbers errno, as building a message (an allocation, a
    /// locale lookup) may do.
    struct ErrnoClobbering: CustomStringConvertible {
        var description: String {
            errno = EPERM
            return "covers/x.png"
        }
    }

    @Test("Given a failed call's errno, when the error is made with an operation and a path that are built after it, then it keeps that errno")
    func errnoIsReadBeforeTheMessage() {
        // Given
        errno = ENOSPC

        // When
        let error = SystemError("rename into \(ErrnoClobbering())", path: "\(ErrnoClobbering())")

        // Then
        #expect(error.code == ENOSPC, "\(error)")
        #expect(error.description == "rename into covers/x.png covers/x.png: No space left on device (errno 28)")
    }
}
