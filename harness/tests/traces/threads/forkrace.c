// A parent and its fork child (no fd of the mount: fork unmarked) load
// pages 0 and 1 of a fresh 2-page MAP_SHARED mapping at once; the child
// then replaces its copy with anonymous memory (MAP_FIXED: no munmap
// mark) and exits holding nothing of the mount (no exit mark).
// argv[1]: cycles the child (>0) or the parent (<0) waits after "go".
// argv[2] == "u": the child is made with CLONE_UNTRACED instead.
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <x86intrin.h>

struct sync { volatile int ready, go, done; volatile unsigned long at; };

static void spin(long c) { unsigned long t = __rdtsc(); while ((long)(__rdtsc() - t) < c) ; }

int main(int argc, char **argv) {
    long d = argc > 1 ? atol(argv[1]) : 0;
    int untraced = argc > 2 && argv[2][0] == 'u';
    struct sync *s = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    int fd = open("f", O_CREAT | O_RDWR, 0644);
    if (fd < 0 || ftruncate(fd, 8192)) { perror("f"); return 1; }
    volatile char *p = mmap(0, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) { perror("mmap"); return 1; }
    close(fd);
    long pid = untraced ? syscall(SYS_clone, CLONE_UNTRACED | SIGCHLD, 0, 0, 0, 0) : fork();
    if (pid < 0) { perror("fork"); return 1; }
    if (pid == 0) {
        cpu_set_t c; CPU_ZERO(&c); CPU_SET(1, &c); sched_setaffinity(0, sizeof c, &c);
        s->ready = 1;
        while (!s->go) ;
        while (__rdtsc() < s->at + (d > 0 ? d : 0)) ;
        (void)p[4096];
        mmap((void *)p, 8192, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
        s->done = 1;
        syscall(SYS_exit_group, 0);
    }
    cpu_set_t c; CPU_ZERO(&c); CPU_SET(0, &c); sched_setaffinity(0, sizeof c, &c);
    while (!s->ready) ;
    s->at = __rdtsc() + 300000;
    s->go = 1;
    while (__rdtsc() < s->at + (d < 0 ? -d : 0)) ;
    (void)p[0];
    while (!s->done) ;
    waitpid(pid, 0, 0);
    munmap((void *)p, 8192);
    return 0;
}
