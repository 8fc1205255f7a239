#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A value behind a mutex. Unlike `Synchronization.Mutex` it may hold non-Sendable values
/// (libdbus pointers), which never leave this module.
final class Locked<State>: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    private var value: State

    init(_ value: State) {
        self.value = value
        pthread_mutex_init(&mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(&mutex)
    }

    func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return try body(&value)
    }
}
