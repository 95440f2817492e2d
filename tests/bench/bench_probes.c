/* bench_probes: what health probes cost corral, by kind, in one run.
 *
 * N tasks (1000; --quick 100) that sleep, each with a health probe every
 * second: a `tcp` probe (a connection corral makes from its loop) against a
 * listener the bench runs, then the same with an `exec` probe of
 * /bin/true (a process per run). For each, after every task is running and
 * the probes are under way, the CPU over a window: corral's own (utime +
 * stime) and that of the processes it reaped (cutime + cstime: the exec
 * probes), per second of wall time, and per probe run.
 *
 * Usage: bench_probes [--corral PATH] [--quick] [--tasks N] */
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common.h"

static pid_t listener_pid, corral_pid;

static void cleanup(void)
{
	if (corral_pid > 0)
		kill(corral_pid, SIGKILL);
	if (listener_pid > 0)
		kill(listener_pid, SIGKILL);
	remove_temp_dir();
}

static void usage(FILE *out)
{
	fprintf(out, "usage: bench_probes [--corral PATH] [--quick] [--tasks N]\n\n"
		     "corral's CPU for N tasks with a health probe every second: tcp (no\n"
		     "process) against exec /bin/true (a process per run), in one run.\n");
}

/* A listener that accepts and closes, forever: the tcp probes' server. */
static int start_listener(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in address = {.sin_family = AF_INET,
				      .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t size = sizeof(address);
	if (fd < 0 || bind(fd, (struct sockaddr *)&address, size) < 0 || listen(fd, 4096) < 0 ||
	    getsockname(fd, (struct sockaddr *)&address, &size) < 0)
		die("listener: %s", strerror(errno));
	listener_pid = fork();
	if (listener_pid < 0)
		die("fork: %s", strerror(errno));
	if (listener_pid == 0) {
		exit_with_parent(SIGKILL);
		for (;;) {
			int client = accept(fd, NULL, NULL);
			if (client >= 0)
				close(client);
		}
	}
	close(fd);
	return ntohs(address.sin_port);
}

static void write_config(const char *path, const char *socket_path, unsigned tasks,
			 const char *health)
{
	struct text text = {0};
	text_append(&text, "socket: \"%s\"\ngroups:\n  bench:\n    tasks:\n", socket_path);
	for (unsigned i = 1; i <= tasks; i++)
		text_append(&text,
			    "      t%04u: {command: [sleep, \"100000\"], restart: {policy: never}, "
			    "health: %s}\n",
			    i, health);
	write_file(path, text.data, text.length, 0644);
	free(text.data);
}

/* utime + stime (own) and cutime + cstime (reaped children), in ticks. */
static void cpu_ticks(pid_t pid, long long *own, long long *children)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	char *stat = read_file(path, NULL);
	if (!stat)
		die("%s: cannot read", path);
	/* After the command's closing parenthesis: field 3, the state (a
	 * letter), then numbers from field 4 on. */
	char *cursor = strrchr(stat, ')') + 4;
	long long field[18] = {0};
	for (int i = 4; i <= 17; i++)
		field[i] = strtoll(cursor, &cursor, 10);
	free(stat);
	*own = field[14] + field[15];
	*children = field[16] + field[17];
}

struct figures {
	double own_percent, children_percent, own_us_per_run, total_us_per_run;
};

static struct figures measure(const char *corral, unsigned tasks, const char *health,
			      const char *name, unsigned warmup_s, unsigned window_s)
{
	char *config = temp_path("%s.yaml", name), *socket_path = temp_path("%s.sock", name);
	write_config(config, socket_path, tasks, health);
	corral_pid = fork();
	if (corral_pid < 0)
		die("fork: %s", strerror(errno));
	if (corral_pid == 0) {
		exit_with_parent(SIGKILL);
		FILE *null = freopen("/dev/null", "w", stdout);
		null = null ? freopen("/dev/null", "w", stderr) : NULL;
		(void)null;
		execl(corral, corral, "run", config, (char *)NULL);
		_exit(127);
	}
	sleep_ms(warmup_s * 1000);
	long long own0, children0, own1, children1;
	cpu_ticks(corral_pid, &own0, &children0);
	int64_t start = now_ns();
	sleep_ms(window_s * 1000);
	cpu_ticks(corral_pid, &own1, &children1);
	double seconds = (double)(now_ns() - start) / 1e9;
	stop_process(corral_pid, 30000);
	corral_pid = 0;
	double tick_s = 1.0 / (double)sysconf(_SC_CLK_TCK);
	double own = (double)(own1 - own0) * tick_s,
	       children = (double)(children1 - children0) * tick_s;
	double runs = (double)tasks * seconds; /* one probe a second per task */
	free(config);
	free(socket_path);
	return (struct figures){
	    .own_percent = 100.0 * own / seconds,
	    .children_percent = 100.0 * children / seconds,
	    .own_us_per_run = own * 1e6 / runs,
	    .total_us_per_run = (own + children) * 1e6 / runs,
	};
}

int main(int argc, char **argv)
{
	bench_init("bench_probes", cleanup);
	struct bench_options options = {.corral = "build/corral"};
	int exit_code = parse_options(argc, argv, true, usage, &options);
	if (exit_code >= 0)
		return exit_code;
	unsigned tasks = options.tasks ? options.tasks : options.quick ? 100 : 1000;
	unsigned warmup_s = options.quick ? 3 : 3 + tasks / 250, window_s = options.quick ? 3 : 10;
	catch_fatal_signals();
	/* The exec probes' processes are corral's children: reaped by it, so
	 * counted in its cutime; nothing of theirs must escape to us. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	make_temp_dir("/tmp/bench_probes.XXXXXX");
	print_machine_line(options.quick, options.corral, NULL);
	printf("%u tasks, a health probe every 1s each; CPU over %us after %us of warm-up\n", tasks,
	       window_s, warmup_s);
	fflush(stdout); /* before the forks, which would print it again */

	int port = start_listener();
	char tcp[64];
	snprintf(tcp, sizeof(tcp), "{tcp: %d, interval: 1s}", port);
	struct figures by_tcp = measure(options.corral, tasks, tcp, "tcp", warmup_s, window_s);
	struct figures by_exec = measure(options.corral, tasks, "{exec: [/bin/true], interval: 1s}",
					 "exec", warmup_s, window_s);

	printf("%-6s %14s %18s %16s %18s\n", "probe", "corral CPU %", "probe processes %",
	       "corral us/run", "all CPU us/run");
	printf("%-6s %14.1f %18.1f %16.1f %18.1f\n", "tcp", by_tcp.own_percent,
	       by_tcp.children_percent, by_tcp.own_us_per_run, by_tcp.total_us_per_run);
	printf("%-6s %14.1f %18.1f %16.1f %18.1f\n", "exec", by_exec.own_percent,
	       by_exec.children_percent, by_exec.own_us_per_run, by_exec.total_us_per_run);
	if (by_tcp.total_us_per_run > 0)
		printf("exec costs %.1fx the CPU of tcp per probe run\n",
		       by_exec.total_us_per_run / by_tcp.total_us_per_run);
	cleanup();
	return 0;
}
