import Foundation
import Testing

/// `--help`, `--version` and `scan`, through the executable.
@Suite(.timeLimit(.minutes(2)))
struct CommandLineTests {
    @Test("--help names the subcommands; every subcommand has --help; --version prints a version")
    func helpAndVersion() async throws {
        try Paths.requireBuiltExecutables()
        let directory = NSTemporaryDirectory()
        let help = try await ChildProcess.run(Paths.bridge, ["--help"], directory: directory)
        #expect(help.termination == .exited(0), "\(help.termination): \(help.output)")
        for command in ["run", "check-config", "scan"] {
            #expect(help.output.contains(command), "--help does not mention \(command): \(help.output)")
            let sub = try await ChildProcess.run(Paths.bridge, [command, "--help"], directory: directory)
            #expect(sub.termination == .exited(0), "\(command) --help: \(sub.termination): \(sub.output)")
            #expect(sub.output.contains("--"), "\(command) --help: \(sub.output)")
        }
        let version = try await ChildProcess.run(Paths.bridge, ["--version"], directory: directory)
        #expect(version.termination == .exited(0), "\(version.termination): \(version.output)")
        #expect(version.output.contains(/[0-9]+\.[0-9]+/), "--version printed: \(version.output)")
    }

    @Test("scan lists the peripherals in range; --service filters them")
    func scan() async throws {
        var options = HarnessOptions()
        options.startBroker = false
        options.startBridge = false
        try await Harness.with(options) { harness in
            var environment = ProcessInfo.processInfo.environment
            environment["DBUS_SYSTEM_BUS_ADDRESS"] = harness.busAddress
            let all = try await ChildProcess.run(
                Paths.bridge, ["scan", "--seconds", "3"], environment: environment, directory: harness.directory)
            #expect(all.termination == .exited(0), "\(all.termination): \(all.output)")
            for address in [Demo.heartRateAddress, Demo.environmentAddress, Demo.echoAddress, Demo.otherAddress] {
                #expect(all.output.uppercased().contains(address), "scan did not list \(address): \(all.output)")
            }
            #expect(all.output.contains("Polar H10 Sim"), "scan did not print the name: \(all.output)")

            let filtered = try await ChildProcess.run(
                Paths.bridge, ["scan", "--seconds", "3", "--service", "180d"], environment: environment,
                directory: harness.directory)
            #expect(filtered.termination == .exited(0), "\(filtered.termination): \(filtered.output)")
            #expect(filtered.output.uppercased().contains(Demo.heartRateAddress), "\(filtered.output)")
            #expect(!filtered.output.uppercased().contains(Demo.otherAddress), "\(filtered.output)")
        }
    }
}
