import ConfigLoader
import Testing

@testable import BridgeCore

/// The topics of SPEC §10: with the cluster on, the bridge's own topics move to `{base}/bridges/{id}/…` and a
/// member has its sightings, owner topics and subscription filters; with it off, everything is as before.
@Suite struct ClusterTopicsTests {
    static func config(cluster: Bool, base: String = "home/ble") throws -> BridgeConfig {
        try BridgeConfig.parse(
            yaml: """
                mqtt: { url: mqtt://localhost, base_topic: \(base) }
                bridge: { id: kitchen }
                cluster: { enabled: \(cluster) }
                devices:
                  - match: { address: "C8:12:34:56:78:9A" }
                    name: chest_strap
                """, environment: [:], hostName: "h")
    }

    @Test func clusterOffKeepsTodaysTopics() throws {
        let mapper = TopicMapper(config: try Self.config(cluster: false))
        #expect(mapper.cluster == nil)
        #expect(mapper.bridgeState == "home/ble/bridge/state")
        #expect(mapper.bridgeDevices == "home/ble/bridge/devices")
        #expect(mapper.bridgeHealth == "home/ble/bridge/health")
        #expect(mapper.bridgeRequestFilter == "home/ble/bridge/request/+")
        #expect(mapper.bridgeRequest("forget") == "home/ble/bridge/request/forget")
        #expect(mapper.bridgeResponse("forget") == "home/ble/bridge/response/forget")
        #expect(mapper.commandFilters == [
            "home/ble/+/+/+/set", "home/ble/+/+/+/get", "home/ble/bridge/request/+", "home/ble/bridge/request/device/+",
            "home/ble/config/devices/+",
        ])
        #expect(mapper.parse("home/ble/bridge/request/forget") == .bridgeRequest(command: "forget"))
        #expect(mapper.parse("home/ble/bridges/kitchen/request/forget") == nil)
        // The same as a mapper made without any cluster id.
        let plain = TopicMapper(baseTopic: "home/ble")
        #expect(plain.bridgeState == mapper.bridgeState && plain.commandFilters == mapper.commandFilters)
    }

    @Test func clusterOnMovesTheBridgesOwnTopics() throws {
        let mapper = TopicMapper(config: try Self.config(cluster: true))
        #expect(mapper.bridgeState == "home/ble/bridges/kitchen/state")
        #expect(mapper.bridgeDevices == "home/ble/bridges/kitchen/devices")
        #expect(mapper.bridgeHealth == "home/ble/bridges/kitchen/health")
        #expect(mapper.bridgeRequestFilter == "home/ble/bridges/kitchen/request/+")
        #expect(mapper.bridgeRequest("health_check") == "home/ble/bridges/kitchen/request/health_check")
        #expect(mapper.bridgeResponse("health_check") == "home/ble/bridges/kitchen/response/health_check")
        #expect(
            mapper.commandFilters == [
                "home/ble/+/+/+/set", "home/ble/+/+/+/get", "home/ble/bridges/kitchen/request/+",
                "home/ble/bridges/kitchen/request/device/+", "home/ble/config/devices/+",
            ])
        // Device topics do not change.
        #expect(mapper.availability(device: "chest_strap") == "home/ble/chest_strap/availability")
        #expect(mapper.advertisement(device: "chest_strap") == "home/ble/chest_strap/advertisement")
        #expect(mapper.characteristicTopics(device: "d", service: "s", characteristic: "c").set == "home/ble/d/s/c/set")
    }

    @Test func clusterOnTopicsAndFilters() throws {
        let cluster = try #require(TopicMapper(config: try Self.config(cluster: true)).cluster)
        #expect(cluster.bridgeID == "kitchen")
        #expect(cluster.sightings == "home/ble/bridges/kitchen/sightings")
        #expect(cluster.owner(device: "chest_strap") == "home/ble/chest_strap/owner")
        #expect(cluster.bridgeState(bridge: "garage") == "home/ble/bridges/garage/state")
        #expect(cluster.sightings(bridge: "garage") == "home/ble/bridges/garage/sightings")
        #expect(cluster.filters == ["home/ble/bridges/+/state", "home/ble/bridges/+/sightings", "home/ble/+/owner"])
        let plain = try #require(TopicMapper(baseTopic: "ble", clusterBridgeID: "a-1").cluster)
        #expect(plain.filters == ["ble/bridges/+/state", "ble/bridges/+/sightings", "ble/+/owner"])
        #expect(plain.sightings == "ble/bridges/a-1/sightings")
    }

    @Test func clusterOnParsesOnlyItsOwnRequests() throws {
        let mapper = TopicMapper(config: try Self.config(cluster: true))
        #expect(mapper.parse("home/ble/bridges/kitchen/request/forget") == .bridgeRequest(command: "forget"))
        // A command named like an operation is still a bridge request.
        #expect(mapper.parse("home/ble/bridges/kitchen/request/set") == .bridgeRequest(command: "set"))
        #expect(mapper.parse("home/ble/bridges/garage/request/forget") == nil)
        #expect(mapper.parse("home/ble/bridge/request/forget") == nil)
        #expect(mapper.parse("home/ble/bridges/kitchen/response/forget") == nil)
        #expect(mapper.parse("home/ble/bridges/kitchen/request/a/b") == nil)
        #expect(
            mapper.parse("home/ble/chest_strap/180d/2a37/get")
                == .characteristic(device: "chest_strap", service: "180d", characteristic: "2a37", operation: .get))
    }

    /// `bridges` can never be a device segment, in either mode: the filter `{base}/+/+/+/set` matches
    /// `{base}/bridges/x/y/set`, and the parser must not take it for a device.
    @Test(arguments: [false, true])
    func bridgesIsNoDevice(cluster: Bool) throws {
        let mapper = TopicMapper(config: try Self.config(cluster: cluster))
        #expect(mapper.parse("home/ble/bridges/kitchen/request/set") == (cluster ? .bridgeRequest(command: "set") : nil))
        #expect(mapper.parse("home/ble/bridges/s/c/set") == nil)
        #expect(mapper.parse("home/ble/bridges/s/c/get") == nil)
        #expect(mapper.parse("home/ble/bridge/s/c/set") == nil)
        #expect(TopicMapper.reservedSegments == ["bridge", "bridges", "config"])
    }

    @Test func parsesClusterTopics() throws {
        let cluster = try #require(TopicMapper(config: try Self.config(cluster: true)).cluster)
        #expect(cluster.parse("home/ble/bridges/garage/state") == .bridgeState(bridge: "garage"))
        #expect(cluster.parse("home/ble/bridges/kitchen/state") == .bridgeState(bridge: "kitchen"))
        #expect(cluster.parse("home/ble/bridges/a_b-9/sightings") == .sightings(bridge: "a_b-9"))
        #expect(cluster.parse("home/ble/chest_strap/owner") == .owner(device: "chest_strap"))
        #expect(cluster.parse("home/ble/c8123456789a/owner") == .owner(device: "c8123456789a"))
    }

    @Test(arguments: [
        "home/ble/bridges/Garage/state",  // not a valid id
        "home/ble/bridges//state",
        "home/ble/bridges/garage/devices",
        "home/ble/bridges/garage/state/x",
        "home/ble/bridges/state",
        "home/ble/bridge/garage/state",
        "home/ble/bridge/owner",  // reserved, not a device
        "home/ble/bridges/owner",
        "home/ble//owner",
        "home/ble/d/owner/x",
        "home/ble/d/availability",
        "home/blex/d/owner",
        "other/d/owner",
        "home/ble",
        "",
    ])
    func rejectsOtherClusterTopics(topic: String) throws {
        let cluster = try #require(TopicMapper(config: try Self.config(cluster: true)).cluster)
        #expect(cluster.parse(topic) == nil)
    }

    /// The topics a cluster member builds are the ones it parses back.
    @Test func roundTrips() {
        let cluster = ClusterTopics(baseTopic: "a/b", bridgeID: "x")
        #expect(cluster.parse(cluster.sightings) == .sightings(bridge: "x"))
        #expect(cluster.parse(cluster.bridgeState(bridge: "y")) == .bridgeState(bridge: "y"))
        #expect(cluster.parse(cluster.sightings(bridge: "y")) == .sightings(bridge: "y"))
        #expect(cluster.parse(cluster.owner(device: "lamp")) == .owner(device: "lamp"))
        let mapper = TopicMapper(baseTopic: "a/b", clusterBridgeID: "x")
        #expect(cluster.parse(mapper.bridgeState) == .bridgeState(bridge: "x"))
        #expect(mapper.parse(mapper.bridgeRequest("devices")) == .bridgeRequest(command: "devices"))
    }
}
