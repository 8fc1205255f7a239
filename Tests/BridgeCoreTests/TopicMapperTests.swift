import ConfigLoader
import Testing

@testable import BridgeCore

@Suite struct TopicMapperTests {
    static let yaml = """
        mqtt:
          url: mqtt://localhost
          base_topic: home/ble
        devices:
          - match: { address: "C8:12:34:56:78:9A" }
            name: chest_strap
            services: [{ uuid: 180d, name: heart }]
            characteristics: [{ uuid: 2a37, name: heart_rate }, { uuid: 2a19, format: uint8 }]
          - match: { name: "Thermo*" }
            name: thermo
        """

    let config: BridgeConfig
    let mapper: TopicMapper
    let strap = BluetoothAddress("C8:12:34:56:78:9A")!
    let other = BluetoothAddress("00:11:22:33:44:55")!

    init() throws {
        config = try BridgeConfig.parse(yaml: Self.yaml, environment: [:], hostName: "h")
        mapper = TopicMapper(config: config)
    }

    @Test func bridgeTopics() {
        #expect(mapper.bridgeState == "home/ble/bridge/state")
        #expect(mapper.bridgeDevices == "home/ble/bridge/devices")
        #expect(mapper.bridgeRequest("health_check") == "home/ble/bridge/request/health_check")
        #expect(mapper.bridgeResponse("health_check") == "home/ble/bridge/response/health_check")
        #expect(mapper.commandFilters == [
            "home/ble/+/+/+/set", "home/ble/+/+/+/get", "home/ble/bridge/request/+", "home/ble/bridge/request/device/+",
            "home/ble/config/devices/+",
        ])
        #expect(mapper.discoveryConfig(component: "sensor", nodeID: "n", objectID: "o") == "homeassistant/sensor/n/o/config")
    }

    @Test func segmentsUseConfiguredNames() {
        let strapConfig = mapper.deviceConfig(address: strap, name: nil)
        #expect(strapConfig?.name == "chest_strap")
        #expect(mapper.deviceSegment(address: strap, name: nil) == "chest_strap")
        #expect(mapper.serviceSegment(BluetoothUUID(uuid16: 0x180D), config: strapConfig) == "heart")
        #expect(mapper.serviceSegment(BluetoothUUID(uuid16: 0x180F), config: strapConfig) == "180f")
        #expect(mapper.characteristicSegment(BluetoothUUID(uuid16: 0x2A37), config: strapConfig) == "heart_rate")
        #expect(mapper.characteristicSegment(BluetoothUUID(uuid16: 0x2A19), config: strapConfig) == "2a19")
        #expect(mapper.format(of: BluetoothUUID(uuid16: 0x2A19), config: strapConfig) == .uint8)
        #expect(mapper.format(of: BluetoothUUID(uuid16: 0x2A37), config: strapConfig) == .heartRateMeasurement)
        #expect(mapper.deviceSegment(address: other, name: "Thermo 1") == "thermo")
    }

    @Test func segmentsDefaultToAddressAndUUID() throws {
        #expect(mapper.deviceSegment(address: other, name: "Unknown") == "001122334455")
        #expect(mapper.deviceSegment(address: other, name: nil) == "001122334455")
        let custom = try #require(BluetoothUUID("6E400001-B5A3-F393-E0A9-E50E24DCCA9E"))
        #expect(mapper.serviceSegment(custom, config: nil) == "6e400001-b5a3-f393-e0a9-e50e24dcca9e")
        #expect(mapper.characteristicSegment(BluetoothUUID(uuid16: 0xFFE1), config: nil) == "ffe1")
        #expect(mapper.format(of: BluetoothUUID(uuid16: 0xFFE1), config: nil) == .hex)
    }

    @Test func deviceTopics() {
        #expect(mapper.availability(device: "chest_strap") == "home/ble/chest_strap/availability")
        let topics = mapper.characteristicTopics(device: "chest_strap", service: "heart", characteristic: "heart_rate")
        #expect(topics.value == "home/ble/chest_strap/heart/heart_rate")
        #expect(topics.set == "home/ble/chest_strap/heart/heart_rate/set")
        #expect(topics.get == "home/ble/chest_strap/heart/heart_rate/get")
        #expect(topics.result == "home/ble/chest_strap/heart/heart_rate/result")
        #expect(mapper.value(device: "d", service: "s", characteristic: "c") == "home/ble/d/s/c")
        #expect(mapper.set(device: "d", service: "s", characteristic: "c") == "home/ble/d/s/c/set")
        #expect(mapper.get(device: "d", service: "s", characteristic: "c") == "home/ble/d/s/c/get")
        #expect(mapper.result(device: "d", service: "s", characteristic: "c") == "home/ble/d/s/c/result")
    }

    @Test func parsesIncomingTopics() {
        #expect(
            mapper.parse("home/ble/chest_strap/heart/heart_rate/set")
                == .characteristic(device: "chest_strap", service: "heart", characteristic: "heart_rate", operation: .set))
        #expect(
            mapper.parse("home/ble/001122334455/ffe0/ffe1/get")
                == .characteristic(device: "001122334455", service: "ffe0", characteristic: "ffe1", operation: .get))
        #expect(mapper.parse("home/ble/bridge/request/health_check") == .bridgeRequest(command: "health_check"))
        #expect(mapper.parse("home/ble/bridge/request/forget") == .bridgeRequest(command: "forget"))
    }

    @Test(arguments: [
        "home/ble/d/s/c",  // value topic, not a command
        "home/ble/d/s/c/result",
        "home/ble/d/s/c/set/extra",
        "home/ble/d/s/set",
        "home/ble//s/c/set",
        "home/ble/d/s/c/",
        "other/ble/d/s/c/set",
        "home/blex/d/s/c/set",
        "home/ble",
        "home/ble/",
        "home/ble/bridge/request/",
        "home/ble/bridge/request/a/b",
        "home/ble/bridge/response/x",
        "home/ble/bridge/s/c/set",
        "home/ble/d/+/c/set",
        "",
    ])
    func rejectsOtherTopics(topic: String) {
        #expect(mapper.parse(topic) == nil)
    }

    @Test func validatesNames() {
        #expect(TopicMapper.segmentProblem("ok name") == nil)
        #expect(TopicMapper.segmentProblem("") != nil)
        #expect(TopicMapper.segmentProblem("a/b") != nil)
        #expect(TopicMapper.segmentProblem("a+") != nil)
        #expect(TopicMapper.segmentProblem("#") != nil)
        #expect(TopicMapper.topicProblem("home/ble") == nil)
        #expect(TopicMapper.topicProblem("home//ble") != nil)
        #expect(TopicMapper.topicProblem("ble/") != nil)
        #expect(TopicMapper.topicProblem("$SYS") != nil)
    }

    @Test func defaultBaseTopic() {
        let plain = TopicMapper(baseTopic: "ble")
        #expect(plain.bridgeState == "ble/bridge/state")
        #expect(plain.parse("ble/c8123456789a/180d/2a37/get")
            == .characteristic(device: "c8123456789a", service: "180d", characteristic: "2a37", operation: .get))
    }
}
