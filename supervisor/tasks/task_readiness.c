#include "supervisor/tasks/task_readiness.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/log.h"
#include "base/units.h"
#include "base/xmalloc.h"
#include "supervisor/tasks/group.h"
#include "supervisor/tasks/log_readiness.h"
#include "supervisor/tasks/task.h"

/* ---- notify: systemd ---- */

/* The sender is the task's main process, or runs in its session (every
 * process it starts, unless one makes a session of its own). A sender that
 * is already gone (`sd_notify` from a helper that exits at once, before
 * corral reads the message) cannot be looked up: it is taken when it ran
 * as the task's user, which the kernel vouches for. */
static bool sent_by_task(const struct task *task, const struct ucred *sender)
{
	if (task->pid <= 0 || sender->pid <= 0)
		return false;
	if (sender->pid == task->pid)
		return true;
	pid_t session = getsid(sender->pid);
	if (session >= 0)
		return session == task->pid;
	uid_t task_uid = task->plan.change_ids ? task->plan.uid : getuid();
	return errno == ESRCH && sender->uid == task_uid;
}

/* readiness.watchdog: the next WATCHDOG=1 is due by now + watchdog. */
static void feed_watchdog(struct task *task)
{
	uint64_t watchdog_ms = readiness_of(task->config)->watchdog_ms;
	if (watchdog_ms && task->readiness.notify && task->runner.state == TASK_RUNNING &&
	    runner_is_ready(&task->runner))
		loop_timer_arm(task->services->loop, &task->readiness.notify->watchdog,
			       loop_now_ms() + watchdog_ms);
}

/* A missed WATCHDOG=1, or WATCHDOG=trigger: the task is hung, as systemd
 * takes it; it is restarted as an unhealthy one is. */
static void watchdog_failed(struct task *task, const char *why)
{
	if (task->runner.state != TASK_RUNNING || task->runner.stop_intent != RUNNER_STOP_NONE)
		return;
	if (task->readiness.notify)
		loop_timer_cancel(task->services->loop, &task->readiness.notify->watchdog);
	char message[TASK_EVENT_MESSAGE_MAX];
	snprintf(message, sizeof(message), "watchdog: %s: restarting", why);
	task_note_event(task, TASK_EVENT_UNHEALTHY, message);
	group_restart_task(task->group, task, loop_now_ms());
}

static void on_watchdog(struct loop_timer *timer)
{
	struct task *task = timer->data;
	char error[96], watchdog[32];
	format_duration_ms(readiness_of(task->config)->watchdog_ms, watchdog, sizeof(watchdog));
	snprintf(error, sizeof(error), "no WATCHDOG=1 within %s", watchdog);
	watchdog_failed(task, error);
}

/* EXTEND_TIMEOUT_USEC=N: N microseconds more to become ready. */
static void extend_timeout(struct task *task, const char *value)
{
	char *end;
	unsigned long long usec = strtoull(value, &end, 10);
	if (end != value && !*end)
		runner_extend_readiness(&task->runner, loop_now_ms() + usec / 1000);
}

/* STATUS= and what stands for it: kept for `corral status`. */
static void set_status_text(struct task_readiness *readiness, const char *text)
{
	if (!readiness->status_text)
		readiness->status_text = xmalloc(TASK_STATUS_TEXT_MAX);
	snprintf(readiness->status_text, TASK_STATUS_TEXT_MAX, "%s", text);
}

/* RELOADING=1: systemd's notify-reload. With readiness.continuous the
 * task is not ready until its next READY=1. */
static void reloading(struct task *task)
{
	struct task_readiness *readiness = &task->readiness;
	set_status_text(readiness, "reloading");
	if (readiness_of(task->config)->continuous)
		runner_not_ready(&task->runner, "RELOADING=1");
}

/* sd_notify's format: newline-separated VARIABLE=value assignments. */
static void take_notification(struct task *task, char *text)
{
	struct task_readiness *readiness = &task->readiness;
	for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (strcmp(line, "READY=1") == 0)
			runner_ready(&task->runner, "READY=1");
		else if (strcmp(line, "WATCHDOG=1") == 0)
			feed_watchdog(task);
		else if (strcmp(line, "WATCHDOG=trigger") == 0)
			watchdog_failed(task, "WATCHDOG=trigger");
		else if (strncmp(line, "EXTEND_TIMEOUT_USEC=", 20) == 0)
			extend_timeout(task, line + 20);
		else if (strcmp(line, "RELOADING=1") == 0)
			reloading(task);
		else if (strncmp(line, "STATUS=", 7) == 0)
			set_status_text(readiness, line + 7);
		else if (strcmp(line, "STOPPING=1") == 0)
			set_status_text(readiness, "stopping");
	}
}

static void on_notify_socket(struct loop_watch *watch, uint32_t events)
{
	struct task *task = watch->data;
	char text[4096];
	union {
		struct cmsghdr header;
		char space[CMSG_SPACE(sizeof(struct ucred))];
	} control;
	for (;;) {
		struct iovec vector = {.iov_base = text, .iov_len = sizeof(text) - 1};
		struct msghdr message = {.msg_iov = &vector,
					 .msg_iovlen = 1,
					 .msg_control = &control,
					 .msg_controllen = sizeof(control)};
		ssize_t length = recvmsg(watch->fd, &message, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (length < 0)
			return; /* EAGAIN: all read */
		text[length] = '\0';
		const struct ucred *credentials = NULL;
		for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header;
		     header = CMSG_NXTHDR(&message, header))
			if (header->cmsg_level == SOL_SOCKET &&
			    header->cmsg_type == SCM_CREDENTIALS)
				credentials = (const struct ucred *)CMSG_DATA(header);
		if (credentials && sent_by_task(task, credentials))
			take_notification(task, text);
	}
}

/* corral's directory for path sockets: in /run when it may write there
 * (root), else /tmp; mode 0711, so that a task running as another user
 * reaches the socket it is told of and lists nothing. (Not in /run/corral,
 * the control socket's, which is 0700.) */
static const char *notify_dir(struct services *services, char *error, size_t error_size)
{
	if (services->notify_dir)
		return services->notify_dir;
	char *candidates[] = {xasprintf("/run/corral-notify-%d", (int)getpid()),
			      xasprintf("/tmp/corral-notify-%d", (int)getpid())};
	for (size_t i = 0; i < 2; i++) {
		if (!services->notify_dir && (mkdir(candidates[i], 0711) == 0 || errno == EEXIST))
			services->notify_dir = candidates[i];
		else if (!services->notify_dir && i == 1)
			snprintf(error, error_size, "readiness: notify socket directory %s: %s",
				 candidates[i], strerror(errno));
		if (services->notify_dir != candidates[i])
			free(candidates[i]);
	}
	return services->notify_dir;
}

/* A task with a network namespace of its own cannot reach an abstract
 * socket, which belongs to corral's: it gets a path instead. Anyone may
 * write to it; only the task's processes are listened to (sent_by_task). */
static int bind_notify_path(struct task *task, int fd, char *error, size_t error_size)
{
	const char *dir = notify_dir(task->services, error, error_size);
	if (!dir)
		return -errno; /* mkdir's, kept through free() */
	struct sockaddr_un address = {.sun_family = AF_UNIX};
	snprintf(address.sun_path, sizeof(address.sun_path), "%s/%u.sock", dir,
		 ++task->services->notify_sockets);
	unlink(address.sun_path);
	if (bind(fd, (struct sockaddr *)&address, sizeof(address)) < 0 ||
	    chmod(address.sun_path, 0666) < 0) {
		int failure = -errno;
		snprintf(error, error_size, "readiness: notify socket %s: %s", address.sun_path,
			 strerror(-failure));
		return failure;
	}
	task->readiness.notify->env = xasprintf("NOTIFY_SOCKET=%s", address.sun_path);
	task->readiness.notify->path = xstrdup(address.sun_path);
	return 0;
}

static int open_notify_socket(struct task *task, char *error, size_t error_size)
{
	struct task_notify *notify = task->readiness.notify;
	_cleanup_close_ int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	int on = 1;
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)) < 0) {
		int failure = -errno;
		snprintf(error, error_size, "readiness: notify socket: %s", strerror(-failure));
		return failure;
	}
	if (isolation_has_own_network(&task->config->isolation)) {
		int failure = bind_notify_path(task, fd, error, error_size);
		if (failure < 0)
			return failure;
		notify->socket.fd = TAKE_FD(fd);
		loop_watch_add(task->services->loop, &notify->socket, EPOLLIN);
		return 0;
	}
	/* Abstract, and named by the kernel (autobind): nothing to clean up,
	 * no directory to agree on, and no clash with another corral in the
	 * same network namespace (the containers of a pod share one). */
	struct sockaddr_un address = {.sun_family = AF_UNIX};
	socklen_t size = sizeof(address);
	if (bind(fd, (struct sockaddr *)&address, sizeof(address.sun_family)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&address, &size) < 0) {
		int failure = -errno;
		snprintf(error, error_size, "readiness: notify socket: %s", strerror(-failure));
		return failure;
	}
	/* The name: a few hex digits after the leading NUL. */
	int name_length = (int)(size - offsetof(struct sockaddr_un, sun_path)) - 1;
	notify->env = xasprintf("NOTIFY_SOCKET=@%.*s", name_length, address.sun_path + 1);
	notify->socket.fd = TAKE_FD(fd);
	loop_watch_add(task->services->loop, &notify->socket, EPOLLIN);
	return 0;
}

/* ---- notify: fd ---- */

static void close_notify_pipe(struct task *task)
{
	struct task_readiness *readiness = &task->readiness;
	if (readiness->notify_pipe.fd >= 0) {
		loop_watch_remove(task->services->loop, &readiness->notify_pipe);
		close(readiness->notify_pipe.fd);
		readiness->notify_pipe.fd = -1;
	}
	if (readiness->notify_pipe_write >= 0) {
		close(readiness->notify_pipe_write);
		readiness->notify_pipe_write = -1;
	}
}

static void on_notify_pipe(struct loop_watch *watch, uint32_t events)
{
	struct task *task = watch->data;
	char text[256];
	ssize_t length = read(watch->fd, text, sizeof(text));
	if (length > 0 && memchr(text, '\n', (size_t)length)) {
		char how[32];
		snprintf(how, sizeof(how), "newline on fd %d", readiness_of(task->config)->fd);
		runner_ready(&task->runner, how);
	}
	/* Said, or closed without saying: nothing more to hear this run. */
	if (length == 0 || (length > 0 && runner_is_ready(&task->runner)))
		close_notify_pipe(task);
}

int task_readiness_prepare_spawn(struct task *task, struct spawn_request *request)
{
	request->notify_target = -1;
	if (readiness_of(task->config)->kind != READINESS_NOTIFY_FD)
		return 0;
	close_notify_pipe(task);
	int ends[2];
	if (pipe2(ends, O_CLOEXEC | O_NONBLOCK) < 0)
		return -errno;
	/* The task may block on a full pipe otherwise; its end blocks. */
	fcntl(ends[1], F_SETFL, 0);
	task->readiness.notify_pipe.fd = ends[0];
	task->readiness.notify_pipe_write = ends[1];
	loop_watch_add(task->services->loop, &task->readiness.notify_pipe, EPOLLIN);
	request->notify_target = readiness_of(task->config)->fd;
	request->notify_fd = ends[1];
	return 0;
}

void task_readiness_spawned(struct task *task)
{
	/* Only the task holds the write end now: EOF means it closed it. */
	if (task->readiness.notify_pipe_write >= 0) {
		close(task->readiness.notify_pipe_write);
		task->readiness.notify_pipe_write = -1;
	}
}

/* ---- probes ---- */

/* "failed: exited with code 1", then as it goes on: corral's log and an
 * event, quiet but never silent (probe_record.h says when). `what` is
 * "readiness probe" or "health probe"; `count` says where the streak
 * stands ("3 failures in a row", "3 of 5 failures that restart the
 * task"). */
static void say_probe_news(struct task *task, const char *what, enum probe_news news,
			   const struct probe_record *record, const char *count)
{
	/* Two reasons may each be long: the history keeps what fits. */
	char message[2 * PROBE_RESULT_MAX + 160];
	switch (news) {
	case PROBE_NEWS_NONE:
		return;
	case PROBE_NEWS_FIRST_FAILURE:
		snprintf(message, sizeof(message), "%s failed: %s (%s)", what, record->last_result,
			 count);
		break;
	case PROBE_NEWS_NEW_REASON:
		snprintf(message, sizeof(message), "%s failed: %s (was: %s; %s)", what,
			 record->last_result, record->previous_reason, count);
		break;
	case PROBE_NEWS_STILL_FAILING:
		snprintf(message, sizeof(message), "%s still failing: %s (%s)", what,
			 record->last_result, count);
		break;
	case PROBE_NEWS_RECOVERED:
		snprintf(message, sizeof(message), "%s passed again", what);
		task_note_event(task, TASK_EVENT_PROBE_PASSED, message);
		return;
	}
	task_note_event(task, TASK_EVENT_PROBE_FAILED, message);
}

/* readiness.continuous, once the task was ready: `failures` in a row make
 * it not ready; the next pass makes it ready again (runner_ready). */
static void on_continuous_failure(struct task *task, enum probe_news news, const char *why)
{
	const struct probe_record *record = &task->readiness.probes->readiness_record;
	unsigned failures = record->failures_in_a_row, limit = readiness_of(task->config)->failures;
	if (failures < limit || !runner_is_ready_now(&task->runner)) {
		char count[96];
		snprintf(count, sizeof(count), "%u of %u failures in a row that make it not ready",
			 failures < limit ? failures : limit, limit);
		say_probe_news(task, "readiness probe", news, record, count);
		return;
	}
	/* The not_ready event says this failure. */
	char message[TASK_EVENT_MESSAGE_MAX];
	snprintf(message, sizeof(message), "readiness probe failed %u time%s in a row (last: %s)",
		 failures, failures == 1 ? "" : "s", why);
	runner_not_ready(&task->runner, message);
}

static void on_readiness_probe(void *context, bool passed, const char *why)
{
	struct task *task = context;
	struct probe_record *record = &task->readiness.probes->readiness_record;
	enum probe_news news = probe_record_add(record, passed, why, loop_now_ms());
	if (!passed)
		task_counts_of(task)->readiness_probe_failures++;
	if (!passed && runner_is_ready(&task->runner)) {
		on_continuous_failure(task, news, why);
		return;
	}
	if (!passed) {
		/* Tried again at the next interval, until the timeout. Within
		 * the start period, held back: every boot of a service that
		 * takes a moment to listen would say "Connection refused"; said
		 * if the start fails (task_readiness_start_timed_out). Past it,
		 * said, so that a probe that cannot even start (a typo in its
		 * path) or that waits on the wrong port does not look like a
		 * task that is slow. */
		if (probe_record_hold_failure(record, loop_now_ms()))
			return;
		/* Stopped meanwhile (its start failed, which said them): the
		 * failures of a run that is ending are no news. */
		if (task->runner.stop_intent != RUNNER_STOP_NONE)
			return;
		char count[96], interval[32];
		format_duration_ms(readiness_of(task->config)->probe.interval_ms, interval,
				   sizeof(interval));
		char held[PROBE_RESULT_MAX + 64], message[sizeof(held) + 96];
		if (probe_record_take_held(record, held, sizeof(held))) {
			snprintf(message, sizeof(message),
				 "readiness probe failed: %s (trying again every %s)", held,
				 interval);
			task_note_event(task, TASK_EVENT_PROBE_FAILED, message);
			return;
		}
		snprintf(count, sizeof(count), "%u failure%s in a row; trying again every %s",
			 record->failures_in_a_row, record->failures_in_a_row == 1 ? "" : "s",
			 interval);
		say_probe_news(task, "readiness probe", news, record, count);
		return;
	}
	/* The ready event says it: no "passed again" besides. A continuous
	 * probe goes on; a pass of a ready task says nothing. */
	if (!readiness_of(task->config)->continuous)
		probe_stop(&task->readiness.probes->readiness_probe);
	else if (runner_is_ready_now(&task->runner))
		say_probe_news(task, "readiness probe", news, record,
			       ""); /* after a few failures */
	runner_ready(&task->runner, "probe passed");
}

static void on_health_probe(void *context, bool passed, const char *why)
{
	struct task *task = context;
	struct task_readiness *readiness = &task->readiness;
	struct probe_record *record = &readiness->probes->health_record;
	enum probe_news news = probe_record_add(record, passed, why, loop_now_ms());
	if (!passed)
		task_counts_of(task)->health_probe_failures++;
	unsigned failures = record->failures_in_a_row, limit = health_of(task->config)->failures;
	if (passed) {
		say_probe_news(task, "health probe", news, record, "");
		readiness->unhealthy_restarts = 0;
		runner_healthy(&task->runner);
		return;
	}
	if (failures < limit) {
		char count[96];
		snprintf(count, sizeof(count), "%u of %u failures in a row that restart the task",
			 failures, limit);
		say_probe_news(task, "health probe", news, record, count);
		return;
	}
	/* The unhealthy event says this failure, with the restart. */
	char message[TASK_EVENT_MESSAGE_MAX];
	snprintf(message, sizeof(message),
		 "health check failed %u time%s in a row (last: %s): restarting", failures,
		 failures == 1 ? "" : "s", why);
	task_note_event(task, TASK_EVENT_UNHEALTHY, message);
	probe_stop(&readiness->probes->health_probe);
	readiness->unhealthy_restarts++;
	group_restart_task(task->group, task, loop_now_ms());
}

/* ---- a probe run inside the task (probe.h's probe_inside) ---- */

static int join_spawn(void *context, char *const *argv, struct spawn_result *result, char *error,
		      size_t error_size)
{
	struct probe_join *join = context;
	struct task_join_request request = {.argv = argv, .cgroup_fd = -1};
	return task_join_spawn(join->task, &request, &join->joined, result, error, error_size);
}

static bool join_read_failure(void *context, int error_fd, char *error, size_t error_size)
{
	struct probe_join *join = context;
	return task_join_read_failure(&join->joined, error_fd, error, error_size);
}

static void join_release(void *context)
{
	struct probe_join *join = context;
	task_join_release(&join->joined);
}

static struct probe_inside inside_of(struct task *task, struct probe_join *join)
{
	join->task = task;
	return (struct probe_inside){.spawn = join_spawn,
				     .read_failure = join_read_failure,
				     .release = join_release,
				     .context = join};
}

/* A connection probe enters the namespaces of the task's own process. */
static pid_t probe_target_pid(void *context)
{
	return task_command_pid(context);
}

void task_readiness_init_probes(struct task *task)
{
	const struct task_config *config = task->config;
	struct task_readiness *readiness = &task->readiness;
	bool has_probes = readiness_of(config)->kind == READINESS_PROBE ||
			  health_of(config)->probe.kind != PROBE_NONE;
	bool reads_log = readiness_of(config)->kind == READINESS_LOG;
	if ((has_probes || reads_log) && !readiness->probes)
		readiness->probes = xcalloc(1, sizeof(*readiness->probes));
	/* An exec probe's runs take the task's environment. */
	if (has_probes)
		task_plan_pin_environment(&task->plan);
	struct task_probes *probes = readiness->probes;
	if (probes) {
		/* Made again at each call: a reload may have changed the patterns. */
		log_readiness_free(probes->log);
		probes->log = NULL;
	}
	if (reads_log) {
		char error[160];
		probes->log = log_readiness_make(readiness_of(config), error, sizeof(error));
		if (!probes->log)
			log_message("%s: %s: it cannot become ready", config->full_name, error);
	}
	task_sinks_changed(task);
	if (readiness_of(config)->kind == READINESS_PROBE) {
		probe_init(&probes->readiness_probe, &readiness_of(config)->probe, config,
			   &task->plan, &task->services->probes, on_readiness_probe, task);
		probes->readiness_probe.target_pid = probe_target_pid;
		probes->readiness_probe.inside = inside_of(task, &probes->readiness_join);
	}
	if (health_of(config)->probe.kind != PROBE_NONE) {
		probe_init(&probes->health_probe, &health_of(config)->probe, config, &task->plan,
			   &task->services->probes, on_health_probe, task);
		probes->health_probe.target_pid = probe_target_pid;
		probes->health_probe.inside = inside_of(task, &probes->health_join);
	}
}

/* ---- a run ---- */

void task_readiness_run_started(struct task *task)
{
	struct task_probes *probes = task->readiness.probes;
	if (task->readiness.status_text)
		task->readiness.status_text[0] = '\0';
	if (probes && probes->log)
		log_readiness_forget(probes->log);
	if (probes) {
		probe_record_reset(&probes->readiness_record);
		probe_record_reset(&probes->health_record);
		probe_record_start_period(&probes->readiness_record, loop_now_ms(),
					  readiness_of(task->config)->start_period_ms);
	}
	if (readiness_of(task->config)->kind == READINESS_PROBE)
		probe_start(&probes->readiness_probe);
}

/* After an unhealthy restart, the new run's first check waits an interval
 * (so that restarts are at least `failures` x interval apart, as
 * documented), doubling with each further one in a row up to the restart
 * policy's max_delay, as restart delays do. The first run of all is
 * checked at once. */
static uint64_t health_hold_off_ms(const struct task *task)
{
	unsigned streak = task->readiness.unhealthy_restarts;
	uint64_t interval = health_of(task->config)->probe.interval_ms;
	uint64_t cap = task->config->restart.max_delay_ms > interval
			   ? task->config->restart.max_delay_ms
			   : interval;
	if (!streak)
		return 0;
	uint64_t hold = interval;
	for (unsigned i = 1; i < streak && hold < cap; i++)
		hold *= 2;
	return hold < cap ? hold : cap;
}

void task_readiness_start_timed_out(struct task *task)
{
	struct task_probes *probes = task->readiness.probes;
	char held[PROBE_RESULT_MAX + 64], message[sizeof(held) + 32];
	if (!probes || runner_is_ready(&task->runner) ||
	    !probe_record_take_held(&probes->readiness_record, held, sizeof(held)))
		return;
	snprintf(message, sizeof(message), "readiness probe failed: %s", held);
	task_note_event(task, TASK_EVENT_PROBE_FAILED, message);
}

void task_readiness_now_ready(struct task *task)
{
	feed_watchdog(task);
	if (health_of(task->config)->probe.kind != PROBE_NONE)
		probe_start_after(&task->readiness.probes->health_probe, health_hold_off_ms(task));
}

void task_readiness_run_ended(struct task *task)
{
	if (task->readiness.notify)
		loop_timer_cancel(task->services->loop, &task->readiness.notify->watchdog);
	struct task_probes *probes = task->readiness.probes;
	if (probes && probes->readiness_probe.made)
		probe_stop(&probes->readiness_probe);
	if (probes && probes->health_probe.made)
		probe_stop(&probes->health_probe);
	close_notify_pipe(task);
}

bool task_readiness_reap(struct task *task, pid_t pid)
{
	struct task_probes *probes = task->readiness.probes;
	return probes &&
	       ((probes->readiness_probe.made && probe_reap(&probes->readiness_probe, pid)) ||
		(probes->health_probe.made && probe_reap(&probes->health_probe, pid)));
}

/* ---- the task's life ---- */

int task_readiness_open(struct task *task, char *error, size_t error_size)
{
	struct task_readiness *readiness = &task->readiness;
	memset(readiness, 0, sizeof(*readiness));
	readiness->notify_pipe =
	    (struct loop_watch){.fd = -1, .callback = on_notify_pipe, .data = task};
	readiness->notify_pipe_write = -1;
	const struct readiness_config *config = readiness_of(task->config);
	if (config->kind != READINESS_NOTIFY_SYSTEMD && !config->watchdog_ms)
		return 0;
	struct task_notify *notify = xcalloc(1, sizeof(*notify));
	notify->socket = (struct loop_watch){.fd = -1, .callback = on_notify_socket, .data = task};
	loop_timer_init(&notify->watchdog, on_watchdog, task);
	readiness->notify = notify;
	if (config->watchdog_ms)
		notify->watchdog_env =
		    xasprintf("WATCHDOG_USEC=%llu", (unsigned long long)config->watchdog_ms * 1000);
	if (config->kind == READINESS_NOTIFY_SYSTEMD)
		return open_notify_socket(task, error, error_size);
	return 0;
}

void task_readiness_adopt_notify(struct task *task, int fd, const char *env)
{
	struct task_notify *notify = task->readiness.notify;
	if (notify->socket.fd >= 0) {
		loop_watch_remove(task->services->loop, &notify->socket);
		close(notify->socket.fd);
	}
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	notify->socket.fd = fd;
	loop_watch_add(task->services->loop, &notify->socket, EPOLLIN);
	free(notify->env);
	notify->env = xstrdup(env);
}

void task_readiness_close(struct task *task)
{
	struct task_readiness *readiness = &task->readiness;
	if (readiness->probes) {
		probe_free(&readiness->probes->readiness_probe);
		probe_free(&readiness->probes->health_probe);
		log_readiness_free(readiness->probes->log);
		free(readiness->probes);
		readiness->probes = NULL;
		task_sinks_changed(task); /* its pattern is gone */
	}
	free(readiness->status_text);
	readiness->status_text = NULL;
	close_notify_pipe(task);
	struct task_notify *notify = readiness->notify;
	if (!notify)
		return;
	if (notify->socket.fd >= 0) {
		loop_watch_remove(task->services->loop, &notify->socket);
		close(notify->socket.fd);
	}
	free(notify->env);
	loop_timer_cancel(task->services->loop, &notify->watchdog);
	free(notify->watchdog_env);
	if (notify->path) {
		unlink(notify->path);
		free(notify->path);
	}
	free(notify);
	readiness->notify = NULL;
}
