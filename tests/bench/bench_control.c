/* bench_control: what asking a supervisor for status costs, with corral,
 * supervisord and s6 each supervising the same N sleeping tasks, measured
 * side by side in one run.
 *
 *   1. the status of every task, and of one task, through each tool's CLI:
 *      `corral status [--json]`, `supervisorctl status`, and `s6-svstat`
 *      (once per service directory, as that is how s6 reports); plus
 *      corral's control protocol spoken directly by this program;
 *   2. status requests per second for one task: each CLI back to back, and
 *      corral's protocol over one connection (ping-pong) and over many
 *      connections at once (one client process each); the one-connection
 *      row next to its floor, an echo server that only answers
 *      (ping_pong_floor.h), unpinned and with both pinned to one CPU, and
 *      against the aim of 40k requests/s;
 *   3. memory of each supervisor with N tasks, for context.
 *
 * usage: bench_control [--corral PATH] [--tasks N] [--quick]
 *
 * supervisord and s6 are optional: their rows are skipped, with a note,
 * when their programs are not in PATH, and always with --quick.
 *
 * Prints figures, asserts nothing about timing. Everything it creates lives
 * in a temporary directory under /tmp that is removed at exit. The bench
 * makes itself a child subreaper, so every process the supervisors started
 * comes back to it if its parent dies; at exit (or on an error, SIGINT,
 * SIGTERM or SIGHUP) it stops each supervisor with SIGTERM, then SIGKILLs
 * whatever of its own descendants is left. A supervisor also gets SIGTERM
 * (PR_SET_PDEATHSIG) if this program is killed outright. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "ping_pong_floor.h"

/* ---- settings ---------------------------------------------------------- */

struct settings {
	const char *corral;
	bool quick;
	unsigned tasks;           /* N: tasks each supervisor runs */
	unsigned cli_rounds;      /* part 1: calls of each CLI, interleaved */
	unsigned s6_sweeps;       /* part 1: full s6-svstat sweeps (N calls each) */
	unsigned raw_per_round;   /* part 1: raw requests per round */
	double rate_seconds;      /* part 2: each back-to-back loop */
	unsigned ping_pong_count; /* part 2: requests on one connection */
	unsigned clients;         /* part 2: concurrent connections */
	double clients_seconds;   /* part 2: how long each of them runs */
};

/* ---- what we started, and cleanup ---------------------------------------- */

/* The supervisors we started (their tasks are their business until the
 * end, when anything left of our descendants is killed). */
enum tool { TOOL_CORRAL, TOOL_SUPERVISORD, TOOL_S6, TOOL_COUNT };
static const char *const tool_names[TOOL_COUNT] = {"corral", "supervisord", "s6-svscan"};
static volatile pid_t tool_pids[TOOL_COUNT];

/* Everything below, down to cleanup(), is async-signal-safe: no stdio, no
 * malloc, only system calls, so the signal handler may use it. */

/* "/proc/PID/stat" and the like, without snprintf. */
static void proc_path(char *buffer, size_t size, pid_t pid, const char *file)
{
	char digits[16];
	size_t count = 0, used = 0;
	unsigned long value = (unsigned long)pid;
	do {
		digits[count++] = (char)('0' + value % 10);
		value /= 10;
	} while (value && count < sizeof(digits));
	const char *prefix = "/proc/";
	while (*prefix && used + 1 < size)
		buffer[used++] = *prefix++;
	while (count && used + 1 < size)
		buffer[used++] = digits[--count];
	if (used + 1 < size)
		buffer[used++] = '/';
	while (*file && used + 1 < size)
		buffer[used++] = *file++;
	buffer[used] = '\0';
}

/* The parent of `pid` from /proc/PID/stat, or -1. */
static pid_t parent_of(pid_t pid)
{
	char path[64], content[512];
	proc_path(path, sizeof(path), pid, "stat");
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t got = read(fd, content, sizeof(content) - 1);
	close(fd);
	if (got <= 0)
		return -1;
	content[got] = '\0';
	/* "PID (COMM) STATE PPID ...": COMM may hold anything, ')' included. */
	char *after = NULL;
	for (char *c = content; *c; c++)
		if (*c == ')')
			after = c;
	if (!after || after[1] != ' ' || !after[2] || after[3] != ' ')
		return -1;
	pid_t parent = 0;
	for (const char *c = after + 4; *c >= '0' && *c <= '9'; c++)
		parent = parent * 10 + (*c - '0');
	return parent;
}

/* The pids of `parent`'s children, at most `max` of them. */
static size_t list_children(pid_t parent, pid_t *out, size_t max)
{
	int proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (proc < 0)
		return 0;
	size_t count = 0;
	char buffer[8192];
	ssize_t got;
	while ((got = getdents64(proc, buffer, sizeof(buffer))) > 0) {
		for (ssize_t offset = 0; offset < got;) {
			struct dirent64 *entry = (struct dirent64 *)(buffer + offset);
			offset += entry->d_reclen;
			pid_t pid = 0;
			const char *c = entry->d_name;
			for (; *c >= '0' && *c <= '9'; c++)
				pid = pid * 10 + (*c - '0');
			if (*c || pid <= 0)
				continue;
			if (parent_of(pid) == parent && count < max)
				out[count++] = pid;
		}
	}
	close(proc);
	return count;
}

/* SIGKILLs every descendant still alive: as a child subreaper we inherit
 * the orphans, so "every child of ours, until there are none" reaches them
 * all. Returns how many were killed. */
static unsigned kill_leftovers(void)
{
	static pid_t children[32768];
	unsigned killed = 0;
	for (int round = 0; round < 1000; round++) {
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		size_t count =
		    list_children(getpid(), children, sizeof(children) / sizeof(children[0]));
		if (count == 0) {
			if (waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD)
				break;
		}
		for (size_t i = 0; i < count; i++)
			if (kill(children[i], SIGKILL) == 0)
				killed++;
		sleep_ms(5);
	}
	return killed;
}

/* Stops the supervisors (each stops its tasks), kills what is left of our
 * descendants, removes the temp dir. Returns how many leftovers it killed. */
static unsigned stop_everything(void)
{
	for (int tool = 0; tool < TOOL_COUNT; tool++) {
		pid_t pid = tool_pids[tool];
		if (pid > 0) {
			stop_process(pid, 30000);
			tool_pids[tool] = 0;
		}
	}
	/* What the supervisors stopped may take a moment to go; orphans of a
	 * supervisor that exited first come to us. */
	for (unsigned waited = 0; waited < 5000; waited += 5) {
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD)
			break;
		sleep_ms(5);
	}
	unsigned leftovers = kill_leftovers();
	remove_temp_dir();
	return leftovers;
}

/* On an error or a fatal signal: the same, with no one to tell. */
static void cleanup(void)
{
	stop_everything();
}

/* ---- figures ---------------------------------------------------------------- */

/* The samples of one row of part 1, and what they cost the server. */
struct row_samples {
	struct series times;   /* ms */
	size_t bytes;          /* output of the last sample */
	int64_t server_cpu_ns; /* summed over the samples; -1: no server */
};

/* µs per call, to a sensible precision; "-" without a server. */
static const char *format_cpu(int64_t total_ns, unsigned long calls, char *buffer, size_t size)
{
	if (total_ns < 0 || calls == 0)
		return "-";
	double per_call = (double)total_ns / 1e3 / (double)calls;
	snprintf(buffer, size, per_call < 1000 ? "%.1f" : "%.0f", per_call);
	return buffer;
}

/* ---- /proc --------------------------------------------------------------- */

/* CPU time of every thread of `pid`, in ns; -1 when unknown. */
static int64_t process_cpu_ns(pid_t pid)
{
	if (pid <= 0)
		return -1;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *threads = opendir(path);
	if (!threads)
		return -1;
	int64_t total = 0;
	struct dirent *entry;
	while ((entry = readdir(threads))) {
		if (entry->d_name[0] == '.')
			continue;
		char file[128];
		snprintf(file, sizeof(file), "/proc/%d/task/%.32s/schedstat", (int)pid,
			 entry->d_name);
		char *content = read_file(file, NULL);
		if (content) {
			total += strtoll(content, NULL, 10);
			free(content);
		}
	}
	closedir(threads);
	return total;
}

/* The state letter of `pid` (R, S, ...) from /proc/PID/stat, or '?'. */
static char process_state(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	char *content = read_file(path, NULL);
	char *after = content ? strrchr(content, ')') : NULL;
	char state = after && after[1] == ' ' && after[2] ? after[2] : '?';
	free(content);
	return state;
}

/* The CPU time of a server, read once it is asleep (waiting for its next
 * request; at most 50 ms). The kernel brings a thread's runtime up to date
 * when it stops running, so a read while it still runs would leave the
 * tail of its work (freeing a reply, say) to the next measurement. */
static int64_t server_cpu_ns(pid_t pid)
{
	if (pid <= 0)
		return -1;
	for (int i = 0; i < 1000 && process_state(pid) == 'R'; i++) {
		struct timespec pause = {.tv_nsec = 50000};
		nanosleep(&pause, NULL);
	}
	return process_cpu_ns(pid);
}

/* The value of `key` (e.g. "\nVmRSS:") in a /proc file, or -1. */
static long long proc_field(pid_t pid, const char *file, const char *key)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	char *content = read_file(path, NULL);
	if (!content)
		return -1;
	long long value = text_field(content, key);
	free(content);
	return value;
}

struct memory {
	unsigned processes;
	long long rss_kib, pss_kib;
};

static void add_memory(struct memory *memory, pid_t pid)
{
	long long rss = proc_field(pid, "status", "\nVmRSS:");
	long long pss = proc_field(pid, "smaps_rollup", "\nPss:");
	if (rss < 0)
		return;
	memory->processes++;
	memory->rss_kib += rss;
	memory->pss_kib += pss > 0 ? pss : 0;
}

/* The supervisor's own memory; with `with_children`, its children's too
 * (s6-svscan's children are the s6-supervise processes). */
static struct memory tool_memory(pid_t pid, bool with_children)
{
	struct memory memory = {0};
	add_memory(&memory, pid);
	if (with_children) {
		static pid_t children[32768];
		size_t count = list_children(pid, children, sizeof(children) / sizeof(children[0]));
		for (size_t i = 0; i < count; i++)
			add_memory(&memory, children[i]);
	}
	return memory;
}

/* ---- running programs ---------------------------------------------------- */

static int null_fd = -1;       /* /dev/null */
static int cli_stderr_fd = -1; /* the stderr of the last command */
static char *cli_stderr_path;
static struct text output; /* the stdout of the last command */

/* `name` looked up in PATH; NULL when absent. */
static char *find_program(const char *name)
{
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";
	while (*path) {
		const char *end = strchr(path, ':');
		size_t length = end ? (size_t)(end - path) : strlen(path);
		char candidate[PATH_MAX];
		snprintf(candidate, sizeof(candidate), "%.*s/%s", (int)length, path, name);
		if (length && access(candidate, X_OK) == 0)
			return strdup(candidate);
		path += length + (end ? 1 : 0);
	}
	return NULL;
}

struct command_result {
	int64_t wall_ns; /* fork to reap, the output read in between */
	int exit_code;   /* 128+N for signal N */
	size_t bytes;    /* of stdout, which is in `output` */
};

/* Runs argv[0] (a path) to its end: stdin /dev/null, stdout into `output`,
 * stderr into cli_stderr_path. */
static struct command_result run_command(char *const argv[])
{
	struct command_result result = {0};
	int pipe_fds[2];
	if (pipe2(pipe_fds, O_CLOEXEC) < 0)
		die("pipe: %s", strerror(errno));
	if (ftruncate(cli_stderr_fd, 0) < 0)
		die("truncate %s: %s", cli_stderr_path, strerror(errno));
	output.length = 0;

	int64_t start = now_ns();
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		dup2(null_fd, STDIN_FILENO);
		dup2(pipe_fds[1], STDOUT_FILENO);
		dup2(cli_stderr_fd, STDERR_FILENO);
		execv(argv[0], argv);
		_exit(127);
	}
	close(pipe_fds[1]);
	for (;;) {
		text_reserve(&output, 65536);
		ssize_t got = read(pipe_fds[0], output.data + output.length,
				   output.capacity - output.length - 1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			die("reading the output of %s: %s", argv[0], strerror(errno));
		if (got == 0)
			break;
		output.length += (size_t)got;
	}
	close(pipe_fds[0]);
	int status = reap_status(pid);
	result.wall_ns = now_ns() - start;
	output.data[output.length] = '\0';
	result.bytes = output.length;
	result.exit_code = exit_code_of(status);
	return result;
}

/* The command as one string, for messages. */
static const char *command_line(char *const argv[])
{
	static char line[512];
	size_t used = 0;
	line[0] = '\0';
	for (size_t i = 0; argv[i] && used < sizeof(line); i++)
		used += (size_t)snprintf(line + used, sizeof(line) - used, "%s%s", i ? " " : "",
					 argv[i]);
	return line;
}

/* run_command that must succeed (exit 0). */
static struct command_result run_checked(char *const argv[])
{
	struct command_result result = run_command(argv);
	if (result.exit_code != 0) {
		char *said = read_file(cli_stderr_path, NULL);
		fflush(stdout);
		fprintf(stderr,
			"bench_control: `%s` exited with code %d; stderr:\n%s\nstdout:\n%.2000s\n",
			command_line(argv), result.exit_code, said ? said : "", output.data);
		free(said);
		die("a status command failed");
	}
	return result;
}

/* Starts a supervisor in the background, stdout and stderr to `log`. */
static pid_t spawn_tool(enum tool tool, char *const argv[], const char *log)
{
	int log_fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (log_fd < 0)
		die("open %s: %s", log, strerror(errno));
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		/* Stopped gracefully if the bench dies, and out of the
		 * terminal's process group: a ^C goes to the bench, which
		 * stops the supervisors in order. */
		exit_with_parent(SIGTERM);
		setpgid(0, 0);
		dup2(null_fd, STDIN_FILENO);
		dup2(log_fd, STDOUT_FILENO);
		dup2(log_fd, STDERR_FILENO);
		execv(argv[0], argv);
		_exit(127);
	}
	close(log_fd);
	tool_pids[tool] = pid;
	return pid;
}

/* Dies, showing the end of the supervisor's log, if it has exited. */
static void check_alive(enum tool tool, const char *log)
{
	pid_t pid = tool_pids[tool];
	int status;
	if (waitpid(pid, &status, WNOHANG) != pid)
		return;
	tool_pids[tool] = 0;
	char *said = read_file(log, NULL);
	fprintf(stderr, "bench_control: %s exited (status 0x%x); the end of its log:\n%s\n",
		tool_names[tool], status, text_tail(said, 3000));
	free(said);
	die("%s died", tool_names[tool]);
}

/* ---- corral's protocol, spoken directly ----------------------------------- */

static int raw_connect(const char *path)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	struct sockaddr_un address = {.sun_family = AF_UNIX};
	snprintf(address.sun_path, sizeof(address.sun_path), "%s", path);
	while (connect(fd, (struct sockaddr *)&address, sizeof(address)) < 0) {
		if (errno == EINTR)
			continue;
		int error = errno;
		close(fd);
		errno = error;
		return -1;
	}
	return fd;
}

/* Sends one request line and reads its one reply line into `reply`.
 * Returns the reply's length without the newline, -1 on a socket error
 * or a close (errno 0), or -2 if more than one line came back. */
static ssize_t raw_call(int fd, const char *request, size_t request_length, struct text *reply)
{
	while (request_length > 0) {
		ssize_t sent = send(fd, request, request_length, MSG_NOSIGNAL);
		if (sent < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		request += sent;
		request_length -= (size_t)sent;
	}
	reply->length = 0;
	for (;;) {
		text_reserve(reply, 65536);
		ssize_t got =
		    recv(fd, reply->data + reply->length, reply->capacity - reply->length - 1, 0);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			if (got == 0)
				errno = 0;
			return -1;
		}
		char *newline = memchr(reply->data + reply->length, '\n', (size_t)got);
		reply->length += (size_t)got;
		if (newline) {
			reply->data[reply->length] = '\0';
			if (newline != reply->data + reply->length - 1)
				return -2;
			return newline - reply->data;
		}
	}
}

static bool reply_ok(const struct text *reply)
{
	static const char ok[] = "{\"ok\":true";
	return reply->length >= sizeof(ok) - 1 && memcmp(reply->data, ok, sizeof(ok) - 1) == 0;
}

/* raw_call that must succeed with an "ok" reply. */
static size_t raw_call_checked(int fd, const char *request, struct text *reply)
{
	ssize_t length = raw_call(fd, request, strlen(request), reply);
	if (length == -2)
		die("corral sent more than one line for one request: %.300s", reply->data);
	if (length < 0)
		die("corral's control socket: %s", errno ? strerror(errno) : "closed by corral");
	if (!reply_ok(reply))
		die("corral refused %.*s: %.500s", (int)strlen(request) - 1, request, reply->data);
	return (size_t)length + 1;
}

/* ---- the three supervisors ------------------------------------------------ */

struct bench {
	const struct settings *settings;
	char *corral_socket, *corral_log;
	char *supervisord, *supervisorctl, *supervisord_conf, *supervisord_log;
	char *s6_svscan, *s6_svstat, *s6_scan, *s6_log;
	char **s6_services; /* N service dirs */
	bool have_supervisord, have_s6;
	double started_ms[TOOL_COUNT]; /* fork -> all N seen running */
	char *versions[TOOL_COUNT];
};

static const char *task_name(unsigned index) /* 1-based */
{
	static char name[16];
	snprintf(name, sizeof(name), "t%04u", index);
	return name;
}

/* The version line a program prints with --version, or "?". */
static char *program_version(const char *path)
{
	char *argv[] = {(char *)path, "--version", NULL};
	struct command_result result = run_command(argv);
	if (result.exit_code != 0 || result.bytes == 0)
		return strdup("?");
	char *newline = strchr(output.data, '\n');
	if (newline)
		*newline = '\0';
	return strdup(output.data);
}

static void start_corral(struct bench *bench)
{
	unsigned tasks = bench->settings->tasks;
	char *config = temp_path("corral.yaml");
	bench->corral_socket = temp_path("c.sock");
	bench->corral_log = temp_path("corral.log");
	struct text text = {0};
	text_append(&text, "socket: \"%s\"\ngroups:\n  g:\n    tasks:\n", bench->corral_socket);
	for (unsigned i = 1; i <= tasks; i++)
		text_append(
		    &text, "      %s: {command: [\"sleep\", \"1000\"], restart: {policy: never}}\n",
		    task_name(i));
	write_file(config, text.data, text.length, 0644);
	free(text.data);

	char *argv[] = {(char *)bench->settings->corral, "run", config, NULL};
	int64_t start = now_ns();
	spawn_tool(TOOL_CORRAL, argv, bench->corral_log);

	/* Poll `corral status --json` until every task is running. */
	char *status[] = {(char *)bench->settings->corral,
			  "status",
			  "--json",
			  "--socket",
			  bench->corral_socket,
			  NULL};
	size_t running = 0;
	for (;;) {
		check_alive(TOOL_CORRAL, bench->corral_log);
		struct command_result result = run_command(status);
		running = result.exit_code == 0
			      /* A task's state, not its group's ("running" too). */
			      ? count_occurrences(output.data, "\"state\":\"running\",\"pid\"")
			      : 0;
		if (running == tasks)
			break;
		if (now_ns() - start > 120LL * 1000000000LL)
			die("corral: only %zu of %u tasks running after 120 s", running, tasks);
		sleep_ms(20);
	}
	bench->started_ms[TOOL_CORRAL] = (double)(now_ns() - start) / 1e6;
	free(config);
}

static void start_supervisord(struct bench *bench)
{
	unsigned tasks = bench->settings->tasks;
	bench->supervisord_conf = temp_path("supervisord.conf");
	bench->supervisord_log = temp_path("supervisord.out");
	char *socket_path = temp_path("s.sock"), *log = temp_path("supervisord.log");
	char *pidfile = temp_path("supervisord.pid");
	struct text text = {0};
	/* Each program holds pipes for its output: minfds makes supervisord
	 * raise its fd limit to match. */
	text_append(
	    &text,
	    "[unix_http_server]\nfile=%s\n\n"
	    "[supervisord]\nnodaemon=true\nlogfile=%s\npidfile=%s\n"
	    "childlogdir=%s\nminfds=%u\nloglevel=warn\n\n"
	    "[rpcinterface:supervisor]\n"
	    "supervisor.rpcinterface_factory = supervisor.rpcinterface:make_main_rpcinterface\n\n"
	    "[supervisorctl]\nserverurl=unix://%s\n\n",
	    socket_path, log, pidfile, temp_dir, tasks * 4 + 1024, socket_path);
	for (unsigned i = 1; i <= tasks; i++)
		text_append(&text,
			    "[program:%s]\ncommand=sleep 1000\nautorestart=false\nstartsecs=0\n"
			    "stdout_logfile=NONE\nstderr_logfile=NONE\n\n",
			    task_name(i));
	write_file(bench->supervisord_conf, text.data, text.length, 0644);
	free(text.data);

	char *argv[] = {bench->supervisord, "--nodaemon", "-c", bench->supervisord_conf, NULL};
	int64_t start = now_ns();
	spawn_tool(TOOL_SUPERVISORD, argv, bench->supervisord_log);

	char *status[] = {bench->supervisorctl, "-c", bench->supervisord_conf, "status", NULL};
	size_t running = 0;
	for (;;) {
		check_alive(TOOL_SUPERVISORD, bench->supervisord_log);
		run_command(status);
		running = count_occurrences(output.data, " RUNNING ");
		if (running == tasks)
			break;
		if (now_ns() - start > 300LL * 1000000000LL)
			die("supervisord: only %zu of %u programs RUNNING after 300 s", running,
			    tasks);
		sleep_ms(20);
	}
	bench->started_ms[TOOL_SUPERVISORD] = (double)(now_ns() - start) / 1e6;
	free(socket_path);
	free(log);
	free(pidfile);
}

static void start_s6(struct bench *bench)
{
	unsigned tasks = bench->settings->tasks;
	bench->s6_scan = temp_path("scan");
	bench->s6_log = temp_path("s6-svscan.out");
	if (mkdir(bench->s6_scan, 0755) < 0)
		die("mkdir %s: %s", bench->s6_scan, strerror(errno));
	bench->s6_services = calloc(tasks, sizeof(char *));
	if (!bench->s6_services)
		die("out of memory");
	static const char run[] = "#!/bin/sh\nexec sleep 1000\n";
	for (unsigned i = 1; i <= tasks; i++) {
		char *dir = malloc(PATH_MAX), file[PATH_MAX + 8];
		if (!dir)
			die("out of memory");
		snprintf(dir, PATH_MAX, "%s/%s", bench->s6_scan, task_name(i));
		if (mkdir(dir, 0755) < 0)
			die("mkdir %s: %s", dir, strerror(errno));
		snprintf(file, sizeof(file), "%s/run", dir);
		write_file(file, run, sizeof(run) - 1, 0755);
		bench->s6_services[i - 1] = dir;
	}

	/* -c: room for N services (the default is 1000). */
	char limit[16];
	snprintf(limit, sizeof(limit), "%u", tasks + 100);
	char *argv[] = {bench->s6_svscan, "-c", limit, bench->s6_scan, NULL};
	int64_t start = now_ns();
	spawn_tool(TOOL_S6, argv, bench->s6_log);

	/* Service by service, until `s6-svstat -u` says each is up. */
	for (unsigned i = 0; i < tasks; i++) {
		char *status[] = {bench->s6_svstat, "-u", bench->s6_services[i], NULL};
		for (;;) {
			check_alive(TOOL_S6, bench->s6_log);
			struct command_result result = run_command(status);
			if (result.exit_code == 0 && strcmp(output.data, "true\n") == 0)
				break;
			if (now_ns() - start > 300LL * 1000000000LL)
				die("s6: %s not up after 300 s (%u of %u up)",
				    bench->s6_services[i], i, tasks);
			sleep_ms(5);
		}
	}
	bench->started_ms[TOOL_S6] = (double)(now_ns() - start) / 1e6;
}

/* ---- part 1: status through each CLI --------------------------------------- */

enum row {
	ROW_CORRAL_JSON,
	ROW_CORRAL_TABLE,
	ROW_CORRAL_RAW_ALL,
	ROW_SUPERVISORCTL_ALL,
	ROW_S6_ALL,
	ROW_CORRAL_ONE,
	ROW_CORRAL_ONE_JSON,
	ROW_CORRAL_RAW_ONE,
	ROW_SUPERVISORCTL_ONE,
	ROW_S6_ONE,
	ROW_TRUE,
	ROW_COUNT
};

/* One timed CLI call into `row` (ms), with the server's CPU. */
static void time_cli(struct row_samples *row, char *const argv[], pid_t server)
{
	int64_t cpu_before = server_cpu_ns(server);
	struct command_result result = run_checked(argv);
	int64_t cpu_after = server_cpu_ns(server);
	series_add(&row->times, (double)result.wall_ns / 1e6);
	row->bytes = result.bytes;
	if (server > 0 && cpu_before >= 0 && cpu_after >= 0)
		row->server_cpu_ns += cpu_after - cpu_before;
	else
		row->server_cpu_ns = -1;
}

/* `count` requests on an open connection into `row` (ms each). */
static void time_raw(struct row_samples *row, int fd, const char *request, unsigned count,
		     struct text *reply)
{
	int64_t cpu_before = server_cpu_ns(tool_pids[TOOL_CORRAL]);
	for (unsigned i = 0; i < count; i++) {
		int64_t start = now_ns();
		row->bytes = raw_call_checked(fd, request, reply);
		series_add(&row->times, (double)(now_ns() - start) / 1e6);
	}
	row->server_cpu_ns += server_cpu_ns(tool_pids[TOOL_CORRAL]) - cpu_before;
}

static void print_row(const char *label, struct row_samples *row)
{
	struct series *times = &row->times;
	if (times->count == 0)
		return;
	series_sort(times);
	char cpu[32];
	printf("  %-50s %5zu %9.3f %9.3f %9.3f %9zu %10s\n", label, times->count,
	       series_median(times), series_min(times), series_quantile(times, 0.9), row->bytes,
	       format_cpu(row->server_cpu_ns, times->count, cpu, sizeof(cpu)));
}

static void bench_cli(struct bench *bench)
{
	const struct settings *settings = bench->settings;
	unsigned tasks = settings->tasks;
	char *corral = (char *)settings->corral, *socket_path = bench->corral_socket;
	char target[64], one_name[16];
	snprintf(one_name, sizeof(one_name), "%s", task_name(1));
	snprintf(target, sizeof(target), "g/%s", one_name);
	char *corral_json[] = {corral, "status", "--json", "--socket", socket_path, NULL};
	char *corral_table[] = {corral, "status", "--socket", socket_path, NULL};
	char *corral_one[] = {corral, "status", "--socket", socket_path, target, NULL};
	char *corral_one_json[] = {corral,      "status", "--json", "--socket",
				   socket_path, target,   NULL};
	char *ctl_all[] = {bench->supervisorctl, "-c", bench->supervisord_conf, "status", NULL};
	char *ctl_one[] = {
	    bench->supervisorctl, "-c", bench->supervisord_conf, "status", one_name, NULL};
	char *true_argv[] = {"/bin/true", NULL};
	char request_all[] = "{\"version\":1,\"command\":\"status\"}\n";
	char request_one[128];
	snprintf(request_one, sizeof(request_one),
		 "{\"version\":1,\"command\":\"status\",\"target\":\"%s\"}\n", target);

	pid_t corral_pid = tool_pids[TOOL_CORRAL], supervisord_pid = tool_pids[TOOL_SUPERVISORD];
	struct row_samples rows[ROW_COUNT];
	memset(rows, 0, sizeof(rows));
	struct text reply = {0};
	int fd = raw_connect(socket_path);
	if (fd < 0)
		die("connect %s: %s", socket_path, strerror(errno));

	/* The rows take turns, so that drift in the machine's speed hits
	 * them alike, and the order rotates from round to round: a call
	 * right after a slow one (supervisorctl keeps a CPU busy for a
	 * while) finds caches cold, and every row should get that turn as
	 * often as the others. */
	for (unsigned round = 0; round < settings->cli_rounds; round++) {
		for (unsigned step = 0; step < ROW_COUNT; step++) {
			enum row row = (enum row)((step + round) % ROW_COUNT);
			struct row_samples *samples = &rows[row];
			switch (row) {
			case ROW_CORRAL_JSON:
				time_cli(samples, corral_json, corral_pid);
				break;
			case ROW_CORRAL_TABLE:
				time_cli(samples, corral_table, corral_pid);
				break;
			case ROW_CORRAL_RAW_ALL:
				time_raw(samples, fd, request_all, settings->raw_per_round, &reply);
				break;
			case ROW_SUPERVISORCTL_ALL:
				if (bench->have_supervisord)
					time_cli(samples, ctl_all, supervisord_pid);
				break;
			case ROW_S6_ALL:
				if (bench->have_s6 && round < settings->s6_sweeps) {
					/* One call per service: the sweep is one sample. */
					int64_t start = now_ns();
					size_t bytes = 0;
					for (unsigned i = 0; i < tasks; i++) {
						char *svstat[] = {bench->s6_svstat,
								  bench->s6_services[i], NULL};
						bytes += run_checked(svstat).bytes;
					}
					series_add(&samples->times,
						   (double)(now_ns() - start) / 1e6);
					samples->bytes = bytes;
					samples->server_cpu_ns = -1;
				}
				break;
			case ROW_CORRAL_ONE:
				time_cli(samples, corral_one, corral_pid);
				break;
			case ROW_CORRAL_ONE_JSON:
				time_cli(samples, corral_one_json, corral_pid);
				break;
			case ROW_CORRAL_RAW_ONE:
				time_raw(samples, fd, request_one, settings->raw_per_round, &reply);
				break;
			case ROW_SUPERVISORCTL_ONE:
				if (bench->have_supervisord)
					time_cli(samples, ctl_one, supervisord_pid);
				break;
			case ROW_S6_ONE:
				if (bench->have_s6) {
					char *svstat[] = {bench->s6_svstat, bench->s6_services[0],
							  NULL};
					time_cli(samples, svstat, 0);
				}
				break;
			case ROW_TRUE:
				time_cli(samples, true_argv, 0);
				break;
			case ROW_COUNT:
				break;
			}
		}
	}
	close(fd);
	free(reply.data);

	printf("1. Status through each tool's CLI, with %u tasks (%u rounds; the rows take turns,\n"
	       "   in an order that rotates from round to round)\n",
	       tasks, settings->cli_rounds);
	printf("  %-50s %5s %9s %9s %9s %9s %10s\n", "", "calls", "median", "min", "p90", "output",
	       "server CPU");
	printf("  %-50s %5s %9s %9s %9s %9s %10s\n", "", "", "ms", "ms", "ms", "bytes", "us/call");
	char label[128];
	printf("  status of all %u tasks:\n", tasks);
	print_row("corral status --json", &rows[ROW_CORRAL_JSON]);
	print_row("corral status (table)", &rows[ROW_CORRAL_TABLE]);
	if (bench->have_supervisord)
		print_row("supervisorctl status", &rows[ROW_SUPERVISORCTL_ALL]);
	if (bench->have_s6) {
		snprintf(label, sizeof(label), "s6-svstat DIR, once per service (%u calls)", tasks);
		print_row(label, &rows[ROW_S6_ALL]);
	}
	print_row("corral protocol, no CLI: one connection, ping-pong", &rows[ROW_CORRAL_RAW_ALL]);
	printf("  status of one task:\n");
	snprintf(label, sizeof(label), "corral status %s", target);
	print_row(label, &rows[ROW_CORRAL_ONE]);
	snprintf(label, sizeof(label), "corral status --json %s", target);
	print_row(label, &rows[ROW_CORRAL_ONE_JSON]);
	if (bench->have_supervisord) {
		snprintf(label, sizeof(label), "supervisorctl status %s", one_name);
		print_row(label, &rows[ROW_SUPERVISORCTL_ONE]);
	}
	if (bench->have_s6) {
		snprintf(label, sizeof(label), "s6-svstat scan/%s", one_name);
		print_row(label, &rows[ROW_S6_ONE]);
	}
	print_row("corral protocol, no CLI: one connection, ping-pong", &rows[ROW_CORRAL_RAW_ONE]);
	printf("  floor for any CLI:\n");
	print_row("/bin/true, run the same way", &rows[ROW_TRUE]);
	printf("  CLI rows: wall time from fork to reap, stdout read through a pipe. Output:\n"
	       "  bytes on stdout (the s6 row: all %u calls together; protocol rows: the reply\n"
	       "  line). Server CPU: corral's or supervisord's own CPU time during the call\n"
	       "  (s6-svstat reads supervise/status itself; no server is involved).\n",
	       tasks);
	if (!bench->have_supervisord || !bench->have_s6)
		printf("  (%s%s%s skipped: %s)\n", bench->have_supervisord ? "" : "supervisord",
		       !bench->have_supervisord && !bench->have_s6 ? " and " : "",
		       bench->have_s6 ? "" : "s6",
		       settings->quick ? "--quick"
				       : "not installed (apt-get install supervisor s6)");
	printf("\n");
	for (int row = 0; row < ROW_COUNT; row++)
		free(rows[row].times.values);
}

/* ---- part 2: requests per second -------------------------------------------- */

struct rate {
	unsigned long calls;
	int64_t wall_ns;
	int64_t server_cpu_ns; /* -1: no server */
};

static void print_rate(const char *label, const struct rate *rate)
{
	double seconds = (double)rate->wall_ns / 1e9;
	double per_second = (double)rate->calls / seconds;
	char cpu[32];
	printf("  %-52s %8lu %7.2f %10.*f %10s\n", label, rate->calls, seconds,
	       per_second < 100 ? 1 : 0, per_second,
	       format_cpu(rate->server_cpu_ns, rate->calls, cpu, sizeof(cpu)));
}

/* A CLI back to back for `seconds` (and at least 3 calls). */
static struct rate cli_rate(char *const argv[], pid_t server, double seconds)
{
	struct rate rate = {0};
	int64_t cpu_before = server_cpu_ns(server);
	int64_t start = now_ns(), end = start + (int64_t)(seconds * 1e9);
	while (now_ns() < end || rate.calls < 3) {
		run_checked(argv);
		rate.calls++;
	}
	rate.wall_ns = now_ns() - start;
	rate.server_cpu_ns = server > 0 ? server_cpu_ns(server) - cpu_before : -1;
	return rate;
}

/* connect, one request, close; for `seconds`. */
static struct rate connect_rate(const char *path, const char *request, double seconds)
{
	struct rate rate = {0};
	struct text reply = {0};
	pid_t corral = tool_pids[TOOL_CORRAL];
	int64_t cpu_before = server_cpu_ns(corral);
	int64_t start = now_ns(), end = start + (int64_t)(seconds * 1e9);
	while (now_ns() < end) {
		int fd = raw_connect(path);
		if (fd < 0)
			die("connect %s: %s", path, strerror(errno));
		raw_call_checked(fd, request, &reply);
		close(fd);
		rate.calls++;
	}
	rate.wall_ns = now_ns() - start;
	rate.server_cpu_ns = server_cpu_ns(corral) - cpu_before;
	free(reply.data);
	return rate;
}

/* `count` requests (or, with count 0, `seconds` of them) ping-pong on the
 * connection `fd` to `server`; latencies (µs) into `latencies`. */
static struct rate ping_pong_on(int fd, pid_t server, const char *request, unsigned count,
				double seconds, struct series *latencies)
{
	struct rate rate = {0};
	struct text reply = {0};
	int64_t cpu_before = server_cpu_ns(server);
	int64_t start = now_ns(), end = start + (int64_t)(seconds * 1e9);
	for (;;) {
		if (count ? rate.calls >= count : now_ns() >= end)
			break;
		int64_t before = now_ns();
		raw_call_checked(fd, request, &reply);
		if (latencies)
			series_add(latencies, (double)(now_ns() - before) / 1e3);
		rate.calls++;
	}
	rate.wall_ns = now_ns() - start;
	rate.server_cpu_ns = server_cpu_ns(server) - cpu_before;
	free(reply.data);
	return rate;
}

/* The same on a new connection to corral. */
static struct rate ping_pong_rate(const char *path, const char *request, unsigned count,
				  double seconds, struct series *latencies)
{
	int fd = raw_connect(path);
	if (fd < 0)
		die("connect %s: %s", path, strerror(errno));
	struct rate rate =
	    ping_pong_on(fd, tool_pids[TOOL_CORRAL], request, count, seconds, latencies);
	close(fd);
	return rate;
}

/* The size of corral's reply to `request`, newline included. */
static size_t reply_size(const char *path, const char *request)
{
	struct text reply = {0};
	int fd = raw_connect(path);
	if (fd < 0)
		die("connect %s: %s", path, strerror(errno));
	size_t size = raw_call_checked(fd, request, &reply);
	close(fd);
	free(reply.data);
	return size;
}

/* The echo server's ping-pong (ping_pong_floor.h): the floor of any
 * server answering `request` with `size` bytes on this machine. */
static struct rate echo_rate(const char *request, size_t size, unsigned count, int pin_cpu)
{
	int fd;
	pid_t server = echo_server_start(size, &fd);
	cpu_set_t saved;
	bool pinned = pin_cpu >= 0 && pin_to_cpu(server, pin_cpu, &saved);
	if (pin_cpu >= 0 && !pinned)
		die("pinning the echo server to CPU %d: %s", pin_cpu, strerror(errno));
	struct rate rate = ping_pong_on(fd, server, request, count, 0, NULL);
	echo_server_stop(server, fd);
	return rate;
}

/* The ping-pong rows of corral and of the echo server, unpinned and with
 * the bench and the server on one CPU. */
struct floor_rows {
	size_t reply_size;
	struct rate echo; /* unpinned */
	struct rate corral_pinned, echo_pinned;
	int cpu;              /* the CPU of the pinned rows */
	char pin_failure[96]; /* why there are no pinned rows, or "" */
};

static void measure_floor(struct floor_rows *rows, const char *path, const char *request,
			  unsigned count)
{
	rows->reply_size = reply_size(path, request);
	rows->echo = echo_rate(request, rows->reply_size, count, -1);
	rows->cpu = first_allowed_cpu();
	pid_t corral = tool_pids[TOOL_CORRAL];
	cpu_set_t bench_saved, corral_saved;
	if (!pin_to_cpu(0, rows->cpu, &bench_saved)) {
		snprintf(rows->pin_failure, sizeof(rows->pin_failure), "pinning the bench: %s",
			 strerror(errno));
		return;
	}
	if (!pin_to_cpu(corral, rows->cpu, &corral_saved)) {
		snprintf(rows->pin_failure, sizeof(rows->pin_failure), "pinning corral: %s",
			 strerror(errno));
		pin_restore(0, &bench_saved);
		return;
	}
	rows->corral_pinned = ping_pong_rate(path, request, count, 0, NULL);
	pin_restore(corral, &corral_saved);
	rows->echo_pinned = echo_rate(request, rows->reply_size, count, rows->cpu);
	pin_restore(0, &bench_saved);
}

static double per_second(const struct rate *rate)
{
	return rate->wall_ns > 0 ? (double)rate->calls / ((double)rate->wall_ns / 1e9) : 0;
}

/* A rate and, after it, its share of the floor measured in the same mode. */
static void print_rate_against(const char *label, const struct rate *rate, const struct rate *floor)
{
	char with_share[128];
	snprintf(with_share, sizeof(with_share), "%s (%.2f of echo)", label,
		 per_second(rate) / per_second(floor));
	print_rate(with_share, rate);
}

#define AIM_REQUESTS_PER_SECOND 40000.0

/* Issue 16's aim for one connection, against the same run's rows. */
static void print_floor_aim(const struct rate *corral, const struct floor_rows *rows)
{
	double unpinned = per_second(corral);
	printf("  corral, one connection, against the aim (>= %.0fk requests/s): unpinned "
	       "%.0f/s %s\n  (echo floor %.0f/s)",
	       AIM_REQUESTS_PER_SECOND / 1000, unpinned,
	       unpinned >= AIM_REQUESTS_PER_SECOND ? "met" : "not met", per_second(&rows->echo));
	if (rows->pin_failure[0]) {
		printf("; pinned: skipped (%s)\n", rows->pin_failure);
		return;
	}
	double pinned = per_second(&rows->corral_pinned);
	printf("; pinned to CPU %d %.0f/s %s (echo floor %.0f/s).\n", rows->cpu, pinned,
	       pinned >= AIM_REQUESTS_PER_SECOND ? "met" : "not met",
	       per_second(&rows->echo_pinned));
}

struct client_result {
	unsigned long calls, errors;
	int64_t wall_ns;
	int failure; /* errno of a failed connect or call, -1 for a close */
	char first_error[160];
};

/* A client process: connect, say so, wait for the start, then ping-pong
 * until the time is up; the result goes back through `result_fd`. */
static void client_process(const char *path, const char *request, double seconds, int ready_fd,
			   int go_fd, int result_fd)
{
	struct client_result result = {0};
	struct text reply = {0};
	exit_with_parent(SIGKILL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	int fd = raw_connect(path);
	char ready = fd >= 0 ? 'r' : 'e';
	if (write(ready_fd, &ready, 1) != 1 || fd < 0)
		_exit(1);
	char go;
	while (read(go_fd, &go, 1) < 0 && errno == EINTR)
		; /* EOF: the parent closed it, all at once */
	int64_t start = now_ns(), end = start + (int64_t)(seconds * 1e9);
	size_t request_length = strlen(request);
	while (now_ns() < end) {
		ssize_t length = raw_call(fd, request, request_length, &reply);
		if (length < 0) {
			result.failure = length == -2 ? EPROTO : errno ? errno : -1;
			break;
		}
		result.calls++;
		if (!reply_ok(&reply) && result.errors++ == 0)
			snprintf(result.first_error, sizeof(result.first_error), "%s", reply.data);
	}
	result.wall_ns = now_ns() - start;
	if (write(result_fd, &result, sizeof(result)) != (ssize_t)sizeof(result))
		_exit(1);
	_exit(0);
}

/* Read exactly `size` bytes. */
static void read_exact(int fd, void *buffer, size_t size, const char *what)
{
	char *at = buffer;
	while (size > 0) {
		ssize_t got = read(fd, at, size);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			die("reading %s from the client processes: %s", what,
			    got == 0 ? "a client exited early" : strerror(errno));
		at += got;
		size -= (size_t)got;
	}
}

static struct rate many_clients_rate(const char *path, const char *request, unsigned clients,
				     double seconds, double *min_rate, double *max_rate)
{
	int ready[2], go[2], results[2];
	if (pipe2(ready, O_CLOEXEC) < 0 || pipe2(go, O_CLOEXEC) < 0 ||
	    pipe2(results, O_CLOEXEC) < 0)
		die("pipe: %s", strerror(errno));
	pid_t *pids = calloc(clients, sizeof(pid_t));
	if (!pids)
		die("out of memory");
	for (unsigned i = 0; i < clients; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			die("fork: %s", strerror(errno));
		if (pids[i] == 0) {
			close(go[1]);
			close(ready[0]);
			close(results[0]);
			client_process(path, request, seconds, ready[1], go[0], results[1]);
		}
	}
	close(ready[1]);
	close(go[0]);
	close(results[1]);
	unsigned connected = 0;
	for (unsigned i = 0; i < clients; i++) {
		char byte;
		read_exact(ready[0], &byte, 1, "readiness");
		connected += byte == 'r';
	}
	if (connected != clients)
		die("only %u of %u client processes could connect to %s", connected, clients, path);

	pid_t corral = tool_pids[TOOL_CORRAL];
	int64_t cpu_before = server_cpu_ns(corral);
	close(go[1]); /* go */
	struct rate rate = {0};
	*min_rate = 1e300;
	*max_rate = 0;
	unsigned long errors = 0;
	char first_error[160] = "";
	int failure = 0;
	for (unsigned i = 0; i < clients; i++) {
		struct client_result result;
		read_exact(results[0], &result, sizeof(result), "results");
		rate.calls += result.calls;
		if (result.wall_ns > rate.wall_ns)
			rate.wall_ns = result.wall_ns;
		double per_second = (double)result.calls / ((double)result.wall_ns / 1e9);
		if (per_second < *min_rate)
			*min_rate = per_second;
		if (per_second > *max_rate)
			*max_rate = per_second;
		if (result.errors && !errors)
			snprintf(first_error, sizeof(first_error), "%s", result.first_error);
		errors += result.errors;
		if (result.failure && !failure)
			failure = result.failure;
	}
	rate.server_cpu_ns = server_cpu_ns(corral) - cpu_before;
	for (unsigned i = 0; i < clients; i++)
		while (waitpid(pids[i], NULL, 0) < 0 && errno == EINTR)
			;
	close(ready[0]);
	close(results[0]);
	free(pids);
	if (failure)
		die("a client's connection failed: %s",
		    failure > 0 ? strerror(failure) : "closed by corral");
	if (errors)
		die("%lu of %lu replies were errors; the first: %s", errors, rate.calls,
		    first_error);
	return rate;
}

/* A status of all tasks after a quiet spell longer than any usage reading
 * is kept fresh (the cache is cold: every reading is stale), `count`
 * times: the round trip of each (the reply's wait), and corral's CPU over
 * them, read from its CPU-time clock (precise even while it runs) as the
 * reply is in, and again once it sleeps (what the reply started after it
 * included: a corral that reads usage after replying does it then). */
#define QUIET_SPELL_MS 6000
struct cold_status {
	struct rate rate;
	int64_t cpu_by_reply_ns; /* summed; -1: no CPU clock for corral */
};

static struct cold_status cold_status(const char *path, const char *request, unsigned count,
				      struct series *latencies)
{
	pid_t corral = tool_pids[TOOL_CORRAL];
	struct cold_status cold = {0};
	clockid_t cpu_clock;
	if (clock_getcpuclockid(corral, &cpu_clock) != 0)
		cold.cpu_by_reply_ns = -1;
	struct text reply = {0};
	int fd = raw_connect(path);
	if (fd < 0)
		die("connect %s: %s", path, strerror(errno));
	for (unsigned i = 0; i < count; i++) {
		sleep_ms(QUIET_SPELL_MS);
		int64_t cpu_before = server_cpu_ns(corral);
		int64_t clock_before = cold.cpu_by_reply_ns >= 0 ? clock_ns(cpu_clock) : -1;
		int64_t start = now_ns();
		raw_call_checked(fd, request, &reply);
		int64_t wall = now_ns() - start;
		int64_t clock_after = clock_before >= 0 ? clock_ns(cpu_clock) : -1;
		if (clock_before >= 0 && clock_after >= 0)
			cold.cpu_by_reply_ns += clock_after - clock_before;
		else
			cold.cpu_by_reply_ns = -1;
		series_add(latencies, (double)wall / 1e6);
		cold.rate.wall_ns += wall;
		cold.rate.server_cpu_ns += server_cpu_ns(corral) - cpu_before;
		cold.rate.calls++;
	}
	close(fd);
	free(reply.data);
	return cold;
}

static void bench_rates(struct bench *bench)
{
	const struct settings *settings = bench->settings;
	char *corral = (char *)settings->corral, *socket_path = bench->corral_socket;
	char target[64], one_name[16];
	snprintf(one_name, sizeof(one_name), "%s", task_name(1));
	snprintf(target, sizeof(target), "g/%s", one_name);
	char request_one[128];
	snprintf(request_one, sizeof(request_one),
		 "{\"version\":1,\"command\":\"status\",\"target\":\"%s\"}\n", target);
	const char request_all[] = "{\"version\":1,\"command\":\"status\"}\n";
	double seconds = settings->rate_seconds;
	char label[128];

	char *corral_one[] = {corral, "status", "--socket", socket_path, target, NULL};
	struct rate corral_cli = cli_rate(corral_one, tool_pids[TOOL_CORRAL], seconds);
	struct rate ctl_cli = {0}, s6_cli = {0};
	if (bench->have_supervisord) {
		char *ctl_one[] = {
		    bench->supervisorctl, "-c", bench->supervisord_conf, "status", one_name, NULL};
		ctl_cli = cli_rate(ctl_one, tool_pids[TOOL_SUPERVISORD], seconds);
	}
	if (bench->have_s6) {
		char *svstat[] = {bench->s6_svstat, bench->s6_services[0], NULL};
		s6_cli = cli_rate(svstat, 0, seconds);
	}
	struct rate reconnect = connect_rate(socket_path, request_one, seconds);
	struct series latencies = {0};
	struct rate one =
	    ping_pong_rate(socket_path, request_one, settings->ping_pong_count, 0, &latencies);
	struct floor_rows floor = {0};
	measure_floor(&floor, socket_path, request_one, settings->ping_pong_count);
	double min_rate, max_rate;
	struct rate many = many_clients_rate(socket_path, request_one, settings->clients,
					     settings->clients_seconds, &min_rate, &max_rate);
	struct series all_latencies = {0};
	struct rate all = ping_pong_rate(socket_path, request_all, 0, seconds, &all_latencies);
	struct series cold_latencies = {0};
	struct cold_status cold = {0};
	if (!settings->quick)
		cold = cold_status(socket_path, request_all, 3, &cold_latencies);

	printf("2. Requests per second: status of one task (%s), %u tasks supervised\n", target,
	       settings->tasks);
	printf("  %-52s %8s %7s %10s %10s\n", "", "calls", "seconds", "calls/s", "server CPU");
	printf("  %-52s %8s %7s %10s %10s\n", "", "", "", "", "us/call");
	printf("  through each CLI, one call after the other:\n");
	snprintf(label, sizeof(label), "corral status %s", target);
	print_rate(label, &corral_cli);
	if (bench->have_supervisord) {
		snprintf(label, sizeof(label), "supervisorctl status %s", one_name);
		print_rate(label, &ctl_cli);
	}
	if (bench->have_s6) {
		snprintf(label, sizeof(label), "s6-svstat scan/%s", one_name);
		print_rate(label, &s6_cli);
	}
	printf("  corral's protocol, spoken by the bench (no process started per call):\n");
	print_rate("a new connection per request", &reconnect);
	series_sort(&latencies);
	print_rate_against("one connection, ping-pong", &one, &floor.echo);
	snprintf(label, sizeof(label), "echo server, %zu-byte replies (the floor)",
		 floor.reply_size);
	print_rate(label, &floor.echo);
	if (floor.pin_failure[0]) {
		printf("  pinned to one CPU: skipped (%s)\n", floor.pin_failure);
	} else {
		printf("  the same, the bench and the server pinned to CPU %d:\n", floor.cpu);
		print_rate_against("one connection, ping-pong", &floor.corral_pinned,
				   &floor.echo_pinned);
		print_rate(label, &floor.echo_pinned);
	}
	snprintf(label, sizeof(label), "%u connections at once (a process each), ping-pong",
		 settings->clients);
	print_rate(label, &many);
	printf("  and the status of all %u tasks:\n", settings->tasks);
	print_rate("one connection, ping-pong", &all);
	series_sort(&all_latencies);
	printf("  one connection, round trip: one task median %.1f us, p99 %.1f us, max %.1f us;\n"
	       "  all tasks median %.1f us, p99 %.1f us, max %.1f us.\n",
	       series_median(&latencies), series_quantile(&latencies, 0.99), series_max(&latencies),
	       series_median(&all_latencies), series_quantile(&all_latencies, 0.99),
	       series_max(&all_latencies));
	if (cold.rate.calls) {
		series_sort(&cold_latencies);
		printf("  all tasks after %d s of quiet (every usage reading stale), %lu calls: "
		       "round trip\n  median %.1f us, max %.1f us; corral's CPU a call: %.0f us by "
		       "the time the reply\n  was in, %.0f us until it slept again.\n",
		       QUIET_SPELL_MS / 1000, cold.rate.calls,
		       series_median(&cold_latencies) * 1000, series_max(&cold_latencies) * 1000,
		       cold.cpu_by_reply_ns < 0
			   ? -1.0
			   : (double)cold.cpu_by_reply_ns / 1e3 / (double)cold.rate.calls,
		       (double)cold.rate.server_cpu_ns / 1e3 / (double)cold.rate.calls);
	}
	printf("  %u connections: per connection %.0f to %.0f requests/s; seconds = the\n"
	       "  longest client's run. Server CPU: corral's or supervisord's own CPU over the\n"
	       "  loop, per call (client and server share the %ld CPUs).\n",
	       settings->clients, min_rate, max_rate, sysconf(_SC_NPROCESSORS_ONLN));
	printf("  The echo server (tests/bench/ping_pong_floor.c) answers each request\n"
	       "  with as many bytes as corral's reply, and does nothing else: no server\n"
	       "  can ping-pong faster here in the same mode.\n");
	print_floor_aim(&one, &floor);
	if (!bench->have_supervisord || !bench->have_s6)
		printf("  (%s%s%s skipped, as in part 1)\n",
		       bench->have_supervisord ? "" : "supervisorctl",
		       !bench->have_supervisord && !bench->have_s6 ? " and " : "",
		       bench->have_s6 ? "" : "s6-svstat");
	printf("\n");
	free(latencies.values);
	free(all_latencies.values);
	free(cold_latencies.values);
}

/* ---- part 3: memory ------------------------------------------------------- */

/* CPU time of a supervisor, and with `with_children` of its children
 * (s6-svscan's s6-supervise processes), in ns. */
static int64_t tool_cpu_ns(pid_t pid, bool with_children)
{
	int64_t total = process_cpu_ns(pid);
	if (with_children) {
		static pid_t children[32768];
		size_t count = list_children(pid, children, sizeof(children) / sizeof(children[0]));
		for (size_t i = 0; i < count; i++) {
			int64_t cpu = process_cpu_ns(children[i]);
			total += cpu > 0 ? cpu : 0;
		}
	}
	return total;
}

static void print_memory(const char *label, const struct memory *before, const struct memory *after,
			 int64_t idle_cpu_ns, double started_ms)
{
	printf("  %-30s %9u %9.1f %9.1f %9.1f %10.1f %10.0f\n", label, after->processes,
	       (double)before->rss_kib / 1024, (double)before->pss_kib / 1024,
	       (double)after->rss_kib / 1024, (double)idle_cpu_ns / 1e6, started_ms);
}

/* ---- main ------------------------------------------------------------------ */

static void free_bench(struct bench *bench)
{
	char *strings[] = {bench->corral_socket, bench->corral_log,       bench->supervisord,
			   bench->supervisorctl, bench->supervisord_conf, bench->supervisord_log,
			   bench->s6_svscan,     bench->s6_svstat,        bench->s6_scan,
			   bench->s6_log};
	for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++)
		free(strings[i]);
	if (bench->s6_services)
		for (unsigned i = 0; i < bench->settings->tasks; i++)
			free(bench->s6_services[i]);
	free(bench->s6_services);
	for (int tool = 0; tool < TOOL_COUNT; tool++)
		free(bench->versions[tool]);
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: bench_control [--corral PATH] [--tasks N] [--quick]\n\n"
		"  --corral PATH  the corral binary (default build-dev/corral)\n"
		"  --tasks N      tasks each supervisor runs (default 1000; --quick: 50)\n"
		"  --quick        small sizes, corral only: a smoke test of the bench itself\n");
}

int main(int argc, char **argv)
{
	bench_init("bench_control", cleanup);
	struct settings settings = {
	    .corral = "build-dev/corral",
	    .tasks = 1000,
	    .cli_rounds = 20,
	    .s6_sweeps = 5,
	    .raw_per_round = 5,
	    .rate_seconds = 2.0,
	    .ping_pong_count = 20000,
	    .clients = 50,
	    .clients_seconds = 2.0,
	};
	struct bench_options options = {.corral = settings.corral};
	int exit_code = parse_options(argc, argv, true, usage, &options);
	if (exit_code >= 0)
		return exit_code;
	settings.corral = options.corral;
	settings.quick = options.quick;
	if (settings.quick) {
		settings.tasks = 50;
		settings.cli_rounds = 5;
		settings.raw_per_round = 2;
		settings.rate_seconds = 0.3;
		settings.ping_pong_count = 2000;
		settings.clients = 4;
		settings.clients_seconds = 0.3;
	}
	if (options.tasks)
		settings.tasks = options.tasks;
	/* The socket comes from the config and --socket, never from here. */
	unsetenv("CORRAL_SOCKET");
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) {
		fprintf(stderr, "bench_control: PR_SET_CHILD_SUBREAPER: %s\n", strerror(errno));
		return 1;
	}

	struct bench bench = {.settings = &settings};
	if (!settings.quick) {
		bench.supervisord = find_program("supervisord");
		bench.supervisorctl = find_program("supervisorctl");
		bench.s6_svscan = find_program("s6-svscan");
		bench.s6_svstat = find_program("s6-svstat");
		bench.have_supervisord = bench.supervisord && bench.supervisorctl;
		bench.have_s6 = bench.s6_svscan && bench.s6_svstat;
	}

	make_temp_dir("/tmp/corral-bench-control.XXXXXX");
	catch_fatal_signals();
	null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	cli_stderr_path = temp_path("cli.stderr");
	cli_stderr_fd = open(cli_stderr_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (null_fd < 0 || cli_stderr_fd < 0)
		die("open %s: %s", cli_stderr_path, strerror(errno));

	bench.versions[TOOL_CORRAL] = program_version(settings.corral);
	if (bench.have_supervisord)
		bench.versions[TOOL_SUPERVISORD] = program_version(bench.supervisord);

	print_machine_line(settings.quick, settings.corral, bench.versions[TOOL_CORRAL]);
	if (bench.have_supervisord)
		printf("  supervisord %s (%s, %s)\n", bench.versions[TOOL_SUPERVISORD],
		       bench.supervisord, bench.supervisorctl);
	else
		printf("  supervisord: skipped (%s)\n",
		       settings.quick ? "--quick" : "supervisord or supervisorctl not in PATH");
	if (bench.have_s6)
		printf("  s6: %s, %s\n", bench.s6_svscan, bench.s6_svstat);
	else
		printf("  s6: skipped (%s)\n",
		       settings.quick ? "--quick" : "s6-svscan or s6-svstat not in PATH");
	printf("  each supervisor runs %u tasks `sleep 1000`, never restarted\n\n", settings.tasks);
	fflush(stdout);

	/* One after the other, each waited for: they do not compete while
	 * starting. All three then stay up for the whole run. */
	start_corral(&bench);
	struct memory memory_before[TOOL_COUNT] = {{0}};
	memory_before[TOOL_CORRAL] = tool_memory(tool_pids[TOOL_CORRAL], false);
	if (bench.have_supervisord) {
		start_supervisord(&bench);
		memory_before[TOOL_SUPERVISORD] = tool_memory(tool_pids[TOOL_SUPERVISORD], false);
	}
	if (bench.have_s6) {
		start_s6(&bench);
		memory_before[TOOL_S6] = tool_memory(tool_pids[TOOL_S6], true);
	}
	if (bench.have_s6 && memory_before[TOOL_S6].processes != settings.tasks + 1)
		die("s6-svscan has %u s6-supervise children, expected %u",
		    memory_before[TOOL_S6].processes - 1, settings.tasks);
	/* Let the last starts settle, then see what each costs while idle,
	 * all three over the same period. */
	sleep_ms(settings.quick ? 100 : 1000);
	unsigned idle_ms = settings.quick ? 300 : 5000;
	int64_t idle_cpu_ns[TOOL_COUNT] = {0};
	for (int tool = 0; tool < TOOL_COUNT; tool++)
		if (tool_pids[tool] > 0)
			idle_cpu_ns[tool] = -tool_cpu_ns(tool_pids[tool], tool == TOOL_S6);
	sleep_ms(idle_ms);
	for (int tool = 0; tool < TOOL_COUNT; tool++)
		if (tool_pids[tool] > 0)
			idle_cpu_ns[tool] += tool_cpu_ns(tool_pids[tool], tool == TOOL_S6);

	bench_cli(&bench);
	fflush(stdout);
	bench_rates(&bench);
	fflush(stdout);

	struct memory memory_after[TOOL_COUNT] = {{0}};
	memory_after[TOOL_CORRAL] = tool_memory(tool_pids[TOOL_CORRAL], false);
	if (bench.have_supervisord)
		memory_after[TOOL_SUPERVISORD] = tool_memory(tool_pids[TOOL_SUPERVISORD], false);
	if (bench.have_s6)
		memory_after[TOOL_S6] = tool_memory(tool_pids[TOOL_S6], true);
	printf("3. Each supervisor with %u tasks, for context (the tasks' own memory and CPU\n"
	       "   not counted)\n",
	       settings.tasks);
	printf("  %-30s %9s %9s %9s %9s %10s %10s\n", "", "processes", "RSS", "PSS", "RSS",
	       "idle CPU", "all up in");
	printf("  %-30s %9s %9s %9s %9s\n", "", "", "", "", "after 1-2");
	printf("  %-30s %9s %9s %9s %9s %10s %10s\n", "", "", "MiB", "MiB", "MiB", "ms", "ms");
	print_memory("corral", &memory_before[TOOL_CORRAL], &memory_after[TOOL_CORRAL],
		     idle_cpu_ns[TOOL_CORRAL], bench.started_ms[TOOL_CORRAL]);
	if (bench.have_supervisord)
		print_memory("supervisord", &memory_before[TOOL_SUPERVISORD],
			     &memory_after[TOOL_SUPERVISORD], idle_cpu_ns[TOOL_SUPERVISORD],
			     bench.started_ms[TOOL_SUPERVISORD]);
	if (bench.have_s6)
		print_memory("s6-svscan + s6-supervise", &memory_before[TOOL_S6],
			     &memory_after[TOOL_S6], idle_cpu_ns[TOOL_S6],
			     bench.started_ms[TOOL_S6]);
	printf("  RSS, PSS: VmRSS and smaps_rollup's Pss, summed over the processes, just after\n"
	       "  all tasks were up; PSS divides pages that processes share among them, so only\n"
	       "  PSS adds up fairly over many processes. RSS after 1-2: at the end of parts 1\n"
	       "  and 2. Idle CPU: CPU used over %.1f s before part 1, all three idle side by\n"
	       "  side. All up in: from the fork of the supervisor until its own status tool\n"
	       "  showed every task running, as polled by the bench (polls included; the\n"
	       "  supervisors were started one at a time).\n",
	       idle_ms / 1000.0);
	fflush(stdout);

	unsigned leftovers = stop_everything();
	if (leftovers)
		fprintf(stderr,
			"bench_control: %u processes were still alive after the supervisors had "
			"stopped, and were killed\n",
			leftovers);
	free_bench(&bench);
	free(output.data);
	free(cli_stderr_path);
	close(cli_stderr_fd);
	close(null_fd);
	return 0;
}
