import BridgeCore
import Testing

@testable import RuntimeCore

/// ``SupervisorCore/AdvertisementFilter``: which advertisement reports of other devices reach the supervisor.
@Suite struct SupervisorCoreAdvertisementFilterTests {
    typealias F = CoreFixture

    @Test("one adapter, no cluster: none (a sign of life only); decodable: those whose data changed; a cluster or several adapters: all")
    func filter() throws {
        let plain = try SupervisorCore(config: F.config("devices: [{ match: { address: \"C8:12:34:56:78:9A\" }, connection: advertisement }]\n"), now: F.at(0))
        #expect(!plain.advertisementFilter.forwards(dataChanged: true) && !plain.advertisementFilter.forwards(dataChanged: false))
        let decodable = try SupervisorCore(config: F.config("bluetooth: { advertisements: decodable }\n"), now: F.at(0))
        #expect(decodable.advertisementFilter.forwards(dataChanged: true) && !decodable.advertisementFilter.forwards(dataChanged: false))
        let cluster = try SupervisorCore(config: F.config("bridge: { id: kitchen }\ncluster: { enabled: true }\n"), now: F.at(0))
        #expect(cluster.advertisementFilter.forwards(dataChanged: false))
        let two = try SupervisorCore(config: F.config("bluetooth: { adapters: [hci0, hci1] }\n"), now: F.at(0))
        #expect(two.advertisementFilter.forwards(dataChanged: false))
    }
}
