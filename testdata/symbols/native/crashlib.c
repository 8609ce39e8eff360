/* A small native library for phonelogs-symbols' tests: crash_now() writes through a null
 * pointer from a function inlined into it, so a frame in it symbolicates to an inlined frame
 * and its caller. Built with `cc -g -O1 -shared -fPIC -Wl,--build-id`. */
#include <stddef.h>

static inline __attribute__((always_inline)) void store_total(int *where, int value) {
    *where = value * 2;
}

__attribute__((noinline)) int crash_now(int *where, int value) {
    store_total(where, value);
    return value + 1;
}

__attribute__((noinline)) int checkout_resume(int value) {
    int *nowhere = NULL;
    return crash_now(nowhere, value) + 3;
}
