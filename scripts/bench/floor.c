/*
 * The floor of a quiet sensor's value on this kernel (scripts/bench-floor; issue 20).
 *
 *   floor --port PORT [--rate N] [--seconds N] [--warmup N] [--topic T] [--no-send]
 *
 * Three processes:
 * - "sensor": sends a 4-byte counter on one end of a SOCK_SEQPACKET socketpair N times a second
 *   (clock_nanosleep on absolute CLOCK_MONOTONIC times), like bluez-sim's AcquireNotify socket;
 * - "loop": connected by TCP to an MQTT broker on 127.0.0.1:PORT (MQTT 3.1.1 CONNECT, CONNACK),
 *   does only poll -> recv -> send: for each packet one PUBLISH (QoS 0) of a small JSON payload
 *   the size of the bridge's; three system calls and one wake-up per value by construction
 *   (--no-send: poll -> recv only, the wake-up without the publish; connected all the same);
 * - the controller (this process): after the warm-up reads the loop's CPU time, sleeps the
 *   window, reads it again, stops both and prints the figures.
 *
 * CPU time comes from the loop's CPU-time clock (clock_getcpuclockid, ns: what scripts/bench-demo
 * also reads for the bridge) and /proc/PID/stat (utime+stime, in whole clock ticks: bench-demo's
 * first figure); wake-ups from
 * voluntary_ctxt_switches in /proc/PID/status. The loop counts its values in a shared page (one
 * store per value, no system call).
 */
#define _GNU_SOURCE
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
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what) {
    perror(what);
    exit(1);
}

static size_t put_length(uint8_t *out, size_t n) {  /* MQTT variable byte integer */
    size_t i = 0;
    do {
        uint8_t b = n % 128;
        n /= 128;
        out[i++] = b | (n ? 0x80 : 0);
    } while (n);
    return i;
}

static void send_all(int fd, const uint8_t *p, size_t n) {
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR) continue;
            die("send");
        }
        p += w;
        n -= (size_t)w;
    }
}

static int mqtt_connect(int port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) die("socket");
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) die("connect");
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  /* as libmosquitto does */
    static const char id[] = "bench-floor";
    uint8_t body[64], packet[80];
    size_t n = 0;
    memcpy(body, "\x00\x04MQTT\x04\x02\x00\x00", 10);  /* level 4, clean session, no keep-alive */
    n = 10;
    body[n++] = 0;
    body[n++] = sizeof id - 1;
    memcpy(body + n, id, sizeof id - 1);
    n += sizeof id - 1;
    size_t m = 0;
    packet[m++] = 0x10;
    m += put_length(packet + m, n);
    memcpy(packet + m, body, n);
    send_all(fd, packet, m + n);
    uint8_t ack[4];
    size_t got = 0;
    while (got < 4) {
        ssize_t r = recv(fd, ack + got, 4 - got, 0);
        if (r <= 0) die("recv CONNACK");
        got += (size_t)r;
    }
    if (ack[0] != 0x20 || ack[1] != 2 || ack[3] != 0) {
        fprintf(stderr, "floor: CONNACK refused (%02x %02x %02x %02x)\n", ack[0], ack[1], ack[2], ack[3]);
        exit(1);
    }
    return fd;
}

static void sensor(int fd, long rate) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    long period = 1000000000L / rate;
    for (uint32_t counter = 0;; counter++) {
        t.tv_nsec += period;
        while (t.tv_nsec >= 1000000000L) {
            t.tv_nsec -= 1000000000L;
            t.tv_sec++;
        }
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR) {}
        uint8_t value[4] = {counter >> 24, counter >> 16, counter >> 8, counter};
        if (send(fd, value, sizeof value, MSG_NOSIGNAL) < 0) _exit(0);
    }
}

static const char hexdigits[] = "0123456789abcdef";

static void loop(int sensor_fd, int port, const char *topic, int publish, volatile uint64_t *count) {
    int mqtt = mqtt_connect(port);
    size_t topic_len = strlen(topic);
    /* PUBLISH, QoS 0: header, topic, payload {"raw":"0000002a","value":42}-like, ~30 bytes. */
    uint8_t packet[512];
    struct pollfd p = {.fd = sensor_fd, .events = POLLIN};
    for (;;) {
        if (poll(&p, 1, -1) < 0) {
            if (errno == EINTR) continue;
            die("poll");
        }
        uint8_t value[16];
        ssize_t r = recv(sensor_fd, value, sizeof value, 0);
        if (r <= 0) _exit(0);
        if (!publish) {
            (*count)++;
            continue;
        }
        char payload[64];
        size_t pn = 0;
        memcpy(payload, "{\"raw\":\"", 8);
        pn = 8;
        for (ssize_t i = 0; i < r; i++) {
            payload[pn++] = hexdigits[value[i] >> 4];
            payload[pn++] = hexdigits[value[i] & 15];
        }
        uint32_t v = r >= 4 ? (uint32_t)value[0] << 24 | value[1] << 16 | value[2] << 8 | value[3] : 0;
        pn += (size_t)snprintf(payload + pn, sizeof payload - pn, "\",\"value\":%u}", v);
        size_t remaining = 2 + topic_len + pn, n = 0;
        packet[n++] = 0x30;
        n += put_length(packet + n, remaining);
        packet[n++] = (uint8_t)(topic_len >> 8);
        packet[n++] = (uint8_t)topic_len;
        memcpy(packet + n, topic, topic_len);
        n += topic_len;
        memcpy(packet + n, payload, pn);
        n += pn;
        if (send(mqtt, packet, n, MSG_NOSIGNAL) != (ssize_t)n) die("send PUBLISH");
        (*count)++;
    }
}

struct sample {
    double cpu_ns;     /* the process's CPU-time clock */
    double ticks;      /* stat: utime + stime */
    double wakeups;    /* voluntary context switches */
    uint64_t values;
    struct timespec at;
};

static void read_sample(pid_t pid, volatile uint64_t *count, struct sample *s) {
    char path[64], buf[4096];
    FILE *f;
    clockid_t clock;
    struct timespec t;
    if (clock_getcpuclockid(pid, &clock) != 0 || clock_gettime(clock, &t) != 0) die("clock_getcpuclockid");
    s->cpu_ns = (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    if (!(f = fopen(path, "r")) || !fgets(buf, sizeof buf, f)) die(path);
    fclose(f);
    char *q = strrchr(buf, ')');
    unsigned long ut = 0, st = 0;
    /* after ") ": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
    if (!q || sscanf(q + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2) die("stat");
    s->ticks = (double)(ut + st);
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    if (!(f = fopen(path, "r"))) die(path);
    s->wakeups = 0;
    while (fgets(buf, sizeof buf, f))
        if (sscanf(buf, "voluntary_ctxt_switches: %lf", &s->wakeups) == 1) break;
    fclose(f);
    s->values = *count;
    clock_gettime(CLOCK_MONOTONIC, &s->at);
}

int main(int argc, char **argv) {
    long rate = 10, seconds = 20, warmup = 2;
    int port = 0, publish = 1;
    const char *topic = "ble/c0ffee001001/ffe0/ffe1";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            puts("floor --port PORT [--rate N] [--seconds N] [--warmup N] [--topic T] [--no-send]");
            return 0;
        }
        if (!strcmp(a, "--no-send")) {
            publish = 0;
            continue;
        }
        if (!v) { fprintf(stderr, "floor: %s needs a value\n", a); return 2; }
        if (!strcmp(a, "--rate")) rate = atol(v);
        else if (!strcmp(a, "--seconds")) seconds = atol(v);
        else if (!strcmp(a, "--warmup")) warmup = atol(v);
        else if (!strcmp(a, "--port")) port = atoi(v);
        else if (!strcmp(a, "--topic")) topic = v;
        else { fprintf(stderr, "floor: unknown argument %s\n", a); return 2; }
        i++;
    }
    if (rate <= 0 || rate > 1000000 || seconds <= 0 || warmup < 0 || port <= 0 || strlen(topic) > 256) {
        fprintf(stderr, "floor: need --port, a rate in 1..1000000, seconds > 0\n");
        return 2;
    }
    volatile uint64_t *count = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (count == MAP_FAILED) die("mmap");
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) die("socketpair");
    pid_t loop_pid = fork();
    if (loop_pid < 0) die("fork");
    if (loop_pid == 0) {
        close(sv[0]);
        loop(sv[1], port, topic, publish, count);
    }
    pid_t sensor_pid = fork();
    if (sensor_pid < 0) die("fork");
    if (sensor_pid == 0) {
        close(sv[1]);
        sensor(sv[0], rate);
    }
    close(sv[0]);
    close(sv[1]);
    struct timespec w = {.tv_sec = warmup};
    nanosleep(&w, NULL);
    struct sample a, b;
    read_sample(loop_pid, count, &a);
    w.tv_sec = seconds;
    nanosleep(&w, NULL);
    read_sample(loop_pid, count, &b);
    kill(sensor_pid, SIGTERM);
    waitpid(sensor_pid, NULL, 0);
    int status = 0;
    waitpid(loop_pid, &status, 0);   /* the loop ends when the sensor's end closes */
    uint64_t total = *count;
    double dt = (double)(b.at.tv_sec - a.at.tv_sec) + (double)(b.at.tv_nsec - a.at.tv_nsec) / 1e9;
    double n = (double)(b.values - a.values);
    double hz = (double)sysconf(_SC_CLK_TCK);
    if (n <= 0) {
        fprintf(stderr, "floor: no values in the window\n");
        return 1;
    }
    printf("floor: %ld values/s offered: %.0f values in the %.1f s window (%.1f/s), %llu %s in all\n",
           rate, n, dt, n / dt, (unsigned long long)total, publish ? "sent" : "received (not sent)");
    printf("floor: loop CPU %.1f us per value (process CPU clock, ns resolution); %.1f us per value (/proc/PID/stat utime+stime, %.0f ticks of 1/%.0f s)\n",
           (b.cpu_ns - a.cpu_ns) / 1e3 / n, (b.ticks - a.ticks) / hz * 1e6 / n, b.ticks - a.ticks, hz);
    printf("floor: %.2f wake-ups per value (voluntary context switches); %d system calls per value by construction (%s)\n",
           (b.wakeups - a.wakeups) / n, publish ? 3 : 2, publish ? "poll, recv, send" : "poll, recv; --no-send");
    return 0;
}
