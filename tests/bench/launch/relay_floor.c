// `./run bench`'s floor for the egress broker (tests/bench/run_bench.py):
// the least a relay between two loopback TCP connections can be. It binds
// 127.0.0.1 on a port the kernel picks, prints that port, and joins each
// connection it accepts to 127.0.0.1:TARGET, one splice(2) loop per
// direction, as the broker's relay does; no request is read, nothing is
// checked. What a download through it costs over a direct one is the host's
// price of a second loopback hop, which the broker cannot avoid.
//
//   bench-relay-floor TARGET_PORT     serves until killed
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

enum { kPipeSize = 1 << 20 };

static int loopback_socket(unsigned short port, int do_connect) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  if (fd < 0) return -1;
  if (do_connect ? connect(fd, (struct sockaddr*)&address, sizeof address)
                 : bind(fd, (struct sockaddr*)&address, sizeof address) || listen(fd, 64))
    return close(fd), -1;
  return fd;
}

static void pump(int from, int to) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) == 0) {
    fcntl(pipe_fds[1], F_SETPIPE_SZ, kPipeSize);
    ssize_t in;
    while ((in = splice(from, NULL, pipe_fds[1], NULL, kPipeSize, SPLICE_F_MOVE)) > 0)
      while (in > 0) {
        const ssize_t out = splice(pipe_fds[0], NULL, to, NULL, (size_t)in, SPLICE_F_MOVE);
        if (out <= 0) return;
        in -= out;
      }
  }
  shutdown(to, SHUT_WR);
}

int main(int argc, char** argv) {
  if (argc != 2) return fprintf(stderr, "usage: bench-relay-floor TARGET_PORT\n"), 2;
  const unsigned short target = (unsigned short)atoi(argv[1]);
  const int listener = loopback_socket(0, 0);
  struct sockaddr_in bound;
  socklen_t length = sizeof bound;
  if (listener < 0 || getsockname(listener, (struct sockaddr*)&bound, &length)) return perror("listen"), 1;
  printf("%d\n", ntohs(bound.sin_port));
  fflush(stdout);
  signal(SIGCHLD, SIG_IGN);  // each connection's processes reap themselves
  for (;;) {
    const int client = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
    if (client < 0) continue;
    const int upstream = loopback_socket(target, 1);
    if (upstream >= 0 && fork() == 0) {
      if (fork() == 0) pump(client, upstream);
      else pump(upstream, client);
      _exit(0);
    }
    close(client);
    if (upstream >= 0) close(upstream);
  }
}
