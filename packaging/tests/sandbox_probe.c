/* What the unit's sandbox must forbid, tried one by one. Prints one line per attempt
 * ("name allowed" / "name denied: <errno>") and always exits 0. Built static by run.sh. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <unistd.h>

static void report(const char *what, int ok) {
    if (ok) printf("%s allowed\n", what);
    else printf("%s denied: %s\n", what, strerror(errno));
}

int main(int argc, char **argv) {
    const char *state = argc > 1 ? argv[1] : "/var/lib/monky-deployd";
    char path[512];
    void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    report("mmap-wx", p != MAP_FAILED);
    void *q = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    report("mprotect-exec", q != MAP_FAILED && mprotect(q, 4096, PROT_READ | PROT_EXEC) == 0);
    int s = socket(AF_NETLINK, SOCK_RAW, 0);
    report("socket-netlink", s >= 0);
    int t = socket(AF_INET, SOCK_STREAM, 0);
    report("socket-inet", t >= 0);
    int u = socket(AF_UNIX, SOCK_STREAM, 0);
    report("socket-unix", u >= 0);
    report("chown", chown(state, 0, 0) == 0);
    report("setuid-root", setuid(0) == 0);
    report("personality", personality(PER_LINUX32) != -1);
    int fd = open("/usr/sandbox-probe-write", O_CREAT | O_WRONLY, 0600);
    report("write-usr", fd >= 0);
    if (fd >= 0) { close(fd); unlink("/usr/sandbox-probe-write"); }
    snprintf(path, sizeof path, "%s/sandbox-probe-write", state);
    fd = open(path, O_CREAT | O_WRONLY, 0600);
    report("write-state", fd >= 0);
    if (fd >= 0) { close(fd); unlink(path); }
    fd = open("/tmp/sandbox-probe-write", O_CREAT | O_WRONLY, 0600);
    report("write-tmp", fd >= 0);
    if (fd >= 0) { close(fd); unlink("/tmp/sandbox-probe-write"); }
    return 0;
}
