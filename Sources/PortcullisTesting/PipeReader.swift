public import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Reads a child's pipe on a thread of its own with read(2) — retrying EINTR — until end of file.
///
/// Not Foundation's `readabilityHandler` or `readDataToEndOfFile()`: their reads trap on EINTR (`try!` inside
/// FileHandle, "Interrupted system call": the SIGCHLD of another test's child arrives during a read), and a
/// DispatchSource left on a descriptor that is closed and reused crashes libdispatch's event loop. Both were
/// seen taking the whole test process down. The handle is kept alive until the reader is done, so its
/// descriptor is never closed under it.
public final class PipeReader: Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let collected = Mutex(Data())

    /// Starts reading; `onData` (optional) sees each chunk as it arrives.
    public init(_ pipe: Pipe, onData: (@Sendable (Data) -> Void)? = nil) {
        let handle = pipe.fileHandleForReading
        let thread = Thread { [self] in
            let descriptor = handle.fileDescriptor
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count > 0 {
                    let chunk = Data(buffer[0..<count])
                    collected.withLock { $0.append(chunk) }
                    onData?(chunk)
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    break
                }
            }
            withExtendedLifetime(handle) {}
            done.signal()
        }
        thread.start()
    }

    /// Everything read, once the writer closed its end (waits for that).
    public func readToEnd() -> Data {
        done.wait()
        done.signal()
        return collected.withLock { $0 }
    }
}
