/* corral top: a live view of a running corral in the terminal (the
 * pieces are in cli/top/). One status request a tick on one connection;
 * the screen is drawn into a buffer and only the rows that changed go to
 * the terminal, in one write(). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/units.h"
#include "cli/commands.h"
#include "cli/control_client.h"
#include "cli/top/top_client.h"
#include "cli/top/top_keys.h"
#include "cli/top/top_render.h"
#include "cli/top/top_terminal.h"

#define DEFAULT_INTERVAL_MS 1000
#define MIN_INTERVAL_MS     100

static void print_top_usage(FILE *out)
{
	fprintf(out,
		"usage: corral top [--interval DURATION] [--socket PATH | -c CONFIG]\n\n"
		"A live view of a running corral in this terminal: its groups and tasks with\n"
		"their state, ready, health, restarts, CPU %%, memory, uptime and next restart\n"
		"or run, refreshed every second.\n\n"
		"Keys: j/k or the arrows move, PgUp/PgDn a page, Home/End (g/G) the ends;\n"
		"o sorts by the next of config, name, cpu, memory, restarts, uptime, O\n"
		"reverses (P: cpu, M: memory); / filters by name or state (Esc clears);\n"
		"Enter or l follows the selected task's output in a pane (Esc closes it);\n"
		"r restarts it (on a group line: the whole group), s stops it, S starts it,\n"
		"K sends it a signal; ^L redraws; q quits.\n\n"
		"  --interval DURATION  time between refreshes (1s; at least 100ms)\n"
		"  --socket PATH        corral's control socket\n"
		"  -c, --config CONFIG  the socket that CONFIG's socket: names\n"
		"\n" CONTROL_SOCKET_SEARCH_HELP);
}

/* Everything the loop holds. */
struct top_session {
	struct top_state state;
	struct top_client client;
	struct top_terminal terminal;
	struct top_screen shown; /* what the terminal shows now */
	struct top_screen next;
	struct top_output output;
	int signal_fd;
	int saved_stderr;
	int exit_code;
	bool quit;
};

/* While the screen is up, what the client code says on stderr would land
 * in the middle of it: it goes to a pipe, read back into the status line
 * (top_client.c). Both ends non-blocking, so that a full pipe loses a
 * message rather than freezes top. */
static int capture_stderr(struct top_session *session)
{
	int ends[2];
	if (pipe2(ends, O_CLOEXEC | O_NONBLOCK) < 0)
		return -errno;
	session->saved_stderr = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	if (session->saved_stderr < 0 || dup2(ends[1], STDERR_FILENO) < 0) {
		int failure = errno;
		close(ends[0]);
		close(ends[1]);
		return -failure;
	}
	close(ends[1]);
	session->client.messages_fd = ends[0];
	return 0;
}

static void restore_stderr(struct top_session *session)
{
	if (session->saved_stderr < 0)
		return;
	fflush(stderr);
	dup2(session->saved_stderr, STDERR_FILENO);
	close(session->saved_stderr);
	session->saved_stderr = -1;
	if (session->client.messages_fd >= 0)
		close(session->client.messages_fd);
	session->client.messages_fd = -1;
}

/* SIGINT, SIGTERM and SIGHUP end top with the terminal put back; SIGWINCH
 * redraws at the new size. Read from a signalfd next to the keys. */
static int signals_open(void)
{
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGWINCH);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
		return -errno;
	int fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	return fd < 0 ? -errno : fd;
}

static void resize(struct top_session *session)
{
	int rows, columns;
	top_terminal_size(&session->terminal, &rows, &columns);
	top_screen_free(&session->next);
	top_screen_init(&session->next, rows, columns);
	/* What the terminal shows after a resize is not known: every row is
	 * written again (over itself: no clear, no flash). */
	top_screen_free(&session->shown);
}

static int draw(struct top_session *session)
{
	top_render(&session->state, &session->next);
	session->output.length = 0;
	top_screen_diff(session->shown.text ? &session->shown : NULL, &session->next,
			&session->output);
	if (session->output.length == 0)
		return 0;
	int result =
	    top_terminal_write(&session->terminal, session->output.data, session->output.length);
	/* The screen drawn becomes the one shown; the old one is drawn over
	 * next time. */
	struct top_screen shown = session->shown;
	session->shown = session->next;
	if (shown.text && shown.rows == session->shown.rows &&
	    shown.columns == session->shown.columns) {
		session->next = shown;
	} else {
		top_screen_free(&shown);
		top_screen_init(&session->next, session->shown.rows, session->shown.columns);
	}
	return result;
}

static void handle_signals(struct top_session *session)
{
	struct signalfd_siginfo info;
	while (read(session->signal_fd, &info, sizeof(info)) == sizeof(info)) {
		if (info.ssi_signo == SIGWINCH) {
			resize(session);
			continue;
		}
		session->quit = true;
		session->exit_code = info.ssi_signo == SIGINT ? 0 : 128 + (int)info.ssi_signo;
	}
}

static void handle_keys(struct top_session *session)
{
	char bytes[256];
	ssize_t got = read(session->terminal.in_fd, bytes, sizeof(bytes));
	if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN)) {
		session->quit = true; /* the terminal went away */
		return;
	}
	int height =
	    top_state_list_height(&session->state, session->next.rows, session->next.columns);
	for (ssize_t at = 0; at < got && !session->quit;) {
		int key;
		at += (ssize_t)top_key_decode(bytes + at, (size_t)(got - at), &key);
		enum top_action action = top_input_key(&session->state, key, height);
		if (action == TOP_ACTION_QUIT)
			session->quit = true;
		else if (action == TOP_ACTION_REDRAW)
			top_screen_free(&session->shown);
		else if (action != TOP_ACTION_NONE)
			top_client_act(&session->client, &session->state, action);
	}
}

/* The status is asked for once a tick, its reply read as it comes,
 * next to the keys: a slow corral (thousands of tasks, a loaded machine,
 * a stopped process) never keeps q from working. A request goes out only
 * once the reply before is in. */
static void run_loop(struct top_session *session, uint64_t interval_ms)
{
	uint64_t next_poll = monotonic_ms() + interval_ms;
	while (!session->quit) {
		if (draw(session) < 0)
			break;
		uint64_t now = monotonic_ms();
		if (now >= next_poll) {
			top_client_request_status(&session->client, &session->state);
			next_poll = now + interval_ms;
		}
		struct pollfd fds[4] = {
		    {.fd = session->terminal.in_fd, .events = POLLIN},
		    {.fd = session->signal_fd, .events = POLLIN},
		    {.fd = top_client_logs_fd(&session->client), .events = POLLIN},
		    {.fd = top_client_status_fd(&session->client), .events = POLLIN},
		};
		int ready = poll(fds, 4, (int)(next_poll - now));
		if (ready < 0 && errno != EINTR)
			break;
		if (fds[1].revents)
			handle_signals(session);
		if (fds[0].revents && !session->quit)
			handle_keys(session);
		if (fds[2].fd >= 0 && fds[2].revents && !session->quit)
			top_client_read_logs(&session->client, &session->state);
		if (fds[3].fd >= 0 && fds[3].revents && !session->quit)
			top_client_read_status(&session->client, &session->state);
	}
}

/* An fd readable when a key or a signal is: what ends a wait for corral
 * once the screen is up (top_client.h). */
static int interrupt_fd_open(int signal_fd, int key_fd)
{
	int fd = epoll_create1(EPOLL_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct epoll_event signals = {.events = EPOLLIN, .data.fd = signal_fd};
	struct epoll_event keys = {.events = EPOLLIN, .data.fd = key_fd};
	if (epoll_ctl(fd, EPOLL_CTL_ADD, signal_fd, &signals) < 0 ||
	    epoll_ctl(fd, EPOLL_CTL_ADD, key_fd, &keys) < 0) {
		int failure = errno;
		close(fd);
		return -failure;
	}
	return fd;
}

static int parse_interval(const char *text, uint64_t *interval_ms)
{
	const char *why;
	if (parse_duration_ms(text, interval_ms, &why) < 0)
		return command_usage_error("top", print_top_usage, "--interval: %s", why);
	if (*interval_ms < MIN_INTERVAL_MS)
		return command_usage_error("top", print_top_usage,
					   "--interval must be at least 100ms, not %s", text);
	return 0;
}

int command_top(int argc, char **argv)
{
	static const struct option options[] = {
	    {"interval", required_argument, NULL, 'i'},
	    CONTROL_SOCKET_OPTIONS,
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct control_socket_choice socket_choice = {0};
	uint64_t interval_ms = DEFAULT_INTERVAL_MS;
	int option;

	optind = 1;
	while ((option = getopt_long(argc, argv, "c:h", options, NULL)) != -1) {
		switch (option) {
		case 'i':
			if (parse_interval(optarg, &interval_ms) != 0)
				return COMMAND_USAGE_ERROR;
			break;
		default: {
			int code;
			if (command_common_option(&socket_choice, option, optarg, print_top_usage,
						  &code))
				return code;
			break;
		}
		}
	}
	if (optind < argc)
		return command_usage_error("top", print_top_usage, "takes no arguments, got \"%s\"",
					   argv[optind]);
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		fprintf(stderr,
			"corral top: needs a terminal on stdin and stdout (use `kubectl exec "
			"-it`, `podman exec -it` or `ssh -t`); for the state once, as a "
			"table or JSON, use `corral status` or `corral status --json`\n");
		return COMMAND_USAGE_ERROR;
	}

	struct top_session session = {
	    .client = {.socket_path = control_socket_path(&socket_choice),
		       .status = {.fd = -1},
		       .logs = {.fd = -1},
		       .messages_fd = -1},
	    .saved_stderr = -1,
	};
	if (!session.client.socket_path)
		return 1;
	session.signal_fd = signals_open();
	if (session.signal_fd < 0) {
		fprintf(stderr, "corral top: cannot watch for signals: %s\n",
			strerror(-session.signal_fd));
		return 1;
	}
	session.client.interrupt_fd = session.signal_fd;
	/* The first status before the screen: a corral that cannot be reached
	 * is said on the terminal as any client command says it. */
	if (top_client_poll_status(&session.client, &session.state) != TOP_POLL_OK) {
		if (session.state.message[0])
			fprintf(stderr, "corral: %s\n", session.state.message);
		top_client_close(&session.client);
		top_state_free(&session.state);
		close(session.signal_fd);
		return 1;
	}
	int result = top_terminal_enter(&session.terminal, STDIN_FILENO, STDOUT_FILENO);
	if (result < 0) {
		top_terminal_leave(&session.terminal);
		fprintf(stderr, "corral top: cannot set up the terminal: %s\n", strerror(-result));
		session.exit_code = 1;
	} else if ((result = capture_stderr(&session)) < 0) {
		top_terminal_leave(&session.terminal);
		fprintf(stderr, "corral top: cannot redirect stderr: %s\n", strerror(-result));
		session.exit_code = 1;
	} else if ((result = interrupt_fd_open(session.signal_fd, STDIN_FILENO)) < 0) {
		top_terminal_leave(&session.terminal);
		restore_stderr(&session);
		fprintf(stderr, "corral top: cannot watch keys and signals: %s\n",
			strerror(-result));
		session.exit_code = 1;
	} else {
		session.client.interrupt_fd = result;
		resize(&session);
		run_loop(&session, interval_ms);
		close(session.client.interrupt_fd);
		top_terminal_leave(&session.terminal);
		restore_stderr(&session);
	}
	top_client_close(&session.client);
	top_state_free(&session.state);
	top_screen_free(&session.shown);
	top_screen_free(&session.next);
	top_output_free(&session.output);
	close(session.signal_fd);
	return session.exit_code;
}
