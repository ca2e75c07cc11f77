// Diagnostic interposer (not part of ringo): logs every close/shutdown/dup2/dup3 through libc
// that ends a TCP socket, with the ports and a backtrace. Go's own syscalls bypass libc, so
// what this logs was closed by C, C++ or Python code of the process.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
static int port(int fd, int peer) {
  struct sockaddr_in a; socklen_t l = sizeof a;
  int r = peer ? getpeername(fd, (struct sockaddr*)&a, &l) : getsockname(fd, (struct sockaddr*)&a, &l);
  if (r != 0 || a.sin_family != AF_INET) return -1;
  return ntohs(a.sin_port);
}
static void spy(const char *what, int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) return;
  int lp = port(fd, 0), pp = port(fd, 1);
  if (lp < 0) return;
  struct timespec t; clock_gettime(CLOCK_REALTIME, &t);
  char b[200]; int n = snprintf(b, sizeof b, "closespy pid %d t %ld.%06ld: %s(fd %d) tcp local %d peer %d\n",
      getpid(), (long)t.tv_sec, t.tv_nsec / 1000, what, fd, lp, pp);
  write(2, b, n);
  void *bt[24]; int k = backtrace(bt, 24); backtrace_symbols_fd(bt, k, 2);
}
int close(int fd) { static int (*f)(int); if (!f) f = dlsym(RTLD_NEXT, "close"); spy("close", fd); return f(fd); }
int shutdown(int fd, int how) { static int (*f)(int, int); if (!f) f = dlsym(RTLD_NEXT, "shutdown"); spy("shutdown", fd); return f(fd, how); }
int dup2(int o, int n) { static int (*f)(int, int); if (!f) f = dlsym(RTLD_NEXT, "dup2"); if (o != n) spy("dup2-over", n); return f(o, n); }
int dup3(int o, int n, int fl) { static int (*f)(int, int, int); if (!f) f = dlsym(RTLD_NEXT, "dup3"); spy("dup3-over", n); return f(o, n, fl); }
