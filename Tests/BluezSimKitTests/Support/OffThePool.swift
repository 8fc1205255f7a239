import Foundation

/// Runs a blocking call (a pipe read, `waitUntilExit`) on a thread of its own. Blocking one of the cooperative
/// pool's threads (two on a 2-CPU machine) stalls every test running beside it, and with them the in-process
/// simulators' replies: calls time out in tests that have nothing to do with the blocking one.
func offThePool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}
