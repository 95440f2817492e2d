/* The floor under any server's ping-pong on this machine: an echo server
 * that does no work but answering each request line with a reply of a
 * given size, and pinning a process and the bench to one CPU.
 *
 * On a VM's vCPUs a ping-pong between two processes on different CPUs
 * spends most of its time in cross-CPU wakeups, whatever the server
 * does; pinned to one CPU, the same two processes hand over the CPU
 * directly. A server's requests/s only means something next to this
 * floor, measured in the same run and the same mode (docs/benchmarks.md). */
#pragma once

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Forks an echo server on one end of a socketpair: an epoll loop that
 * answers each line it reads with one line of `reply_size` bytes (a JSON
 * object starting with {"ok":true, padded, ending with the newline). The
 * other end, for the caller, goes to *client_fd. Dies on failure. */
pid_t echo_server_start(size_t reply_size, int *client_fd);

/* Closes the caller's end (the server exits on EOF) and reaps it. */
void echo_server_stop(pid_t pid, int client_fd);

/* Pins `pid` (0: the caller) to `cpu`, keeping its affinity in *saved for
 * pin_restore. Returns false, with errno, when it could not. */
bool pin_to_cpu(pid_t pid, int cpu, cpu_set_t *saved);
void pin_restore(pid_t pid, const cpu_set_t *saved);

/* The first CPU the caller may run on, or -1. */
int first_allowed_cpu(void);
