import BridgeBase
import Synchronization
import Testing

@testable import BlueZ

#if canImport(Glibc)
import Glibc
#endif

@Suite struct NotificationSocketsTests {
    @Test("a socket added while the loop sleeps with no socket is polled at once")
    func firstSocketWakesTheLoop() async throws {
        // Nothing else on this loop: if add() did not wake it, the loop would stay in a poll
        // without the epoll set and the packet would never be read.
        let loop = PollLoop(name: "test-notify")
        let sockets = NotificationSockets(loop: loop)
        loop.add(sockets)
        loop.start()
        defer { loop.stop() }
        let values = Mutex<[(String, [UInt8])]>([])
        sockets.setHandler { path, value in values.withLock { $0.append((path, value)) } }
        // Let the loop finish a turn and go to sleep in poll with no socket to watch.
        let turned = Atomic<Bool>(false)
        loop.execute { turned.store(true, ordering: .releasing) }
        try await waitUntil("a turn") { turned.load(ordering: .acquiring) }
        try await Task.sleep(for: .milliseconds(50))  // the loop is back in poll by now

        var pair: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &pair) == 0)
        defer { close(pair[1]) }
        sockets.add(fd: pair[0], path: "/org/bluez/hci0/dev_1/service1/char2")
        var packet: [UInt8] = [0x06, 0x48]
        #expect(send(pair[1], &packet, 2, 0) == 2)
        try await waitUntil("the value") { values.withLock { $0.count == 1 } }
        let got = values.withLock { $0 }
        #expect(got.first?.0 == "/org/bluez/hci0/dev_1/service1/char2")
        #expect(got.first?.1 == [0x06, 0x48])
    }

    private func waitUntil(_ what: String, _ condition: () -> Bool) async throws {
        for _ in 0..<1000 {
            if condition() { return }
            try await Task.sleep(for: .milliseconds(2))
        }
        Issue.record("timed out waiting for \(what)")
    }
}
