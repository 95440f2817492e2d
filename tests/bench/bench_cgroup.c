/* bench_cgroup: what a cgroup per process costs at spawn, and which way of
 * putting a new process in its cgroup is cheaper, measured side by side in
 * one run.
 *
 *   1. N processes (/bin/true), each in a new cgroup of its own, started all
 *      at once and then reaped, four ways: plain fork/exec with no cgroup
 *      (the baseline); clone3(CLONE_INTO_CGROUP), which starts the child
 *      in its cgroup; fork, then the parent moves the child by writing its
 *      pid to the cgroup's cgroup.procs while the child waits on a pipe,
 *      then exec (the child runs nothing outside its cgroup, as with
 *      clone3); fork, and the child moves itself (writes 0 to cgroup.procs,
 *      as systemd's children do) before it execs. Plus the mkdir and rmdir
 *      of N cgroups alone.
 *   2. corral starting N tasks, each in its own cgroup: from the fork of
 *      corral to its N-th "started" event (exec confirmed), from its event
 *      log; with no limit, and with a limit per task (pids).
 *
 * usage: bench_cgroup [--corral PATH] [--quick] [--tasks N]
 *
 * Needs root and a writable cgroup v2 hierarchy: /sys/fs/cgroup on a v2
 * host, /sys/fs/cgroup/unified on a hybrid one. Everything is made in a
 * scratch cgroup there, bench-cgroup-<pid>, removed at the end (and on
 * error or SIGINT/SIGTERM), as is the temporary directory under /tmp.
 * No cgroup is ever reused: after a cgroup.kill (the cleanup's), kernel 6.18
 * kills every later CLONE_INTO_CGROUP into that cgroup at once.
 *
 * Prints figures, asserts nothing about timing. */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

struct settings {
	const char *corral;
	bool quick;
	unsigned tasks;  /* N */
	unsigned rounds; /* of each variant, interleaved */
};

/* ---- the scratch cgroup, and cleaning up --------------------------------- */

static const char *hierarchy;  /* the v2 mount point */
static char scratch_path[256]; /* empty: none */
static int scratch_fd = -1;
static volatile pid_t running_corral; /* 0: none */

/* Kills what runs in the cgroup `name` below `parent_fd` and removes it,
 * children first. Only syscalls and buffers on the stack: a signal handler
 * may call it. */
static void remove_cgroup_at(int parent_fd, const char *name, int depth)
{
	int fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	/* The files in it are visited too: remove_cgroup_at fails to open
	 * them as directories and leaves them be. */
	if (depth < 16)
		scan_dir(fd, "", 1, remove_cgroup_at, depth + 1);
	for (int attempt = 0; attempt < 500; attempt++) {
		if (unlinkat(parent_fd, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
			break;
		if (errno != EBUSY)
			break;
		/* Processes left (the bench died mid-run): kill them all. */
		int kill_fd = openat(fd, "cgroup.kill", O_WRONLY | O_CLOEXEC);
		if (kill_fd >= 0) {
			(void)!write(kill_fd, "1", 1);
			close(kill_fd);
		}
		sleep_ms(10);
	}
	close(fd);
}

static void cleanup(void)
{
	pid_t pid = running_corral;
	if (pid > 0) {
		stop_process(pid, 5000);
		running_corral = 0;
	}
	if (scratch_path[0]) {
		close(scratch_fd);
		scratch_fd = -1;
		remove_cgroup_at(AT_FDCWD, scratch_path, 0);
		scratch_path[0] = '\0';
	}
	remove_temp_dir();
}

/* The cgroup v2 mount point: /sys/fs/cgroup, or /sys/fs/cgroup/unified. */
static const char *find_v2_hierarchy(void)
{
	static const char *const candidates[] = {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"};
	char *mounts = read_file("/proc/self/mounts", NULL);
	const char *found = NULL;
	for (size_t i = 0; mounts && !found && i < 2; i++) {
		char needle[64];
		snprintf(needle, sizeof(needle), " %s cgroup2 ", candidates[i]);
		if (strstr(mounts, needle))
			found = candidates[i];
	}
	free(mounts);
	return found;
}

/* Enables for the children of `fd` every controller it has, one at a
 * time (corral does the same in its tree). None on a hybrid host, whose
 * v2 hierarchy has no controllers. */
static void enable_controllers(int fd)
{
	char *available = NULL;
	int controllers_fd = openat(fd, "cgroup.controllers", O_RDONLY | O_CLOEXEC);
	if (controllers_fd >= 0) {
		char text[256];
		ssize_t length = read(controllers_fd, text, sizeof(text) - 1);
		close(controllers_fd);
		if (length > 0) {
			text[length] = '\0';
			available = strdup(text);
		}
	}
	int control_fd = openat(fd, "cgroup.subtree_control", O_WRONLY | O_CLOEXEC);
	char *save = NULL;
	for (char *word = available ? strtok_r(available, " \n", &save) : NULL;
	     word && control_fd >= 0; word = strtok_r(NULL, " \n", &save)) {
		char change[64];
		int length = snprintf(change, sizeof(change), "+%s", word);
		(void)!write(control_fd, change, (size_t)length);
	}
	if (control_fd >= 0)
		close(control_fd);
	free(available);
}

static void read_controllers(int fd, char *text, size_t size)
{
	text[0] = '\0';
	int control_fd = openat(fd, "cgroup.subtree_control", O_RDONLY | O_CLOEXEC);
	if (control_fd < 0)
		return;
	ssize_t length = read(control_fd, text, size - 1);
	close(control_fd);
	text[length > 0 ? length : 0] = '\0';
	text[strcspn(text, "\n")] = '\0';
}

/* A new cgroup `name` below `parent_fd`; its directory fd. */
static int make_cgroup(int parent_fd, const char *name)
{
	if (mkdirat(parent_fd, name, 0755) < 0)
		die("mkdir %s/...%s: %s", scratch_path, name, strerror(errno));
	int fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		die("open %s/...%s: %s", scratch_path, name, strerror(errno));
	return fd;
}

static void make_scratch_cgroup(void)
{
	hierarchy = find_v2_hierarchy();
	if (!hierarchy)
		die("no cgroup v2 hierarchy at /sys/fs/cgroup or /sys/fs/cgroup/unified");
	/* Not named corral-*: a corral sharing this cgroup would take it for
	 * the stale root of a dead corral. */
	snprintf(scratch_path, sizeof(scratch_path), "%s/bench-cgroup-%d", hierarchy,
		 (int)getpid());
	if (mkdir(scratch_path, 0755) < 0) {
		int error = errno;
		scratch_path[0] = '\0';
		die("mkdir %s/bench-cgroup-%d: %s (run as root)", hierarchy, (int)getpid(),
		    strerror(error));
	}
	scratch_fd = open(scratch_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (scratch_fd < 0)
		die("open %s: %s", scratch_path, strerror(errno));
	enable_controllers(scratch_fd);
}

/* ---- spawning N processes --------------------------------------------------- */

static char *const true_argv[] = {"/bin/true", NULL};

static void exec_true(void)
{
	execv(true_argv[0], true_argv);
	_exit(127);
}

enum variant {
	PLAIN,        /* fork/exec, no cgroup */
	CLONE_INTO,   /* clone3(CLONE_INTO_CGROUP) */
	PARENT_MOVES, /* fork; the parent writes the pid to cgroup.procs; exec */
	CHILD_MOVES,  /* fork; the child writes 0 to cgroup.procs; exec */
	CGROUPS_ONLY, /* mkdir and rmdir, no process */
	/* The same one process at a time (spawn, reap, next), as restarts
	 * come: a move through cgroup.procs then pays the kernel's
	 * synchronisation for each process, not once for a burst. */
	PLAIN_EACH,
	CLONE_INTO_EACH,
	PARENT_MOVES_EACH,
	VARIANT_COUNT,
};

static const char *const variant_labels[VARIANT_COUNT] = {
    [PLAIN] = "fork/exec, no cgroup (baseline)",
    [CLONE_INTO] = "clone3 CLONE_INTO_CGROUP, exec",
    [PARENT_MOVES] = "fork, parent writes pid to cgroup.procs, exec",
    [CHILD_MOVES] = "fork, child writes 0 to cgroup.procs, exec",
    [CGROUPS_ONLY] = "mkdir + rmdir of the cgroups alone",
    [PLAIN_EACH] = "one at a time: fork/exec, no cgroup (baseline)",
    [CLONE_INTO_EACH] = "one at a time: clone3 CLONE_INTO_CGROUP",
    [PARENT_MOVES_EACH] = "one at a time: fork, parent writes pid",
};

/* The all-at-once variant a one-at-a-time one runs, and its baseline. */
static enum variant way_of(enum variant variant)
{
	return variant == PLAIN_EACH          ? PLAIN
	       : variant == CLONE_INTO_EACH   ? CLONE_INTO
	       : variant == PARENT_MOVES_EACH ? PARENT_MOVES
					      : variant;
}

static bool one_at_a_time(enum variant variant)
{
	return variant >= PLAIN_EACH;
}

static enum variant baseline_of(enum variant variant)
{
	return one_at_a_time(variant) ? PLAIN_EACH : PLAIN;
}

/* fork, straight into the cgroup `cgroup_fd`: 0 in the child. `what`
 * names the call when it fails. */
static pid_t clone_into_cgroup(int cgroup_fd, const char *what)
{
	struct clone_args args = {
	    .flags = CLONE_INTO_CGROUP,
	    .exit_signal = SIGCHLD,
	    .cgroup = (uint64_t)cgroup_fd,
	};
	long pid = syscall(SYS_clone3, &args, sizeof(args));
	if (pid < 0)
		die("%s: %s", what, strerror(errno));
	return (pid_t)pid;
}

static pid_t spawn_into_cgroup(int cgroup_fd)
{
	pid_t pid = clone_into_cgroup(cgroup_fd, "clone3(CLONE_INTO_CGROUP)");
	if (pid == 0)
		exec_true();
	return pid;
}

static void write_pid(int fd, pid_t pid, const char *what)
{
	char text[16];
	int length = snprintf(text, sizeof(text), "%d", (int)pid);
	if (write(fd, text, (size_t)length) != length)
		die("write %s to cgroup.procs: %s", what, strerror(errno));
}

static pid_t spawn_then_parent_moves(int cgroup_fd)
{
	int procs_fd = openat(cgroup_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
	int go[2];
	if (procs_fd < 0 || pipe2(go, O_CLOEXEC) < 0)
		die("cgroup.procs or pipe: %s", strerror(errno));
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		/* Runs nothing of its own until it is in its cgroup: EOF once
		 * the parent has moved it. */
		char byte;
		close(go[1]);
		while (read(go[0], &byte, 1) < 0 && errno == EINTR)
			;
		exec_true();
	}
	close(go[0]);
	write_pid(procs_fd, pid, "the child's pid");
	close(procs_fd);
	close(go[1]);
	return pid;
}

static pid_t spawn_then_child_moves(int cgroup_fd)
{
	int procs_fd = openat(cgroup_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
	if (procs_fd < 0)
		die("open cgroup.procs: %s", strerror(errno));
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		if (write(procs_fd, "0", 1) != 1)
			_exit(126);
		exec_true();
	}
	close(procs_fd);
	return pid;
}

/* One round of `variant`: N processes, each in a new cgroup below a fresh
 * `round_name`, all started, then all reaped. Returns the wall time from
 * the first mkdir to the last reap, in ns; the cgroups' removal comes
 * after (only the CGROUPS_ONLY variant counts it). */
static void reap_true(enum variant variant, pid_t pid)
{
	int code = exit_code_of(reap_status(pid));
	if (code != 0)
		die("%s: a child exited with code %d", variant_labels[variant], code);
}

static int64_t run_round(enum variant variant, unsigned count, const char *round_name, pid_t *pids)
{
	enum variant way = way_of(variant);
	int round_fd = make_cgroup(scratch_fd, round_name);
	enable_controllers(round_fd); /* for each process's cgroup, as in corral's tree */
	int64_t start = now_ns();
	for (unsigned i = 0; i < count; i++) {
		char name[16];
		snprintf(name, sizeof(name), "p%u", i);
		if (way == PLAIN) {
			pids[i] = fork();
			if (pids[i] < 0)
				die("fork: %s", strerror(errno));
			if (pids[i] == 0)
				exec_true();
		} else {
			int fd = make_cgroup(round_fd, name);
			pids[i] = way == CLONE_INTO     ? spawn_into_cgroup(fd)
				  : way == PARENT_MOVES ? spawn_then_parent_moves(fd)
				  : way == CHILD_MOVES  ? spawn_then_child_moves(fd)
							: 0;
			close(fd);
		}
		if (one_at_a_time(variant)) {
			reap_true(variant, pids[i]);
			pids[i] = 0;
		}
	}
	for (unsigned i = 0; i < count; i++)
		if (pids[i] > 0)
			reap_true(variant, pids[i]);
	if (variant == CGROUPS_ONLY) {
		for (unsigned i = 0; i < count; i++) {
			char name[16];
			snprintf(name, sizeof(name), "p%u", i);
			if (unlinkat(round_fd, name, AT_REMOVEDIR) < 0)
				die("rmdir %s/%s/%s: %s", scratch_path, round_name, name,
				    strerror(errno));
		}
	}
	int64_t elapsed = now_ns() - start;
	close(round_fd);
	remove_cgroup_at(scratch_fd, round_name, 0);
	return elapsed;
}

static void bench_spawn(const struct settings *settings)
{
	unsigned count = settings->tasks;
	pid_t *pids = calloc(count, sizeof(*pids));
	struct series wall_ms[VARIANT_COUNT] = {0};
	if (!pids)
		die("out of memory");
	/* One warm-up round of each, not counted: page cache, dentries. */
	for (int variant = 0; variant < VARIANT_COUNT; variant++) {
		char name[32];
		snprintf(name, sizeof(name), "warm-%d", variant);
		run_round(variant, count, name, pids);
	}
	for (unsigned round = 0; round < settings->rounds; round++) {
		for (int variant = 0; variant < VARIANT_COUNT; variant++) {
			char name[32];
			snprintf(name, sizeof(name), "v%d-r%u", variant, round);
			series_add(&wall_ms[variant],
				   (double)run_round(variant, count, name, pids) / 1e6);
		}
	}
	free(pids);

	printf("1. N=%u processes of /bin/true, each in a new cgroup of its own, started all at\n"
	       "   once, then reaped; or one at a time (%u rounds of each, interleaved)\n",
	       count, settings->rounds);
	printf("  %-48s %9s %9s %9s %12s\n", "", "median", "min", "per proc", "vs baseline");
	printf("  %-48s %9s %9s %9s %12s\n", "", "ms", "ms", "us", "us/proc");
	for (int variant = 0; variant < VARIANT_COUNT; variant++)
		series_sort(&wall_ms[variant]);
	for (int variant = 0; variant < VARIANT_COUNT; variant++) {
		double median = series_median(&wall_ms[variant]);
		double baseline = series_median(&wall_ms[baseline_of(variant)]);
		printf("  %-48s %9.2f %9.2f %9.1f", variant_labels[variant], median,
		       series_min(&wall_ms[variant]), median * 1e3 / count);
		if (variant != (int)baseline_of(variant) && variant != CGROUPS_ONLY)
			printf(" %+12.1f", (median - baseline) * 1e3 / count);
		printf("\n");
	}
	for (int variant = 0; variant < VARIANT_COUNT; variant++)
		free(wall_ms[variant].values);
	printf("  wall: first mkdir (or fork) to the last reap. The cgroups are removed after\n"
	       "  the reap, uncounted, except in the mkdir + rmdir row.\n\n");
}

/* ---- corral starting N tasks, each in its own cgroup ------------------------ */

/* Starts `corral run --events EVENTS CONFIG` straight into a new cgroup
 * (cgroup_fd), where it is alone and so makes its tree: supervisor/ and
 * bench/sNNN. stdin, stdout to /dev/null; stderr to `log`. With
 * `hide_cgroups`, corral runs in a mount namespace without the v2
 * hierarchy, so its tasks get no cgroups (the comparison row). */
static pid_t spawn_corral(const struct settings *settings, int cgroup_fd, bool hide_cgroups,
			  const char *config, const char *events, const char *socket,
			  const char *log)
{
	pid_t pid = clone_into_cgroup(cgroup_fd, "clone3 for corral");
	if (pid == 0) {
		exit_with_parent(SIGTERM);
		if (hide_cgroups && (unshare(CLONE_NEWNS) < 0 ||
				     mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
				     umount2(hierarchy, MNT_DETACH) < 0))
			_exit(126);
		int null_fd = open("/dev/null", O_RDWR);
		int err_fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (null_fd < 0 || err_fd < 0)
			_exit(127);
		dup2(null_fd, STDIN_FILENO);
		dup2(null_fd, STDOUT_FILENO);
		dup2(err_fd, STDERR_FILENO);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		/* A socket of its own: another corral may hold the default. */
		char *argv[] = {(char *)settings->corral, "run",      "--events",
				(char *)events,           "--socket", (char *)socket,
				(char *)config,           NULL};
		execv(argv[0], argv);
		_exit(127);
	}
	running_corral = pid;
	return pid;
}

static void show_corral_log(const char *log)
{
	char *said = read_file(log, NULL);
	fprintf(stderr, "%s", text_tail(said, 3000));
	free(said);
}

/* One corral run: ns from its fork to the N-th "started" event. */
static int64_t corral_round(const struct settings *settings, bool hide_cgroups, const char *config,
			    const char *name)
{
	char *events = temp_path("%s-events.jsonl", name);
	char *log = temp_path("%s-stderr.log", name);
	char *socket = temp_path("%s.sock", name);
	int cgroup_fd = make_cgroup(scratch_fd, name);

	int64_t start = now_ns();
	pid_t pid = spawn_corral(settings, cgroup_fd, hide_cgroups, config, events, socket, log);
	int64_t all_started = -1;
	while (all_started < 0) {
		char *content = read_file(events, NULL);
		size_t started = content ? count_occurrences(content, "\"event\":\"started\"") : 0;
		size_t failed =
		    content ? count_occurrences(content, "\"event\":\"start_failed\"") : 0;
		free(content);
		if (started >= settings->tasks) {
			all_started = now_ns() - start;
			break;
		}
		if (failed || waitpid(pid, NULL, WNOHANG) == pid) {
			show_corral_log(log);
			die("corral: %zu of %u tasks started, %zu failed to start", started,
			    settings->tasks, failed);
		}
		if (now_ns() - start > 60LL * 1000000000LL)
			die("only %zu of %u tasks started within 60 s", started, settings->tasks);
		sleep_ms(2);
	}
	kill(pid, SIGTERM);
	int code = exit_code_of(reap_status(pid));
	running_corral = 0;
	if (code != 0) {
		show_corral_log(log);
		die("corral exited with code %d after SIGTERM", code);
	}
	/* corral removed its groups; its supervisor leaf and the cgroup that
	 * held it are left to us. */
	close(cgroup_fd);
	remove_cgroup_at(scratch_fd, name, 0);
	free(events);
	free(log);
	free(socket);
	return all_started;
}

static void bench_corral(const struct settings *settings)
{
	struct {
		const char *label;
		bool hide_cgroups;
		const char *resources;
		char *config;
		struct series ms;
	} rows[] = {
	    {"corral run, no cgroups (v2 hierarchy hidden)", true, NULL, NULL, {0}},
	    {"corral run, a cgroup per task, no limit", false, NULL, NULL, {0}},
	    {"corral run, a cgroup per task, pids: 1000 each", false, "{pids: 1000}", NULL, {0}},
	};
	size_t row_count = sizeof(rows) / sizeof(rows[0]);
	for (size_t i = 0; i < row_count; i++) {
		rows[i].config = temp_path("corral-%zu.yaml", i);
		write_sleep_config(rows[i].config, settings->tasks, rows[i].resources);
	}
	for (unsigned round = 0; round < settings->rounds; round++) {
		for (size_t i = 0; i < row_count; i++) {
			char name[32];
			snprintf(name, sizeof(name), "corral-%zu-r%u", i, round);
			series_add(&rows[i].ms, (double)corral_round(settings, rows[i].hide_cgroups,
								     rows[i].config, name) /
						    1e6);
		}
	}
	printf("2. corral starting N=%u tasks (sleep 1000), each in its own cgroup (%u runs of\n"
	       "   each, interleaved)\n",
	       settings->tasks, settings->rounds);
	printf("  %-48s %9s %9s %9s\n", "", "median", "min", "per task");
	printf("  %-48s %9s %9s %9s\n", "", "ms", "ms", "us");
	for (size_t i = 0; i < row_count; i++) {
		series_sort(&rows[i].ms);
		double median = series_median(&rows[i].ms);
		printf("  %-48s %9.2f %9.2f %9.1f\n", rows[i].label, median,
		       series_min(&rows[i].ms), median * 1e3 / settings->tasks);
		free(rows[i].ms.values);
		free(rows[i].config);
	}
	printf("  wall: fork of corral to its N-th \"started\" event (exec confirmed), from its\n"
	       "  event log. corral starts alone in a new cgroup, which it takes as its root.\n");
}

/* ---- main ----------------------------------------------------------------------- */

static void usage(FILE *out)
{
	fprintf(out, "usage: bench_cgroup [--corral PATH] [--quick] [--tasks N]\n\n"
		     "  --corral PATH  the corral binary (default build-dev/corral)\n"
		     "  --quick        small sizes, a smoke test of the bench itself\n"
		     "  --tasks N      processes and tasks per run (default 200)\n"
		     "Run as root: it makes a scratch cgroup in the cgroup v2 hierarchy.\n");
}

int main(int argc, char **argv)
{
	bench_init("bench_cgroup", cleanup);
	struct settings settings = {.corral = "build-dev/corral", .tasks = 200, .rounds = 7};
	struct bench_options options = {.corral = settings.corral};
	int exit_code = parse_options(argc, argv, true, usage, &options);
	if (exit_code >= 0)
		return exit_code;
	settings.corral = options.corral;
	settings.quick = options.quick;
	if (settings.quick) {
		settings.tasks = 20;
		settings.rounds = 2;
	}
	if (options.tasks)
		settings.tasks = options.tasks;

	make_temp_dir("/tmp/corral-bench.XXXXXX");
	catch_fatal_signals();
	make_scratch_cgroup();

	char controllers[256];
	read_controllers(scratch_fd, controllers, sizeof(controllers));
	print_machine_line(settings.quick, settings.corral, NULL);
	printf("scratch cgroup %s, controllers: %s\n\n", scratch_path,
	       controllers[0] ? controllers : "none");
	fflush(stdout);
	bench_spawn(&settings);
	fflush(stdout);
	bench_corral(&settings);
	cleanup();
	return 0;
}
