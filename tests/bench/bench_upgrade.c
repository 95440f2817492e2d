/* bench_upgrade: how long `corral upgrade` pauses a corral supervising N
 * sleeping tasks (1000 by default).
 *
 * corral is started with --events; once every task started, `corral
 * upgrade` (its own binary) is run several times. For each:
 *   - the pause: from the last event of the old corral (upgrade_started,
 *     written just before the exec) to the first of the new one
 *     (upgraded, written once every task was taken over), as the event
 *     log's times say (ms);
 *   - what the new corral says it took (the document written to every
 *     task taken over, on the monotonic clock);
 *   - the client's wall time, fork of `corral upgrade` to its exit (the
 *     binary check, --handover-format, included).
 * Every task keeps its process: no "started" event comes after the first N.
 *
 * Usage: bench_upgrade [--corral PATH] [--quick] [--tasks N] */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

static volatile pid_t running_corral;

static void cleanup(void)
{
	if (running_corral > 0)
		stop_process(running_corral, 5000);
	remove_temp_dir();
}

static void usage(FILE *out)
{
	fprintf(out, "usage: bench_upgrade [--corral PATH] [--quick] [--tasks N]\n\n"
		     "The pause of `corral upgrade` with N sleeping tasks (default 1000;\n"
		     "--quick: 100 and 2 upgrades instead of 5).\n");
}

static pid_t spawn(const char *const *argv, const char *stderr_path)
{
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		exit_with_parent(SIGTERM);
		int null_fd = open("/dev/null", O_RDWR);
		int err_fd = open(stderr_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (null_fd < 0 || err_fd < 0)
			_exit(127);
		dup2(null_fd, STDIN_FILENO);
		dup2(null_fd, STDOUT_FILENO);
		dup2(err_fd, STDERR_FILENO);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	return pid;
}

/* The time of the last line of `events` that has `event`, or -1. */
static double last_event_time(const char *events, const char *event, char *message,
			      size_t message_size)
{
	char *content = read_file(events, NULL);
	double time = -1;
	char needle[64];
	snprintf(needle, sizeof(needle), "\"event\":\"%s\"", event);
	for (char *cursor = content, *line; cursor && (line = next_line(&cursor));) {
		if (!strstr(line, needle))
			continue;
		time = event_time(line);
		const char *said = strstr(line, "\"message\":\"");
		if (message && said)
			snprintf(message, message_size, "%s", said + strlen("\"message\":\""));
	}
	free(content);
	return time;
}

static size_t count_events(const char *events, const char *event)
{
	char *content = read_file(events, NULL);
	char needle[64];
	snprintf(needle, sizeof(needle), "\"event\":\"%s\"", event);
	size_t count = content ? count_occurrences(content, needle) : 0;
	free(content);
	return count;
}

int main(int argc, char **argv)
{
	bench_init("bench_upgrade", cleanup);
	struct bench_options options = {.corral = "build/corral"};
	int exit_code = parse_options(argc, argv, true, usage, &options);
	if (exit_code >= 0)
		return exit_code;
	unsigned tasks = options.tasks ? options.tasks : options.quick ? 100 : 1000;
	unsigned rounds = options.quick ? 2 : 5;
	catch_fatal_signals();
	make_temp_dir("/tmp/bench_upgrade.XXXXXX");
	use_own_control_socket();
	print_machine_line(options.quick, options.corral, NULL);

	char *config = temp_path("corral.yaml");
	char *events = temp_path("events.jsonl");
	char *log = temp_path("stderr.log");
	write_sleep_config(config, tasks, NULL);
	const char *run[] = {options.corral, "run", "--events", events, config, NULL};
	running_corral = spawn(run, log);
	int64_t start = now_ns();
	while (count_events(events, "started") < tasks) {
		if (waitpid(running_corral, NULL, WNOHANG) == running_corral) {
			running_corral = 0;
			die("corral exited before its tasks started: %s",
			    text_tail(read_file(log, NULL), 2000));
		}
		if (now_ns() - start > (30 + tasks / 100) * 1000000000LL)
			die("the %u tasks did not start in time", tasks);
		sleep_ms(50);
	}
	sleep_ms(500);

	struct series pause = {0}, taken = {0}, client = {0};
	for (unsigned round = 0; round < rounds; round++) {
		const char *upgrade[] = {options.corral, "upgrade", NULL};
		int64_t before = now_ns();
		int status = reap_status(spawn(upgrade, log));
		double client_ms = (double)(now_ns() - before) / 1e6;
		if (status != 0)
			die("corral upgrade failed: %s", text_tail(read_file(log, NULL), 2000));
		char message[512] = "";
		double started = last_event_time(events, "upgrade_started", NULL, 0);
		double upgraded = last_event_time(events, "upgraded", message, sizeof(message));
		const char *in = strstr(message, " in ");
		series_add(&pause, (upgraded - started) * 1e3);
		series_add(&taken, in ? atof(in + 4) : -1);
		series_add(&client, client_ms);
		sleep_ms(200);
	}
	size_t started = count_events(events, "started");
	stop_process(running_corral, 30000);
	running_corral = 0;

	series_sort(&pause);
	series_sort(&taken);
	series_sort(&client);
	printf("corral upgrade, %u sleeping tasks, %u upgrades (median, max)\n", tasks, rounds);
	printf("  %-52s %8.1f %8.1f ms\n", "pause: upgrade_started -> upgraded event",
	       series_median(&pause), series_max(&pause));
	printf("  %-52s %8.1f %8.1f ms\n", "new corral: document written -> tasks taken over",
	       series_median(&taken), series_max(&taken));
	printf("  %-52s %8.1f %8.1f ms\n", "client: corral upgrade, fork -> exit",
	       series_median(&client), series_max(&client));
	printf("  %-52s %8zu (expected %u: no task started again)\n", "\"started\" events", started,
	       tasks);
	free(pause.values);
	free(taken.values);
	free(client.values);
	free(config);
	free(events);
	free(log);
	remove_temp_dir();
	return started == tasks ? 0 : 1;
}
