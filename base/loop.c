#include "base/loop.h"
#include "base/clock.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "base/xmalloc.h"

#define LOOP_MAX_EVENTS 64
/* A turn dispatches events for this long at most; the rest are still
 * ready (every watch is level-triggered) and come at the next wait. Each
 * input bounds its own work (an output batch, a pattern's 2 ms, the HTTP
 * accepts' 1 ms), but several ready at once added up to 15 ms and more a
 * turn, and /livez waited behind them (bench_loop's `all`). */
#define LOOP_TURN_BUDGET_US 5000

struct loop {
	int epoll_fd;
	struct loop_watch timer_watch;
	struct loop_timer **heap; /* min-heap on deadline_ms */
	size_t heap_count;
	size_t heap_capacity;
	uint64_t armed_deadline_ms; /* what the timerfd is set to, 0 = disarmed */
	struct loop_idle *idle;     /* pending idle work, most recent first */
	/* A turn: from the wait's return to the next wait (the events'
	 * callbacks and whatever the caller does after loop_run_once). */
	uint64_t turn_started_us; /* 0: no turn yet */
	uint64_t longest_turn_us;
	/* Where a turn's dispatch begins in what the wait returned: a turn
	 * cut short by the budget leaves the end of the list, and the next
	 * turn begins elsewhere, so that no event waits behind the same
	 * others for good. */
	unsigned rotation;
};

uint64_t loop_now_ms(void)
{
	return monotonic_ms();
}

/* ---- timer heap ---- */

static void heap_swap(struct loop *loop, size_t a, size_t b)
{
	struct loop_timer *timer_a = loop->heap[a];
	loop->heap[a] = loop->heap[b];
	loop->heap[b] = timer_a;
	loop->heap[a]->heap_index = a;
	loop->heap[b]->heap_index = b;
}

static void heap_sift_up(struct loop *loop, size_t index)
{
	while (index > 0) {
		size_t parent = (index - 1) / 2;
		if (loop->heap[parent]->deadline_ms <= loop->heap[index]->deadline_ms)
			break;
		heap_swap(loop, parent, index);
		index = parent;
	}
}

static void heap_sift_down(struct loop *loop, size_t index)
{
	for (;;) {
		size_t smallest = index;
		size_t left = 2 * index + 1, right = left + 1;
		if (left < loop->heap_count &&
		    loop->heap[left]->deadline_ms < loop->heap[smallest]->deadline_ms)
			smallest = left;
		if (right < loop->heap_count &&
		    loop->heap[right]->deadline_ms < loop->heap[smallest]->deadline_ms)
			smallest = right;
		if (smallest == index)
			return;
		heap_swap(loop, index, smallest);
		index = smallest;
	}
}

static void heap_remove(struct loop *loop, struct loop_timer *timer)
{
	size_t index = timer->heap_index;
	size_t last = loop->heap_count - 1;
	if (index != last) {
		heap_swap(loop, index, last);
		loop->heap_count--;
		heap_sift_down(loop, index);
		heap_sift_up(loop, index);
	} else {
		loop->heap_count--;
	}
	timer->heap_index = SIZE_MAX;
}

/* Points the timerfd at the earliest deadline, touching it only when that
 * deadline changed, so arming many later timers costs no syscall. */
static void timerfd_follow_heap(struct loop *loop)
{
	uint64_t earliest = loop->heap_count ? loop->heap[0]->deadline_ms : 0;
	if (earliest == 0 && loop->heap_count)
		earliest = 1; /* a deadline of 0 is "already due"; 0 would disarm */
	if (earliest == loop->armed_deadline_ms)
		return;
	struct itimerspec spec = {0};
	spec.it_value.tv_sec = (time_t)(earliest / 1000);
	spec.it_value.tv_nsec = (long)(earliest % 1000) * 1000000L;
	timerfd_settime(loop->timer_watch.fd, TFD_TIMER_ABSTIME, &spec, NULL);
	loop->armed_deadline_ms = earliest;
}

void loop_timer_init(struct loop_timer *timer, void (*callback)(struct loop_timer *), void *data)
{
	memset(timer, 0, sizeof(*timer));
	timer->callback = callback;
	timer->data = data;
	timer->heap_index = SIZE_MAX;
}

bool loop_timer_armed(const struct loop_timer *timer)
{
	return timer->heap_index != SIZE_MAX;
}

void loop_timer_arm(struct loop *loop, struct loop_timer *timer, uint64_t deadline_ms)
{
	if (loop_timer_armed(timer))
		heap_remove(loop, timer);
	if (loop->heap_count == loop->heap_capacity) {
		loop->heap_capacity = loop->heap_capacity ? loop->heap_capacity * 2 : 64;
		loop->heap = xreallocarray(loop->heap, loop->heap_capacity, sizeof(*loop->heap));
	}
	timer->deadline_ms = deadline_ms;
	timer->heap_index = loop->heap_count;
	loop->heap[loop->heap_count++] = timer;
	heap_sift_up(loop, timer->heap_index);
	timerfd_follow_heap(loop);
}

void loop_timer_cancel(struct loop *loop, struct loop_timer *timer)
{
	if (!loop_timer_armed(timer))
		return;
	heap_remove(loop, timer);
	timerfd_follow_heap(loop);
}

static void run_due_timers(struct loop_watch *watch, uint32_t events)
{
	struct loop *loop = watch->data;
	uint64_t expirations;
	/* Only clears the readiness; the heap says what is due. */
	(void)!read(watch->fd, &expirations, sizeof(expirations));
	loop->armed_deadline_ms = 0;

	uint64_t now = loop_now_ms();
	while (loop->heap_count && loop->heap[0]->deadline_ms <= now) {
		struct loop_timer *due = loop->heap[0];
		heap_remove(loop, due);
		due->callback(due);
	}
	timerfd_follow_heap(loop);
}

/* ---- fds ---- */

int loop_create(struct loop **out)
{
	struct loop *loop = xcalloc(1, sizeof(*loop));
	loop->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (loop->epoll_fd < 0)
		goto fail;
	loop->timer_watch.fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (loop->timer_watch.fd < 0)
		goto fail;
	loop->timer_watch.callback = run_due_timers;
	loop->timer_watch.data = loop;
	if (loop_watch_add(loop, &loop->timer_watch, EPOLLIN) < 0)
		goto fail;
	*out = loop;
	return 0;
fail:;
	int failure = -errno;
	loop_free(loop);
	return failure;
}

void loop_free(struct loop *loop)
{
	if (!loop)
		return;
	if (loop->timer_watch.fd > 0)
		close(loop->timer_watch.fd);
	if (loop->epoll_fd > 0)
		close(loop->epoll_fd);
	free(loop->heap);
	free(loop);
}

int loop_watch_add(struct loop *loop, struct loop_watch *watch, uint32_t events)
{
	struct epoll_event event = {.events = events, .data.ptr = watch};
	if (epoll_ctl(loop->epoll_fd, EPOLL_CTL_ADD, watch->fd, &event) < 0)
		return -errno;
	watch->registered = true;
	return 0;
}

int loop_watch_modify(struct loop *loop, struct loop_watch *watch, uint32_t events)
{
	struct epoll_event event = {.events = events, .data.ptr = watch};
	if (epoll_ctl(loop->epoll_fd, EPOLL_CTL_MOD, watch->fd, &event) < 0)
		return -errno;
	return 0;
}

void loop_watch_remove(struct loop *loop, struct loop_watch *watch)
{
	if (!watch->registered)
		return;
	epoll_ctl(loop->epoll_fd, EPOLL_CTL_DEL, watch->fd, NULL);
	watch->registered = false;
}

/* ---- idle work ---- */

void loop_idle_init(struct loop_idle *idle, void (*callback)(struct loop_idle *), void *data)
{
	*idle = (struct loop_idle){.callback = callback, .data = data};
}

void loop_idle_request(struct loop *loop, struct loop_idle *idle)
{
	if (idle->pending)
		return;
	idle->pending = true;
	idle->next = loop->idle;
	loop->idle = idle;
}

void loop_idle_request_within(struct loop *loop, struct loop_idle *idle, uint64_t within_ms)
{
	if (idle->pending && idle->due_ms)
		return;
	idle->due_ms = loop_now_ms() + within_ms;
	if (!idle->pending)
		loop_idle_request(loop, idle);
}

void loop_idle_cancel(struct loop *loop, struct loop_idle *idle)
{
	for (struct loop_idle **link = &loop->idle; *link; link = &(*link)->next)
		if (*link == idle) {
			*link = idle->next;
			break;
		}
	idle->pending = false;
	idle->next = NULL;
	idle->due_ms = 0;
}

/* One pending idle work, out of the list before it runs (it may request
 * itself again, or cancel another); the rest waits for the next look. */
static void run_idle(struct loop *loop)
{
	struct loop_idle *idle = loop->idle;
	loop->idle = idle->next;
	idle->pending = false;
	idle->next = NULL;
	idle->due_ms = 0;
	idle->callback(idle);
}

/* After a busy turn: the pending work whose due time has come, one (the
 * list is short: a few kinds of work). */
static void run_overdue(struct loop *loop)
{
	uint64_t now = 0;
	for (struct loop_idle **link = &loop->idle; *link; link = &(*link)->next) {
		struct loop_idle *idle = *link;
		if (!idle->due_ms)
			continue;
		if (!now)
			now = loop_now_ms();
		if (idle->due_ms > now)
			continue;
		*link = idle->next;
		idle->pending = false;
		idle->next = NULL;
		idle->due_ms = 0;
		idle->callback(idle);
		return;
	}
}

uint64_t loop_longest_turn_us(const struct loop *loop)
{
	return loop->longest_turn_us;
}

int loop_run_once(struct loop *loop)
{
	struct epoll_event events[LOOP_MAX_EVENTS];
	if (loop->turn_started_us) {
		uint64_t turn = monotonic_us() - loop->turn_started_us;
		if (turn > loop->longest_turn_us)
			loop->longest_turn_us = turn;
	}
	/* With idle work pending, only look: that work runs when nothing is
	 * ready. */
	int count = epoll_wait(loop->epoll_fd, events, LOOP_MAX_EVENTS, loop->idle ? 0 : -1);
	loop->turn_started_us = monotonic_us();
	if (count == 0) {
		run_idle(loop);
		return 0;
	}
	if (count < 0)
		return errno == EINTR ? 0 : -errno;
	unsigned first = loop->rotation++ % (unsigned)count;
	for (int n = 0; n < count; n++) {
		int i = (int)((first + (unsigned)n) % (unsigned)count);
		struct loop_watch *watch = events[i].data.ptr;
		/* A callback earlier in this batch may have removed this watch
		 * (a task's pidfd closed when another event reaped it). */
		if (!watch->registered)
			continue;
		watch->callback(watch, events[i].events);
		if (n + 1 < count && monotonic_us() - loop->turn_started_us > LOOP_TURN_BUDGET_US)
			break;
	}
	if (loop->idle)
		run_overdue(loop);
	return 0;
}
