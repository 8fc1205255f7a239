import BridgeCore
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import WebUI

@Suite struct WebRouterTests {
    static let session = "0123456789abcdef"

    func app(token: String? = nil, broker: FakeBroker = FakeBroker()) -> (some ApplicationProtocol, PageCore) {
        let core = broker.makeCore(settings(token: token))
        let app = Application(router: WebRouter.make(core: core, session: Self.session))
        return (app, core)
    }

    @Test func everyResponseCarriesTheSecurityHeaders() async throws {
        try await app().0.test(.router) { client in
            for (uri, status) in [("/", HTTPResponse.Status.ok), ("/assets/app.js", .ok), ("/nothing", .notFound)] {
                try await client.execute(uri: uri, method: .get) { response in
                    #expect(response.status == status, "\(uri)")
                    #expect(response.headers[.contentSecurityPolicy]?.hasPrefix("default-src 'none'; script-src 'self'") == true)
                    #expect(response.headers[HTTPField.Name("X-Content-Type-Options")!] == "nosniff")
                    #expect(response.headers[HTTPField.Name("Referrer-Policy")!] == "no-referrer")
                }
            }
            try await client.execute(uri: "/assets/app.css", method: .get) { response in
                #expect(response.headers[.contentType] == "text/css; charset=utf-8")
            }
        }
    }

    @Test func theShellHasNoInlineScriptOrStyle() async throws {
        try await app().0.test(.router) { client in
            try await client.execute(uri: "/", method: .get) { response in
                let html = String(buffer: response.body)
                #expect(html.contains(#"<script src="/assets/app.js" defer></script>"#))
                #expect(!html.contains("<script>"))
                #expect(!html.contains("<style"))
                #expect(!html.contains("style="))
                #expect(!html.contains(" on"))  // no onclick= etc.
            }
        }
    }

    @Test func withoutATokenEverythingIsOpen() async throws {
        try await app().0.test(.router) { client in
            try await client.execute(uri: "/api/snapshot", method: .get) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body).hasPrefix(#"{"base":"ble","cluster":false"#))
            }
        }
    }

    @Test func withATokenABearerOrTheLoginCookieIsNeeded() async throws {
        try await app(token: "s3cret").0.test(.router) { client in
            try await client.execute(uri: "/api/snapshot", method: .get) { response in
                #expect(response.status == .unauthorized)
            }
            try await client.execute(uri: "/api/snapshot", method: .get, headers: [.authorization: "Bearer wrong"]) {
                #expect($0.status == .unauthorized)
            }
            try await client.execute(uri: "/", method: .get) { response in
                #expect(response.status == .seeOther)
                #expect(response.headers[.location] == "/login")
            }
            try await client.execute(uri: "/api/snapshot", method: .get, headers: [.authorization: "Bearer s3cret"]) {
                #expect($0.status == .ok)
            }
            try await client.execute(uri: "/login", method: .get) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body).contains(#"data-testid="login-form""#))
            }
            let form: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]
            try await client.execute(uri: "/login", method: .post, headers: form, body: ByteBuffer(string: "token=nope")) {
                #expect($0.status == .unauthorized)
                #expect(String(buffer: $0.body).contains("login-error"))
            }
            var nullOrigin = form
            nullOrigin[.origin] = "null"
            let cookie = try await client.execute(
                uri: "/login", method: .post, headers: nullOrigin, body: ByteBuffer(string: "token=s3cret")
            ) { response in
                #expect(response.status == .seeOther)
                return response.headers[.setCookie] ?? ""
            }
            #expect(cookie.hasPrefix("bmb_session=\(Self.session);"))
            #expect(cookie.contains("HttpOnly"))
            #expect(!cookie.contains("s3cret"))
            try await client.execute(uri: "/api/snapshot", method: .get, headers: [.cookie: "a=b; bmb_session=\(Self.session)"]) {
                #expect($0.status == .ok)
            }
            try await client.execute(uri: "/api/snapshot", method: .get, headers: [.cookie: "bmb_session=guess"]) {
                #expect($0.status == .unauthorized)
            }
        }
    }

    @Test func postsNeedJSONAndAMatchingOrigin() async throws {
        let broker = FakeBroker { topic, payload in
            [(topic.replacing("/request/", with: "/response/"),
              #"{"status":"ok","data":{},"transaction":"\#(payload["transaction"]?.stringValue ?? "")"}"#)]
        }
        try await app(broker: broker).0.test(.router) { client in
            let body = ByteBuffer(string: #"{"command":"device/remove","payload":{"device":"pantry"}}"#)
            try await client.execute(uri: "/api/request", method: .post, headers: [.contentType: "text/plain"], body: body) {
                #expect($0.status == .unsupportedMediaType)
            }
            try await client.execute(
                uri: "/api/request", method: .post,
                headers: [.contentType: "application/json", .origin: "http://evil.example"], body: body
            ) {
                #expect($0.status == .forbidden)
            }
            try await client.execute(
                uri: "/api/request", method: .post, headers: [.contentType: "application/json", .origin: "null"], body: body
            ) {
                #expect($0.status == .forbidden)
            }
            #expect(broker.publishedCount == 0)
            try await client.execute(
                uri: "/api/request", method: .post,
                headers: [.contentType: "application/json; charset=utf-8", .origin: "http://localhost"], body: body
            ) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body).hasPrefix(#"{"status":"ok""#))
            }
            #expect(broker.published.withLock { $0.map(\.topic) } == ["ble/bridge/request/device/remove"])
        }
    }

    @Test func theEventStreamSendsMessagesAsDataLines() async throws {
        let (app, core) = app()
        try await app.test(.router) { client in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    try await client.execute(uri: "/api/events", method: .get) { response in
                        #expect(response.status == .ok)
                        #expect(response.headers[.contentType] == "text/event-stream")
                        let text = String(buffer: response.body)
                        #expect(text == ": live\n\n" + #"data: {"topic":"ble/a/b/c","payload":"{\"value\":1}"}"# + "\n\n")
                    }
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
