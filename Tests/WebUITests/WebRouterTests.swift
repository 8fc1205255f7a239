import BridgeCore
import Hummingbird
import Testing
import WebUI

/// The router through a real server on 127.0.0.1 and raw HTTP/1.1 (TestHTTPClient).
@Suite struct WebRouterTests {
    static let json = ("Content-Type", "application/json")

    @Test func everyResponseCarriesTheSecurityHeaders() async throws {
        try await withWebServer { client, _ in
            for (uri, status) in [("/", HTTPResponse.Status.ok), ("/assets/app.js", .ok), ("/nothing", .notFound)] {
                let response = try await client.execute("GET", uri)
                #expect(response.status == status, "\(uri)")
                #expect(response[header: "Content-Security-Policy"]?.hasPrefix("default-src 'none'; script-src 'self'") == true)
                #expect(response[header: "X-Content-Type-Options"] == "nosniff")
                #expect(response[header: "Referrer-Policy"] == "no-referrer")
            }
            let css = try await client.execute("GET", "/assets/app.css")
            #expect(css[header: "Content-Type"] == "text/css; charset=utf-8")
        }
    }

    @Test func theShellHasNoInlineScriptOrStyle() async throws {
        try await withWebServer { client, _ in
            let html = try await client.execute("GET", "/").body
            #expect(html.contains(#"<script src="/assets/app.js" defer></script>"#))
            #expect(!html.contains("<script>"))
            #expect(!html.contains("<style"))
            #expect(!html.contains("style="))
            #expect(!html.contains(" on"))  // no onclick= etc.
        }
    }

    @Test func withoutATokenEverythingIsOpen() async throws {
        try await withWebServer { client, _ in
            let response = try await client.execute("GET", "/api/snapshot")
            #expect(response.status == .ok)
            #expect(response.body.hasPrefix(#"{"base":"ble","cluster":false"#))
        }
    }

    @Test func withATokenABearerOrTheLoginCookieIsNeeded() async throws {
        try await withWebServer(token: "s3cret") { client, _ in
            #expect(try await client.execute("GET", "/api/snapshot").status == .unauthorized)
            #expect(try await client.execute("GET", "/api/snapshot", headers: [("Authorization", "Bearer wrong")]).status == .unauthorized)
            let shell = try await client.execute("GET", "/")
            #expect(shell.status == .seeOther)
            #expect(shell[header: "Location"] == "/login")
            #expect(try await client.execute("GET", "/api/snapshot", headers: [("Authorization", "Bearer s3cret")]).status == .ok)
            let login = try await client.execute("GET", "/login")
            #expect(login.status == .ok)
            #expect(login.body.contains(#"data-testid="login-form""#))
            let form = ("Content-Type", "application/x-www-form-urlencoded")
            let refused = try await client.execute("POST", "/login", headers: [form], body: "token=nope")
            #expect(refused.status == .unauthorized)
            #expect(refused.body.contains("login-error"))
            let accepted = try await client.execute("POST", "/login", headers: [form, ("Origin", "null")], body: "token=s3cret")
            #expect(accepted.status == .seeOther)
            let cookie = accepted[header: "Set-Cookie"] ?? ""
            #expect(cookie.hasPrefix("bmb_session=\(testSession);"))
            #expect(cookie.contains("HttpOnly"))
            #expect(!cookie.contains("s3cret"))
            #expect(try await client.execute("GET", "/api/snapshot", headers: [("Cookie", "a=b; bmb_session=\(testSession)")]).status == .ok)
            #expect(try await client.execute("GET", "/api/snapshot", headers: [("Cookie", "bmb_session=guess")]).status == .unauthorized)
        }
    }

    @Test func postsNeedJSONAndAMatchingOrigin() async throws {
        let broker = FakeBroker { topic, payload in
            [(topic.replacing("/request/", with: "/response/"),
              #"{"status":"ok","data":{},"transaction":"\#(payload["transaction"]?.stringValue ?? "")"}"#)]
        }
        try await withWebServer(broker: broker) { client, _ in
            let body = #"{"command":"device/remove","payload":{"device":"pantry"}}"#
            let text = try await client.execute("POST", "/api/request", headers: [("Content-Type", "text/plain")], body: body)
            #expect(text.status == .unsupportedMediaType)
            let evil = try await client.execute("POST", "/api/request", headers: [Self.json, ("Origin", "http://evil.example")], body: body)
            #expect(evil.status == .forbidden)
            let null = try await client.execute("POST", "/api/request", headers: [Self.json, ("Origin", "null")], body: body)
            #expect(null.status == .forbidden)
            #expect(broker.publishedCount == 0)
            let response = try await client.execute(
                "POST", "/api/request",
                headers: [("Content-Type", "application/json; charset=utf-8"), ("Origin", client.origin)], body: body)
            #expect(response.status == .ok)
            #expect(response.body.hasPrefix(#"{"status":"ok""#))
            #expect(broker.published.withLock { $0.map(\.topic) } == ["ble/bridge/request/device/remove"])
        }
    }

    @Test func theEventStreamSendsMessagesAsDataLines() async throws {
        try await withWebServer { client, core in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    let response = try await client.execute("GET", "/api/events")
                    #expect(response.status == .ok)
                    #expect(response[header: "Content-Type"] == "text/event-stream")
                    #expect(response.body == ": live\n\n" + #"data: {"topic":"ble/a/b/c","payload":"{\"value\":1}"}"# + "\n\n")
                }
                #expect(await eventually { core.hub.subscriberCount == 1 })
                core.receive(topic: "ble/a/b/c", payload: Array(#"{"value":1}"#.utf8))
                core.hub.close()
                try await group.waitForAll()
            }
        }
    }
}

@Suite struct WebSettingsTests {
    @Test func aPublicAddressNeedsAToken() throws {
        var config = BridgeConfig(mqtt: .init(url: try BrokerURL(parsing: "mqtt://127.0.0.1"), clientID: "b"))
        config.web.listen = "0.0.0.0:8099"
        let error = #expect(throws: WebError.self) { try WebSettings(config: config) }
        #expect(error?.code == .tokenRequired)
        config.web.authToken = "t"
        #expect(try WebSettings(config: config).authToken == "t")
        config.web.authToken = nil
        #expect(try WebSettings(config: config, listen: "127.0.0.1:9000").url == "http://127.0.0.1:9000")
        #expect(throws: WebError.self) { try WebSettings(config: config, listen: "[::1]:9000x") }
    }

    @Test func originsMatchTheHostOnly() {
        typealias Guard = RequestGuardMiddleware<BasicRequestContext>
        #expect(Guard.originMatches("http://127.0.0.1:8099", host: "127.0.0.1:8099"))
        #expect(Guard.originMatches("HTTPS://Box.local:8099", host: "box.local:8099"))
        #expect(!Guard.originMatches("http://127.0.0.1:8098", host: "127.0.0.1:8099"))
        #expect(!Guard.originMatches("null", host: "127.0.0.1:8099"))
        #expect(!Guard.originMatches("http://x", host: nil))
    }
}
