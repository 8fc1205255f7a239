// Written by scripts/web-assets from Sources/WebUI/Assets-src/: do not edit.

/// The page's files (Sources/WebUI/Assets-src/), byte for byte.
public enum WebAssets {
    /// app.css
    static let appCss = #"""
body{}

"""#

    /// app.js
    static let appJs = #"""
'use strict';

"""#

    /// index.html
    static let indexHtml = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>ble-mqtt-bridge</title>
<link rel="stylesheet" href="/assets/app.css">
<script src="/assets/app.js" defer></script>
</head>
<body>
<header class="top">
<span class="brand">ble-mqtt-bridge</span>
<nav>
<a href="#/devices" id="nav-devices" data-testid="nav-devices">Devices</a>
<a href="#/nearby" id="nav-nearby" data-testid="nav-nearby">Nearby</a>
<a href="#/radios" id="nav-radios" data-testid="nav-radios">Radios</a>
<a href="#/presence" id="nav-presence" data-testid="nav-presence">Presence</a>
</nav>
<span id="live" class="live" data-testid="live" data-state="connecting">connecting</span>
</header>
<main id="view" data-testid="view" data-view=""></main>
<noscript>This page needs JavaScript.</noscript>
</body>
</html>

"""#

    /// login.html
    static let loginHtml = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>ble-mqtt-bridge: log in</title>
<link rel="stylesheet" href="/assets/app.css">
</head>
<body class="login">
<main class="login-box">
<h1>ble-mqtt-bridge</h1>
<form method="post" action="/login" data-testid="login-form">
<label for="token">Token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required data-testid="login-token">
<button type="submit" data-testid="login-button">Log in</button>
</form>
<!--error-->
</main>
</body>
</html>

"""#

    /// Every file: its name and its text, in name order.
    public static let all: [(name: String, text: String)] = [
        ("app.css", appCss),
        ("app.js", appJs),
        ("index.html", indexHtml),
        ("login.html", loginHtml),
    ]
}
