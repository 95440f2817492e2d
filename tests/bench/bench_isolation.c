/* bench_isolation: what it costs to spawn and reap an isolated /bin/true,
 * in corral and in the tools users would pick instead, side by side in one
 * run. Isolated means: pid, mount, uts, ipc and net namespaces, a cgroup of
 * its own, no capabilities, the default seccomp filter.
 *
 *   - corral: one task /bin/true with those namespaces and `capabilities:
 *     {drop: [all]}` (seccomp default), restarted N times (policy always,
 *     delay 0). Per run: each "started" event to the next in corral's event
 *     log (spawn, exec, exit, reap, restart), and the whole `corral run`
 *     divided by its runs, corral's fixed start-up (a run of 1) subtracted.
 *     The same task with a user namespace too (uid/gid maps 0 100000
 *     65536, written by corral in the sync window), and without isolation,
 *     for context.
 *   - posix_spawn of /bin/true, not isolated: the floor an isolated start
 *     adds to;
 *   - unshare --pid --mount --uts --ipc --net --fork /bin/true (util-linux);
 *   - bwrap --unshare-all --die-with-parent --ro-bind / / /bin/true;
 *   - runc run of a bundle: busybox-static as a read-only rootfs, the spec of
 *     `runc spec` with terminal false, args [/bin/true], no capabilities and
 *     a seccomp filter denying what corral's default profile denies.
 *   Issue 16's aims for corral's isolated row are printed against these:
 *   at most 1.6x the posix_spawn, 1/3 of bwrap and 1/20 of runc.
 *   Each of these is one fork/exec/wait from this program, timed from the
 *   fork to the reap of the last process it started (this program is a
 *   child subreaper: bwrap's sandbox outlives bwrap). A tool that is
 *   missing, or fails, is skipped with a note.
 *
 * usage: bench_isolation [--corral PATH] [--quick]
 *
 * Needs root. Prints figures, asserts nothing about timing. Everything it
 * makes is removed at the end, on error and on SIGINT/SIGTERM/SIGHUP: the
 * temporary directory under /tmp (runc's bundle and state included), runc's
 * containers (`runc delete --force`) and their cgroups, and a corral it
 * started (SIGTERM: corral removes its own cgroups). */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

extern char **environ;

struct settings {
	const char *corral;
	bool quick;
	unsigned runs;      /* N of the fast rows */
	unsigned rounds;    /* the rows take turns this many times */
	unsigned runc_runs; /* runc is slow: fewer */
};

static const char *const true_path = "/bin/true";

/* ---- cleanup: the child running now, runc's containers and cgroups -------- */

enum child_kind { CHILD_NONE, CHILD_CORRAL, CHILD_RUNC, CHILD_OTHER };

static volatile pid_t running_child; /* 0: none */
static volatile int running_kind;

/* runc's binary and its --root (empty: runc not used). */
static char runc_path[PATH_MAX];
static char runc_state[PATH_MAX];
/* Container ids are this prefix and a number. */
static char runc_id_prefix[64];

/* The bench's own cgroup in each hierarchy: runc makes a container's cgroups
 * below them, named after the container (an empty cgroupsPath). */
#define MAX_CGROUP_DIRS 16
static char cgroup_dirs[MAX_CGROUP_DIRS][PATH_MAX];
static unsigned cgroup_dir_count;

/* Runs `runc --root STATE delete --force ID`; async-signal-safe. */
static void runc_delete(const char *id)
{
	pid_t pid = fork();
	if (pid == 0) {
		int null_fd = open("/dev/null", O_RDWR);
		if (null_fd >= 0) {
			dup2(null_fd, STDOUT_FILENO);
			dup2(null_fd, STDERR_FILENO);
		}
		char *argv[] = {runc_path, "--root",   runc_state, "delete",
				"--force", (char *)id, NULL};
		execve(runc_path, argv, environ);
		_exit(127);
	}
	if (pid > 0)
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
}

/* scan_dir of the directory `path`; async-signal-safe. */
static unsigned for_each_named(const char *path, const char *prefix, unsigned passes,
			       void (*visit)(int dir_fd, const char *name, int depth))
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	unsigned visits = scan_dir(fd, prefix, passes, visit, 0);
	close(fd);
	return visits;
}

static void delete_container(int dir_fd, const char *name, int depth)
{
	(void)depth;
	runc_delete(name);
	/* Whatever runc could not delete goes with the temp dir; never visit
	 * it twice. */
	unlinkat(dir_fd, name, AT_REMOVEDIR);
}

static void remove_cgroup(int dir_fd, const char *name, int depth)
{
	(void)depth;
	/* A container's cgroup is a leaf; runc delete killed what was in it. */
	for (int attempt = 0; attempt < 50; attempt++) {
		if (unlinkat(dir_fd, name, AT_REMOVEDIR) == 0 || errno != EBUSY)
			return;
		sleep_ms(10);
	}
}

/* Deletes every container of ours left in runc's state, then every cgroup
 * left with a container's name. Returns how many of each there were (the
 * cgroups counted once per hierarchy); async-signal-safe. */
static void remove_runc_leftovers(unsigned *containers, unsigned *cgroups)
{
	*containers = *cgroups = 0;
	if (!runc_state[0])
		return;
	*containers = for_each_named(runc_state, runc_id_prefix, 3, delete_container);
	for (unsigned i = 0; i < cgroup_dir_count; i++)
		*cgroups += for_each_named(cgroup_dirs[i], runc_id_prefix, 1, remove_cgroup);
}

static void cleanup(void)
{
	pid_t pid = running_child;
	if (pid > 0) {
		if (running_kind == CHILD_OTHER) {
			kill(pid, SIGKILL);
			while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
				;
		} else {
			/* corral stops its task and removes its cgroups; runc
			 * forwards the signal to the container. */
			stop_process(pid, running_kind == CHILD_CORRAL ? 5000 : 2000);
		}
		running_child = 0;
	}
	unsigned containers, cgroups;
	remove_runc_leftovers(&containers, &cgroups);
	runc_state[0] = '\0';
	remove_temp_dir();
}

/* /proc/self/cgroup against /proc/self/mounts: the bench's cgroup directory
 * in each hierarchy, into cgroup_dirs. */
static void find_cgroup_dirs(void)
{
	char *own = read_file("/proc/self/cgroup", NULL);
	char *mounts = read_file("/proc/self/mounts", NULL);
	if (!own || !mounts)
		die("cannot read /proc/self/cgroup or /proc/self/mounts");
	char *save = NULL;
	for (char *line = strtok_r(own, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		/* "ID:CONTROLLERS:PATH"; CONTROLLERS empty for v2. */
		char *controllers = strchr(line, ':');
		char *path = controllers ? strchr(controllers + 1, ':') : NULL;
		if (!path)
			continue;
		*path++ = '\0';
		controllers++;
		char first[64];
		snprintf(first, sizeof(first), "%.*s", (int)strcspn(controllers, ","), controllers);

		/* The mount of that hierarchy: "SOURCE POINT TYPE OPTIONS 0 0". */
		char *copy = strdup(mounts), *mount_save = NULL;
		if (!copy)
			die("out of memory");
		for (char *mount = strtok_r(copy, "\n", &mount_save); mount;
		     mount = strtok_r(NULL, "\n", &mount_save)) {
			char point[PATH_MAX], type[32], options[512];
			if (sscanf(mount, "%*s %4095s %31s %511s", point, type, options) != 3)
				continue;
			bool match = false;
			if (!first[0]) {
				match = strcmp(type, "cgroup2") == 0;
			} else if (strcmp(type, "cgroup") == 0) {
				char *option_save = NULL;
				for (char *option = strtok_r(options, ",", &option_save); option;
				     option = strtok_r(NULL, ",", &option_save))
					if (strcmp(option, first) == 0)
						match = true;
			}
			if (!match || cgroup_dir_count == MAX_CGROUP_DIRS)
				continue;
			char *dir = cgroup_dirs[cgroup_dir_count];
			snprintf(dir, PATH_MAX, "%s%s", point, strcmp(path, "/") ? path : "");
			struct stat status;
			if (stat(dir, &status) == 0 && S_ISDIR(status.st_mode))
				cgroup_dir_count++;
			break;
		}
		free(copy);
	}
	free(own);
	free(mounts);
}

/* ---- running things ------------------------------------------------------- */

/* The file `name` in PATH, malloc'd, or NULL. */
static char *find_in_path(const char *name)
{
	const char *path = getenv("PATH");
	char *copy = strdup(path && *path ? path
					  : "/usr/local/sbin:/usr/local/bin:/usr/sbin:"
					    "/usr/bin:/sbin:/bin");
	if (!copy)
		die("out of memory");
	char *found = NULL, *save = NULL;
	for (char *dir = strtok_r(copy, ":", &save); dir && !found;
	     dir = strtok_r(NULL, ":", &save)) {
		char candidate[PATH_MAX];
		snprintf(candidate, sizeof(candidate), "%s/%s", dir, name);
		if (access(candidate, X_OK) == 0)
			found = strdup(candidate);
	}
	free(copy);
	return found;
}

/* Where the tools' stdout and stderr go: a file in the temp dir, shown when
 * a tool fails. */
static int tool_log_fd = -1;
static char *tool_log_path;

/* Forks and execs argv[0]: stdin from /dev/null, stdout and stderr to
 * `output_fd`, `death_signal` if the bench dies. */
static pid_t spawn(char *const argv[], int output_fd, int death_signal, enum child_kind kind)
{
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		exit_with_parent(death_signal);
		int null_fd = open("/dev/null", O_RDWR);
		if (null_fd < 0)
			_exit(127);
		dup2(null_fd, STDIN_FILENO);
		dup2(output_fd >= 0 ? output_fd : null_fd, STDOUT_FILENO);
		dup2(output_fd >= 0 ? output_fd : null_fd, STDERR_FILENO);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		execv(argv[0], argv);
		_exit(127);
	}
	running_kind = kind;
	running_child = pid;
	return pid;
}

/* Waits for the child; its exit code (128+N for signal N). */
static int wait_child(pid_t pid)
{
	int code = exit_code_of(reap_status(pid));
	running_child = 0;
	return code;
}

/* Reaps the bench's other children: processes that outlived the tool that
 * started them, reparented to the bench (a child subreaper). Returns how
 * many. */
static unsigned reap_orphans(void)
{
	unsigned reaped = 0;
	for (;;) {
		if (waitpid(-1, NULL, 0) > 0)
			reaped++;
		else if (errno != EINTR)
			return reaped;
	}
}

/* One timed run of a tool: ns from the fork to the reap of the last process
 * it started, or -1 when it did not exit with 0. `orphans` counts the
 * processes that outlived it. */
static int64_t time_tool(char *const argv[], enum child_kind kind, int *exit_code,
			 unsigned *orphans)
{
	int64_t start = now_ns();
	pid_t pid = spawn(argv, tool_log_fd, kind == CHILD_RUNC ? SIGTERM : SIGKILL, kind);
	*exit_code = wait_child(pid);
	*orphans += reap_orphans();
	int64_t elapsed = now_ns() - start;
	return *exit_code == 0 ? elapsed : -1;
}

/* posix_spawn of /bin/true to its reap, as a program that starts one
 * plainly does: what isolation adds to is this. */
static int64_t time_bare_spawn(int *exit_code)
{
	char *argv[] = {(char *)true_path, NULL};
	int64_t start = now_ns();
	pid_t pid;
	int error = posix_spawn(&pid, true_path, NULL, NULL, argv, environ);
	if (error)
		die("posix_spawn %s: %s", true_path, strerror(error));
	running_kind = CHILD_OTHER;
	running_child = pid;
	*exit_code = wait_child(pid);
	int64_t elapsed = now_ns() - start;
	return *exit_code == 0 ? elapsed : -1;
}

/* The end of what the last tool said, into `said`. */
static void keep_tool_log(char *said, size_t size)
{
	char *text = read_file(tool_log_path, NULL);
	snprintf(said, size, "%s", text_tail(text, size - 1));
	free(text);
}

/* The first line a command prints on stdout, or "?". */
static void first_line_of(char *const argv[], char *line, size_t size)
{
	snprintf(line, size, "?");
	char *path = temp_path("version.txt");
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		die("open %s: %s", path, strerror(errno));
	wait_child(spawn(argv, fd, SIGKILL, CHILD_OTHER));
	close(fd);
	char *text = read_file(path, NULL);
	if (text && text[0]) {
		text[strcspn(text, "\n")] = '\0';
		snprintf(line, size, "%s", text);
	}
	free(text);
	unlink(path);
	free(path);
}

/* ---- corral ---------------------------------------------------------------- */

/* The task's isolation, in YAML flow style: the bench's isolated task, the
 * same with the command as PID 1, and none. */
static const char *const isolated_yaml =
    "{namespaces: [pid, mount, uts, ipc, net], capabilities: {drop: [all]}}";
static const char *const no_init_yaml =
    "{namespaces: [pid, mount, uts, ipc, net], capabilities: {drop: [all]}, init: false}";
static const char *const userns_yaml =
    "{namespaces: [pid, mount, uts, ipc, net, user], capabilities: {drop: [all]}, "
    "user: {uid_map: \"0 100000 65536\", gid_map: \"0 100000 65536\"}}";

static void write_corral_config(const char *path, const char *isolation, unsigned runs)
{
	struct text text = {0};
	text_append(&text,
		    "groups:\n  bench:\n    tasks:\n      t:\n"
		    "        command: [\"%s\"]\n",
		    true_path);
	if (isolation)
		text_append(&text, "        isolation: %s\n", isolation);
	text_append(&text,
		    "        restart: {policy: always, delay: 0s, attempts: %u, interval: 1h}\n",
		    runs - 1);
	write_file(path, text.data, text.length, 0644);
	free(text.data);
}

/* The "started" times of an event log (s, CLOCK_REALTIME as corral writes
 * them): the gaps between one and the next into `gaps` (ms). Returns the
 * number of "started" events. */
static size_t started_gaps(const char *path, struct series *gaps)
{
	char *content = read_file(path, NULL);
	if (!content)
		die("corral wrote no event log at %s", path);
	size_t started = 0;
	double previous = -1;
	char *cursor = content;
	for (char *line; (line = next_line(&cursor));) {
		double time = event_time(line);
		if (time >= 0 && strstr(line, "\"event\":\"started\"")) {
			if (previous >= 0 && gaps)
				series_add(gaps, (time - previous) * 1e3);
			previous = time;
			started++;
		}
	}
	free(content);
	return started;
}

/* `corral run --events EVENTS CONFIG`, stderr to `log` (NULL: /dev/null),
 * to its end: ns from the fork to the reap. */
static int64_t run_corral(const struct settings *settings, const char *config, const char *events,
			  const char *log, int *exit_code)
{
	int log_fd = -1;
	if (log) {
		log_fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (log_fd < 0)
			die("open %s: %s", log, strerror(errno));
	}
	char *argv[] = {(char *)settings->corral, "run",          "--events",
			(char *)events,           (char *)config, NULL};
	int64_t start = now_ns();
	pid_t pid = spawn(argv, log_fd, SIGTERM, CHILD_CORRAL);
	*exit_code = wait_child(pid);
	int64_t elapsed = now_ns() - start;
	if (log_fd >= 0)
		close(log_fd);
	return elapsed;
}

/* One timed corral run of `runs` runs of the task: its wall time (ns), and
 * the started -> started gaps into `gaps`. Once the attempts are spent the
 * task fails for good and corral exits with 1: that is the expected end. */
static int64_t corral_round(const struct settings *settings, const char *config, const char *events,
			    unsigned runs, struct series *gaps)
{
	unlink(events);
	int exit_code;
	int64_t elapsed = run_corral(settings, config, events, NULL, &exit_code);
	size_t started = started_gaps(events, NULL);
	if (exit_code == 1 && started == runs) {
		started_gaps(events, gaps);
		return elapsed;
	}
	/* Again with its stderr kept, to show why. */
	char *log = temp_path("corral-stderr.log");
	unlink(events);
	run_corral(settings, config, events, log, &exit_code);
	char *text = read_file(log, NULL);
	fprintf(stderr,
		"bench_isolation: corral run %s: exit code %d, %zu \"started\" events of %u "
		"expected; its last words:\n%s\n",
		config, exit_code, started, runs, text_tail(text, 2000));
	free(text);
	free(log);
	die("corral failed");
}

/* ---- runc's bundle ---------------------------------------------------------- */

/* What corral's default seccomp profile denies with EPERM (by name; its rules
 * on clone's flags and on personality are left out). */
static const char *const denied_syscalls[] = {
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "create_module",
    "get_kernel_syms",
    "query_module",
    "reboot",
    "swapon",
    "swapoff",
    "syslog",
    "acct",
    "lookup_dcookie",
    "nfsservctl",
    "uselib",
    "ustat",
    "sysfs",
    "_sysctl",
    "mount",
    "umount",
    "umount2",
    "pivot_root",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "move_mount",
    "open_tree",
    "mount_setattr",
    "setns",
    "unshare",
    "open_by_handle_at",
    "name_to_handle_at",
    "quotactl",
    "quotactl_fd",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "userfaultfd",
    "perf_event_open",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "settimeofday",
    "stime",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "iopl",
    "ioperm",
    "vm86",
    "vm86old",
    "move_pages",
    "mbind",
    "set_mempolicy",
    "get_mempolicy",
};

/* `runc spec`'s config.json, changed: terminal false, args [/bin/true], no
 * capabilities, the seccomp filter above. Returns false (and says why in
 * `note`) when it cannot be made. */
static bool make_runc_bundle(const char *bundle, char *note, size_t note_size)
{
	char *busybox = find_in_path("busybox");
	if (!busybox) {
		snprintf(note, note_size, "no busybox in PATH (apt-get install busybox-static)");
		return false;
	}
	/* rootfs/bin/true -> busybox (static: nothing else is needed). */
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/rootfs", bundle);
	if (mkdir(bundle, 0755) < 0 || mkdir(path, 0755) < 0)
		die("mkdir %s: %s", path, strerror(errno));
	snprintf(path, sizeof(path), "%s/rootfs/bin", bundle);
	if (mkdir(path, 0755) < 0)
		die("mkdir %s: %s", path, strerror(errno));
	size_t length = 0;
	char *binary = read_file(busybox, &length);
	if (!binary)
		die("read %s: %s", busybox, strerror(errno));
	snprintf(path, sizeof(path), "%s/rootfs/bin/busybox", bundle);
	write_file(path, binary, length, 0755);
	free(binary);
	free(busybox);
	snprintf(path, sizeof(path), "%s/rootfs/bin/true", bundle);
	if (symlink("busybox", path) < 0)
		die("symlink %s: %s", path, strerror(errno));

	char *spec[] = {runc_path, "spec", "--bundle", (char *)bundle, NULL};
	int exit_code = wait_child(spawn(spec, tool_log_fd, SIGKILL, CHILD_OTHER));
	if (exit_code != 0) {
		snprintf(note, note_size, "runc spec exited with code %d", exit_code);
		return false;
	}
	snprintf(path, sizeof(path), "%s/config.json", bundle);
	json_error_t error;
	json_t *config = json_load_file(path, 0, &error);
	json_t *process = config ? json_object_get(config, "process") : NULL;
	if (!process) {
		snprintf(note, note_size, "runc spec: no process in config.json (%.100s)",
			 error.text);
		json_decref(config);
		return false;
	}
	json_object_set_new(process, "terminal", json_false());
	json_object_set_new(process, "args", json_pack("[s]", true_path));
	json_object_set_new(process, "noNewPrivileges", json_true());
	json_object_set_new(process, "capabilities",
			    json_pack("{s[] s[] s[] s[] s[]}", "bounding", "effective",
				      "inheritable", "permitted", "ambient"));
	json_t *names = json_array();
	for (size_t i = 0; i < sizeof(denied_syscalls) / sizeof(denied_syscalls[0]); i++)
		json_array_append_new(names, json_string(denied_syscalls[i]));
	json_t *linux_section = json_object_get(config, "linux");
	if (!linux_section) {
		snprintf(note, note_size, "runc spec: no linux section in config.json");
		json_decref(names);
		json_decref(config);
		return false;
	}
	json_object_set_new(linux_section, "seccomp",
			    json_pack("{s:s s:[s s s] s:[{s:o s:s s:i}]}", "defaultAction",
				      "SCMP_ACT_ALLOW", "architectures", "SCMP_ARCH_X86_64",
				      "SCMP_ARCH_X86", "SCMP_ARCH_X32", "syscalls", "names", names,
				      "action", "SCMP_ACT_ERRNO", "errnoRet", 1));
	if (json_dump_file(config, path, JSON_INDENT(1)) < 0)
		die("write %s", path);
	json_decref(config);
	return true;
}

/* ---- the rows ---------------------------------------------------------------- */

enum row_id {
	ROW_CORRAL_ISOLATED,
	ROW_CORRAL_NO_INIT,
	ROW_CORRAL_USERNS,
	ROW_CORRAL_PLAIN,
	ROW_BARE,
	ROW_UNSHARE,
	ROW_BWRAP,
	ROW_RUNC,
	ROW_COUNT,
};

struct row {
	const char *label;
	bool skipped;
	char note[256];
	char said[600];   /* what a failed tool said */
	char *tool;       /* the binary, for the tool rows */
	struct series ms; /* a sample per run: events (corral) or fork to reap */
	double total_ms;  /* tool rows: the sum, for the mean */
	unsigned orphans; /* tool rows: processes that outlived the tool */
	/* corral rows: whole runs of `runs` runs, and of 1 (start-up) */
	struct series whole_ms, one_ms;
	unsigned runs_in_whole; /* the sum of the whole runs' runs */
	char *config, *config_one, *config_extra, *events;
	const char *isolation; /* corral rows: NULL for none */
};

static struct row rows[ROW_COUNT] = {
    [ROW_CORRAL_ISOLATED] = {.label = "corral, isolated"},
    [ROW_CORRAL_NO_INIT] = {.label = "corral, isolated, init: false (context)"},
    [ROW_CORRAL_USERNS] = {.label = "corral, isolated + user namespace (context)"},
    [ROW_CORRAL_PLAIN] = {.label = "corral, no isolation (context)"},
    [ROW_BARE] = {.label = "posix_spawn, no isolation (the floor)"},
    [ROW_UNSHARE] = {.label = "unshare --pid --mount --uts --ipc --net --fork"},
    [ROW_BWRAP] = {.label = "bwrap --unshare-all --ro-bind / /"},
    [ROW_RUNC] = {.label = "runc run (busybox rootfs, read-only)"},
};

static unsigned runc_counter;
static char *runc_bundle;

static void skip(struct row *row, const char *why)
{
	row->skipped = true;
	snprintf(row->note, sizeof(row->note), "%s", why);
}

/* One run of a tool row; false when it failed (the row is then skipped). */
static bool tool_once(struct row *row, enum row_id id, bool timed)
{
	if (lseek(tool_log_fd, 0, SEEK_SET) < 0 || ftruncate(tool_log_fd, 0) < 0)
		die("truncate %s: %s", tool_log_path, strerror(errno));
	int exit_code;
	int64_t ns;
	unsigned orphans = 0;
	if (id == ROW_BARE) {
		ns = time_bare_spawn(&exit_code);
	} else if (id == ROW_UNSHARE) {
		char *argv[] = {row->tool, "--pid",  "--mount",         "--uts", "--ipc",
				"--net",   "--fork", (char *)true_path, NULL};
		ns = time_tool(argv, CHILD_OTHER, &exit_code, &orphans);
	} else if (id == ROW_BWRAP) {
		char *argv[] = {row->tool,
				"--unshare-all",
				"--die-with-parent",
				"--ro-bind",
				"/",
				"/",
				(char *)true_path,
				NULL};
		ns = time_tool(argv, CHILD_OTHER, &exit_code, &orphans);
	} else {
		char container[96];
		snprintf(container, sizeof(container), "%s%u", runc_id_prefix, ++runc_counter);
		char *argv[] = {runc_path,  "--root",    runc_state, "run",
				"--bundle", runc_bundle, container,  NULL};
		ns = time_tool(argv, CHILD_RUNC, &exit_code, &orphans);
		/* `runc run` deletes its container when it ends; if not, now. */
		char state[PATH_MAX + sizeof(container)];
		snprintf(state, sizeof(state), "%s/%s", runc_state, container);
		if (access(state, F_OK) == 0)
			runc_delete(container);
	}
	if (ns < 0) {
		snprintf(row->note, sizeof(row->note), "failed: exit code %d%s", exit_code,
			 timed ? "" : " (warm-up)");
		keep_tool_log(row->said, sizeof(row->said));
		row->skipped = true;
		return false;
	}
	if (timed) {
		series_add(&row->ms, (double)ns / 1e6);
		row->total_ms += (double)ns / 1e6;
		row->orphans += orphans;
	}
	return true;
}

static void corral_turn(const struct settings *settings, struct row *row, unsigned runs)
{
	int64_t ns = corral_round(settings, row->config, row->events, runs, &row->ms);
	series_add(&row->whole_ms, (double)ns / 1e6);
	row->runs_in_whole += runs;
	ns = corral_round(settings, row->config_one, row->events, 1, NULL);
	series_add(&row->one_ms, (double)ns / 1e6);
}

static bool is_corral_row(int id)
{
	return id <= ROW_CORRAL_PLAIN;
}

static void setup_rows(unsigned runs_per_round)
{
	rows[ROW_CORRAL_ISOLATED].isolation = isolated_yaml;
	rows[ROW_CORRAL_NO_INIT].isolation = no_init_yaml;
	rows[ROW_CORRAL_USERNS].isolation = userns_yaml;
	for (int id = ROW_CORRAL_ISOLATED; is_corral_row(id); id++) {
		struct row *row = &rows[id];
		row->config = temp_path("corral-%d.yaml", id);
		row->config_one = temp_path("corral-%d-one.yaml", id);
		row->config_extra = temp_path("corral-%d-extra.yaml", id);
		row->events = temp_path("corral-%d.jsonl", id);
		write_corral_config(row->config, row->isolation, runs_per_round);
		write_corral_config(row->config_one, row->isolation, 1);
		/* For the rounds with a run more, when N is not a multiple of
		 * the rounds. */
		write_corral_config(row->config_extra, row->isolation, runs_per_round + 1);
	}
	rows[ROW_UNSHARE].tool = find_in_path("unshare");
	if (!rows[ROW_UNSHARE].tool)
		skip(&rows[ROW_UNSHARE], "skipped: no unshare in PATH (util-linux)");
	rows[ROW_BWRAP].tool = find_in_path("bwrap");
	if (!rows[ROW_BWRAP].tool)
		skip(&rows[ROW_BWRAP], "skipped: no bwrap in PATH (apt-get install bubblewrap)");
	char *runc = find_in_path("runc");
	if (!runc) {
		skip(&rows[ROW_RUNC], "skipped: no runc in PATH (apt-get install runc)");
	} else {
		snprintf(runc_path, sizeof(runc_path), "%s", runc);
		free(runc);
		char *state = temp_path("runc-state");
		if (mkdir(state, 0700) < 0)
			die("mkdir %s: %s", state, strerror(errno));
		snprintf(runc_state, sizeof(runc_state), "%s", state);
		free(state);
		runc_bundle = temp_path("runc-bundle");
		char why[200];
		if (!make_runc_bundle(runc_bundle, why, sizeof(why))) {
			char note[256];
			snprintf(note, sizeof(note), "skipped: %s", why);
			skip(&rows[ROW_RUNC], note);
		}
	}
}

/* Issue 16's aims for an isolated start, against the same run's rows. */
static void print_aims(double isolated_ms)
{
	static const struct {
		enum row_id id;
		const char *name;
		double aim; /* corral isolated over the row's median, at most */
	} aims[] = {
	    {ROW_BARE, "a bare posix_spawn", 1.6},
	    {ROW_BWRAP, "bwrap", 1.0 / 3},
	    {ROW_RUNC, "runc", 1.0 / 20},
	};
	printf("  corral, isolated, against its aims (medians):");
	for (size_t i = 0; i < sizeof(aims) / sizeof(aims[0]); i++) {
		const struct row *row = &rows[aims[i].id];
		if (row->skipped || !row->ms.count || isolated_ms <= 0)
			continue;
		double ratio = isolated_ms / series_median(&row->ms);
		printf("%s %.2fx %s (aim <= %.2f: %s)", i ? ";" : "", ratio, aims[i].name,
		       aims[i].aim, ratio <= aims[i].aim ? "met" : "not met");
	}
	printf("\n");
}

static void print_row(const struct row *row, bool corral, double reference_ms)
{
	if (row->skipped) {
		printf("  %-46s %s\n", row->label, row->note);
		char said[sizeof(row->said)];
		snprintf(said, sizeof(said), "%s", row->said);
		char *save = NULL;
		for (char *line = strtok_r(said, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save))
			printf("      it said: %s\n", line);
		return;
	}
	double per_run;
	if (corral) {
		/* Each whole run less a start-up, over the runs less one. */
		double sum = 0;
		for (size_t i = 0; i < row->whole_ms.count; i++)
			sum += row->whole_ms.values[i];
		sum -= (double)row->whole_ms.count * series_median(&row->one_ms);
		per_run = sum / (double)(row->runs_in_whole - row->whole_ms.count);
	} else {
		per_run = row->total_ms / (double)row->ms.count;
	}
	double median = series_median(&row->ms);
	printf("  %-46s %6zu %9.3f %9.3f %9.3f", row->label, row->ms.count, median,
	       series_min(&row->ms), per_run);
	if (reference_ms > 0)
		printf(" %9.2f", median / reference_ms);
	printf("\n");
}

static void bench(const struct settings *settings)
{
	unsigned rounds = settings->rounds;
	unsigned base = settings->runs / rounds, extra = settings->runs % rounds;

	/* Warm-up, untimed: page cache, dynamic loader; and a failing tool is
	 * skipped now, with what it said. */
	for (int id = ROW_CORRAL_ISOLATED; is_corral_row(id); id++)
		corral_round(settings, rows[id].config_one, rows[id].events, 1, NULL);
	for (int id = ROW_UNSHARE; id < ROW_COUNT; id++)
		if (!rows[id].skipped)
			tool_once(&rows[id], (enum row_id)id, false);

	/* The rows take turns, starting one further each round, so that drift
	 * in the machine's speed hits them all alike. */
	for (unsigned round = 0; round < rounds; round++) {
		unsigned runs = base + (round < extra ? 1 : 0);
		unsigned runc_runs =
		    settings->runc_runs / rounds + (round < settings->runc_runs % rounds ? 1 : 0);
		for (unsigned turn = 0; turn < ROW_COUNT; turn++) {
			enum row_id id = (enum row_id)((round + turn) % ROW_COUNT);
			struct row *row = &rows[id];
			if (row->skipped)
				continue;
			if (is_corral_row(id)) {
				char *saved = row->config;
				if (runs != base)
					row->config = row->config_extra;
				corral_turn(settings, row, runs);
				row->config = saved;
				continue;
			}
			unsigned count = id == ROW_RUNC ? runc_runs : runs;
			for (unsigned i = 0; i < count; i++)
				if (!tool_once(row, id, true))
					break;
		}
	}

	for (int id = 0; id < ROW_COUNT; id++) {
		series_sort(&rows[id].ms);
		series_sort(&rows[id].one_ms);
	}
	double reference = series_median(&rows[ROW_CORRAL_ISOLATED].ms);

	printf("Spawn and reap %s, isolated: pid, mount, uts, ipc, net namespaces, no\n"
	       "capabilities, seccomp (N=%u of each fast row, %u of runc, in %u rounds taking "
	       "turns)\n",
	       true_path, settings->runs, settings->runc_runs, rounds);
	printf("  %-46s %6s %9s %9s %9s %9s\n", "", "runs", "median", "min", "per run", "x corral");
	printf("  %-46s %6s %9s %9s %9s %9s\n", "", "", "ms", "ms", "ms", "isolated");
	for (int id = 0; id < ROW_COUNT; id++)
		print_row(&rows[id], is_corral_row(id), reference);
	printf("  corral's fixed costs, subtracted from its per-run figure:\n");
	const enum row_id start_ups[] = {ROW_CORRAL_ISOLATED, ROW_CORRAL_PLAIN};
	for (size_t i = 0; i < 2; i++) {
		const struct series *one = &rows[start_ups[i]].one_ms;
		printf("  %-46s %6zu %9.3f %9.3f\n",
		       start_ups[i] == ROW_CORRAL_ISOLATED ? "corral run of 1 run, isolated"
							   : "corral run of 1 run, no isolation",
		       one->count, series_median(one), series_min(one));
	}
	print_aims(reference);
	printf(
	    "  corral rows: median and min of its event log's \"started\" -> next \"started\"\n"
	    "  (exec confirmed, exit, reap, restart, exec confirmed); per run: the whole\n"
	    "  `corral run` (fork to reap) less the start-up row, over the runs less one.\n"
	    "  Other rows: fork of the tool to the reap of the last process it started, one\n"
	    "  at a time; per run: the mean.\n"
	    "  x corral isolated: the row's median over corral's isolated median.\n"
	    "  corral and runc put the task in a cgroup of its own; unshare and bwrap do not.\n");
	for (int id = ROW_UNSHARE; id < ROW_COUNT; id++)
		if (!rows[id].skipped && rows[id].orphans)
			printf("  %s: %u processes outlived the tool over %zu runs, reaped by the "
			       "bench\n"
			       "  (a child subreaper) and counted in the time.\n",
			       rows[id].tool ? rows[id].tool : runc_path, rows[id].orphans,
			       rows[id].ms.count);

	unsigned containers, cgroups;
	remove_runc_leftovers(&containers, &cgroups);
	if (containers || cgroups)
		printf("  runc left %u containers and %u cgroups behind (removed now)\n",
		       containers, cgroups);
	for (int id = 0; id < ROW_COUNT; id++) {
		free(rows[id].ms.values);
		free(rows[id].whole_ms.values);
		free(rows[id].one_ms.values);
		free(rows[id].config);
		free(rows[id].config_one);
		free(rows[id].config_extra);
		free(rows[id].events);
		free(rows[id].tool);
	}
	free(runc_bundle);
}

/* ---- main ------------------------------------------------------------------ */

static void usage(FILE *out)
{
	fprintf(out,
		"usage: bench_isolation [--corral PATH] [--quick]\n\n"
		"  --corral PATH  the corral binary (default build-dev/corral)\n"
		"  --quick        small sizes (N=10, 3 runc runs), a smoke test of the bench\n");
}

static void print_header(const struct settings *settings)
{
	print_machine_line(settings->quick, settings->corral, NULL);
	const enum row_id tools[] = {ROW_UNSHARE, ROW_BWRAP, ROW_RUNC};
	for (size_t i = 0; i < 3; i++) {
		struct row *row = &rows[tools[i]];
		char *tool = tools[i] == ROW_RUNC ? (runc_path[0] ? runc_path : NULL) : row->tool;
		if (!tool)
			continue;
		char version[160];
		char *argv[] = {tool, "--version", NULL};
		first_line_of(argv, version, sizeof(version));
		printf("  %s: %s\n", tool, version);
	}
	printf("\n");
}

int main(int argc, char **argv)
{
	bench_init("bench_isolation", cleanup);
	struct settings settings = {
	    .corral = "build-dev/corral", .runs = 200, .rounds = 4, .runc_runs = 10};
	struct bench_options options = {.corral = settings.corral};
	int exit_code = parse_options(argc, argv, false, usage, &options);
	if (exit_code >= 0)
		return exit_code;
	settings.corral = options.corral;
	settings.quick = options.quick;
	if (settings.quick) {
		settings.runs = 10;
		settings.rounds = 2;
		settings.runc_runs = 3;
	}
	if (geteuid() != 0) {
		fprintf(stderr, "bench_isolation: run it as root (namespaces, cgroups, runc)\n");
		return 1;
	}

	/* Whatever a tool leaves running when it exits comes back to the
	 * bench, which reaps it (bwrap's sandbox outlives bwrap). */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		die("PR_SET_CHILD_SUBREAPER: %s", strerror(errno));
	make_temp_dir("/tmp/corral-bench-isolation.XXXXXX");
	catch_fatal_signals();
	snprintf(runc_id_prefix, sizeof(runc_id_prefix), "bench-isolation-%d-", (int)getpid());
	find_cgroup_dirs();
	use_own_control_socket();
	tool_log_path = temp_path("tool-output.log");
	tool_log_fd = open(tool_log_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (tool_log_fd < 0)
		die("open %s: %s", tool_log_path, strerror(errno));

	/* The rows' tools are found before the header names their versions. */
	setup_rows(settings.runs / settings.rounds);
	print_header(&settings);
	fflush(stdout);
	bench(&settings);
	close(tool_log_fd);
	free(tool_log_path);
	cleanup();
	return 0;
}
