/* A shifted wall clock for black-box tests (spec/QUIRKS.md: Debian's libfaketime empties a Swift program's
 * arguments). Preloaded into the server (LD_PRELOAD), it adds the number of seconds written in the file named by
 * PORTCULLIS_CLOCK_OFFSET_FILE to CLOCK_REALTIME (and gettimeofday, time), re-reading the file at most every 100 ms,
 * so a test moves the server's clock forward while it runs. Monotonic clocks are left alone. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);

static double offset_seconds(void) {
    static double offset = 0;
    static struct timespec checked = {0, 0};
    static clock_gettime_fn real = NULL;
    if (!real) real = (clock_gettime_fn)dlsym(RTLD_NEXT, "clock_gettime");
    struct timespec now;
    real(CLOCK_MONOTONIC, &now);
    double since = (now.tv_sec - checked.tv_sec) + (now.tv_nsec - checked.tv_nsec) / 1e9;
    if (checked.tv_sec == 0 || since > 0.1) {
        checked = now;
        const char *path = getenv("PORTCULLIS_CLOCK_OFFSET_FILE");
        FILE *file = path ? fopen(path, "r") : NULL;
        if (file) {
            double read = 0;
            if (fscanf(file, "%lf", &read) == 1) offset = read;
            fclose(file);
        }
    }
    return offset;
}

static void shift(struct timespec *ts, double offset) {
    long long whole = (long long)offset;
    long nanos = (long)((offset - (double)whole) * 1e9);
    ts->tv_sec += whole;
    ts->tv_nsec += nanos;
    if (ts->tv_nsec >= 1000000000L) { ts->tv_sec += 1; ts->tv_nsec -= 1000000000L; }
    if (ts->tv_nsec < 0) { ts->tv_sec -= 1; ts->tv_nsec += 1000000000L; }
}

int clock_gettime(clockid_t clock, struct timespec *ts) {
    static clock_gettime_fn real = NULL;
    if (!real) real = (clock_gettime_fn)dlsym(RTLD_NEXT, "clock_gettime");
    int result = real(clock, ts);
    if (result == 0 && (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE)) shift(ts, offset_seconds());
    return result;
}

int gettimeofday(struct timeval *tv, void *tz) {
    struct timespec ts;
    int result = clock_gettime(CLOCK_REALTIME, &ts);
    (void)tz;
    if (result == 0 && tv) {
        tv->tv_sec = ts.tv_sec;
        tv->tv_usec = ts.tv_nsec / 1000;
    }
    return result;
}

time_t time(time_t *out) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (out) *out = ts.tv_sec;
    return ts.tv_sec;
}
