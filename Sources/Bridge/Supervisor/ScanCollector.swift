import BlueZ
import BridgeBase
import Synchronization

/// The advertisers a `scan` request hears (SPEC §14), noted from the I/O thread's advertisement handler while a scan
/// is under way: each device's latest report and when it was heard. One check of a lock per advertisement while no
/// scan runs.
final class ScanCollector: Sendable {
    /// A device's latest report and when it came.
    struct Heard: Sendable {
        var advertisement: BlueZAdvertisement
        var at: BridgeInstant
    }

    private let clock: any BridgeClock
    /// nil while no scan runs.
    private let heard = Mutex<[String: Heard]?>(nil)
    /// Advertisers kept at most (a crowded place: the newest of them are kept, the rest dropped).
    static let capacity = 2000

    init(clock: any BridgeClock) {
        self.clock = clock
    }

    /// A scan starts: advertisers are noted from now on.
    func begin() {
        heard.withLock { if $0 == nil { $0 = [:] } }
    }

    /// No scan is left: nothing is noted any more.
    func end() {
        heard.withLock { $0 = nil }
    }

    /// Notes an advertisement while a scan runs.
    func note(_ advertisement: BlueZAdvertisement) {
        heard.withLock { book in
            guard book != nil else { return }
            if book!.count >= Self.capacity, book![advertisement.path] == nil { return }
            book![advertisement.path] = Heard(advertisement: advertisement, at: clock.now)
        }
    }

    /// The advertisers heard at or after `since`, by address.
    func heard(since: BridgeInstant) -> [Heard] {
        heard.withLock { book in
            (book ?? [:]).values.filter { $0.at >= since }.sorted { $0.advertisement.address.description < $1.advertisement.address.description }
        }
    }
}
