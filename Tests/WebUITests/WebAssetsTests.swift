import Foundation
import Testing
import WebUI

@Suite struct WebAssetsTests {
    static let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Sources/WebUI/Assets-src").standardizedFileURL.path

    /// The embedded copy is Assets-src byte for byte, file for file (run scripts/web-assets after an edit).
    @Test func generatedFileIsUpToDate() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.source).sorted()
        #expect(WebAssets.all.map(\.name) == files)
        for (name, text) in WebAssets.all {
            let data = try Data(contentsOf: URL(fileURLWithPath: Self.source + "/" + name))
            #expect(Array(text.utf8) == Array(data), "WebAssets.\(name) differs from Assets-src/\(name): run scripts/web-assets")
        }
    }

    /// The scripts build the DOM without innerHTML, eval or inline handlers.
    @Test func scriptsUseNoHTMLSinks() {
        for (name, text) in WebAssets.all where name.hasSuffix(".js") {
            for sink in ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"] {
                #expect(!text.contains(sink), "\(name) uses \(sink)")
            }
        }
    }
}
