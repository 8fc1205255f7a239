import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// bluetoothd's end of an acquired notification socket (`AcquireNotify`): one end of a
/// `socketpair(AF_LOCAL, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC)`, the other end went to
/// the client in the method reply. Every notified value is written as one packet.
///
/// Sends (the notification thread), reads (the poll thread) and closing (the simulator actor)
/// hold the mutex around the descriptor, so none of them ever uses a closed or reused number.
final class NotifySocket: Sendable {
    /// Tells sockets apart (a new acquisition of the same characteristic is a new socket).
    let id: UInt64
    /// The acquired characteristic.
    let characteristic: SimCharacteristic
    private let fd: Mutex<Int32>

    private init(id: UInt64, characteristic: SimCharacteristic, fd: Int32) {
        self.id = id
        self.characteristic = characteristic
        self.fd = Mutex(fd)
    }

    deinit {
        let fd = fd.withLock { $0 }
        if fd >= 0 { close(fd) }
    }

    /// A new socket pair: the simulator's end and the client's end (to be passed in the reply and
    /// then closed by the caller). `errno`'s text when the kernel refuses.
    static func makePair(id: UInt64, characteristic: SimCharacteristic) -> Result<(NotifySocket, Int32), SocketError> {
        var fds: [Int32] = [-1, -1]
        let type = Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, type, 0, &fds) == 0 else {
            return .failure(SocketError(message: String(cString: strerror(errno))))
        }
        return .success((NotifySocket(id: id, characteristic: characteristic, fd: fds[0]), fds[1]))
    }

    /// Why a socket pair could not be made (`strerror`).
    struct SocketError: Error {
        let message: String
    }

    /// Writes `value` as one packet without blocking (`MSG_DONTWAIT | MSG_NOSIGNAL`). False when it
    /// was not written: the client's receive queue is full, the client closed its end, or this
    /// end is closed.
    func sendPacket(_ value: [UInt8]) -> Bool {
        fd.withLock { fd in
            guard fd >= 0 else { return false }
            let sent = value.withUnsafeBytes { raw in
                send(fd, raw.baseAddress, raw.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL))
            }
            return sent == value.count
        }
    }

    /// Reads one packet the client wrote into `buffer`: its length, 0 for none (or an empty packet),
    /// -1 when this end is closed or broken.
    func receivePacket(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        fd.withLock { fd in
            guard fd >= 0 else { return -1 }
            let n = recv(fd, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT))
            if n < 0 { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1 }
            return n
        }
    }

    /// The descriptor to poll, -1 once closed.
    var descriptor: Int32 { fd.withLock { $0 } }

    /// Shuts the socket down and closes this end: the client's poll reports `POLLHUP`. Idempotent.
    func hangUp() {
        fd.withLock { fd in
            guard fd >= 0 else { return }
            shutdown(fd, Int32(SHUT_RDWR))
            close(fd)
            fd = -1
        }
    }
}
