/*
 * The floor of one advertisement report through libdbus (issue 20): a minimal libdbus client that
 * does what the bridge does for a `connection: advertisement` device and nothing else.
 *
 *   dbus-floor [--publish PORT] [--seconds N] [--adapter hci0] [--no-discovery]
 *
 * It connects to the system bus (DBUS_SYSTEM_BUS_ADDRESS), adds the bridge's match rule
 * type='signal',sender='org.bluez', sets the discovery filter {Transport: le, DuplicateData: true}
 * and starts discovery on /org/bluez/<adapter> (and stays connected: the discovery session lives
 * as long as its client), then runs the loop a minimal libdbus client runs:
 *
 *   pop every queued message; poll() on dbus_connection_get_unix_fd; dbus_connection_read_write(0)
 *
 * For each PropertiesChanged of org.bluez.Device1 it reads RSSI (int16) and ServiceData (a{sv} of
 * ay, via dbus_message_iter_get_fixed_array) with a DBusMessageIter and counts a report.
 * --publish PORT: also connects to an MQTT broker on 127.0.0.1:PORT (MQTT 3.1.1 CONNECT, CONNACK,
 * TCP_NODELAY as the bridge) and writes one QoS 0 PUBLISH per report that carries ServiceData:
 * topic floor/<address>/advertisement, a JSON payload of about 200 bytes like the bridge's (RSSI,
 * the pvvx values when the data is a 15-byte 181a frame, the hex of the data), one send() each.
 *
 * SIGUSR1 prints a counters line (stdout, flushed):
 *   counters reports=R service_data=S publishes=P signals=G wakeups=W cpu_us=C user_us=U sys_us=K vcsw=V ivcsw=I
 * where cpu_us = user_us + sys_us, getrusage(RUSAGE_SELF) utime + stime. SIGTERM / SIGINT / --seconds: the same
 * line, then exit 0. Build: cc -O2 dbus-floor.c $(pkg-config --cflags --libs dbus-1)
 */
#define _GNU_SOURCE
#include <dbus/dbus.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t want_counters, want_exit;
static unsigned long long reports, service_data_reports, publishes, signals_seen, wakeups;
static int mqtt_fd = -1;

static void on_signal(int sig) {
    if (sig == SIGUSR1) want_counters = 1;
    else want_exit = 1;
}

static void print_counters(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    unsigned long long user = (unsigned long long)ru.ru_utime.tv_sec * 1000000ULL + ru.ru_utime.tv_usec;
    unsigned long long sys = (unsigned long long)ru.ru_stime.tv_sec * 1000000ULL + ru.ru_stime.tv_usec;
    printf("counters reports=%llu service_data=%llu publishes=%llu signals=%llu wakeups=%llu cpu_us=%llu user_us=%llu sys_us=%llu vcsw=%ld ivcsw=%ld\n",
           reports, service_data_reports, publishes, signals_seen, wakeups, user + sys, user, sys, ru.ru_nvcsw, ru.ru_nivcsw);
    fflush(stdout);
}

static void die(const char *what, const char *detail) {
    fprintf(stderr, "dbus-floor: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    exit(1);
}

/* ---- MQTT 3.1.1, just enough: CONNECT, CONNACK, QoS 0 PUBLISH ---- */

static size_t put_length(unsigned char *p, size_t n) {
    size_t i = 0;
    do {
        unsigned char b = n % 128;
        n /= 128;
        if (n) b |= 0x80;
        p[i++] = b;
    } while (n);
    return i;
}

static void write_all(int fd, const unsigned char *p, size_t n) {
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR) continue;
            die("MQTT send", strerror(errno));
        }
        p += w;
        n -= (size_t)w;
    }
}

static void mqtt_connect(int port) {
    mqtt_fd = socket(AF_INET, SOCK_STREAM, 0);
    if (mqtt_fd < 0) die("socket", strerror(errno));
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(mqtt_fd, (struct sockaddr *)&sa, sizeof sa) < 0) die("MQTT connect", strerror(errno));
    int one = 1;
    setsockopt(mqtt_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    char id[32];
    int idlen = snprintf(id, sizeof id, "dbus-floor-%d", (int)getpid());
    unsigned char body[64], pkt[80];
    size_t n = 0;
    memcpy(body + n, "\0\4MQTT\4\2\0\0", 10); /* protocol name, level 4, clean session, keep-alive 0 */
    n += 10;
    body[n++] = 0;
    body[n++] = (unsigned char)idlen;
    memcpy(body + n, id, (size_t)idlen);
    n += (size_t)idlen;
    size_t m = 0;
    pkt[m++] = 0x10;
    m += put_length(pkt + m, n);
    memcpy(pkt + m, body, n);
    write_all(mqtt_fd, pkt, m + n);
    unsigned char ack[4];
    size_t got = 0;
    while (got < 4) {
        ssize_t r = recv(mqtt_fd, ack + got, 4 - got, 0);
        if (r <= 0) die("MQTT CONNACK", r == 0 ? "connection closed" : strerror(errno));
        got += (size_t)r;
    }
    if (ack[0] != 0x20 || ack[3] != 0) die("MQTT CONNACK", "refused");
}

static const char hexdigits[] = "0123456789abcdef";

/* One QoS 0 PUBLISH of floor/<address>/advertisement, one send(). */
static void publish(const char *path, int rssi, const char *uuid, const unsigned char *data, int len) {
    /* /org/bluez/hci0/dev_A4_C1_38_10_00_01 -> A4:C1:38:10:00:01 */
    char address[18] = "unknown";
    const char *dev = strstr(path, "/dev_");
    if (dev && strlen(dev + 5) >= 17) {
        memcpy(address, dev + 5, 17);
        address[17] = 0;
        for (int i = 2; i < 17; i += 3) address[i] = ':';
    }
    /* "0000181a-0000-1000-8000-00805f9b34fb" -> "181a", as in the bridge's topic segments */
    char key[40];
    if (strlen(uuid) == 36 && strncmp(uuid, "0000", 4) == 0 && strcmp(uuid + 8, "-0000-1000-8000-00805f9b34fb") == 0) {
        memcpy(key, uuid + 4, 4);
        key[4] = 0;
    } else {
        snprintf(key, sizeof key, "%s", uuid);
    }
    char hex[2 * 64 + 1];
    int hl = len > 64 ? 64 : len;
    for (int i = 0; i < hl; i++) {
        hex[2 * i] = hexdigits[data[i] >> 4];
        hex[2 * i + 1] = hexdigits[data[i] & 15];
    }
    hex[2 * hl] = 0;
    char values[160] = "";
    const char *decoder = "null";
    if (len == 15 && strcmp(key, "181a") == 0) { /* pvvx custom format, little endian */
        int16_t t = (int16_t)(data[6] | data[7] << 8);
        unsigned h = data[8] | data[9] << 8, mv = data[10] | data[11] << 8;
        decoder = "\"pvvx\"";
        snprintf(values, sizeof values,
                 ", \"packet_id\": %u, \"values\": {\"temperature\": %.2f, \"humidity\": %.2f, \"battery\": %u, \"voltage\": %.3f}",
                 data[13], t / 100.0, h / 100.0, data[12], mv / 1000.0);
    }
    char payload[512];
    int pl = snprintf(payload, sizeof payload, "{\"rssi\": %d, \"decoder\": %s%s, \"service_data\": {\"%s\": \"%s\"}}",
                      rssi, decoder, values, key, hex);
    char topic[64];
    int tl = snprintf(topic, sizeof topic, "floor/%s/advertisement", address);
    unsigned char pkt[640];
    size_t m = 0;
    pkt[m++] = 0x30;
    m += put_length(pkt + m, (size_t)(2 + tl + pl));
    pkt[m++] = (unsigned char)(tl >> 8);
    pkt[m++] = (unsigned char)tl;
    memcpy(pkt + m, topic, (size_t)tl);
    m += (size_t)tl;
    memcpy(pkt + m, payload, (size_t)pl);
    m += (size_t)pl;
    write_all(mqtt_fd, pkt, m);
    publishes++;
}

/* ---- D-Bus ---- */

static void call(DBusConnection *conn, DBusMessage *msg) {
    DBusError err;
    dbus_error_init(&err);
    DBusMessage *reply = dbus_connection_send_with_reply_and_block(conn, msg, 5000, &err);
    if (!reply) die(dbus_message_get_member(msg), err.message);
    dbus_message_unref(reply);
    dbus_message_unref(msg);
}

static void dict_entry(DBusMessageIter *dict, const char *key, int type, const char *sig, const void *value) {
    DBusMessageIter entry, variant;
    dbus_message_iter_open_container(dict, DBUS_TYPE_DICT_ENTRY, NULL, &entry);
    dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &key);
    dbus_message_iter_open_container(&entry, DBUS_TYPE_VARIANT, sig, &variant);
    dbus_message_iter_append_basic(&variant, type, value);
    dbus_message_iter_close_container(&entry, &variant);
    dbus_message_iter_close_container(dict, &entry);
}

/* Adapter1.SetDiscoveryFilter({Transport: le, DuplicateData: true}) and StartDiscovery, as the bridge. */
static void start_discovery(DBusConnection *conn, const char *adapter) {
    char path[64];
    snprintf(path, sizeof path, "/org/bluez/%s", adapter);
    DBusMessage *m = dbus_message_new_method_call("org.bluez", path, "org.bluez.Adapter1", "SetDiscoveryFilter");
    DBusMessageIter it, dict;
    dbus_message_iter_init_append(m, &it);
    dbus_message_iter_open_container(&it, DBUS_TYPE_ARRAY, "{sv}", &dict);
    const char *le = "le";
    dbus_bool_t yes = TRUE;
    dict_entry(&dict, "Transport", DBUS_TYPE_STRING, "s", &le);
    dict_entry(&dict, "DuplicateData", DBUS_TYPE_BOOLEAN, "b", &yes);
    dbus_message_iter_close_container(&it, &dict);
    call(conn, m);
    call(conn, dbus_message_new_method_call("org.bluez", path, "org.bluez.Adapter1", "StartDiscovery"));
}

/* One PropertiesChanged: read Device1's RSSI and ServiceData straight from the iterator. */
static void handle(DBusMessage *msg) {
    signals_seen++;
    if (!dbus_message_is_signal(msg, "org.freedesktop.DBus.Properties", "PropertiesChanged")) return;
    DBusMessageIter it, props;
    if (!dbus_message_iter_init(msg, &it) || dbus_message_iter_get_arg_type(&it) != DBUS_TYPE_STRING) return;
    const char *interface;
    dbus_message_iter_get_basic(&it, &interface);
    if (strcmp(interface, "org.bluez.Device1") != 0) return;
    if (!dbus_message_iter_next(&it) || dbus_message_iter_get_arg_type(&it) != DBUS_TYPE_ARRAY) return;
    dbus_message_iter_recurse(&it, &props);
    int rssi = 127, have_data = 0, data_len = 0;
    const char *uuid = NULL;
    const unsigned char *data = NULL;
    while (dbus_message_iter_get_arg_type(&props) == DBUS_TYPE_DICT_ENTRY) {
        DBusMessageIter entry, variant;
        const char *key;
        dbus_message_iter_recurse(&props, &entry);
        dbus_message_iter_get_basic(&entry, &key);
        dbus_message_iter_next(&entry);
        dbus_message_iter_recurse(&entry, &variant);
        if (strcmp(key, "RSSI") == 0 && dbus_message_iter_get_arg_type(&variant) == DBUS_TYPE_INT16) {
            dbus_int16_t v;
            dbus_message_iter_get_basic(&variant, &v);
            rssi = v;
        } else if (strcmp(key, "ServiceData") == 0 && dbus_message_iter_get_arg_type(&variant) == DBUS_TYPE_ARRAY) {
            DBusMessageIter sd;
            dbus_message_iter_recurse(&variant, &sd);
            while (dbus_message_iter_get_arg_type(&sd) == DBUS_TYPE_DICT_ENTRY) {
                DBusMessageIter e, v, bytes;
                dbus_message_iter_recurse(&sd, &e);
                const char *u;
                dbus_message_iter_get_basic(&e, &u);
                dbus_message_iter_next(&e);
                dbus_message_iter_recurse(&e, &v);
                if (dbus_message_iter_get_arg_type(&v) == DBUS_TYPE_ARRAY
                    && dbus_message_iter_get_element_type(&v) == DBUS_TYPE_BYTE) {
                    dbus_message_iter_recurse(&v, &bytes);
                    dbus_message_iter_get_fixed_array(&bytes, &data, &data_len);
                    uuid = u;
                    have_data = 1;
                }
                dbus_message_iter_next(&sd);
            }
        }
        dbus_message_iter_next(&props);
    }
    reports++;
    if (!have_data) return;
    service_data_reports++;
    if (mqtt_fd >= 0) publish(dbus_message_get_path(msg), rssi, uuid, data, data_len);
}

static void usage(FILE *f) {
    fputs("usage: dbus-floor [--publish PORT] [--seconds N] [--adapter hci0] [--no-discovery]\n", f);
}

int main(int argc, char **argv) {
    int port = 0, discovery = 1;
    double seconds = 0;
    const char *adapter = "hci0";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--publish") == 0 && i + 1 < argc) port = atoi(argv[++i]);
        else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) seconds = atof(argv[++i]);
        else if (strcmp(argv[i], "--adapter") == 0 && i + 1 < argc) adapter = argv[++i];
        else if (strcmp(argv[i], "--no-discovery") == 0) discovery = 0;
        else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) { usage(stdout); return 0; }
        else { usage(stderr); return 2; }
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal; /* no SA_RESTART: poll() returns EINTR */
    sigaction(SIGUSR1, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    DBusError err;
    dbus_error_init(&err);
    DBusConnection *conn = dbus_bus_get_private(DBUS_BUS_SYSTEM, &err);
    if (!conn) die("system bus", err.message);
    dbus_connection_set_exit_on_disconnect(conn, FALSE);
    dbus_bus_add_match(conn, "type='signal',sender='org.bluez'", &err);
    if (dbus_error_is_set(&err)) die("AddMatch", err.message);
    if (port) mqtt_connect(port);
    if (discovery) start_discovery(conn, adapter);
    int fd;
    if (!dbus_connection_get_unix_fd(conn, &fd)) die("dbus_connection_get_unix_fd", NULL);
    printf("dbus-floor ready\n");
    fflush(stdout);

    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        DBusMessage *msg;
        while ((msg = dbus_connection_pop_message(conn)) != NULL) {
            handle(msg);
            dbus_message_unref(msg);
        }
        if (want_counters) {
            want_counters = 0;
            print_counters();
        }
        if (want_exit) break;
        int timeout = -1;
        if (seconds > 0) {
            struct timespec now;
            clock_gettime(CLOCK_MONOTONIC, &now);
            double left = seconds - ((now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9);
            if (left <= 0) break;
            timeout = (int)(left * 1000) + 1;
        }
        struct pollfd p = { .fd = fd, .events = POLLIN };
        int n = poll(&p, 1, timeout);
        if (n < 0 && errno != EINTR) die("poll", strerror(errno));
        if (n <= 0) continue;
        wakeups++;
        if (!dbus_connection_read_write(conn, 0)) die("bus", "disconnected");
        if (p.revents & (POLLHUP | POLLERR) && !dbus_connection_get_is_connected(conn)) die("bus", "disconnected");
    }
    print_counters();
    return 0;
}
