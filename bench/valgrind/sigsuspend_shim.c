/* Preloaded into a server run under Valgrind (bench/run instructions). Valgrind 3.19's rt_sigsuspend wrapper writes into
   the mask it is given; libdispatch's dispatch_main (which an async main on Linux ends in) passes a const mask that lives
   in read-only memory, and Valgrind dies of SIGSEGV. The same call with the mask copied to the stack first. */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

int sigsuspend(const sigset_t *mask) {
    sigset_t copy = *mask;
    return (int)syscall(SYS_rt_sigsuspend, &copy, sizeof(long));
}
