/* bench_exec: entering a running isolated task, in one run.
 *
 * A task with pid, mount, uts, ipc, net and cgroup namespaces of its own,
 * the default capabilities and seccomp filter; then, N times each (200;
 * --quick 20), /bin/true run inside it by:
 *   - `corral exec g/t -- /bin/true` (the CLI, the request, the join, the
 *     capabilities and filter, the exit back to the CLI);
 *   - `nsenter --target PID --all /bin/true` (util-linux: the namespaces
 *     only, no cgroup, capabilities or filter), for comparison;
 *   - `runc exec` into a runc container of busybox-static, as Docker and
 *     Kubernetes enter containers.
 * Prints the median and 90th percentile wall time of each.
 *
 * Usage: bench_exec [--corral PATH] [--quick] */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

static pid_t corral_pid;

static void cleanup(void)
{
	if (corral_pid > 0)
		kill(corral_pid, SIGKILL);
	remove_temp_dir();
}

static void usage(FILE *out)
{
	fprintf(out, "usage: bench_exec [--corral PATH] [--quick]\n\n"
		     "/bin/true inside a running isolated task: corral exec against nsenter.\n");
}

/* Runs argv to its end, output to /dev/null; its wall time in ms, or -1. */
static double timed_run(char *const *argv)
{
	fflush(stdout); /* the child would print it again */
	int64_t start = now_ns();
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		FILE *null = freopen("/dev/null", "w", stdout);
		(void)null;
		execvp(argv[0], argv);
		_exit(127);
	}
	int status = reap_status(pid);
	double ms = (double)(now_ns() - start) / 1e6;
	return exit_code_of(status) == 0 ? ms : -1;
}

static void measure(const char *name, char *const *argv, unsigned rounds)
{
	struct series series = {0};
	for (unsigned i = 0; i < rounds; i++) {
		double ms = timed_run(argv);
		if (ms < 0)
			die("%s failed", name);
		series_add(&series, ms);
	}
	series_sort(&series);
	printf("%-34s %10.2f %10.2f\n", name, series_median(&series),
	       series_quantile(&series, 0.9));
	free(series.values);
}

/* runc exec into a detached runc container (busybox-static as its root,
 * `runc spec`'s namespaces, capabilities and filter): the same /bin/true.
 * Skipped, and said, without runc or busybox. */
static void measure_runc(unsigned rounds)
{
	char *bundle = temp_path("bundle"), *state = temp_path("runc-state");
	struct text script = {0};
	text_append(&script,
		    "set -e; command -v runc >/dev/null; busybox=$(command -v busybox);"
		    "mkdir -p %s/rootfs/bin; cp \"$busybox\" %s/rootfs/bin/busybox;"
		    "ln -s busybox %s/rootfs/bin/true; ln -s busybox %s/rootfs/bin/sleep;"
		    "cd %s; runc spec;"
		    "sed -i 's/\"terminal\": true/\"terminal\": false/; "
		    "s/\"sh\"$/\"sleep\", \"100000\"/' config.json;"
		    "runc --root %s run --detach --bundle %s bench-exec </dev/null >/dev/null 2>&1",
		    bundle, bundle, bundle, bundle, bundle, state, bundle);
	char *setup[] = {"/bin/sh", "-c", script.data, NULL};
	if (timed_run(setup) < 0) {
		printf("%-34s %10s %10s  (no runc or busybox, or runc run failed)\n", "runc exec",
		       "-", "-");
	} else {
		char *runc_exec[] = {"runc",       "--root",    state, "exec",
				     "bench-exec", "/bin/true", NULL};
		measure("runc exec (all of the container)", runc_exec, rounds);
	}
	char *remove[] = {"runc", "--root", state, "delete", "--force", "bench-exec", NULL};
	timed_run(remove);
	free(script.data);
	free(bundle);
	free(state);
}

int main(int argc, char **argv)
{
	bench_init("bench_exec", cleanup);
	struct bench_options options = {.corral = "build/corral"};
	int exit_code = parse_options(argc, argv, false, usage, &options);
	if (exit_code >= 0)
		return exit_code;
	unsigned rounds = options.quick ? 20 : 200;
	catch_fatal_signals();
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	make_temp_dir("/tmp/bench_exec.XXXXXX");
	print_machine_line(options.quick, options.corral, NULL);
	char *config = temp_path("exec.yaml"), *socket_path = temp_path("exec.sock");
	struct text text = {0};
	text_append(&text,
		    "socket: \"%s\"\ngroups:\n  g:\n    tasks:\n      t:\n"
		    "        command: [sleep, \"100000\"]\n"
		    "        isolation: {namespaces: [pid, mount, uts, ipc, net, cgroup]}\n"
		    "        restart: {policy: never}\n",
		    socket_path);
	write_file(config, text.data, text.length, 0644);
	free(text.data);
	setenv("CORRAL_SOCKET", socket_path, 1);
	fflush(stdout);
	corral_pid = fork();
	if (corral_pid < 0)
		die("fork: %s", strerror(errno));
	if (corral_pid == 0) {
		exit_with_parent(SIGKILL);
		FILE *null = freopen("/dev/null", "w", stderr);
		null = null ? freopen("/dev/null", "w", stdout) : NULL;
		(void)null;
		execl(options.corral, options.corral, "run", config, (char *)NULL);
		_exit(127);
	}
	/* The task's pid in corral's namespace, once it runs. */
	int64_t deadline = now_ns() + 30000000000LL;
	pid_t task_pid = 0;
	while (!task_pid) {
		if (now_ns() > deadline)
			die("the task did not start within 30 s");
		sleep_ms(50);
		char *argv_status[] = {(char *)options.corral, "status", "--json", NULL};
		int pipe_fds[2];
		if (pipe(pipe_fds) < 0)
			die("pipe: %s", strerror(errno));
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			dup2(pipe_fds[1], STDOUT_FILENO);
			execv(options.corral, argv_status);
			_exit(127);
		}
		close(pipe_fds[1]);
		char buffer[8192];
		ssize_t got = read(pipe_fds[0], buffer, sizeof(buffer) - 1);
		close(pipe_fds[0]);
		reap_status(pid);
		buffer[got > 0 ? got : 0] = '\0';
		/* The task's pid: not corral's ("corral": {"pid": ...}). */
		static const char running[] = "\"state\":\"running\",\"pid\":";
		char *field = strstr(buffer, running);
		if (field)
			task_pid = (pid_t)atoi(field + sizeof(running) - 1);
	}
	char target[16];
	snprintf(target, sizeof(target), "%d", (int)task_pid);
	printf("%u runs each of /bin/true inside an isolated task (pid %d); ms\n", rounds,
	       (int)task_pid);
	printf("%-34s %10s %10s\n", "", "median", "p90");
	char *corral_exec[] = {(char *)options.corral, "exec", "g/t", "--", "/bin/true", NULL};
	char *nsenter[] = {"nsenter", "--target", target, "--all", "/bin/true", NULL};
	measure("corral exec (all of the task)", corral_exec, rounds);
	measure("nsenter --all (namespaces only)", nsenter, rounds);
	measure_runc(rounds);
	stop_process(corral_pid, 30000);
	corral_pid = 0;
	free(config);
	free(socket_path);
	cleanup();
	return 0;
}
