/* A small single-threaded event loop: epoll for fds, one timerfd over a
 * min-heap of deadlines (CLOCK_MONOTONIC, milliseconds).
 *
 * An idle loop has no periodic wakeup: the timerfd is armed only for the
 * earliest pending deadline, and disarmed when there is none. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct loop;

/* `registered` sits in fd's padding: 24 bytes, not 32, and a task has
 * eight of these (measured: bench_supervisor --memory-only). */
struct loop_watch {
	int fd;
	bool registered;
	void (*callback)(struct loop_watch *watch, uint32_t events);
	void *data;
};

struct loop_timer {
	uint64_t deadline_ms;
	void (*callback)(struct loop_timer *timer);
	void *data;
	size_t heap_index; /* SIZE_MAX when not armed */
};

/* Work that may wait, run once the next time the loop finds nothing ready
 * (corral's spare namespaces made ahead): it never delays an event that
 * is already pending. */
struct loop_idle {
	void (*callback)(struct loop_idle *idle);
	void *data;
	struct loop_idle *next; /* in the loop's list while pending */
	uint64_t due_ms;        /* loop_idle_request_within: run by then; 0: none */
	bool pending;
};

int loop_create(struct loop **out);
void loop_free(struct loop *loop);

/* Level-triggered. The watch must stay valid until removed. */
int loop_watch_add(struct loop *loop, struct loop_watch *watch, uint32_t events);
int loop_watch_modify(struct loop *loop, struct loop_watch *watch, uint32_t events);
void loop_watch_remove(struct loop *loop, struct loop_watch *watch);

void loop_timer_init(struct loop_timer *timer, void (*callback)(struct loop_timer *), void *data);
/* Arms (or re-arms) the timer at an absolute monotonic deadline. */
void loop_timer_arm(struct loop *loop, struct loop_timer *timer, uint64_t deadline_ms);
void loop_timer_cancel(struct loop *loop, struct loop_timer *timer);
bool loop_timer_armed(const struct loop_timer *timer);

void loop_idle_init(struct loop_idle *idle, void (*callback)(struct loop_idle *), void *data);
/* Runs `idle` once when the loop is next idle (one pending work per idle
 * look, the latest requested first); nothing if it is pending already. */
void loop_idle_request(struct loop *loop, struct loop_idle *idle);
/* As loop_idle_request, but a loop that stays busy runs it anyway at the
 * end of the first turn `within_ms` after this request (what must not lag
 * behind the loop's work for long: the keeper's records). A request while
 * pending keeps the earlier due time. */
void loop_idle_request_within(struct loop *loop, struct loop_idle *idle, uint64_t within_ms);
void loop_idle_cancel(struct loop *loop, struct loop_idle *idle);

/* Milliseconds on CLOCK_MONOTONIC. */
uint64_t loop_now_ms(void);

/* The longest turn so far, in microseconds: from a wait's return to the
 * next wait, the callbacks of its events and what the caller did before
 * calling again (two reads of the vDSO clock a turn). What runs before
 * the first wait (corral's start) is no turn. */
uint64_t loop_longest_turn_us(const struct loop *loop);

/* Waits for at least one event (fd or timer) and dispatches every ready one;
 * with idle work pending and nothing ready, runs that work instead of
 * waiting. Returns 0, or -errno when epoll itself fails. */
int loop_run_once(struct loop *loop);
